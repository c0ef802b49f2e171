//! The core's write-level, fresh-topic, retention-safety and cleanup-estimate rules
//! (`rlmeta::feature`) for Python: what the migration tool decides with.
//!
//! Owns: converting raw config maps (name to value; a value the cluster did not give is left out)
//! and levels to and from plain tuples. Never: a rule; every level, default and verdict is the
//! core's, the same functions the broker plugin calls over JNI.

use std::collections::{BTreeMap, HashMap};

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rlmeta::feature::{self, Configs, LevelMove, MetadataLevel, PartitionLevel};

use crate::run;

/// Raw configs per resource, as the host read them.
type RawConfigs = HashMap<String, HashMap<String, Option<String>>>;

fn configs_in(raw: &HashMap<String, Option<String>>) -> Configs {
    raw.iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
        .collect()
}

fn resources_in(raw: &RawConfigs) -> BTreeMap<String, Configs> {
    raw.iter()
        .map(|(n, c)| (n.clone(), configs_in(c)))
        .collect()
}

fn partitions_in(partitions: &[(bool, Option<i16>)]) -> rlmeta::Result<Vec<PartitionLevel>> {
    partitions
        .iter()
        .map(|&(read, level)| match (read, level) {
            (false, _) => Ok(PartitionLevel::Unknown),
            (true, l) => l
                .map(MetadataLevel::from_level)
                .transpose()
                .map(PartitionLevel::Read),
        })
        .collect()
}

/// The level writes use and the tool reads (None: unknown), from the finalized feature level,
/// each partition's `(read_to_end, level_record_level)` and the topic's cleanup.policy.
#[pyfunction]
#[pyo3(signature = (finalized, partitions, cleanup_policy))]
pub fn write_level(
    py: Python<'_>,
    finalized: Option<i16>,
    partitions: Vec<(bool, Option<i16>)>,
    cleanup_policy: Option<String>,
) -> PyResult<Option<i16>> {
    run(py, 0, || {
        let levels = partitions_in(&partitions)?;
        let level = feature::write_level(finalized, &levels, cleanup_policy.as_deref())?;
        Ok(level.map(MetadataLevel::level))
    })
}

/// `(level, configs, level_record_value or None)`.
type Plan<'py> = (
    i16,
    Vec<(&'static str, String)>,
    Option<Bound<'py, PyBytes>>,
);

/// The plan for a missing `__remote_log_metadata`.
#[pyfunction]
#[pyo3(signature = (finalized, metadata_topic_retention_ms=-1))]
pub fn fresh_topic_plan(
    py: Python<'_>,
    finalized: Option<i16>,
    metadata_topic_retention_ms: i64,
) -> PyResult<Plan<'_>> {
    let plan = run(py, 0, || {
        feature::fresh_topic_plan(finalized, metadata_topic_retention_ms)
    })?;
    let record = plan.level_record.map(|v| PyBytes::new(py, v));
    Ok((plan.level.level(), plan.configs, record))
}

/// Where a move to `target` sets the level: `(level to finalize or None, [index of each
/// partition to write the level record to])`; `(None, [])` when done.
#[pyfunction]
pub fn level_move(
    py: Python<'_>,
    feature_supported: bool,
    finalized: Option<i16>,
    partitions: Vec<(bool, Option<i16>)>,
    target: i16,
) -> PyResult<(Option<i16>, Vec<usize>)> {
    run(py, 0, || {
        let levels = partitions_in(&partitions)?;
        let target = MetadataLevel::from_level(target)?;
        Ok(
            match feature::level_move(feature_supported, finalized, &levels, target)? {
                LevelMove::Finalize(l) => (Some(l.level()), Vec::new()),
                LevelMove::Records(p) => (None, p),
                LevelMove::Done => (None, Vec::new()),
            },
        )
    })
}

/// `(safe, safe_ms, margin_ms, [(topic, retention_ms)], reasons)`; raises the refusal unless
/// safe or `force`.
type Safety = (bool, Option<i64>, i64, Vec<(String, i64)>, Vec<String>);

#[pyfunction]
#[pyo3(signature = (requested_ms, topics, brokers, force=false))]
pub fn check_v1_retention_configs(
    py: Python<'_>,
    requested_ms: i64,
    topics: RawConfigs,
    brokers: RawConfigs,
    force: bool,
) -> PyResult<Safety> {
    let (topics, brokers) = (resources_in(&topics), resources_in(&brokers));
    let v = run(py, 0, || {
        feature::check_v1_retention_configs(requested_ms, &topics, &brokers, force)
    })?;
    let tiered = v
        .tiered
        .into_iter()
        .map(|t| (t.topic, t.retention_ms))
        .collect();
    Ok((v.safe, v.safe_ms, v.margin_ms, tiered, v.reasons))
}

/// `(segment_ms, retention_ms, min_compaction_lag_ms, expected_deletion_ms)` of the metadata
/// topic's raw configs.
#[pyfunction]
pub fn cleanup_timing(
    py: Python<'_>,
    topic: HashMap<String, Option<String>>,
    brokers: RawConfigs,
) -> PyResult<(i64, i64, i64, Option<i64>)> {
    let (topic, brokers) = (configs_in(&topic), resources_in(&brokers));
    let t = run(py, 0, || feature::cleanup_timing(&topic, &brokers))?;
    Ok((
        t.segment_ms,
        t.retention_ms,
        t.min_compaction_lag_ms,
        t.expected_deletion_ms,
    ))
}

/// segment.ms + retention.ms, None when infinite.
#[pyfunction]
pub fn expected_deletion_ms(segment_ms: i64, retention_ms: i64) -> Option<i64> {
    feature::expected_deletion_ms(segment_ms, retention_ms)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(write_level, m)?)?;
    m.add_function(wrap_pyfunction!(fresh_topic_plan, m)?)?;
    m.add_function(wrap_pyfunction!(level_move, m)?)?;
    m.add_function(wrap_pyfunction!(check_v1_retention_configs, m)?)?;
    m.add_function(wrap_pyfunction!(cleanup_timing, m)?)?;
    m.add_function(wrap_pyfunction!(expected_deletion_ms, m)?)?;
    Ok(())
}
