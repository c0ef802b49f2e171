//! The core's `reconcile` for Python: the ledger a replay builds, the layouts, and the
//! classification of a listing.
//!
//! Owns: converting these to plain tuples and lists (`rlmeta._reconcile` makes dataclasses of
//! them), and releasing the GIL around a replay or a classification. Never: a rule; every class,
//! every total and the cleanup plan are the core's.

use pyo3::prelude::*;
use rlmeta::batch::{Batches, ReadOptions};
use rlmeta::reconcile::{
    self, Classifier, Emitted, Layout, Ledger, Object, ObjectFinding, PRESETS, Params,
};

use crate::run;

/// `(offset, key, value)`.
type KV = (i64, Option<Vec<u8>>, Option<Vec<u8>>);
/// `(topic_id, topic, partition)`.
type Tp = (String, String, i32);
/// A segment's verdict: `(id, partition, class, state, since_ms, (start, end, size),
/// kafka_knows, objects, object_bytes, missing_files, covered, why)`.
type Seg = (
    String,
    u32,
    &'static str,
    i8,
    i64,
    (Option<i64>, Option<i64>, Option<i32>),
    bool,
    Vec<u32>,
    u64,
    Vec<String>,
    bool,
    String,
);
/// An object's verdict: `(class, segment, segment_id, partition, file, safe, note)`.
type Obj = (
    &'static str,
    Option<u32>,
    Option<String>,
    Option<u32>,
    String,
    bool,
    Option<String>,
);
/// `(partition or None, class, segments, objects, object_bytes, segment_bytes)`.
type Total = (Option<u32>, &'static str, u64, u64, u64, u64);
/// `(name, templates, size_file, required_files)`.
type LayoutOut = (String, Vec<String>, Option<String>, Vec<String>);
type Result_ = (Vec<Tp>, Vec<Seg>, Vec<Obj>, Vec<Total>, Vec<u32>, Vec<u32>);
/// An object given back by the streaming classifier: `(ordinal, key, size, last_modified_ms)`
/// and its verdict as [`Obj`].
type Kept = ((u32, String, u64, i64), Obj);
/// The end of a streaming classification: `(partitions, segments, totals, needs_person,
/// objects that waited, objects fed)`.
type Finish = (Vec<Tp>, Vec<Seg>, Vec<Total>, Vec<u32>, Vec<Kept>, u64);

fn kept(e: Emitted) -> Kept {
    (
        (
            e.ordinal,
            e.object.key,
            e.object.size,
            e.object.last_modified_ms,
        ),
        obj(e.finding),
    )
}

fn obj(o: ObjectFinding) -> Obj {
    (
        o.class.name(),
        o.segment,
        o.segment_id.map(|u| u.to_string()),
        o.partition,
        o.file,
        o.safe_to_delete,
        o.note,
    )
}

fn segs(v: Vec<reconcile::SegmentFinding>) -> Vec<Seg> {
    v.into_iter()
        .map(|s| {
            (
                s.id.to_string(),
                s.partition,
                s.class.name(),
                s.state.id(),
                s.since_ms,
                (s.start_offset, s.end_offset, s.segment_size_in_bytes),
                s.kafka_knows,
                s.objects,
                s.object_bytes,
                s.missing_files,
                s.covered,
                s.why,
            )
        })
        .collect()
}

fn tps(v: &[rlmeta::model::TopicIdPartition]) -> Vec<Tp> {
    v.iter()
        .map(|t| (t.topic_id.to_string(), t.topic.clone(), t.partition))
        .collect()
}

fn totals(
    t: &std::collections::BTreeMap<(Option<u32>, &'static str), reconcile::Tally>,
) -> Vec<Total> {
    t.iter()
        .map(|((p, c), t)| {
            (
                *p,
                *c,
                t.segments,
                t.objects,
                t.object_bytes,
                t.segment_bytes,
            )
        })
        .collect()
}

/// What a replay of metadata records tells about every segment they name (the core's `Ledger`).
#[pyclass(module = "rlmeta._native", name = "Ledger")]
pub struct Ledger_ {
    ledger: Ledger,
    /// The streaming classification under way (`classify_start` .. `classify_finish`).
    classifier: Option<Classifier>,
}

#[pymethods]
impl Ledger_ {
    #[new]
    fn new() -> Self {
        Ledger_ {
            ledger: Ledger::new(),
            classifier: None,
        }
    }

    /// Replays `(offset, key, value)` records in order, with the GIL released.
    fn apply_many(&mut self, py: Python<'_>, records: Vec<KV>) {
        let l = &mut self.ledger;
        py.detach(|| {
            for (o, k, v) in &records {
                l.apply(*o, k.as_deref(), v.as_deref());
            }
        });
    }

    /// Replays the records of one fetch's raw bytes that `window` reads (the core's
    /// `FetchWindow`, as the operator tools' models read a live topic); returns how many.
    fn apply_fetch(
        &mut self,
        py: Python<'_>,
        window: &mut crate::api::FetchWindow_,
        data: &[u8],
    ) -> PyResult<u64> {
        let (l, window) = (&mut self.ledger, &mut window.window);
        let before = window.records();
        run(py, data.len(), || {
            window.push(data, |r| l.apply(r.offset, r.key, r.value))
        })?;
        Ok(window.records() - before)
    }

    /// [`Ledger_::apply_file`] of the file at `path`, read in chunks with the GIL released;
    /// an OSError if it does not read.
    fn apply_path(&mut self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<usize> {
        let l = &mut self.ledger;
        Ok(py.detach(|| crate::files::each_record(&path, |r| l.apply(r.offset, r.key, r.value)))?)
    }

    /// Replays every record of a segment file image; returns how many were read.
    fn apply_file(&mut self, py: Python<'_>, data: &[u8]) -> usize {
        let l = &mut self.ledger;
        py.detach(|| {
            let mut n = 0;
            for batch in Batches::new(data, ReadOptions::default()).flatten() {
                let Ok(records) = batch.records() else {
                    continue;
                };
                for r in records.flatten() {
                    l.apply(r.offset, r.key, r.value);
                    n += 1;
                }
            }
            n
        })
    }

    /// Records replayed so far.
    fn records(&self) -> u64 {
        self.ledger.records()
    }

    /// The newest event timestamp any record carried (None before any).
    fn newest_event_ms(&self) -> Option<i64> {
        self.ledger.newest_event_ms()
    }

    /// Classifies `(key, size, last_modified_ms)` objects against this ledger.
    #[pyo3(signature = (listing, layout, now_ms, grace_ms, metadata_as_of_ms=None, listing_as_of_ms=None))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments, one per Params field
    fn reconcile(
        &self,
        py: Python<'_>,
        listing: Vec<(String, u64, i64)>,
        layout: &str,
        now_ms: i64,
        grace_ms: i64,
        metadata_as_of_ms: Option<i64>,
        listing_as_of_ms: Option<i64>,
    ) -> PyResult<Result_> {
        let layout = Layout::parse(layout).map_err(|e| crate::to_py_err(py, &e))?;
        let ledger = &self.ledger;
        run(py, usize::MAX, move || {
            let listing: Vec<Object> = listing
                .into_iter()
                .map(|(key, size, last_modified_ms)| Object {
                    key,
                    size,
                    last_modified_ms,
                })
                .collect();
            let r = reconcile::reconcile(
                ledger,
                &listing,
                &layout,
                Params {
                    now_ms,
                    grace_ms,
                    metadata_as_of_ms,
                    listing_as_of_ms,
                },
            )?;
            Ok((
                tps(&r.partitions),
                segs(r.segments),
                r.objects.into_iter().map(obj).collect(),
                totals(&r.totals),
                r.safe_to_delete,
                r.needs_person,
            ))
        })
    }

    /// Writes the ledger's segments as the CSV the emitted query joins (the core's
    /// `sql::ledger_rows`, header first) to `path`; returns the rows written.
    fn write_sql_ledger(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<usize> {
        let ledger = &self.ledger;
        py.detach(|| -> std::io::Result<usize> {
            use std::io::Write;
            let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
            writeln!(out, "{}", reconcile::sql::LEDGER_COLUMNS)?;
            let mut n = 0;
            for row in reconcile::sql::ledger_rows(ledger) {
                out.write_all(row.as_bytes())?;
                n += 1;
            }
            out.flush()?;
            Ok(n)
        })
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))
    }

    /// Starts a classification fed a chunk at a time (the core's `Classifier`, live objects not
    /// given back); a previous one is dropped.
    #[pyo3(signature = (layout, now_ms, grace_ms, metadata_as_of_ms=None, listing_as_of_ms=None))]
    fn classify_start(
        &mut self,
        py: Python<'_>,
        layout: &str,
        now_ms: i64,
        grace_ms: i64,
        metadata_as_of_ms: Option<i64>,
        listing_as_of_ms: Option<i64>,
    ) -> PyResult<()> {
        let layout = Layout::parse(layout).map_err(|e| crate::to_py_err(py, &e))?;
        let p = Params {
            now_ms,
            grace_ms,
            metadata_as_of_ms,
            listing_as_of_ms,
        };
        let c = Classifier::new(&self.ledger, layout, p, false)
            .map_err(|e| crate::to_py_err(py, &e))?;
        self.classifier = Some(c);
        Ok(())
    }

    /// Feeds the next `(key, size, last_modified_ms)` objects; returns those known not live.
    fn classify_feed(
        &mut self,
        py: Python<'_>,
        chunk: Vec<(String, u64, i64)>,
    ) -> PyResult<Vec<Kept>> {
        let Ledger_ { ledger, classifier } = self;
        let Some(c) = classifier.as_mut() else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "classify_feed before classify_start",
            ));
        };
        run(py, usize::MAX, move || {
            let chunk = chunk
                .into_iter()
                .map(|(key, size, last_modified_ms)| Object {
                    key,
                    size,
                    last_modified_ms,
                })
                .collect();
            Ok(c.feed(ledger, chunk)?.into_iter().map(kept).collect())
        })
    }

    /// Ends the classification: the segment side, the objects that waited, the totals.
    fn classify_finish(&mut self, py: Python<'_>) -> PyResult<Finish> {
        let Some(c) = self.classifier.take() else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "classify_finish before classify_start",
            ));
        };
        let ledger = &self.ledger;
        run(py, usize::MAX, move || {
            let f = c.finish(ledger)?;
            Ok((
                tps(&f.partitions),
                segs(f.segments),
                totals(&f.totals),
                f.needs_person,
                f.emitted.into_iter().map(kept).collect(),
                f.objects,
            ))
        })
    }
}

/// The layout presets: `(name, description, spec)`.
#[pyfunction]
fn layout_presets() -> Vec<(&'static str, &'static str, &'static str)> {
    PRESETS.to_vec()
}

/// A layout (a preset name or a spec) parsed: `(name, templates, size_file, required_files)`.
#[pyfunction]
fn parse_layout(py: Python<'_>, spec: &str) -> PyResult<LayoutOut> {
    run(py, 0, || {
        let l = Layout::parse(spec)?;
        Ok((
            l.name,
            l.templates.into_iter().map(|t| t.text).collect(),
            l.size_file,
            l.required_files,
        ))
    })
}

/// The reconciliation as one SQL query over an S3 Inventory table (the core's `sql::query`).
#[pyfunction]
#[pyo3(signature = (layout, inventory_table, ledger_table, bucket, prefix, url_encoded_keys, now_ms, grace_ms,
                    metadata_as_of_ms=None, listing_as_of_ms=None))]
#[allow(clippy::too_many_arguments)]
fn reconcile_sql(
    py: Python<'_>,
    layout: &str,
    inventory_table: &str,
    ledger_table: &str,
    bucket: &str,
    prefix: &str,
    url_encoded_keys: bool,
    now_ms: i64,
    grace_ms: i64,
    metadata_as_of_ms: Option<i64>,
    listing_as_of_ms: Option<i64>,
) -> PyResult<String> {
    run(py, 0, || {
        let target = reconcile::sql::Target {
            inventory_table,
            ledger_table,
            bucket,
            prefix,
            url_encoded_keys,
        };
        let p = Params {
            now_ms,
            grace_ms,
            metadata_as_of_ms,
            listing_as_of_ms,
        };
        reconcile::sql::query(&Layout::parse(layout)?, &target, p)
    })
}

/// Athena's table over the ledger CSV files under `location`.
#[pyfunction]
fn reconcile_sql_ledger_ddl(py: Python<'_>, table: &str, location: &str) -> PyResult<String> {
    run(py, 0, || reconcile::sql::ledger_ddl(table, location))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Ledger_>()?;
    m.add_function(wrap_pyfunction!(layout_presets, m)?)?;
    m.add_function(wrap_pyfunction!(parse_layout, m)?)?;
    m.add_function(wrap_pyfunction!(reconcile_sql, m)?)?;
    m.add_function(wrap_pyfunction!(reconcile_sql_ledger_ddl, m)?)?;
    Ok(())
}
