//! A set of segment ids that only grows: the deletions a broker's store remembers for a
//! partition with a null-key history (`Slot`'s burials), one per segment ever deleted there.
//!
//! Owns: the layout, chosen for memory (issue 30: the set grows with the partition's history,
//! not with its live segments). Most ids sit in one sorted array, 16 bytes each, searched by
//! bisection; the newest sit in a small hash set, merged into the array once they are an eighth
//! of it, so that an insert costs a few copies on average. A hash set of all of them cost 19 to
//! 38 bytes an id. Never: what a burial means (the store decides).

use hashbrown::HashSet;

use super::hash::UuidHash;
use crate::model::Uuid;

/// The newest ids merged into the sorted array once they are this many, at least.
const MERGE_FROM: usize = 32;

#[derive(Clone, Debug, Default)]
pub(crate) struct Buried {
    sorted: Box<[Uuid]>,
    recent: HashSet<Uuid, UuidHash>,
}

impl Buried {
    pub(crate) fn is_empty(&self) -> bool {
        self.sorted.is_empty() && self.recent.is_empty()
    }

    pub(crate) fn contains(&self, id: &Uuid) -> bool {
        self.recent.contains(id) || self.sorted.binary_search(id).is_ok()
    }

    pub(crate) fn insert(&mut self, id: Uuid) {
        if self.sorted.binary_search(&id).is_ok() || !self.recent.insert(id) {
            return;
        }
        if self.recent.len() >= (self.sorted.len() / 8).max(MERGE_FROM) {
            let mut all: Vec<Uuid> = Vec::with_capacity(self.sorted.len() + self.recent.len());
            all.extend_from_slice(&self.sorted);
            all.extend(self.recent.drain());
            all.sort_unstable();
            self.sorted = all.into_boxed_slice();
            self.recent = HashSet::default();
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val::<[Uuid]>(&self.sorted) + self.recent.allocation_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_a_hash_set_holds_through_every_merge() {
        let mut b = Buried::default();
        let mut model = std::collections::HashSet::new();
        assert!(b.is_empty());
        for n in 0..2_000i64 {
            // Random-looking ids, some inserted twice, both before and after a merge.
            let id = Uuid::new(n.wrapping_mul(0x9e37_79b9_7f4a_7c15u64 as i64), n);
            b.insert(id);
            model.insert(id);
            if n % 7 == 0 {
                let again = Uuid::new((n / 2).wrapping_mul(0x9e37_79b9_7f4a_7c15u64 as i64), n / 2);
                b.insert(again);
                model.insert(again);
            }
            assert!(b.contains(&id) && !b.is_empty());
        }
        for n in -100..2_100i64 {
            let id = Uuid::new(n.wrapping_mul(0x9e37_79b9_7f4a_7c15u64 as i64), n);
            assert_eq!(b.contains(&id), model.contains(&id), "{n}");
            assert!(!b.contains(&Uuid::new(n, n + 1)));
        }
        assert_eq!(b.sorted.len() + b.recent.len(), model.len(), "each id once");
        assert!(
            b.heap_bytes() < model.len() * 20,
            "about 16 bytes an id: {} for {}",
            b.heap_bytes(),
            model.len()
        );
    }
}
