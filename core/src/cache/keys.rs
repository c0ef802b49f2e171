//! The KIP-1266 keys of one user partition: what each key pair `(endOffset, brokerLeaderEpoch)`
//! holds (its bare key's segment record, its `:UPDATE` key's latest value), and each segment's
//! upload key (the pair its segment record was last written under, until that key lets go of it).
//!
//! Owns: the types of what a key holds ([`KeyHolders`], [`Holder`]) and the layout, chosen for
//! memory (issue 30: a broker holds one pair per live segment of a keyed partition). A pair's
//! holders sit packed in one 32-byte row of a dense table (a freed row is reused); two indexes of
//! 4-byte rows find a row by its pair and, for the rows that are their segment's upload key, by
//! that segment. The update key nearly always holds the same segment as the bare key: its
//! segment id is kept in the row only as a flag, and in a side map when it differs. Two maps with
//! the holders and the pairs written out cost about three times as much. Never: what a key means
//! to the store or the planner, which read it through [`Keys::get`] and [`Keys::upload_key`].

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::hash::UuidHash;
use super::memory::vec_bytes;
use crate::model::{PartitionDeleteState, SegmentState, Uuid};

/// What one KIP-1266 key pair `(endOffset, brokerLeaderEpoch)` of a partition holds now: the
/// segment whose segment record is under the bare key, and whose update is under `:UPDATE`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyHolders {
    pub base: Option<Uuid>,
    pub update: Option<Holder>,
    /// The segment record under the bare key was written after the update of the same segment
    /// under `:UPDATE` (a deposed leader's late copy of its backfill): a compacted log replays
    /// the update first, drops it (its segment is not known yet), and holds the segment in its
    /// first state. The update must be written again (`Store::plan_backfill`).
    pub base_after_update: bool,
}

/// The latest value under an `:UPDATE` key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    Segment(Uuid, SegmentState),
    PartitionDelete(PartitionDeleteState),
}

/// A key pair: `(endOffset, brokerLeaderEpoch)`.
pub(crate) type Pair = (i64, i32);

const BASE: u8 = 1;
const UPDATE: u8 = 2;
/// The update is a partition deletion (its state a [`PartitionDeleteState`]), not a segment's.
const PARTITION: u8 = 4;
const BASE_AFTER_UPDATE: u8 = 8;
/// This row's pair is the upload key of its base segment (indexed in `by_upload`).
const UPLOAD: u8 = 16;
/// The update names the base segment (else its segment is in `other_updates`).
const SAME: u8 = 32;

#[derive(Clone, Copy, Debug, Default)]
struct Row {
    base: Uuid,
    end_offset: i64,
    epoch: i32,
    flags: u8,
    /// The update's state id.
    state: i8,
}

impl Row {
    fn pair(&self) -> Pair {
        (self.end_offset, self.epoch)
    }

    fn base(&self) -> Option<Uuid> {
        (self.flags & BASE != 0).then_some(self.base)
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Keys {
    rows: Vec<Row>,
    free: Vec<u32>,
    by_pair: HashTable<u32>,
    by_upload: HashTable<u32>,
    /// Row -> the segment its update names, when that is not its base segment.
    other_updates: hashbrown::HashMap<u32, Uuid, UuidHash>,
}

fn hash_pair(p: Pair) -> u64 {
    UuidHash::default().hash_one(p)
}

fn hash_id(id: Uuid) -> u64 {
    UuidHash::default().hash_one(id)
}

impl Keys {
    fn row(&self, i: u32) -> Option<&Row> {
        self.rows.get(i as usize)
    }

    /// What row `i` holds.
    fn holders(&self, i: u32) -> Option<KeyHolders> {
        let r = self.row(i)?;
        let update = if r.flags & UPDATE == 0 {
            None
        } else if r.flags & PARTITION != 0 {
            PartitionDeleteState::from_id(r.state).map(Holder::PartitionDelete)
        } else {
            let id = if r.flags & SAME != 0 {
                r.base
            } else {
                self.other_updates.get(&i).copied().unwrap_or_default()
            };
            SegmentState::from_id(r.state).map(|s| Holder::Segment(id, s))
        };
        Some(KeyHolders {
            base: r.base(),
            update,
            base_after_update: r.flags & BASE_AFTER_UPDATE != 0,
        })
    }

    /// Row `i`'s update key now holds `holder`; its base and other flags stay.
    fn set_update(&mut self, i: u32, holder: Option<Holder>) {
        if !self.other_updates.is_empty() {
            self.other_updates.remove(&i);
        }
        let Some(r) = self.rows.get_mut(i as usize) else {
            return;
        };
        r.flags &= !(UPDATE | PARTITION | SAME);
        match holder {
            None => {}
            Some(Holder::Segment(id, state)) => {
                r.flags |= UPDATE;
                r.state = state.id();
                if r.base() == Some(id) {
                    r.flags |= SAME;
                } else {
                    self.other_updates.insert(i, id);
                }
            }
            Some(Holder::PartitionDelete(state)) => {
                r.flags |= UPDATE | PARTITION;
                r.state = state.id();
            }
        }
    }

    /// Row `i`'s bare key now holds `base` (or nothing); what its update key holds stays.
    fn set_base(&mut self, i: u32, base: Option<Uuid>) {
        let update = self.holders(i).and_then(|h| h.update);
        if let Some(r) = self.rows.get_mut(i as usize) {
            match base {
                Some(id) => {
                    r.base = id;
                    r.flags |= BASE;
                }
                None => {
                    r.base = Uuid::ZERO;
                    r.flags &= !BASE;
                }
            }
        }
        self.set_update(i, update);
    }

    fn find(&self, pair: Pair) -> Option<u32> {
        let rows = &self.rows;
        self.by_pair
            .find(hash_pair(pair), |&i| {
                rows.get(i as usize).is_some_and(|r| r.pair() == pair)
            })
            .copied()
    }

    /// What the pair's keys hold, if anything.
    pub(crate) fn get(&self, pair: &Pair) -> Option<KeyHolders> {
        self.holders(self.find(*pair)?)
    }

    /// The pair segment `id`'s segment record was last written under, while that key holds it.
    pub(crate) fn upload_key(&self, id: Uuid) -> Option<Pair> {
        let rows = &self.rows;
        let i = self.by_upload.find(hash_id(id), |&i| {
            rows.get(i as usize).is_some_and(|r| r.base == id)
        })?;
        self.row(*i).map(Row::pair)
    }

    /// Every pair holding something, with what it holds (in no order).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Pair, KeyHolders)> + '_ {
        self.by_pair
            .iter()
            .filter_map(|&i| Some((self.row(i)?.pair(), self.holders(i)?)))
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_pair.len()
    }

    /// The pair's row, made empty if it held nothing.
    fn row_of(&mut self, pair: Pair) -> u32 {
        if let Some(i) = self.find(pair) {
            return i;
        }
        let row = Row {
            end_offset: pair.0,
            epoch: pair.1,
            ..Row::default()
        };
        let i = match self.free.pop() {
            Some(i) => {
                if let Some(r) = self.rows.get_mut(i as usize) {
                    *r = row;
                }
                i
            }
            None => {
                if self.rows.len() == self.rows.capacity() {
                    // An eighth more, not twice as much: one row per live segment.
                    self.rows.reserve_exact((self.rows.len() / 8).max(2));
                }
                self.rows.push(row);
                u32::try_from(self.rows.len() - 1).unwrap_or(u32::MAX)
            }
        };
        let rows = &self.rows;
        self.by_pair.insert_unique(hash_pair(pair), i, |&j| {
            rows.get(j as usize).map_or(0, |r| hash_pair(r.pair()))
        });
        i
    }

    /// Segment `id` no longer has an upload key.
    fn drop_upload(&mut self, id: Uuid) {
        let rows = &self.rows;
        if let Ok(e) = self.by_upload.find_entry(hash_id(id), |&i| {
            rows.get(i as usize).is_some_and(|r| r.base == id)
        }) {
            let (i, _) = e.remove();
            if let Some(r) = self.rows.get_mut(i as usize) {
                r.flags &= !UPLOAD;
            }
        }
    }

    /// The pair's bare key now holds segment `id`'s record: its upload key.
    pub(crate) fn hold_segment(&mut self, pair: Pair, id: Uuid) {
        let i = self.row_of(pair);
        if let Some(old) = self.row(i).and_then(Row::base) {
            self.drop_upload(old);
        }
        self.drop_upload(id);
        self.set_base(i, Some(id));
        let after = self
            .holders(i)
            .is_some_and(|h| matches!(h.update, Some(Holder::Segment(u, _)) if u == id));
        if let Some(r) = self.rows.get_mut(i as usize) {
            r.flags |= UPLOAD;
            r.flags &= !BASE_AFTER_UPDATE;
            if after {
                r.flags |= BASE_AFTER_UPDATE;
            }
        }
        let rows = &self.rows;
        self.by_upload.insert_unique(hash_id(id), i, |&j| {
            rows.get(j as usize).map_or(0, |r| hash_id(r.base))
        });
    }

    /// The pair's `:UPDATE` key now holds `holder`.
    pub(crate) fn hold_update(&mut self, pair: Pair, holder: Holder) {
        let i = self.row_of(pair);
        self.set_update(i, Some(holder));
        if let Some(r) = self.rows.get_mut(i as usize) {
            r.flags &= !BASE_AFTER_UPDATE;
        }
    }

    /// A tombstone of the pair's bare key (`update` false) or `:UPDATE` key.
    pub(crate) fn forget(&mut self, pair: Pair, update: bool) {
        let Some(i) = self.find(pair) else {
            return;
        };
        if update {
            self.set_update(i, None);
        } else if let Some(base) = self.row(i).and_then(Row::base) {
            self.drop_upload(base);
            self.set_base(i, None);
        }
        if let Some(r) = self.rows.get_mut(i as usize) {
            r.flags &= !BASE_AFTER_UPDATE;
        }
        if self.holders(i).is_none_or(|h| h == KeyHolders::default()) {
            self.set_update(i, None);
            if let Ok(e) = self.by_pair.find_entry(hash_pair(pair), |&j| j == i) {
                e.remove();
            }
            self.free.push(i);
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        vec_bytes(&self.rows)
            + vec_bytes(&self.free)
            + self.by_pair.allocation_size()
            + self.by_upload.allocation_size()
            + self.other_updates.allocation_size()
    }

    /// Every pair and what it holds, and every upload key, sorted: what two stores compare.
    fn sorted(&self) -> Sorted {
        let mut pairs: Vec<_> = self.iter().collect();
        pairs.sort_by_key(|(p, _)| *p);
        let mut uploads: Vec<_> = self
            .by_upload
            .iter()
            .filter_map(|&i| self.row(i).map(|r| (r.base, r.pair())))
            .collect();
        uploads.sort();
        (pairs, uploads)
    }
}

/// Every pair and what it holds, and every upload key.
type Sorted = (Vec<(Pair, KeyHolders)>, Vec<(Uuid, Pair)>);

impl PartialEq for Keys {
    fn eq(&self, other: &Keys) -> bool {
        self.sorted() == other.sorted()
    }
}

impl Eq for Keys {}

#[cfg(test)]
mod tests {
    //! Against the two plain maps the store kept before (what each pair holds, each segment's
    //! upload key), operation by operation.
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[derive(Default)]
    struct Model {
        keys: HashMap<Pair, KeyHolders>,
        upload_keys: HashMap<Uuid, Pair>,
    }

    impl Model {
        fn hold_segment(&mut self, pair: Pair, id: Uuid) {
            let h = self.keys.entry(pair).or_default();
            if let Some(old) = h.base.replace(id) {
                self.upload_keys.remove(&old);
            }
            self.upload_keys.insert(id, pair);
            h.base_after_update = matches!(h.update, Some(Holder::Segment(u, _)) if u == id);
        }
        fn hold_update(&mut self, pair: Pair, holder: Holder) {
            let h = self.keys.entry(pair).or_default();
            h.update = Some(holder);
            h.base_after_update = false;
        }
        fn forget(&mut self, pair: Pair, update: bool) {
            if let Some(h) = self.keys.get_mut(&pair) {
                if update {
                    h.update = None;
                } else if let Some(id) = h.base.take() {
                    self.upload_keys.remove(&id);
                }
                h.base_after_update = false;
                if *h == KeyHolders::default() {
                    self.keys.remove(&pair);
                }
            }
        }
    }

    #[test]
    fn a_key_row_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Row>(), 32);
    }

    #[test]
    fn the_packed_keys_answer_as_the_two_maps_did() {
        let ops = proptest::collection::vec((0u8..4, 0i64..4, 0i32..2, 0i64..5, 0i8..4), 0..300);
        proptest!(|(ops in ops)| {
            let (mut k, mut m) = (Keys::default(), Model::default());
            for (op, end, epoch, seg, state) in ops {
                let pair = (end, epoch);
                let id = Uuid::new(seg, seg);
                match op {
                    0 => { k.hold_segment(pair, id); m.hold_segment(pair, id); }
                    1 => {
                        let h = if state == 3 && seg == 0 {
                            Holder::PartitionDelete(PartitionDeleteState::DeletePartitionStarted)
                        } else {
                            Holder::Segment(id, SegmentState::from_id(state).unwrap_or(SegmentState::CopySegmentStarted))
                        };
                        k.hold_update(pair, h);
                        m.hold_update(pair, h);
                    }
                    2 => { k.forget(pair, false); m.forget(pair, false); }
                    _ => { k.forget(pair, true); m.forget(pair, true); }
                }
                prop_assert_eq!(k.len(), m.keys.len());
                for e in 0..4 {
                    for ep in 0..2 {
                        prop_assert_eq!(k.get(&(e, ep)), m.keys.get(&(e, ep)).copied());
                    }
                }
                for s in 0..5 {
                    let id = Uuid::new(s, s);
                    prop_assert_eq!(k.upload_key(id), m.upload_keys.get(&id).copied());
                }
                let mut got: Vec<_> = k.iter().collect();
                got.sort_by_key(|(p, _)| *p);
                let mut want: Vec<_> = m.keys.iter().map(|(p, h)| (*p, *h)).collect();
                want.sort_by_key(|(p, _)| *p);
                prop_assert_eq!(got, want);
            }
        });
    }
}
