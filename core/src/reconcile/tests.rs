//! Every class and every plan rule of `reconcile`, fed real encoded records and a listing in the
//! test file RSM's layout.

use std::borrow::Cow;

use super::*;
use crate::error::ErrorKind;
use crate::record::{
    LeaderEpochEntry, PartitionDeleteMetadataRecord, SegmentIdEntry, SegmentMetadataRecord,
    TopicIdPartitionEntry, Value,
};

fn tp(p: i32) -> TopicIdPartition {
    TopicIdPartition {
        topic_id: Uuid::new(0x0123456789abcdef, 7),
        topic: "foo-1".into(),
        partition: p,
    }
}

fn sid(p: i32, n: i64) -> SegmentIdEntry<'static> {
    let t = tp(p);
    SegmentIdEntry {
        topic_id_partition: TopicIdPartitionEntry {
            name: Cow::Owned(t.topic),
            id: t.topic_id,
            partition: p,
            unknown_tagged_fields: vec![],
        },
        id: Uuid::new(n, n + 1),
        unknown_tagged_fields: vec![],
    }
}

fn started(p: i32, n: i64, start: i64, end: i64, ts: i64) -> Vec<u8> {
    Value {
        version: 0,
        record: Record::Segment(SegmentMetadataRecord {
            remote_log_segment_id: sid(p, n),
            start_offset: start,
            end_offset: end,
            broker_id: 0,
            max_timestamp_ms: -1,
            event_timestamp_ms: ts,
            segment_leader_epochs: vec![LeaderEpochEntry {
                leader_epoch: 0,
                offset: start,
                unknown_tagged_fields: vec![],
            }]
            .into(),
            segment_size_in_bytes: 100,
            custom_metadata: None,
            remote_log_segment_state: 0,
            txn_index_empty: true,
            broker_leader_epoch: 0,
            unknown_tagged_fields: vec![],
        }),
    }
    .encode()
    .unwrap()
}

fn update(p: i32, n: i64, state: SegmentState, ts: i64) -> Vec<u8> {
    crate::testing::stock::update_by(&tp(p), Uuid::new(n, n + 1), state, 0, ts).unwrap()
}

fn partition_deleted(p: i32) -> Vec<u8> {
    Value {
        version: 0,
        record: Record::PartitionDelete(PartitionDeleteMetadataRecord {
            topic_id_partition: sid(p, 0).topic_id_partition,
            broker_id: 0,
            event_timestamp_ms: 5,
            remote_partition_delete_state: PartitionDeleteState::DeletePartitionFinished.id(),
            broker_leader_epoch: 0,
            end_offset: 0,
            unknown_tagged_fields: vec![],
        }),
    }
    .encode()
    .unwrap()
}

const FILES: [&str; 5] = [
    "segment.log",
    "offset.index",
    "time.index",
    "producer.snapshot",
    "leader-epoch.checkpoint",
];

fn objects(p: i32, n: i64, files: &[&str], log_size: u64, mtime: i64) -> Vec<Object> {
    let t = tp(p);
    files
        .iter()
        .map(|f| Object {
            key: format!(
                "{}-{}-{}/{}/{f}",
                t.topic,
                p,
                t.topic_id,
                Uuid::new(n, n + 1)
            ),
            size: if *f == "segment.log" { log_size } else { 8 },
            last_modified_ms: mtime,
        })
        .collect()
}

const HOUR: i64 = 3_600_000;
use SegmentState::*;

/// One segment of each class: the ledger and the listing of `every_class_and_the_plan`.
fn scene() -> (Ledger, Vec<Object>) {
    let mut l = Ledger::new();
    let mut off = 0;
    let mut push = |l: &mut Ledger, v: Vec<u8>| {
        off += 1;
        l.apply(off, None, Some(&v));
    };
    // 1 live, 2 dangling (log gone), 3 size mismatch, 4 abandoned and covered by 5, 6 abandoned
    // uncovered, 7 copy in progress, 8 stuck deletion, 9 leaked, 10 deleted and gone.
    for (n, s, e) in [(1, 0, 9), (2, 10, 19), (3, 20, 29), (5, 30, 39)] {
        push(&mut l, started(0, n, s, e, 10));
        push(&mut l, update(0, n, CopySegmentFinished, 11));
    }
    push(&mut l, started(0, 4, 30, 39, 10));
    push(&mut l, started(0, 6, 40, 49, 10));
    push(&mut l, started(0, 7, 50, 59, 10 * HOUR - 1000));
    for n in [8, 9, 10] {
        push(&mut l, started(0, n, 100 + n, 100 + n, 1));
        push(&mut l, update(0, n, CopySegmentFinished, 2));
        push(&mut l, update(0, n, DeleteSegmentStarted, 3));
    }
    push(&mut l, update(0, 9, DeleteSegmentFinished, 4));
    push(&mut l, update(0, 10, DeleteSegmentFinished, 4));

    let mut listing = Vec::new();
    listing.extend(objects(0, 1, &FILES, 100, 0));
    listing.extend(objects(0, 2, &FILES[1..], 100, 0));
    listing.extend(objects(0, 3, &FILES, 99, 0));
    listing.extend(objects(0, 4, &FILES[..2], 100, 0));
    listing.extend(objects(0, 5, &FILES, 100, 0));
    listing.extend(objects(0, 6, &FILES[..2], 100, 0)); // abandoned, not covered: kept
    listing.extend(objects(0, 8, &FILES, 100, 0));
    listing.extend(objects(0, 9, &FILES, 100, 0));
    listing.extend(objects(0, 77, &FILES[..1], 5, 0)); // orphaned, old
    listing.extend(objects(0, 78, &FILES[..1], 5, 10 * HOUR - 10)); // orphaned, young
    listing.push(Object {
        key: "journal.txt".into(),
        size: 3,
        last_modified_ms: 0,
    });

    (l, listing)
}

/// One segment of each class, and what the plan makes of each.
#[test]
fn every_class_and_the_plan() {
    let (l, listing) = scene();
    let layout = Layout::parse("rlmeta-file").unwrap();
    let r = reconcile(
        &l,
        &listing,
        &layout,
        Params {
            now_ms: 10 * HOUR,
            grace_ms: HOUR,
            metadata_as_of_ms: None,
            listing_as_of_ms: None,
        },
    )
    .unwrap();
    let class_of = |n: i64| {
        r.segments
            .iter()
            .find(|s| s.id == Uuid::new(n, n + 1))
            .map(|s| s.class)
    };
    use SegmentClass as C;
    for (n, c) in [
        (1, C::Live),
        (2, C::Dangling),
        (3, C::SizeMismatch),
        (4, C::AbandonedUpload),
        (5, C::Live),
        (6, C::AbandonedUpload),
        (7, C::CopyInProgress),
        (8, C::StuckDeletion),
        (9, C::Leaked),
        (10, C::Deleted),
    ] {
        assert_eq!(class_of(n), Some(c), "segment {n}");
    }
    let s2 = r.segments.iter().find(|s| s.class == C::Dangling).unwrap();
    assert_eq!(s2.missing_files, vec!["segment.log".to_owned()]);
    assert!(
        r.segments
            .iter()
            .find(|s| s.id == Uuid::new(4, 5))
            .unwrap()
            .covered
    );
    let s6 = r.segments.iter().find(|s| s.id == Uuid::new(6, 7)).unwrap();
    assert!(!s6.covered && s6.objects.len() == 2);
    assert!(
        s6.objects
            .iter()
            .all(|i| !r.objects[*i as usize].safe_to_delete)
    );

    // Safe: segment 4's two objects, segment 9's five, orphan 77's one; not orphan 78 (young).
    let safe: Vec<&str> = r
        .safe_to_delete
        .iter()
        .map(|i| listing[*i as usize].key.as_str())
        .collect();
    assert_eq!(safe.len(), 2 + 5 + 1, "{safe:?}");
    let id = |n: i64| Uuid::new(n, n + 1).to_string();
    assert!(
        safe.iter()
            .all(|k| k.contains(&id(4)) || k.contains(&id(9)) || k.contains(&id(77)))
    );
    let young = r
        .objects
        .iter()
        .zip(&listing)
        .find(|(_, o)| o.key.contains(&id(78)))
        .unwrap()
        .0;
    assert_eq!(young.class, ObjectClass::Orphaned);
    assert!(!young.safe_to_delete && young.note.as_deref().unwrap().contains("within the grace"));
    // Needs a person: dangling 2, size mismatch 3, uncovered abandoned 6, stuck 8.
    let person: Vec<Uuid> = r
        .needs_person
        .iter()
        .map(|i| r.segments[*i as usize].id)
        .collect();
    assert_eq!(person, [2, 3, 6, 8].map(|n| Uuid::new(n, n + 1)).to_vec());
    // The journal is unmatched, reported and never deleted.
    let last = r.objects.last().unwrap();
    assert_eq!(last.class, ObjectClass::Unmatched);
    assert!(!last.safe_to_delete);
    // Totals per partition and class.
    let t = r.totals[&(Some(0), "leaked")];
    assert_eq!((t.segments, t.objects, t.object_bytes), (1, 5, 100 + 4 * 8));
    let t = r.totals[&(Some(0), "orphaned")];
    assert_eq!((t.segments, t.objects, t.object_bytes), (2, 2, 10));
    assert_eq!(r.totals[&(None, "unmatched")].objects, 1);

    // The same metadata as a snapshot (files): its newest record is segment 7's start.
    assert_eq!(l.newest_event_ms(), Some(10 * HOUR - 1000));
    let as_of = |t: i64| {
        reconcile(
            &l,
            &listing,
            &layout,
            Params {
                now_ms: 10 * HOUR,
                grace_ms: HOUR,
                metadata_as_of_ms: Some(t),
                listing_as_of_ms: None,
            },
        )
        .unwrap()
    };
    // A snapshot two hours in: every object modified at 0 is older than it less the grace, so
    // the plan is the live read's.
    assert_eq!(as_of(2 * HOUR).safe_to_delete, r.safe_to_delete);
    // A snapshot half an hour in: objects modified at 0 may belong to uploads it does not know
    // yet; nothing is safe, and each says why.
    let early = as_of(HOUR / 2);
    assert!(early.safe_to_delete.is_empty());
    for i in &r.safe_to_delete {
        let o = &early.objects[*i as usize];
        assert!(!o.safe_to_delete);
        assert!(
            o.note
                .as_deref()
                .unwrap()
                .contains("the snapshot may not know its upload"),
            "{:?}",
            o.note
        );
    }

    // The same store listed by an inventory made at `t`: a segment whose latest record came after
    // it, less the grace, is not judged by it.
    let listed_at = |t: i64| {
        reconcile(
            &l,
            &listing,
            &layout,
            Params {
                now_ms: 10 * HOUR,
                grace_ms: HOUR,
                metadata_as_of_ms: None,
                listing_as_of_ms: Some(t),
            },
        )
        .unwrap()
    };
    let class_at = |r: &Reconciliation, n: i64| {
        r.segments
            .iter()
            .find(|s| s.id == Uuid::new(n, n + 1))
            .map(|s| (s.class, s.why.clone()))
            .unwrap()
    };
    // Made two hours in: every record but segment 7's start came before it less the grace.
    let late = listed_at(2 * HOUR);
    for n in 1..=10 {
        assert_eq!(class_at(&late, n).0, class_of(n).unwrap(), "segment {n}");
    }
    // Made at 0: segment 2 finished (at 11 ms) after it less the grace, so its missing log may
    // have been uploaded since: not dangling; segment 9 was deleted (4 ms) after it: its
    // objects there may be gone since: not leaked. The rest are judged as before.
    let early = listed_at(0);
    let (c2, why2) = class_at(&early, 2);
    assert_eq!(c2, C::CopyInProgress);
    assert!(
        why2.contains("the listing may predate its objects"),
        "{why2}"
    );
    let (c9, why9) = class_at(&early, 9);
    assert_eq!(c9, C::Deleted);
    assert!(why9.contains("may be gone since"), "{why9}");
    for n in [1, 3, 4, 5, 6, 7, 8, 10] {
        assert_eq!(class_at(&early, n).0, class_of(n).unwrap(), "segment {n}");
    }
    let id9 = Uuid::new(9, 10).to_string();
    assert!(
        early
            .safe_to_delete
            .iter()
            .all(|i| !listing[*i as usize].key.contains(&id9)),
        "segment 9's objects are not planned for deletion"
    );
}

/// Tombstones and partition deletion end a segment; an object whose key disagrees with the
/// metadata of the segment it names is unmatched, not guessed.
#[test]
fn tombstones_partition_deletes_and_disagreeing_keys() {
    let mut l = Ledger::new();
    let k = |p: i32, end: i64| format!("{}:foo-1:{p}:{end}:0", tp(p).topic_id).into_bytes();
    // Partition 1: segment 1 keyed, finished, then deleted and tombstoned via KIP-1266 keys.
    let v = started(1, 1, 0, 9, 1);
    l.apply(1, Some(&k(1, 9)), Some(&v));
    let mut uk = k(1, 9);
    uk.extend_from_slice(b":UPDATE");
    for (o, s) in [
        (2, CopySegmentFinished),
        (3, DeleteSegmentStarted),
        (4, DeleteSegmentFinished),
    ] {
        l.apply(o, Some(&uk), Some(&update(1, 1, s, o)));
    }
    l.apply(5, Some(&k(1, 9)), None);
    assert!(l.named(Uuid::new(1, 2)).unwrap().tombstoned);
    // Partition 2: a finished segment, then the partition deleted.
    l.apply(6, None, Some(&started(2, 2, 0, 9, 1)));
    l.apply(7, None, Some(&update(2, 2, CopySegmentFinished, 2)));
    l.apply(8, None, Some(&partition_deleted(2)));
    let mut listing = objects(1, 1, &FILES[..1], 100, 0);
    listing.extend(objects(2, 2, &FILES[..1], 100, 0));
    // Segment 1's id under partition 0's directory: unmatched.
    listing.extend(objects(0, 1, &FILES[1..2], 8, 0));
    let r = reconcile(
        &l,
        &listing,
        &Layout::parse("rlmeta-file").unwrap(),
        Params {
            now_ms: HOUR,
            grace_ms: 0,
            metadata_as_of_ms: None,
            listing_as_of_ms: None,
        },
    )
    .unwrap();
    assert!(
        r.segments.iter().all(|s| s.class == SegmentClass::Leaked),
        "{:?}",
        r.segments
    );
    assert!(r.segments[1].why.contains("partition was deleted"));
    assert_eq!(r.objects[2].class, ObjectClass::Unmatched);
    assert!(
        r.objects[2]
            .note
            .as_deref()
            .unwrap()
            .contains("partition differs")
    );
    assert_eq!(r.safe_to_delete, vec![0, 1]);
}

#[test]
fn a_layout_that_matches_nothing_and_a_negative_grace_are_errors() {
    let l = Ledger::new();
    let listing = objects(0, 1, &FILES, 1, 0);
    let e = reconcile(
        &l,
        &listing,
        &Layout::parse("aiven").unwrap(),
        Params {
            now_ms: 0,
            grace_ms: 0,
            metadata_as_of_ms: None,
            listing_as_of_ms: None,
        },
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LayoutMismatch);
    assert!(
        e.message().contains("matches none of the 5 listed objects"),
        "{e}"
    );
    let e = reconcile(
        &l,
        &listing,
        &Layout::parse("rlmeta-file").unwrap(),
        Params {
            now_ms: 0,
            grace_ms: -1,
            metadata_as_of_ms: None,
            listing_as_of_ms: None,
        },
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // An empty store is no mismatch: every finished segment is then dangling.
    assert!(
        reconcile(
            &l,
            &[],
            &Layout::parse("aiven").unwrap(),
            Params {
                now_ms: 0,
                grace_ms: 0,
                metadata_as_of_ms: None,
                listing_as_of_ms: None,
            }
        )
        .is_ok()
    );
}

/// The listing fed a chunk at a time, in any order, without live objects kept: the same classes,
/// totals, plan and needs-a-person as the whole listing at once; no live object given back, and
/// nothing held for a live segment once its files are all seen.
#[test]
fn a_listing_fed_in_chunks_classifies_as_the_whole() {
    let (l, listing) = scene();
    let layout = Layout::parse("rlmeta-file").unwrap();
    let p = Params {
        now_ms: 10 * HOUR,
        grace_ms: HOUR,
        metadata_as_of_ms: None,
        listing_as_of_ms: Some(5 * HOUR),
    };
    let whole = reconcile(&l, &listing, &layout, p).unwrap();
    let mut reversed = listing.clone();
    reversed.reverse();
    for (order, chunk) in [
        (&listing, 1),
        (&listing, 4),
        (&reversed, 3),
        (&listing, 1000),
    ] {
        let mut c = Classifier::new(&l, layout.clone(), p, false).unwrap();
        let mut got: Vec<Emitted> = Vec::new();
        for part in order.chunks(chunk) {
            got.extend(c.feed(&l, part.to_vec()).unwrap());
        }
        if std::ptr::eq(order, &listing) {
            // Live segments 1 and 5 are complete: nothing of them waits; the objects of dangling 2
            // (4) and of size mismatch 3 (5) do.
            assert_eq!(c.waiting(), 4 + 5, "chunks of {chunk}");
        }
        let done = c.finish(&l).unwrap();
        got.extend(done.emitted);
        assert_eq!(done.totals, whole.totals, "chunks of {chunk}");
        let person = |v: &[SegmentFinding], i: &[u32]| {
            i.iter().map(|i| v[*i as usize].id).collect::<Vec<_>>()
        };
        assert_eq!(
            person(&done.segments, &done.needs_person),
            person(&whole.segments, &whole.needs_person)
        );
        let classes = |v: &[SegmentFinding]| {
            v.iter()
                .map(|s| (s.id, s.class, s.why.clone()))
                .collect::<Vec<_>>()
        };
        // Live and deleted segments are counted, not listed.
        let acting: Vec<SegmentFinding> = whole
            .segments
            .iter()
            .filter(|s| !matches!(s.class, SegmentClass::Live | SegmentClass::Deleted))
            .cloned()
            .collect();
        assert_eq!(classes(&done.segments), classes(&acting));
        assert!(done.segments.len() < whole.segments.len());
        assert!(
            got.iter()
                .all(|e| e.finding.class != ObjectClass::Segment(SegmentClass::Live))
        );
        let mut mine: Vec<(String, ObjectFinding)> =
            got.into_iter().map(|e| (e.object.key, e.finding)).collect();
        mine.sort_by(|a, b| a.0.cmp(&b.0));
        let mut want: Vec<(String, ObjectFinding)> = listing
            .iter()
            .zip(&whole.objects)
            .filter(|(_, o)| o.class != ObjectClass::Segment(SegmentClass::Live))
            .map(|(l, o)| (l.key.clone(), o.clone()))
            .collect();
        want.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(mine, want, "chunks of {chunk}");
    }
}
