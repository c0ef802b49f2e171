//! Records as a stock broker (one that predates KIP-1266) writes them: version-0 segment and
//! update values, produced under a null key. Shared by the tests of the backfill, the keyed-log
//! verdict and the KIP scenarios, which each need a history written before the upgrade.
//!
//! Owns: building those values from a partition, a segment id, offsets and a state. Never: keys,
//! a version above 0, replay, or any rule of the store. Not part of the supported API.

use crate::error::Result;
use crate::model::{SegmentState, TopicIdPartition, Uuid};
use crate::record::{
    LeaderEpochEntries, LeaderEpochEntry, Record, SegmentIdEntry, SegmentMetadataRecord,
    SegmentMetadataUpdateRecord, TopicIdPartitionEntry, Value,
};

fn id_entry(tp: &TopicIdPartition, id: Uuid) -> SegmentIdEntry<'static> {
    SegmentIdEntry {
        topic_id_partition: TopicIdPartitionEntry {
            name: tp.topic.clone().into(),
            id: tp.topic_id,
            partition: tp.partition,
            unknown_tagged_fields: vec![],
        },
        id,
        unknown_tagged_fields: vec![],
    }
}

/// The version-0 segment record (COPY_SEGMENT_STARTED) of segment `id` of `tp`: offsets `start`
/// to `start + 99`, all in leader epoch `leader_epoch`, broker 1, timestamps 1, 10 bytes.
pub fn started(tp: &TopicIdPartition, id: Uuid, start: i64, leader_epoch: i32) -> Result<Vec<u8>> {
    Value {
        version: 0,
        record: Record::Segment(SegmentMetadataRecord {
            remote_log_segment_id: id_entry(tp, id),
            start_offset: start,
            end_offset: start + 99,
            broker_id: 1,
            max_timestamp_ms: 1,
            event_timestamp_ms: 1,
            segment_leader_epochs: LeaderEpochEntries::One(LeaderEpochEntry {
                leader_epoch,
                offset: start,
                unknown_tagged_fields: vec![],
            }),
            segment_size_in_bytes: 10,
            custom_metadata: None,
            remote_log_segment_state: SegmentState::CopySegmentStarted.id(),
            txn_index_empty: false,
            broker_leader_epoch: 0,
            unknown_tagged_fields: vec![],
        }),
    }
    .encode()
}

/// The version-0 update of segment `id` of `tp` to `state` (broker 1, timestamp 2).
pub fn update(tp: &TopicIdPartition, id: Uuid, state: SegmentState) -> Result<Vec<u8>> {
    update_by(tp, id, state, 1, 2)
}

/// The version-0 update of segment `id` of `tp` to `state`, by `broker_id` at `event_timestamp_ms`.
pub fn update_by(
    tp: &TopicIdPartition,
    id: Uuid,
    state: SegmentState,
    broker_id: i32,
    event_timestamp_ms: i64,
) -> Result<Vec<u8>> {
    Value {
        version: 0,
        record: Record::Update(SegmentMetadataUpdateRecord {
            remote_log_segment_id: id_entry(tp, id),
            broker_id,
            event_timestamp_ms,
            custom_metadata: None,
            remote_log_segment_state: state.id(),
            broker_leader_epoch: -1,
            end_offset: -1,
            unknown_tagged_fields: vec![],
        }),
    }
    .encode()
}
