//! The cache's shared types: a segment's metadata as the cache keeps it, a state change, and a
//! row of a partition's segment table.
//!
//! Owns: these types and their checked construction from decoded records. A leaf of the cache:
//! it names no other cache module, so the epochs, the table and the partition all build on it
//! without import circles. Never: where a segment is kept, which segment serves an offset, or
//! what to write.

use crate::error::{Error, ErrorKind, Result};
pub use crate::model::LeaderEpochs;
use crate::model::{SegmentState, Uuid};
use crate::record::{SegmentMetadataRecord, SegmentMetadataUpdateRecord};

/// A segment's row in its partition's segment table.
pub(crate) type Row = u32;

/// A segment's metadata as the cache keeps it (Kafka's `RemoteLogSegmentMetadata`, without the
/// partition, which the cache already knows). Kept small: the cache holds one per live segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentMetadata {
    pub id: Uuid,
    pub start_offset: i64,
    pub end_offset: i64,
    pub broker_id: i32,
    pub max_timestamp_ms: i64,
    pub event_timestamp_ms: i64,
    /// Leader epoch -> first offset, ascending by epoch (duplicate epochs: the last one wins).
    pub leader_epochs: LeaderEpochs,
    pub segment_size_in_bytes: i32,
    pub custom_metadata: Option<Box<[u8]>>,
    pub state: SegmentState,
    pub txn_index_empty: bool,
    /// The leader epoch of the broker that wrote the segment record (KIP-1266; 0 at version 0).
    pub broker_leader_epoch: i32,
}

/// The state a record's `remoteLogSegmentState` names, as Kafka's transform checks it.
fn state_of(id: i8) -> Result<SegmentState> {
    SegmentState::from_id(id).ok_or_else(|| {
        Error::field(
            ErrorKind::InvalidRecord,
            "remoteLogSegmentState",
            format!("unknown state id {id}"),
        )
    })
}

impl SegmentMetadata {
    /// The metadata of a segment record, checked as Kafka's transform checks it.
    pub fn from_record(r: &SegmentMetadataRecord<'_>) -> Result<SegmentMetadata> {
        let state = state_of(r.remote_log_segment_state)?;
        let epochs = SegmentMetadata::sorted_epochs(
            r.segment_leader_epochs
                .iter()
                .map(|e| (e.leader_epoch, e.offset))
                .collect(),
        );
        let m = SegmentMetadata {
            id: r.remote_log_segment_id.id,
            start_offset: r.start_offset,
            end_offset: r.end_offset,
            broker_id: r.broker_id,
            max_timestamp_ms: r.max_timestamp_ms,
            event_timestamp_ms: r.event_timestamp_ms,
            leader_epochs: epochs,
            segment_size_in_bytes: r.segment_size_in_bytes,
            custom_metadata: r.custom_metadata.as_deref().map(Box::from),
            state,
            txn_index_empty: r.txn_index_empty,
            broker_leader_epoch: r.broker_leader_epoch,
        };
        crate::record::check_offsets_and_epochs(
            m.start_offset,
            m.end_offset,
            m.leader_epochs.len(),
        )?;
        Ok(m)
    }

    /// Leader epochs as written, in the order Kafka's sorted map holds them: ascending, the
    /// last of duplicate epochs winning.
    pub(crate) fn sorted_epochs(mut epochs: LeaderEpochs) -> LeaderEpochs {
        // As brokers write them: strictly ascending already, so nothing to sort or drop.
        if epochs.len() > 1 && !epochs.windows(2).all(|w| w[0].0 < w[1].0) {
            epochs.reverse();
            epochs.sort_by_key(|(e, _)| *e);
            epochs.dedup_by_key(|(e, _)| *e);
        }
        epochs
    }

    /// The heap bytes this metadata holds beyond its own size.
    pub(crate) fn heap_bytes(&self) -> usize {
        let epochs = if self.leader_epochs.spilled() {
            self.leader_epochs.capacity() * std::mem::size_of::<(i32, i64)>()
        } else {
            0
        };
        epochs + self.custom_metadata.as_ref().map_or(0, |c| c.len())
    }

    /// The last offset epoch `epoch` wrote in this segment: the next epoch's start minus one,
    /// or the segment's end offset for its last epoch.
    pub fn epoch_end(&self, epoch: i32) -> Option<i64> {
        let i = self.leader_epochs.iter().position(|(e, _)| *e == epoch)?;
        Some(match self.leader_epochs.get(i + 1) {
            Some((_, next_start)) => next_start - 1,
            None => self.end_offset,
        })
    }
}

/// A segment state change (Kafka's `RemoteLogSegmentMetadataUpdate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentUpdate {
    pub id: Uuid,
    pub broker_id: i32,
    pub event_timestamp_ms: i64,
    pub custom_metadata: Option<Vec<u8>>,
    pub state: SegmentState,
}

impl SegmentUpdate {
    pub fn from_record(r: &SegmentMetadataUpdateRecord<'_>) -> Result<SegmentUpdate> {
        let state = state_of(r.remote_log_segment_state)?;
        Ok(SegmentUpdate {
            id: r.remote_log_segment_id.id,
            broker_id: r.broker_id,
            event_timestamp_ms: r.event_timestamp_ms,
            custom_metadata: r.custom_metadata.as_ref().map(|c| c.to_vec()),
            state,
        })
    }
}
