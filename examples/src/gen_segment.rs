//! `gen_segment OUT MEGABYTES [--keyed] [--topic=NAME]`: writes a large `__remote_log_metadata`
//! segment file for benchmarks and the browser inspector's tests. Segments of 8 user partitions
//! of topic `orders` (or NAME) go through copy started, copy finished, delete started, delete
//! finished (4 records each, planned by the core's write planner at level 0 with null keys, or at
//! level 2 with KIP-1266 keys), with the newest 64 segments of each partition left live; batches
//! of 50 records, one second apart.
//! Deterministic for given arguments.

use std::process::ExitCode;

use rlmeta::batch::{BatchBuilder, NewRecord};
use rlmeta::cache::{SegmentMetadata, Store};
use rlmeta::feature::MetadataLevel;
use rlmeta::model::{SegmentState, TopicIdPartition, Uuid};
use rlmeta::plan::{Event, SegmentEvent};

const PARTITIONS: i32 = 8;
const LIVE: i64 = 64;
const BATCH: usize = 50;
const T0: i64 = 1_796_000_000_000;

/// A record's key and value, waiting for its batch.
type Pending = Vec<(Option<Vec<u8>>, Option<Vec<u8>>)>;

fn generate(limit: usize, level: MetadataLevel, topic: &str) -> rlmeta::Result<Vec<u8>> {
    let topic_id = Uuid::parse("ASNFZ4mrze_-3LqYdlQyEA")?;
    let tps: Vec<TopicIdPartition> = (0..PARTITIONS)
        .map(|partition| TopicIdPartition {
            topic_id,
            topic: topic.into(),
            partition,
        })
        .collect();
    let mut store = Store::new();
    let mut out = Vec::with_capacity(limit + (1 << 20));
    let mut pending: Pending = Vec::new();
    let mut offset = 0i64;
    let mut seq = 0i64;
    let flush =
        |out: &mut Vec<u8>, pending: &mut Pending, offset: &mut i64| -> rlmeta::Result<()> {
            let mut b = BatchBuilder::new(*offset);
            b.producer_id = 0;
            b.producer_epoch = 0;
            b.base_sequence = *offset as i32;
            let ts = T0 + *offset * 1000 / BATCH as i64;
            for (i, (k, v)) in pending.iter().enumerate() {
                b.push(NewRecord::new(i as i32, ts, k.as_deref(), v.as_deref()));
            }
            b.encode_into(out)?;
            *offset += pending.len() as i64;
            pending.clear();
            Ok(())
        };
    while out.len() < limit {
        let n = seq / i64::from(PARTITIONS);
        let tp = &tps[(seq % i64::from(PARTITIONS)) as usize];
        let id = Uuid::new(seq + 1, 0x5eed);
        let start = n * 1000;
        let ev = |id: Uuid, k: i64| SegmentEvent {
            partition: tp.clone(),
            segment_id: id,
            broker_id: 1,
            event_timestamp_ms: T0 + seq * 4000 + k,
            custom_metadata: None,
            broker_leader_epoch: 1,
        };
        let mut events = vec![
            Event::CopyStarted {
                partition: tp.clone(),
                segment: SegmentMetadata {
                    id,
                    start_offset: start,
                    end_offset: start + 999,
                    broker_id: 1,
                    max_timestamp_ms: T0 + seq * 4000,
                    event_timestamp_ms: T0 + seq * 4000,
                    leader_epochs: [(1, 0)].into(),
                    segment_size_in_bytes: 1 << 20,
                    custom_metadata: None,
                    state: SegmentState::CopySegmentStarted,
                    txn_index_empty: true,
                    broker_leader_epoch: 1,
                },
            },
            Event::CopyFinished(ev(id, 1)),
        ];
        if n >= LIVE {
            let old = Uuid::new(seq + 1 - LIVE * i64::from(PARTITIONS), 0x5eed);
            events.push(Event::DeleteStarted(ev(old, 2)));
            events.push(Event::DeleteFinished(ev(old, 3)));
        }
        for e in &events {
            for p in store.plan(e, level)? {
                let key = (level >= MetadataLevel::V1).then(|| p.key.format().into_bytes());
                store.apply(
                    offset + pending.len() as i64,
                    key.as_deref(),
                    p.value.as_deref(),
                );
                pending.push((key, p.value));
                if pending.len() == BATCH {
                    flush(&mut out, &mut pending, &mut offset)?;
                }
            }
        }
        seq += 1;
    }
    if !pending.is_empty() {
        flush(&mut out, &mut pending, &mut offset)?;
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let keyed = args.iter().any(|a| a == "--keyed");
    let topic = args
        .iter()
        .find_map(|a| a.strip_prefix("--topic="))
        .unwrap_or("orders");
    let pos: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let (Some(path), Some(mb)) = (pos.first(), pos.get(1).and_then(|m| m.parse::<f64>().ok()))
    else {
        eprintln!("usage: gen_segment OUT MEGABYTES [--keyed] [--topic=NAME]");
        return ExitCode::from(2);
    };
    let level = if keyed {
        MetadataLevel::V2
    } else {
        MetadataLevel::V0
    };
    match generate((mb * 1_048_576.0) as usize, level, topic) {
        Ok(bytes) => match std::fs::write(path, &bytes) {
            Ok(()) => {
                println!("gen_segment: {path}: {} bytes", bytes.len());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("gen_segment: cannot write {path}: {e}");
                ExitCode::from(1)
            }
        },
        Err(e) => {
            eprintln!("gen_segment: {e}");
            ExitCode::from(1)
        }
    }
}
