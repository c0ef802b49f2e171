//! The compaction-safety proof: for random event histories written by rlmeta's planner, replaying
//! the log as Kafka's cleaner leaves it (cleaned at random moments, any prefix) answers every
//! query as replaying the whole log does, except where the only difference is a segment whose
//! remote data the host has already deleted.
//!
//! Histories cover leader changes, overlapping uploads by a new leader, failed copies cleaned up
//! and retried with a new segment id in the same epoch, deletions in and out of offset order,
//! deletions by a later epoch, and partition deletion.
//!
//! The allowed differences, and why a broker does the same either way:
//! 1. A segment whose deletion finished (its data is gone) may be forgotten by the compacted log
//!    earlier than by the full log: nothing can be read from it, and a broker never deletes it
//!    again (deleting it again would be a no-op on the remote store).
//! 2. Because of 1, a segment that the deleted one had displaced in its leader epoch may serve
//!    offsets again in the compacted replay: it is live, finished, and holds those offsets, so
//!    reads served from it are correct.
//! 3. Because of 1, `highestOffsetForEpoch` may be lower in the compacted replay (Kafka's value
//!    never decreases, even once every segment of the epoch is deleted), never higher. Brokers use
//!    it to find where to resume uploads among live segments; the compacted answer is still at
//!    least the end of every live finished segment of the epoch (checked below).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is a panic

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use rlmeta::cache::{SegmentMetadata, Store};
use rlmeta::compaction::{CleanupPolicy, Log, TopicConfig};
use rlmeta::feature::MetadataLevel;
use rlmeta::model::{PartitionDeleteState, SegmentState, TopicIdPartition, Uuid};
use rlmeta::plan::{Event, Planned, SegmentEvent};

/// A simulated broker (one user partition) writing through the planner into a log that the
/// cleaner compacts now and then, next to the same log never compacted.
struct Sim {
    tp: TopicIdPartition,
    level: MetadataLevel,
    store: Store,
    full: Log,
    cleaned: Log,
    now: i64,
    epoch: i32,
    next_offset: i64,
    next_id: i64,
    /// Segments the broker knows, by id: (start, end, upload epoch, state).
    segments: BTreeMap<Uuid, (i64, i64, i32, SegmentState)>,
    data_deleted: BTreeSet<Uuid>,
    partition_deleted: bool,
    /// Bit i set: the cleaner runs right after the i-th record of the current step, so that
    /// every prefix of a planned sequence meets the cleaner in some history.
    clean_bits: u64,
    produced_in_step: u32,
}

impl Sim {
    fn new(level: MetadataLevel) -> Sim {
        let config = TopicConfig {
            cleanup_policy: CleanupPolicy::Compact,
            retention_ms: -1,
            min_compaction_lag_ms: 0,
            delete_retention_ms: 50,
            segment_ms: 1_000_000,
            segment_records: 4,
        };
        Sim {
            tp: TopicIdPartition {
                topic_id: Uuid::new(11, 22),
                topic: "orders".into(),
                partition: 3,
            },
            level,
            store: Store::new(),
            full: Log::new(config),
            cleaned: Log::new(config),
            now: 1_000,
            epoch: 0,
            next_offset: 0,
            next_id: 1,
            segments: BTreeMap::new(),
            data_deleted: BTreeSet::new(),
            partition_deleted: false,
            clean_bits: 0,
            produced_in_step: 0,
        }
    }

    fn produce(&mut self, records: Vec<Planned>) {
        for r in records {
            self.now += 1;
            let key = r.key.format().into_bytes();
            let offset = self
                .full
                .append(self.now, Some(key.clone()), r.value.clone());
            self.cleaned
                .append(self.now, Some(key.clone()), r.value.clone());
            self.store.apply(offset, Some(&key), r.value.as_deref());
            if self.clean_bits >> (self.produced_in_step % 64) & 1 == 1 {
                self.cleaned.clean(self.now + 1_000);
            }
            self.produced_in_step += 1;
        }
    }

    fn event(&self, id: Uuid) -> SegmentEvent {
        SegmentEvent {
            partition: self.tp.clone(),
            segment_id: id,
            broker_id: 1,
            event_timestamp_ms: self.now,
            custom_metadata: None,
            broker_leader_epoch: self.epoch,
        }
    }

    /// Plans and produces an event; a refusal changes nothing (the broker retries later).
    fn run(&mut self, e: Event) -> bool {
        match self.store.plan(&e, self.level) {
            Ok(records) => {
                self.produce(records);
                true
            }
            Err(err) => {
                assert_eq!(err.kind(), rlmeta::ErrorKind::InvalidState, "{err}");
                false
            }
        }
    }

    fn copy_started(&mut self, start: i64, len: i64, epochs: Vec<(i32, i64)>) -> Option<Uuid> {
        let id = Uuid::new(self.next_id, -self.next_id);
        self.next_id += 1;
        let segment = SegmentMetadata {
            id,
            start_offset: start,
            end_offset: start + len,
            broker_id: 1,
            max_timestamp_ms: self.now,
            event_timestamp_ms: self.now,
            leader_epochs: epochs.into(),
            segment_size_in_bytes: 1024,
            custom_metadata: None,
            state: SegmentState::CopySegmentStarted,
            txn_index_empty: true,
            broker_leader_epoch: self.epoch,
        };
        let ok = self.run(Event::CopyStarted {
            partition: self.tp.clone(),
            segment,
        });
        ok.then(|| {
            self.segments.insert(
                id,
                (
                    start,
                    start + len,
                    self.epoch,
                    SegmentState::CopySegmentStarted,
                ),
            );
            id
        })
    }

    fn update(&mut self, id: Uuid, state: SegmentState) {
        let e = self.event(id);
        let event = match state {
            SegmentState::CopySegmentFinished => Event::CopyFinished(e),
            SegmentState::DeleteSegmentStarted => Event::DeleteStarted(e),
            _ => Event::DeleteFinished(e),
        };
        if self.run(event) {
            if let Some(s) = self.segments.get_mut(&id) {
                s.3 = state;
            }
            if state == SegmentState::DeleteSegmentFinished {
                self.data_deleted.insert(id);
            }
        }
    }

    fn delete(&mut self, id: Uuid) {
        self.update(id, SegmentState::DeleteSegmentStarted);
        self.update(id, SegmentState::DeleteSegmentFinished);
    }

    fn live(&self) -> Vec<Uuid> {
        self.segments
            .iter()
            .filter(|(_, s)| s.3 != SegmentState::DeleteSegmentFinished)
            .map(|(id, _)| *id)
            .collect()
    }

    /// One random step of broker life.
    fn step(&mut self, choice: u8, arg: u8) {
        if self.partition_deleted {
            return;
        }
        self.produced_in_step = 0;
        self.clean_bits = if arg % 3 == 0 {
            u64::from(choice).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 8
        } else {
            0
        };
        match choice % 10 {
            // A normal upload by the current leader, possibly spanning a leader change.
            0..=2 => {
                let len = 10 + i64::from(arg % 20);
                let start = self.next_offset;
                let epochs = if arg % 5 == 0 && self.epoch > 0 {
                    vec![(self.epoch - 1, start), (self.epoch, start + len / 2)]
                } else {
                    vec![(self.epoch, start)]
                };
                if let Some(id) = self.copy_started(start, len, epochs) {
                    self.update(id, SegmentState::CopySegmentFinished);
                    self.next_offset = start + len + 1;
                }
            }
            // Leader change; the new leader may re-upload an overlapping range.
            3 => {
                self.epoch += 1;
                if arg % 2 == 0 && self.next_offset > 15 {
                    let start = self.next_offset - 15 + i64::from(arg % 5);
                    let end_len = 14 - i64::from(arg % 5) + i64::from(arg % 7);
                    if let Some(id) = self.copy_started(start, end_len, vec![(self.epoch, start)]) {
                        self.update(id, SegmentState::CopySegmentFinished);
                        self.next_offset = self.next_offset.max(start + end_len + 1);
                    }
                }
            }
            // A copy fails; the broker cleans up the attempt (maybe not yet) and retries it with a
            // new segment id in the same epoch, over the same offsets (the same keys).
            4 => {
                let start = self.next_offset;
                let len = 10 + i64::from(arg % 10);
                if let Some(failed) = self.copy_started(start, len, vec![(self.epoch, start)]) {
                    if arg % 3 != 0 {
                        self.delete(failed);
                    }
                    // The retry is refused while the failed attempt still holds the keys.
                    if let Some(retry) = self.copy_started(start, len, vec![(self.epoch, start)]) {
                        self.update(retry, SegmentState::CopySegmentFinished);
                        self.next_offset = start + len + 1;
                    }
                }
            }
            // Retention deletes the oldest live segment.
            5 | 6 => {
                if let Some(&id) = self.live().first() {
                    self.delete(id);
                }
            }
            // Out-of-order deletion (a failed newest upload, an unclean election's leftovers).
            7 => {
                let live = self.live();
                if !live.is_empty() {
                    let id = live[usize::from(arg) % live.len()];
                    self.update(id, SegmentState::DeleteSegmentStarted);
                    if arg % 4 != 0 {
                        self.update(id, SegmentState::DeleteSegmentFinished);
                    }
                }
            }
            // The cleaner runs now, or much later (tombstones past their horizon go).
            8 => {
                let at = if arg % 2 == 0 {
                    self.now
                } else {
                    self.now + 1_000
                };
                self.cleaned.clean(at);
            }
            // The partition is deleted: every segment first, then the partition.
            _ => {
                if arg % 8 != 0 {
                    return;
                }
                let (tp, now, epoch) = (self.tp.clone(), self.now, self.epoch);
                let pd = |state| Event::PartitionDelete {
                    partition: tp.clone(),
                    state,
                    broker_id: 1,
                    event_timestamp_ms: now,
                    broker_leader_epoch: epoch,
                };
                self.run(pd(PartitionDeleteState::DeletePartitionMarked));
                self.run(pd(PartitionDeleteState::DeletePartitionStarted));
                for id in self.live() {
                    self.delete(id);
                }
                if self.run(pd(PartitionDeleteState::DeletePartitionFinished)) {
                    self.partition_deleted = true;
                }
            }
        }
    }

    fn replay(&self, log: &Log) -> Store {
        let mut store = Store::new();
        for r in log.records() {
            store.apply(r.offset, r.key.as_deref(), r.value.as_deref());
        }
        store.mark_initialized(&self.tp);
        store
    }

    /// Replay of the cleaned log against replay of the full log.
    fn check(&self) -> Result<(), String> {
        let full = self.replay(&self.full);
        let cleaned = self.replay(&self.cleaned);
        let tp = &self.tp;
        let (Ok(f), Ok(c)) = (full.segments(tp), cleaned.segments(tp)) else {
            return match (full.segments(tp).is_ok(), cleaned.segments(tp).is_ok()) {
                (a, b) if a == b => Ok(()),
                (a, b) => Err(format!("partition held: full {a}, cleaned {b}")),
            };
        };
        let all = |v: Vec<&SegmentMetadata>| -> BTreeMap<Uuid, SegmentState> {
            v.into_iter().map(|m| (m.id, m.state)).collect()
        };
        let (lf, lc) = (all(f), all(c));
        // Nothing comes back and no state differs; only segments whose data is gone may be missing.
        for (id, state) in &lc {
            if lf.get(id) != Some(state) {
                return Err(format!(
                    "cleaned log shows {id} as {state:?}, full log as {:?}",
                    lf.get(id)
                ));
            }
        }
        if let Some((id, state)) = lf
            .iter()
            .find(|(id, _)| !self.data_deleted.contains(id) && !lc.contains_key(id))
        {
            return Err(format!("cleaned log lost live segment {id} ({state:?})"));
        }
        let live_orphans: Vec<_> = cleaned
            .orphans(tp)
            .into_iter()
            .filter(|o| !self.data_deleted.contains(&o.segment_id))
            .collect();
        if !live_orphans.is_empty() {
            return Err(format!(
                "live segments lost their segment record: {live_orphans:?}"
            ));
        }
        for epoch in 0..=self.epoch {
            // A failed query is a failure, not "no offset" (which would pass the comparison).
            let ask = |s: &Store, which: &str| {
                s.highest_offset_for_epoch(tp, epoch)
                    .map_err(|e| format!("epoch {epoch}: the {which} log's store failed: {e}"))
            };
            let (hf, hc) = (ask(&full, "full")?, ask(&cleaned, "cleaned")?);
            if hc > hf {
                return Err(format!(
                    "epoch {epoch}: highest offset {hc:?} above the full log's {hf:?}"
                ));
            }
            for offset in 0..self.next_offset + 2 {
                let sf = full
                    .segment_for(tp, epoch, offset)
                    .ok()
                    .flatten()
                    .map(|m| m.id);
                let sc = cleaned
                    .segment_for(tp, epoch, offset)
                    .ok()
                    .flatten()
                    .map(|m| m.id);
                match (sf, sc) {
                    (a, b) if a == b => {}
                    (Some(a), _) if self.data_deleted.contains(&a) => {}
                    (None, Some(b)) if lf.get(&b) == Some(&SegmentState::CopySegmentFinished) => {}
                    (a, b) => {
                        return Err(format!(
                            "epoch {epoch} offset {offset}: full serves {a:?}, cleaned {b:?}"
                        ));
                    }
                }
                if let Some(m) = sc.and_then(|id| {
                    cleaned
                        .segment_for(tp, epoch, offset)
                        .ok()
                        .flatten()
                        .filter(|m| m.id == id)
                }) {
                    if hc.is_none_or(|h| h < m.epoch_end(epoch).unwrap_or(i64::MIN)) {
                        return Err(format!(
                            "epoch {epoch}: highest offset {hc:?} below live segment end"
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

fn history() -> impl Strategy<Value = (bool, Vec<(u8, u8)>)> {
    (
        any::<bool>(),
        proptest::collection::vec((any::<u8>(), any::<u8>()), 5..40),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn compaction_never_changes_what_replay_answers((v2, steps) in history()) {
        let mut sim = Sim::new(if v2 { MetadataLevel::V2 } else { MetadataLevel::V1 });
        for (i, (choice, arg)) in steps.iter().enumerate() {
            sim.step(*choice, *arg);
            // The cleaner may run at any moment: check some prefixes and the end.
            if i % 7 == 3 || i + 1 == steps.len() {
                let mut cleaned = sim.clone_cleaned_at(sim.now + 1_000);
                std::mem::swap(&mut sim.cleaned, &mut cleaned);
                let result = sim.check();
                std::mem::swap(&mut sim.cleaned, &mut cleaned);
                prop_assert!(result.is_ok(), "after step {i}: {}", result.err().unwrap_or_default());
                let result = sim.check();
                prop_assert!(result.is_ok(), "after step {i} (cleaned as it stands): {}", result.err().unwrap_or_default());
            }
        }
    }
}

impl Sim {
    /// The log as the cleaner would leave it if it ran at `at` (tombstones past their horizon).
    fn clone_cleaned_at(&self, at: i64) -> Log {
        let mut log = self.cleaned.clone();
        log.clean(at);
        log.clean(at + 1_000);
        log
    }
}
