//! The user partition and names the core's scenario tests share (backfill.rs, kip_scenarios.rs):
//! one partition of "topicA", segment ids from a number, and the KIP-1266 keys of that partition.
//! Records as a stock broker writes them are in `rlmeta::testing::stock` (the core's own unit
//! tests use them too). Owns nothing a test checks.
#![allow(dead_code)] // each test crate uses part of it

use rlmeta::RecordKey;
use rlmeta::model::{TopicIdPartition, Uuid};

/// The user partition of every scenario: topicA-0.
pub fn tp() -> TopicIdPartition {
    TopicIdPartition {
        topic_id: Uuid::parse("T8fJ9Kz3RyWxP2mQ4nL7vA").unwrap_or_default(),
        topic: "topicA".into(),
        partition: 0,
    }
}

/// Segment id number `n`.
pub fn uuid(n: i64) -> Uuid {
    Uuid::new(n, n)
}

/// The KIP-1266 key of topicA-0 for `(end, epoch)`, the `:UPDATE` one when `update`.
pub fn k(end: i64, epoch: i32, update: bool) -> String {
    RecordKey {
        topic_id: tp().topic_id,
        topic: "topicA".into(),
        partition: 0,
        end_offset: end,
        broker_leader_epoch: epoch,
        update,
    }
    .format()
}
