//! Record batches and checkpoints from the outside: fixtures compressed by other tools (the
//! `gzip`, `lz4` and `zstd` command-line programs), random batches through the encoder and back,
//! and random corruption, which must never panic and must keep the fuzz targets' properties.

// Helpers outside #[test] functions build fixtures; a failure there is a broken test.
#![allow(clippy::unwrap_used, clippy::panic)] // a kept input that cannot be read fails the replay

use std::path::Path;

use proptest::collection::vec;
use proptest::prelude::*;
use rlmeta::batch::{
    self, Batch, BatchBuilder, Batches, Compression, CrcCheck, NewRecord, ReadOptions, Record,
    TimestampType,
};
use rlmeta::checkpoint::{self, FeatureLevelRecord};
use rlmeta::testing::batch::{check_batches, check_checkpoint};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The records section the fixtures hold: three records, key "key", values
/// "remote-log-segment-<i>:" six times, timestamps 1700000000000 + i.
const PLAIN: &str = "9002000000066b6579fc0172656d6f74652d6c6f672d7365676d656e742d303a72656d6f74652d6c6f672d7365676d656e742d303a72656d6f74652d6c6f672d7365676d656e742d303a72656d6f74652d6c6f672d7365676d656e742d303a72656d6f74652d6c6f672d7365676d656e742d303a72656d6f74652d6c6f672d7365676d656e742d303a009002000202066b6579fc0172656d6f74652d6c6f672d7365676d656e742d313a72656d6f74652d6c6f672d7365676d656e742d313a72656d6f74652d6c6f672d7365676d656e742d313a72656d6f74652d6c6f672d7365676d656e742d313a72656d6f74652d6c6f672d7365676d656e742d313a72656d6f74652d6c6f672d7365676d656e742d313a009002000404066b6579fc0172656d6f74652d6c6f672d7365676d656e742d323a72656d6f74652d6c6f672d7365676d656e742d323a72656d6f74652d6c6f672d7365676d656e742d323a72656d6f74652d6c6f672d7365676d656e742d323a72656d6f74652d6c6f672d7365676d656e742d323a72656d6f74652d6c6f672d7365676d656e742d323a00";

/// (codec, how it was made, compressed records section)
const FIXTURES: &[(Compression, &str, &str)] = &[
    (
        Compression::Gzip,
        "gzip -9 -n",
        "1f8b08000000000002039bc0c4c0c0c0969d5af987b1283537bf245537273f5db738353d3735af44d7c08a6e820c139818989870bac4d08a6e822097b0b0e074899115dd041900929a4b559e010000",
    ),
    (
        Compression::Gzip,
        "gzip (with FNAME)",
        "1f8b080822c20d6b00037061796c6f61642e62696e009bc0c4c0c0c0969d5af987b1283537bf245537273f5db738353d3735af44d7c08a6e820c139818989870bac4109b2eda08825cc2c282d32546d874d146900100929a4b559e010000",
    ),
    (
        Compression::Gzip,
        "two gzip members",
        "1f8b08000000000000039bc0c4c0c0c0969d5af987b1283537bf245537273f5db738353d3735af44d7c08a6e820c139818989870bac4109b2e244100ea5f3060c80000001f8b08000000000000034bd72d4e4dcf4dcd2bd135b42a4acdcd2f49d5cdc94f274b90610213030b0b5b766ae51f462c0a8cb0e9a28d20030048a3124dd6000000",
    ),
    (
        Compression::Lz4,
        "lz4 (content checksum)",
        "04224d186440a750000000ff119002000000066b6579fc0172656d6f74652d6c6f672d7365676d656e742d303a1500566f0090020002028a00061f318a00010f150043008a002f04048a00061f328a00010f15003f50742d323a00000000005c8d9e1e",
    ),
    (
        Compression::Lz4,
        "lz4 -BX (block checksums)",
        "04224d187440bd50000000ff119002000000066b6579fc0172656d6f74652d6c6f672d7365676d656e742d303a1500566f0090020002028a00061f318a00010f150043008a002f04048a00061f328a00010f15003f50742d323a00873fcc3b000000005c8d9e1e",
    ),
    (
        Compression::Zstd,
        "zstd --check",
        "28b52ffd649e00150200b4029002000000066b6579fc0172656d6f74652d6c6f672d7365676d656e742d303a00900200020231040432000800032600f4058b20880113007d1b66293098ce27e593aa1b",
    ),
];

/// A batch around a given records section, with a correct CRC.
fn wrap(codec: Compression, count: i32, payload: &[u8]) -> Vec<u8> {
    let mut b = BatchBuilder::new(0);
    b.compression = codec;
    b.base_timestamp = Some(1_700_000_000_000);
    let mut bytes = b.encode().unwrap();
    bytes.truncate(batch::RECORD_BATCH_OVERHEAD);
    bytes[57..61].copy_from_slice(&count.to_be_bytes());
    bytes.extend_from_slice(payload);
    let len = (bytes.len() - 12) as i32;
    bytes[8..12].copy_from_slice(&len.to_be_bytes());
    let crc = batch::crc::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    bytes
}

#[test]
fn batches_compressed_by_other_tools_read() {
    let plain = unhex(PLAIN);
    for (codec, how, hex) in FIXTURES {
        let bytes = wrap(*codec, 3, &unhex(hex));
        let batch = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
        assert_eq!(batch.records_data().unwrap(), plain.as_slice(), "{how}");
        let recs: Vec<Record<'_>> = batch.records().unwrap().map(Result::unwrap).collect();
        assert_eq!(recs.len(), 3, "{how}");
        for (i, r) in recs.iter().enumerate() {
            assert_eq!(r.key, Some(&b"key"[..]));
            let want = format!("remote-log-segment-{i}:").repeat(6);
            assert_eq!(r.value, Some(want.as_bytes()), "{how}");
            assert_eq!(r.timestamp, 1_700_000_000_000 + i as i64);
        }
        // And a flipped byte anywhere in the compressed data never reads as the same records.
        let payload = unhex(hex);
        for i in 0..payload.len() {
            let mut bad = payload.clone();
            bad[i] ^= 0x01;
            let b = wrap(*codec, 3, &bad);
            let batch = Batch::parse(&b, 0, ReadOptions::default()).unwrap();
            // Every fixture is checksummed (gzip's CRC-32, lz4's and zstd's xxHash): a change
            // fails, or is in bytes that carry no data (gzip's MTIME, OS, file name), or (like
            // Java) turns a second gzip member into ignored garbage, and then records are missing.
            let read: Result<Vec<Record<'_>>, _> = batch.records().and_then(|r| r.collect());
            if let Ok(read) = read {
                assert_eq!(read, recs, "{how} byte {i}");
            }
        }
    }
}

/// (key, value, headers, timestamp offset) of one record.
type Rec = (Option<Vec<u8>>, Option<Vec<u8>>, Headers, i64);
type Headers = Vec<(Vec<u8>, Option<Vec<u8>>)>;

fn record_strategy() -> impl Strategy<Value = Rec> {
    (
        proptest::option::of(vec(any::<u8>(), 0..40)),
        proptest::option::of(vec(any::<u8>(), 0..300)),
        vec(
            (
                vec(any::<u8>(), 0..8),
                proptest::option::of(vec(any::<u8>(), 0..8)),
            ),
            0..3,
        ),
        -1000i64..1000,
    )
}

type Recs = Vec<Rec>;

#[derive(Clone, Debug)]
struct Spec {
    codec: Compression,
    log_append: bool,
    transactional: bool,
    horizon: Option<i64>,
    base_offset: i64,
    base_sequence: i32,
    records: Recs,
}

fn spec_strategy() -> impl Strategy<Value = Spec> {
    (
        0usize..5,
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(0i64..1 << 40),
        0i64..1 << 40,
        prop_oneof![Just(-1), 0..i32::MAX, Just(i32::MAX - 2)],
        vec(record_strategy(), 0..12),
    )
        .prop_map(
            |(c, log_append, transactional, horizon, base_offset, base_sequence, records)| Spec {
                codec: Compression::ALL[c],
                log_append,
                transactional,
                horizon,
                base_offset,
                base_sequence,
                records,
            },
        )
}

fn build(spec: &Spec) -> Vec<u8> {
    let mut b = BatchBuilder::new(spec.base_offset);
    b.compression = spec.codec;
    b.partition_leader_epoch = 3;
    b.producer_id = 77;
    b.producer_epoch = 1;
    b.base_sequence = spec.base_sequence;
    b.transactional = spec.transactional;
    b.delete_horizon_ms = spec.horizon;
    if spec.log_append {
        b.timestamp_type = TimestampType::LogAppendTime;
        b.max_timestamp = Some(1_800_000_000_000);
    }
    for (i, (k, v, hs, dt)) in spec.records.iter().enumerate() {
        let mut r = NewRecord::new(
            i as i32 * 2,
            1_700_000_000_000 + dt,
            k.as_deref(),
            v.as_deref(),
        );
        for (hk, hv) in hs {
            r = r.with_header(hk, hv.as_deref());
        }
        b.push(r);
    }
    b.encode().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_batches_read_back(specs in vec(spec_strategy(), 1..4)) {
        let mut file = Vec::new();
        for s in &specs {
            file.extend_from_slice(&build(s));
        }
        let got: Vec<Batch<'_>> = batch::batches(&file).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(got.len(), specs.len());
        for (b, s) in got.iter().zip(&specs) {
            prop_assert_eq!(b.compression().unwrap(), s.codec);
            prop_assert_eq!(b.delete_horizon_ms(), s.horizon);
            let recs: Vec<Record<'_>> = b.records().unwrap().map(Result::unwrap).collect();
            prop_assert_eq!(recs.len(), s.records.len());
            for (i, (r, (k, v, hs, dt))) in recs.iter().zip(&s.records).enumerate() {
                prop_assert_eq!(r.offset, s.base_offset + 2 * i as i64);
                prop_assert_eq!(r.key, k.as_deref());
                prop_assert_eq!(r.value, v.as_deref());
                let want_ts = if s.log_append { 1_800_000_000_000 } else { 1_700_000_000_000 + dt };
                prop_assert_eq!(r.timestamp, want_ts);
                let headers: Vec<_> = r.headers.iter().map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec))).collect();
                prop_assert_eq!(&headers, hs);
            }
        }
        prop_assert_eq!(check_batches(&file), Ok(()));
    }

    #[test]
    fn corrupted_batches_never_panic(
        spec in spec_strategy(),
        flips in vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
        do_cut in any::<bool>(),
    ) {
        let mut file = build(&spec);
        file.extend_from_slice(&build(&spec));
        for (at, x) in flips {
            let i = at.index(file.len());
            file[i] ^= x;
        }
        if do_cut {
            file.truncate(cut.index(file.len() + 1));
        }
        prop_assert_eq!(check_batches(&file), Ok(()));
        let report = ReadOptions { crc: CrcCheck::Report, max_decompressed_size: 1 << 20 };
        let mut walk = Batches::new(&file, report);
        for b in walk.by_ref().flatten() {
            if let Ok(r) = b.records() {
                r.for_each(drop);
            }
        }
        prop_assert!(walk.position() <= file.len());
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in vec(any::<u8>(), 0..400)) {
        prop_assert_eq!(check_batches(&data), Ok(()));
        prop_assert_eq!(check_checkpoint(&data), Ok(()));
    }

    #[test]
    fn corrupted_checkpoints_never_panic(
        levels in vec(("[a-z.]{1,30}", any::<i16>()), 0..6),
        flips in vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
    ) {
        let records: Vec<Vec<u8>> = levels
            .iter()
            .map(|(n, l)| FeatureLevelRecord { name: n.as_str().into(), feature_level: *l, unknown_tagged_fields: vec![] }.encode().unwrap())
            .collect();
        let mut file = checkpoint::write_checkpoint(0, 1, 0, Some(1), &records).unwrap();
        let f = checkpoint::finalized_features(&file).unwrap();
        for (n, l) in &levels {
            // The last record for a name wins.
            let last = levels.iter().rev().find(|(m, _)| m == n).map(|(_, l)| *l);
            prop_assert_eq!(f.get(n), last);
            let _ = l;
        }
        prop_assert_eq!(check_checkpoint(&file), Ok(()));
        for (at, x) in flips {
            let i = at.index(file.len());
            file[i] ^= x;
        }
        prop_assert_eq!(check_checkpoint(&file), Ok(()));
    }
}

/// Replays every file kept in fuzz/regressions/<dir>: a missing or empty directory, or a file
/// that cannot be read, fails (a replay of nothing would pass without checking anything).
fn replay(dir: &str, check: fn(&[u8]) -> Result<(), String>) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions")
        .join(dir);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (the kept fuzz inputs to replay)", dir.display()));
    let mut n = 0;
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(check(&data), Ok(()), "{}", path.display());
        n += 1;
    }
    assert!(n > 0, "{}: no kept fuzz inputs to replay", dir.display());
    n
}

#[test]
fn kept_batch_and_checkpoint_crashers_stay_fixed() {
    let batches = replay("batch", check_batches);
    let checkpoints = replay("checkpoint", check_checkpoint);
    println!("replayed {batches} kept batch and {checkpoints} kept checkpoint fuzz inputs");
}
