//! The index against the core's inspection and against itself fed in every way.

use super::*;
use crate::batch::{BatchBuilder, NewRecord};
use crate::batch::{Batches, Compression};
use crate::feature::{LEVEL_RECORD_KEY, MetadataLevel, level_record_value};
use crate::inspect::{inspect, summary_compaction_config};
use crate::json::Int64Style;

const BROKER_P0: &[u8] = include_bytes!(
    "../../../tests/fixtures/broker/remote_log_metadata/__remote_log_metadata-0/00000000000000000000.log"
);
const KEYED: &[u8] = include_bytes!(
    "../../../tests/fixtures/crafted/kip1266-keyed/__remote_log_metadata-0/00000000000000000000.log"
);
const CORRUPT: &[u8] = include_bytes!(
    "../../../tests/fixtures/crafted/corrupt-crc/__remote_log_metadata-0/00000000000000000000.log"
);
const TORN: &[u8] = include_bytes!(
    "../../../tests/fixtures/crafted/truncated-tail/__remote_log_metadata-0/00000000000000000000.log"
);
const CODECS: [(&str, &[u8]); 4] = [
    (
        "gzip",
        include_bytes!(
            "../../../tests/fixtures/crafted/gzip/__remote_log_metadata-0/00000000000000000000.log"
        ),
    ),
    (
        "snappy",
        include_bytes!(
            "../../../tests/fixtures/crafted/snappy/__remote_log_metadata-0/00000000000000000000.log"
        ),
    ),
    (
        "lz4",
        include_bytes!(
            "../../../tests/fixtures/crafted/lz4/__remote_log_metadata-0/00000000000000000000.log"
        ),
    ),
    (
        "zstd",
        include_bytes!(
            "../../../tests/fixtures/crafted/zstd/__remote_log_metadata-0/00000000000000000000.log"
        ),
    ),
];

/// Everything the index holds, to compare two of them.
type Snapshot = (
    Columns,
    Vec<BatchInfo>,
    Vec<Fault>,
    Counts,
    Vec<TopicIdPartition>,
    Vec<Uuid>,
);

fn snapshot(i: &RecordIndex) -> Snapshot {
    (
        i.columns().clone(),
        i.batches().to_vec(),
        i.faults().to_vec(),
        i.counts().clone(),
        i.partitions().to_vec(),
        i.segments().to_vec(),
    )
}

fn chunked(file: &[u8], cuts: &[usize]) -> RecordIndex {
    let mut index = RecordIndex::new();
    index.begin_file();
    let mut from = 0;
    for &c in cuts.iter().chain([file.len()].iter()) {
        index.push(&file[from..c]);
        from = c;
    }
    index.end_file();
    index
}

/// A key and a value, owned.
type Owned = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The first record of a file that `pick` takes, owned.
fn first_record(file: &[u8], pick: impl Fn(&Owned) -> bool) -> Owned {
    Batches::new(file, READ)
        .flatten()
        .flat_map(|b| {
            let rs: Vec<Owned> = b
                .records()
                .into_iter()
                .flatten()
                .flatten()
                .map(|r| (r.key.map(<[u8]>::to_vec), r.value.map(<[u8]>::to_vec)))
                .collect();
            rs
        })
        .find(|r| pick(r))
        .expect("a record")
}

/// A small file with one of each: a null-key record, a level record, a tombstone, an invalid
/// level record, and a KIP-1266 keyed record in a gzip batch.
fn crafted() -> Vec<u8> {
    let (_, null_value) = first_record(BROKER_P0, |(k, v)| k.is_none() && v.is_some());
    let (key, value) = first_record(KEYED, |(k, v)| {
        v.is_some()
            && k.as_deref()
                .is_some_and(|k| RecordKey::parse_bytes(k).is_ok())
    });
    let (null_value, key, value) = (
        null_value.expect("a value"),
        key.expect("a key"),
        value.expect("a value"),
    );
    let mut first = BatchBuilder::new(0);
    first
        .push(NewRecord::new(0, 1_000, None, Some(null_value.as_slice())))
        .push(NewRecord::new(
            1,
            1_001,
            Some(LEVEL_RECORD_KEY),
            Some(level_record_value(MetadataLevel::V2)),
        ))
        .push(NewRecord::new(2, 1_002, Some(key.as_slice()), None).with_header(b"h", None))
        .push(NewRecord::new(
            3,
            1_003,
            Some(LEVEL_RECORD_KEY),
            Some(&b"9"[..]),
        ));
    let mut second = BatchBuilder::new(4);
    second.compression = Compression::Gzip;
    second.push(NewRecord::new(
        0,
        1_004,
        Some(key.as_slice()),
        Some(value.as_slice()),
    ));
    let mut out = first.encode().expect("encodes");
    out.extend(second.encode().expect("encodes"));
    out
}

/// The index and the core's inspection agree on what was read.
fn agrees_with_inspect(files: &[&[u8]]) {
    let index = index_files(files);
    let named: Vec<(&str, &[u8])> = files.iter().map(|f| ("x.log", *f)).collect();
    let s = inspect(&named).summary;
    let n = index.counts();
    assert_eq!(n.records, s.records, "records read");
    assert_eq!(n.null_key_records, s.null_key_records);
    assert_eq!(n.keyed_records, s.keyed_records);
    assert_eq!(n.tombstones, s.tombstones);
    assert_eq!(n.unread, s.unread_records, "records not read, by one rule");
    // where the read stops: the corrupt batch, then every later file whole
    let stops: Vec<(usize, usize)> = s
        .stops
        .iter()
        .filter(|t| t.unread > 0)
        .map(|t| (t.file, t.position))
        .collect();
    let expected: Vec<(usize, usize)> = n
        .corrupt
        .iter()
        .flat_map(|c| {
            std::iter::once((c.file as usize, c.position))
                .chain((c.file as usize + 1..files.len()).map(|f| (f, 0)))
        })
        .collect();
    assert_eq!(stops, expected, "where each file stops being read");
    assert_eq!(
        n.records + n.unread,
        index.rows() + n.unlisted,
        "every row is read or unread"
    );
    let listed: usize = files
        .iter()
        .flat_map(|f| Batches::new(f, READ).flatten())
        .map(|b| b.records().map_or(0, |rs| rs.map_while(|r| r.ok()).count()))
        .sum();
    assert_eq!(
        index.rows(),
        listed,
        "every record kafka-dump-log lists is a row"
    );
    let (p, kept) = crate::inspect::preview_index(
        &index,
        &FileWindow::whole(files),
        summary_compaction_config(),
        s.compacted_at_ms,
    );
    assert_eq!(p.records_after, s.kept_by_compaction);
    // `rlmeta simulate`'s preview of the files reads the same records
    assert_eq!(
        crate::inspect::preview_compaction_files(
            files,
            summary_compaction_config(),
            s.compacted_at_ms
        ),
        p
    );
    assert_eq!(p.lost, s.lost_by_compaction);
    assert_eq!(kept.len(), index.rows());
    assert_eq!(
        kept.iter().filter(|&&k| k == 1).count(),
        s.kept_by_compaction
    );
}

#[test]
fn chunks_split_anywhere_index_as_one() {
    for file in [crafted(), CORRUPT.to_vec(), TORN.to_vec()] {
        let whole = snapshot(&index_files(&[&file]));
        for cut in 0..=file.len() {
            assert_eq!(snapshot(&chunked(&file, &[cut])), whole, "cut at {cut}");
        }
        for size in 1..=40 {
            let cuts: Vec<usize> = (size..file.len()).step_by(size).collect();
            assert_eq!(snapshot(&chunked(&file, &cuts)), whole, "chunks of {size}");
        }
    }
}

#[test]
fn each_kind_and_flag_of_a_crafted_file() {
    let file = crafted();
    let index = index_files(&[&file]);
    let c = index.columns();
    assert_eq!(c.offsets, vec![0, 1, 2, 3, 4]);
    assert_eq!(
        c.kinds,
        vec![
            kind::SEGMENT,
            kind::LEVEL_RECORD,
            kind::TOMBSTONE,
            kind::LEVEL_RECORD,
            c.kinds[4]
        ]
    );
    assert_ne!(c.kinds[4], kind::UNDECODABLE);
    assert_eq!(c.flags[0], flag::NULL_KEY);
    assert_eq!(c.flags[1], 0);
    assert_eq!(
        c.flags[2],
        flag::TOMBSTONE | flag::KIP1266_KEY | flag::HEADERS
    );
    assert_eq!(c.flags[3], flag::ERROR);
    assert_eq!(c.flags[4], flag::KIP1266_KEY);
    assert_eq!(c.key_sizes[0], -1);
    assert_eq!(c.value_sizes[2], -1);
    assert_eq!(c.batch_of, vec![0, 0, 0, 0, 1]);
    assert_eq!(c.index_in_batch, vec![0, 1, 2, 3, 0]);
    assert!(c.partition_of[0] >= 0 && c.segment_of[0] >= 0);
    assert_eq!(index.batches()[1].codec, "gzip");
    assert_eq!(index.batches()[1].position, index.batches()[0].size);
    let n = index.counts();
    assert_eq!(
        (
            n.records,
            n.unread,
            n.null_key_records,
            n.keyed_records,
            n.tombstones,
            n.level_records
        ),
        (5, 0, 1, 3, 1, 2)
    );
    assert_eq!(n.last_null_key_timestamp_ms, Some(1_000));
    // The invalid level record is the one fault, on its row.
    assert_eq!(index.faults().len(), 1);
    assert_eq!(index.faults()[0].row, Some(3));
    agrees_with_inspect(&[&file]);
    // The stored bytes read back on demand.
    assert_eq!(
        index.key_texts(&[&file], &[0, 1, 9]),
        vec!["", "remote.log.metadata.version", ""]
    );
    assert_eq!(
        index.keys_containing(&[&file], "metadata.version"),
        vec![1, 3]
    );
    assert_eq!(
        index.with_record(&[&file], 4, |b, r| (b.base_offset, r.offset)),
        Some((4, 4))
    );
    assert_eq!(index.with_record(&[&file], 5, |_, r| r.offset), None);
}

#[test]
fn a_corrupt_batch_and_what_follows_it_are_listed_not_read() {
    let mut file = crafted();
    let second = index_files(&[&file]).batches()[1].position;
    // the second batch's producer id changes: its CRC no longer matches, nothing else moves
    file[second + 50] ^= 0xff;
    // a good batch after the corrupt one is still not read
    let mut after = BatchBuilder::new(5);
    after.push(NewRecord::new(0, 1_005, None, None));
    file.extend(after.encode().expect("encodes"));
    let index = index_files(&[&file]);
    let n = index.counts();
    assert_eq!((index.rows(), n.records, n.unread), (6, 4, 2));
    assert_eq!(
        n.corrupt,
        vec![CorruptAt {
            file: 0,
            batch: 1,
            position: second,
            base_offset: 4,
            row: 4
        }]
    );
    let c = index.columns();
    assert_eq!(
        c.flags[4] & (flag::BAD_CRC | flag::UNREAD),
        flag::BAD_CRC | flag::UNREAD
    );
    assert_eq!(c.flags[5] & (flag::BAD_CRC | flag::UNREAD), flag::UNREAD);
    assert!(index.is_read(3) && !index.is_read(4) && !index.is_read(5));
    assert!(index.is_batch_read(0) && !index.is_batch_read(1) && !index.is_batch_read(2));
    let crc = &index.faults()[1];
    assert_eq!(crc.error.kind(), ErrorKind::Corrupt);
    assert_eq!(
        (crc.error.offset(), crc.record_offset),
        (Some(second), Some(4))
    );
    agrees_with_inspect(&[&file]);
    // No later file of the partition is read either: no consumer gets past the corrupt batch.
    let three = index_files(&[&crafted(), &file, &crafted()]);
    let n = three.counts();
    assert_eq!((n.records, n.unread, n.corrupt.len()), (5 + 4, 2 + 5, 1));
    assert_eq!(n.corrupt[0].file, 1);
    agrees_with_inspect(&[&crafted(), &file, &crafted()]);
    agrees_with_inspect(&[&file, &crafted(), &file]);
    // The null-key count the migration check uses is the read one.
    assert_eq!(n.null_keys().null_key_records, 2);
    agrees_with_inspect(&[CORRUPT]);
    assert!(index_files(&[CORRUPT]).counts().unread > 0);
}

#[test]
fn a_torn_tail_is_a_fault_at_its_byte() {
    let file = crafted();
    let second = index_files(&[&file]).batches()[1].position;
    let torn = &file[..file.len() - 7];
    let index = index_files(&[torn]);
    assert_eq!(index.rows(), 4);
    assert_eq!(index.counts().unread, 0);
    let f = index.faults().last().expect("a fault");
    assert_eq!(f.error.kind(), ErrorKind::Truncated);
    assert_eq!(f.error.offset(), Some(second));
    assert!(
        f.error
            .to_string()
            .contains(&format!("{} invalid bytes at the end", torn.len() - second))
    );
    agrees_with_inspect(&[torn]);
    agrees_with_inspect(&[TORN]);
    // The inspector says where it stopped, with the same error, and that nothing was left unread.
    let stops = inspect(&[("x.log", torn)]).summary.stops;
    assert_eq!(stops.len(), 1);
    assert_eq!(
        (stops[0].file, stops[0].position, stops[0].unread),
        (0, second, 0)
    );
    assert_eq!(stops[0].why.kind(), ErrorKind::Truncated);
    // A length that cannot be an entry ends the walk there too, however the bytes come.
    let mut bad = file[..second].to_vec();
    bad.extend([0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, 7, 7, 7]);
    let whole = index_files(&[&bad]);
    assert_eq!(
        whole.faults().last().map(|f| f.error.kind()),
        Some(ErrorKind::Corrupt)
    );
    assert_eq!(
        snapshot(&chunked(&bad, &[second + 3, second + 13])),
        snapshot(&whole)
    );
}

#[test]
fn every_codec_indexes_as_its_batches_say() {
    for (name, file) in CODECS {
        let index = index_files(&[file]);
        assert!(index.rows() > 0, "{name}");
        assert!(index.batches().iter().any(|b| b.codec == name), "{name}");
        agrees_with_inspect(&[file]);
    }
}

#[test]
fn every_fixture_agrees_with_inspect() {
    let mut checked = 0;
    for (_, data) in crate::testing::fixtures::metadata_partitions() {
        let files: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
        agrees_with_inspect(&files);
        checked += 1;
    }
    assert!(checked >= 8, "{checked} fixtures");
}

#[test]
fn readiness_is_the_cores_over_read_null_keys() {
    let file = crafted();
    let n = index_files(&[&file]).counts().clone();
    let r = n.readiness(86_400_000, 14 * 86_400_000);
    assert_eq!(r, n.null_keys().readiness(86_400_000, 14 * 86_400_000));
    assert!(matches!(
        r,
        Readiness::Wait {
            null_key_records: 1,
            ..
        }
    ));
}

#[test]
fn value_views_say_what_each_kind_of_record_holds() {
    let file = crafted();
    let index = index_files(&[&file]);
    let view = |row| {
        index
            .with_record(&[&file], row, |_, r| {
                value_view(r.key, r.value, Int64Style::String)
            })
            .expect("a row")
    };
    let segment = view(0);
    assert!(segment.kafka_text.is_some() && segment.json.is_some());
    assert_eq!((segment.error, segment.level), (None, None));
    assert_eq!(
        view(1),
        ValueView {
            kafka_text: Some("remote.log.metadata.version level 2".into()),
            level: Some(2),
            ..ValueView::default()
        }
    );
    assert_eq!(view(2), ValueView::default());
    let bad = view(3);
    assert!(bad.error.is_some_and(|e| e.contains("not a known level")));
    let undecodable = value_view(None, Some(&[0, 9, 9]), Int64Style::String);
    assert!(undecodable.error.is_some() && undecodable.kafka_error.is_some());
    assert_eq!(undecodable.kafka_text, None);
}

#[test]
fn records_of_a_corrupt_batch_that_does_not_decompress_are_unread_though_unlisted() {
    let (_, gzip) = CODECS[0];
    let mut file = gzip.to_vec();
    let first = index_files(&[&file]).batches()[0].clone();
    // the middle of the first batch's compressed records: its CRC fails and it cannot inflate
    let middle = first.position + 61 + (first.size - 61) / 2;
    for b in &mut file[middle..middle + 8] {
        *b ^= 0x5a;
    }
    let index = index_files(&[&file]);
    let n = index.counts();
    assert_eq!(n.records, 0);
    assert!(n.unlisted > 0, "the batch's records are not rows");
    let counted: usize = index.batches().iter().map(|b| b.count as usize).sum();
    assert_eq!(n.unread, counted, "every record a header counts is unread");
    assert_eq!(n.records + n.unread, index.rows() + n.unlisted);
    agrees_with_inspect(&[&file]);
}

/// A host that streams its files: it takes the columns as they grow and lets the index forget
/// them, then reads back only the byte ranges a view needs. Every view answers as from the whole
/// images, on every fixture (compressed, corrupt, torn, keyed).
#[test]
fn a_streaming_host_forgets_the_columns_and_reads_views_from_windows() {
    let mut fixtures: Vec<&[u8]> = vec![BROKER_P0, KEYED, CORRUPT, TORN];
    fixtures.extend(CODECS.iter().map(|(_, f)| *f));
    for file in fixtures {
        let whole = index_files(&[file]);
        let mut streamed = RecordIndex::new();
        streamed.begin_file();
        let mut taken = Columns::default();
        for chunk in file.chunks(97) {
            streamed.push(chunk);
            let c = streamed.columns().clone();
            assert_eq!(streamed.columns_start(), taken.offsets.len());
            taken.offsets.extend(c.offsets);
            taken.flags.extend(c.flags);
            taken.index_in_batch.extend(c.index_in_batch);
            taken.batch_of.extend(c.batch_of);
            streamed.forget_columns();
            assert!(streamed.columns().offsets.is_empty());
        }
        streamed.end_file();
        taken
            .offsets
            .extend(streamed.columns().offsets.iter().copied());
        taken.flags.extend(streamed.columns().flags.iter().copied());
        streamed.forget_columns();
        let rows = whole.rows();
        assert_eq!(streamed.rows(), rows);
        assert_eq!(taken.offsets, whole.columns().offsets);
        assert_eq!(taken.flags, whole.columns().flags);
        assert_eq!(streamed.batches(), whole.batches());
        assert_eq!(streamed.counts(), whole.counts());
        let all: Vec<u32> = (0..rows as u32 + 2).collect();
        // The batch table places every row as the columns did.
        for &row in &all {
            assert_eq!(
                streamed.is_read(row),
                whole
                    .columns()
                    .flags
                    .get(row as usize)
                    .is_some_and(|f| f & flag::UNREAD == 0)
            );
            assert_eq!(
                streamed.locate(row).map(|(b, _, nth)| (b, nth as u32)),
                whole
                    .columns()
                    .batch_of
                    .get(row as usize)
                    .zip(whole.columns().index_in_batch.get(row as usize))
                    .map(|(&b, &n)| (b, n))
            );
        }
        // One window per range, ranges at most 300 bytes apart: the views read from them
        // answer as from the whole image; a window missing a batch skips it.
        let windows_of = |ranges: &[(u32, usize, usize)]| -> Vec<FileWindow<'_>> {
            ranges
                .iter()
                .map(|&(f, a, b)| FileWindow {
                    file: f,
                    start: a,
                    bytes: &file[a..b],
                })
                .collect()
        };
        let windows = windows_of(&streamed.byte_ranges(0..streamed.batches().len() as u32, 300));
        for w in windows.windows(2) {
            assert!(
                w[0].start + w[0].bytes.len() <= w[1].start,
                "ranges ascend, apart"
            );
        }
        assert_eq!(
            streamed.key_texts_in(&windows, &all),
            whole.key_texts(&[file], &all)
        );
        let mut found = Vec::new();
        for w in &windows {
            found.extend(streamed.keys_containing_in(std::slice::from_ref(w), "-"));
        }
        assert_eq!(found, whole.keys_containing(&[file], "-"));
        for &row in &all {
            let read = |b: &BatchInfo, r: &BatchRecord<'_>| {
                (b.position, r.offset, r.value.map(<[u8]>::to_vec))
            };
            let want = whole.with_record(&[file], row, read);
            let batches = streamed.batches_of(&[row]);
            let one = windows_of(&streamed.byte_ranges(batches, 0));
            assert_eq!(streamed.with_record_in(&one, row, read), want);
            if want.is_some() {
                assert_eq!(streamed.with_record_in(&[], row, read), None);
            }
        }
        let id = |i: &u32| streamed.segments()[*i as usize].to_string();
        if let Some(first) = streamed.segments().first().map(Uuid::to_string) {
            let part = &first[3..9];
            let found = streamed.segments_containing(part);
            assert!(found.contains(&0) && found.iter().all(|i| id(i).contains(part)));
            let missed = streamed.segments().len() - found.len();
            assert_eq!(
                missed,
                streamed
                    .segments()
                    .iter()
                    .filter(|s| !s.to_string().contains(part))
                    .count()
            );
        }
        assert_eq!(
            streamed.read_batches_in(&windows).len(),
            whole.read_batches(&[file]).len()
        );
    }
}
