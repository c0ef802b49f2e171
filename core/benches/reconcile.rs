//! `reconcile` at the scale: a 1.2 M-record metadata history (400,000 segments in 100
//! partitions, each uploaded and finished, half of them then deleted) against a synthetic
//! listing of 1,000,000 objects in Aiven's layout (the live segments' three files each, 50,000
//! leaked segments' and 250,000 orphaned objects), on one thread. Prints the wall time of the
//! replay and of the classification, three runs (`RUNS=n` for n), as this thread's CPU time (a
//! loaded machine's waits left out) and as wall time; the bound is 10 s for both.
//! Run with `make bench-reconcile` (a benchmark, not a test: no timed assertion).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // bench code: a failure is a panic

use std::borrow::Cow;
use std::hint::black_box;
use std::time::{Duration, Instant};

use rlmeta::model::{SegmentState, Uuid};
use rlmeta::reconcile::{Layout, Ledger, Object, Params, reconcile};
use rlmeta::record::{
    LeaderEpochEntry, Record, SegmentIdEntry, SegmentMetadataRecord, SegmentMetadataUpdateRecord,
    TopicIdPartitionEntry, Value,
};

const PARTITIONS: i32 = 100;
const SEGMENTS: i64 = 4_000; // per partition
const TOPIC: &str = "orders.events-eu-west";
const TOPIC_ID: Uuid = Uuid::new(0x0123_4567_89ab_cdef, 0x7edc_ba98_7654_3210);

fn sid(p: i32, s: i64) -> SegmentIdEntry<'static> {
    SegmentIdEntry {
        topic_id_partition: TopicIdPartitionEntry {
            name: Cow::Borrowed(TOPIC),
            id: TOPIC_ID,
            partition: p,
            unknown_tagged_fields: vec![],
        },
        id: Uuid::new(i64::from(p) << 32 | s, s ^ 0x5555),
        unknown_tagged_fields: vec![],
    }
}

fn history() -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(1_200_000);
    let update = |p, s, st: SegmentState, ts| {
        Value {
            version: 0,
            record: Record::Update(SegmentMetadataUpdateRecord {
                remote_log_segment_id: sid(p, s),
                broker_id: 1,
                event_timestamp_ms: ts,
                custom_metadata: None,
                remote_log_segment_state: st.id(),
                broker_leader_epoch: -1,
                end_offset: -1,
                unknown_tagged_fields: vec![],
            }),
        }
        .encode()
        .unwrap()
    };
    for p in 0..PARTITIONS {
        for s in 0..SEGMENTS {
            out.push(
                Value {
                    version: 0,
                    record: Record::Segment(SegmentMetadataRecord {
                        remote_log_segment_id: sid(p, s),
                        start_offset: s * 1000,
                        end_offset: s * 1000 + 999,
                        broker_id: 1,
                        max_timestamp_ms: s,
                        event_timestamp_ms: s,
                        segment_leader_epochs: vec![LeaderEpochEntry {
                            leader_epoch: 0,
                            offset: s * 1000,
                            unknown_tagged_fields: vec![],
                        }]
                        .into(),
                        segment_size_in_bytes: 1 << 20,
                        custom_metadata: None,
                        remote_log_segment_state: 0,
                        txn_index_empty: true,
                        broker_leader_epoch: 0,
                        unknown_tagged_fields: vec![],
                    }),
                }
                .encode()
                .unwrap(),
            );
            out.push(update(p, s, SegmentState::CopySegmentFinished, s + 1));
        }
        for s in 0..SEGMENTS / 2 {
            out.push(update(
                p,
                s,
                SegmentState::DeleteSegmentStarted,
                SEGMENTS + s,
            ));
            out.push(update(
                p,
                s,
                SegmentState::DeleteSegmentFinished,
                SEGMENTS + s + 1,
            ));
        }
    }
    out
}

fn key(p: i32, s: i64, file: &str) -> String {
    let id = sid(p, s).id;
    format!("{TOPIC}-{TOPIC_ID}/{p}/{:020}-{id}.{file}", s * 1000)
}

fn listing() -> Vec<Object> {
    let mut out = Vec::with_capacity(1_000_000);
    let obj = |key| Object {
        key,
        size: 1 << 20,
        last_modified_ms: 0,
    };
    for p in 0..PARTITIONS {
        for s in SEGMENTS / 2..SEGMENTS {
            for f in ["log", "indexes", "rsm-manifest"] {
                out.push(obj(key(p, s, f)));
            }
        }
        for s in 0..500 {
            for f in ["log", "indexes", "rsm-manifest"] {
                out.push(obj(key(p, s, f)));
            }
        }
        for s in 0..2_500 {
            out.push(obj(key(p, 1_000_000 + s, "log")));
        }
    }
    out
}

/// This thread's CPU time so far (Linux's schedstat), so that a loaded machine's waits are not
/// counted; `None` elsewhere.
fn cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(
        s.split_whitespace().next()?.parse().ok()?,
    ))
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let values = history();
    let listing = listing();
    let layout = Layout::parse("aiven").unwrap();
    println!(
        "reconcile: {} records, {} objects (one thread)",
        values.len(),
        listing.len()
    );
    let runs: u32 = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    for run in 1..=runs {
        let (t0, c0) = (Instant::now(), cpu());
        let mut ledger = Ledger::new();
        for (i, v) in values.iter().enumerate() {
            ledger.apply(i as i64, None, Some(v));
        }
        let (replay, c1) = (t0.elapsed(), cpu());
        let r = reconcile(
            &ledger,
            &listing,
            &layout,
            Params {
                now_ms: 1 << 40,
                grace_ms: 0,
                metadata_as_of_ms: None,
                listing_as_of_ms: None,
            },
        )
        .unwrap();
        let (total, c2) = (t0.elapsed(), cpu());
        let count = |c: &str| {
            r.totals
                .iter()
                .filter(|((_, k), _)| *k == c)
                .map(|(_, t)| t.objects)
                .sum::<u64>()
        };
        assert_eq!(count("live"), 600_000);
        assert_eq!(count("leaked"), 150_000);
        assert_eq!(count("orphaned"), 250_000);
        assert_eq!(r.safe_to_delete.len(), 400_000);
        black_box(&r);
        let secs =
            |d: Option<Duration>| d.map_or("?".to_owned(), |d| format!("{:.2}", d.as_secs_f64()));
        println!(
            "run {run}: CPU replay {} s, classify {} s, total {} s (wall {:.2} s, {:.2} s)",
            secs(c0.zip(c1).map(|(a, b)| b - a)),
            secs(c1.zip(c2).map(|(a, b)| b - a)),
            secs(c0.zip(c2).map(|(a, b)| b - a)),
            replay.as_secs_f64(),
            (total - replay).as_secs_f64()
        );
    }
}
