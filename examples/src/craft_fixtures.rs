//! `craft_fixtures OUTDIR`: writes the crafted segment files of tests/fixtures/crafted with
//! rlmeta's own encoders, starting from the real broker's segment (tests/fixtures/broker,
//! metadata partition 0). Deterministic: `make crafted-check` regenerates them and compares
//! with the committed copies. Each file is `<case>/__remote_log_metadata-0/00000000000000000000.log`:
//! - `gzip`, `snappy`, `lz4`, `zstd`: every batch of the real segment re-written compressed;
//! - `corrupt-crc`: one byte of the third batch's records flipped (its CRC no longer matches);
//! - `truncated-tail`: the real segment without its last 100 bytes;
//! - `kip1266-keyed`: a level-2 KIP-1266 log written by rlmeta's planner: keyed version-1
//!   records, a deletion with its tombstones, a partition deleted.

use std::path::Path;
use std::process::ExitCode;

use rlmeta::batch::{BatchBuilder, Batches, Compression, NewRecord, ReadOptions};
use rlmeta::cache::{SegmentMetadata, Store};
use rlmeta::feature::MetadataLevel;
use rlmeta::model::{PartitionDeleteState, SegmentState, TopicIdPartition, Uuid};
use rlmeta::plan::{Event, SegmentEvent};

const REAL: &[u8] = include_bytes!(
    "../../tests/fixtures/broker/remote_log_metadata/__remote_log_metadata-0/00000000000000000000.log"
);

fn recompressed(codec: Compression) -> rlmeta::Result<Vec<u8>> {
    let mut out = Vec::new();
    for batch in Batches::new(REAL, ReadOptions::default()) {
        let batch = batch?;
        let mut builder = BatchBuilder::from_batch(&batch);
        builder.compression = codec;
        for r in batch.records()? {
            builder.push(NewRecord::from_record(&r?, batch.base_timestamp));
        }
        builder.encode_into(&mut out)?;
    }
    Ok(out)
}

fn corrupt_crc() -> rlmeta::Result<Vec<u8>> {
    let mut out = REAL.to_vec();
    let third = Batches::new(REAL, ReadOptions::default())
        .nth(2)
        .ok_or_else(|| rlmeta::Error::new(rlmeta::ErrorKind::Truncated, "no third batch"))??;
    // A byte inside the value of its first record: the batch still parses, its CRC fails.
    if let Some(b) = out.get_mut(third.position + 61 + 40) {
        *b ^= 0x01;
    }
    Ok(out)
}

/// A KIP-1266 log as rlmeta's planner writes it at level 2, batched one record a batch by an
/// idempotent producer (producer id 7), timestamps one millisecond apart.
fn keyed() -> rlmeta::Result<Vec<u8>> {
    let tp = TopicIdPartition {
        topic_id: Uuid::parse("ASNFZ4mrze_-3LqYdlQyEA")?,
        topic: "orders".into(),
        partition: 0,
    };
    let mut store = Store::new();
    let mut planned = Vec::new();
    let segment = |n: i64, start: i64, epoch: i32| SegmentMetadata {
        id: Uuid::new(n, n),
        start_offset: start,
        end_offset: start + 99,
        broker_id: 1,
        max_timestamp_ms: 1_796_000_000_000 + start,
        event_timestamp_ms: 1_796_000_000_000 + start,
        leader_epochs: [(epoch, start)].into(),
        segment_size_in_bytes: 1 << 20,
        custom_metadata: None,
        state: SegmentState::CopySegmentStarted,
        txn_index_empty: true,
        broker_leader_epoch: epoch,
    };
    let ev = |n: i64, epoch: i32| SegmentEvent {
        partition: tp.clone(),
        segment_id: Uuid::new(n, n),
        broker_id: 1,
        event_timestamp_ms: 1_796_000_001_000 + n,
        custom_metadata: None,
        broker_leader_epoch: epoch,
    };
    let pd = |state| Event::PartitionDelete {
        partition: tp.clone(),
        state,
        broker_id: 1,
        event_timestamp_ms: 1_796_000_002_000,
        broker_leader_epoch: 3,
    };
    let events = vec![
        Event::CopyStarted {
            partition: tp.clone(),
            segment: segment(1, 0, 2),
        },
        Event::CopyFinished(ev(1, 2)),
        Event::CopyStarted {
            partition: tp.clone(),
            segment: segment(2, 100, 3),
        },
        Event::CopyFinished(ev(2, 3)),
        Event::DeleteStarted(ev(1, 3)),
        Event::DeleteFinished(ev(1, 3)),
        pd(PartitionDeleteState::DeletePartitionMarked),
        pd(PartitionDeleteState::DeletePartitionStarted),
        Event::DeleteStarted(ev(2, 3)),
        Event::DeleteFinished(ev(2, 3)),
        pd(PartitionDeleteState::DeletePartitionFinished),
    ];
    for e in &events {
        for p in store.plan(e, MetadataLevel::V2)? {
            let offset = planned.len() as i64;
            let key = p.key.format();
            store.apply(offset, Some(key.as_bytes()), p.value.as_deref());
            planned.push((key, p.value));
        }
    }
    let mut out = Vec::new();
    for (i, (key, value)) in planned.iter().enumerate() {
        let mut b = BatchBuilder::new(i as i64);
        b.partition_leader_epoch = 0;
        b.producer_id = 7;
        b.producer_epoch = 0;
        b.base_sequence = i as i32;
        b.push(NewRecord::new(
            0,
            1_796_000_003_000 + i as i64,
            Some(key.as_bytes()),
            value.as_deref(),
        ));
        b.encode_into(&mut out)?;
    }
    Ok(out)
}

fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: craft_fixtures OUTDIR");
        return ExitCode::from(2);
    };
    let cases: Vec<(&str, rlmeta::Result<Vec<u8>>)> = vec![
        ("gzip", recompressed(Compression::Gzip)),
        ("snappy", recompressed(Compression::Snappy)),
        ("lz4", recompressed(Compression::Lz4)),
        ("zstd", recompressed(Compression::Zstd)),
        ("corrupt-crc", corrupt_crc()),
        (
            "truncated-tail",
            Ok(REAL[..REAL.len().saturating_sub(100)].to_vec()),
        ),
        ("kip1266-keyed", keyed()),
    ];
    for (name, bytes) in cases {
        let dir = Path::new(&out).join(name).join("__remote_log_metadata-0");
        let written = bytes.map_err(|e| e.to_string()).and_then(|b| {
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            std::fs::write(dir.join("00000000000000000000.log"), b).map_err(|e| e.to_string())
        });
        if let Err(e) = written {
            eprintln!("craft_fixtures: {name}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
