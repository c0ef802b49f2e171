//! `Store::segment_count` against `Store::segments`: the count a metric reads must be the length
//! of the listing Kafka's `listRemoteLogSegments` gives, at every point of a history (segments
//! started, finished, being deleted, failed uploads, leader changes), at level 0, level 2 and
//! migrated, with the same errors for a partition not initialized or not held.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is a panic

use rlmeta::cache::Store;
use rlmeta::model::{TopicIdPartition, Uuid};
use rlmeta::testing::history::{Shape, Writing, history};

#[test]
fn the_count_is_the_listings_length_at_every_point_of_a_history() {
    for writing in [Writing::Stock, Writing::Keyed, Writing::Migrated] {
        let shape = Shape {
            hosted: 6,
            unhosted: 3,
            live: 5,
            deleted: 12,
            writing,
            seed: 43,
        };
        let h = history(&shape).expect("the planner writes the history");
        let mut store = Store::held();
        for tp in &h.hosted {
            store.load_partition(tp);
            assert_eq!(
                store.segment_count(tp).unwrap_err().kind(),
                store.segments(tp).unwrap_err().kind(),
                "{writing:?}: a partition not initialized"
            );
            store.mark_initialized(tp);
        }
        let mut checked = 0;
        let mut nonzero = 0;
        for (offset, (k, v)) in h.records.iter().enumerate() {
            store.apply(offset as i64, k.as_deref(), v.as_deref());
            for tp in &h.hosted {
                let n = store.segment_count(tp).expect("held and initialized");
                assert_eq!(
                    n,
                    store.segments(tp).unwrap().len(),
                    "{writing:?} after offset {offset}"
                );
                checked += 1;
                nonzero += usize::from(n > 0);
            }
        }
        assert!(
            nonzero > checked / 2,
            "{writing:?}: the partitions held segments most of the time"
        );
        let other = TopicIdPartition {
            topic_id: Uuid::new(5, 5),
            topic: "not-held".into(),
            partition: 0,
        };
        assert_eq!(
            store.segment_count(&other).unwrap_err().kind(),
            store.segments(&other).unwrap_err().kind(),
            "{writing:?}: a partition not held"
        );
        println!("{writing:?}: {checked} counts equal to the listing's length");
    }
}
