//! Random records encoded by rlmeta, written as a value-vector file for Kafka's deserializer to
//! check. Deterministic for a seed (splitmix64), no dependencies.

use std::borrow::Cow;

use rlmeta::json::{record_to_json, to_hex};
use rlmeta::model::Uuid;
use rlmeta::record::{
    LeaderEpochEntry, PartitionDeleteMetadataRecord, Record, SegmentIdEntry, SegmentMetadataRecord,
    SegmentMetadataUpdateRecord, TopicIdPartitionEntry, Value,
};
use serde_json::json;

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// Mostly ordinary values, sometimes an edge.
    fn i64(&mut self) -> i64 {
        match self.below(8) {
            0 => [i64::MIN, i64::MAX, -1, 0][self.below(4) as usize],
            1 => self.next() as i64,
            _ => self.below(1 << 40) as i64,
        }
    }
    fn i32(&mut self) -> i32 {
        match self.below(8) {
            0 => [i32::MIN, i32::MAX, -1, 0][self.below(4) as usize],
            1 => self.next() as i32,
            _ => self.below(5000) as i32,
        }
    }
    fn uuid(&mut self) -> Uuid {
        Uuid::new(self.next() as i64, self.next() as i64)
    }
    fn name(&mut self) -> String {
        const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
        let len = if self.below(10) == 0 {
            249
        } else {
            1 + self.below(40) as usize
        };
        (0..len)
            .map(|_| char::from(CHARS[self.below(CHARS.len() as u64) as usize]))
            .collect()
    }
    fn bytes(&mut self) -> Option<Cow<'static, [u8]>> {
        match self.below(4) {
            0 => None,
            1 => Some(Cow::Owned(Vec::new())),
            _ => Some(Cow::Owned(
                (0..self.below(300)).map(|_| self.next() as u8).collect(),
            )),
        }
    }
}

fn segment_id(rng: &mut Rng) -> SegmentIdEntry<'static> {
    SegmentIdEntry {
        topic_id_partition: TopicIdPartitionEntry {
            name: rng.name().into(),
            id: rng.uuid(),
            partition: rng.i32(),
            unknown_tagged_fields: vec![],
        },
        id: rng.uuid(),
        unknown_tagged_fields: vec![],
    }
}

fn random_value(rng: &mut Rng) -> Value<'static> {
    let version = 0;
    let record = match rng.below(3) {
        0 => {
            let start = rng.i64().max(0);
            Record::Segment(SegmentMetadataRecord {
                remote_log_segment_id: segment_id(rng),
                start_offset: start,
                end_offset: start.saturating_add(rng.below(1 << 20) as i64),
                broker_id: rng.i32(),
                max_timestamp_ms: rng.i64(),
                event_timestamp_ms: rng.i64(),
                segment_leader_epochs: (0..1 + rng.below(6))
                    .map(|i| LeaderEpochEntry {
                        leader_epoch: i as i32 * 3,
                        offset: start.saturating_add(i as i64 * 10),
                        unknown_tagged_fields: vec![],
                    })
                    .collect(),
                segment_size_in_bytes: rng.i32(),
                custom_metadata: rng.bytes(),
                remote_log_segment_state: rng.below(4) as i8,
                txn_index_empty: rng.below(2) == 0,
                broker_leader_epoch: 0,
                unknown_tagged_fields: vec![],
            })
        }
        1 => Record::Update(SegmentMetadataUpdateRecord {
            remote_log_segment_id: segment_id(rng),
            broker_id: rng.i32(),
            event_timestamp_ms: rng.i64(),
            custom_metadata: rng.bytes(),
            remote_log_segment_state: 1 + rng.below(3) as i8,
            broker_leader_epoch: -1,
            end_offset: -1,
            unknown_tagged_fields: vec![],
        }),
        _ => Record::PartitionDelete(PartitionDeleteMetadataRecord {
            topic_id_partition: TopicIdPartitionEntry {
                name: rng.name().into(),
                id: rng.uuid(),
                partition: rng.i32(),
                unknown_tagged_fields: vec![],
            },
            broker_id: rng.i32(),
            event_timestamp_ms: rng.i64(),
            remote_partition_delete_state: rng.below(3) as i8,
            broker_leader_epoch: 0,
            end_offset: 0,
            unknown_tagged_fields: vec![],
        }),
    };
    Value { version, record }
}

/// A vector file of `n` version-0 records that rlmeta encodes; Kafka 4.4.0 reads version 0.
pub fn sample_file(n: usize, seed: u64) -> String {
    let mut rng = Rng(seed);
    let cases: Vec<_> = (0..n)
        .filter_map(|i| {
            let v = random_value(&mut rng);
            let bytes = v.encode().ok()?;
            Some(json!({"name": format!("rlmeta-sample-{seed}-{i}"), "apiKey": v.record.api_key().id(), "version": v.version,
                        "record": record_to_json(&v), "hex": to_hex(&bytes)}))
        })
        .collect();
    json!({"source": format!("rlmeta's encoder (rlmeta-conformance --sample {n} {seed})"), "cases": cases}).to_string()
}
