use super::*;
use crate::batch::control::LeaderChange;

/// The partition-delete value of §1.3/§9.1 (42 bytes), as a stand-in payload.
fn value42() -> Vec<u8> {
    (0..42u8).collect()
}

fn idempotent<'r>(base_offset: i64, records: Vec<NewRecord<'r>>) -> BatchBuilder<'r> {
    let mut b = BatchBuilder::new(base_offset);
    b.partition_leader_epoch = 5;
    b.producer_id = 4000;
    b.producer_epoch = 0;
    b.base_sequence = 17;
    b.records = records;
    b
}

fn all_records<'b>(batch: &'b Batch<'_>) -> Vec<Record<'b>> {
    batch
        .records()
        .unwrap()
        .collect::<Result<Vec<_>>>()
        .unwrap()
}

#[test]
fn worked_example_of_section_9_1() {
    let v = value42();
    let b = idempotent(0, vec![NewRecord::new(0, 1000, None, Some(&v))])
        .encode()
        .unwrap();
    let batch = Batch::parse(&b, 0, ReadOptions::default()).unwrap();
    let mut want = vec![0x60, 0x00, 0x00, 0x00, 0x01, 0x54];
    want.extend_from_slice(&v);
    want.push(0x00);
    assert_eq!(batch.records_payload(), want.as_slice());
    assert_eq!(batch.size_in_bytes(), RECORD_BATCH_OVERHEAD + want.len());
    assert_eq!(batch.batch_length as usize, batch.size_in_bytes() - 12);

    // With the PR-A key the key length is 0x44 (34 bytes) and the body grows by 34.
    let key = b"ASNFZ4mrze_-3LqYdlQyEA:foo:0:100:5";
    assert_eq!(key.len(), 34);
    let b = idempotent(0, vec![NewRecord::new(0, 1000, Some(key), Some(&v))])
        .encode()
        .unwrap();
    let batch = Batch::parse(&b, 0, ReadOptions::default()).unwrap();
    let p = batch.records_payload();
    assert_eq!(&p[..5], &[0xa4, 0x01, 0x00, 0x00, 0x00]); // 82 → zig-zag 164 = a4 01
    assert_eq!(p[5], 0x44);
    assert_eq!(&p[6..40], key);
    let r = all_records(&batch);
    assert_eq!(r[0].key, Some(&key[..]));
    assert_eq!(r[0].value, Some(v.as_slice()));
}

#[test]
fn header_fields_and_derived_values() {
    let v = value42();
    let mut b = idempotent(
        100,
        vec![
            NewRecord::new(0, 5000, Some(b"k0"), Some(&v)).with_header(b"h", Some(b"x")),
            NewRecord::new(1, 4990, None, None),
            NewRecord::new(2, 5020, Some(b"k2"), Some(b"")),
        ],
    );
    b.transactional = true;
    let bytes = b.encode().unwrap();
    let batch = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
    assert_eq!(batch.base_offset, 100);
    assert_eq!(batch.last_offset(), 102);
    assert_eq!(batch.next_offset(), 103);
    assert_eq!(batch.partition_leader_epoch, 5);
    assert_eq!(batch.magic, 2);
    assert_eq!(batch.crc_valid(), Some(true));
    assert_eq!(batch.compression().unwrap(), Compression::None);
    assert_eq!(batch.timestamp_type(), TimestampType::CreateTime);
    assert!(batch.is_transactional());
    assert!(!batch.is_control());
    assert_eq!(batch.delete_horizon_ms(), None);
    assert_eq!(batch.base_timestamp, 5000);
    assert_eq!(batch.max_timestamp, 5020);
    assert_eq!((batch.producer_id, batch.producer_epoch), (4000, 0));
    assert_eq!((batch.base_sequence, batch.last_sequence()), (17, 19));
    assert_eq!(batch.records_count, 3);
    let r = all_records(&batch);
    assert_eq!(
        r.iter()
            .map(|r| (r.offset, r.timestamp, r.sequence))
            .collect::<Vec<_>>(),
        vec![(100, 5000, 17), (101, 4990, 18), (102, 5020, 19)]
    );
    assert_eq!(r[1].timestamp_delta, -10);
    assert_eq!((r[1].key, r[1].value), (None, None));
    assert_eq!(r[2].value, Some(&b""[..]));
    let h: Vec<_> = r[0].headers.iter().collect();
    assert_eq!(
        h,
        vec![Header {
            key: b"h",
            value: Some(b"x")
        }]
    );
    assert_eq!(h[0].key_str(), Some("h"));
    assert!(r[1].headers.is_empty());
    assert_eq!(r[0].position, 0);
    assert_eq!(r[1].position, r[0].size);
}

#[test]
fn log_append_time_and_delete_horizon() {
    let mut b = idempotent(
        0,
        vec![
            NewRecord::new(0, 10, None, Some(b"a")),
            NewRecord::new(1, 20, None, Some(b"b")),
        ],
    );
    b.timestamp_type = TimestampType::LogAppendTime;
    b.max_timestamp = Some(99_999);
    let bytes = b.encode().unwrap();
    let batch = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
    assert_eq!(batch.timestamp_type(), TimestampType::LogAppendTime);
    let r = all_records(&batch);
    assert!(r.iter().all(|r| r.timestamp == 99_999));
    assert_eq!(r[1].timestamp_delta, 10);

    let mut b = idempotent(0, vec![NewRecord::new(0, 10, Some(b"k"), None)]);
    b.delete_horizon_ms = Some(86_400_000);
    let bytes = b.encode().unwrap();
    let batch = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
    assert_eq!(batch.delete_horizon_ms(), Some(86_400_000));
    assert_eq!(batch.base_timestamp, 86_400_000);
    // Deltas are relative to the stored base, so absolute timestamps survive.
    assert_eq!(all_records(&batch)[0].timestamp, 10);
}

#[test]
fn sequences_wrap_like_kafka() {
    assert_eq!(increment_sequence(5, 3), 8);
    assert_eq!(increment_sequence(i32::MAX, 1), 0);
    assert_eq!(increment_sequence(i32::MAX - 1, 3), 1);
    let mut b = idempotent(
        0,
        (0..3).map(|i| NewRecord::new(i, 0, None, None)).collect(),
    );
    b.base_sequence = i32::MAX - 1;
    let bytes = b.encode().unwrap();
    let batch = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
    let seqs: Vec<i32> = all_records(&batch).iter().map(|r| r.sequence).collect();
    assert_eq!(seqs, vec![i32::MAX - 1, i32::MAX, 0]);
    assert_eq!(batch.last_sequence(), 0);
    b.base_sequence = -1;
    let bytes = b.encode().unwrap();
    let batch = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
    assert!(all_records(&batch).iter().all(|r| r.sequence == -1));
    assert_eq!(batch.last_sequence(), -1);
}

/// (key, value) pairs.
type KeyValues = Vec<(Option<Vec<u8>>, Option<Vec<u8>>)>;

fn sample_records(n: usize, seed: u8) -> KeyValues {
    (0..n)
        .map(|i| {
            let key = (i % 3 != 0).then(|| format!("key-{seed}-{i}").into_bytes());
            let value = (i % 5 != 4).then(|| vec![seed ^ i as u8; 100 + i % 100]);
            (key, value)
        })
        .collect()
}

#[allow(clippy::type_complexity)]
fn builder_for(
    recs: &[(Option<Vec<u8>>, Option<Vec<u8>>)],
    codec: Compression,
) -> BatchBuilder<'_> {
    let mut b = idempotent(
        1000,
        recs.iter()
            .enumerate()
            .map(|(i, (k, v))| {
                NewRecord::new(
                    i as i32,
                    1_700_000_000_000 + i as i64,
                    k.as_deref(),
                    v.as_deref(),
                )
                .with_header(b"trace", Some(b"abc"))
            })
            .collect(),
    );
    b.compression = codec;
    b
}

#[test]
fn every_codec_round_trips_through_the_encoder() {
    let recs = sample_records(50, 9);
    for codec in Compression::ALL {
        let bytes = builder_for(&recs, codec).encode().unwrap();
        let batch = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
        assert_eq!(batch.compression().unwrap(), codec);
        let got = all_records(&batch);
        assert_eq!(got.len(), recs.len(), "{codec}");
        for (r, (k, v)) in got.iter().zip(&recs) {
            assert_eq!(r.key, k.as_deref(), "{codec}");
            assert_eq!(r.value, v.as_deref(), "{codec}");
            assert_eq!(r.headers.len(), 1);
        }
        // Decompressed once, reused after.
        assert_eq!(batch.records().unwrap().count(), recs.len());
        // Same records re-encoded with the same codec read back the same.
        let mut again = BatchBuilder::from_batch(&batch);
        again.records = got
            .iter()
            .map(|r| NewRecord::from_record(r, batch.base_timestamp))
            .collect();
        let bytes2 = again.encode().unwrap();
        if codec == Compression::None {
            assert_eq!(bytes2, bytes);
        }
        let batch2 = Batch::parse(&bytes2, 0, ReadOptions::default()).unwrap();
        assert_eq!(all_records(&batch2), got, "{codec}");
    }
}

#[test]
fn file_of_batches_walks_in_order() {
    let recs = sample_records(7, 1);
    let mut file = Vec::new();
    let mut next = 0i64;
    for (i, codec) in Compression::ALL.into_iter().enumerate() {
        let mut b = builder_for(&recs[..1 + i], codec);
        b.base_offset = next;
        next += 1 + i as i64;
        b.encode_into(&mut file).unwrap();
    }
    let mut it = batches(&file);
    let got: Vec<Batch<'_>> = it.by_ref().collect::<Result<_>>().unwrap();
    assert_eq!(got.len(), 5);
    assert_eq!(it.invalid_bytes(), 0);
    assert_eq!(it.position(), file.len());
    let mut expect_offset = 0;
    for b in &got {
        assert_eq!(b.base_offset, expect_offset);
        for r in b.records().unwrap() {
            assert_eq!(r.unwrap().offset, expect_offset);
            expect_offset += 1;
        }
    }
    assert_eq!(got[3].position, got[2].position + got[2].size_in_bytes());
}

#[test]
fn truncated_tails_are_reported_like_dump_log() {
    let recs = sample_records(3, 2);
    let mut file = Vec::new();
    builder_for(&recs, Compression::None)
        .encode_into(&mut file)
        .unwrap();
    let first = file.len();
    builder_for(&recs, Compression::None)
        .encode_into(&mut file)
        .unwrap();
    for cut in [
        first + 1,
        first + 11,
        first + 12,
        first + 60,
        file.len() - 1,
    ] {
        let mut it = batches(&file[..cut]);
        assert!(it.next().unwrap().is_ok());
        let e = it.next().unwrap().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Truncated, "{cut}");
        assert_eq!(e.offset(), Some(first));
        let n = cut - first;
        assert!(
            e.message()
                .starts_with(&format!("{n} invalid bytes at the end")),
            "{e}"
        );
        assert!(it.next().is_none());
        assert_eq!(it.invalid_bytes(), n);
        assert_eq!(it.position(), first);
    }
    // An empty image has no batches and no error.
    assert!(batches(&[]).next().is_none());
}

#[test]
fn impossible_lengths_and_magics_end_the_walk() {
    let recs = sample_records(1, 3);
    let good = builder_for(&recs, Compression::None).encode().unwrap();
    let mut small = good.clone();
    small[8..12].copy_from_slice(&13i32.to_be_bytes());
    let e = batches(&small).next().unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt);
    let mut neg = good.clone();
    neg[8..12].copy_from_slice(&(-5i32).to_be_bytes());
    assert_eq!(
        batches(&neg).next().unwrap().unwrap_err().kind(),
        ErrorKind::Corrupt
    );
    // Magic 2 but shorter than the 61-byte header.
    let mut short = good[..40].to_vec();
    short[8..12].copy_from_slice(&28i32.to_be_bytes());
    assert_eq!(
        batches(&short).next().unwrap().unwrap_err().kind(),
        ErrorKind::Corrupt
    );
    let mut magic3 = good.clone();
    magic3[16] = 3;
    let mut it = batches(&magic3);
    assert_eq!(it.next().unwrap().unwrap_err().kind(), ErrorKind::Corrupt);
    assert!(it.next().is_none());
}

/// A magic-1 message (message format v1) as a legacy log entry.
fn legacy_v1(offset: i64, value: &[u8]) -> Vec<u8> {
    let mut msg = vec![1u8, 0]; // magic, attributes
    msg.extend_from_slice(&123i64.to_be_bytes()); // timestamp
    msg.extend_from_slice(&(-1i32).to_be_bytes()); // null key
    msg.extend_from_slice(&(value.len() as i32).to_be_bytes());
    msg.extend_from_slice(value);
    let crc = crate::batch::crc::crc32(&msg);
    let mut out = offset.to_be_bytes().to_vec();
    out.extend_from_slice(&((msg.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(&crc.to_be_bytes());
    out.extend_from_slice(&msg);
    out
}

#[test]
fn legacy_entries_are_reported_and_skipped() {
    let mut file = legacy_v1(0, b"old");
    let legacy_len = file.len();
    let mut v0 = legacy_v1(1, b"older");
    v0[16] = 0;
    file.extend_from_slice(&v0);
    let recs = sample_records(2, 4);
    builder_for(&recs, Compression::None)
        .encode_into(&mut file)
        .unwrap();
    let items: Vec<_> = batches(&file).collect();
    assert_eq!(items.len(), 3);
    let e = items[0].as_ref().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedVersion);
    assert_eq!(e.offset(), Some(16));
    assert!(e.message().contains("magic 1"), "{e}");
    let e = items[1].as_ref().unwrap_err();
    assert_eq!(e.offset(), Some(legacy_len + 16));
    assert!(e.message().contains("magic 0"), "{e}");
    assert_eq!(items[2].as_ref().unwrap().records_count, 2);
}

#[test]
fn crc_modes() {
    let recs = sample_records(3, 5);
    let mut bytes = builder_for(&recs, Compression::None).encode().unwrap();
    // The partition leader epoch is outside the CRC.
    bytes[12..16].copy_from_slice(&77i32.to_be_bytes());
    assert!(batches(&bytes).next().unwrap().is_ok());
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    let e = batches(&bytes).next().unwrap().unwrap_err();
    assert_eq!(
        (e.kind(), e.offset(), e.field_name()),
        (ErrorKind::Corrupt, Some(17), Some("crc"))
    );
    assert!(
        e.message().starts_with("Record is corrupt (stored crc = "),
        "{e}"
    );
    let report = ReadOptions {
        crc: CrcCheck::Report,
        ..ReadOptions::default()
    };
    let b = Batches::new(&bytes, report).next().unwrap().unwrap();
    assert_eq!(b.crc_valid(), Some(false));
    assert_ne!(b.computed_crc(), Some(b.crc));
    assert_eq!(b.ensure_valid().unwrap_err().kind(), ErrorKind::Corrupt);
    let skip = ReadOptions {
        crc: CrcCheck::Skip,
        ..ReadOptions::default()
    };
    let b = Batches::new(&bytes, skip).next().unwrap().unwrap();
    assert_eq!(b.crc_valid(), None);
    assert!(b.ensure_valid().is_err());
}

#[test]
fn record_level_errors() {
    let v = value42();
    let good = idempotent(
        0,
        vec![
            NewRecord::new(0, 0, None, Some(&v)),
            NewRecord::new(1, 0, None, Some(&v)),
        ],
    )
    .encode()
    .unwrap();
    let opts = ReadOptions {
        crc: CrcCheck::Skip,
        ..ReadOptions::default()
    };
    let errs = |bytes: &[u8]| -> Vec<ErrorKind> {
        let b = Batch::parse(bytes, 0, opts).unwrap();
        match b.records() {
            Err(e) => vec![e.kind()],
            Ok(r) => r.filter_map(|r| r.err().map(|e| e.kind())).collect(),
        }
    };
    // Declared count larger than the records: premature EOF.
    let mut more = good.clone();
    more[57..61].copy_from_slice(&3i32.to_be_bytes());
    assert_eq!(errs(&more), vec![ErrorKind::Truncated]);
    // Smaller: records remain.
    let mut fewer = good.clone();
    fewer[57..61].copy_from_slice(&1i32.to_be_bytes());
    assert_eq!(errs(&fewer), vec![ErrorKind::TrailingBytes]);
    let mut negative = good.clone();
    negative[57..61].copy_from_slice(&(-1i32).to_be_bytes());
    assert_eq!(errs(&negative), vec![ErrorKind::InvalidLength]);
    // A record length past the end, and a record length that disagrees with its fields.
    let mut long = good.clone();
    long[61 + 49] = 0x7e; // the second record claims 63 bytes, 48 are left
    assert_eq!(errs(&long), vec![ErrorKind::Truncated]);
    long[61] = 0x7e; // the first claims 63: its fields end early
    assert_eq!(errs(&long), vec![ErrorKind::InvalidLength]);
    let mut short = good.clone();
    short[61] = 0x5e;
    assert_eq!(errs(&short)[0], ErrorKind::InvalidLength);
    // Negative header count.
    let mut hdr = good.clone();
    let first_end = 61 + 49;
    hdr[first_end - 1] = 0x01;
    assert_eq!(errs(&hdr)[0], ErrorKind::InvalidLength);
    // Unknown codec id.
    let mut codec = good.clone();
    codec[22] = 6;
    assert_eq!(errs(&codec), vec![ErrorKind::UnsupportedVersion]);
    // An empty batch does not look at its records, like Kafka.
    let mut empty = good.clone();
    empty[57..61].copy_from_slice(&0i32.to_be_bytes());
    assert!(errs(&empty).is_empty());
    let b = Batch::parse(&empty, 0, opts).unwrap();
    assert!(!b.records().unwrap().is_canonical());
}

#[test]
fn non_canonical_spellings_are_read_and_noted() {
    // A record with key length -2 (null, as Kafka reads any negative length) and an overlong
    // offset delta varint (0x80 0x00 = 0).
    let body = [0x00u8, 0x00, 0x80, 0x00, 0x03, 0x02, b'v', 0x00];
    let mut payload = vec![(body.len() as u8) << 1];
    payload.extend_from_slice(&body);
    let mut b = BatchBuilder::new(0).encode().unwrap();
    b[57..61].copy_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(&payload);
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    let batch = Batch::parse(
        &b,
        0,
        ReadOptions {
            crc: CrcCheck::Skip,
            ..ReadOptions::default()
        },
    )
    .unwrap();
    let mut recs = batch.records().unwrap();
    let r = recs.next().unwrap().unwrap();
    assert_eq!((r.key, r.value, r.offset_delta), (None, Some(&b"v"[..]), 0));
    assert!(recs.next().is_none());
    assert!(!recs.is_canonical());
}

#[test]
fn control_batches() {
    let marker = ControlRecord::new(
        ControlValue::EndTxn {
            version: 0,
            coordinator_epoch: 3,
        },
        true,
    );
    let leader = ControlRecord::new(
        ControlValue::LeaderChange(LeaderChange {
            version: 0,
            leader_id: 1,
            voters: vec![1],
            granting_voters: vec![1],
        }),
        false,
    );
    let mut b = idempotent(
        10,
        vec![
            NewRecord::control(0, 50, &marker).unwrap(),
            NewRecord::control(1, 50, &leader).unwrap(),
        ],
    );
    b.control = true;
    b.transactional = true;
    let bytes = b.encode().unwrap();
    let batch = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
    assert!(batch.is_control());
    let parsed: Vec<ControlRecord<'_>> = all_records(&batch)
        .iter()
        .map(|r| ControlRecord::parse(r.key, r.value).unwrap())
        .collect();
    assert_eq!(parsed, vec![marker, leader]);
    assert_eq!(parsed[0].record_type.name(), "COMMIT");
}

#[test]
fn decompression_limits_stop_bombs() {
    // 1 MiB of zeros in every codec, read with a 100 KB limit.
    let zeros = vec![0u8; 1 << 20];
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut b = idempotent(0, vec![NewRecord::new(0, 0, None, Some(&zeros))]);
        b.compression = codec;
        let bytes = b.encode().unwrap();
        let opts = ReadOptions {
            max_decompressed_size: 100_000,
            ..ReadOptions::default()
        };
        let batch = Batch::parse(&bytes, 0, opts).unwrap();
        let e = batch.records().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{codec}: {e}");
        assert!(e.offset().unwrap() >= RECORD_BATCH_OVERHEAD);
        // The error is kept: asking again does not decompress again, and says the same.
        assert_eq!(batch.records().unwrap_err(), e);
        let ok = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
        assert_eq!(ok.records().unwrap().count(), 1, "{codec}");
    }
}

/// A batch around a hand-made records section.
fn raw_batch(codec: Compression, count: i32, payload: &[u8]) -> Vec<u8> {
    let mut b = idempotent(0, vec![]);
    b.compression = codec;
    let mut bytes = b.encode().unwrap();
    bytes.truncate(RECORD_BATCH_OVERHEAD);
    bytes[57..61].copy_from_slice(&count.to_be_bytes());
    bytes.extend_from_slice(payload);
    let len = (bytes.len() - 12) as i32;
    bytes[8..12].copy_from_slice(&len.to_be_bytes());
    let crc = crc::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    bytes
}

#[test]
fn declared_sizes_are_refused_before_allocating() {
    // A snappy chunk whose preamble claims 1 GiB; a zstd frame whose header claims 1 GiB.
    let mut snappy = compression::compress(Compression::Snappy, b"").unwrap();
    let block = [0x80u8, 0x80, 0x80, 0x80, 0x04, 0x00];
    snappy.extend_from_slice(&(block.len() as u32).to_be_bytes());
    snappy.extend_from_slice(&block);
    let zstd = [
        0x28u8, 0xb5, 0x2f, 0xfd, 0xa0, 0x00, 0x00, 0x00, 0x40, 0x01, 0x00, 0x00,
    ];
    for (codec, payload) in [
        (Compression::Snappy, &snappy[..]),
        (Compression::Zstd, &zstd[..]),
    ] {
        let bytes = raw_batch(codec, 1, payload);
        let batch = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
        assert_eq!(
            batch.records().unwrap_err().kind(),
            ErrorKind::LimitExceeded,
            "{codec}"
        );
    }
}

#[test]
fn corrupt_compressed_data_is_an_error() {
    let recs = sample_records(20, 6);
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let bytes = builder_for(&recs, codec).encode().unwrap();
        let batch = Batch::parse(&bytes, 0, ReadOptions::default()).unwrap();
        let payload = batch.records_payload();
        for cut in [0, 1, payload.len() / 2, payload.len() - 1] {
            let bad = raw_batch(codec, 20, &payload[..cut]);
            let b = Batch::parse(&bad, 0, ReadOptions::default()).unwrap();
            let failed = match b.records() {
                Err(e) => {
                    assert!(
                        matches!(e.kind(), ErrorKind::Corrupt | ErrorKind::Truncated),
                        "{codec} {cut}: {e}"
                    );
                    true
                }
                Ok(r) => r.into_iter().any(|r| r.is_err()),
            };
            assert!(failed, "{codec} cut at {cut} read fine");
        }
    }
}
