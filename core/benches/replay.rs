//! Replay of `__remote_log_metadata` into the store: throughput on a history of about one million
//! values (50 user partitions; every segment uploaded, and all but the newest 1,746 of each
//! partition deleted: about 87,300 live segments at the end, the shape of the design's budget),
//! memory held per live segment (counted by a global allocator), and query latency.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is a panic

use std::borrow::Cow;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rlmeta::cache::Store;
use rlmeta::key::RecordKey;
use rlmeta::model::{SegmentState, TopicIdPartition, Uuid};
use rlmeta::record::{
    LeaderEpochEntries, LeaderEpochEntry, Record, SegmentIdEntry, SegmentMetadataRecord,
    SegmentMetadataUpdateRecord, TopicIdPartitionEntry, Value, decode_value,
};

#[path = "support/counting.rs"]
mod counting;

const PARTITIONS: i32 = 50;
const SEGMENTS_PER_PARTITION: i64 = 5_873;
const LIVE_PER_PARTITION: i64 = 1_746;

fn tip(p: i32) -> TopicIdPartition {
    TopicIdPartition {
        topic_id: Uuid::new(0x0123_4567_89ab_cdef, 0x7edc_ba98_7654_3210),
        topic: "orders.events-eu-west".into(),
        partition: p,
    }
}

fn seg_id(p: i32, s: i64) -> SegmentIdEntry<'static> {
    let t = tip(p);
    SegmentIdEntry {
        topic_id_partition: TopicIdPartitionEntry {
            name: Cow::Owned(t.topic),
            id: t.topic_id,
            partition: p,
            unknown_tagged_fields: vec![],
        },
        id: Uuid::new(
            i64::from(p) << 32 | s,
            s.wrapping_mul(0x9e37_79b9_7f4a_7c15u64 as i64),
        ),
        unknown_tagged_fields: vec![],
    }
}

/// A state change of segment `s`; at version 1 with the key fields KIP-1266 adds.
fn update(p: i32, s: i64, state: SegmentState, version: i16) -> Vec<u8> {
    let (broker_leader_epoch, end_offset) = if version >= 1 {
        ((s / 500) as i32, s * 100_000 + 99_999)
    } else {
        (-1, -1)
    };
    Value {
        version,
        record: Record::Update(SegmentMetadataUpdateRecord {
            remote_log_segment_id: seg_id(p, s),
            broker_id: 1,
            event_timestamp_ms: 1_700_000_000_000 + s,
            custom_metadata: None,
            remote_log_segment_state: state.id(),
            broker_leader_epoch,
            end_offset,
            unknown_tagged_fields: vec![],
        }),
    }
    .encode()
    .unwrap_or_default()
}

/// The history, in log order, interleaving partitions as a shared metadata partition would:
/// values of `version` (0 as a stock broker writes them, 1 as KIP-1266 keys need them).
fn history(version: i16) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(1_030_000);
    for s in 0..SEGMENTS_PER_PARTITION {
        for p in 0..PARTITIONS {
            let start = s * 100_000;
            let epoch = (s / 500) as i32;
            out.push(
                Value {
                    version,
                    record: Record::Segment(SegmentMetadataRecord {
                        remote_log_segment_id: seg_id(p, s),
                        start_offset: start,
                        end_offset: start + 99_999,
                        broker_id: 1,
                        max_timestamp_ms: 1_700_000_000_000 + s,
                        event_timestamp_ms: 1_700_000_000_000 + s,
                        segment_leader_epochs: LeaderEpochEntries::One(LeaderEpochEntry {
                            leader_epoch: epoch,
                            offset: start,
                            unknown_tagged_fields: vec![],
                        }),
                        segment_size_in_bytes: 1 << 30,
                        custom_metadata: None,
                        remote_log_segment_state: 0,
                        txn_index_empty: true,
                        broker_leader_epoch: if version >= 1 { epoch } else { 0 },
                        unknown_tagged_fields: vec![],
                    }),
                }
                .encode()
                .unwrap_or_default(),
            );
            out.push(update(p, s, SegmentState::CopySegmentFinished, version));
            if s >= LIVE_PER_PARTITION {
                out.push(update(
                    p,
                    s - LIVE_PER_PARTITION,
                    SegmentState::DeleteSegmentStarted,
                    version,
                ));
                out.push(update(
                    p,
                    s - LIVE_PER_PARTITION,
                    SegmentState::DeleteSegmentFinished,
                    version,
                ));
            }
        }
    }
    out
}

fn replay(values: &[Vec<u8>]) -> Store {
    replay_keyed(values, None)
}

/// Replays `values` with their KIP-1266 keys when `keys` is given (as a level-1 or 2 topic holds
/// them before compaction), else with null keys (as a stock broker writes them).
fn replay_keyed(values: &[Vec<u8>], keys: Option<&[Vec<u8>]>) -> Store {
    let mut store = Store::new();
    for (offset, v) in values.iter().enumerate() {
        let key = keys.map(|k| k[offset].as_slice());
        store.apply(offset as i64, key, Some(v));
    }
    for p in 0..PARTITIONS {
        store.mark_initialized(&tip(p));
    }
    store
}

fn benches(c: &mut Criterion) {
    let values = history(0);
    let bytes: usize = values.iter().map(Vec::len).sum();

    let before = counting::live_bytes();
    let store = replay(&values);
    let held = counting::live_bytes() - before;
    let live: usize = (0..PARTITIONS)
        .filter_map(|p| store.segments(&tip(p)).ok())
        .map(|v| v.len())
        .sum();
    println!(
        "history: {} values, {:.1} MB; live segments at the end: {live}; store holds {:.1} MB = {:.0} bytes per live segment",
        values.len(),
        bytes as f64 / 1e6,
        held as f64 / 1e6,
        held as f64 / live.max(1) as f64
    );

    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    g.throughput(Throughput::Elements(values.len() as u64));
    g.bench_function("1M values, 50 partitions (records)", |b| {
        b.iter(|| black_box(replay(&values)))
    });
    let keyed = history(1);
    let keys: Vec<Vec<u8>> = keyed
        .iter()
        .map(|v| {
            let key = RecordKey::for_value(&decode_value(v).unwrap()).unwrap();
            key.format().into_bytes()
        })
        .collect();
    g.bench_function(
        "1M values with KIP-1266 keys, 50 partitions (records)",
        |b| b.iter(|| black_box(replay_keyed(&keyed, Some(&keys)))),
    );
    g.finish();

    let mut g = c.benchmark_group("query");
    let tp = tip(7);
    let last = SEGMENTS_PER_PARTITION - 1;
    g.bench_function("segment_for (live offset)", |b| {
        let mut s = SEGMENTS_PER_PARTITION - LIVE_PER_PARTITION;
        b.iter(|| {
            s = if s >= last {
                SEGMENTS_PER_PARTITION - LIVE_PER_PARTITION
            } else {
                s + 1
            };
            black_box(
                store
                    .segment_for(&tp, (s / 500) as i32, s * 100_000 + 5)
                    .ok()
                    .flatten()
                    .map(|m| m.id),
            )
        })
    });
    g.bench_function("highest_offset_for_epoch", |b| {
        b.iter(|| black_box(store.highest_offset_for_epoch(&tp, 11).ok()))
    });
    g.finish();
}

criterion_group!(replay_benches, benches);
criterion_main!(replay_benches);
