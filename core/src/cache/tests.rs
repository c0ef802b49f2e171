//! Kafka's own cache tests (spec §7.1, §7.3) re-created against the store, fed real encoded
//! records exactly as a broker's consumer would feed them.

use std::borrow::Cow;

use super::{Applied, Dropped, SegmentMetadata, Skip, Store};
use crate::ErrorKind;
use crate::model::PartitionDeleteState;
use crate::model::{SegmentState, TopicIdPartition, Uuid};
use crate::record::{
    LeaderEpochEntry, PartitionDeleteMetadataRecord, Record, SegmentIdEntry, SegmentMetadataRecord,
    TopicIdPartitionEntry, Value,
};

fn tp() -> TopicIdPartition {
    TopicIdPartition {
        topic_id: Uuid::new(0x0123456789abcdef, 7),
        topic: "foo".into(),
        partition: 0,
    }
}

fn seg_id(n: i64) -> SegmentIdEntry<'static> {
    SegmentIdEntry {
        topic_id_partition: TopicIdPartitionEntry {
            name: Cow::Borrowed("foo"),
            id: tp().topic_id,
            partition: 0,
            unknown_tagged_fields: vec![],
        },
        id: Uuid::new(n, n),
        unknown_tagged_fields: vec![],
    }
}

fn started(n: i64, start: i64, end: i64, epochs: &[(i32, i64)]) -> Vec<u8> {
    Value {
        version: 0,
        record: Record::Segment(SegmentMetadataRecord {
            remote_log_segment_id: seg_id(n),
            start_offset: start,
            end_offset: end,
            broker_id: 0,
            max_timestamp_ms: -1,
            event_timestamp_ms: 1,
            segment_leader_epochs: epochs
                .iter()
                .map(|&(e, o)| LeaderEpochEntry {
                    leader_epoch: e,
                    offset: o,
                    unknown_tagged_fields: vec![],
                })
                .collect(),
            segment_size_in_bytes: 1_048_576,
            custom_metadata: None,
            remote_log_segment_state: 0,
            txn_index_empty: false,
            broker_leader_epoch: 0,
            unknown_tagged_fields: vec![],
        }),
    }
    .encode()
    .expect("a test segment record encodes")
}

/// A version-0 update as a stock broker writes it (broker 1, timestamp 2).
fn update(n: i64, state: SegmentState) -> Vec<u8> {
    crate::testing::stock::update(&tp(), Uuid::new(n, n), state)
        .expect("a test update record encodes")
}

struct Log {
    store: Store,
    offset: i64,
}

impl Log {
    fn new() -> Log {
        let mut store = Store::new();
        store.mark_initialized(&tp());
        Log { store, offset: 0 }
    }
    fn push(&mut self, value: Vec<u8>) -> Applied {
        self.offset += 1;
        self.store.apply(self.offset, None, Some(&value))
    }
    /// The segment Kafka's cache would serve; a failed query fails the test (it is not "none").
    fn at(&self, epoch: i32, offset: i64) -> Option<Uuid> {
        self.store
            .segment_for(&tp(), epoch, offset)
            .expect("segment_for answers on an initialized partition")
            .map(|m| m.id)
    }
    /// An epoch's segments; a failed query fails the test (it is not "no segments").
    fn epoch_states(&self, epoch: i32) -> Vec<(Uuid, SegmentState)> {
        self.store
            .segments_for_epoch(&tp(), epoch)
            .expect("segments_for_epoch answers on an initialized partition")
            .into_iter()
            .map(|m: &SegmentMetadata| (m.id, m.state))
            .collect()
    }
}

const S: fn(i64) -> Uuid = |n| Uuid::new(n, n);
use SegmentState::*;

/// RemoteLogSegmentLifecycleTest.testRemoteLogSegmentLifeCycle
#[test]
fn lifecycle_of_four_segments() {
    let mut log = Log::new();
    log.push(started(0, 0, 100, &[(0, 0), (1, 20), (2, 80)]));
    assert_eq!(log.at(1, 40), None);
    assert!((0..3).all(|e| log.store.highest_offset_for_epoch(&tp(), e).ok() == Some(None)));
    log.push(update(0, CopySegmentFinished));
    for (n, s, e, epochs) in [
        (1, 101, 200, &[(2, 101)][..]),
        (2, 201, 300, &[(2, 201), (3, 240)]),
        (3, 250, 400, &[(3, 250), (4, 370)]),
    ] {
        log.push(started(n, s, e, epochs));
        log.push(update(n, CopySegmentFinished));
    }
    assert_eq!(
        [
            log.at(1, 40),
            log.at(2, 110),
            log.at(3, 240),
            log.at(3, 250),
            log.at(4, 375)
        ],
        [Some(S(0)), Some(S(1)), Some(S(2)), Some(S(3)), Some(S(3))]
    );
    assert_eq!(
        [log.at(1, 110), log.at(4, 401), log.at(5, 301)],
        [None, None, None]
    );
    log.push(update(0, DeleteSegmentStarted));
    assert_eq!(log.at(0, 10), None);
    log.push(update(0, DeleteSegmentFinished));
    assert_eq!(log.at(0, 10), None);
    let highest: Vec<_> = (0..6)
        .map(|e| {
            log.store
                .highest_offset_for_epoch(&tp(), e)
                .expect("highest_offset_for_epoch answers on an initialized partition")
        })
        .collect();
    assert_eq!(
        highest,
        vec![Some(19), Some(79), Some(239), Some(369), Some(400), None]
    );
}

/// A deletion usually starts with the oldest segment, which the cache reads first: one that
/// starts elsewhere must still reach its own segment, and the oldest must stay as it was.
#[test]
fn a_deletion_of_a_newer_segment_leaves_the_oldest_serving() {
    let mut log = Log::new();
    for (n, s, e) in [(0, 0, 99), (1, 100, 199), (2, 200, 299)] {
        log.push(started(n, s, e, &[(0, s)]));
        log.push(update(n, CopySegmentFinished));
    }
    assert_eq!(log.push(update(1, DeleteSegmentStarted)), Applied::Applied);
    assert_eq!(
        [log.at(0, 50), log.at(0, 150), log.at(0, 250)],
        [Some(S(0)), None, Some(S(2))]
    );
    assert_eq!(
        log.epoch_states(0),
        vec![
            (S(0), CopySegmentFinished),
            (S(1), DeleteSegmentStarted),
            (S(2), CopySegmentFinished)
        ],
        "Kafka's order: by start offset"
    );
    // Then the oldest, as usual, and both deletions finish.
    assert_eq!(log.push(update(0, DeleteSegmentStarted)), Applied::Applied);
    for n in [1, 0] {
        assert_eq!(log.push(update(n, DeleteSegmentFinished)), Applied::Applied);
    }
    assert_eq!(log.epoch_states(0), vec![(S(2), CopySegmentFinished)]);
}

/// An epoch that spans more offsets than an entry keeps beside its start (32 bits) ends where
/// its segment's leader epochs say: the row answers, to the offset.
#[test]
fn epochs_too_wide_for_an_entry_end_where_the_row_says() {
    const W: i64 = 1 << 33;
    let mut log = Log::new();
    // Epoch 1 spans W offsets, epoch 2 one, epoch 3 W again; then a narrow segment after it.
    log.push(started(0, 0, 2 * W, &[(1, 0), (2, W), (3, W + 1)]));
    log.push(update(0, CopySegmentFinished));
    log.push(started(1, 2 * W + 1, 2 * W + 10, &[(3, 2 * W + 1)]));
    log.push(update(1, CopySegmentFinished));
    assert_eq!(
        [log.at(1, 0), log.at(1, W - 1), log.at(1, W), log.at(2, W)],
        [Some(S(0)), Some(S(0)), None, Some(S(0))]
    );
    assert_eq!(
        [log.at(2, W + 1), log.at(3, W + 1), log.at(3, 2 * W)],
        [None, Some(S(0)), Some(S(0))]
    );
    assert_eq!(
        [
            log.at(3, 2 * W + 1),
            log.at(3, 2 * W + 10),
            log.at(3, 2 * W + 11)
        ],
        [Some(S(1)), Some(S(1)), None]
    );
}

/// RemoteLogSegmentLifecycleTest.testCacheListSegments
#[test]
fn list_segments_in_kafkas_order() {
    let mut log = Log::new();
    for (n, s, e, epochs) in [
        (0, 0, 100, &[(0, 0)][..]),
        (1, 101, 200, &[(0, 101)]),
        (2, 201, 400, &[(0, 201), (1, 301)]),
    ] {
        log.push(started(n, s, e, epochs));
        log.push(update(n, CopySegmentFinished));
    }
    assert_eq!(
        log.epoch_states(0).iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![S(0), S(1), S(2)]
    );
    assert_eq!(
        log.epoch_states(1).iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![S(2)]
    );
    assert_eq!(log.store.segments(&tp()).map(|v| v.len()).ok(), Some(3));
}

/// RemoteLogMetadataCacheTest.testDropEventOnInvalidStateTransition
#[test]
fn invalid_transitions_are_dropped() {
    let mut log = Log::new();
    log.push(started(1, 10, 100, &[(5, 10)]));
    let steps = [
        (DeleteSegmentFinished, false, CopySegmentStarted),
        (CopySegmentFinished, true, CopySegmentFinished),
        (DeleteSegmentFinished, false, CopySegmentFinished),
        (CopySegmentStarted, false, CopySegmentFinished),
        (DeleteSegmentStarted, true, DeleteSegmentStarted),
        (CopySegmentFinished, false, DeleteSegmentStarted),
        (CopySegmentStarted, false, DeleteSegmentStarted),
    ];
    for (to, applies, after) in steps {
        let outcome = log.push(update(1, to));
        assert_eq!(outcome == Applied::Applied, applies, "{to:?}: {outcome:?}");
        if !applies {
            assert!(
                matches!(
                    outcome,
                    Applied::Skipped(Skip::Dropped {
                        reason: Dropped::InvalidTransition { .. },
                        ..
                    })
                ),
                "{outcome:?}"
            );
        }
        assert_eq!(log.epoch_states(5), vec![(S(1), after)]);
    }
    assert_eq!(log.push(update(1, DeleteSegmentFinished)), Applied::Applied);
    assert!(log.epoch_states(5).is_empty());
}

/// RemoteLogMetadataCacheTest.testCacheUpdateMetadataOnInvalidArgs (both initialized states):
/// Kafka drops an update for an unknown segment (silently, or with an error once initialized);
/// the store keeps it as an orphan either way and says whether Kafka would have complained.
#[test]
fn updates_for_unknown_segments_become_orphans() {
    for initialized in [false, true] {
        let mut store = Store::new();
        if initialized {
            store.mark_initialized(&tp());
        }
        for (i, state) in [CopySegmentFinished, DeleteSegmentStarted]
            .into_iter()
            .enumerate()
        {
            assert_eq!(
                store.apply(i as i64, None, Some(&update(9, state))),
                Applied::Orphaned
            );
        }
        let orphans = store.orphans(&tp());
        assert_eq!(
            orphans
                .iter()
                .map(|o| (o.segment_id, o.state))
                .collect::<Vec<_>>(),
            vec![(S(9), DeleteSegmentStarted)]
        );
        assert_eq!(
            store.apply(5, None, Some(&update(9, DeleteSegmentFinished))),
            Applied::Orphaned
        );
        assert!(
            store.orphans(&tp()).is_empty(),
            "a finished deletion needs no retry"
        );
    }
}

#[test]
fn queries_fail_like_kafka_before_init_and_for_unknown_partitions() {
    let mut store = Store::new();
    store.apply(0, None, Some(&started(1, 0, 10, &[(0, 0)])));
    assert_eq!(
        store.segments(&tp()).err().map(|e| e.kind()),
        Some(ErrorKind::NotInitialized)
    );
    let other = TopicIdPartition {
        partition: 1,
        ..tp()
    };
    assert_eq!(
        store.segments(&other).err().map(|e| e.kind()),
        Some(ErrorKind::NotFound)
    );
}

#[test]
fn tombstones_and_garbage_never_stop_replay() {
    let mut log = Log::new();
    assert!(matches!(
        log.store
            .apply(1, Some(b"AAAAAAAAAAAAAAAAAAAAAA:foo:0:10:0"), None),
        Applied::Skipped(Skip::Tombstone { .. })
    ));
    assert!(matches!(
        log.store.apply(2, None, Some(b"corrupted")),
        Applied::Skipped(Skip::Undecodable(_))
    ));
    assert!(matches!(
        log.store
            .apply(3, Some(b"not a key"), Some(&started(1, 0, 10, &[(0, 0)]))),
        Applied::AppliedWithBadKey(_)
    ));
    assert_eq!(log.store.segments(&tp()).map(|v| v.len()).ok(), Some(1));
}

/// A keyed record read by the plain path and the same record read by the full decoder (its
/// first tag count spelled in two bytes, which `read_plain` leaves to `decode_value`) leave the
/// store in the same state: the same outcomes, segments, key holders and orphans. Keys that do
/// not fit their record (another partition, a wrong end offset, a missing `:UPDATE`) and one that
/// does not parse go the full way in both and are reported the same.
#[test]
fn keyed_records_read_plain_or_in_full_leave_the_same_state() {
    use crate::key::RecordKey;
    let key = |end: i64, update: bool| {
        let k = RecordKey::new(tp().topic_id, "foo", 0, end, 0, update).map(|k| k.format());
        k.expect("a valid record key").into_bytes()
    };
    // Offsets of segment n are 100n..100n+99; its key is (end offset, epoch 0).
    let end = |n: i64| 100 * n + 99;
    let mut records: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for n in 0..6 {
        records.push((
            key(end(n), false),
            started(n, 100 * n, end(n), &[(0, 100 * n)]),
        ));
        records.push((key(end(n), true), update(n, CopySegmentFinished)));
    }
    for n in 0..3 {
        records.push((key(end(n), true), update(n, DeleteSegmentStarted)));
        records.push((key(end(n), true), update(n, DeleteSegmentFinished)));
    }
    // Keys that do not fit: the wrong end offset, no :UPDATE on an update, and not a key at all.
    records.push((key(12_345, false), started(9, 900, 999, &[(0, 900)])));
    records.push((key(end(4), false), update(4, DeleteSegmentStarted)));
    records.push((b"not a key".to_vec(), update(5, DeleteSegmentStarted)));
    // An update whose segment record is missing: an orphan, held under its key.
    records.push((key(end(20), true), update(20, DeleteSegmentStarted)));

    // The topic partition entry's tag count follows the frame, api key and version (3 bytes), the
    // name ("foo": 4 bytes), the topic id (16) and the partition (4).
    let in_full = |v: &[u8]| {
        let mut v = v.to_vec();
        assert_eq!(
            v.get(27),
            Some(&0),
            "the tag count is where this test expects it"
        );
        v.insert(27, 0x80);
        assert!(crate::record::read_plain(&v).is_none() && crate::record::decode_value(&v).is_ok());
        v
    };
    let (mut plain, mut full) = (Store::new(), Store::new());
    for (offset, (k, v)) in records.iter().enumerate() {
        assert!(crate::record::read_plain(v).is_some());
        let a = plain.apply(offset as i64, Some(k), Some(v));
        let b = full.apply(offset as i64, Some(k), Some(&in_full(v)));
        assert_eq!(a, b, "record {offset}");
    }
    plain.mark_initialized(&tp());
    full.mark_initialized(&tp());
    let ids = |s: &Store| -> Vec<(Uuid, SegmentState)> {
        let segments = s
            .segments(&tp())
            .expect("segments answers on an initialized partition");
        segments.iter().map(|m| (m.id, m.state)).collect()
    };
    assert_eq!(ids(&plain), ids(&full));
    assert_eq!(ids(&plain).len(), 4, "segments 3, 4, 5 and 9 are held");
    let (p, f) = (plain.slot(&tp()), full.slot(&tp()));
    assert!(p.is_some() && f.is_some());
    if let (Some(p), Some(f)) = (p, f) {
        assert_eq!(p.keys, f.keys, "the same keys and upload keys");
        assert_eq!(p.orphans.len(), 1);
        assert_eq!(
            p.orphans.values().map(|o| &o.key).collect::<Vec<_>>(),
            f.orphans.values().map(|o| &o.key).collect::<Vec<_>>()
        );
        assert_eq!(p.keys.len(), 6 + 1, "six segments' keys and the orphan's");
    }
}

/// A broker's store skips a record of a partition it does not hold as NotHeld whatever its key
/// (null, fitting, for another record, not a key at all), read plain or in full, and leaves no
/// trace; a value Kafka's object checks refuse is still undecodable, as for a held partition.
#[test]
fn records_of_a_partition_not_held_are_skipped_whatever_their_key() {
    use crate::key::RecordKey;
    let key = |end: i64, update: bool| {
        let k = RecordKey::new(tp().topic_id, "foo", 0, end, 0, update).map(|k| k.format());
        Some(k.expect("a valid record key").into_bytes())
    };
    let mut in_full = started(3, 300, 399, &[(0, 300)]);
    in_full.insert(27, 0x80); // a two-byte tag count: only the full reader reads it
    assert!(crate::record::read_plain(&in_full).is_none());
    let records: Vec<(Option<Vec<u8>>, Vec<u8>)> = vec![
        (None, started(1, 0, 99, &[(0, 0)])),
        (key(99, false), started(1, 0, 99, &[(0, 0)])),
        (key(99, true), update(1, CopySegmentFinished)),
        (key(12_345, false), started(2, 100, 199, &[(0, 100)])),
        (key(199, false), update(2, CopySegmentFinished)),
        (Some(b"not a key".to_vec()), update(2, DeleteSegmentStarted)),
        (Some(b"not a key".to_vec()), in_full.clone()),
        (None, in_full),
    ];
    let mut store = Store::held();
    for (offset, (k, v)) in records.iter().enumerate() {
        let a = store.apply(offset as i64, k.as_deref(), Some(v));
        assert!(
            matches!(&a, Applied::Skipped(Skip::NotHeld { partition }) if *partition == tp()),
            "record {offset}: {a:?}"
        );
    }
    // No leader epoch: refused by Kafka's object checks, plain or in full, held or not.
    for k in [None, key(499, false), Some(b"not a key".to_vec())] {
        let bad = started(4, 400, 499, &[]);
        let a = store.apply(10, k.as_deref(), Some(&bad));
        assert!(
            matches!(a, Applied::Skipped(Skip::Undecodable(_))),
            "{k:?}: {a:?}"
        );
    }
    assert!(store.partitions().is_empty(), "and leave no trace");
}

/// Partitions sharing a topic id and number but not a name are distinct, and each keeps its own
/// state when another is unloaded (which moves slots around) or named in between.
#[test]
fn partitions_stay_apart_through_unloads() {
    let named = |topic: &str, partition: i32| TopicIdPartition {
        topic: topic.into(),
        partition,
        ..tp()
    };
    let (foo, bar, foo1) = (named("foo", 0), named("bar", 0), named("foo", 1));
    let mut store = Store::new();
    for p in [&bar, &foo, &foo1] {
        store.load_partition(p);
    }
    // Records name "foo" partition 0 only.
    for (offset, v) in [
        started(1, 0, 99, &[(0, 0)]),
        update(1, SegmentState::CopySegmentFinished),
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(store.apply(offset as i64, None, Some(v)), Applied::Applied);
    }
    for p in [&bar, &foo, &foo1] {
        store.mark_initialized(p);
    }
    let held = |store: &Store, p: &TopicIdPartition| store.segments(p).map(|s| s.len());
    assert_eq!(held(&store, &foo).ok(), Some(1));
    store.unload_partition(&bar);
    assert_eq!(
        held(&store, &foo).ok(),
        Some(1),
        "foo survives bar's unload"
    );
    assert_eq!(held(&store, &foo1).ok(), Some(0));
    assert!(held(&store, &bar).is_err(), "bar is gone");
    assert_eq!(store.partition_by_id(foo.topic_id, 0), Some(&foo));
    store.unload_partition(&foo);
    assert!(held(&store, &foo).is_err());
    assert_eq!(store.partitions(), vec![&foo1]);
    assert_eq!(store.partition_by_id(foo.topic_id, 0), None);
    println!("partitions: 3 loaded, 2 unloaded, each kept apart");
}

/// The issue-31 sequence: a partition unloaded while its metadata partition keeps being read, then
/// loaded again and its metadata partition replayed from the beginning, ends with what a fresh
/// replay gives. A store that keeps every partition re-created the slot from the records read
/// while the partition was away, and the replay then skipped them all as already applied.
#[test]
fn a_partition_loaded_again_is_rebuilt_as_a_fresh_replay_builds_it() {
    let records = [
        started(1, 0, 99, &[(0, 0)]),
        update(1, SegmentState::CopySegmentFinished),
        started(2, 100, 199, &[(0, 100)]),
        update(2, SegmentState::CopySegmentFinished),
    ];
    let replay = |store: &mut Store, from: usize, to: usize| -> Vec<Applied> {
        (from..to)
            .map(|o| store.apply(o as i64, None, Some(&records[o])))
            .collect()
    };
    let mut fresh = Store::held();
    assert!(fresh.load_partition(&tp()));
    replay(&mut fresh, 0, 4);
    fresh.mark_initialized(&tp());

    let mut store = Store::held();
    assert!(
        store.load_partition(&tp()),
        "a first load asks for a replay"
    );
    assert!(
        !store.load_partition(&tp()),
        "a second load of a held partition does not"
    );
    replay(&mut store, 0, 2);
    store.unload_partition(&tp());
    let away = replay(&mut store, 2, 4);
    assert!(
        away.iter()
            .all(|a| matches!(a, Applied::Skipped(Skip::NotHeld { .. }))),
        "records of a partition not held are skipped: {away:?}"
    );
    assert!(store.partitions().is_empty(), "and leave no trace");
    assert!(store.load_partition(&tp()), "back: it must be replayed");
    let again = replay(&mut store, 0, 4);
    assert!(again.iter().all(|a| *a == Applied::Applied), "{again:?}");
    store.mark_initialized(&tp());
    let ids =
        |s: &Store| -> Vec<Uuid> { s.segments(&tp()).unwrap().iter().map(|m| m.id).collect() };
    assert_eq!(ids(&store), ids(&fresh));
    assert_eq!(ids(&store).len(), 2);

    // A store that keeps every partition (the tools') is the one that lost the history.
    let mut all = Store::new();
    all.load_partition(&tp());
    replay(&mut all, 0, 2);
    all.unload_partition(&tp());
    replay(&mut all, 2, 4);
    assert!(
        !all.load_partition(&tp()),
        "the slot came back from the records read while away"
    );
    let skipped = replay(&mut all, 0, 4);
    assert!(
        skipped
            .iter()
            .all(|a| matches!(a, Applied::Skipped(Skip::AlreadyApplied { .. }))),
        "{skipped:?}"
    );
    println!(
        "reload: held store rebuilt 2 segments as a fresh replay; the all-partitions store kept 1"
    );
}

/// Rewinding one metadata partition resets exactly its held partitions, which then rebuild from a
/// replay; partitions of other metadata partitions keep their state.
#[test]
fn a_rewound_metadata_partition_rebuilds_only_its_partitions() {
    let n = 50;
    let mp = crate::partitioner::metadata_partition(tp().topic_id, 0, n).unwrap();
    let other = (1..200)
        .map(|p| TopicIdPartition {
            partition: p,
            ..tp()
        })
        .find(|o| crate::partitioner::metadata_partition(o.topic_id, o.partition, n).unwrap() != mp)
        .expect("a partition in another metadata partition");
    let mut store = Store::held();
    store.load_partition(&tp());
    store.load_partition(&other);
    for (o, v) in [
        started(1, 0, 99, &[(0, 0)]),
        update(1, SegmentState::CopySegmentFinished),
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(store.apply(o as i64, None, Some(v)), Applied::Applied);
    }
    store.mark_initialized(&tp());
    store.mark_initialized(&other);
    assert_eq!(store.rewind_metadata_partition(mp, n).unwrap(), vec![tp()]);
    assert_eq!(
        store.segments(&tp()).err().map(|e| e.kind()),
        Some(ErrorKind::NotInitialized),
        "a rewound partition is not available until replayed"
    );
    assert!(
        store.segments(&other).is_ok(),
        "the other metadata partition keeps serving"
    );
    assert_eq!(
        store.apply(0, None, Some(&started(1, 0, 99, &[(0, 0)]))),
        Applied::Applied,
        "the replay applies again from offset 0"
    );
    assert!(store.rewind_metadata_partition(mp, 0).is_err());
}

/// The partition a host names by topic id and number alone: one still held before one deleted,
/// then the first loaded.
#[test]
fn a_partition_named_by_id_alone_is_the_held_then_the_first_loaded() {
    let named = |topic: &str| TopicIdPartition {
        topic: topic.into(),
        ..tp()
    };
    let (bar, foo) = (named("bar"), named("foo"));
    let mut store = Store::new();
    store.load_partition(&bar);
    store.load_partition(&foo);
    assert_eq!(
        store.partition_by_id(bar.topic_id, 0),
        Some(&bar),
        "first loaded"
    );
    let mut reversed = Store::new();
    reversed.load_partition(&foo);
    reversed.load_partition(&bar);
    assert_eq!(
        reversed.partition_by_id(bar.topic_id, 0),
        Some(&foo),
        "first loaded, not first by name"
    );
    for (offset, state) in PartitionDeleteState::ALL.into_iter().enumerate() {
        let delete = Value {
            version: 0,
            record: Record::PartitionDelete(PartitionDeleteMetadataRecord {
                topic_id_partition: TopicIdPartitionEntry {
                    name: Cow::Borrowed("bar"),
                    id: bar.topic_id,
                    partition: 0,
                    unknown_tagged_fields: vec![],
                },
                broker_id: 1,
                event_timestamp_ms: 2,
                remote_partition_delete_state: state.id(),
                broker_leader_epoch: 0,
                end_offset: 0,
                unknown_tagged_fields: vec![],
            }),
        }
        .encode()
        .expect("a test partition-delete record encodes");
        assert_eq!(
            store.apply(offset as i64, None, Some(&delete)),
            Applied::Applied
        );
    }
    assert_eq!(store.partitions(), vec![&foo], "bar is deleted");
    assert_eq!(
        store.partition_by_id(bar.topic_id, 0),
        Some(&foo),
        "held before deleted"
    );
    store.unload_partition(&foo);
    assert_eq!(
        store.partition_by_id(bar.topic_id, 0),
        Some(&bar),
        "deleted, yet known"
    );
    assert_eq!(store.partition_by_id(bar.topic_id, 1), None);
}

#[test]
fn leader_epochs_sort_as_kafkas_map_holds_them() {
    use proptest::prelude::*;
    // Kafka puts each (epoch, offset) into a TreeMap in written order: ascending by epoch, a
    // later duplicate replacing an earlier one. Ascending input (every broker's) stays as is.
    let pairs = proptest::collection::vec((0i32..6, any::<i64>()), 0..8);
    proptest!(|(pairs in pairs)| {
        let map: std::collections::BTreeMap<i32, i64> = pairs.iter().copied().collect();
        let want: Vec<(i32, i64)> = map.into_iter().collect();
        let got = SegmentMetadata::sorted_epochs(pairs.iter().copied().collect());
        prop_assert_eq!(got.to_vec(), want);
    });
}
