//! Inspection of `__remote_log_metadata` segment files: what an operator asks of them.
//!
//! Owns: replaying the records of one metadata partition's files into a store, each segment's
//! folded lifecycle (every state its records went through, and where it stands now), and a
//! summary: records by kind (null key, KIP-1266 key, tombstone, undecodable), live segments,
//! orphans, and what Kafka's cleaner would keep if the topic were compacted now, with the live
//! segments that compacted log would no longer know. Text and JSON renderings of it. Never: I/O.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use crate::batch::{Batches, ReadOptions};
use crate::cache::{Applied, Skip, Store};
use crate::compaction::{Log, TopicConfig};
use crate::feature::MetadataLevel;
use crate::model::{SegmentState, TopicIdPartition, Uuid};
use crate::record::{Record, decode_value};

/// One segment's lifecycle as the records tell it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentLifecycle {
    pub partition: TopicIdPartition,
    pub id: Uuid,
    pub start_offset: Option<i64>,
    pub end_offset: Option<i64>,
    /// Every state a record set, in log order, with the record's offset.
    pub states: Vec<(i64, SegmentState)>,
    /// Where it stands after replay: live in this state, or gone (`None`).
    pub now: Option<SegmentState>,
}

/// Counts over the inspected records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub records: usize,
    pub null_key_records: usize,
    pub keyed_records: usize,
    pub tombstones: usize,
    pub undecodable: usize,
    /// Records a broker predating KIP-1266 could not consume (its consumer thread would stop).
    pub fatal_to_old_brokers: usize,
    pub live_segments: usize,
    pub orphans: usize,
    /// Records Kafka's cleaner would keep if the topic were compacted now.
    pub kept_by_compaction: usize,
    /// Live segments a broker replaying that compacted log would no longer know.
    pub lost_by_compaction: Vec<Uuid>,
    /// The last level record of `remote.log.metadata.version` (docs/FEATURE-LEVEL.md), if any.
    pub level: Option<LevelSeen>,
}

/// A level record found in the files: its offset and the level it carries (or why none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelSeen {
    pub offset: i64,
    pub level: crate::Result<MetadataLevel>,
}

/// The inspection of one metadata partition.
#[derive(Clone, Debug, Default)]
pub struct Inspection {
    pub segments: Vec<SegmentLifecycle>,
    pub summary: Summary,
}

fn live_ids(store: &Store) -> Vec<(Uuid, SegmentState)> {
    let mut out = Vec::new();
    for tp in store.partitions() {
        if let Some(cache) = store.partition_cache(tp) {
            out.extend(cache.segments().into_iter().map(|m| (m.id, m.state)));
        }
    }
    out
}

/// Inspects the segment files (name, bytes) of one metadata partition, in offset order.
pub fn inspect(files: &[(&str, &[u8])]) -> Inspection {
    let mut store = Store::new();
    let mut log = Log::new(TopicConfig {
        segment_records: 1000,
        ..TopicConfig::compacted()
    });
    let mut summary = Summary::default();
    let mut lifecycles: BTreeMap<Uuid, SegmentLifecycle> = BTreeMap::new();
    let mut last_ts = 0;
    for (_, bytes) in files {
        for batch in Batches::new(bytes, ReadOptions::default()).flatten() {
            let Ok(records) = batch.records() else {
                continue;
            };
            for r in records.flatten() {
                summary.records += 1;
                last_ts = last_ts.max(r.timestamp);
                log.append(
                    r.timestamp,
                    r.key.map(<[u8]>::to_vec),
                    r.value.map(<[u8]>::to_vec),
                );
                match (r.key, r.value) {
                    (None, _) => summary.null_key_records += 1,
                    (Some(_), Some(_)) => summary.keyed_records += 1,
                    (Some(_), None) => summary.tombstones += 1,
                }
                if let Some(Ok(v)) = r.value.map(decode_value) {
                    fold(&mut lifecycles, &v, r.offset);
                }
                if let Applied::Skipped(skip) = store.apply(r.offset, r.key, r.value) {
                    match &skip {
                        Skip::Undecodable(_) => summary.undecodable += 1,
                        Skip::LevelRecord(level) => {
                            summary.level = Some(LevelSeen {
                                offset: r.offset,
                                level: level.clone(),
                            });
                        }
                        _ => {}
                    }
                    if skip.fatal_to_kafka() {
                        summary.fatal_to_old_brokers += 1;
                    }
                }
            }
        }
    }
    let live = live_ids(&store);
    summary.live_segments = live.len();
    summary.orphans = store
        .partitions()
        .iter()
        .map(|tp| store.orphans(tp).len())
        .sum();
    for l in lifecycles.values_mut() {
        l.now = live.iter().find(|(id, _)| *id == l.id).map(|(_, s)| *s);
    }
    // The cleaner runs long after the last record, as it would on a topic switched to compact.
    let later = last_ts.saturating_add(30 * 86_400_000);
    log.append(
        later,
        Some(b"rlmeta-inspect-roll".to_vec()),
        Some(Vec::new()),
    );
    log.clean(later);
    let mut compacted = Store::new();
    for r in log
        .records()
        .filter(|r| r.key.as_deref() != Some(b"rlmeta-inspect-roll"))
    {
        compacted.apply(r.offset, r.key.as_deref(), r.value.as_deref());
    }
    summary.kept_by_compaction = log.len().saturating_sub(1);
    let still: Vec<Uuid> = live_ids(&compacted).into_iter().map(|(id, _)| id).collect();
    summary.lost_by_compaction = live
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !still.contains(id))
        .collect();
    let mut segments: Vec<SegmentLifecycle> = lifecycles.into_values().collect();
    segments.sort_by(|a, b| {
        (&a.partition, a.start_offset, a.id).cmp(&(&b.partition, b.start_offset, b.id))
    });
    Inspection { segments, summary }
}

fn fold(
    lifecycles: &mut BTreeMap<Uuid, SegmentLifecycle>,
    v: &crate::record::Value<'_>,
    offset: i64,
) {
    let (entry, id, state, start, end) = match &v.record {
        Record::Segment(s) => (
            &s.remote_log_segment_id.topic_id_partition,
            s.remote_log_segment_id.id,
            s.remote_log_segment_state,
            Some(s.start_offset),
            Some(s.end_offset),
        ),
        Record::Update(u) => (
            &u.remote_log_segment_id.topic_id_partition,
            u.remote_log_segment_id.id,
            u.remote_log_segment_state,
            None,
            None,
        ),
        _ => return,
    };
    let l = lifecycles.entry(id).or_insert_with(|| SegmentLifecycle {
        partition: entry.to_topic_id_partition(),
        id,
        start_offset: None,
        end_offset: None,
        states: Vec::new(),
        now: None,
    });
    l.start_offset = l.start_offset.or(start);
    l.end_offset = l.end_offset.or(end);
    if let Some(state) = SegmentState::from_id(state) {
        l.states.push((offset, state));
    }
}

impl Inspection {
    /// The per-segment lifecycle and the summary, as text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "Segments ({}):", self.segments.len());
        for l in &self.segments {
            let path: Vec<String> = l
                .states
                .iter()
                .map(|(o, s)| format!("{}@{o}", s.name()))
                .collect();
            let range = match (l.start_offset, l.end_offset) {
                (Some(s), Some(e)) => format!("[{s}..{e}]"),
                _ => "[segment record missing]".to_owned(),
            };
            let now = l
                .now
                .map_or_else(|| "gone".to_owned(), |s| format!("live, {}", s.name()));
            let _ = writeln!(
                out,
                "  {} {} {range}: {} -> {now}",
                l.partition,
                l.id,
                path.join(" -> ")
            );
        }
        let s = &self.summary;
        let _ = writeln!(out, "Summary:");
        let _ = writeln!(
            out,
            "  records: {} ({} null-key, {} keyed, {} tombstones, {} undecodable)",
            s.records, s.null_key_records, s.keyed_records, s.tombstones, s.undecodable
        );
        let _ = writeln!(
            out,
            "  records that would stop a pre-KIP-1266 broker's metadata consumer: {}",
            s.fatal_to_old_brokers
        );
        let _ = writeln!(
            out,
            "  live segments: {}, orphaned updates: {}",
            s.live_segments, s.orphans
        );
        let _ = writeln!(
            out,
            "  if compacted now: {} of {} records kept; live segments lost: {}",
            s.kept_by_compaction,
            s.records,
            s.lost_by_compaction.len()
        );
        let _ = match &s.level {
            None => writeln!(
                out,
                "  remote.log.metadata.version: no level record (a topic written by stock Kafka is at level 0)"
            ),
            Some(LevelSeen {
                offset,
                level: Ok(l),
            }) => writeln!(
                out,
                "  remote.log.metadata.version: level {} (level record at offset {offset})",
                l.level()
            ),
            Some(LevelSeen {
                offset,
                level: Err(e),
            }) => writeln!(
                out,
                "  remote.log.metadata.version: unknown, the level record at offset {offset} is invalid: {e}"
            ),
        };
        if !s.lost_by_compaction.is_empty() {
            let _ = writeln!(
                out,
                "  (null-key records are discarded by the cleaner: a log written before KIP-1266 must not be compacted)"
            );
        }
        out
    }

    pub fn to_json(&self) -> Json {
        let s = &self.summary;
        json!({
            "segments": self.segments.iter().map(|l| json!({
                "topicIdPartition": {"id": l.partition.topic_id.to_string(), "name": l.partition.topic, "partition": l.partition.partition},
                "id": l.id.to_string(), "startOffset": l.start_offset, "endOffset": l.end_offset,
                "states": l.states.iter().map(|(o, st)| json!({"offset": o, "state": st.name()})).collect::<Vec<_>>(),
                "now": l.now.map(|st| st.name()),
            })).collect::<Vec<_>>(),
            "summary": {
                "records": s.records, "nullKeyRecords": s.null_key_records, "keyedRecords": s.keyed_records,
                "tombstones": s.tombstones, "undecodable": s.undecodable, "fatalToOldBrokers": s.fatal_to_old_brokers,
                "liveSegments": s.live_segments, "orphans": s.orphans, "keptByCompaction": s.kept_by_compaction,
                "lostByCompaction": s.lost_by_compaction.iter().map(Uuid::to_string).collect::<Vec<_>>(),
                "level": s.level.as_ref().map(|l| match &l.level {
                    Ok(level) => json!({"offset": l.offset, "level": level.level()}),
                    Err(e) => json!({"offset": l.offset, "error": {"code": e.code(), "kind": e.kind().name(), "message": e.to_string()}}),
                }),
            }
        })
    }
}
