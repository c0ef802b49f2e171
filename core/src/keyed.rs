//! The migration's verification before level 2: is every live segment's current state held by
//! keyed records, so that Kafka's cleaner, which drops every null-key record of the segments it
//! cleans, can compact the topic without losing or resurrecting a segment?
//!
//! Owns: the verdict for one metadata partition's records, read from its start: the records are
//! replayed as they are (the store brokers build), and replayed again as the cleaner could leave
//! them at level 2 (`compaction::Log` under `cleanup.policy=compact`), at the two ends of what it
//! may leave: null-key records dropped and nothing else cleaned (a cleaning still under way), and
//! everything cleaned (latest record of each key, tombstones past their horizon gone). Both must
//! list the same live segments in the same states, with no deleted segment back. The segments that
//! fail are returned with the offsets of the records that carry them. A finished upload attempt
//! Kafka serves no fetch from, whose key pair holds the attempt it serves instead
//! (`Store::superseded`), is not a failure when compaction drops it: it is reported apart, as
//! superseded (its remote objects become orphans). Never: I/O, clocks (the
//! cleaner runs "at the end of time"), or what to write to fix a failure (`Store::plan_backfill`).

use std::collections::{BTreeMap, HashMap};

use crate::cache::Store;
use crate::compaction::{CleanupPolicy, Log, LogRecord, TopicConfig};
use crate::model::{SegmentState, TopicIdPartition, Uuid};
use crate::plan::Superseded;
use crate::record::{Record, decode_value};

/// How a segment fails the verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unheld {
    /// Live in the topic as it is, but absent once null-key records are gone and the topic is
    /// compacted: only null-key records hold it.
    Lost,
    /// Live in both, but compaction leaves it in an older state (`held` below): its latest
    /// update is held only by a null-key record.
    StaleState,
    /// Deleted (or never live) in the topic as it is, but live once compacted.
    Resurrected,
}

impl Unheld {
    /// A stable name for hosts to print and match.
    pub fn name(self) -> &'static str {
        match self {
            Unheld::Lost => "lost",
            Unheld::StaleState => "stale-state",
            Unheld::Resurrected => "resurrected",
        }
    }
}

/// One segment whose current state keyed records do not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnheldSegment {
    pub partition: TopicIdPartition,
    pub segment_id: Uuid,
    pub why: Unheld,
    /// Its state in the topic as it is (`None`: not live there).
    pub state: Option<SegmentState>,
    /// Its state once compacted (`None`: not live there).
    pub held: Option<SegmentState>,
    /// Offsets, in the metadata partition, of every record that names the segment.
    pub offsets: Vec<i64>,
    /// Those of them with a null key.
    pub null_key_offsets: Vec<i64>,
}

/// A live, unserved upload attempt that compaction drops, and the attempt Kafka serves instead
/// (see `Store::superseded`): reported, not a failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SupersededSegment {
    pub attempt: Superseded,
    /// Offsets, in the metadata partition, of every record that names the segment.
    pub offsets: Vec<i64>,
}

/// The verdict for one metadata partition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyedVerdict {
    /// Live segments in the topic as it is.
    pub live_segments: usize,
    /// Records read, and those with a null key.
    pub records: usize,
    pub null_key_records: usize,
    /// Records left once fully compacted.
    pub records_after_compaction: usize,
    /// Failures, by partition then segment id.
    pub unheld: Vec<UnheldSegment>,
    /// Unserved upload attempts compaction drops, by partition then segment id.
    pub superseded: Vec<SupersededSegment>,
}

impl KeyedVerdict {
    pub fn holds(&self) -> bool {
        self.unheld.is_empty()
    }

    /// How many segments fail each way, in [`Unheld`]'s order, zero counts left out: what a host
    /// prints for the failures it does not name one by one (a stock partition fails on every live
    /// segment, 70,000 of them on a 10 M-record topic).
    pub fn unheld_by_why(&self) -> Vec<(Unheld, usize)> {
        [Unheld::Lost, Unheld::StaleState, Unheld::Resurrected]
            .into_iter()
            .map(|w| (w, self.unheld.iter().filter(|u| u.why == w).count()))
            .filter(|&(_, n)| n > 0)
            .collect()
    }
}

/// Live segments and their states, per user partition, after replaying `records`.
fn replay<'a>(
    records: impl Iterator<Item = &'a LogRecord>,
) -> BTreeMap<(TopicIdPartition, Uuid), SegmentState> {
    live_of(&store_of(records))
}

fn store_of<'a>(records: impl Iterator<Item = &'a LogRecord>) -> Store {
    let mut store = Store::new();
    for r in records {
        store.apply(r.offset, r.key.as_deref(), r.value.as_deref());
    }
    store
}

fn live_of(store: &Store) -> BTreeMap<(TopicIdPartition, Uuid), SegmentState> {
    let mut out = BTreeMap::new();
    for tp in store.partitions() {
        if let Some(cache) = store.partition_cache(tp) {
            for m in cache.segments() {
                out.insert((tp.clone(), m.id), m.state);
            }
        }
    }
    out
}

/// The log as the cleaner leaves it at level 2 once it has cleaned everything: a `compact`
/// topic, every record in its own closed segment, cleaned at the end of time with tombstones
/// dropped on the first pass (the shortest `delete.retention.ms`).
fn fully_compacted(records: &[LogRecord]) -> Vec<&LogRecord> {
    let mut log = Log::new(TopicConfig {
        cleanup_policy: CleanupPolicy::Compact,
        retention_ms: -1,
        min_compaction_lag_ms: 0,
        delete_retention_ms: 0,
        segment_ms: i64::MAX,
        segment_records: 1,
    });
    // The cleaner reads a value only for whether it is a tombstone: the model gets an empty one
    // (no copy of the partition's values), and the records kept are mapped back by offset below.
    for r in records {
        log.append(0, r.key.clone(), r.value.as_ref().map(|_| Vec::new()));
    }
    // An empty record after the last one becomes the active segment, which the cleaner spares:
    // every real record is cleanable. Kafka's cleaner drops a tombstone only in a round after the
    // one that cleaned it, and runs a round only over new data: a second sentinel, a second round.
    let first = log.append(0, Some(Vec::new()), Some(Vec::new()));
    log.clean(i64::MAX);
    let second = log.append(0, Some(Vec::new()), Some(Vec::new()));
    log.clean(i64::MAX);
    // `Log` numbers records from 0; map back to the partition's offsets.
    log.records()
        .filter(|r| r.offset != first && r.offset != second)
        .filter_map(|r| usize::try_from(r.offset).ok().and_then(|i| records.get(i)))
        .collect()
}

/// Verifies one metadata partition from its records, read from its start in offset order.
pub fn verify_keyed(records: &[LogRecord]) -> KeyedVerdict {
    verify_keyed_replayed(records, &store_of(records.iter()))
}

/// [`verify_keyed`] for a host that has already replayed exactly `records`, in order, into
/// `whole` (a [`crate::partition_scan::PartitionScan`] does as it reads): the replay as the topic
/// is, not made a second time, and not held twice.
pub fn verify_keyed_replayed(records: &[LogRecord], whole: &Store) -> KeyedVerdict {
    let live = live_of(whole);
    let unserved: BTreeMap<(TopicIdPartition, Uuid), Superseded> = whole
        .partitions()
        .into_iter()
        .flat_map(|tp| whole.superseded(tp))
        .map(|s| ((s.partition.clone(), s.segment_id), s))
        .collect();
    let mut superseded: BTreeMap<(TopicIdPartition, Uuid), SupersededSegment> = BTreeMap::new();
    let keyed_only = replay(records.iter().filter(|r| r.key.is_some()));
    let compacted_records = fully_compacted(records);
    let compacted = replay(compacted_records.iter().copied());
    let mut offsets: HashMap<Uuid, (Vec<i64>, Vec<i64>)> = HashMap::new();
    for r in records {
        let id = r
            .value
            .as_deref()
            .and_then(|v| decode_value(v).ok())
            .and_then(|v| match v.record {
                Record::Segment(s) => Some(s.remote_log_segment_id.id),
                Record::Update(u) => Some(u.remote_log_segment_id.id),
                _ => None,
            });
        if let Some(id) = id {
            let e = offsets.entry(id).or_default();
            e.0.push(r.offset);
            if r.key.is_none() {
                e.1.push(r.offset);
            }
        }
    }
    let mut unheld: BTreeMap<(TopicIdPartition, Uuid), UnheldSegment> = BTreeMap::new();
    for after in [&keyed_only, &compacted] {
        for (k, state) in &live {
            let held = after.get(k).copied();
            let why = match held {
                None => Unheld::Lost,
                Some(h) if h != *state => Unheld::StaleState,
                Some(_) => continue,
            };
            if let (Unheld::Lost, Some(s)) = (why, unserved.get(k)) {
                superseded
                    .entry(k.clone())
                    .or_insert_with(|| SupersededSegment {
                        attempt: s.clone(),
                        offsets: Vec::new(),
                    });
                continue;
            }
            unheld.entry(k.clone()).or_insert_with(|| UnheldSegment {
                partition: k.0.clone(),
                segment_id: k.1,
                why,
                state: Some(*state),
                held,
                offsets: Vec::new(),
                null_key_offsets: Vec::new(),
            });
        }
        for (k, held) in after {
            if !live.contains_key(k) {
                unheld.entry(k.clone()).or_insert_with(|| UnheldSegment {
                    partition: k.0.clone(),
                    segment_id: k.1,
                    why: Unheld::Resurrected,
                    state: None,
                    held: Some(*held),
                    offsets: Vec::new(),
                    null_key_offsets: Vec::new(),
                });
            }
        }
    }
    let unheld = unheld
        .into_values()
        .map(|mut u| {
            if let Some((all, nulls)) = offsets.get(&u.segment_id) {
                u.offsets.clone_from(all);
                u.null_key_offsets.clone_from(nulls);
            }
            u
        })
        .collect();
    let superseded = superseded
        .into_values()
        .map(|mut s| {
            if let Some((all, _)) = offsets.get(&s.attempt.segment_id) {
                s.offsets.clone_from(all);
            }
            s
        })
        .collect();
    KeyedVerdict {
        live_segments: live.len(),
        records: records.len(),
        null_key_records: records.iter().filter(|r| r.key.is_none()).count(),
        records_after_compaction: compacted_records.len(),
        unheld,
        superseded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::SegmentMetadata;
    use crate::feature::MetadataLevel;
    use crate::plan::{Event, SegmentEvent};

    fn tp() -> TopicIdPartition {
        TopicIdPartition {
            topic_id: Uuid::new(7, 7),
            topic: "orders".into(),
            partition: 0,
        }
    }
    fn uuid(n: i64) -> Uuid {
        Uuid::new(1, n)
    }
    /// A version-0 segment record, as a stock broker writes it under a null key.
    fn stock_started(n: i64, start: i64) -> Vec<u8> {
        crate::testing::stock::started(&tp(), uuid(n), start, 4).unwrap()
    }
    fn stock_update(n: i64, state: SegmentState) -> Vec<u8> {
        crate::testing::stock::update(&tp(), uuid(n), state).unwrap()
    }

    /// A metadata partition: its records, and the store a broker builds from them.
    #[derive(Default)]
    struct Topic {
        records: Vec<LogRecord>,
        store: Store,
    }
    impl Topic {
        fn put(&mut self, key: Option<Vec<u8>>, value: Option<Vec<u8>>) {
            let offset = self.records.len() as i64;
            self.store.apply(offset, key.as_deref(), value.as_deref());
            self.records.push(LogRecord {
                offset,
                timestamp_ms: 0,
                key,
                value,
            });
        }
        fn stock(&mut self, value: Vec<u8>) {
            self.put(None, Some(value));
        }
        fn produce(&mut self, planned: Vec<crate::plan::Planned>) {
            for p in planned {
                self.put(Some(p.key.format().into_bytes()), p.value);
            }
        }
        fn backfill(&mut self) {
            let planned = self
                .store
                .plan_backfill(&tp(), 4, MetadataLevel::V1)
                .unwrap();
            self.produce(planned);
        }
        fn event(&self, id: i64) -> SegmentEvent {
            SegmentEvent {
                partition: tp(),
                segment_id: uuid(id),
                broker_id: 2,
                event_timestamp_ms: 3,
                custom_metadata: None,
                broker_leader_epoch: 4,
            }
        }
        fn plan(&mut self, e: Event) {
            let planned = self.store.plan(&e, MetadataLevel::V1).unwrap();
            self.produce(planned);
        }
    }

    /// A stock history: segment 1 finished, 2 started, 3 deleted.
    fn stock_history() -> Topic {
        let mut t = Topic::default();
        t.stock(stock_started(1, 0));
        t.stock(stock_update(1, SegmentState::CopySegmentFinished));
        t.stock(stock_started(2, 100));
        t.stock(stock_started(3, 200));
        t.stock(stock_update(3, SegmentState::CopySegmentFinished));
        t.stock(stock_update(3, SegmentState::DeleteSegmentStarted));
        t.stock(stock_update(3, SegmentState::DeleteSegmentFinished));
        t
    }

    /// Two finished upload attempts of one range: before the backfill both are lost; after it,
    /// the one Kafka serves (the later) holds, the other is superseded, not a failure.
    #[test]
    fn an_unserved_second_attempt_is_superseded_not_lost() {
        let mut t = stock_history();
        t.stock(stock_started(8, 300));
        t.stock(stock_started(9, 300));
        t.stock(stock_update(9, SegmentState::CopySegmentFinished));
        t.stock(stock_update(8, SegmentState::CopySegmentFinished));
        let before = verify_keyed(&t.records);
        assert!(before.unheld.iter().any(|u| u.segment_id == uuid(8)));
        assert!(before.unheld.iter().all(|u| u.segment_id != uuid(9)));
        assert_eq!(before.superseded.len(), 1, "{:?}", before.superseded);
        t.backfill();
        let after = verify_keyed(&t.records);
        assert!(after.holds(), "{:?}", after.unheld);
        let s: Vec<_> = after
            .superseded
            .iter()
            .map(|s| {
                let a = &s.attempt;
                (
                    a.segment_id,
                    a.served_by,
                    a.start_offset,
                    a.end_offset,
                    s.offsets.clone(),
                )
            })
            .collect();
        assert_eq!(s, vec![(uuid(9), uuid(8), 300, 399, vec![8, 9])]);
    }

    #[test]
    fn a_null_key_history_fails_with_each_live_segment_and_its_offsets() {
        let t = stock_history();
        let v = verify_keyed(&t.records);
        assert_eq!(v.live_segments, 2);
        assert_eq!(
            (v.records, v.null_key_records, v.records_after_compaction),
            (7, 7, 0)
        );
        let got: Vec<_> = v
            .unheld
            .iter()
            .map(|u| (u.segment_id, u.why, u.state, u.held, u.offsets.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    uuid(1),
                    Unheld::Lost,
                    Some(SegmentState::CopySegmentFinished),
                    None,
                    vec![0, 1]
                ),
                (
                    uuid(2),
                    Unheld::Lost,
                    Some(SegmentState::CopySegmentStarted),
                    None,
                    vec![2]
                ),
            ]
        );
        assert_eq!(v.unheld[0].null_key_offsets, vec![0, 1]);
    }

    #[test]
    fn the_backfill_makes_it_hold_and_later_lifecycle_writes_keep_it_holding() {
        let mut t = stock_history();
        t.backfill();
        let v = verify_keyed(&t.records);
        assert!(v.holds(), "{:?}", v.unheld);
        assert_eq!(v.live_segments, 2);
        // Segment 1 is deleted after the backfill, segment 2 finishes: still held.
        for state in [Event::DeleteStarted, Event::DeleteFinished] {
            let e = t.event(1);
            t.plan(state(e));
        }
        let e = t.event(2);
        t.plan(Event::CopyFinished(e));
        let v = verify_keyed(&t.records);
        assert!(v.holds(), "{:?}", v.unheld);
        assert_eq!(v.live_segments, 1);
        // Nothing is left but keyed records once compacted.
        assert!(v.records_after_compaction < v.records);
    }

    #[test]
    fn an_update_after_the_backfill_under_a_null_key_is_a_stale_state() {
        let mut t = stock_history();
        t.backfill();
        // A stock broker still running finishes segment 2 with a null-key update.
        t.stock(stock_update(2, SegmentState::CopySegmentFinished));
        let last = t.records.len() as i64 - 1;
        let v = verify_keyed(&t.records);
        assert_eq!(v.unheld.len(), 1, "{:?}", v.unheld);
        let u = &v.unheld[0];
        assert_eq!(
            (u.segment_id, u.why, u.state, u.held),
            (
                uuid(2),
                Unheld::StaleState,
                Some(SegmentState::CopySegmentFinished),
                Some(SegmentState::CopySegmentStarted)
            )
        );
        assert!(u.null_key_offsets.contains(&last));
    }

    #[test]
    fn a_deletion_written_only_with_null_keys_after_the_backfill_is_a_resurrection() {
        let mut t = stock_history();
        t.backfill();
        // A stock broker deletes segment 1 with null-key updates: compaction drops them and
        // the backfilled keyed records bring segment 1 back.
        t.stock(stock_update(1, SegmentState::DeleteSegmentStarted));
        t.stock(stock_update(1, SegmentState::DeleteSegmentFinished));
        let v = verify_keyed(&t.records);
        assert_eq!(v.unheld.len(), 1, "{:?}", v.unheld);
        let u = &v.unheld[0];
        assert_eq!(
            (u.segment_id, u.why, u.state, u.held),
            (
                uuid(1),
                Unheld::Resurrected,
                None,
                Some(SegmentState::CopySegmentFinished)
            )
        );
        assert_eq!(
            u.offsets.len(),
            6,
            "two stock, two backfilled, two stock: {u:?}"
        );
    }

    /// Found by the journey test (tests/cluster JourneyTest) on a real cluster: a segment the
    /// plugin uploads and deletes at level 0 leaves its keyed segment record (no tombstones at
    /// level 0), and compaction keeps it next to the DELETE_SEGMENT_FINISHED update, which a replay
    /// drops as an illegal transition: the segment comes back as COPY_SEGMENT_STARTED.
    #[test]
    fn a_segment_deleted_at_level_zero_comes_back_once_compacted() {
        let mut t = Topic::default();
        let seg = SegmentMetadata {
            id: uuid(5),
            start_offset: 0,
            end_offset: 9,
            broker_id: 1,
            max_timestamp_ms: 0,
            event_timestamp_ms: 0,
            leader_epochs: vec![(4, 0)].into(),
            segment_size_in_bytes: 1,
            custom_metadata: None,
            state: SegmentState::CopySegmentStarted,
            txn_index_empty: true,
            broker_leader_epoch: 4,
        };
        let v0 = |t: &mut Topic, e: Event| {
            let planned = t.store.plan(&e, MetadataLevel::V0).unwrap();
            t.produce(planned);
        };
        v0(
            &mut t,
            Event::CopyStarted {
                partition: tp(),
                segment: seg,
            },
        );
        for e in [
            Event::CopyFinished,
            Event::DeleteStarted,
            Event::DeleteFinished,
        ] {
            let ev = t.event(5);
            v0(&mut t, e(ev));
        }
        assert!(
            t.records
                .iter()
                .all(|r| r.key.is_some() && r.value.is_some())
        );
        let v = verify_keyed(&t.records);
        assert_eq!(v.live_segments, 0);
        let got: Vec<_> = v
            .unheld
            .iter()
            .map(|u| (u.segment_id, u.why, u.held))
            .collect();
        assert_eq!(
            got,
            vec![(
                uuid(5),
                Unheld::Resurrected,
                Some(SegmentState::CopySegmentStarted)
            )]
        );
        // At level 1 the backfill tombstones the keys that still hold it, then plans nothing more.
        t.backfill();
        let v = verify_keyed(&t.records);
        assert!(v.holds(), "{:?}", v.unheld);
        assert_eq!(v.records_after_compaction, 0);
        let again = t.store.plan_backfill(&tp(), 4, MetadataLevel::V1).unwrap();
        assert!(again.is_empty(), "{again:?}");
    }

    #[test]
    fn keyed_copies_of_a_fresh_cluster_hold() {
        let mut t = Topic::default();
        let seg = SegmentMetadata {
            id: uuid(9),
            start_offset: 0,
            end_offset: 9,
            broker_id: 1,
            max_timestamp_ms: 0,
            event_timestamp_ms: 0,
            leader_epochs: vec![(4, 0)].into(),
            segment_size_in_bytes: 1,
            custom_metadata: None,
            state: SegmentState::CopySegmentStarted,
            txn_index_empty: true,
            broker_leader_epoch: 4,
        };
        t.plan(Event::CopyStarted {
            partition: tp(),
            segment: seg,
        });
        let e = t.event(9);
        t.plan(Event::CopyFinished(e));
        let v = verify_keyed(&t.records);
        assert!(v.holds() && v.live_segments == 1 && v.null_key_records == 0);
        assert!(verify_keyed(&[]).holds());
    }
}
