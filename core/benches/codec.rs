//! Decode and encode throughput per record type (records/s via `Elements`, MB/s via `Bytes`),
//! over 10,000 realistic values each (a topic name of 20 characters, 3 leader epochs, no custom
//! metadata), as Kafka 4.4.0 writes them (version 0) and as KIP-1266 writes them (version 1).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is a panic

use std::borrow::Cow;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rlmeta::model::Uuid;
use rlmeta::record::{
    LeaderEpochEntry, PartitionDeleteMetadataRecord, Record, SegmentIdEntry, SegmentMetadataRecord,
    SegmentMetadataUpdateRecord, TopicIdPartitionEntry, Value, decode_value,
};

const N: usize = 10_000;

fn segment_id(i: usize) -> SegmentIdEntry<'static> {
    SegmentIdEntry {
        topic_id_partition: TopicIdPartitionEntry {
            name: Cow::Borrowed("orders.events-eu-west"),
            id: Uuid::new(0x0123456789abcdef, 0x7edcba9876543210),
            partition: (i % 64) as i32,
            unknown_tagged_fields: vec![],
        },
        id: Uuid::new(i as i64 * 7919, i as i64 * 104729),
        unknown_tagged_fields: vec![],
    }
}

fn values(kind: &str, version: i16) -> Vec<Value<'static>> {
    (0..N)
        .map(|i| {
            let start = i as i64 * 100_000;
            let record = match kind {
                "segment" => Record::Segment(SegmentMetadataRecord {
                    remote_log_segment_id: segment_id(i),
                    start_offset: start,
                    end_offset: start + 99_999,
                    broker_id: 3,
                    max_timestamp_ms: 1_700_000_000_000 + i as i64,
                    event_timestamp_ms: 1_700_000_000_500 + i as i64,
                    segment_leader_epochs: (0..3)
                        .map(|e| LeaderEpochEntry {
                            leader_epoch: e,
                            offset: start + i64::from(e) * 100,
                            unknown_tagged_fields: vec![],
                        })
                        .collect(),
                    segment_size_in_bytes: 1 << 30,
                    custom_metadata: None,
                    remote_log_segment_state: 0,
                    txn_index_empty: true,
                    broker_leader_epoch: if version >= 1 { 7 } else { 0 },
                    unknown_tagged_fields: vec![],
                }),
                "update" => Record::Update(SegmentMetadataUpdateRecord {
                    remote_log_segment_id: segment_id(i),
                    broker_id: 3,
                    event_timestamp_ms: 1_700_000_000_900 + i as i64,
                    custom_metadata: None,
                    remote_log_segment_state: 1,
                    broker_leader_epoch: if version >= 1 { 7 } else { -1 },
                    end_offset: if version >= 1 { start + 99_999 } else { -1 },
                    unknown_tagged_fields: vec![],
                }),
                _ => Record::PartitionDelete(PartitionDeleteMetadataRecord {
                    topic_id_partition: segment_id(i).topic_id_partition,
                    broker_id: 3,
                    event_timestamp_ms: 1_700_000_000_900,
                    remote_partition_delete_state: 0,
                    broker_leader_epoch: if version >= 1 { 7 } else { 0 },
                    end_offset: 0,
                    unknown_tagged_fields: vec![],
                }),
            };
            Value { version, record }
        })
        .collect()
}

fn codec(c: &mut Criterion) {
    for kind in ["segment", "update", "partition-delete"] {
        for version in [0i16, 1] {
            let vals = values(kind, version);
            let encoded: Vec<Vec<u8>> = vals.iter().filter_map(|v| v.encode().ok()).collect();
            let total: usize = encoded.iter().map(Vec::len).sum();
            let mut g = c.benchmark_group(format!("{kind}-v{version}"));
            g.throughput(Throughput::Bytes(total as u64));
            g.bench_function("decode (bytes)", |b| {
                b.iter(|| {
                    encoded
                        .iter()
                        .filter(|e| decode_value(black_box(e)).is_ok())
                        .count()
                })
            });
            g.throughput(Throughput::Elements(N as u64));
            g.bench_function("decode (records)", |b| {
                b.iter(|| {
                    encoded
                        .iter()
                        .filter(|e| decode_value(black_box(e)).is_ok())
                        .count()
                })
            });
            g.bench_function("encode (records)", |b| {
                b.iter(|| {
                    vals.iter()
                        .filter_map(|v| black_box(v).encode().ok())
                        .count()
                })
            });
            g.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = codec
}
criterion_main!(benches);
