//! One user partition's remote segments: Kafka's `RemoteLogMetadataCache` (spec §6.2).
//!
//! Owns: the latest metadata of every segment not yet DELETE_SEGMENT_FINISHED, the per-epoch
//! states, the initialized flag, and every query Kafka's cache answers, answered as Kafka does.
//! Never: decoding, keys, or decisions about what to write.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::epoch::{EpochEvent, Epochs};
use super::hash::UuidHash;
use super::segment::Row;
use super::segment::{SegmentMetadata, SegmentUpdate};
use super::table::Table;
use crate::error::{Error, ErrorKind, Result};
use crate::model::{SegmentState, Uuid};

/// What the cache did with an event that Kafka's cache does not simply apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dropped {
    /// The transition from the segment's state is not legal; Kafka logs and drops it.
    InvalidTransition {
        id: Uuid,
        from: Option<SegmentState>,
        to: SegmentState,
    },
    /// An update for a segment the cache does not hold (its base record is missing).
    UnknownSegment { id: Uuid, initialized: bool },
    /// An update to COPY_SEGMENT_STARTED (after a STARTED segment record): Kafka throws, which
    /// stops its metadata consumer.
    StartedUpdate { id: Uuid },
    /// A segment record in a state other than COPY_SEGMENT_STARTED: Kafka throws.
    NotStarted { id: Uuid, state: SegmentState },
}

/// Kafka's `RemoteLogMetadataCache` for one user partition.
///
/// Segments live in a dense table (a freed row is reused by the next segment), found by id
/// through an index of rows; leader epochs name finished segments by row.
#[derive(Clone, Debug, Default)]
pub struct PartitionCache {
    table: Table,
    index: HashTable<Row>,
    epochs: Epochs,
    initialized: bool,
    /// One bit a row: the segment's record came with a null key (written before KIP-1266, so a
    /// backfill may write it again). Set by a broker's store only ([`Self::mark_unkeyed`]).
    unkeyed_rows: Vec<u64>,
}

fn hash_id(id: Uuid) -> u64 {
    UuidHash::default().hash_one(id)
}

impl PartitionCache {
    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// One-way: replay has caught up with the log for this partition.
    pub fn mark_initialized(&mut self) {
        self.initialized = true;
        self.epochs.keep_hints();
    }

    fn row_of(&self, id: Uuid) -> Option<Row> {
        let table = &self.table;
        self.index
            .find(hash_id(id), |&r| row_id(table, r) == Some(id))
            .copied()
    }

    fn row(&self, row: Row) -> Option<&SegmentMetadata> {
        self.table.get(row)
    }

    /// Kafka's `addCopyInProgressSegment`.
    pub fn add_copy_in_progress(&mut self, m: SegmentMetadata) -> std::result::Result<(), Dropped> {
        if m.state != SegmentState::CopySegmentStarted {
            return Err(Dropped::NotStarted {
                id: m.id,
                state: m.state,
            });
        }
        let existing = self.row_of(m.id);
        let from = existing.and_then(|r| self.row(r)).map(|e| e.state);
        if !SegmentState::is_valid_transition(from, m.state) {
            return Err(Dropped::InvalidTransition {
                id: m.id,
                from,
                to: m.state,
            });
        }
        let id = m.id;
        let row = match existing {
            Some(r) => {
                self.table.set(r, m);
                r
            }
            None => {
                let r = self.table.insert(m);
                let table = &self.table;
                self.index
                    .insert_unique(hash_id(id), r, |&r| row_id(table, r).map_or(0, hash_id));
                self.set_unkeyed(r, false); // a reused row
                r
            }
        };
        let (table, epochs) = (&self.table, &mut self.epochs);
        for &(epoch, _) in table.get(row).map_or(&[][..], |m| &m.leader_epochs) {
            epochs.apply(epoch, row, id, EpochEvent::CopyStarted, |_| id);
        }
        Ok(())
    }

    /// Kafka's `updateRemoteLogSegmentMetadata`.
    pub fn update(&mut self, u: &SegmentUpdate) -> std::result::Result<(), Dropped> {
        let unknown = Dropped::UnknownSegment {
            id: u.id,
            initialized: self.initialized,
        };
        // A deletion most often starts with the oldest segment: its row is read before the
        // index is probed, so that the two cache misses overlap instead of queueing, and the
        // probe then compares rows, not the ids in them.
        let oldest = (u.state == SegmentState::DeleteSegmentStarted)
            .then(|| self.epochs.oldest_row())
            .flatten()
            .filter(|&r| row_id(&self.table, r) == Some(u.id));
        // One probe of the index: a deletion's last update removes the entry it found.
        let (index, table, epochs) = (&mut self.index, &mut self.table, &mut self.epochs);
        let hash = hash_id(u.id);
        let found = match oldest {
            Some(row) => index.find_entry(hash, |&r| r == row),
            None => index.find_entry(hash, |&r| row_id(table, r) == Some(u.id)),
        };
        let Ok(entry) = found else {
            return Err(unknown);
        };
        let row = *entry.get();
        let Some(m) = table.get_mut(row) else {
            return Err(unknown);
        };
        if !SegmentState::is_valid_transition(Some(m.state), u.state) {
            return Err(Dropped::InvalidTransition {
                id: u.id,
                from: Some(m.state),
                to: u.state,
            });
        }
        if u.state == SegmentState::CopySegmentStarted {
            return Err(Dropped::StartedUpdate { id: u.id });
        }
        // Kafka's createWithUpdates, in place: broker, event time, custom metadata and state come
        // from the update, everything else stays.
        m.broker_id = u.broker_id;
        m.event_timestamp_ms = u.event_timestamp_ms;
        m.custom_metadata = u.custom_metadata.as_deref().map(Box::from);
        m.state = u.state;
        let Some(m) = table.get(row) else {
            return Err(unknown);
        };
        let id_of = |r: Row| row_id(table, r).unwrap_or_default();
        for (i, &(epoch, start)) in m.leader_epochs.iter().enumerate() {
            let event = match u.state {
                SegmentState::CopySegmentFinished => {
                    let end = m
                        .leader_epochs
                        .get(i + 1)
                        .map_or(m.end_offset, |next| next.1 - 1);
                    EpochEvent::CopyFinished { start, end }
                }
                SegmentState::DeleteSegmentStarted => EpochEvent::DeleteStarted { start },
                _ => EpochEvent::DeleteFinished,
            };
            epochs.apply(epoch, row, u.id, event, id_of);
        }
        if u.state == SegmentState::DeleteSegmentFinished {
            entry.remove();
            table.remove(row);
        }
        Ok(())
    }

    /// Kafka's `remoteLogSegmentMetadata(epoch, offset)`: the finished segment holding `offset`
    /// written in `epoch`.
    pub fn segment_for(&self, epoch: i32, offset: i64) -> Option<&SegmentMetadata> {
        let found = self.epochs.floor(epoch, offset)?;
        let m = self.row(found.row)?;
        // As Kafka does: the epoch ends where the segment's next epoch starts, or with it.
        let end = found.end.or_else(|| m.epoch_end(epoch))?;
        (offset <= end).then_some(m)
    }

    /// Whether Kafka's cache serves a fetch from segment `id`: it is the entry of one of its
    /// epochs at that epoch's start offset in the segment (Kafka's `offsetToId`). A finished
    /// upload attempt displaced by a later one of the same range is not (Kafka's unreferenced set).
    pub fn serves(&self, id: Uuid) -> bool {
        let Some(row) = self.row_of(id) else {
            return false;
        };
        let Some(m) = self.row(row) else {
            return false;
        };
        m.leader_epochs
            .iter()
            .any(|&(e, start)| self.epochs.floor(e, start).is_some_and(|f| f.row == row))
    }

    /// Kafka's `highestOffsetForEpoch`.
    pub fn highest_offset_for_epoch(&self, epoch: i32) -> Option<i64> {
        self.epochs.highest(epoch)
    }

    /// Kafka's `listRemoteLogSegments(epoch)`: serving segments by start offset, then the rest,
    /// the whole stable-sorted by segment start offset when there is a rest.
    pub fn segments_for_epoch(&self, epoch: i32) -> Result<Vec<&SegmentMetadata>> {
        let unreferenced = self.epochs.unreferenced(epoch);
        let mut out = Vec::new();
        for s in self.epochs.serving(epoch) {
            let id = self.row(s.row).map(|m| m.id).unwrap_or_default();
            out.push(self.row(s.row).ok_or_else(|| not_found_segment(id))?);
        }
        for &id in &unreferenced {
            out.push(self.segment(id).ok_or_else(|| not_found_segment(id))?);
        }
        if !unreferenced.is_empty() {
            out.sort_by_key(|m| m.start_offset);
        }
        Ok(out)
    }

    /// Kafka's `listAllRemoteLogSegments`: every segment not yet DELETE_SEGMENT_FINISHED. Kafka's
    /// order is a hash map's; this one is by start offset, then segment id.
    pub fn segments(&self) -> Vec<&SegmentMetadata> {
        let mut out: Vec<_> = self.table.iter().collect();
        out.sort_by_key(|m| (m.start_offset, m.id));
        out
    }

    /// The segment's metadata, if the cache holds it.
    pub fn segment(&self, id: Uuid) -> Option<&SegmentMetadata> {
        self.row(self.row_of(id)?)
    }

    /// Kafka's `nextSegmentWithTxnIndex` (KIP-1058).
    pub fn next_segment_with_txn_index(&self, epoch: i32, offset: i64) -> Option<&SegmentMetadata> {
        let mut found = self.segment_for(epoch, offset);
        while let Some(m) = found {
            if !m.txn_index_empty {
                return Some(m);
            }
            found = m
                .end_offset
                .checked_add(1)
                .and_then(|next| self.segment_for(epoch, next));
        }
        None
    }

    fn set_unkeyed(&mut self, row: Row, on: bool) {
        let (word, bit) = (row as usize / 64, 1u64 << (row % 64));
        if on {
            if self.unkeyed_rows.len() <= word {
                self.unkeyed_rows.resize(word + 1, 0);
            }
            self.unkeyed_rows[word] |= bit;
        } else if let Some(w) = self.unkeyed_rows.get_mut(word) {
            *w &= !bit;
        }
    }

    /// Notes that segment `id`'s record came with a null key (a history written before
    /// KIP-1266).
    pub(crate) fn mark_unkeyed(&mut self, id: Uuid) {
        if let Some(r) = self.row_of(id) {
            self.set_unkeyed(r, true);
        }
    }

    /// Whether segment `id` is held and its record came with a null key.
    pub(crate) fn is_unkeyed(&self, id: Uuid) -> bool {
        self.row_of(id).is_some_and(|r| {
            self.unkeyed_rows
                .get(r as usize / 64)
                .is_some_and(|w| w & (1u64 << (r % 64)) != 0)
        })
    }

    pub(crate) fn add_memory(&self, m: &mut super::memory::MemoryUse) {
        m.rows += self.unkeyed_rows.capacity() * std::mem::size_of::<u64>();
        self.table.add_memory(m);
        m.index += self.index.allocation_size();
        self.epochs.add_memory(m);
    }

    /// Number of segments held (not yet DELETE_SEGMENT_FINISHED).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

fn row_id(table: &Table, r: Row) -> Option<Uuid> {
    table.get(r).map(|m| m.id)
}

fn not_found_segment(id: Uuid) -> Error {
    Error::new(
        ErrorKind::NotFound,
        format!("no remote log segment metadata found for {id}"),
    )
}
