//! The store as a host across a language boundary uses it: one byte per replayed record, a
//! whole poll batch in one call, partitions named by topic id alone, and a diagnostic dump.
//!
//! Owns: the outcome code table (every binding exposes the same numbers), the packed layout of
//! an apply batch and its checks, and the dump's JSON shape. Never: I/O, threads, time, or any
//! rule of the store itself (it only calls [`Store`]'s public methods).

use serde_json::{Value as Json, json};

use crate::cache::{Applied, Dropped, Skip, Store};
use crate::error::{Error, ErrorKind, Result};
use crate::feature::MetadataLevel;
use crate::json::to_hex;
use crate::model::{PartitionDeleteState, TopicIdPartition, Uuid};
use crate::record::{PRE_KIP1266_HIGHEST_VERSION, value_version};

/// The outcome codes of [`Applied::outcome_code`]. The numbers never change.
pub mod outcome {
    /// Kafka's cache applied the record.
    pub const APPLIED: u8 = 0;
    /// An update whose segment record is missing, kept as an orphan.
    pub const ORPHANED: u8 = 1;
    /// Applied, but the key does not belong to the value.
    pub const APPLIED_WITH_BAD_KEY: u8 = 2;
    /// A null value (a KIP-1266 tombstone).
    pub const TOMBSTONE: u8 = 3;
    /// A value that does not decode or that Kafka's object checks refuse.
    pub const UNDECODABLE: u8 = 4;
    /// A snapshot record (api key 3).
    pub const SNAPSHOT_RECORD: u8 = 5;
    /// A key that is neither null nor a KIP-1266 key of the value (`Skip::BadKey`; `Store::apply`
    /// itself reports a bad key as APPLIED_WITH_BAD_KEY, or not at all when the value did not apply).
    pub const BAD_KEY: u8 = 6;
    /// Kafka's cache logged and dropped the event (an illegal state transition).
    pub const DROPPED: u8 = 7;
    /// The user partition was deleted by DELETE_PARTITION_FINISHED.
    pub const PARTITION_DELETED: u8 = 8;
    /// Not after the last record applied for its user partition (a re-delivery).
    pub const ALREADY_APPLIED: u8 = 9;
    /// The level record, carrying level 0.
    pub const LEVEL_0: u8 = 10;
    /// The level record, carrying level 1.
    pub const LEVEL_1: u8 = 11;
    /// The level record, carrying level 2.
    pub const LEVEL_2: u8 = 12;
    /// The level record, carrying no valid level.
    pub const LEVEL_INVALID: u8 = 13;
    /// Kafka's cache throws on the event (an update to COPY_SEGMENT_STARTED, a segment record
    /// in another state), which stops a stock broker's consumer; nothing applied.
    pub const REJECTED: u8 = 14;
    /// APPLIED, of a value of a KIP-1266 version (above 0): a broker that predates KIP-1266
    /// cannot deserialize it, and its metadata consumer stops.
    pub const APPLIED_V1: u8 = 15;
    /// ORPHANED, of a value of a KIP-1266 version (fatal to a broker that predates KIP-1266).
    pub const ORPHANED_V1: u8 = 16;
    /// APPLIED_WITH_BAD_KEY, of a value of a KIP-1266 version (fatal to a broker that predates
    /// KIP-1266).
    pub const APPLIED_WITH_BAD_KEY_V1: u8 = 17;
    /// DROPPED, of a value of a KIP-1266 version (fatal to a broker that predates KIP-1266).
    pub const DROPPED_V1: u8 = 18;
    /// ALREADY_APPLIED, of a value of a KIP-1266 version (fatal to a broker that predates
    /// KIP-1266).
    pub const ALREADY_APPLIED_V1: u8 = 19;
    /// A store that keeps only loaded partitions does not hold the record's user partition.
    pub const NOT_HELD: u8 = 20;
    /// NOT_HELD, of a value of a KIP-1266 version (fatal to a broker that predates KIP-1266,
    /// which deserializes every record before it looks at the partition).
    pub const NOT_HELD_V1: u8 = 21;
    /// The highest code.
    pub const MAX: u8 = NOT_HELD_V1;

    /// Every code with its stable name (kebab case), by code: the one table hosts count and
    /// log outcomes by (the Java plugin's counters, logs and dump use these names).
    pub const NAMES: [(u8, &str); MAX as usize + 1] = [
        (APPLIED, "applied"),
        (ORPHANED, "orphaned"),
        (APPLIED_WITH_BAD_KEY, "applied-with-bad-key"),
        (TOMBSTONE, "tombstone"),
        (UNDECODABLE, "undecodable"),
        (SNAPSHOT_RECORD, "snapshot-record"),
        (BAD_KEY, "bad-key"),
        (DROPPED, "dropped"),
        (PARTITION_DELETED, "partition-deleted"),
        (ALREADY_APPLIED, "already-applied"),
        (LEVEL_0, "level-0"),
        (LEVEL_1, "level-1"),
        (LEVEL_2, "level-2"),
        (LEVEL_INVALID, "level-invalid"),
        (REJECTED, "rejected"),
        (APPLIED_V1, "applied-v1"),
        (ORPHANED_V1, "orphaned-v1"),
        (APPLIED_WITH_BAD_KEY_V1, "applied-with-bad-key-v1"),
        (DROPPED_V1, "dropped-v1"),
        (ALREADY_APPLIED_V1, "already-applied-v1"),
        (NOT_HELD, "not-held"),
        (NOT_HELD_V1, "not-held-v1"),
    ];

    /// One line for people per code, by code: what the outcome means (the doc comment of every
    /// binding's constant; generated, see `tools/tables`).
    pub const SUMMARIES: [&str; MAX as usize + 1] = [
        "Kafka's cache applied the record.",
        "An update whose segment record is missing, kept as an orphan (for deletion retries).",
        "Applied, but the record's key does not belong to its value.",
        "A null value: a KIP-1266 tombstone.",
        "A value that does not decode, or that Kafka's object checks refuse.",
        "A snapshot record (api key 3).",
        "A key that is neither null nor a KIP-1266 key of its value (apply itself reports a bad key as APPLIED_WITH_BAD_KEY, or not at all when the value did not apply).",
        "Kafka's cache logged and dropped the event (an illegal state transition).",
        "The record's user partition was deleted by DELETE_PARTITION_FINISHED.",
        "Not after the last record applied for its user partition (a re-delivery).",
        "The level record of `remote.log.metadata.version`, carrying level 0.",
        "The level record, carrying level 1.",
        "The level record, carrying level 2.",
        "The level record, carrying no valid level.",
        "Kafka's cache throws on the event (an update to COPY_SEGMENT_STARTED, a segment record in another state): nothing applied; it stops a stock broker's metadata consumer.",
        "APPLIED, but the value is of a KIP-1266 version (1): a stock broker (before KIP-1266) cannot read it and its metadata consumer stops.",
        "ORPHANED, but the value is of a KIP-1266 version (1): it stops a stock broker's metadata consumer.",
        "APPLIED_WITH_BAD_KEY, but the value is of a KIP-1266 version (1): it stops a stock broker's metadata consumer.",
        "DROPPED, but the value is of a KIP-1266 version (1): it stops a stock broker's metadata consumer.",
        "ALREADY_APPLIED, but the value is of a KIP-1266 version (1): it stops a stock broker's metadata consumer.",
        "The store keeps only the user partitions loaded into it (a broker's view) and does not hold the record's partition: skipped, as Kafka's ConsumerTask skips it.",
        "NOT_HELD, but the value is of a KIP-1266 version (1): it stops a stock broker's metadata consumer.",
    ];

    /// The stable name of an outcome code, or `None` for a code that names no outcome.
    pub fn name(code: u8) -> Option<&'static str> {
        NAMES
            .get(usize::from(code))
            .filter(|(c, _)| *c == code)
            .map(|(_, n)| *n)
    }

    /// The code of the same outcome for a value of a KIP-1266 version: the `*_V1` code of
    /// APPLIED, ORPHANED, APPLIED_WITH_BAD_KEY, DROPPED and ALREADY_APPLIED; every other code
    /// (already fatal to a stock broker, or never given for a replayed value) is itself.
    pub fn of_v1_value(code: u8) -> u8 {
        match code {
            APPLIED => APPLIED_V1,
            ORPHANED => ORPHANED_V1,
            APPLIED_WITH_BAD_KEY => APPLIED_WITH_BAD_KEY_V1,
            DROPPED => DROPPED_V1,
            ALREADY_APPLIED => ALREADY_APPLIED_V1,
            NOT_HELD => NOT_HELD_V1,
            other => other,
        }
    }
}

/// Whether a record with this outcome code would have stopped the metadata consumer of a
/// broker that predates KIP-1266 (agrees with [`Applied::fatal_to_kafka`]): what
/// [`Skip::fatal_to_kafka`] says, and every `*_V1` code. False for unknown codes.
pub fn fatal_to_kafka(code: u8) -> bool {
    use outcome::*;
    matches!(
        code,
        TOMBSTONE
            | UNDECODABLE
            | SNAPSHOT_RECORD
            | PARTITION_DELETED
            | LEVEL_0
            | LEVEL_1
            | LEVEL_2
            | LEVEL_INVALID
            | REJECTED
            | APPLIED_V1
            | ORPHANED_V1
            | APPLIED_WITH_BAD_KEY_V1
            | DROPPED_V1
            | ALREADY_APPLIED_V1
            | NOT_HELD_V1
    )
}

impl Applied {
    /// This outcome's code in [`outcome`], for the record whose value is `value` (what was
    /// passed to [`Store::apply`]): an outcome of a value of a KIP-1266 version gets its `*_V1`
    /// code ([`outcome::of_v1_value`]), since a broker that predates KIP-1266 cannot read it.
    pub fn outcome_code(&self, value: Option<&[u8]>) -> u8 {
        let code = self.outcome_code_v0();
        match value.and_then(value_version) {
            Some(v) if v > PRE_KIP1266_HIGHEST_VERSION => outcome::of_v1_value(code),
            _ => code,
        }
    }

    /// Whether the record whose value is `value` (what was passed to [`Store::apply`]) would
    /// have stopped the metadata consumer of a broker that predates KIP-1266: what its skip
    /// says ([`Skip::fatal_to_kafka`]), or a value of a version that broker cannot read.
    pub fn fatal_to_kafka(&self, value: Option<&[u8]>) -> bool {
        fatal_to_kafka(self.outcome_code(value))
    }

    /// The code of this outcome as if the value were of version 0.
    fn outcome_code_v0(&self) -> u8 {
        match self {
            Applied::Applied => outcome::APPLIED,
            Applied::Orphaned => outcome::ORPHANED,
            Applied::AppliedWithBadKey(_) => outcome::APPLIED_WITH_BAD_KEY,
            Applied::Skipped(s) => match s {
                Skip::Tombstone { .. } => outcome::TOMBSTONE,
                Skip::Undecodable(_) => outcome::UNDECODABLE,
                Skip::SnapshotRecord => outcome::SNAPSHOT_RECORD,
                Skip::LevelRecord(Ok(MetadataLevel::V0)) => outcome::LEVEL_0,
                Skip::LevelRecord(Ok(MetadataLevel::V1)) => outcome::LEVEL_1,
                Skip::LevelRecord(Ok(MetadataLevel::V2)) => outcome::LEVEL_2,
                Skip::LevelRecord(Err(_)) => outcome::LEVEL_INVALID,
                Skip::BadKey { .. } => outcome::BAD_KEY,
                Skip::Dropped {
                    reason: Dropped::StartedUpdate { .. } | Dropped::NotStarted { .. },
                    ..
                } => outcome::REJECTED,
                Skip::Dropped { .. } => outcome::DROPPED,
                Skip::PartitionDeleted { .. } => outcome::PARTITION_DELETED,
                Skip::AlreadyApplied { .. } => outcome::ALREADY_APPLIED,
                Skip::NotHeld { .. } => outcome::NOT_HELD,
            },
        }
    }
}

/// A length of the packed batch layout: -1 for null, else a byte count.
fn part(len: i32, i: usize, what: &str) -> Result<Option<usize>> {
    match len {
        -1 => Ok(None),
        n => usize::try_from(n).map(Some).map_err(|_| {
            Error::field(
                ErrorKind::InvalidArgument,
                what,
                format!("record #{i}: length {n} is neither -1 (null) nor a byte count"),
            )
        }),
    }
}

impl Store {
    /// Replays a batch of records packed as a host passes them: `data` holds each record's key
    /// bytes then its value bytes, records back to back; `key_lengths[i]` / `value_lengths[i]`
    /// are -1 for a null key / value. Writes one [`outcome`] code per record into `outcomes`.
    /// A layout that does not add up is refused before any record is applied.
    pub fn apply_packed(
        &mut self,
        offsets: &[i64],
        data: &[u8],
        key_lengths: &[i32],
        value_lengths: &[i32],
        outcomes: &mut [u8],
    ) -> Result<()> {
        let n = offsets.len();
        if key_lengths.len() != n || value_lengths.len() != n || outcomes.len() != n {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "{n} offsets but {} key lengths, {} value lengths and {} outcome slots",
                    key_lengths.len(),
                    value_lengths.len(),
                    outcomes.len()
                ),
            ));
        }
        let mut total = 0usize;
        for i in 0..n {
            let k = part(key_lengths[i], i, "keyLengths")?.unwrap_or(0);
            let v = part(value_lengths[i], i, "valueLengths")?.unwrap_or(0);
            total = total.saturating_add(k).saturating_add(v);
        }
        if total != data.len() {
            return Err(Error::field(
                ErrorKind::InvalidArgument,
                "data",
                format!(
                    "the lengths add up to {total} bytes but data holds {}",
                    data.len()
                ),
            ));
        }
        let mut at = 0usize;
        let mut take = |len: Option<usize>| {
            len.map(|len| {
                let s = &data[at..at + len];
                at += len;
                s
            })
        };
        for i in 0..n {
            // Checked above: every length is -1 or a count, and they add up to data.len().
            let key = take(usize::try_from(key_lengths[i]).ok());
            let value = take(usize::try_from(value_lengths[i]).ok());
            outcomes[i] = self.apply_code(offsets[i], key, value);
        }
        Ok(())
    }

    /// The user partition under a topic id and partition number, or Kafka's not-found error.
    pub fn partition_of_id(&self, topic_id: Uuid, partition: i32) -> Result<TopicIdPartition> {
        self.partition_by_id(topic_id, partition)
            .cloned()
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::NotFound,
                    format!("no resource found for partition: {topic_id}:{partition}"),
                )
            })
    }

    /// Kafka's `remoteLogSize(tp, epoch)`: the sizes of the segments listed for the epoch.
    pub fn remote_log_size(&self, tp: &TopicIdPartition, epoch: i32) -> Result<i64> {
        Ok(self
            .segments_for_epoch(tp, epoch)?
            .iter()
            .map(|m| i64::from(m.segment_size_in_bytes))
            .sum())
    }

    /// The partition's delete state: the latest event while it is held, DELETE_PARTITION_FINISHED
    /// once deleted, `None` when no delete was ever recorded (or the partition is unknown).
    pub fn partition_delete_state(&self, tp: &TopicIdPartition) -> Option<PartitionDeleteState> {
        if let Some(d) = self.partition_delete(tp) {
            return Some(d.state);
        }
        match self.slot(tp) {
            Some(s) if s.cache.is_none() => Some(PartitionDeleteState::DeletePartitionFinished),
            _ => None,
        }
    }

    /// Everything the store holds, for people and tests: each user partition still held with
    /// its initialization, delete state, segments (latest state, by start offset) and orphans.
    pub fn dump_json(&self) -> Json {
        let partitions: Vec<Json> = self
            .partitions()
            .into_iter()
            .map(|tp| {
                let cache = self.partition_cache(tp);
                let segments: Vec<Json> = cache
                    .map(|c| c.segments())
                    .unwrap_or_default()
                    .into_iter()
                    .map(|m| {
                        json!({
                            "id": m.id.to_string(),
                            "state": m.state.id(),
                            "startOffset": m.start_offset,
                            "endOffset": m.end_offset,
                            "brokerId": m.broker_id,
                            "maxTimestampMs": m.max_timestamp_ms,
                            "eventTimestampMs": m.event_timestamp_ms,
                            "segmentLeaderEpochs": m.leader_epochs.iter()
                                .map(|(e, o)| json!({"leaderEpoch": e, "offset": o}))
                                .collect::<Vec<_>>(),
                            "segmentSizeInBytes": m.segment_size_in_bytes,
                            "customMetadata": m.custom_metadata.as_deref().map(to_hex),
                            "txnIndexEmpty": m.txn_index_empty,
                            "brokerLeaderEpoch": m.broker_leader_epoch,
                        })
                    })
                    .collect();
                let orphans: Vec<Json> = self
                    .orphans(tp)
                    .into_iter()
                    .map(|o| {
                        json!({
                            "segmentId": o.segment_id.to_string(),
                            "state": o.state.id(),
                            "endOffset": o.end_offset,
                            "brokerLeaderEpoch": o.broker_leader_epoch,
                            "key": o.key,
                            "offset": o.offset,
                        })
                    })
                    .collect();
                json!({
                    "topicIdPartition": {"id": tp.topic_id.to_string(), "name": tp.topic, "partition": tp.partition},
                    "initialized": cache.is_some_and(|c| c.is_initialized()),
                    "deleteState": self.partition_delete_state(tp).map(|s| s.id()),
                    "segments": segments,
                    "orphans": orphans,
                })
            })
            .collect();
        json!({ "partitions": partitions })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn tp() -> TopicIdPartition {
        TopicIdPartition {
            topic_id: Uuid::new(1, 2),
            topic: "t".into(),
            partition: 0,
        }
    }

    #[test]
    fn every_code_has_one_name_and_no_other_code_has_one() {
        let mut names = std::collections::HashSet::new();
        for code in 0..=outcome::MAX {
            let name = outcome::name(code).unwrap_or_else(|| panic!("code {code} has no name"));
            assert!(names.insert(name), "{name} named twice");
        }
        assert_eq!(outcome::name(outcome::MAX + 1), None);
        assert_eq!(outcome::name(u8::MAX), None);
        assert_eq!(outcome::name(outcome::REJECTED), Some("rejected"));
    }

    #[test]
    fn every_code_is_distinct_and_agrees_with_skip_fatal_to_kafka() {
        let id = Uuid::new(3, 4);
        let err = || Error::new(ErrorKind::Truncated, "x");
        let skips = [
            Skip::Tombstone { key: None },
            Skip::Undecodable(err()),
            Skip::SnapshotRecord,
            Skip::LevelRecord(Ok(MetadataLevel::V0)),
            Skip::LevelRecord(Ok(MetadataLevel::V1)),
            Skip::LevelRecord(Ok(MetadataLevel::V2)),
            Skip::LevelRecord(Err(err())),
            Skip::BadKey {
                key: "k".into(),
                why: "w".into(),
            },
            Skip::Dropped {
                partition: tp(),
                reason: Dropped::InvalidTransition {
                    id,
                    from: None,
                    to: crate::model::SegmentState::CopySegmentFinished,
                },
            },
            Skip::Dropped {
                partition: tp(),
                reason: Dropped::StartedUpdate { id },
            },
            Skip::PartitionDeleted { partition: tp() },
            Skip::AlreadyApplied {
                partition: tp(),
                last: 1,
            },
            Skip::NotHeld { partition: tp() },
        ];
        for s in &skips {
            let code = Applied::Skipped(s.clone()).outcome_code_v0();
            assert_eq!(fatal_to_kafka(code), s.fatal_to_kafka(), "{s:?} -> {code}");
            // Of a version-1 value, every outcome is fatal (a stock broker cannot read it); but
            // BAD_KEY, which apply never gives (a bad key is APPLIED_WITH_BAD_KEY or nothing).
            let of_v1 = fatal_to_kafka(outcome::of_v1_value(code));
            assert!(of_v1 || matches!(s, Skip::BadKey { .. }), "{s:?} of v1");
        }
        let v0: Vec<u8> = skips
            .iter()
            .map(|s| Applied::Skipped(s.clone()).outcome_code_v0())
            .chain([
                Applied::Applied.outcome_code_v0(),
                Applied::Orphaned.outcome_code_v0(),
                Applied::AppliedWithBadKey(skips[7].clone()).outcome_code_v0(),
            ])
            .collect();
        let v1 = v0.iter().map(|&c| outcome::of_v1_value(c));
        let mut codes: Vec<u8> = v0.iter().copied().chain(v1).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes, (0..=outcome::MAX).collect::<Vec<_>>());
        for c in 0..=outcome::MAX {
            let v1 = outcome::of_v1_value(c);
            assert!(
                v1 == c || !fatal_to_kafka(c),
                "{c} is fatal yet has a v1 code"
            );
            assert_eq!(outcome::of_v1_value(v1), v1, "{c}");
        }
        assert!(!fatal_to_kafka(outcome::MAX + 1));
    }

    /// A broker's replay through apply_packed (outcome codes alone: no partition name or
    /// tombstone key is built) gives each record the code `apply` gives it and leaves the same
    /// store, on a planner-written keyed history with tombstones and partitions not held, and a
    /// stock one.
    #[test]
    fn packed_replay_gives_apply_s_codes_and_state() {
        use crate::testing::history::{Shape, Writing, history};
        for writing in [Writing::Keyed, Writing::Stock, Writing::Migrated] {
            let shape = Shape {
                hosted: 6,
                unhosted: 12,
                live: 3,
                deleted: 4,
                writing,
                seed: 30,
            };
            let h = history(&shape).expect("the planner writes the history");
            let (mut one, mut packed) = (Store::held(), Store::held());
            for tp in &h.hosted {
                one.load_partition(tp);
                packed.load_partition(tp);
            }
            let (mut data, mut keys, mut values, mut offsets) = (vec![], vec![], vec![], vec![]);
            let mut expected = vec![];
            for (offset, (k, v)) in h.records.iter().enumerate() {
                let applied = one.apply(offset as i64, k.as_deref(), v.as_deref());
                expected.push(applied.outcome_code(v.as_deref()));
                offsets.push(offset as i64);
                for (part, lens) in [(k, &mut keys), (v, &mut values)] {
                    lens.push(part.as_ref().map_or(-1, |b| b.len() as i32));
                    data.extend_from_slice(part.as_deref().unwrap_or_default());
                }
            }
            let mut out = vec![0u8; offsets.len()];
            let r = packed.apply_packed(&offsets, &data, &keys, &values, &mut out);
            assert!(r.is_ok(), "{r:?}");
            assert_eq!(out, expected, "{writing:?}");
            use outcome::{APPLIED, APPLIED_V1, NOT_HELD, NOT_HELD_V1, TOMBSTONE};
            let has = |codes: &[u8]| out.iter().any(|c| codes.contains(c));
            assert!(has(&[NOT_HELD, NOT_HELD_V1]) && has(&[APPLIED, APPLIED_V1]));
            assert_eq!(has(&[TOMBSTONE]), writing != Writing::Stock, "{writing:?}");
            for tp in &h.hosted {
                one.mark_initialized(tp);
                packed.mark_initialized(tp);
            }
            assert_eq!(
                packed.dump_json().to_string(),
                one.dump_json().to_string(),
                "{writing:?}"
            );
        }
    }

    #[test]
    fn a_packed_batch_is_checked_before_anything_applies() {
        let mut store = Store::new();
        let mut out = [9u8; 2];
        // A tombstone (key, no value) and a level record.
        let data = b"kremote.log.metadata.version2";
        let keys = [1, 27];
        let ok = store.apply_packed(&[0, 1], data, &keys, &[-1, 1], &mut out);
        assert!(ok.is_ok(), "{ok:?}");
        assert_eq!(out, [outcome::TOMBSTONE, outcome::LEVEL_2]);
        let short = store.apply_packed(&[2, 3], data, &keys, &[-1, 2], &mut out);
        assert_eq!(short.map_err(|e| e.kind()), Err(ErrorKind::InvalidArgument));
        let negative = store.apply_packed(&[2, 3], data, &[1, -2], &[-1, 29], &mut out);
        assert_eq!(
            negative.map_err(|e| e.field_name().map(str::to_owned)),
            Err(Some("keyLengths".into()))
        );
        let counts = store.apply_packed(&[2], data, &keys, &[-1, 1], &mut out);
        assert_eq!(
            counts.map_err(|e| e.kind()),
            Err(ErrorKind::InvalidArgument)
        );
    }

    #[test]
    fn a_version_1_value_is_fatal_to_kafka_whatever_replay_did_with_it() {
        use crate::plan::Event;
        let script = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/plans/lifecycle.json"
        ))
        .unwrap_or_default();
        let doc = crate::json::parse(&script).unwrap_or(Json::Null);
        let copy = crate::plan::event_from_json(&doc["cases"][0]["events"][0]).ok();
        let Some(event @ Event::CopyStarted { .. }) = copy else {
            panic!("the first event of lifecycle.json is a copy start: {copy:?}");
        };
        for (level, applied, again) in [
            (
                MetadataLevel::V0,
                outcome::APPLIED,
                outcome::ALREADY_APPLIED,
            ),
            (
                MetadataLevel::V1,
                outcome::APPLIED_V1,
                outcome::ALREADY_APPLIED_V1,
            ),
            (
                MetadataLevel::V2,
                outcome::APPLIED_V1,
                outcome::ALREADY_APPLIED_V1,
            ),
        ] {
            let mut store = Store::new();
            let planned = store.plan(&event, level).unwrap_or_default();
            let key = planned[0].key.format();
            let value = planned[0].value.clone().unwrap_or_default();
            let version = crate::record::value_version(&value);
            assert_eq!(
                version,
                Some(i16::from(level != MetadataLevel::V0)),
                "{level:?}"
            );
            let (k, v) = (i32::try_from(key.len()), i32::try_from(value.len()));
            let (Ok(k), Ok(v)) = (k, v) else {
                panic!("lengths")
            };
            let data = [key.as_bytes(), &value, key.as_bytes(), &value].concat();
            let mut out = [99u8; 2];
            let r = store.apply_packed(&[0, 0], &data, &[k, k], &[v, v], &mut out);
            assert!(r.is_ok(), "{r:?}");
            assert_eq!(out, [applied, again], "{level:?}");
            let fatal = level != MetadataLevel::V0;
            assert_eq!(out.map(fatal_to_kafka), [fatal, fatal], "{level:?}");
            let a = Store::new().apply(0, Some(key.as_bytes()), Some(&value));
            assert_eq!(a, Applied::Applied);
            assert_eq!(a.fatal_to_kafka(Some(&value)), fatal, "{level:?}");
            assert_eq!(a.outcome_code(Some(&value)), applied, "{level:?}");
        }
        // A header that does not read names no version: the outcome keeps its code.
        assert_eq!(crate::record::value_version(&[1, 0]), None);
        assert_eq!(crate::record::value_version(&[0, 0, 1]), None);
        assert_eq!(
            Applied::Applied.outcome_code(Some(&[1, 0])),
            outcome::APPLIED
        );
        assert_eq!(Applied::Applied.outcome_code(None), outcome::APPLIED);
    }

    #[test]
    fn unknown_partitions_are_not_found() {
        let store = Store::new();
        let e = store.partition_of_id(Uuid::new(1, 2), 0).err();
        assert_eq!(e.map(|e| e.kind()), Some(ErrorKind::NotFound));
        assert_eq!(store.partition_delete_state(&tp()), None);
        assert_eq!(store.dump_json(), json!({"partitions": []}));
    }

    #[test]
    fn a_serde_event_plans_as_its_json_twin_and_the_store_gives_back_its_current_value() {
        use crate::plan::Event;
        let script = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/plans/lifecycle.json"
        ))
        .unwrap_or_default();
        let doc = crate::json::parse(&script).unwrap_or(Json::Null);
        let events = &doc["cases"][0]["events"];
        let copy = crate::plan::event_from_json(&events[0]).ok();
        let Some(Event::CopyStarted { partition, segment }) = copy.clone() else {
            panic!("the first event of lifecycle.json is a copy start: {copy:?}");
        };
        let mut store = Store::new();
        let planned = store
            .plan(
                &Event::CopyStarted {
                    partition: partition.clone(),
                    segment: segment.clone(),
                },
                MetadataLevel::V0,
            )
            .unwrap_or_default();
        let started = planned[0].value.clone().unwrap_or_default();
        let back = crate::record::decode_value(&started)
            .and_then(|v| Event::from_value(&v, segment.broker_leader_epoch));
        assert_eq!(back.ok(), copy);
        let via_value = store
            .plan_value(&started, segment.broker_leader_epoch, 0)
            .unwrap_or_default();
        assert_eq!(via_value, planned);
        store.apply(0, Some(planned[0].key.format().as_bytes()), Some(&started));
        store.mark_initialized(&partition);
        // A copy in progress is listed, but not found by offset (Kafka's rule).
        assert_eq!(store.segment_for(&partition, 5, 0).ok(), Some(None));
        let m = store
            .segments(&partition)
            .ok()
            .and_then(|l| l.first().copied().cloned());
        let current = m.map(|m| crate::plan::current_segment_value(&partition, &m));
        assert_eq!(current.and_then(|c| c.ok()), Some(started.clone()));
        // COPY_SEGMENT_FINISHED, from its serde form: the current value carries the new state.
        let finished = crate::plan::event_from_json(&events[1]).unwrap_or(copy.clone().unwrap_or(
            Event::CopyFinished(crate::plan::SegmentEvent {
                partition: partition.clone(),
                segment_id: Uuid::ZERO,
                broker_id: 0,
                event_timestamp_ms: 0,
                custom_metadata: None,
                broker_leader_epoch: 0,
            }),
        ));
        let records = store.plan(&finished, MetadataLevel::V0).unwrap_or_default();
        let update = records[0].value.clone().unwrap_or_default();
        let back = crate::record::decode_value(&update).and_then(|v| Event::from_value(&v, 5));
        assert_eq!(back.ok(), Some(finished));
        store.apply(1, Some(records[0].key.format().as_bytes()), Some(&update));
        let m = store.segment_for(&partition, 5, 0).ok().flatten().cloned();
        let current = m
            .and_then(|m| crate::plan::current_segment_value(&partition, &m).ok())
            .unwrap_or_default();
        let v = crate::record::decode_value(&current).ok();
        assert!(
            matches!(v.as_ref().map(|v| &v.record), Some(crate::record::Record::Segment(r)) if r.remote_log_segment_state == 1 && r.event_timestamp_ms == 1700000000002),
            "{v:?}"
        );
        assert_eq!(
            store.partition_of_id(partition.topic_id, 0).ok(),
            Some(partition.clone())
        );
        let dump = store.dump_json();
        assert_eq!(dump["partitions"][0]["segments"][0]["state"], json!(1));
        store.unload_partition(&partition);
        assert!(store.partition_by_id(partition.topic_id, 0).is_none());
    }
}
