//! The core beyond single values: segment files and checkpoints, the replay store and its
//! queries, the planner, the compaction model, feature levels, inspection and projections.
//!
//! Owns: converting these to plain Python tuples, lists and bytes (the `rlmeta` package turns
//! them into frozen dataclasses and IntEnums), and releasing the GIL around long work (a whole
//! file, a list of records). Never: a rule of its own; every decision is the core's.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rlmeta::batch::{Batches, CrcCheck, ReadOptions};
use rlmeta::cache::{Applied, Orphan, SegmentMetadata, Skip, Store};
use rlmeta::compaction::{CleanupPolicy, Log, LogRecord, TopicConfig};
use rlmeta::feature::{self, MetadataLevel, NullKeyScan, PartitionLevel, Readiness};
use rlmeta::inspect::{self, Inspector};
use rlmeta::json::Int64Style;
use rlmeta::keyed;
use rlmeta::partition_scan::{FetchWindow, Named, PartitionScan};
use rlmeta::plan::event_from_json;
use rlmeta::projection::{GrowthParams, project_growth};
use rlmeta::{Error, ErrorKind, TopicIdPartition, Uuid};

use crate::{files, run, to_py_err};

/// `(topic_id, topic, partition)`.
type Tp = (String, String, i32);
/// `(offset or timestamp, key, value)`.
type KV = (i64, Option<Vec<u8>>, Option<Vec<u8>>);
/// A growth point: `(day, live, append-only records, bytes, compacted records, bytes)`.
type Point = (u32, u64, u64, u64, u64, u64);
/// What `BatchReader::next_batch` returns.
type NextBatch = Option<(Option<(BatchHead, Vec<RecOut>)>, Option<Py<PyAny>>)>;
/// A record as the binding passes it: `(offset, timestamp, key, value)`.
type Rec = (i64, i64, Option<Vec<u8>>, Option<Vec<u8>>);
/// What replay did: `(outcome, skip, detail, fatal_to_kafka, error_code, outcome_code)`.
type Outcome = (
    &'static str,
    Option<&'static str>,
    Option<String>,
    bool,
    Option<u32>,
    u8,
);
/// A segment's metadata in `SegmentMetadata` field order.
type Seg = (
    String,
    i64,
    i64,
    i32,
    i64,
    i64,
    Vec<(i32, i64)>,
    i32,
    Option<Vec<u8>>,
    i8,
    bool,
    i32,
);

fn tp_in(py: Python<'_>, (id, topic, partition): &Tp) -> PyResult<TopicIdPartition> {
    let topic_id = Uuid::parse(id).map_err(|e| to_py_err(py, &e))?;
    Ok(TopicIdPartition {
        topic_id,
        topic: topic.clone(),
        partition: *partition,
    })
}

fn tp_out(tp: &TopicIdPartition) -> Tp {
    (tp.topic_id.to_string(), tp.topic.clone(), tp.partition)
}

fn seg_out(m: &SegmentMetadata) -> Seg {
    (
        m.id.to_string(),
        m.start_offset,
        m.end_offset,
        m.broker_id,
        m.max_timestamp_ms,
        m.event_timestamp_ms,
        m.leader_epochs.to_vec(),
        m.segment_size_in_bytes,
        m.custom_metadata.as_deref().map(<[u8]>::to_vec),
        m.state.id(),
        m.txn_index_empty,
        m.broker_leader_epoch,
    )
}

fn level_in(py: Python<'_>, level: i16) -> PyResult<MetadataLevel> {
    MetadataLevel::from_level(level).map_err(|e| to_py_err(py, &e))
}

fn skip_out(skip: &Skip) -> (&'static str, Option<String>, Option<u32>) {
    match skip {
        Skip::Tombstone { key } => ("tombstone", key.clone(), None),
        Skip::Undecodable(e) => ("undecodable", Some(e.to_string()), Some(e.code())),
        Skip::SnapshotRecord => ("snapshot_record", None, None),
        Skip::LevelRecord(Ok(l)) => ("level_record", Some(l.level().to_string()), None),
        Skip::LevelRecord(Err(e)) => ("level_record", Some(e.to_string()), Some(e.code())),
        Skip::BadKey { key, why } => ("bad_key", Some(format!("{key}: {why}")), None),
        Skip::Dropped { partition, reason } => {
            ("dropped", Some(format!("{partition}: {reason:?}")), None)
        }
        Skip::PartitionDeleted { partition } => {
            ("partition_deleted", Some(partition.to_string()), None)
        }
        Skip::AlreadyApplied { partition, last } => (
            "already_applied",
            Some(format!("{partition}: last applied offset {last}")),
            None,
        ),
        Skip::NotHeld { partition } => ("not_held", Some(partition.to_string()), None),
    }
}

/// What replaying the record whose value is `value` did (the value tells its version, and so
/// whether a stock broker could read it).
fn outcome(a: &Applied, value: Option<&[u8]>) -> Outcome {
    outcome_coded(a, a.outcome_code(value))
}

/// [`outcome`] with the core's code already worked out (it needs the record's value).
fn outcome_coded(a: &Applied, code: u8) -> Outcome {
    let fatal = rlmeta::host::fatal_to_kafka(code);
    match a {
        Applied::Applied => ("applied", None, None, fatal, None, code),
        Applied::Orphaned => ("orphaned", None, None, fatal, None, code),
        Applied::AppliedWithBadKey(s) => {
            let (k, d, c) = skip_out(s);
            ("applied_with_bad_key", Some(k), d, fatal, c, code)
        }
        Applied::Skipped(s) => {
            let (k, d, c) = skip_out(s);
            ("skipped", Some(k), d, fatal, c, code)
        }
    }
}

/// `(segment_id, state, end_offset, broker_leader_epoch, key, offset)`.
type OrphanOut = (String, i8, Option<i64>, Option<i32>, Option<String>, i64);

fn orphan_out(o: &Orphan) -> OrphanOut {
    (
        o.segment_id.to_string(),
        o.state.id(),
        o.end_offset,
        o.broker_leader_epoch,
        o.key.clone(),
        o.offset,
    )
}

/// The replayed state of one metadata partition (the core's `Store`).
#[pyclass(module = "rlmeta._native", name = "Store")]
pub struct Store_ {
    store: Store,
}

#[pymethods]
impl Store_ {
    #[new]
    fn new() -> Self {
        Store_ {
            store: Store::new(),
        }
    }

    /// Replays one record; key and value may be None.
    #[pyo3(signature = (offset, key, value))]
    fn apply(&mut self, offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Outcome {
        outcome(&self.store.apply(offset, key, value), value)
    }

    /// Replays `(offset, key, value)` records in order, with the GIL released.
    fn apply_many(&mut self, py: Python<'_>, records: Vec<KV>) -> Vec<Outcome> {
        let store = &mut self.store;
        py.detach(|| {
            records
                .iter()
                .map(|(o, k, v)| {
                    outcome(&store.apply(*o, k.as_deref(), v.as_deref()), v.as_deref())
                })
                .collect()
        })
    }

    /// [`Store_::apply_file`] of the file at `path`, read in chunks with the GIL released;
    /// an OSError if it does not read.
    fn apply_path(&mut self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<usize> {
        let store = &mut self.store;
        Ok(py.detach(|| {
            files::each_record(&path, |r| {
                store.apply(r.offset, r.key, r.value);
            })
        })?)
    }

    /// Replays the records of one fetch of a live topic that `window` reads (whole batches, the
    /// partition's start and end offsets respected); returns how many.
    fn apply_fetch(
        &mut self,
        py: Python<'_>,
        window: &mut FetchWindow_,
        data: &[u8],
    ) -> PyResult<u64> {
        let (store, window) = (&mut self.store, &mut window.window);
        let before = window.records();
        run(py, data.len(), || {
            window.push(data, |r| {
                store.apply(r.offset, r.key, r.value);
            })
        })?;
        Ok(window.records() - before)
    }

    /// Replays every record of a segment file image, with the GIL released; returns how many
    /// records were read.
    fn apply_file(&mut self, py: Python<'_>, data: &[u8]) -> usize {
        let store = &mut self.store;
        py.detach(|| {
            let mut n = 0;
            for batch in Batches::new(data, ReadOptions::default()).flatten() {
                let Ok(records) = batch.records() else {
                    continue;
                };
                for r in records.flatten() {
                    store.apply(r.offset, r.key, r.value);
                    n += 1;
                }
            }
            n
        })
    }

    fn load_partition(&mut self, py: Python<'_>, tp: Tp) -> PyResult<()> {
        self.store.load_partition(&tp_in(py, &tp)?);
        Ok(())
    }

    fn mark_initialized(&mut self, py: Python<'_>, tp: Tp) -> PyResult<bool> {
        Ok(self.store.mark_initialized(&tp_in(py, &tp)?))
    }

    fn segment_for(
        &self,
        py: Python<'_>,
        tp: Tp,
        leader_epoch: i32,
        offset: i64,
    ) -> PyResult<Option<Seg>> {
        let tp = tp_in(py, &tp)?;
        run(py, 0, || {
            Ok(self
                .store
                .segment_for(&tp, leader_epoch, offset)?
                .map(seg_out))
        })
    }

    fn highest_offset_for_epoch(
        &self,
        py: Python<'_>,
        tp: Tp,
        leader_epoch: i32,
    ) -> PyResult<Option<i64>> {
        let tp = tp_in(py, &tp)?;
        run(py, 0, || {
            self.store.highest_offset_for_epoch(&tp, leader_epoch)
        })
    }

    fn segments(&self, py: Python<'_>, tp: Tp) -> PyResult<Vec<Seg>> {
        let tp = tp_in(py, &tp)?;
        run(py, 0, || {
            Ok(self.store.segments(&tp)?.into_iter().map(seg_out).collect())
        })
    }

    fn segments_for_epoch(&self, py: Python<'_>, tp: Tp, leader_epoch: i32) -> PyResult<Vec<Seg>> {
        let tp = tp_in(py, &tp)?;
        run(py, 0, || {
            Ok(self
                .store
                .segments_for_epoch(&tp, leader_epoch)?
                .into_iter()
                .map(seg_out)
                .collect())
        })
    }

    fn next_segment_with_txn_index(
        &self,
        py: Python<'_>,
        tp: Tp,
        leader_epoch: i32,
        offset: i64,
    ) -> PyResult<Option<Seg>> {
        let tp = tp_in(py, &tp)?;
        run(py, 0, || {
            Ok(self
                .store
                .next_segment_with_txn_index(&tp, leader_epoch, offset)?
                .map(seg_out))
        })
    }

    fn segment_state(&self, py: Python<'_>, tp: Tp, segment_id: String) -> PyResult<Option<i8>> {
        let tp = tp_in(py, &tp)?;
        run(py, 0, || {
            let id = Uuid::parse(&segment_id)?;
            Ok(self.store.segment_state(&tp, id)?.map(|s| s.id()))
        })
    }

    /// `(state, broker_id, event_timestamp_ms)` of the latest partition-delete event.
    fn partition_delete(&self, py: Python<'_>, tp: Tp) -> PyResult<Option<(i8, i32, i64)>> {
        let tp = tp_in(py, &tp)?;
        Ok(self
            .store
            .partition_delete(&tp)
            .map(|d| (d.state.id(), d.broker_id, d.event_timestamp_ms)))
    }

    fn orphans(&self, py: Python<'_>, tp: Tp) -> PyResult<Vec<OrphanOut>> {
        let tp = tp_in(py, &tp)?;
        Ok(self
            .store
            .orphans(&tp)
            .into_iter()
            .map(orphan_out)
            .collect())
    }

    fn partitions(&self) -> Vec<Tp> {
        self.store.partitions().into_iter().map(tp_out).collect()
    }

    /// Every segment the partition's cache holds, initialized or not (for inspection).
    fn all_segments(&self, py: Python<'_>, tp: Tp) -> PyResult<Vec<Seg>> {
        let tp = tp_in(py, &tp)?;
        Ok(self
            .store
            .partition_cache(&tp)
            .map(|c| c.segments().into_iter().map(seg_out).collect())
            .unwrap_or_default())
    }

    /// The records to produce for an event (its JSON form, vectors README §6) at `level`:
    /// `(key, value)` pairs, value None for a tombstone.
    fn plan(
        &self,
        py: Python<'_>,
        event_json: String,
        level: i16,
    ) -> PyResult<Vec<(String, Option<Vec<u8>>)>> {
        let level = level_in(py, level)?;
        run(py, 0, || {
            let event = event_from_json(&rlmeta::json::parse(&event_json)?)?;
            Ok(self
                .store
                .plan(&event, level)?
                .into_iter()
                .map(|p| (p.key.format(), p.value))
                .collect())
        })
    }

    /// The records that key a partition's segments written before KIP-1266.
    fn plan_backfill(
        &self,
        py: Python<'_>,
        tp: Tp,
        upload_epoch: i32,
        level: i16,
    ) -> PyResult<Vec<(String, Option<Vec<u8>>)>> {
        let level = level_in(py, level)?;
        let tp = tp_in(py, &tp)?;
        run(py, 0, || {
            Ok(self
                .store
                .plan_backfill(&tp, upload_epoch, level)?
                .into_iter()
                .map(|p| (p.key.format(), p.value))
                .collect())
        })
    }
}

/// What `Inspector::scan_file` returns.
type ScanOut = (
    Vec<(i64, i64)>,
    Vec<(i64, i64, Outcome)>,
    i64,
    [u64; inspect::ScanKind::COUNT],
);
fn scan_out(scan: inspect::FileScan) -> ScanOut {
    let findings = scan.findings.iter();
    let findings = findings
        .map(|(o, t, a, c)| (*o, *t, outcome_coded(a, *c)))
        .collect();
    (scan.null_keys, findings, scan.last_timestamp, scan.found)
}

/// The bytes a file scan reads at a time.
const SCAN_CHUNK: usize = 4 << 20;

fn scan_options(each_null_key: bool, limit: Option<usize>) -> inspect::ScanOptions {
    inspect::ScanOptions {
        each_null_key,
        list_limit: limit.unwrap_or(usize::MAX),
    }
}

/// `(partition, segment_id, state, since_ms)`.
type StuckOut = (Tp, String, i8, i64);
/// `(partition, (id, start, end), (id, start, end))`.
type OverlapOut = (Tp, (String, i64, i64), (String, i64, i64));

fn stuck_of(store: &Store, now_ms: i64, threshold_ms: i64) -> Vec<StuckOut> {
    inspect::stuck_segments(store, now_ms, threshold_ms)
        .into_iter()
        .map(|s| {
            (
                tp_out(&s.partition),
                s.id.to_string(),
                s.state.id(),
                s.since_ms,
            )
        })
        .collect()
}

fn overlaps_of(store: &Store) -> Vec<OverlapOut> {
    let seg = |(id, s, e): (Uuid, i64, i64)| (id.to_string(), s, e);
    inspect::overlapping_segments(store)
        .into_iter()
        .map(|o| (tp_out(&o.partition), seg(o.first), seg(o.second)))
        .collect()
}

/// The inspection of one metadata partition, fed record by record or file by file.
#[pyclass(module = "rlmeta._native", name = "Inspector")]
pub struct Inspector_ {
    inner: Option<Inspector>,
}

impl Inspector_ {
    fn take(&mut self, py: Python<'_>) -> PyResult<Inspector> {
        self.inner.take().ok_or_else(|| {
            to_py_err(
                py,
                &Error::new(
                    ErrorKind::InvalidState,
                    "the inspection is already finished",
                ),
            )
        })
    }

    fn get(&mut self, py: Python<'_>) -> PyResult<&mut Inspector> {
        self.inner.as_mut().ok_or_else(|| {
            to_py_err(
                py,
                &Error::new(
                    ErrorKind::InvalidState,
                    "the inspection is already finished",
                ),
            )
        })
    }
}

#[pymethods]
impl Inspector_ {
    /// `scan_only`: the core's scan inspector (`Inspector::for_scan`); `files`: its inspector
    /// of files read again for the compaction what-if (`Inspector::for_files`, ended by
    /// [`Inspector_::finish_files`]).
    #[new]
    #[pyo3(signature = (scan_only=false, files=false))]
    fn new(scan_only: bool, files: bool) -> Self {
        let inner = if scan_only {
            Inspector::for_scan()
        } else if files {
            Inspector::for_files()
        } else {
            Inspector::new()
        };
        Inspector_ { inner: Some(inner) }
    }

    #[pyo3(signature = (offset, timestamp, key, value))]
    fn push(
        &mut self,
        py: Python<'_>,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> PyResult<Outcome> {
        Ok(outcome(
            &self.get(py)?.push(offset, timestamp, key, value),
            value,
        ))
    }

    /// `(offset, timestamp, key, value)` records in order, with the GIL released.
    fn push_many(&mut self, py: Python<'_>, records: Vec<Rec>) -> PyResult<Vec<Outcome>> {
        let inspector = self.get(py)?;
        Ok(py.detach(|| {
            records
                .iter()
                .map(|(o, t, k, v)| {
                    outcome(
                        &inspector.push(*o, *t, k.as_deref(), v.as_deref()),
                        v.as_deref(),
                    )
                })
                .collect()
        }))
    }

    fn push_file(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let inspector = self.get(py)?;
        py.detach(|| inspector.push_file(data));
        Ok(())
    }

    /// Every record of a file image, with the GIL released; returns `(null_keys, findings,
    /// last_timestamp, found)`: the `(offset, timestamp)` of each null-key record (only when
    /// `each_null_key`), `(offset, timestamp, outcome)` of each record a scan lists (the first
    /// `limit` of each kind, every one without a limit) and how many of each kind there are.
    #[pyo3(signature = (data, each_null_key=false, limit=None))]
    fn scan_file(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        each_null_key: bool,
        limit: Option<usize>,
    ) -> PyResult<ScanOut> {
        let inspector = self.get(py)?;
        let options = scan_options(each_null_key, limit);
        Ok(scan_out(
            py.detach(|| inspector.scan_file_with(data, options)),
        ))
    }

    /// [`Inspector_::scan_file`] of records not read from a file (a topic's), `(offset,
    /// timestamp, key, value)` in offset order, with the GIL released.
    #[pyo3(signature = (records, each_null_key=false, limit=None))]
    fn scan_records(
        &mut self,
        py: Python<'_>,
        records: Vec<Rec>,
        each_null_key: bool,
        limit: Option<usize>,
    ) -> PyResult<ScanOut> {
        let inspector = self.get(py)?;
        let options = scan_options(each_null_key, limit);
        let records = records
            .iter()
            .map(|(o, t, k, v)| (*o, *t, k.as_deref(), v.as_deref()));
        Ok(scan_out(
            py.detach(|| inspector.scan_records(records, options)),
        ))
    }

    /// [`Inspector_::scan_file`] of the file at `path`, read here in chunks with the GIL
    /// released (memory bounded by the largest batch, not the file); an OSError if it does not
    /// read. Read, not mapped: a live broker may truncate its active segment under a scan, which
    /// a mapping turns into SIGBUS; a read sees the shorter file, which the core reads as cut.
    #[pyo3(signature = (path, each_null_key=false, limit=None))]
    fn scan_path(
        &mut self,
        py: Python<'_>,
        path: std::path::PathBuf,
        each_null_key: bool,
        limit: Option<usize>,
    ) -> PyResult<ScanOut> {
        use std::io::Read;
        let inspector = self.get(py)?;
        let options = scan_options(each_null_key, limit);
        let scan = py.detach(|| {
            let file = std::fs::File::open(&path)?;
            let len = file.metadata()?.len() as usize;
            let (mut file, mut buf) = (file.take(len as u64), vec![0u8; SCAN_CHUNK]);
            inspector.scan_begin(len, options);
            loop {
                match file.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => inspector.scan_push(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        inspector.scan_end();
                        return Err(e);
                    }
                }
            }
            Ok::<_, std::io::Error>(inspector.scan_end())
        })?;
        Ok(scan_out(scan))
    }

    /// [`Inspector_::scan_records`] of the records of one fetch of a live topic that `window`
    /// reads (the core's `Inspector::scan_fetched`), the GIL released for a large fetch.
    #[pyo3(signature = (window, data, each_null_key=false, limit=None))]
    fn scan_fetch(
        &mut self,
        py: Python<'_>,
        window: &mut FetchWindow_,
        data: &[u8],
        each_null_key: bool,
        limit: Option<usize>,
    ) -> PyResult<ScanOut> {
        let (inspector, window) = (self.get(py)?, &mut window.window);
        let options = scan_options(each_null_key, limit);
        let scan = run(py, data.len(), || {
            inspector.scan_fetched(window, data, options)
        })?;
        Ok(scan_out(scan))
    }

    /// [`Inspector_::push`] of every record of one fetch of a live topic that `window` reads
    /// (the core's `Inspector::push_fetched`); returns nothing.
    fn push_fetch(
        &mut self,
        py: Python<'_>,
        window: &mut FetchWindow_,
        data: &[u8],
    ) -> PyResult<()> {
        let (inspector, window) = (self.get(py)?, &mut window.window);
        run(py, data.len(), || {
            inspector.push_fetched(window, data, |_| {})
        })
    }

    /// [`Inspector_::push_fetch`], writing the records' listing (a `record_line` each, every line
    /// ended by a newline) to `write` in pieces of about [`LISTING_PIECE`] bytes as they are
    /// decoded: a fetch of 16 MiB of stock batches lists about 95 MB, which a string returned
    /// whole held twice (here and in Python) at once. The GIL is held (`write` is Python's).
    fn push_fetch_write(
        &mut self,
        py: Python<'_>,
        window: &mut FetchWindow_,
        data: &[u8],
        write: Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (inspector, window) = (self.get(py)?, &mut window.window);
        let mut out = String::new();
        let mut failed: Option<PyErr> = None;
        let mut flush = |out: &mut String| {
            if failed.is_none() && !out.is_empty() {
                failed = write.call1((out.as_str(),)).err();
            }
            out.clear();
        };
        let read = inspector.push_fetched(window, data, |r| {
            out.push_str(&rlmeta::format::record_line(
                r.offset,
                r.timestamp,
                r.key,
                r.value,
            ));
            out.push('\n');
            if out.len() >= LISTING_PIECE {
                flush(&mut out);
            }
        });
        flush(&mut out);
        read.map_err(|e| crate::to_py_err(py, &e))?;
        failed.map_or(Ok(()), Err)
    }

    /// [`Inspector_::push_fetch`], returning the records, `(offset, timestamp, key, value)`.
    fn push_fetch_records(
        &mut self,
        py: Python<'_>,
        window: &mut FetchWindow_,
        data: &[u8],
    ) -> PyResult<Vec<Rec>> {
        let (inspector, window) = (self.get(py)?, &mut window.window);
        let mut out = Vec::new();
        run(py, data.len(), || {
            inspector.push_fetched(window, data, |r| {
                out.push((
                    r.offset,
                    r.timestamp,
                    r.key.map(<[u8]>::to_vec),
                    r.value.map(<[u8]>::to_vec),
                ));
            })
        })?;
        Ok(out)
    }

    /// `(first_offset, last_offset, min_timestamp, max_timestamp)` of the null-key records so
    /// far, or None.
    fn null_keys(&mut self, py: Python<'_>) -> PyResult<Option<(i64, i64, i64, i64)>> {
        let span = self.get(py)?.null_keys();
        Ok(span.map(|s| {
            (
                s.first_offset,
                s.last_offset,
                s.min_timestamp,
                s.max_timestamp,
            )
        }))
    }

    fn stuck(&mut self, py: Python<'_>, now_ms: i64, threshold_ms: i64) -> PyResult<Vec<StuckOut>> {
        Ok(stuck_of(self.get(py)?.store(), now_ms, threshold_ms))
    }

    fn overlaps(&mut self, py: Python<'_>) -> PyResult<Vec<OverlapOut>> {
        Ok(overlaps_of(self.get(py)?.store()))
    }

    /// Every orphan of every user partition, with its partition.
    fn orphans(&mut self, py: Python<'_>) -> PyResult<Vec<(Tp, OrphanOut)>> {
        let store = self.get(py)?.store();
        Ok(store
            .partitions()
            .into_iter()
            .flat_map(|tp| {
                store
                    .orphans(tp)
                    .into_iter()
                    .map(move |o| (tp_out(tp), orphan_out(o)))
            })
            .collect())
    }

    /// Ends the inspection: the core's report, rendered when asked.
    fn finish(&mut self, py: Python<'_>) -> PyResult<Inspection_> {
        let inspector = self.take(py)?;
        let inner = py.detach(move || inspector.finish());
        Ok(Inspection_ { inner })
    }

    /// [`Inspector_::push_file`] of the file at `path`, read here in chunks with the GIL
    /// released (no `bytes` made of it); an OSError if it does not read.
    fn push_path(&mut self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let inspector = self.get(py)?;
        let options = scan_options(false, Some(0));
        py.detach(|| {
            let (chunks, len) = files::Chunks::open(&path)?;
            inspector.scan_begin(len, options);
            let read = chunks.each(|c| inspector.scan_push(c));
            inspector.scan_end();
            read
        })?;
        Ok(())
    }

    /// Ends an inspection of files (made with `files`, or `scan_only` for the summary alone):
    /// the compaction what-if from the same files (`paths`, in order), read again in chunks
    /// (`Inspection::with_compaction`).
    fn finish_files(
        &mut self,
        py: Python<'_>,
        paths: Vec<std::path::PathBuf>,
    ) -> PyResult<Inspection_> {
        let inspector = self.take(py)?;
        let inner = py.detach(move || {
            let at = inspector.compaction_moment();
            let p = files::preview_paths(&paths, inspect::summary_compaction_config(), &[at])?;
            let p = p.into_iter().next().unwrap_or_default();
            Ok::<_, std::io::Error>(inspector.finish().with_compaction(at, &p))
        })?;
        Ok(Inspection_ { inner })
    }

    /// Ends an inspection of a live topic's metadata partition (made with `files` or
    /// `scan_only`): the summary's compaction what-if from the partition's whole fetched batches
    /// `log` kept (the core's `FetchedLog`, read again by the streamed model), not from records
    /// the inspector held (`Inspection::with_compaction`).
    fn finish_fetched(
        &mut self,
        py: Python<'_>,
        log: PyRef<'_, FetchedLog_>,
    ) -> PyResult<Inspection_> {
        let inspector = self.take(py)?;
        let log = &log.log;
        let inner = py.detach(move || {
            let at = inspector.compaction_moment();
            let p = log.previews(inspect::summary_compaction_config(), &[at]);
            let p = p.into_iter().next().unwrap_or_default();
            inspector.finish().with_compaction(at, &p)
        });
        Ok(Inspection_ { inner })
    }
}

/// A finished inspection: its summary, its full text and JSON, each rendered by the core when
/// asked (the lifecycles of a large log are most of the text).
#[pyclass(module = "rlmeta._native", name = "Inspection", frozen)]
pub struct Inspection_ {
    inner: inspect::Inspection,
}

#[pymethods]
impl Inspection_ {
    /// The summary's JSON (the `summary` member of `json()`).
    fn summary_json(&self) -> String {
        self.inner.summary_json().to_string()
    }

    fn text(&self, py: Python<'_>) -> String {
        py.detach(|| self.inner.to_text())
    }

    /// `text()` handed to `write` a piece at a time (the lines of 10,000 lifecycles each, then
    /// the summary): a large inspection's text is never whole.
    fn write_text(&self, write: Bound<'_, PyAny>) -> PyResult<()> {
        let mut failed = None;
        self.inner.write_text(10_000, |piece| {
            if failed.is_none() {
                failed = write.call1((piece,)).err();
            }
        });
        failed.map_or(Ok(()), Err)
    }

    /// The summary's text alone (the end of `text()`).
    fn summary_text(&self) -> String {
        self.inner.summary_text()
    }

    fn json(&self, py: Python<'_>) -> String {
        py.detach(|| self.inner.to_json().to_string())
    }
}

/// A batch header: `(position, base_offset, batch_length, partition_leader_epoch, magic, crc,
/// attributes, last_offset_delta, base_timestamp, max_timestamp, producer_id, producer_epoch,
/// base_sequence, records_count, compression, timestamp_type, transactional, control,
/// crc_valid, size_in_bytes)`.
type BatchHead = (
    (usize, i64, i32, i32, i8, u32, i16, i32),
    (i64, i64, i64, i16, i32, i32),
    (String, &'static str, bool, bool, Option<bool>, usize),
);
/// `(offset, timestamp, key, value, headers)`.
type RecOut = (
    i64,
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(Vec<u8>, Option<Vec<u8>>)>,
);

/// Walks the batches of a segment file or checkpoint image, one batch per `next()`.
#[pyclass(module = "rlmeta._native")]
pub struct BatchReader {
    data: Py<PyBytes>,
    pos: usize,
    finished: bool,
    options: ReadOptions,
}

#[pymethods]
impl BatchReader {
    #[new]
    #[pyo3(signature = (data, verify_crc = true))]
    fn new(data: Py<PyBytes>, verify_crc: bool) -> Self {
        let options = ReadOptions {
            crc: if verify_crc {
                CrcCheck::Verify
            } else {
                CrcCheck::Skip
            },
            ..ReadOptions::default()
        };
        BatchReader {
            data,
            pos: 0,
            finished: false,
            options,
        }
    }

    /// Bytes consumed as whole entries so far.
    #[getter]
    fn position(&self) -> usize {
        self.pos
    }

    /// The next batch as `(header, records)`, an error object for an entry the walk skips
    /// (legacy magic), or None when the walk is over. An error that ends the walk is raised.
    fn next_batch(&mut self, py: Python<'_>) -> PyResult<NextBatch> {
        if self.finished {
            return Ok(None);
        }
        let data = self.data.bind(py).as_bytes();
        let mut walk = Batches::resume(data, self.pos, self.options);
        let item = walk.next();
        self.pos = walk.position();
        self.finished = walk.is_finished();
        let Some(item) = item else {
            self.finished = true;
            return Ok(None);
        };
        let batch = match item {
            Ok(b) => b,
            Err(e) if !self.finished => {
                return Ok(Some((
                    None,
                    Some(to_py_err(py, &e).into_value(py).into_any()),
                )));
            }
            Err(e) => return Err(to_py_err(py, &e)),
        };
        let compression = batch.compression().map_or_else(
            |_| format!("unknown({})", batch.attributes.compression_id()),
            |c| c.name().to_owned(),
        );
        let head: BatchHead = (
            (
                batch.position,
                batch.base_offset,
                batch.batch_length,
                batch.partition_leader_epoch,
                batch.magic,
                batch.crc,
                batch.attributes.0,
                batch.last_offset_delta,
            ),
            (
                batch.base_timestamp,
                batch.max_timestamp,
                batch.producer_id,
                batch.producer_epoch,
                batch.base_sequence,
                batch.records_count,
            ),
            (
                compression,
                batch.timestamp_type().name(),
                batch.is_transactional(),
                batch.is_control(),
                batch.crc_valid(),
                batch.size_in_bytes(),
            ),
        );
        let records = batch.records().map_err(|e| to_py_err(py, &e))?;
        let mut out = Vec::new();
        for r in records {
            let r = r.map_err(|e| to_py_err(py, &e))?;
            let headers = r
                .headers
                .iter()
                .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                .collect();
            out.push((
                r.offset,
                r.timestamp,
                r.key.map(<[u8]>::to_vec),
                r.value.map(<[u8]>::to_vec),
                headers,
            ));
        }
        Ok(Some((Some((head, out)), None)))
    }
}

/// A KRaft checkpoint: `(header (version, last_contained_log_timestamp) or None, footer version
/// or None, kraft_version, voters, batches, records [(offset, api_key, version)], features
/// [(offset, name, level)], complete)`.
type CheckpointOut = (
    Option<(i16, i64)>,
    Option<i16>,
    Option<i16>,
    Option<Vec<i32>>,
    usize,
    Vec<(i64, u16, u16)>,
    Vec<(i64, String, i16)>,
    bool,
);

#[pyfunction]
pub fn read_checkpoint(py: Python<'_>, data: &[u8]) -> PyResult<CheckpointOut> {
    run(py, data.len(), || {
        let c = rlmeta::checkpoint::Checkpoint::parse(data)?;
        Ok((
            c.header
                .as_ref()
                .map(|h| (h.version, h.last_contained_log_timestamp)),
            c.footer,
            c.kraft_version,
            c.voters.clone(),
            c.batches,
            c.records
                .iter()
                .map(|r| (r.offset, r.api_key, r.version))
                .collect(),
            c.features
                .iter()
                .map(|f| (f.offset, f.name.clone(), f.level))
                .collect(),
            c.is_complete(),
        ))
    })
}

/// The feature levels a complete checkpoint finalizes, by name.
#[pyfunction]
pub fn finalized_features(py: Python<'_>, data: &[u8]) -> PyResult<Vec<(String, i16)>> {
    run(py, data.len(), || {
        Ok(rlmeta::checkpoint::finalized_features(data)?
            .iter()
            .map(|(n, l)| (n.to_owned(), l))
            .collect())
    })
}

/// kafka-dump-log's listing of a segment file (`keys`: with each record's key).
#[pyfunction]
#[pyo3(signature = (name, data, keys = true))]
pub fn dump_log(py: Python<'_>, name: String, data: &[u8], keys: bool) -> String {
    py.detach(|| rlmeta::format::dump_log(&name, data, rlmeta::format::DumpOptions { keys }))
}

/// One record's line of the listing with keys (records read from a live topic).
#[pyfunction]
#[pyo3(signature = (offset, timestamp, key, value))]
pub fn record_line(
    offset: i64,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> String {
    rlmeta::format::record_line(offset, timestamp, key, value)
}

/// [`dump_log`] of the file at `path` (named `name` in the listing), read in chunks with the GIL
/// released and handed to `write` a piece at a time, each the lines of the batches a chunk
/// completed: nothing holds the whole listing. An OSError if the file does not read.
#[pyfunction]
pub fn dump_log_path(
    py: Python<'_>,
    name: String,
    path: std::path::PathBuf,
    keys: bool,
    write: Bound<'_, PyAny>,
) -> PyResult<()> {
    let (mut chunks, len) = files::Chunks::open(&path)?;
    let mut out = String::new();
    let options = rlmeta::format::DumpOptions { keys };
    let mut dump = Some(rlmeta::format::DumpFeed::new(&name, len, options, &mut out));
    while let Some(feed) = dump.as_mut() {
        let more = py.detach(|| {
            let chunk = chunks.next_chunk()?;
            if let Some(chunk) = chunk {
                feed.push(chunk, &mut out);
            }
            Ok::<_, std::io::Error>(chunk.is_some())
        })?;
        if !more {
            if let Some(d) = dump.take() {
                d.end(&mut out);
            }
        }
        if !out.is_empty() {
            write.call1((std::mem::take(&mut out),))?;
        }
    }
    Ok(())
}

/// The JSON listing of a segment file (64-bit numbers exact).
#[pyfunction]
pub fn dump_log_json(py: Python<'_>, name: String, data: &[u8]) -> String {
    py.detach(|| rlmeta::format::dump_log_json(&name, data, Int64Style::Number).to_string())
}

/// The in-memory log the cleaner and retention work on (the core's `compaction::Log`).
#[pyclass(module = "rlmeta._native")]
pub struct CompactionLog {
    log: Log,
}

#[pymethods]
impl CompactionLog {
    #[new]
    #[pyo3(signature = (cleanup_policy, retention_ms, min_compaction_lag_ms, delete_retention_ms, segment_ms, segment_records))]
    fn new(
        py: Python<'_>,
        cleanup_policy: String,
        retention_ms: i64,
        min_compaction_lag_ms: i64,
        delete_retention_ms: i64,
        segment_ms: i64,
        segment_records: usize,
    ) -> PyResult<Self> {
        let policy = CleanupPolicy::parse(&cleanup_policy).map_err(|e| to_py_err(py, &e))?;
        Ok(CompactionLog {
            log: Log::new(TopicConfig {
                cleanup_policy: policy,
                retention_ms,
                min_compaction_lag_ms,
                delete_retention_ms,
                segment_ms,
                segment_records: segment_records.max(1),
            }),
        })
    }

    /// Appends a record and returns the offset it got in this log.
    #[pyo3(signature = (timestamp_ms, key, value))]
    fn append(&mut self, timestamp_ms: i64, key: Option<Vec<u8>>, value: Option<Vec<u8>>) -> i64 {
        self.log.append(timestamp_ms, key, value)
    }

    /// Appends `(timestamp, key, value)` records, with the GIL released.
    fn append_many(&mut self, py: Python<'_>, records: Vec<KV>) {
        let log = &mut self.log;
        py.detach(|| {
            for (t, k, v) in records {
                log.append(t, k, v);
            }
        });
    }

    /// Runs retention and the cleaner as they would run at `now_ms`.
    fn clean(&mut self, py: Python<'_>, now_ms: i64) {
        let log = &mut self.log;
        py.detach(|| log.clean(now_ms));
    }

    /// The records that remain: `(offset, timestamp, key, value)`.
    fn records(&self) -> Vec<Rec> {
        self.log
            .records()
            .map(|r| (r.offset, r.timestamp_ms, r.key.clone(), r.value.clone()))
            .collect()
    }

    fn __len__(&self) -> usize {
        self.log.len()
    }
}

/// `(records_before, bytes_before, records_after, bytes_after, null_keys_dropped, live_before,
/// lost segment ids)`: the core's `CompactionPreview` without the per-record flags.
type PreviewOut = (usize, u64, usize, u64, usize, usize, Vec<String>);

fn preview_out(p: inspect::CompactionPreview) -> PreviewOut {
    (
        p.records_before,
        p.bytes_before,
        p.records_after,
        p.bytes_after,
        p.null_keys_dropped,
        p.live_before,
        p.lost.iter().map(Uuid::to_string).collect(),
    )
}

/// A topic configuration from the binding's arguments, as the cleaner takes it.
#[derive(FromPyObject)]
pub struct ConfigArgs(String, i64, i64, i64, i64, usize);

impl ConfigArgs {
    fn config(&self, py: Python<'_>) -> PyResult<TopicConfig> {
        let ConfigArgs(policy, retention, lag, delete_retention, segment_ms, segment_records) =
            self;
        Ok(TopicConfig {
            cleanup_policy: CleanupPolicy::parse(policy).map_err(|e| to_py_err(py, &e))?,
            retention_ms: *retention,
            min_compaction_lag_ms: *lag,
            delete_retention_ms: *delete_retention,
            segment_ms: *segment_ms,
            segment_records: (*segment_records).max(1),
        })
    }
}

/// What Kafka's retention and cleaner keep at `now_ms` of a metadata partition's segment files
/// (in offset order) and the live segments a replay of the result loses: the core's
/// `preview_compaction_files`, the page's and `rlmeta inspect`'s model. `config`:
/// `(cleanup_policy, retention_ms, min_compaction_lag_ms, delete_retention_ms, segment_ms,
/// segment_records)`.
#[pyfunction]
pub fn preview_compaction_files(
    py: Python<'_>,
    files: Vec<Vec<u8>>,
    config: ConfigArgs,
    now_ms: i64,
) -> PyResult<PreviewOut> {
    let config = config.config(py)?;
    Ok(py.detach(|| {
        let views: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
        preview_out(inspect::preview_compaction_files(&views, config, now_ms))
    }))
}

/// [`preview_compaction_files`] of the files at `paths` at each of `moments`, the files read in
/// chunks (once per pass of the core's `PreviewStream`s, every moment fed from the same read)
/// with the GIL released: memory bounded by the keys of the dirty range and the live segments,
/// not the files; an OSError if one does not read.
#[pyfunction]
pub fn preview_compaction_paths(
    py: Python<'_>,
    paths: Vec<std::path::PathBuf>,
    config: ConfigArgs,
    moments: Vec<i64>,
) -> PyResult<Vec<PreviewOut>> {
    let config = config.config(py)?;
    let previews = py.detach(|| files::preview_paths(&paths, config, &moments))?;
    Ok(previews.into_iter().map(preview_out).collect())
}

/// [`preview_compaction_files`] over records read from a cluster, `(offset, timestamp, key,
/// value)` in offset order; a record's size is its key and value bytes (a consumer does not see
/// batch sizes).
#[pyfunction]
pub fn preview_compaction(
    py: Python<'_>,
    records: Vec<Rec>,
    config: ConfigArgs,
    now_ms: i64,
) -> PyResult<PreviewOut> {
    let config = config.config(py)?;
    Ok(py.detach(|| {
        let views: Vec<inspect::PreviewRecord<'_>> = records
            .iter()
            .map(|(o, t, k, v)| {
                inspect::PreviewRecord::consumed(*o, *t, k.as_deref(), v.as_deref())
            })
            .collect();
        preview_out(inspect::preview_compaction(&views, config, now_ms))
    }))
}

/// Kafka's spelling of a `cleanup.policy` value, checked.
/// `(topic-partition, segment id, why, state id or None, held state id or None, offsets,
/// null-key offsets)`.
type UnheldOut = (
    Tp,
    String,
    &'static str,
    Option<i8>,
    Option<i8>,
    Vec<i64>,
    Vec<i64>,
);

type SupersededOut = (Tp, String, i64, i64, String, Vec<i64>);

/// Whether one metadata partition's records, read from its start, hold every live segment under
/// keyed records (the core's `keyed::verify_keyed`): `(live segments, records, null-key records,
/// records after compaction, failures, superseded attempts)`; a superseded attempt is
/// `(partition, segment id, start offset, end offset, id of the attempt served, offsets)`.
/// `(live segments, records, null-key records, records after compaction, failures, superseded,
/// failures in all, superseded in all, failures by why)`: the lists hold the first `named` of each
/// (all of them when `named` is None), the counts hold all.
type VerdictOut = (
    usize,
    usize,
    usize,
    usize,
    Vec<UnheldOut>,
    Vec<SupersededOut>,
    usize,
    usize,
    Vec<(&'static str, usize)>,
);

fn verdict_out(v: &keyed::KeyedVerdict, named: Option<usize>) -> VerdictOut {
    let named = named.unwrap_or(usize::MAX);
    let unheld = v.unheld.iter().take(named).map(|u| {
        let st = |s: Option<rlmeta::SegmentState>| s.map(|s| s.id());
        (
            tp_out(&u.partition),
            u.segment_id.to_string(),
            u.why.name(),
            st(u.state),
            st(u.held),
            u.offsets.clone(),
            u.null_key_offsets.clone(),
        )
    });
    let superseded = v.superseded.iter().take(named).map(|s| {
        let a = &s.attempt;
        (
            tp_out(&a.partition),
            a.segment_id.to_string(),
            a.start_offset,
            a.end_offset,
            a.served_by.to_string(),
            s.offsets.clone(),
        )
    });
    let by_why = v.unheld_by_why().into_iter().map(|(w, n)| (w.name(), n));
    (
        v.live_segments,
        v.records,
        v.null_key_records,
        v.records_after_compaction,
        unheld.collect(),
        superseded.collect(),
        v.unheld.len(),
        v.superseded.len(),
        by_why.collect(),
    )
}

/// Whether one metadata partition's records, read from its start, hold every live segment under
/// keyed records (the core's `keyed::verify_keyed`): `(live segments, records, null-key records,
/// records after compaction, failures, superseded attempts)`; a superseded attempt is
/// `(partition, segment id, start offset, end offset, id of the attempt served, offsets)`.
#[pyfunction]
pub fn verify_keyed(py: Python<'_>, records: Vec<Rec>) -> VerdictOut {
    let records: Vec<LogRecord> = records
        .into_iter()
        .map(|(offset, timestamp_ms, key, value)| LogRecord {
            offset,
            timestamp_ms,
            key,
            value,
        })
        .collect();
    verdict_out(&py.detach(|| keyed::verify_keyed(&records)), None)
}

/// `(offset, timestamp or None, why or None)`: a named null-key record has a timestamp, an
/// undecodable one a reason.
type NamedOut = (i64, Option<i64>, Option<String>);

/// Bytes of listing [`Inspector_::push_fetch_write`] hands to Python at a time.
const LISTING_PIECE: usize = 1 << 20;

/// Which records of a live topic's metadata partition a read yields, fed the raw bytes of each
/// fetch by the models that read through it (the core's `partition_scan::FetchWindow`).
#[pyclass(module = "rlmeta._native", name = "FetchWindow")]
pub struct FetchWindow_ {
    pub(crate) window: FetchWindow,
}

#[pymethods]
impl FetchWindow_ {
    #[new]
    fn new(start: i64, end: i64) -> Self {
        FetchWindow_ {
            window: FetchWindow::new(start, end),
        }
    }

    fn next_offset(&self) -> i64 {
        self.window.next_offset()
    }

    fn done(&self) -> bool {
        self.window.done()
    }

    /// Records read so far.
    fn records(&self) -> u64 {
        self.window.records()
    }

    /// Key and value bytes of the records read so far.
    fn bytes(&self) -> u64 {
        self.window.bytes()
    }
}

/// One metadata partition of a live topic kept from its fetches for the compaction what-if
/// (the core's `inspect::FetchedLog`).
#[pyclass(module = "rlmeta._native", name = "FetchedLog")]
pub struct FetchedLog_ {
    log: inspect::FetchedLog,
}

#[pymethods]
impl FetchedLog_ {
    #[new]
    fn new(start: i64, end: i64) -> Self {
        FetchedLog_ {
            log: inspect::FetchedLog::new(start, end),
        }
    }

    /// Reads the whole batches of one fetch's bytes; returns how many records they held.
    fn push(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<u64> {
        let log = &mut self.log;
        run(py, data.len(), || log.push(data))
    }

    fn next_offset(&self) -> i64 {
        self.log.window().next_offset()
    }

    fn done(&self) -> bool {
        self.log.window().done()
    }

    fn records(&self) -> u64 {
        self.log.window().records()
    }

    fn bytes(&self) -> u64 {
        self.log.window().bytes()
    }

    /// The compaction preview of the records kept at each of `moments`, the GIL released.
    fn previews(
        &self,
        py: Python<'_>,
        config: ConfigArgs,
        moments: Vec<i64>,
    ) -> PyResult<Vec<PreviewOut>> {
        let config = config.config(py)?;
        let previews = py.detach(|| self.log.previews(config, &moments));
        Ok(previews.into_iter().map(preview_out).collect())
    }
}

/// One metadata partition of a live topic read from fetched record batches (the core's
/// `partition_scan::PartitionScan`).
#[pyclass(module = "rlmeta._native", name = "PartitionScan")]
pub struct PartitionScan_ {
    scan: PartitionScan,
}

#[pymethods]
impl PartitionScan_ {
    #[new]
    #[pyo3(signature = (start, end, named, keep = false))]
    fn new(start: i64, end: i64, named: usize, keep: bool) -> Self {
        PartitionScan_ {
            scan: PartitionScan::new(start, end, named, keep),
        }
    }

    /// Reads the whole batches of one fetch's bytes; returns how many records they held.
    fn push(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<u64> {
        let scan = &mut self.scan;
        run(py, data.len(), || scan.push(data))
    }

    fn next_offset(&self) -> i64 {
        self.scan.next_offset()
    }

    fn done(&self) -> bool {
        self.scan.done()
    }

    /// `(messages, null keys, null offsets, null timestamps, tombstones, undecodable, level,
    /// invalid level)`.
    #[allow(clippy::type_complexity)]
    fn counts(
        &self,
    ) -> (
        u64,
        u64,
        Option<(i64, i64)>,
        Option<(i64, i64)>,
        u64,
        u64,
        Option<i16>,
        Option<String>,
    ) {
        let c = self.scan.counts();
        (
            c.messages,
            c.null_keys,
            c.null_offsets,
            c.null_timestamps,
            c.tombstones,
            c.undecodable,
            c.level.map(MetadataLevel::level),
            c.invalid_level.clone(),
        )
    }

    fn named(&self) -> Vec<NamedOut> {
        self.scan
            .named()
            .iter()
            .map(|n| match n {
                Named::NullKey { offset, timestamp } => (*offset, Some(*timestamp), None),
                Named::Undecodable { offset, why } => (*offset, None, Some(why.clone())),
            })
            .collect()
    }

    /// [`verify_keyed`] of the records read, None unless kept; the failures and superseded
    /// attempts named one by one are the first `named` of each (all when None), the counts are
    /// of all.
    #[pyo3(signature = (named=None))]
    fn verify(&self, py: Python<'_>, named: Option<usize>) -> Option<VerdictOut> {
        let scan = &self.scan;
        py.detach(|| scan.verify())
            .as_ref()
            .map(|v| verdict_out(v, named))
    }
}

#[pyfunction]
pub fn cleanup_policy_name(py: Python<'_>, text: String) -> PyResult<&'static str> {
    run(py, 0, || Ok(CleanupPolicy::parse(&text)?.name()))
}

/// The topic configs of a level: `(name, value)`, value None for an override to remove.
#[pyfunction]
pub fn level_topic_configs(
    py: Python<'_>,
    level: i16,
    v1_retention_ms: i64,
    v1_segment_ms: i64,
) -> PyResult<Vec<(&'static str, Option<String>)>> {
    Ok(level_in(py, level)?.topic_configs(v1_retention_ms, v1_segment_ms))
}

#[pyfunction]
pub fn check_upgrade(
    py: Python<'_>,
    from_level: i16,
    to_level: i16,
    fresh_cluster: bool,
) -> PyResult<()> {
    let (from, to) = (level_in(py, from_level)?, level_in(py, to_level)?);
    run(py, 0, || from.check_upgrade(to, fresh_cluster))
}

/// `(writes_kip1266_values, allows_tombstones)` of a level.
#[pyfunction]
pub fn level_properties(py: Python<'_>, level: i16) -> PyResult<(bool, bool)> {
    let l = level_in(py, level)?;
    Ok((l.writes_kip1266_values(), l.allows_tombstones()))
}

#[pyfunction]
pub fn level_record_key(py: Python<'_>) -> Bound<'_, PyBytes> {
    PyBytes::new(py, feature::LEVEL_RECORD_KEY)
}

#[pyfunction]
pub fn level_record_value(py: Python<'_>, level: i16) -> PyResult<Bound<'_, PyBytes>> {
    Ok(PyBytes::new(
        py,
        feature::level_record_value(level_in(py, level)?),
    ))
}

/// The level a level record carries, None for any other record; raises for an invalid one.
#[pyfunction]
#[pyo3(signature = (key, value))]
pub fn parse_level_record(
    py: Python<'_>,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> PyResult<Option<i16>> {
    match feature::parse_level_record(key, value) {
        None => Ok(None),
        Some(r) => run(py, 0, || r.map(|l| Some(l.level()))),
    }
}

/// `(ready, null_key_records, estimated_cleanup_ms)` of the level-2 readiness check.
#[pyfunction]
#[pyo3(signature = (null_key_records, last_null_key_timestamp_ms, segment_ms, retention_ms))]
pub fn readiness(
    null_key_records: u64,
    last_null_key_timestamp_ms: Option<i64>,
    segment_ms: i64,
    retention_ms: i64,
) -> (bool, u64, Option<i64>) {
    let scan = NullKeyScan {
        null_key_records,
        last_null_key_timestamp_ms,
    };
    match scan.readiness(segment_ms, retention_ms) {
        Readiness::Ready => (true, 0, None),
        Readiness::Wait {
            null_key_records,
            estimated_cleanup_ms,
        } => (false, null_key_records, estimated_cleanup_ms),
    }
}

#[pyfunction]
pub fn safe_v1_retention_ms(
    py: Python<'_>,
    tiered_retention_ms: Vec<i64>,
    margin_ms: i64,
) -> PyResult<i64> {
    run(py, 0, || {
        feature::safe_v1_retention_ms(&tiered_retention_ms, margin_ms)
    })
}

/// Refuses a topic whose configs the backfill path cannot keep at level 1.
#[pyfunction]
pub fn check_backfill_v1(
    py: Python<'_>,
    cleanup_policy: String,
    retention_ms: i64,
) -> PyResult<()> {
    run(py, 0, || {
        feature::check_backfill_v1(&cleanup_policy, retention_ms)
    })
}

#[pyfunction]
pub fn check_v1_retention(
    py: Python<'_>,
    requested_ms: i64,
    tiered_retention_ms: Vec<i64>,
    margin_ms: i64,
    force: bool,
) -> PyResult<()> {
    run(py, 0, || {
        feature::check_v1_retention(requested_ms, &tiered_retention_ms, margin_ms, force)
    })
}

#[pyfunction]
pub fn manager_is_kip1266_capable(class_name: String) -> bool {
    feature::manager_is_kip1266_capable(&class_name)
}

#[pyfunction]
pub fn kip1266_capable_managers() -> Vec<&'static str> {
    feature::KIP1266_CAPABLE_MANAGERS.to_vec()
}

fn partition_levels(
    py: Python<'_>,
    partitions: &[(bool, Option<i16>)],
) -> PyResult<Vec<PartitionLevel>> {
    partitions
        .iter()
        .map(|(read, level)| {
            Ok(match (read, level) {
                (false, _) => PartitionLevel::Unknown,
                (true, None) => PartitionLevel::Read(None),
                (true, Some(l)) => PartitionLevel::Read(Some(level_in(py, *l)?)),
            })
        })
        .collect()
}

/// The topic's level from its partitions' `(read_to_end, level_record_level)`.
#[pyfunction]
pub fn topic_level(py: Python<'_>, partitions: Vec<(bool, Option<i16>)>) -> PyResult<i16> {
    let levels = partition_levels(py, &partitions)?;
    run(py, 0, || Ok(feature::topic_level(&levels)?.level()))
}

/// The topic's level from its partitions and its `cleanup.policy` (level 1's retention expires
/// the level records themselves).
#[pyfunction]
pub fn topic_level_with_policy(
    py: Python<'_>,
    partitions: Vec<(bool, Option<i16>)>,
    cleanup_policy: String,
) -> PyResult<i16> {
    let levels = partition_levels(py, &partitions)?;
    run(py, 0, || {
        Ok(feature::topic_level_with_policy(&levels, &cleanup_policy)?.level())
    })
}

/// The partitions that still need the level record of `target`.
#[pyfunction]
pub fn partitions_missing_level(
    py: Python<'_>,
    partitions: Vec<(bool, Option<i16>)>,
    target: i16,
) -> PyResult<Vec<usize>> {
    let levels = partition_levels(py, &partitions)?;
    Ok(feature::partitions_missing_level(
        &levels,
        level_in(py, target)?,
    ))
}

/// `(day, live_segments, append_only_records, append_only_bytes, compacted_records,
/// compacted_bytes)` points of the growth projection.
#[pyfunction]
pub fn project_growth_points(
    py: Python<'_>,
    upload_bytes_per_day: u64,
    segment_bytes: u64,
    tiered_retention_ms: i64,
    user_partitions: u32,
    days: u32,
    sample_every_days: u32,
) -> PyResult<Vec<Point>> {
    let params = GrowthParams {
        upload_bytes_per_day,
        segment_bytes,
        tiered_retention_ms,
        user_partitions,
        days,
        sample_every_days,
    };
    run(py, usize::MAX, move || {
        Ok(project_growth(&params)?
            .into_iter()
            .map(|p| {
                (
                    p.day,
                    p.live_segments,
                    p.append_only_records,
                    p.append_only_bytes,
                    p.compacted_records,
                    p.compacted_bytes,
                )
            })
            .collect())
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Store_>()?;
    m.add_class::<PartitionScan_>()?;
    m.add_class::<FetchWindow_>()?;
    m.add_class::<FetchedLog_>()?;
    m.add_class::<Inspector_>()?;
    m.add_class::<Inspection_>()?;
    m.add_class::<BatchReader>()?;
    m.add_class::<CompactionLog>()?;
    m.add_function(wrap_pyfunction!(read_checkpoint, m)?)?;
    m.add_function(wrap_pyfunction!(finalized_features, m)?)?;
    m.add_function(wrap_pyfunction!(dump_log, m)?)?;
    m.add_function(wrap_pyfunction!(dump_log_json, m)?)?;
    m.add_function(wrap_pyfunction!(dump_log_path, m)?)?;
    m.add_function(wrap_pyfunction!(record_line, m)?)?;
    m.add_function(wrap_pyfunction!(cleanup_policy_name, m)?)?;
    m.add_function(wrap_pyfunction!(preview_compaction, m)?)?;
    m.add_function(wrap_pyfunction!(preview_compaction_files, m)?)?;
    m.add_function(wrap_pyfunction!(preview_compaction_paths, m)?)?;
    m.add_function(wrap_pyfunction!(verify_keyed, m)?)?;
    m.add_function(wrap_pyfunction!(level_topic_configs, m)?)?;
    m.add_function(wrap_pyfunction!(check_upgrade, m)?)?;
    m.add_function(wrap_pyfunction!(level_properties, m)?)?;
    m.add_function(wrap_pyfunction!(level_record_key, m)?)?;
    m.add_function(wrap_pyfunction!(level_record_value, m)?)?;
    m.add_function(wrap_pyfunction!(parse_level_record, m)?)?;
    m.add_function(wrap_pyfunction!(readiness, m)?)?;
    m.add_function(wrap_pyfunction!(safe_v1_retention_ms, m)?)?;
    m.add_function(wrap_pyfunction!(check_v1_retention, m)?)?;
    m.add_function(wrap_pyfunction!(check_backfill_v1, m)?)?;
    m.add_function(wrap_pyfunction!(manager_is_kip1266_capable, m)?)?;
    m.add_function(wrap_pyfunction!(kip1266_capable_managers, m)?)?;
    m.add_function(wrap_pyfunction!(topic_level, m)?)?;
    m.add_function(wrap_pyfunction!(topic_level_with_policy, m)?)?;
    m.add_function(wrap_pyfunction!(partitions_missing_level, m)?)?;
    m.add_function(wrap_pyfunction!(project_growth_points, m)?)?;
    Ok(())
}
