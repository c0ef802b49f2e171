//! One metadata partition read from a live topic: the raw record batches a fetch returns (the
//! bytes of a log segment, the last batch possibly cut), decoded here so that the host never
//! touches a record; classified for the migration tool's `--check`.
//!
//! Owns: [`FetchWindow`], which records a read yields: walking the batches of each fetched chunk
//! (whole batches only: a cut last batch is left for the host to fetch again from
//! [`FetchWindow::next_offset`]), only the records from the partition's start up to the end
//! offset the host captured when it began (records at or past it are skipped one by one, as a
//! consumer's `offset >= end` check does); the operator tools' models read through it too
//! ([`crate::inspect::Inspector::scan_fetched`]). [`PartitionScan`]: replaying them
//! into the partition's own [`Store`] and counting what the migration reports: messages, null
//! keys (their offset and timestamp ranges), tombstones, undecodable values, the level record,
//! and the first [`PartitionScan::new`]`(.., named, ..)` null-key and undecodable records by
//! name, in offset order. With `keep`, the records themselves for the backfill verification
//! ([`crate::keyed::verify_keyed`]), so memory is bounded by one metadata partition.
//!
//! Never: I/O, the clock, which broker to fetch from or when to stop waiting; the host does that.
//! A batch that does not read (bad CRC, a magic other than 2, records that do not decode) is a
//! typed error, as it is for Kafka's consumer: the partition's counts would not be exact past it.

use crate::batch::{Batch, ReadOptions, Record};
use crate::cache::{Applied, Skip, Store};
use crate::compaction::LogRecord;
use crate::error::{Error, ErrorKind, Result};
use crate::feature::MetadataLevel;
use crate::keyed::{KeyedVerdict, verify_keyed_replayed};

/// A record the migration names one by one, in offset order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named {
    /// A null-key record.
    NullKey { offset: i64, timestamp: i64 },
    /// A value that does not decode, and why.
    Undecodable { offset: i64, why: String },
}

/// The counts of one metadata partition's records read so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartitionCounts {
    pub messages: u64,
    pub null_keys: u64,
    /// First and last null-key offsets.
    pub null_offsets: Option<(i64, i64)>,
    /// Lowest and highest null-key timestamps.
    pub null_timestamps: Option<(i64, i64)>,
    pub tombstones: u64,
    pub undecodable: u64,
    /// The level of the last valid level record read.
    pub level: Option<MetadataLevel>,
    /// Why the last level record read carries no level, unless a valid one came after it.
    pub invalid_level: Option<String>,
}

/// The records of one metadata partition a host reads with Fetch requests: those from the
/// partition's start up to (not including) the end offset captured when reading began, taken
/// from the whole batches of each fetch's raw bytes (the bytes of a log segment, the last batch
/// possibly cut by the fetch's size). The one rule of which fetched records a live topic's read
/// yields: [`PartitionScan`] (the migration) and the operator tools' models
/// ([`crate::inspect::Inspector::scan_fetched`], [`FetchedLog`]) all read through it, so they
/// see the records Kafka's consumer returns up to the end offset.
#[derive(Clone, Debug)]
pub struct FetchWindow {
    end: i64,
    next: i64,
    records: u64,
    bytes: u64,
}

impl FetchWindow {
    /// The records from `start` up to (not including) `end`.
    pub fn new(start: i64, end: i64) -> FetchWindow {
        FetchWindow {
            end,
            next: start,
            records: 0,
            bytes: 0,
        }
    }

    /// The offset to fetch from next.
    pub fn next_offset(&self) -> i64 {
        self.next
    }

    /// Whether every record before the end offset has been read.
    pub fn done(&self) -> bool {
        self.next >= self.end
    }

    /// Records read so far (those handed to `each` of [`FetchWindow::push`]).
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The key and value bytes of the records read so far (what a consumer's records hold).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The next fetched bytes: every whole batch in them is read; a cut last batch is not (fetch
    /// again from [`FetchWindow::next_offset`]). `each` gets every record of the window not read
    /// yet, in offset order: records before the next offset (a batch fetched again) and at or
    /// past the end are skipped; control batches hold no record a consumer returns. Returns how
    /// many records (whatever their offset) the whole batches held. A batch that does not read
    /// (bad CRC, a magic other than 2, records that do not decode) is a typed error, as it is for
    /// Kafka's consumer; so are bytes holding no whole batch at all.
    pub fn push(&mut self, bytes: &[u8], each: impl FnMut(&Record<'_>)) -> Result<u64> {
        self.push_whole(bytes, each).map(|(seen, _)| seen)
    }

    /// [`FetchWindow::push`], also returning how many leading bytes its whole batches took (the
    /// rest, a cut batch, is fetched again): what a host keeps to read the same records again.
    pub fn push_whole(
        &mut self,
        bytes: &[u8],
        mut each: impl FnMut(&Record<'_>),
    ) -> Result<(u64, usize)> {
        let mut pos = 0;
        let mut seen = 0u64;
        while pos < bytes.len() {
            let batch = match Batch::parse(&bytes[pos..], pos, ReadOptions::default()) {
                Ok(b) => b,
                Err(e) if e.kind() == ErrorKind::Truncated => break, // the cut last batch
                Err(e) => return Err(e),
            };
            pos += batch.size_in_bytes();
            let last = batch.base_offset + i64::from(batch.last_offset_delta);
            if last < self.next {
                continue;
            }
            seen += u64::try_from(batch.records_count).unwrap_or(0);
            if !batch.attributes.is_control() {
                for r in batch.records()? {
                    let r = r?;
                    if r.offset >= self.next && r.offset < self.end {
                        self.records += 1;
                        self.bytes +=
                            (r.key.map_or(0, <[u8]>::len) + r.value.map_or(0, <[u8]>::len)) as u64;
                        each(&r);
                    }
                }
            }
            self.next = self.next.max(last + 1);
        }
        if pos == 0 && !bytes.is_empty() {
            return Err(Error::new(
                ErrorKind::Truncated,
                format!(
                    "the fetch at offset {} returned {} byte(s), not one whole record batch: \
                     fetch more bytes a partition",
                    self.next,
                    bytes.len()
                ),
            ));
        }
        Ok((seen, pos))
    }
}

/// A metadata partition being read from its start to `end`, fed the raw bytes of each fetch.
#[derive(Debug)]
pub struct PartitionScan {
    window: FetchWindow,
    store: Store,
    counts: PartitionCounts,
    named_limit: usize,
    named_nulls: usize,
    named_bad: usize,
    named: Vec<Named>,
    kept: Option<Vec<LogRecord>>,
}

impl PartitionScan {
    /// A partition whose records from `start` up to (not including) `end` are read; up to
    /// `named` null-key and `named` undecodable records are named; `keep` keeps every record for
    /// [`PartitionScan::verify`].
    pub fn new(start: i64, end: i64, named: usize, keep: bool) -> PartitionScan {
        PartitionScan {
            window: FetchWindow::new(start, end),
            store: Store::new(),
            counts: PartitionCounts::default(),
            named_limit: named,
            named_nulls: 0,
            named_bad: 0,
            named: Vec::new(),
            kept: keep.then(Vec::new),
        }
    }

    /// The offset to fetch from next.
    pub fn next_offset(&self) -> i64 {
        self.window.next_offset()
    }

    /// Whether every record before the end offset has been read.
    pub fn done(&self) -> bool {
        self.window.done()
    }

    /// The counts so far.
    pub fn counts(&self) -> &PartitionCounts {
        &self.counts
    }

    /// The named records so far, in offset order.
    pub fn named(&self) -> &[Named] {
        &self.named
    }

    /// The next fetched bytes: every whole batch in them is read; a cut last batch is not (fetch
    /// again from [`PartitionScan::next_offset`]). Returns how many records (whatever their
    /// offset) the whole batches held. Records before the next offset (a batch fetched again)
    /// and at or past the end are skipped; control batches hold no record a consumer returns.
    pub fn push(&mut self, bytes: &[u8]) -> Result<u64> {
        let mut window = self.window.clone();
        let seen = window.push(bytes, |r| {
            self.record(r.offset, r.timestamp, r.key, r.value)
        });
        self.window = window;
        seen
    }

    /// One record, as the migration's `--check` classifies it.
    fn record(&mut self, offset: i64, timestamp: i64, key: Option<&[u8]>, value: Option<&[u8]>) {
        let c = &mut self.counts;
        c.messages += 1;
        if let Some(kept) = &mut self.kept {
            kept.push(LogRecord {
                offset,
                timestamp_ms: timestamp,
                key: key.map(<[u8]>::to_vec),
                value: value.map(<[u8]>::to_vec),
            });
        }
        let applied = self.store.apply(offset, key, value);
        if key.is_none() {
            c.null_keys += 1;
            let first = c.null_offsets.map_or(offset, |(f, _)| f);
            c.null_offsets = Some((first, offset));
            c.null_timestamps = Some(
                c.null_timestamps
                    .map_or((timestamp, timestamp), |(lo, hi)| {
                        (lo.min(timestamp), hi.max(timestamp))
                    }),
            );
            if self.named_nulls < self.named_limit {
                self.named_nulls += 1;
                self.named.push(Named::NullKey { offset, timestamp });
            }
        }
        let skip = match &applied {
            Applied::Skipped(s) | Applied::AppliedWithBadKey(s) => Some(s),
            Applied::Applied | Applied::Orphaned => None,
        };
        match skip {
            Some(Skip::Tombstone { .. }) => c.tombstones += 1,
            Some(Skip::Undecodable(e)) => {
                c.undecodable += 1;
                if self.named_bad < self.named_limit {
                    self.named_bad += 1;
                    self.named.push(Named::Undecodable {
                        offset,
                        why: e.to_string(),
                    });
                }
            }
            Some(Skip::LevelRecord(Ok(l))) => {
                c.level = Some(*l);
                c.invalid_level = None;
            }
            Some(Skip::LevelRecord(Err(e))) => c.invalid_level = Some(e.to_string()),
            _ => {}
        }
    }

    /// The backfill verification of the records read ([`verify_keyed`]); None unless kept.
    pub fn verify(&self) -> Option<KeyedVerdict> {
        // the store holds exactly the kept records, applied in order: the verification's replay
        // of the topic as it is
        self.kept
            .as_deref()
            .map(|kept| verify_keyed_replayed(kept, &self.store))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::Compression;
    use crate::batch::{BatchBuilder, NewRecord};
    use crate::feature::{LEVEL_RECORD_KEY, level_record_value};
    use crate::model::{TopicIdPartition, Uuid};

    /// A record's key and value.
    type Kv<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);
    /// A record as a consumer hands it over: offset, timestamp, key, value.
    type Row<'a> = (i64, i64, Option<&'a [u8]>, Option<&'a [u8]>);

    fn batch(base: i64, records: &[Kv<'_>], codec: Option<Compression>) -> Vec<u8> {
        let mut b = BatchBuilder::new(base);
        for (i, (k, v)) in records.iter().enumerate() {
            b.push(NewRecord::new(i as i32, 1000 + base + i as i64, *k, *v));
        }
        if let Some(c) = codec {
            b.compression = c;
        }
        b.encode().unwrap()
    }

    #[test]
    fn counts_a_partition_fed_in_cut_fetches_and_stops_at_the_end() {
        let tp = TopicIdPartition {
            topic_id: Uuid::new(7, 7),
            topic: "orders".into(),
            partition: 0,
        };
        let nullv = crate::testing::stock::started(&tp, Uuid::new(1, 1), 0, 4).unwrap();
        let (lk, lv) = (LEVEL_RECORD_KEY, level_record_value(MetadataLevel::V1));
        let mut bytes = batch(0, &[(None, Some(&nullv)), (Some(b"k2"), None)], None);
        bytes.extend(batch(
            2,
            &[
                (Some(b"k"), None),
                (None, Some(b"\x00\x01bad")),
                (Some(lk), Some(lv)),
            ],
            Some(Compression::Gzip),
        ));
        bytes.extend(batch(
            5,
            &[(None, Some(&nullv)), (None, Some(&nullv))],
            None,
        ));
        // end 6: the record at offset 6 is past the end captured at the start
        let mut scan = PartitionScan::new(0, 6, 1, true);
        let cut = bytes.len() - 10;
        assert_eq!(scan.push(&bytes[..cut]).unwrap(), 5);
        assert_eq!(scan.next_offset(), 5);
        assert!(!scan.done());
        // the host fetches again from offset 5: the first batch comes again from its start
        let again =
            bytes.len() - batch(5, &[(None, Some(&nullv)), (None, Some(&nullv))], None).len();
        assert_eq!(scan.push(&bytes[again..]).unwrap(), 2);
        assert!(scan.done());
        let c = scan.counts();
        assert_eq!(c.messages, 6);
        assert_eq!(c.null_keys, 3);
        assert_eq!(c.null_offsets, Some((0, 5)));
        assert_eq!(c.null_timestamps, Some((1000, 1005)));
        assert_eq!(c.tombstones, 2);
        assert_eq!(c.undecodable, 1);
        assert_eq!(c.level, Some(MetadataLevel::V1));
        assert_eq!(c.invalid_level, None);
        assert_eq!(scan.named().len(), 2); // one null key, one undecodable: the limit of each
        assert_eq!(
            scan.named()[0],
            Named::NullKey {
                offset: 0,
                timestamp: 1000
            }
        );
        assert!(matches!(
            scan.named()[1],
            Named::Undecodable { offset: 3, .. }
        ));
        let v = scan.verify().unwrap();
        assert_eq!(v.records, 6);
        assert_eq!(v.null_key_records, 3);
        // the scan's own replay stands for the verification's replay of the topic as it is
        assert_eq!(v, crate::keyed::verify_keyed(scan.kept.as_deref().unwrap()));
    }

    #[test]
    fn the_tools_models_read_through_a_window_as_a_consumer_reads() {
        use crate::inspect::{
            FetchedLog, Inspector, PreviewRecord, ScanOptions, preview_compaction,
        };
        let tp = TopicIdPartition {
            topic_id: Uuid::new(7, 7),
            topic: "orders".into(),
            partition: 0,
        };
        let nullv = crate::testing::stock::started(&tp, Uuid::new(1, 1), 0, 4).unwrap();
        let mut bytes = batch(0, &[(None, Some(&nullv)), (Some(b"k2"), None)], None);
        bytes.extend(batch(
            2,
            &[
                (Some(b"k"), None),
                (None, Some(b"\x00\x01bad")),
                (None, Some(&nullv)),
            ],
            Some(Compression::Zstd),
        ));
        bytes.extend(batch(5, &[(None, Some(&nullv)), (Some(b"t"), None)], None));
        // the window [1, 6): the record before the start and the one at the end are not read
        let want: Vec<Row<'_>> = vec![
            (1, 1001, Some(b"k2"), None),
            (2, 1002, Some(b"k"), None),
            (3, 1003, None, Some(b"\x00\x01bad")),
            (4, 1004, None, Some(&nullv)),
            (5, 1005, None, Some(&nullv)),
        ];
        let options = ScanOptions::all(true);
        let mut reference = Inspector::for_scan();
        let expected = reference.scan_records(want.iter().copied(), options);
        // fed in fetches cut inside the second and the third batch, each fetched again whole
        let second = batch(0, &[(None, Some(&nullv)), (Some(b"k2"), None)], None).len();
        let mut window = FetchWindow::new(1, 6);
        let mut inspector = Inspector::for_scan();
        let mut got = inspector
            .scan_fetched(&mut window, &bytes[..second + 9], options)
            .unwrap();
        assert_eq!(window.next_offset(), 2);
        let third = bytes.len() - batch(5, &[(None, Some(&nullv)), (Some(b"t"), None)], None).len();
        let more = inspector
            .scan_fetched(&mut window, &bytes[second..bytes.len() - 3], options)
            .unwrap();
        assert_eq!(window.next_offset(), 5);
        let last = inspector
            .scan_fetched(&mut window, &bytes[third..], options)
            .unwrap();
        assert!(window.done());
        for s in [more, last] {
            got.null_keys.extend(s.null_keys);
            got.findings.extend(s.findings);
            got.last_timestamp = got.last_timestamp.max(s.last_timestamp);
            for (g, f) in got.found.iter_mut().zip(s.found) {
                *g += f;
            }
        }
        assert_eq!(got, expected);
        assert_eq!(window.records(), 5);
        let kv: usize = want
            .iter()
            .map(|(_, _, k, v)| k.map_or(0, <[u8]>::len) + v.map_or(0, <[u8]>::len))
            .sum();
        assert_eq!(window.bytes(), kv as u64);
        assert_eq!(
            inspector.finish().summary_json(),
            reference.finish().summary_json()
        );
        // the compaction what-if of the records kept from the same fetches
        let mut log = FetchedLog::new(1, 6);
        log.push(&bytes[..third]).unwrap();
        log.push(&bytes[third..]).unwrap();
        assert!(log.window().done());
        let views: Vec<PreviewRecord<'_>> = want
            .iter()
            .map(|&(o, t, k, v)| PreviewRecord::consumed(o, t, k, v))
            .collect();
        let config = crate::inspect::summary_compaction_config();
        // preview_compaction's answer, but for `kept` (one flag a record: not held)
        let whole = |at| crate::inspect::CompactionPreview {
            kept: Vec::new(),
            ..preview_compaction(&views, config, at)
        };
        assert_eq!(
            log.previews(config, &[1003, 9_000_000_000]),
            vec![whole(1003), whole(9_000_000_000)]
        );
        // the whole batches of both fetches are kept, the cut one once
        assert_eq!(log.kept_bytes(), bytes.len());
        // fetches cut inside batches and fetched again from the next offset: the same records,
        // read again from the whole batches kept (the second batch twice), the same answers
        let mut cut = FetchedLog::new(1, 6);
        cut.push(&bytes[..second + 9]).unwrap();
        cut.push(&bytes[second..bytes.len() - 3]).unwrap();
        cut.push(&bytes[third..]).unwrap();
        assert!(cut.window().done());
        assert_eq!(
            cut.kept_bytes(),
            second + (third - second) + (bytes.len() - third)
        );
        assert_eq!(
            cut.previews(config, &[1003, 9_000_000_000]),
            log.previews(config, &[1003, 9_000_000_000])
        );
    }

    #[test]
    fn a_corrupt_batch_and_a_lone_cut_batch_are_errors() {
        let mut bytes = batch(0, &[(None, Some(b"x"))], None);
        let mut scan = PartitionScan::new(0, 1, 0, false);
        assert_eq!(
            scan.push(&bytes[..bytes.len() - 1]).unwrap_err().kind(),
            ErrorKind::Truncated
        );
        let n = bytes.len();
        bytes[n - 1] ^= 0xff; // the CRC no longer matches
        assert_eq!(scan.push(&bytes).unwrap_err().kind(), ErrorKind::Corrupt);
        assert_eq!(scan.counts().messages, 0);
        assert!(scan.verify().is_none());
    }
}
