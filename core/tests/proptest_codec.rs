//! Property tests: arbitrary records of every type and version encode, decode back to the same
//! value, are canonical, and survive the JSON form in both 64-bit styles.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is a panic

use std::borrow::Cow;

use proptest::collection::vec;
use proptest::prelude::*;
use rlmeta::json::{Int64Style, value_from_json, value_to_json};
use rlmeta::model::Uuid;
use rlmeta::record::{
    LeaderEpochEntry, PartitionDeleteMetadataRecord, Record, SegmentIdEntry, SegmentMetadataRecord,
    SegmentMetadataSnapshotRecord, SegmentMetadataUpdateRecord, TopicIdPartitionEntry, Value,
    decode_value_canonical,
};
use rlmeta::wire::RawTaggedField;

fn uuid() -> impl Strategy<Value = Uuid> {
    (any::<i64>(), any::<i64>()).prop_map(|(m, l)| Uuid::new(m, l))
}

/// Unknown tags: strictly ascending, never a tag the struct defines (`reserved`).
fn tags(reserved: &'static [u32]) -> impl Strategy<Value = Vec<RawTaggedField<'static>>> {
    vec((0u32..300, vec(any::<u8>(), 0..20)), 0..3).prop_map(move |mut v| {
        v.sort_by_key(|(t, _)| *t);
        v.dedup_by_key(|(t, _)| *t);
        v.into_iter()
            .filter(|(t, _)| !reserved.contains(t))
            .map(|(tag, data)| RawTaggedField {
                tag,
                data: Cow::Owned(data),
            })
            .collect()
    })
}

fn tip() -> impl Strategy<Value = TopicIdPartitionEntry<'static>> {
    ("\\PC{0,40}", uuid(), any::<i32>(), tags(&[])).prop_map(|(name, id, partition, t)| {
        TopicIdPartitionEntry {
            name: name.into(),
            id,
            partition,
            unknown_tagged_fields: t,
        }
    })
}

fn segment_id() -> impl Strategy<Value = SegmentIdEntry<'static>> {
    (tip(), uuid(), tags(&[])).prop_map(|(t, id, u)| SegmentIdEntry {
        topic_id_partition: t,
        id,
        unknown_tagged_fields: u,
    })
}

fn epochs() -> impl Strategy<Value = Vec<LeaderEpochEntry<'static>>> {
    vec((any::<i32>(), any::<i64>(), tags(&[])), 0..6).prop_map(|v| {
        v.into_iter()
            .map(|(e, o, t)| LeaderEpochEntry {
                leader_epoch: e,
                offset: o,
                unknown_tagged_fields: t,
            })
            .collect()
    })
}

fn bytes() -> impl Strategy<Value = Option<Cow<'static, [u8]>>> {
    proptest::option::of(vec(any::<u8>(), 0..200).prop_map(Cow::Owned))
}

/// A value at version 0 or 1; fields that only exist from version 1 keep their defaults at 0.
fn value() -> impl Strategy<Value = Value<'static>> {
    let v1 = any::<bool>();
    let segment = (
        segment_id(),
        any::<[i64; 4]>(),
        any::<i32>(),
        epochs(),
        any::<i32>(),
        bytes(),
        any::<i8>(),
        any::<bool>(),
        any::<i32>(),
        tags(&[0, 1]),
    )
        .prop_map(|(id, [s, e, mx, ev], b, ep, sz, cm, st, txn, ble, t)| {
            (
                ble,
                Record::Segment(SegmentMetadataRecord {
                    remote_log_segment_id: id,
                    start_offset: s,
                    end_offset: e,
                    broker_id: b,
                    max_timestamp_ms: mx,
                    event_timestamp_ms: ev,
                    segment_leader_epochs: ep.into(),
                    segment_size_in_bytes: sz,
                    custom_metadata: cm,
                    remote_log_segment_state: st,
                    txn_index_empty: txn,
                    broker_leader_epoch: ble,
                    unknown_tagged_fields: t,
                }),
            )
        });
    let update = (
        segment_id(),
        any::<i32>(),
        any::<i64>(),
        bytes(),
        any::<i8>(),
        any::<i32>(),
        any::<i64>(),
        tags(&[0, 1]),
    )
        .prop_map(|(id, b, ev, cm, st, ble, eo, t)| {
            (
                ble,
                Record::Update(SegmentMetadataUpdateRecord {
                    remote_log_segment_id: id,
                    broker_id: b,
                    event_timestamp_ms: ev,
                    custom_metadata: cm,
                    remote_log_segment_state: st,
                    broker_leader_epoch: ble,
                    end_offset: eo,
                    unknown_tagged_fields: t,
                }),
            )
        });
    let delete = (
        tip(),
        any::<i32>(),
        any::<i64>(),
        any::<i8>(),
        any::<i32>(),
        any::<i64>(),
        tags(&[0, 1]),
    )
        .prop_map(|(t, b, ev, st, ble, eo, u)| {
            (
                ble,
                Record::PartitionDelete(PartitionDeleteMetadataRecord {
                    topic_id_partition: t,
                    broker_id: b,
                    event_timestamp_ms: ev,
                    remote_partition_delete_state: st,
                    broker_leader_epoch: ble,
                    end_offset: eo,
                    unknown_tagged_fields: u,
                }),
            )
        });
    let snapshot = (
        uuid(),
        any::<[i64; 4]>(),
        any::<i32>(),
        epochs(),
        any::<i32>(),
        bytes(),
        any::<i8>(),
        any::<bool>(),
        any::<i32>(),
        tags(&[0, 1]),
    )
        .prop_map(|(id, [s, e, mx, ev], b, ep, sz, cm, st, txn, ble, t)| {
            (
                ble,
                Record::Snapshot(SegmentMetadataSnapshotRecord {
                    segment_id: id,
                    start_offset: s,
                    end_offset: e,
                    broker_id: b,
                    max_timestamp_ms: mx,
                    event_timestamp_ms: ev,
                    segment_leader_epochs: ep.into(),
                    segment_size_in_bytes: sz,
                    custom_metadata: cm,
                    remote_log_segment_state: st,
                    txn_index_empty: txn,
                    broker_leader_epoch: ble,
                    unknown_tagged_fields: t,
                }),
            )
        });
    (v1, prop_oneof![segment, update, delete, snapshot]).prop_map(|(v1, (_, mut record))| {
        if !v1 {
            match &mut record {
                Record::Segment(s) => s.broker_leader_epoch = 0,
                Record::Snapshot(s) => s.broker_leader_epoch = 0,
                Record::Update(u) => (u.broker_leader_epoch, u.end_offset) = (-1, -1),
                Record::PartitionDelete(d) => (d.broker_leader_epoch, d.end_offset) = (0, 0),
            }
        }
        Value {
            version: i16::from(v1),
            record,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn encode_then_decode_is_identity(v in value()) {
        let bytes = v.encode().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (back, canonical) = decode_value_canonical(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(canonical);
        prop_assert_eq!(&back, &v);
        prop_assert!(rlmeta::testing::check_value_round_trip(&bytes).is_ok());
    }

    #[test]
    fn json_form_is_lossless(v in value()) {
        for style in [Int64Style::Number, Int64Style::String] {
            let back = value_from_json(&value_to_json(&v, style)).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&back, &v);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in vec(any::<u8>(), 0..300)) {
        prop_assert!(rlmeta::testing::check_value_round_trip(&data).is_ok());
        prop_assert!(rlmeta::testing::check_key_round_trip(&data).is_ok());
    }
}
