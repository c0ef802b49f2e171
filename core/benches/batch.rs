//! Parse throughput of `.log` segment images (MB/s of file bytes via `Bytes`): walk every batch
//! (CRC-32C verified), read every record, touch its key and value. The image is ~100 MB of
//! realistic `__remote_log_metadata` batches (set `RLMETA_BENCH_MB` to change it): an idempotent
//! producer, 1-10 records per batch, KIP-1266 text keys, version-0 segment and update values
//! (~100-200 bytes) as Kafka 4.4.0 writes them; one image per codec, compressed with this
//! crate's encoders. Variants: headers only (no records read) and CRCs skipped, to see where the
//! time goes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // bench code: a failure is a panic

use std::borrow::Cow;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rlmeta::batch::{BatchBuilder, Batches, Compression, CrcCheck, NewRecord, ReadOptions};
use rlmeta::model::Uuid;
use rlmeta::record::{
    LeaderEpochEntry, Record, SegmentIdEntry, SegmentMetadataRecord, SegmentMetadataUpdateRecord,
    TopicIdPartitionEntry, Value,
};

/// A small deterministic generator (xorshift), so every run builds the same image.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn segment_id(rng: &mut Rng, partition: i32) -> SegmentIdEntry<'static> {
    SegmentIdEntry {
        topic_id_partition: TopicIdPartitionEntry {
            name: Cow::Borrowed("orders.events-eu-west"),
            id: Uuid::new(0x0123456789abcdef, 0x7edcba9876543210),
            partition,
            unknown_tagged_fields: vec![],
        },
        id: Uuid::new(rng.next() as i64, rng.next() as i64),
        unknown_tagged_fields: vec![],
    }
}

/// One record's key and value: a segment's metadata or one of its updates.
fn key_value(rng: &mut Rng, n: u64) -> (Vec<u8>, Vec<u8>) {
    let partition = rng.below(64) as i32;
    let start = n as i64 * 100_000;
    let epoch = 5 + rng.below(3) as i32;
    let update = rng.below(3) != 0;
    let record = if update {
        Record::Update(SegmentMetadataUpdateRecord {
            remote_log_segment_id: segment_id(rng, partition),
            broker_id: 3,
            event_timestamp_ms: 1_700_000_000_900 + n as i64,
            custom_metadata: None,
            remote_log_segment_state: 1 + rng.below(3) as i8,
            broker_leader_epoch: -1,
            end_offset: -1,
            unknown_tagged_fields: vec![],
        })
    } else {
        Record::Segment(SegmentMetadataRecord {
            remote_log_segment_id: segment_id(rng, partition),
            start_offset: start,
            end_offset: start + 99_999,
            broker_id: 3,
            max_timestamp_ms: 1_700_000_000_000 + n as i64,
            event_timestamp_ms: 1_700_000_000_500 + n as i64,
            segment_leader_epochs: (0..1 + rng.below(3) as i32)
                .map(|e| LeaderEpochEntry {
                    leader_epoch: epoch + e,
                    offset: start + i64::from(e) * 100,
                    unknown_tagged_fields: vec![],
                })
                .collect(),
            segment_size_in_bytes: 1 << 30,
            custom_metadata: None,
            remote_log_segment_state: 0,
            txn_index_empty: true,
            broker_leader_epoch: 0,
            unknown_tagged_fields: vec![],
        })
    };
    let value = Value { version: 0, record }.encode().unwrap();
    let suffix = if update { ":UPDATE" } else { "" };
    let key = format!(
        "ASNFZ4mrze_-3LqYdlQyEA:orders.events-eu-west:{partition}:{}:{epoch}{suffix}",
        start + 99_999
    );
    (key.into_bytes(), value)
}

/// A segment image whose records total about `mb` MB before compression.
fn image(codec: Compression, mb: usize) -> (Vec<u8>, u64) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut file = Vec::with_capacity(mb << 20);
    let (mut offset, mut records, mut plain) = (0i64, 0u64, 0usize);
    let mut sequence = 0i32;
    while plain < mb << 20 {
        let n = 1 + rng.below(10) as usize;
        let kvs: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
            .map(|i| key_value(&mut rng, records + i as u64))
            .collect();
        let mut b = BatchBuilder::new(offset);
        b.partition_leader_epoch = 7;
        b.producer_id = 4242;
        b.producer_epoch = 0;
        b.base_sequence = sequence;
        b.compression = codec;
        for (i, (k, v)) in kvs.iter().enumerate() {
            plain += k.len() + v.len() + 8;
            b.push(NewRecord::new(
                i as i32,
                1_700_000_000_000 + offset + i as i64,
                Some(k),
                Some(v),
            ));
        }
        b.encode_into(&mut file).unwrap();
        offset += n as i64;
        sequence = sequence.wrapping_add(n as i32);
        records += n as u64;
    }
    (file, records)
}

/// Walks the image: every batch, every record, key and value lengths summed.
fn walk(file: &[u8], options: ReadOptions, read_records: bool) -> u64 {
    let mut sum = 0u64;
    for batch in Batches::new(file, options) {
        let batch = batch.unwrap();
        sum += batch.records_count as u64;
        if read_records {
            for r in batch.records().unwrap() {
                let r = r.unwrap();
                sum += r.key.map_or(0, <[u8]>::len) as u64 + r.value.map_or(0, <[u8]>::len) as u64;
            }
        }
    }
    sum
}

fn bench(c: &mut Criterion) {
    let mb = std::env::var("RLMETA_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let mut g = c.benchmark_group("batch_parse");
    let block: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    g.throughput(Throughput::Bytes(block.len() as u64));
    g.bench_function("crc32c_1MiB", |b| {
        b.iter(|| rlmeta::batch::crc::crc32c(black_box(&block)))
    });
    let verify = ReadOptions::default();
    let skip = ReadOptions {
        crc: CrcCheck::Skip,
        ..ReadOptions::default()
    };
    for codec in Compression::ALL {
        let (file, records) = image(codec, mb);
        eprintln!(
            "{codec}: image {:.1} MB, {records} records, {:.0} bytes/record",
            file.len() as f64 / 1e6,
            file.len() as f64 / records as f64
        );
        g.throughput(Throughput::Bytes(file.len() as u64));
        g.bench_function(format!("{codec}/records"), |b| {
            b.iter(|| walk(black_box(&file), verify, true))
        });
        if codec == Compression::None {
            g.bench_function("none/records_no_crc", |b| {
                b.iter(|| walk(black_box(&file), skip, true))
            });
            g.bench_function("none/headers_only", |b| {
                b.iter(|| walk(black_box(&file), verify, false))
            });
            g.bench_function("none/headers_no_crc", |b| {
                b.iter(|| walk(black_box(&file), skip, false))
            });
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
