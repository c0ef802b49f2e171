//! A partition's segment table: the metadata of every segment the cache holds, by row.
//!
//! Owns: where each segment's metadata lives and the reuse of freed rows. Rows sit in chunks of
//! at most [`CHUNK`] rows, so that a growing table moves at most a chunk's rows at a time (a
//! broker's table holds thousands of ~100-byte rows). A chunk grows by an eighth when full, not
//! to its whole size at once: a broker hosts thousands of partitions of a few dozen live segments
//! each, and a whole chunk for 20 rows cost more than the rows (issue 30). Unused room is at most
//! an eighth of the last chunk, beyond the freed rows.
//! Never: which row a segment has (the partition's index), or what a row means to an epoch.

use super::segment::{Row, SegmentMetadata};

/// Rows per chunk at most: about 6.5 KB a chunk.
const CHUNK: usize = 64;
/// Rows a chunk has room for when first made.
const FIRST_ROOM: usize = 4;

#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    chunks: Vec<Vec<Option<SegmentMetadata>>>,
    /// Rows handed out so far; every row below is in a chunk.
    used: usize,
    /// Rows handed out and freed since, reused newest first.
    free: Vec<Row>,
}

impl Table {
    pub(crate) fn get(&self, row: Row) -> Option<&SegmentMetadata> {
        let r = row as usize;
        self.chunks.get(r / CHUNK)?.get(r % CHUNK)?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, row: Row) -> Option<&mut SegmentMetadata> {
        self.slot(row)?.as_mut()
    }

    fn slot(&mut self, row: Row) -> Option<&mut Option<SegmentMetadata>> {
        let r = row as usize;
        self.chunks.get_mut(r / CHUNK)?.get_mut(r % CHUNK)
    }

    /// Puts `m` in a free row (a freed one, else the next) and gives the row.
    pub(crate) fn insert(&mut self, m: SegmentMetadata) -> Row {
        let row = match self.free.pop() {
            Some(r) => r,
            None => {
                if self.used == self.chunks.len() * CHUNK {
                    self.chunks.push(Vec::with_capacity(FIRST_ROOM));
                }
                if let Some(last) = self.chunks.last_mut() {
                    if last.len() == last.capacity() {
                        let more = (last.len() / 8).max(1).min(CHUNK - last.len());
                        last.reserve_exact(more);
                    }
                    last.push(None);
                }
                self.used += 1;
                Row::try_from(self.used - 1).unwrap_or(Row::MAX)
            }
        };
        self.set(row, m);
        row
    }

    /// Replaces what `row` holds.
    pub(crate) fn set(&mut self, row: Row, m: SegmentMetadata) {
        if let Some(slot) = self.slot(row) {
            *slot = Some(m);
        }
    }

    /// Empties `row` and frees it for the next insert.
    pub(crate) fn remove(&mut self, row: Row) {
        if let Some(slot) = self.slot(row) {
            if slot.take().is_some() {
                self.free.push(row);
            }
        }
    }

    pub(crate) fn add_memory(&self, m: &mut super::memory::MemoryUse) {
        m.rows += super::memory::vec_bytes(&self.chunks)
            + super::memory::vec_bytes(&self.free)
            + self
                .chunks
                .iter()
                .map(super::memory::vec_bytes)
                .sum::<usize>();
        m.row_heap += self.iter().map(SegmentMetadata::heap_bytes).sum::<usize>();
    }

    /// Every segment held, in row order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &SegmentMetadata> {
        self.chunks.iter().flat_map(|c| c.iter().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SegmentState, Uuid};

    fn seg(n: i64) -> SegmentMetadata {
        SegmentMetadata {
            id: Uuid::new(n, n),
            start_offset: n,
            end_offset: n,
            broker_id: 0,
            max_timestamp_ms: 0,
            event_timestamp_ms: 0,
            leader_epochs: [(0, n)].into(),
            segment_size_in_bytes: 0,
            custom_metadata: None,
            state: SegmentState::CopySegmentStarted,
            txn_index_empty: true,
            broker_leader_epoch: 0,
        }
    }

    #[test]
    fn rows_span_chunks_and_freed_rows_are_reused() {
        let mut t = Table::default();
        let rows: Vec<Row> = (0..200).map(|n| t.insert(seg(n))).collect();
        assert_eq!(rows, (0..200).collect::<Vec<Row>>());
        assert_eq!(t.chunks.len(), 4, "200 rows take 4 chunks of 64");
        assert_eq!(t.get(130).map(|m| m.start_offset), Some(130));
        t.remove(130);
        t.remove(130);
        assert!(t.get(130).is_none());
        assert_eq!(t.free, vec![130], "a row is freed once");
        assert_eq!(t.insert(seg(999)), 130);
        assert_eq!(t.get(130).map(|m| m.start_offset), Some(999));
        assert_eq!(t.insert(seg(1000)), 200);
        assert_eq!(t.iter().count(), 201);
        assert!(t.get(Row::MAX).is_none() && t.get(201).is_none());
    }
}
