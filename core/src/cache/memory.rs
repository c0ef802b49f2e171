//! What a store holds on the heap, by structure: the account `make bench-store-memory` prints
//! beside what a counting allocator counted, so that every byte per live segment is named.
//!
//! Owns: the account's shape and its sums. Each structure reports its own allocations from the
//! capacities it holds (the bytes it requested; the allocator's own overhead is not counted).
//! Never: a decision, or any change to what is held.

/// Heap bytes a store holds, by structure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryUse {
    /// The partition map, its per-partition lists (each holding a slot's fixed part) and the
    /// topic names.
    pub partitions: usize,
    /// Segment tables: their chunks of rows (held or free) and free lists.
    pub rows: usize,
    /// What rows hold beyond their fixed part: leader epochs and custom metadata on the heap.
    pub row_heap: usize,
    /// The index of rows by segment id.
    pub index: usize,
    /// The epochs' serving entries and their spans.
    pub serving: usize,
    /// The lookup hints over the serving entries.
    pub hints: usize,
    /// The rest of the epochs: unreferenced segments, each epoch's highest offset.
    pub epochs: usize,
    /// KIP-1266 keys: what each key pair holds, and each segment's upload key.
    pub keys: usize,
    /// Updates whose segment record is missing.
    pub orphans: usize,
    /// The deletions remembered for a partition with a null-key history (and those risen).
    pub buried: usize,
}

impl MemoryUse {
    /// The parts, named, in the order of the fields.
    pub fn parts(&self) -> [(&'static str, usize); 10] {
        [
            ("partitions (slots, names)", self.partitions),
            ("segment rows", self.rows),
            ("rows' heap (epochs, custom)", self.row_heap),
            ("segment index", self.index),
            ("serving entries", self.serving),
            ("hints", self.hints),
            ("epochs (other)", self.epochs),
            ("keys", self.keys),
            ("orphans", self.orphans),
            ("buried", self.buried),
        ]
    }

    pub fn total(&self) -> usize {
        self.parts().iter().map(|(_, b)| b).sum()
    }
}

/// The heap bytes of a vector's buffer.
pub(crate) fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// The heap bytes of a deque's buffer.
pub(crate) fn deque_bytes<T>(v: &std::collections::VecDeque<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

#[cfg(test)]
mod tests {
    use std::mem::size_of;

    /// The sizes `make bench-store-memory`'s figures rest on (docs/BENCHMARKS.md): a segment row,
    /// and a partition's fixed part.
    #[test]
    fn rows_and_slots_keep_their_sizes() {
        use super::super::SegmentMetadata;
        assert_eq!(size_of::<SegmentMetadata>(), 104);
        assert_eq!(
            size_of::<Option<SegmentMetadata>>(),
            size_of::<SegmentMetadata>(),
            "a free row costs no more than a held one"
        );
        assert!(
            size_of::<super::super::store::Slot>() <= 640,
            "a partition's slot: {} bytes",
            size_of::<super::super::store::Slot>()
        );
    }
}
