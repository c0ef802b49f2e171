//! `rlmeta-conformance --plan-logs N SEED`: random broker lives (one user partition) written
//! through rlmeta's planner at levels 0, 1 and 2 (and N/2 deposed leaders' late backfills:
//! `crate::deposed`), printed as a file for the interop harness's
//! `PlanProperty`, which replays each log in Kafka 4.4.0's own store and, compacted by Kafka's own
//! cleaner at every cut, checks that it answers as the whole log does. The planner is the code
//! under test here; this file only drives it (events, refusals) and records what the script
//! meant (which segments are live, which have their remote data deleted).
//!
//! Events: uploads (one or two leader epochs), leader changes with overlapping re-uploads,
//! failed copies cleaned up (or not) and retried by the same epoch with a new id, retention
//! deletions (oldest first), out-of-order deletions by the current (later) epoch, some left at
//! DELETE_SEGMENT_STARTED, tiered-storage disablement (core/src/tiered.rs: `delete` deletes every
//! segment through the planner, `retain` none; then re-enabled), and partition deletion.
//! Values at levels 1-2 are version 1, which Kafka 4.4.0 cannot read: each record also carries
//! the same record at version 0 (`valueV0`, re-encoded by rlmeta's codec, whose version-0 output
//! the interop tests check byte for byte against Kafka's serde).

use std::collections::BTreeMap;

use rlmeta::cache::{SegmentMetadata, Store};
use rlmeta::feature::MetadataLevel;
use rlmeta::json::to_hex;
use rlmeta::model::{PartitionDeleteState, SegmentState, TopicIdPartition, Uuid};
use rlmeta::plan::{Event, SegmentEvent};
use rlmeta::record::{PARTITION_DELETE_TAG_DEFAULTS, UPDATE_TAG_DEFAULTS};
use rlmeta::tiered::{DisablePolicy, Tiering, segments_to_delete};
use rlmeta::{ErrorKind, Record, decode_value};
use serde_json::{Value as Json, json};

use crate::sample::Rng;

struct Life {
    rng: Rng,
    tp: TopicIdPartition,
    level: MetadataLevel,
    store: Store,
    /// `[key, value (as planned), valueV0, event index]` per record.
    records: Vec<Json>,
    event: usize,
    kinds: BTreeMap<&'static str, u64>,
    epoch: i32,
    next_offset: i64,
    next_id: i64,
    segments: BTreeMap<Uuid, SegmentState>,
    /// Segment id -> index of the first record of its DELETE_SEGMENT_FINISHED (data gone).
    data_deleted: BTreeMap<Uuid, usize>,
    partition_deleted: bool,
    tiering: Tiering,
    refused: u64,
}

/// The same record at version 0: the KIP-1266 fields (`brokerLeaderEpoch`, `EndOffset`), which
/// version 0 cannot carry and Kafka 4.4.0's store does not use, set to their defaults.
pub(crate) fn v0(value: &[u8]) -> Result<Vec<u8>, String> {
    let mut v =
        decode_value(value).map_err(|e| format!("the planner wrote an unreadable value: {e}"))?;
    v.version = 0;
    match &mut v.record {
        Record::Segment(s) => s.broker_leader_epoch = 0,
        Record::Snapshot(s) => s.broker_leader_epoch = 0,
        Record::Update(u) => (u.broker_leader_epoch, u.end_offset) = UPDATE_TAG_DEFAULTS,
        Record::PartitionDelete(d) => {
            (d.broker_leader_epoch, d.end_offset) = PARTITION_DELETE_TAG_DEFAULTS;
        }
    }
    v.encode()
        .map_err(|e| format!("re-encoding at version 0: {e}"))
}

impl Life {
    fn plan(&mut self, kind: &'static str, e: Event) -> Result<bool, String> {
        self.event += 1;
        match self.store.plan(&e, self.level) {
            Ok(planned) => {
                *self.kinds.entry(kind).or_default() += 1;
                for p in planned {
                    let key = p.key.format();
                    let offset = self.records.len() as i64;
                    self.store
                        .apply(offset, Some(key.as_bytes()), p.value.as_deref());
                    let (value, value0) = match &p.value {
                        Some(v) => (Json::from(to_hex(v)), Json::from(to_hex(&v0(v)?))),
                        None => (Json::Null, Json::Null),
                    };
                    self.records.push(json!([key, value, value0, self.event]));
                }
                Ok(true)
            }
            Err(err) if err.kind() == ErrorKind::InvalidState => {
                self.refused += 1;
                Ok(false)
            }
            Err(err) => Err(format!("the planner failed on {kind}: {err}")),
        }
    }

    fn seg_event(&self, id: Uuid) -> SegmentEvent {
        SegmentEvent {
            partition: self.tp.clone(),
            segment_id: id,
            broker_id: 1,
            event_timestamp_ms: 1_000 + self.records.len() as i64,
            custom_metadata: None,
            broker_leader_epoch: self.epoch,
        }
    }

    fn copy_started(
        &mut self,
        kind: &'static str,
        start: i64,
        len: i64,
        epochs: Vec<(i32, i64)>,
    ) -> Result<Option<Uuid>, String> {
        let id = Uuid::new(self.next_id, -self.next_id);
        self.next_id += 1;
        let segment = SegmentMetadata {
            id,
            start_offset: start,
            end_offset: start + len,
            broker_id: 1,
            max_timestamp_ms: 1_000,
            event_timestamp_ms: 1_000 + self.records.len() as i64,
            leader_epochs: epochs.into(),
            segment_size_in_bytes: 1024,
            custom_metadata: None,
            state: SegmentState::CopySegmentStarted,
            txn_index_empty: true,
            broker_leader_epoch: self.epoch,
        };
        let ok = self.plan(
            kind,
            Event::CopyStarted {
                partition: self.tp.clone(),
                segment,
            },
        )?;
        if ok {
            self.segments.insert(id, SegmentState::CopySegmentStarted);
        }
        Ok(ok.then_some(id))
    }

    fn update(&mut self, id: Uuid, state: SegmentState) -> Result<(), String> {
        let e = self.seg_event(id);
        let first = self.records.len();
        let (kind, event) = match state {
            SegmentState::CopySegmentFinished => ("copyFinished", Event::CopyFinished(e)),
            SegmentState::DeleteSegmentStarted => ("deleteStarted", Event::DeleteStarted(e)),
            _ => ("deleteFinished", Event::DeleteFinished(e)),
        };
        if self.plan(kind, event)? {
            if state == SegmentState::DeleteSegmentFinished {
                self.segments.remove(&id);
                self.data_deleted.entry(id).or_insert(first);
            } else if let Some(s) = self.segments.get_mut(&id) {
                *s = state;
            }
        }
        Ok(())
    }

    fn delete(&mut self, id: Uuid, finish: bool) -> Result<(), String> {
        self.update(id, SegmentState::DeleteSegmentStarted)?;
        if finish {
            self.update(id, SegmentState::DeleteSegmentFinished)?;
        }
        Ok(())
    }

    fn live(&self) -> Vec<Uuid> {
        self.segments.keys().copied().collect()
    }

    fn partition_delete(&mut self, state: PartitionDeleteState) -> Result<bool, String> {
        let e = Event::PartitionDelete {
            partition: self.tp.clone(),
            state,
            broker_id: 1,
            event_timestamp_ms: 1_000 + self.records.len() as i64,
            broker_leader_epoch: self.epoch,
        };
        self.plan("partitionDelete", e)
    }

    fn step(&mut self) -> Result<(), String> {
        let arg = self.rng.below(1 << 16);
        match self.rng.below(14) {
            0..=3 => {
                let len = 10 + (arg % 20) as i64;
                let start = self.next_offset;
                let epochs = if arg % 5 == 0 && self.epoch > 0 {
                    vec![(self.epoch - 1, start), (self.epoch, start + len / 2)]
                } else {
                    vec![(self.epoch, start)]
                };
                if let Some(id) = self.copy_started("copyStarted", start, len, epochs)? {
                    if arg % 11 != 0 {
                        self.update(id, SegmentState::CopySegmentFinished)?;
                    }
                    self.next_offset = start + len + 1;
                }
            }
            4 | 5 => {
                self.epoch += 1;
                *self.kinds.entry("leader change").or_default() += 1;
                if arg % 2 == 0 && self.next_offset > 15 {
                    let start = self.next_offset - 15 + (arg % 5) as i64;
                    let len = 14 - (arg % 5) as i64 + (arg % 7) as i64;
                    if let Some(id) = self.copy_started(
                        "overlapping re-upload",
                        start,
                        len,
                        vec![(self.epoch, start)],
                    )? {
                        self.update(id, SegmentState::CopySegmentFinished)?;
                        self.next_offset = self.next_offset.max(start + len + 1);
                    }
                }
            }
            6 => {
                let start = self.next_offset;
                let len = 10 + (arg % 10) as i64;
                if let Some(failed) =
                    self.copy_started("failed copy", start, len, vec![(self.epoch, start)])?
                {
                    if arg % 3 != 0 {
                        self.delete(failed, arg % 7 != 0)?;
                    }
                    if let Some(retry) = self.copy_started(
                        "same-epoch retry",
                        start,
                        len,
                        vec![(self.epoch, start)],
                    )? {
                        self.update(retry, SegmentState::CopySegmentFinished)?;
                        self.next_offset = start + len + 1;
                    }
                }
            }
            7 | 8 => {
                if let Some(&id) = self.live().first() {
                    self.delete(id, arg % 9 != 0)?;
                }
            }
            9 | 10 => {
                let live = self.live();
                if !live.is_empty() {
                    self.epoch += u16::from(arg % 2 == 0) as i32;
                    let id = live[arg as usize % live.len()];
                    self.delete(id, arg % 4 != 0)?;
                }
            }
            11 => {
                let policy = if arg % 3 == 0 {
                    DisablePolicy::Retain
                } else {
                    DisablePolicy::Delete
                };
                if let Ok(tiered_epoch) = self.tiering.disable(policy) {
                    *self.kinds.entry("disablement").or_default() += 1;
                    for id in segments_to_delete(&self.store, &self.tp, policy) {
                        self.delete(id, true)?;
                    }
                    let left = segments_to_delete(&self.store, &self.tp, policy).len();
                    if self.tiering.finish_disable(tiered_epoch, left).is_ok() {
                        let _ = self.tiering.enable();
                    }
                }
            }
            12 if arg % 6 == 0 => {
                self.partition_delete(PartitionDeleteState::DeletePartitionMarked)?;
                self.partition_delete(PartitionDeleteState::DeletePartitionStarted)?;
                for id in self.live() {
                    self.delete(id, true)?;
                }
                if self.partition_delete(PartitionDeleteState::DeletePartitionFinished)? {
                    self.partition_deleted = true;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn one(seed: u64, i: u64) -> Result<Json, String> {
    let mut rng =
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i.wrapping_mul(0xc2b2_ae3d_27d4_eb4f));
    let level = [MetadataLevel::V0, MetadataLevel::V1, MetadataLevel::V2][rng.below(3) as usize];
    let long = rng.below(8) == 0;
    let steps = 4 + rng.below(if long { 60 } else { 20 });
    let mut life = Life {
        rng,
        tp: TopicIdPartition {
            topic_id: Uuid::new(0x1122_3344, i as i64),
            topic: "orders".into(),
            partition: 3,
        },
        level,
        store: Store::new(),
        records: Vec::new(),
        event: 0,
        kinds: BTreeMap::new(),
        epoch: 0,
        next_offset: 0,
        next_id: 1,
        segments: BTreeMap::new(),
        data_deleted: BTreeMap::new(),
        partition_deleted: false,
        tiering: Tiering::enabled(),
        refused: 0,
    };
    for _ in 0..steps {
        if life.partition_deleted {
            break;
        }
        life.step()?;
    }
    let tp = &life.tp;
    Ok(json!({
        "kind": "planLog",
        "name": format!("plan-property-{seed}-{i}"),
        "featureLevel": level.level(),
        "partition": {"topicId": tp.topic_id.to_base64(), "topic": tp.topic, "partition": tp.partition},
        "records": life.records,
        "dataDeleted": life.data_deleted.iter().map(|(id, at)| json!([id.to_base64(), at])).collect::<Vec<_>>(),
        "live": life.segments.iter().map(|(id, s)| json!([id.to_base64(), s.id()])).collect::<Vec<_>>(),
        "partitionDeleted": life.partition_deleted,
        "events": life.kinds,
        "refused": life.refused,
    }))
}

/// The file of N planned logs for SEED (case i depends only on SEED and i).
pub fn plan_logs(n: u64, seed: u64) -> Result<String, String> {
    let mut out = String::from("{\n  \"source\": ");
    out.push_str(
        &Json::from(format!(
            "rlmeta's planner (rlmeta-conformance --plan-logs {n} {seed})"
        ))
        .to_string(),
    );
    out.push_str(",\n  \"cases\": [\n");
    for i in 0..n {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push_str("    ");
        out.push_str(&one(seed, i)?.to_string());
    }
    // and half as many deposed leaders' late backfills (crate::deposed)
    for i in 0..n / 2 {
        out.push_str(",\n    ");
        out.push_str(&crate::deposed::one(seed, i)?.to_string());
    }
    out.push_str("\n  ]\n}\n");
    Ok(out)
}
