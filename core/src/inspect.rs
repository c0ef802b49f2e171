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
    let mut inspector = Inspector::new();
    for (_, bytes) in files {
        inspector.push_file(bytes);
    }
    inspector.finish()
}

/// An inspection fed record by record (a live topic read by a host) or file by file.
#[derive(Clone, Debug)]
pub struct Inspector {
    store: Store,
    log: Log,
    summary: Summary,
    lifecycles: BTreeMap<Uuid, SegmentLifecycle>,
    last_ts: i64,
}

impl Default for Inspector {
    fn default() -> Self {
        Inspector::new()
    }
}

impl Inspector {
    pub fn new() -> Inspector {
        Inspector {
            store: Store::new(),
            log: Log::new(TopicConfig {
                segment_records: 1000,
                ..TopicConfig::compacted()
            }),
            summary: Summary::default(),
            lifecycles: BTreeMap::new(),
            last_ts: 0,
        }
    }

    /// Every record of a segment file image (batches that do not read are skipped, as
    /// kafka-dump-log skips them).
    pub fn push_file(&mut self, bytes: &[u8]) {
        for batch in Batches::new(bytes, ReadOptions::default()).flatten() {
            let Ok(records) = batch.records() else {
                continue;
            };
            for r in records.flatten() {
                self.push(r.offset, r.timestamp, r.key, r.value);
            }
        }
    }

    /// One record of the metadata partition, in offset order; returns what replay did with it.
    pub fn push(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Applied {
        let summary = &mut self.summary;
        summary.records += 1;
        self.last_ts = self.last_ts.max(timestamp);
        self.log.append(
            timestamp,
            key.map(<[u8]>::to_vec),
            value.map(<[u8]>::to_vec),
        );
        match (key, value) {
            (None, _) => summary.null_key_records += 1,
            (Some(_), Some(_)) => summary.keyed_records += 1,
            (Some(_), None) => summary.tombstones += 1,
        }
        if let Some(Ok(v)) = value.map(decode_value) {
            fold(&mut self.lifecycles, &v, offset);
        }
        let applied = self.store.apply(offset, key, value);
        if let Applied::Skipped(skip) = &applied {
            match skip {
                Skip::Undecodable(_) => summary.undecodable += 1,
                Skip::LevelRecord(level) => {
                    summary.level = Some(LevelSeen {
                        offset,
                        level: level.clone(),
                    });
                }
                _ => {}
            }
            if skip.fatal_to_kafka() {
                summary.fatal_to_old_brokers += 1;
            }
        }
        applied
    }

    /// The replayed store so far.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The lifecycles and the summary, with what the cleaner would keep long after the last
    /// record.
    pub fn finish(self) -> Inspection {
        let Inspector {
            store,
            mut log,
            mut summary,
            lifecycles,
            last_ts,
        } = self;
        let mut lifecycles = lifecycles;
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
}

/// A live segment stuck in a transient state: its copy or deletion started and has not
/// finished for longer than the threshold the host asked about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    pub partition: TopicIdPartition,
    pub id: Uuid,
    pub state: SegmentState,
    pub since_ms: i64,
}

/// Live segments in COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED whose last event is older
/// than `now_ms - threshold_ms` (an upload or deletion that died; remote data may be dangling).
pub fn stuck_segments(store: &Store, now_ms: i64, threshold_ms: i64) -> Vec<Stuck> {
    let limit = now_ms.saturating_sub(threshold_ms);
    let mut out = Vec::new();
    for tp in store.partitions() {
        let Some(cache) = store.partition_cache(tp) else {
            continue;
        };
        for m in cache.segments() {
            let transient = matches!(
                m.state,
                SegmentState::CopySegmentStarted | SegmentState::DeleteSegmentStarted
            );
            if transient && m.event_timestamp_ms < limit {
                out.push(Stuck {
                    partition: tp.clone(),
                    id: m.id,
                    state: m.state,
                    since_ms: m.event_timestamp_ms,
                });
            }
        }
    }
    out
}

/// Two live segments of one user partition whose offset ranges overlap (uploads by two leaders
/// of the same data, or a retried upload whose first attempt was never deleted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlap {
    pub partition: TopicIdPartition,
    pub first: (Uuid, i64, i64),
    pub second: (Uuid, i64, i64),
}

/// Every overlapping pair of live segments, by start offset.
pub fn overlapping_segments(store: &Store) -> Vec<Overlap> {
    let mut out = Vec::new();
    for tp in store.partitions() {
        let Some(cache) = store.partition_cache(tp) else {
            continue;
        };
        let segs = cache.segments();
        for (i, a) in segs.iter().enumerate() {
            // Sorted by start offset: only the segments starting before `a` ends can overlap it.
            for b in segs
                .iter()
                .skip(i + 1)
                .take_while(|b| b.start_offset <= a.end_offset)
            {
                {
                    out.push(Overlap {
                        partition: tp.clone(),
                        first: (a.id, a.start_offset, a.end_offset),
                        second: (b.id, b.start_offset, b.end_offset),
                    });
                }
            }
        }
    }
    out
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
