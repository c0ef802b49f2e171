//! KIP-1266's user scenarios 1-5 (seed 000), written through rlmeta's planner, compacted by the
//! cleaner model and replayed; and the counter-example showing why rlmeta does not use the
//! tombstone prefix rule of the KIP and apache/kafka#22459.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is a panic

mod common;

use common::{k, tp, uuid};
use rlmeta::ErrorKind;
use rlmeta::cache::{SegmentMetadata, Store};
use rlmeta::compaction::{Log, TopicConfig};
use rlmeta::feature::MetadataLevel;
use rlmeta::model::{PartitionDeleteState, SegmentState, Uuid};
use rlmeta::plan::{Event, Planned, SegmentEvent};

const LEVEL: MetadataLevel = MetadataLevel::V2;

struct Cluster {
    store: Store,
    log: Log,
    now: i64,
}

impl Cluster {
    fn new() -> Cluster {
        Cluster {
            store: Store::new(),
            log: Log::new(TopicConfig {
                segment_records: 2,
                ..TopicConfig::compacted()
            }),
            now: 0,
        }
    }

    fn produce(&mut self, records: Vec<Planned>) -> Vec<String> {
        let mut keys = Vec::new();
        for r in records {
            self.now += 1;
            let key = r.key.format();
            let offset = self
                .log
                .append(self.now, Some(key.clone().into_bytes()), r.value.clone());
            self.store
                .apply(offset, Some(key.as_bytes()), r.value.as_deref());
            keys.push(if r.value.is_some() {
                key
            } else {
                format!("{key} -> null")
            });
        }
        keys
    }

    fn try_plan(&mut self, e: Event) -> rlmeta::Result<Vec<String>> {
        let planned = self.store.plan(&e, LEVEL)?;
        Ok(self.produce(planned))
    }

    fn plan(&mut self, e: Event) -> Vec<String> {
        self.try_plan(e)
            .unwrap_or_else(|e| panic!("planner refused: {e}"))
    }

    fn started(
        &mut self,
        id: Uuid,
        start: i64,
        end: i64,
        epoch: i32,
    ) -> rlmeta::Result<Vec<String>> {
        let segment = SegmentMetadata {
            id,
            start_offset: start,
            end_offset: end,
            broker_id: 101,
            max_timestamp_ms: self.now,
            event_timestamp_ms: self.now,
            leader_epochs: [(epoch, start)].into(),
            segment_size_in_bytes: 1 << 20,
            custom_metadata: None,
            state: SegmentState::CopySegmentStarted,
            txn_index_empty: true,
            broker_leader_epoch: epoch,
        };
        self.try_plan(Event::CopyStarted {
            partition: tp(),
            segment,
        })
    }

    fn ev(&self, id: Uuid, epoch: i32) -> SegmentEvent {
        SegmentEvent {
            partition: tp(),
            segment_id: id,
            broker_id: 101,
            event_timestamp_ms: self.now,
            custom_metadata: None,
            broker_leader_epoch: epoch,
        }
    }

    fn upload(&mut self, id: Uuid, start: i64, end: i64, epoch: i32) -> Vec<String> {
        let mut keys = self
            .started(id, start, end, epoch)
            .unwrap_or_else(|e| panic!("{e}"));
        keys.extend(self.plan(Event::CopyFinished(self.ev(id, epoch))));
        keys
    }

    fn delete(&mut self, id: Uuid, epoch: i32) -> Vec<String> {
        let mut keys = self.plan(Event::DeleteStarted(self.ev(id, epoch)));
        keys.extend(self.plan(Event::DeleteFinished(self.ev(id, epoch))));
        keys
    }

    /// The cleaner runs long after everything (tombstones past their horizon too).
    fn compact(&mut self) {
        self.now += 10 * 86_400_000;
        self.log
            .append(self.now, Some(b"roll".to_vec()), Some(b"x".to_vec()));
        self.log.clean(self.now);
        // Kafka's cleaner runs a round only over something dirty: the segment holding the record
        // above is rolled (as new records would) before the round past the tombstones' horizon.
        self.log.roll();
        self.log.clean(self.now + 2 * 86_400_000);
    }

    fn surviving_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .log
            .records()
            .filter_map(|r| {
                r.key
                    .as_ref()
                    .map(|k| String::from_utf8_lossy(k).into_owned())
            })
            .filter(|k| k != "roll")
            .collect();
        keys.sort();
        keys
    }

    /// Replays the compacted log from scratch, as a restarting broker does.
    fn restart(&self) -> Store {
        let mut store = Store::new();
        for r in self.log.records() {
            store.apply(r.offset, r.key.as_deref(), r.value.as_deref());
        }
        store.mark_initialized(&tp());
        store
    }
}

fn listing(store: &Store) -> Vec<(Uuid, SegmentState)> {
    store
        .segments(&tp())
        .unwrap_or_default()
        .into_iter()
        .map(|m| (m.id, m.state))
        .collect()
}

/// Scenario 1: a normal upload keeps its two keys; the cache holds one finished segment.
#[test]
fn scenario_1_normal_upload() {
    let mut c = Cluster::new();
    assert_eq!(
        c.upload(uuid(1), 0, 1000, 3),
        vec![k(1000, 3, false), k(1000, 3, true)]
    );
    c.compact();
    assert_eq!(
        c.surviving_keys(),
        vec![k(1000, 3, false), k(1000, 3, true)]
    );
    assert_eq!(
        listing(&c.restart()),
        vec![(uuid(1), SegmentState::CopySegmentFinished)]
    );
}

/// Scenario 2: a leadership change during upload: both uploads keep their keys, both segments
/// are listed, and reads of the new epoch are served by the new leader's upload.
#[test]
fn scenario_2_leadership_change_during_upload() {
    let mut c = Cluster::new();
    c.upload(uuid(0xA), 1001, 2000, 3);
    c.upload(uuid(0xB), 1001, 2000, 4);
    c.compact();
    assert_eq!(
        c.surviving_keys(),
        vec![
            k(2000, 3, false),
            k(2000, 3, true),
            k(2000, 4, false),
            k(2000, 4, true)
        ]
    );
    let s = c.restart();
    assert_eq!(listing(&s).len(), 2);
    assert_eq!(
        s.segment_for(&tp(), 4, 1500).ok().flatten().map(|m| m.id),
        Some(uuid(0xB))
    );
}

/// Scenario 3: a failed upload retried in the same epoch with a new segment id. The KIP lets the
/// retry overwrite the failed attempt's keys while that attempt's data may still need deleting;
/// rlmeta refuses the retry until the failed attempt is deleted, then writes the same keys.
#[test]
fn scenario_3_failed_upload_same_epoch() {
    let mut c = Cluster::new();
    c.started(uuid(0xA), 2001, 3000, 5)
        .expect("the first upload of the offsets starts");
    let refused = c.started(uuid(0xB), 2001, 3000, 5);
    assert_eq!(
        refused.err().map(|e| e.kind()),
        Some(ErrorKind::InvalidState)
    );
    c.delete(uuid(0xA), 5);
    c.upload(uuid(0xB), 2001, 3000, 5);
    c.compact();
    assert_eq!(
        c.surviving_keys(),
        vec![k(3000, 5, false), k(3000, 5, true)]
    );
    assert_eq!(
        listing(&c.restart()),
        vec![(uuid(0xB), SegmentState::CopySegmentFinished)]
    );
}

/// Scenario 4: a segment uploaded three times (epochs 3, 4, 5) is deleted by epoch 6. The KIP
/// tombstones all eight keys at once, forgetting the two older uploads whose remote data was
/// never deleted. rlmeta tombstones the keys of each upload when that upload is deleted, so
/// nothing is forgotten while its data exists, and in the end every key is gone as in the KIP.
#[test]
fn scenario_4_segment_deletion() {
    let mut c = Cluster::new();
    for (id, epoch) in [(0xA, 3), (0xB, 4), (0xC, 5)] {
        c.upload(uuid(id), 0, 1000, epoch);
    }
    let keys = c.delete(uuid(0xC), 6);
    assert_eq!(
        keys,
        vec![
            k(1000, 5, true),
            k(1000, 5, false) + " -> null",
            k(1000, 5, true),
            k(1000, 5, true) + " -> null"
        ]
    );
    c.compact();
    assert_eq!(
        c.surviving_keys(),
        vec![
            k(1000, 3, false),
            k(1000, 3, true),
            k(1000, 4, false),
            k(1000, 4, true)
        ]
    );
    assert_eq!(
        listing(&c.restart()).len(),
        2,
        "the older uploads are still in remote storage and still listed"
    );
    c.delete(uuid(0xA), 6);
    c.delete(uuid(0xB), 6);
    c.compact();
    assert!(c.surviving_keys().is_empty());
    assert!(listing(&c.restart()).is_empty());
}

/// Scenario 5: partition deletion: every segment key is tombstoned, the finished marker stays.
#[test]
fn scenario_5_partition_deletion() {
    let mut c = Cluster::new();
    c.upload(uuid(1), 0, 99, 1);
    c.upload(uuid(2), 100, 199, 1);
    let pd = |state| Event::PartitionDelete {
        partition: tp(),
        state,
        broker_id: 101,
        event_timestamp_ms: 5,
        broker_leader_epoch: 2,
    };
    c.plan(pd(PartitionDeleteState::DeletePartitionMarked));
    c.plan(pd(PartitionDeleteState::DeletePartitionStarted));
    let refused = c.try_plan(pd(PartitionDeleteState::DeletePartitionFinished));
    assert_eq!(
        refused.err().map(|e| e.kind()),
        Some(ErrorKind::InvalidState),
        "segments must be deleted first"
    );
    c.delete(uuid(1), 2);
    c.delete(uuid(2), 2);
    c.plan(pd(PartitionDeleteState::DeletePartitionFinished));
    c.compact();
    assert_eq!(c.surviving_keys(), vec![k(-1, 2, true)]);
    assert_eq!(
        c.restart().segments(&tp()).err().map(|e| e.kind()),
        Some(ErrorKind::NotFound)
    );
}

/// Why rlmeta does not tombstone by prefix. PR-A (apache/kafka#22459) tombstones, on a
/// segment's DELETE_SEGMENT_FINISHED, every base key with end offset at or below the deleted
/// segment's and epoch at or below the deleting broker's (and their `:UPDATE` keys). The remote
/// log manager also deletes out of order (a failed newest upload, over-sized custom metadata):
/// then that rule tombstones older live segments, and after compaction a restarted broker no
/// longer knows them: their data is unreadable and never deleted.
#[test]
fn prefix_rule_of_pr_22459_loses_a_live_segment() {
    let mut c = Cluster::new();
    c.upload(uuid(1), 0, 99, 1);
    c.upload(uuid(2), 100, 199, 1);
    // The newest segment is deleted first.
    c.delete(uuid(2), 1);

    // rlmeta: segment 1 survives compaction.
    let mut ours = Cluster {
        store: c.store.clone(),
        log: c.log.clone(),
        now: c.now,
    };
    ours.compact();
    assert_eq!(
        listing(&ours.restart()),
        vec![(uuid(1), SegmentState::CopySegmentFinished)]
    );

    // PR-A: the same log plus the prefix rule's tombstones for end offset <= 199, epoch <= 1.
    let mut theirs = Cluster {
        store: c.store.clone(),
        log: c.log.clone(),
        now: c.now,
    };
    let prefix: Vec<(i64, i32)> = vec![(99, 1), (199, 1)];
    for (end, epoch) in prefix {
        for update in [true, false] {
            theirs.now += 1;
            theirs
                .log
                .append(theirs.now, Some(k(end, epoch, update).into_bytes()), None);
        }
    }
    theirs.compact();
    assert!(
        listing(&theirs.restart()).is_empty(),
        "the prefix rule forgot live segment 1"
    );
}

/// KIP-950: disabling tiered storage with `remote.log.disable.policy=delete` deletes every remote
/// segment through the planner, so every key is tombstoned; `retain` keeps them all.
#[test]
fn disablement_delete_policy_tombstones_every_key_and_retain_keeps_them() {
    use rlmeta::tiered::{DisablePolicy, Tiering, segments_to_delete};
    for policy in [DisablePolicy::Delete, DisablePolicy::Retain] {
        let mut c = Cluster::new();
        c.upload(uuid(1), 0, 99, 1);
        c.upload(uuid(2), 100, 199, 2);
        let mut tiering = Tiering::enabled();
        let epoch = tiering
            .disable(policy)
            .expect("an enabled topic can be disabled");
        for id in segments_to_delete(&c.store, &tp(), policy) {
            c.delete(id, 3);
        }
        let left = segments_to_delete(&c.store, &tp(), policy).len();
        assert!(tiering.finish_disable(epoch, left).is_ok());
        c.compact();
        match policy {
            DisablePolicy::Delete => assert!(c.surviving_keys().is_empty()),
            DisablePolicy::Retain => assert_eq!(c.surviving_keys().len(), 4),
        }
    }
}

/// Migration: records written before KIP-1266 have null keys and expire at level 1. A copy that
/// an old broker started and a new one finishes, and segments finished entirely before the
/// upgrade (moved by `plan_backfill`), must still be known once every null-key record is gone.
#[test]
fn segments_from_before_kip_1266_survive_the_expiry_of_null_key_records() {
    use rlmeta::testing::stock;
    let old_started = |n: i64, start: i64| stock::started(&tp(), uuid(n), start, 4).unwrap();
    let old_finished =
        |n: i64| stock::update(&tp(), uuid(n), SegmentState::CopySegmentFinished).unwrap();
    let mut c = Cluster::new();
    let null_key = |c: &mut Cluster, v: Vec<u8>| {
        c.now += 1;
        let offset = c.log.append(c.now, None, Some(v.clone()));
        c.store.apply(offset, None, Some(&v));
    };
    // Segment 1: entirely before the upgrade. Segment 2: started by an old broker.
    null_key(&mut c, old_started(1, 0));
    null_key(&mut c, old_finished(1));
    null_key(&mut c, old_started(2, 100));
    let keys = c.plan(Event::CopyFinished(c.ev(uuid(2), 4)));
    assert_eq!(
        keys,
        vec![k(199, 4, false), k(199, 4, true)],
        "the segment record goes under its key first"
    );
    let backfill = c.store.plan_backfill(&tp(), 4, LEVEL).unwrap();
    assert_eq!(
        backfill.iter().map(|p| p.key.format()).collect::<Vec<_>>(),
        vec![k(99, 4, false), k(99, 4, true)]
    );
    c.produce(backfill);
    // Every null-key record expires (level 1 retention), then the cleaner runs.
    c.compact();
    assert!(c.log.records().all(|r| r.key.is_some()));
    assert_eq!(
        listing(&c.restart()),
        vec![
            (uuid(1), SegmentState::CopySegmentFinished),
            (uuid(2), SegmentState::CopySegmentFinished)
        ]
    );
}

/// Stock Kafka hands a metadata manager no leader epoch: a copy whose uploading epoch the host
/// does not know is refused retriably (never keyed with a made-up epoch), a stale epoch below
/// the segment's own data is refused, and updates and deletions of a keyed segment use its upload
/// key whatever the writer's epoch is.
#[test]
fn the_key_epoch_is_never_made_up() {
    use rlmeta::plan::UNKNOWN_EPOCH;
    let mut c = Cluster::new();
    let a = uuid(1);
    let mut seg = SegmentMetadata {
        id: a,
        start_offset: 0,
        end_offset: 999,
        broker_id: 101,
        max_timestamp_ms: 0,
        event_timestamp_ms: 0,
        leader_epochs: vec![(2, 0), (5, 500)].into(),
        segment_size_in_bytes: 1 << 20,
        custom_metadata: None,
        state: SegmentState::CopySegmentStarted,
        txn_index_empty: true,
        broker_leader_epoch: UNKNOWN_EPOCH,
    };
    let copy = |s: &SegmentMetadata| Event::CopyStarted {
        partition: tp(),
        segment: s.clone(),
    };
    let unknown = c.try_plan(copy(&seg)).err().map(|e| e.kind());
    assert_eq!(unknown, Some(ErrorKind::NotInitialized));
    seg.broker_leader_epoch = 4; // below the data's epoch 5: a stale epoch
    let stale = c.try_plan(copy(&seg)).err().map(|e| e.kind());
    assert_eq!(stale, Some(ErrorKind::InvalidState));
    seg.broker_leader_epoch = 6;
    assert_eq!(c.try_plan(copy(&seg)).unwrap(), vec![k(999, 6, false)]);
    // the finish and the deletion come with no known epoch: the upload key decides
    assert_eq!(
        c.plan(Event::CopyFinished(c.ev(a, UNKNOWN_EPOCH))),
        vec![k(999, 6, true)]
    );
    let deleted = c.delete(a, UNKNOWN_EPOCH);
    assert!(
        deleted.iter().all(|key| key.contains(":999:6")),
        "{deleted:?}"
    );
    let delete_partition = c.try_plan(Event::PartitionDelete {
        partition: tp(),
        state: PartitionDeleteState::DeletePartitionMarked,
        broker_id: 101,
        event_timestamp_ms: 0,
        broker_leader_epoch: UNKNOWN_EPOCH,
    });
    assert_eq!(
        delete_partition.err().map(|e| e.kind()),
        Some(ErrorKind::NotInitialized)
    );
}
