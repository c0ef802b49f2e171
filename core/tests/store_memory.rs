//! The memory a broker's store holds per live segment, bounded (issue 30). A test binary of its
//! own, for its counting global allocator: the bytes the store requested and has not freed,
//! after replaying planner-written histories into [`Store::held`] (100 hosted partitions of 20
//! live segments, 40 more each uploaded and deleted, failed uploads, leader changes) at level 0,
//! level 2 and migrated. The bounds sit above what the store holds now (`make
//! bench-store-memory` prints it by structure) and below what the layout before issue 30 held
//! (560, 445 and 765 bytes per live segment). Records of partitions not hosted leave nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is a panic

use rlmeta::cache::Store;
use rlmeta::testing::history::{Shape, Writing, history};

#[path = "../benches/support/counting.rs"]
mod counting;

/// Bytes held per live segment after replaying `writing`'s history, checked against the store's
/// own account.
fn bytes_per_live_segment(writing: Writing) -> f64 {
    let shape = Shape {
        hosted: 100,
        unhosted: 25,
        live: 20,
        deleted: 40,
        writing,
        seed: 30,
    };
    let h = history(&shape).expect("the planner writes the history");
    let before = counting::live_bytes();
    let store = h.replay_held();
    let held = counting::live_bytes() - before;
    assert!(
        h.hosted.iter().all(|tp| store.segments(tp).is_ok()),
        "every hosted partition held and initialized"
    );
    let live = h.live_segments(&store);
    assert!(
        live >= 100 * 20,
        "every hosted partition keeps its 20 finished segments: {live}"
    );
    assert_eq!(
        store.memory().total() as isize,
        held,
        "the store's account adds up to what the allocator counted"
    );
    held as f64 / live as f64
}

/// One test: the allocator counts every thread's allocations, so nothing else may run beside.
#[test]
fn a_held_store_keeps_nothing_unhosted_and_stays_under_its_bytes_per_live_segment() {
    records_of_partitions_not_hosted_leave_nothing();

    for (writing, bound) in [
        (Writing::Stock, 280.0),
        (Writing::Keyed, 300.0),
        (Writing::Migrated, 340.0),
    ] {
        let per = bytes_per_live_segment(writing);
        println!("{writing:?}: {per:.1} bytes per live segment (bound {bound})");
        assert!(
            per <= bound,
            "{writing:?}: {per:.1} bytes per live segment, above {bound}"
        );
    }
}

fn records_of_partitions_not_hosted_leave_nothing() {
    let shape = Shape {
        hosted: 0,
        unhosted: 50,
        live: 5,
        deleted: 10,
        writing: Writing::Migrated,
        seed: 7,
    };
    let h = history(&shape).expect("the planner writes the history");
    assert!(!h.records.is_empty());
    let before = counting::live_bytes();
    let mut store = Store::held();
    for (offset, (k, v)) in h.records.iter().enumerate() {
        store.apply(offset as i64, k.as_deref(), v.as_deref());
    }
    assert_eq!(counting::live_bytes() - before, 0, "nothing kept");
    assert_eq!(store.memory().total(), 0);
}
