//! A partition's index from segment id to the segment's row in its table.
//!
//! Owns: the hash table of rows, and what its entries hold besides the row. A probe meets, besides
//! the entry it looks for, entries whose 7-bit tag matches by chance (hashbrown's probe compares
//! tags a group of 16 at a time, and a replay's deletions leave tombstones that lengthen probes):
//! in the race's one-epoch history about 200,000 of them in 1,001,000 records. Each match made the
//! probe read that row's id, a random row, mostly a cache miss. While rows fit in 24 bits, an entry
//! keeps 8 more bits of the id's hash above the row, and a probe reads a row only when those
//! match too. A partition past 2^24 rows (16.7 M segments) switches for good to bare rows.
//! Never: the rows themselves (the caller reads ids from its table through `id_at`).

use std::hash::BuildHasher;

use hashbrown::HashTable;
use hashbrown::hash_table::{AbsentEntry, OccupiedEntry};

use super::epoch::Row;
use super::hash::UuidHash;
use crate::model::Uuid;

/// Bits of an entry that hold the row while the index is narrow.
const ROW_BITS: u32 = 24;
const ROW_MASK: u32 = (1 << ROW_BITS) - 1;

#[derive(Clone, Debug)]
pub(crate) struct Index {
    entries: HashTable<u32>,
    /// The bits of an entry above its row: `!ROW_MASK` while narrow, none once some row needed
    /// more than `ROW_BITS`. A mask, not a flag, so that entries are read without a branch.
    checked: u32,
}

impl Default for Index {
    fn default() -> Index {
        Index {
            entries: HashTable::new(),
            checked: !ROW_MASK,
        }
    }
}

fn hash_id(id: Uuid) -> u64 {
    UuidHash::default().hash_one(id)
}

/// The bits of a hash a narrow entry keeps, in their place above the row: neither the low bits
/// that place the entry nor the top 7 of its tag.
fn check_bits(hash: u64) -> u32 {
    ((hash >> 32) as u32) << ROW_BITS
}

/// The row in an entry.
fn row_in(entry: u32, checked: u32) -> Row {
    entry & !checked
}

/// Whether `entry` may be the one of `hash`, without reading its row.
fn may_be(entry: u32, hash: u64, checked: u32) -> bool {
    (entry ^ check_bits(hash)) & checked == 0
}

impl Index {
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The row of segment `id`.
    pub(crate) fn row_of(&self, id: Uuid, id_at: impl Fn(Row) -> Option<Uuid>) -> Option<Row> {
        let (hash, checked) = (hash_id(id), self.checked);
        self.entries
            .find(hash, |&e| {
                may_be(e, hash, checked) && id_at(row_in(e, checked)) == Some(id)
            })
            .map(|&e| row_in(e, checked))
    }

    /// Indexes `row` as segment `id`'s, which the index does not hold.
    pub(crate) fn insert(&mut self, id: Uuid, row: Row, id_at: impl Fn(Row) -> Option<Uuid>) {
        if row & self.checked != 0 {
            self.widen();
        }
        let (hash, checked) = (hash_id(id), self.checked);
        let entry = row | (check_bits(hash) & checked);
        let rehash = |&e: &u32| id_at(row_in(e, checked)).map_or(0, hash_id);
        self.entries.insert_unique(hash, entry, rehash);
    }

    /// From now on entries are bare rows. An entry's place depends on the id's hash alone, not
    /// on what it holds, so each stays where it is.
    fn widen(&mut self) {
        let checked = self.checked;
        for e in self.entries.iter_mut() {
            *e = row_in(*e, checked);
        }
        self.checked = 0;
    }

    /// The entry of segment `id`, to remove it. `row`, when given, is the row the caller has
    /// already found to hold `id`: the probe then compares rows and reads none.
    pub(crate) fn find_entry(
        &mut self,
        id: Uuid,
        row: Option<Row>,
        id_at: impl Fn(Row) -> Option<Uuid>,
    ) -> Result<IndexEntry<'_>, AbsentEntry<'_, u32>> {
        let (hash, checked) = (hash_id(id), self.checked);
        let found = match row {
            Some(row) => self
                .entries
                .find_entry(hash, |&e| row_in(e, checked) == row),
            None => self.entries.find_entry(hash, |&e| {
                may_be(e, hash, checked) && id_at(row_in(e, checked)) == Some(id)
            }),
        };
        found.map(|entry| IndexEntry { entry, checked })
    }
}

/// An entry found by [`Index::find_entry`].
pub(crate) struct IndexEntry<'a> {
    entry: OccupiedEntry<'a, u32>,
    checked: u32,
}

impl IndexEntry<'_> {
    pub(crate) fn row(&self) -> Row {
        row_in(*self.entry.get(), self.checked)
    }

    pub(crate) fn remove(self) {
        self.entry.remove();
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::collections::HashMap;

    use super::*;

    fn id(n: u64) -> Uuid {
        // Ids as random as Kafka's: the index hashes them, it does not assume order.
        let mix = |x: u64| x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29) as i64;
        Uuid::new(mix(n), mix(n ^ 0xdead_beef))
    }

    /// Every id is found at its row, absent ids are not, removals stick, and rows past 24 bits
    /// widen the index without losing an entry.
    #[test]
    fn rows_are_found_by_id_through_the_switch_to_wide_entries() {
        let mut rows: HashMap<Row, Uuid> = HashMap::new();
        let mut index = Index::default();
        let at = |rows: &HashMap<Row, Uuid>, r: Row| rows.get(&r).copied();
        for n in 0..5_000u32 {
            rows.insert(n, id(u64::from(n)));
            index.insert(id(u64::from(n)), n, |r| at(&rows, r));
        }
        assert_ne!(index.checked, 0, "narrow");
        for n in (0..5_000u32).step_by(3) {
            let found = index.find_entry(id(u64::from(n)), None, |r| at(&rows, r));
            assert_eq!(found.as_ref().map(IndexEntry::row).ok(), Some(n));
            if let Ok(entry) = found {
                entry.remove();
            }
            rows.remove(&n);
        }
        for big in [ROW_MASK + 1, u32::MAX] {
            rows.insert(big, id(u64::from(big)));
            index.insert(id(u64::from(big)), big, |r| at(&rows, r));
        }
        assert_eq!(index.checked, 0, "a row past 24 bits widens the index");
        assert_eq!(index.len(), rows.len());
        for (&r, &i) in &rows {
            assert_eq!(index.row_of(i, |r| at(&rows, r)), Some(r));
        }
        for n in 5_000..6_000u64 {
            assert_eq!(index.row_of(id(n), |r| at(&rows, r)), None);
        }
        for n in (0..5_000u32).step_by(3) {
            assert_eq!(
                index.row_of(id(u64::from(n)), |r| at(&rows, r)),
                None,
                "removed"
            );
        }
    }

    /// What the check bits are for: a probe for an absent id reads almost no row while entries
    /// are narrow, where bare rows make it read one for every tag that matches by chance.
    #[test]
    fn a_probe_reads_a_row_only_when_the_check_bits_match() {
        let rows: HashMap<Row, Uuid> = (0..20_000u32).map(|n| (n, id(u64::from(n)))).collect();
        let reads = Cell::new(0u32);
        let at = |r: Row| {
            reads.set(reads.get() + 1);
            rows.get(&r).copied()
        };
        let mut index = Index::default();
        for (&r, &i) in &rows {
            index.insert(i, r, at);
        }
        let absent_reads = |index: &Index| {
            reads.set(0);
            for n in 100_000..120_000u64 {
                assert_eq!(index.row_of(id(n), at), None);
            }
            reads.get()
        };
        let narrow = absent_reads(&index);
        index.widen();
        let wide = absent_reads(&index);
        assert!(
            wide > 500,
            "20,000 probes match a tag by chance often: {wide}"
        );
        println!("rows read by 20,000 probes for absent ids: {narrow} narrow, {wide} wide");
        assert!(narrow * 50 < wide, "narrow {narrow} against wide {wide}");
    }
}
