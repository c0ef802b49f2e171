//! The write planner: for a lifecycle event and a feature level, the exact records to produce.
//!
//! Owns: which key and which value version every record gets, which tombstones an event allows
//! and in which order, and the refusals that keep compaction from losing a live segment. It reads
//! the store (what each key holds now) and never changes it: the host produces the planned
//! records and feeds them back through replay like any other record. Also the JSON form of
//! lifecycle events and planned records (write-plan scripts). Never: I/O, time.
//!
//! Where rlmeta departs from the KIP's text and apache/kafka#22459 (and why):
//! - Every record of a segment is keyed with the segment's upload key pair (its end offset and
//!   the leader epoch that uploaded it), deletions included. PR-A keys deletions with the
//!   deleting broker's epoch, so a deletion's `:UPDATE` key differs from the upload's and the
//!   cleaner can keep COPY_SEGMENT_FINISHED next to DELETE_SEGMENT_FINISHED, which Kafka's cache
//!   refuses as a transition, bringing the deleted segment back. The value's `brokerLeaderEpoch`
//!   is the upload epoch too, as the KIP defines the field.
//! - Tombstones cover only the keys that hold the deleted segment's own records, computed from
//!   what each key holds now, never from a key-prefix rule: the rule "every key with this end
//!   offset and an epoch not above mine" of the KIP and PR-A deletes live segments that share an
//!   end offset with the deleted one.
//! - On DELETE_SEGMENT_FINISHED the segment record's key is tombstoned before the final update is
//!   written, then the update key: at every prefix of that sequence the compacted log replays to
//!   a state that differs from the full log's at most by forgetting an already deleted segment.
//! - A segment record is never written over a key that holds a segment not yet
//!   DELETE_SEGMENT_FINISHED (two upload attempts in one leader epoch share keys): the planner
//!   refuses with `InvalidState` until the host has deleted the old attempt.
//! - At feature level 0 nothing is written that a broker predating KIP-1266 cannot read:
//!   version-0 values, no tombstones (keys are harmless to such brokers).
//! - A segment written before KIP-1266 (null keys, no upload epoch in its values) is keyed with
//!   its end offset and the newest leader epoch of its own data, not the writer's epoch: every
//!   broker, whichever epoch it leads in, and the backfill and a lifecycle write, then pick the
//!   same key pair for it, so a deletion's tombstones always cover what a backfill wrote (two
//!   writers with different epochs would key it twice, and a deletion would leave one pair alive).
//! - The backfill ([`Store::plan_backfill`]) moves only segments that are not being deleted: a
//!   DELETE_SEGMENT_STARTED segment waits (a refusal, once nothing else is left to move) until its
//!   deletion finishes, so a backfill never writes a live-looking record for a segment whose
//!   remote data is going away. It is never planned at level 0.
//! - A deposed leader's backfill record that lands after the leader deleted its segment brings
//!   the segment back, in the whole log and compacted alike, and in Kafka's store: no replay rule
//!   can undo it. The broker's store recognizes it ([`Store::resurrections`]) and
//!   [`Store::plan_backfill`] deletes it again before anything else, so the leader's next check
//!   ends it.
//! - Two upload attempts of one range in one leader epoch (stock Kafka 4.4.0 makes them: both
//!   finished, or one abandoned unfinished when its broker restarted during the upload) share a
//!   key pair, and one key holds one segment. Kafka's cache serves only the finished one (of two
//!   finished, the later; the other is in its unreferenced set). The backfill keys the attempt Kafka serves and
//!   skips the other ([`Store::superseded`]): at level 2 the unserved attempt's null-key records
//!   go and its remote objects become orphans; nothing any fetch is served from is lost. Kafka
//!   itself would list it, count its bytes and, at `retention.ms=-1`, keep it for ever.

use std::borrow::Cow;

use serde_json::{Value as Json, json};

use crate::cache::{Holder, SegmentMetadata, Store};
use crate::error::{Error, ErrorKind, Result};
use crate::feature::MetadataLevel;
use crate::json::{Obj, epochs_from, to_hex};
use crate::key::RecordKey;
use crate::model::{PartitionDeleteState, SegmentState, TopicIdPartition, Uuid};
use crate::record::{
    LeaderEpochEntry, PartitionDeleteMetadataRecord, Record, SegmentIdEntry, SegmentMetadataRecord,
    SegmentMetadataUpdateRecord, TopicIdPartitionEntry, Value,
};

/// End offset in the keys of partition-delete records (they belong to no segment; no real
/// segment ends at -1).
pub const PARTITION_KEY_END_OFFSET: i64 = -1;

/// The writer's leader epoch when the host does not know it (Kafka's
/// `NO_PARTITION_LEADER_EPOCH`); any negative epoch means the same. Stock Kafka hands a
/// `RemoteLogMetadataManager` no leader epoch, so a host only knows one it has seen Kafka use
/// for the partition since it became its leader. The planner never makes one up: a copy without
/// it is refused (retriably, [`ErrorKind::NotInitialized`]); an update or a deletion needs none
/// for a segment whose upload key the store knows (every keyed segment).
pub const UNKNOWN_EPOCH: i32 = -1;

/// An upload attempt that Kafka's cache serves no fetch from, because a finished attempt on the
/// same key pair serves its range ([`Store::superseded`]): a finished one that finished first, or
/// one that was started and never finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superseded {
    pub partition: TopicIdPartition,
    pub segment_id: Uuid,
    pub start_offset: i64,
    pub end_offset: i64,
    /// The attempt Kafka serves instead.
    pub served_by: Uuid,
}

/// A segment state change reported by the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentEvent {
    pub partition: TopicIdPartition,
    pub segment_id: Uuid,
    pub broker_id: i32,
    pub event_timestamp_ms: i64,
    pub custom_metadata: Option<Vec<u8>>,
    /// The writing broker's current leader epoch for the partition.
    pub broker_leader_epoch: i32,
}

/// A lifecycle event, as a broker's tiered-storage code reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A segment's copy starts; `segment.broker_leader_epoch` is the uploading leader epoch.
    CopyStarted {
        partition: TopicIdPartition,
        segment: SegmentMetadata,
    },
    CopyFinished(SegmentEvent),
    DeleteStarted(SegmentEvent),
    /// The segment's remote data is deleted.
    DeleteFinished(SegmentEvent),
    PartitionDelete {
        partition: TopicIdPartition,
        state: PartitionDeleteState,
        broker_id: i32,
        event_timestamp_ms: i64,
        broker_leader_epoch: i32,
    },
}

impl Event {
    /// The event of a value Kafka 4.4.0's `RemoteLogMetadataSerde` writes for the object a
    /// broker hands its `RemoteLogMetadataManager`: a `RemoteLogSegmentMetadata` in
    /// COPY_SEGMENT_STARTED, a `RemoteLogSegmentMetadataUpdate`, or a
    /// `RemotePartitionDeleteMetadata`. `broker_leader_epoch` is the writer's current leader
    /// epoch of the partition (stock Kafka's objects carry none). An update names no end offset
    /// or upload epoch: the planner finds the segment's keys in the store.
    pub fn from_value(v: &Value<'_>, broker_leader_epoch: i32) -> Result<Event> {
        v.validate()?;
        match &v.record {
            Record::Segment(r) => {
                let mut segment = SegmentMetadata::from_record(r)?;
                segment.broker_leader_epoch = broker_leader_epoch;
                Ok(Event::CopyStarted {
                    partition: r
                        .remote_log_segment_id
                        .topic_id_partition
                        .to_topic_id_partition(),
                    segment,
                })
            }
            Record::Update(r) => {
                let u = crate::cache::SegmentUpdate::from_record(r)?;
                let e = SegmentEvent {
                    partition: r
                        .remote_log_segment_id
                        .topic_id_partition
                        .to_topic_id_partition(),
                    segment_id: u.id,
                    broker_id: u.broker_id,
                    event_timestamp_ms: u.event_timestamp_ms,
                    custom_metadata: u.custom_metadata,
                    broker_leader_epoch,
                };
                match u.state {
                    SegmentState::CopySegmentFinished => Ok(Event::CopyFinished(e)),
                    SegmentState::DeleteSegmentStarted => Ok(Event::DeleteStarted(e)),
                    SegmentState::DeleteSegmentFinished => Ok(Event::DeleteFinished(e)),
                    SegmentState::CopySegmentStarted => Err(Error::field(
                        ErrorKind::InvalidArgument,
                        "remoteLogSegmentState",
                        "an update cannot move a segment to COPY_SEGMENT_STARTED",
                    )),
                }
            }
            Record::PartitionDelete(r) => Ok(Event::PartitionDelete {
                partition: r.topic_id_partition.to_topic_id_partition(),
                state: PartitionDeleteState::from_id(r.remote_partition_delete_state).ok_or_else(
                    || {
                        Error::field(
                            ErrorKind::InvalidRecord,
                            "remotePartitionDeleteState",
                            format!("unknown state id {}", r.remote_partition_delete_state),
                        )
                    },
                )?,
                broker_id: r.broker_id,
                event_timestamp_ms: r.event_timestamp_ms,
                broker_leader_epoch,
            }),
            Record::Snapshot(_) => Err(Error::new(
                ErrorKind::InvalidArgument,
                "a snapshot record is no lifecycle event",
            )),
        }
    }
}

/// One record to produce, in order: a key (always, from rlmeta) and a value (`None` is a
/// tombstone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub key: RecordKey,
    pub value: Option<Vec<u8>>,
}

fn tip_entry(tp: &TopicIdPartition) -> TopicIdPartitionEntry<'static> {
    TopicIdPartitionEntry {
        name: tp.topic.clone().into(),
        id: tp.topic_id,
        partition: tp.partition,
        unknown_tagged_fields: vec![],
    }
}

fn segment_id_entry(tp: &TopicIdPartition, id: Uuid) -> SegmentIdEntry<'static> {
    SegmentIdEntry {
        topic_id_partition: tip_entry(tp),
        id,
        unknown_tagged_fields: vec![],
    }
}

fn value_version(level: MetadataLevel) -> i16 {
    if level.writes_kip1266_values() { 1 } else { 0 }
}

fn key(tp: &TopicIdPartition, (end_offset, epoch): (i64, i32), update: bool) -> RecordKey {
    RecordKey {
        topic_id: tp.topic_id,
        topic: tp.topic.clone(),
        partition: tp.partition,
        end_offset,
        broker_leader_epoch: epoch,
        update,
    }
}

/// The segment record of `m` (state COPY_SEGMENT_STARTED) as written at `level`.
fn segment_value(
    tp: &TopicIdPartition,
    m: &SegmentMetadata,
    upload_epoch: i32,
    level: MetadataLevel,
) -> Result<Vec<u8>> {
    segment_record_value(
        tp,
        m,
        SegmentState::CopySegmentStarted,
        value_version(level),
        upload_epoch,
    )
}

/// The value Kafka 4.4.0's `RemoteLogMetadataSerde` writes for `m` as the cache holds it now:
/// a version-0 segment record in the segment's current state, with the broker id, event time
/// and custom metadata of its last update. Hosts build Kafka's `RemoteLogSegmentMetadata` from
/// it with Kafka's own serde.
pub fn current_segment_value(tp: &TopicIdPartition, m: &SegmentMetadata) -> Result<Vec<u8>> {
    segment_record_value(tp, m, m.state, 0, 0)
}

fn segment_record_value(
    tp: &TopicIdPartition,
    m: &SegmentMetadata,
    state: SegmentState,
    version: i16,
    upload_epoch: i32,
) -> Result<Vec<u8>> {
    Value {
        version,
        record: Record::Segment(SegmentMetadataRecord {
            remote_log_segment_id: segment_id_entry(tp, m.id),
            start_offset: m.start_offset,
            end_offset: m.end_offset,
            broker_id: m.broker_id,
            max_timestamp_ms: m.max_timestamp_ms,
            event_timestamp_ms: m.event_timestamp_ms,
            segment_leader_epochs: m
                .leader_epochs
                .iter()
                .map(|&(leader_epoch, offset)| LeaderEpochEntry {
                    leader_epoch,
                    offset,
                    unknown_tagged_fields: vec![],
                })
                .collect(),
            segment_size_in_bytes: m.segment_size_in_bytes,
            custom_metadata: m.custom_metadata.as_deref().map(Cow::Borrowed),
            remote_log_segment_state: state.id(),
            txn_index_empty: m.txn_index_empty,
            broker_leader_epoch: if version >= 1 { upload_epoch } else { 0 },
            unknown_tagged_fields: vec![],
        }),
    }
    .encode()
}

#[allow(clippy::too_many_arguments)]
fn update_value(
    tp: &TopicIdPartition,
    id: Uuid,
    state: SegmentState,
    broker_id: i32,
    event_timestamp_ms: i64,
    custom_metadata: Option<Vec<u8>>,
    pair: (i64, i32),
    level: MetadataLevel,
) -> Result<Vec<u8>> {
    let version = value_version(level);
    let (end_offset, broker_leader_epoch) = if version >= 1 { pair } else { (-1, -1) };
    Value {
        version,
        record: Record::Update(SegmentMetadataUpdateRecord {
            remote_log_segment_id: segment_id_entry(tp, id),
            broker_id,
            event_timestamp_ms,
            custom_metadata: custom_metadata.map(Into::into),
            remote_log_segment_state: state.id(),
            broker_leader_epoch,
            end_offset,
            unknown_tagged_fields: vec![],
        }),
    }
    .encode()
}

fn refuse(why: String) -> Error {
    Error::new(ErrorKind::InvalidState, why)
}

/// The refusal for a write that needs the writer's leader epoch when the host does not know it.
fn epoch_unknown(tp: &TopicIdPartition, what: &str) -> Error {
    Error::new(
        ErrorKind::NotInitialized,
        format!(
            "the leader epoch of this broker for {tp} is not known yet ({what}); retry once the \
             broker has used it for the partition"
        ),
    )
}

/// A copy's key epoch is the uploading leader's current epoch: known, and never below an epoch
/// of the segment's own data (a leader's epoch is at least every epoch in its log, so a lower one
/// is a stale epoch of an earlier term, whose key another leader may hold).
fn check_upload_epoch(tp: &TopicIdPartition, m: &SegmentMetadata) -> Result<()> {
    if m.broker_leader_epoch < 0 {
        return Err(epoch_unknown(
            tp,
            "a copy is keyed by the uploading leader's epoch",
        ));
    }
    let newest_data_epoch = m.leader_epochs.iter().map(|&(e, _)| e).max();
    if let Some(d) = newest_data_epoch.filter(|&d| d > m.broker_leader_epoch) {
        return Err(refuse(format!(
            "leader epoch {} of {tp} is below epoch {d} of the segment's own data: not the \
             uploading leader's current epoch",
            m.broker_leader_epoch
        )));
    }
    Ok(())
}

/// What a broker knows of itself as the writer of an event, when Kafka hands it no leader epoch
/// (stock Kafka never does): whether it leads the partition now, and the newest leader epoch it
/// has seen Kafka use for the partition since it became its leader ([`UNKNOWN_EPOCH`] if none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Writer {
    pub leads: bool,
    pub known_epoch: i32,
}

impl Writer {
    /// The leader epoch a copy of `m` is keyed with: the known epoch, raised to the newest epoch of
    /// the segment's own data. Only the leader writes a segment's leader-epoch map, from its own
    /// leader-epoch cache, and a leader's epoch is at least every epoch in its log: data of a newer
    /// epoch proves the known one stale (KRaft bumps the epoch when the replica set shrinks or
    /// grows, or an election returns to the same broker, and tells the manager nothing). Unknown
    /// stays unknown: before Kafka has used an epoch for this term, the data's newest epoch may be
    /// the previous leader's, whose key that leader may hold.
    pub fn copy_epoch(&self, m: &SegmentMetadata) -> i32 {
        if self.known_epoch < 0 {
            return UNKNOWN_EPOCH;
        }
        m.leader_epochs
            .iter()
            .map(|&(e, _)| e)
            .fold(self.known_epoch, i32::max)
    }
}

impl Store {
    /// [`Store::plan`] of the event in a serde value, written by a broker that knows what
    /// `writer` says: a copy is refused (retriably, [`ErrorKind::InvalidState`]) unless the
    /// broker leads the partition (a deposed leader's late upload would key a segment under an
    /// epoch the new leader no longer serves), and is keyed with [`Writer::copy_epoch`]; every
    /// other event carries the known epoch, as [`Store::plan_value`] takes it.
    pub fn plan_for_writer(
        &self,
        value: &[u8],
        writer: Writer,
        level: i16,
    ) -> Result<Vec<Planned>> {
        let level = MetadataLevel::from_level(level)?;
        let mut event =
            Event::from_value(&crate::record::decode_value(value)?, writer.known_epoch)?;
        if let Event::CopyStarted { partition, segment } = &mut event {
            if !writer.leads {
                return Err(refuse(format!(
                    "this broker does not lead {partition}: a copy is written only by the \
                     partition's current leader"
                )));
            }
            segment.broker_leader_epoch = writer.copy_epoch(segment);
        }
        self.plan(&event, level)
    }

    /// Whether a segment still needs its metadata: known to the cache, or an orphan not yet
    /// DELETE_SEGMENT_FINISHED.
    fn is_live(&self, tp: &TopicIdPartition, id: Uuid) -> bool {
        self.slot(tp).is_some_and(|s| {
            s.cache.as_ref().is_some_and(|c| c.segment(id).is_some()) || s.orphans.contains_key(&id)
        })
    }

    /// Whether a known segment's key pair would be the writer's epoch (a segment written before
    /// KIP-1266: no keyed record, no upload epoch in its value).
    fn needs_writer_epoch(&self, tp: &TopicIdPartition, id: Uuid) -> bool {
        self.slot(tp).is_some_and(|s| {
            s.keys.upload_key(id).is_none()
                && s.cache
                    .as_ref()
                    .and_then(|c| c.segment(id))
                    .is_some_and(|m| m.broker_leader_epoch == 0)
        })
    }

    /// The key pair of a known segment: where its segment record was written, or, for a segment
    /// written before KIP-1266 (no keyed record), its end offset and recorded upload epoch, or,
    /// with none recorded, the newest leader epoch of its data.
    fn key_pair_of(
        &self,
        tp: &TopicIdPartition,
        id: Uuid,
        fallback_epoch: i32,
    ) -> Option<(i64, i32)> {
        let slot = self.slot(tp)?;
        if let Some(pair) = slot.keys.upload_key(id) {
            return Some(pair);
        }
        if let Some(m) = slot.cache.as_ref().and_then(|c| c.segment(id)) {
            let epoch = if m.broker_leader_epoch != 0 {
                m.broker_leader_epoch
            } else {
                // a segment written before KIP-1266 has no upload epoch: the newest epoch of its
                // own data, the same for every writer (the writer's only if it has none)
                m.leader_epochs
                    .iter()
                    .map(|&(e, _)| e)
                    .max()
                    .unwrap_or(fallback_epoch)
            };
            return (epoch >= 0).then_some((m.end_offset, epoch));
        }
        let o = slot.orphans.get(&id)?;
        Some((o.end_offset?, o.broker_leader_epoch?))
    }

    /// [`Store::plan`] of the event in a serde value ([`Event::from_value`]), at the level
    /// number `level` (0, 1 or 2): what a binding hands over from a broker.
    pub fn plan_value(
        &self,
        value: &[u8],
        broker_leader_epoch: i32,
        level: i16,
    ) -> Result<Vec<Planned>> {
        let level = MetadataLevel::from_level(level)?;
        let event = Event::from_value(&crate::record::decode_value(value)?, broker_leader_epoch)?;
        self.plan(&event, level)
    }

    /// The records to produce for `event` at feature `level`, in order.
    pub fn plan(&self, event: &Event, level: MetadataLevel) -> Result<Vec<Planned>> {
        match event {
            Event::CopyStarted { partition, segment } => {
                self.plan_copy_started(partition, segment, level)
            }
            Event::CopyFinished(e) => self.plan_update(e, SegmentState::CopySegmentFinished, level),
            Event::DeleteStarted(e) => {
                self.plan_update(e, SegmentState::DeleteSegmentStarted, level)
            }
            Event::DeleteFinished(e) => {
                self.plan_update(e, SegmentState::DeleteSegmentFinished, level)
            }
            Event::PartitionDelete {
                partition,
                state,
                broker_id,
                event_timestamp_ms,
                broker_leader_epoch,
            } => self.plan_partition_delete(
                partition,
                *state,
                *broker_id,
                *event_timestamp_ms,
                *broker_leader_epoch,
                level,
            ),
        }
    }

    fn plan_copy_started(
        &self,
        tp: &TopicIdPartition,
        m: &SegmentMetadata,
        level: MetadataLevel,
    ) -> Result<Vec<Planned>> {
        if m.state != SegmentState::CopySegmentStarted {
            return Err(Error::field(
                ErrorKind::InvalidArgument,
                "state",
                "a copy starts in COPY_SEGMENT_STARTED",
            ));
        }
        crate::record::check_offsets_and_epochs(
            m.start_offset,
            m.end_offset,
            m.leader_epochs.len(),
        )?;
        check_upload_epoch(tp, m)?;
        let pair = (m.end_offset, m.broker_leader_epoch);
        if let Some(holders) = self.slot(tp).and_then(|s| s.keys.get(&pair)) {
            let others = [
                holders.base,
                holders.update.and_then(|h| {
                    if let Holder::Segment(id, _) = h {
                        Some(id)
                    } else {
                        None
                    }
                }),
            ];
            if let Some(old) = others
                .into_iter()
                .flatten()
                .find(|&old| old != m.id && self.is_live(tp, old))
            {
                return Err(refuse(format!(
                    "key {} holds segment {old}, which is not yet DELETE_SEGMENT_FINISHED; delete that upload attempt first",
                    key(tp, pair, false)
                )));
            }
        }
        let value = segment_value(tp, m, m.broker_leader_epoch, level)?;
        Ok(vec![Planned {
            key: key(tp, pair, false),
            value: Some(value),
        }])
    }

    fn plan_update(
        &self,
        e: &SegmentEvent,
        state: SegmentState,
        level: MetadataLevel,
    ) -> Result<Vec<Planned>> {
        let tp = &e.partition;
        let pair = match self.key_pair_of(tp, e.segment_id, e.broker_leader_epoch) {
            Some(pair) => pair,
            None if self.needs_writer_epoch(tp, e.segment_id) => {
                return Err(epoch_unknown(
                    tp,
                    "the segment was written before KIP-1266 and has no upload key",
                ));
            }
            None => {
                return Err(Error::new(
                    ErrorKind::NotFound,
                    format!("segment {} of {tp} is not known", e.segment_id),
                ));
            }
        };
        let update = |state| {
            update_value(
                tp,
                e.segment_id,
                state,
                e.broker_id,
                e.event_timestamp_ms,
                e.custom_metadata.clone(),
                pair,
                level,
            )
        };
        let holders = self
            .slot(tp)
            .and_then(|s| s.keys.get(&pair))
            .unwrap_or_default();
        // Another live segment's latest state under the shared update key must survive this write.
        let shared_live = match holders.update {
            Some(Holder::Segment(other, other_state))
                if other != e.segment_id && self.is_live(tp, other) =>
            {
                Some((other, other_state))
            }
            _ => None,
        };
        let mut out = Vec::new();
        let owns_base = holders.base == Some(e.segment_id);
        // A copy started by a broker that predates KIP-1266 has only a null-key segment record,
        // which level 1's retention expires: its segment record goes under its key first (still
        // a legal STARTED -> STARTED step). Segments already past STARTED are moved by
        // `plan_backfill` at migration.
        let started = self
            .slot(tp)
            .and_then(|s| s.cache.as_ref())
            .and_then(|c| c.segment(e.segment_id));
        if let Some(m) = started.filter(|m| {
            !owns_base && holders.base.is_none() && m.state == SegmentState::CopySegmentStarted
        }) {
            out.push(Planned {
                key: key(tp, pair, false),
                value: Some(segment_value(tp, m, pair.1, level)?),
            });
        }
        // The segment record's key goes too when it holds nothing known here: a backfill of this
        // segment by another writer (a deposed leader) may have put its record there meanwhile.
        if state == SegmentState::DeleteSegmentFinished
            && level.allows_tombstones()
            && (owns_base || holders.base.is_none())
        {
            out.push(Planned {
                key: key(tp, pair, false),
                value: None,
            });
        }
        out.push(Planned {
            key: key(tp, pair, true),
            value: Some(update(state)?),
        });
        if let Some((other, other_state)) = shared_live {
            out.push(self.republish_update(tp, other, other_state, pair, level)?);
        } else if state == SegmentState::DeleteSegmentFinished && level.allows_tombstones() {
            out.push(Planned {
                key: key(tp, pair, true),
                value: None,
            });
        }
        Ok(out)
    }

    /// The latest update of a live segment, written again so that it stays the latest value of
    /// a key another segment just wrote.
    fn republish_update(
        &self,
        tp: &TopicIdPartition,
        id: Uuid,
        state: SegmentState,
        pair: (i64, i32),
        level: MetadataLevel,
    ) -> Result<Planned> {
        let m = self
            .slot(tp)
            .and_then(|s| s.cache.as_ref())
            .and_then(|c| c.segment(id));
        let (broker_id, ts, cm) = m.map_or((-1, -1, None), |m| {
            (
                m.broker_id,
                m.event_timestamp_ms,
                m.custom_metadata.as_deref().map(<[u8]>::to_vec),
            )
        });
        Ok(Planned {
            key: key(tp, pair, true),
            value: Some(update_value(tp, id, state, broker_id, ts, cm, pair, level)?),
        })
    }

    fn plan_partition_delete(
        &self,
        tp: &TopicIdPartition,
        state: PartitionDeleteState,
        broker_id: i32,
        event_timestamp_ms: i64,
        broker_leader_epoch: i32,
        level: MetadataLevel,
    ) -> Result<Vec<Planned>> {
        if broker_leader_epoch < 0 {
            return Err(epoch_unknown(
                tp,
                "a partition deletion is keyed by the writer's epoch",
            ));
        }
        let version = value_version(level);
        let pair = (PARTITION_KEY_END_OFFSET, broker_leader_epoch);
        let (be, eo) = if version >= 1 {
            (broker_leader_epoch, PARTITION_KEY_END_OFFSET)
        } else {
            (0, 0)
        };
        let value = Value {
            version,
            record: Record::PartitionDelete(PartitionDeleteMetadataRecord {
                topic_id_partition: tip_entry(tp),
                broker_id,
                event_timestamp_ms,
                remote_partition_delete_state: state.id(),
                broker_leader_epoch: be,
                end_offset: eo,
                unknown_tagged_fields: vec![],
            }),
        }
        .encode()?;
        let mut out = vec![Planned {
            key: key(tp, pair, true),
            value: Some(value),
        }];
        if state == PartitionDeleteState::DeletePartitionFinished && level.allows_tombstones() {
            let slot = self.slot(tp);
            if let Some(live) = slot
                .and_then(|s| s.cache.as_ref())
                .and_then(|c| c.segments().first().map(|m| m.id))
            {
                return Err(refuse(format!(
                    "segment {live} of {tp} is not yet DELETE_SEGMENT_FINISHED; delete every segment first"
                )));
            }
            // Every key of the partition goes, except the finished marker just written.
            let mut pairs: Vec<_> = slot.map(|s| s.keys.iter().collect()).unwrap_or_default();
            pairs.sort_by_key(|(p, _)| *p);
            for (p, h) in pairs {
                if h.base.is_some() {
                    out.push(Planned {
                        key: key(tp, p, false),
                        value: None,
                    });
                }
                if h.update.is_some() && p != pair {
                    out.push(Planned {
                        key: key(tp, p, true),
                        value: None,
                    });
                }
            }
        }
        Ok(out)
    }

    /// The upload attempts of `tp` that Kafka's cache serves no fetch from, each with the
    /// finished attempt on the same key pair that it serves instead: a second finished attempt
    /// (a stock broker uploaded the range twice in one leader epoch), or a copy started and never
    /// finished on that range (its broker restarted or lost the leadership during the upload,
    /// and the next leader uploaded the range again). One key holds one segment: these are the attempts
    /// the backfill leaves to null-key records, and the verification reports as superseded
    /// rather than lost. By segment start offset, then id.
    pub fn superseded(&self, tp: &TopicIdPartition) -> Vec<Superseded> {
        let Some(cache) = self.slot(tp).and_then(|s| s.cache.as_ref()) else {
            return Vec::new();
        };
        let finished = |m: &&SegmentMetadata| m.state == SegmentState::CopySegmentFinished;
        let mut served: std::collections::HashMap<(i64, i32), Uuid> = Default::default();
        for m in cache.segments().into_iter().filter(finished) {
            if cache.serves(m.id) {
                if let Some(pair) = self.key_pair_of(tp, m.id, UNKNOWN_EPOCH) {
                    served.insert(pair, m.id);
                }
            }
        }
        // An unserved finished attempt, or a copy started and never finished on a range a
        // finished attempt serves: its broker gave up (a later attempt of the range finished,
        // typically after a restart or a leader change during the upload), or, were it a
        // deposed leader's copy still running, finishing would make it the served attempt and
        // the backfill would key it then, over the one keyed now.
        let unserved = |m: &&SegmentMetadata| {
            (m.state == SegmentState::CopySegmentFinished && !cache.serves(m.id))
                || m.state == SegmentState::CopySegmentStarted
        };
        let mut out = Vec::new();
        for m in cache.segments().into_iter().filter(unserved) {
            let by = self
                .key_pair_of(tp, m.id, UNKNOWN_EPOCH)
                .and_then(|pair| served.get(&pair).copied());
            if let Some(served_by) = by {
                out.push(Superseded {
                    partition: tp.clone(),
                    segment_id: m.id,
                    start_offset: m.start_offset,
                    end_offset: m.end_offset,
                    served_by,
                });
            }
        }
        out
    }

    /// The next step of deleting again the segments a deposed leader's late backfill brought
    /// back ([`Store::resurrections`]): DELETE_SEGMENT_STARTED for one held as copied, then
    /// (planned once that is applied) DELETE_SEGMENT_FINISHED with its tombstones, as a deletion
    /// is planned; an orphan update gets its key tombstoned. The remote data is gone already
    /// (its deletion finished once): nothing asks the RSM again. Broker and event time are the
    /// segment's own (the core has no clock). Empty when nothing rose.
    fn plan_burial(
        &self,
        tp: &TopicIdPartition,
        writer_epoch: i32,
        level: MetadataLevel,
    ) -> Result<Vec<Planned>> {
        let Some(slot) = self.slot(tp) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for id in self.resurrections(tp) {
            if let Some(m) = slot.cache.as_ref().and_then(|c| c.segment(id)) {
                let next = match m.state {
                    SegmentState::DeleteSegmentStarted => SegmentState::DeleteSegmentFinished,
                    _ => SegmentState::DeleteSegmentStarted,
                };
                let e = SegmentEvent {
                    partition: tp.clone(),
                    segment_id: id,
                    broker_id: m.broker_id,
                    event_timestamp_ms: m.event_timestamp_ms,
                    custom_metadata: None,
                    broker_leader_epoch: writer_epoch,
                };
                out.extend(self.plan_update(&e, next, level)?);
            } else if let Some(k) = slot
                .orphans
                .get(&id)
                .and_then(|o| o.key.as_deref())
                .and_then(|k| RecordKey::parse_bytes(k.as_bytes()).ok())
            {
                out.push(Planned {
                    key: k,
                    value: None,
                });
            }
        }
        Ok(out)
    }

    /// Records that make a segment written before KIP-1266 (null keys) survive compaction: its
    /// segment record and its latest update, written again under its keys (the key pair every
    /// writer picks for it, see [`Store::key_pair_of`]). The partition's leader writes these for
    /// every live segment before null-key records can expire, holding off its own lifecycle
    /// writes for the partition from planning to applied. Computed from the store, so what is
    /// already keyed is not planned again: empty once the partition is done. An update whose
    /// segment record was written again after it (a deposed leader's late copy of its backfill)
    /// is written again too: compaction would otherwise keep it before that record, where a
    /// replay drops it (and where a log compacted already dropped it, the state its key names,
    /// COPY_SEGMENT_FINISHED or DELETE_SEGMENT_STARTED, is written again). A superseded upload
    /// attempt ([`Store::superseded`]) is skipped, and the attempt Kafka serves is keyed even
    /// over a key that already holds the superseded one.
    ///
    /// `writer_epoch` is used only for a segment whose records name no leader epoch at all.
    /// Refusals: level 0 ([`ErrorKind::InvalidState`]: nothing keyed may be written for a stock
    /// broker's sake, and nothing needs it); and, only once nothing else is left to move (one
    /// segment never holds up the rest of the partition), two live segments on one key pair
    /// that are not a superseded attempt and the one served instead, or a segment in
    /// DELETE_SEGMENT_STARTED (its deletion must finish first: backfilling it could bring it
    /// back, see the module notes). A refusal is
    /// retried by the host later; it never skips a segment silently.
    pub fn plan_backfill(
        &self,
        tp: &TopicIdPartition,
        writer_epoch: i32,
        level: MetadataLevel,
    ) -> Result<Vec<Planned>> {
        if !level.writes_kip1266_values() {
            return Err(refuse(format!(
                "no backfill of {tp} at remote.log.metadata.version level {}: null-key records \
                 expire only from level 1",
                level.level()
            )));
        }
        let Some(cache) = self.slot(tp).and_then(|s| s.cache.as_ref()) else {
            return Ok(Vec::new());
        };
        let risen = self.plan_burial(tp, writer_epoch, level)?;
        if !risen.is_empty() {
            return Ok(risen);
        }
        let superseded: Vec<Uuid> = self.superseded(tp).iter().map(|s| s.segment_id).collect();
        let mut out = Vec::new();
        let mut being_deleted = Vec::new();
        let mut conflicts = Vec::new();
        // key pairs this plan writes a segment record to: a second segment on one of them would
        // overwrite the first (the store's holders do not see this plan's records yet)
        let mut claimed: std::collections::HashMap<(i64, i32), Uuid> = Default::default();
        for m in cache.segments() {
            if superseded.contains(&m.id) {
                continue; // Kafka serves the other attempt on its key pair
            }
            let Some(pair) = self.key_pair_of(tp, m.id, writer_epoch) else {
                return Err(epoch_unknown(
                    tp,
                    "a segment written before KIP-1266 names no leader epoch",
                ));
            };
            let holders = self
                .slot(tp)
                .and_then(|s| s.keys.get(&pair))
                .unwrap_or_default();
            let has_base = holders.base == Some(m.id);
            // an update written before its segment record (a late copy of it) is lost to compaction
            let has_update = !holders.base_after_update
                && matches!(holders.update, Some(Holder::Segment(id, s)) if id == m.id && s == m.state);
            // compacted already: the update went before the late segment record and was dropped,
            // so the segment reads as only started; the key still names the state it reached
            if let (true, true, Some(Holder::Segment(id, s))) = (
                has_base && holders.base_after_update,
                m.state == SegmentState::CopySegmentStarted,
                holders.update,
            ) {
                if id == m.id
                    && matches!(
                        s,
                        SegmentState::CopySegmentFinished | SegmentState::DeleteSegmentStarted
                    )
                {
                    out.push(self.republish_update(tp, m.id, s, pair, level)?);
                    continue;
                }
            }
            if has_base && (m.state == SegmentState::CopySegmentStarted || has_update) {
                continue; // held by its keys already
            }
            if m.state == SegmentState::DeleteSegmentStarted {
                being_deleted.push(m.id);
                continue;
            }
            if let Some(b) = holders
                .base
                .filter(|&b| b != m.id && self.is_live(tp, b) && !superseded.contains(&b))
                .or_else(|| claimed.get(&pair).copied().filter(|&b| b != m.id))
            {
                conflicts.push(format!(
                    "segments {b} and {} share key {}; the older upload attempt must be deleted \
                     first",
                    m.id,
                    key(tp, pair, false)
                ));
                continue;
            }
            if !has_base {
                claimed.insert(pair, m.id);
                out.push(Planned {
                    key: key(tp, pair, false),
                    value: Some(segment_value(tp, m, pair.1, level)?),
                });
            }
            if m.state != SegmentState::CopySegmentStarted && !has_update {
                out.push(self.republish_update(tp, m.id, m.state, pair, level)?);
            }
        }
        // Keys still holding a segment deleted at level 0 (no tombstones there): compaction would
        // keep its segment record beside its DELETE_SEGMENT_FINISHED update, which a replay drops
        // as an illegal transition, and bring the segment back (found by the journey test). The
        // segment-record key goes first, then the update key, as on a deletion at level 1.
        if let Some(slot) = self.slot(tp) {
            let mut pairs: Vec<_> = slot.keys.iter().collect();
            pairs.sort_by_key(|(p, _)| *p);
            for (pair, h) in pairs {
                let dead_base = h.base.filter(|&b| !self.is_live(tp, b));
                if dead_base.is_some() {
                    out.push(Planned {
                        key: key(tp, pair, false),
                        value: None,
                    });
                }
                let base_live = h.base.is_some_and(|b| self.is_live(tp, b));
                if let Some(Holder::Segment(u, SegmentState::DeleteSegmentFinished)) = h.update {
                    if !base_live && !self.is_live(tp, u) {
                        out.push(Planned {
                            key: key(tp, pair, true),
                            value: None,
                        });
                    }
                }
            }
        }
        if out.is_empty() && !(being_deleted.is_empty() && conflicts.is_empty()) {
            let mut why = conflicts;
            if !being_deleted.is_empty() {
                let ids: Vec<String> = being_deleted.iter().map(ToString::to_string).collect();
                why.push(format!(
                    "{} segment(s) are DELETE_SEGMENT_STARTED ({}): their deletion must finish \
                     first",
                    ids.len(),
                    ids.join(", ")
                ));
            }
            return Err(refuse(format!(
                "the backfill of {tp} cannot finish: {}",
                why.join("; ")
            )));
        }
        Ok(out)
    }
}

// ---------------------------------------------------------------------------------------------
// The JSON form of lifecycle events (write-plan scripts, vectors README §6) and planned records

fn partition_from(o: &Obj<'_>) -> Result<TopicIdPartition> {
    Ok(TopicIdPartition {
        topic_id: o.uuid("id")?,
        topic: o.str("name")?.to_owned(),
        partition: o.int("partition")?,
    })
}

fn segment_event_from(o: &Obj<'_>) -> Result<SegmentEvent> {
    let id = o.obj("remoteLogSegmentId")?;
    Ok(SegmentEvent {
        partition: partition_from(&id.obj("topicIdPartition")?)?,
        segment_id: id.uuid("id")?,
        broker_id: o.int("brokerId")?,
        event_timestamp_ms: o.int("eventTimestampMs")?,
        custom_metadata: if o.has("customMetadata") {
            o.nullable_hex("customMetadata")?.map(Cow::into_owned)
        } else {
            None
        },
        broker_leader_epoch: o.int("brokerLeaderEpoch")?,
    })
}

/// A lifecycle event in the JSON form of write-plan scripts: `{"op": "copyStarted" |
/// "copyFinished" | "deleteStarted" | "deleteFinished" | "partitionDelete", ...}`.
pub fn event_from_json(j: &Json) -> Result<Event> {
    use Event;
    let o = Obj::new(j, "event")?;
    match o.str("op")? {
        "copyStarted" => {
            let s = o.obj("segment")?;
            let id = s.obj("remoteLogSegmentId")?;
            let epochs = epochs_from(&s)?;
            // Ascending, the last of duplicate epochs winning, as the cache (and Kafka's map) has it.
            let leader_epochs = SegmentMetadata::sorted_epochs(
                epochs.iter().map(|e| (e.leader_epoch, e.offset)).collect(),
            );
            Ok(Event::CopyStarted {
                partition: partition_from(&id.obj("topicIdPartition")?)?,
                segment: SegmentMetadata {
                    id: id.uuid("id")?,
                    start_offset: s.int("startOffset")?,
                    end_offset: s.int("endOffset")?,
                    broker_id: s.int("brokerId")?,
                    max_timestamp_ms: s.int("maxTimestampMs")?,
                    event_timestamp_ms: s.int("eventTimestampMs")?,
                    leader_epochs,
                    segment_size_in_bytes: s.int("segmentSizeInBytes")?,
                    custom_metadata: s.nullable_hex("customMetadata")?.map(|c| c.into()),
                    state: SegmentState::CopySegmentStarted,
                    txn_index_empty: s.bool_or("txnIndexEmpty", false)?,
                    broker_leader_epoch: o.int("brokerLeaderEpoch")?,
                },
            })
        }
        "copyFinished" => Ok(Event::CopyFinished(segment_event_from(&o)?)),
        "deleteStarted" => Ok(Event::DeleteStarted(segment_event_from(&o)?)),
        "deleteFinished" => Ok(Event::DeleteFinished(segment_event_from(&o)?)),
        "partitionDelete" => {
            let state: i8 = o.int("state")?;
            Ok(Event::PartitionDelete {
                partition: partition_from(&o.obj("topicIdPartition")?)?,
                state: PartitionDeleteState::from_id(state)
                    .ok_or_else(|| o.err("state", "unknown partition delete state"))?,
                broker_id: o.int("brokerId")?,
                event_timestamp_ms: o.int("eventTimestampMs")?,
                broker_leader_epoch: o.int("brokerLeaderEpoch")?,
            })
        }
        other => Err(o.err("op", &format!("unknown lifecycle event {other:?}"))),
    }
}

/// A planned record as JSON: `{"key": text, "value": hex or null}` (a replay event's form).
pub fn planned_to_json(p: &Planned) -> Json {
    json!({"key": p.key.format(), "value": p.value.as_deref().map(to_hex)})
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_repeated_leader_epoch_in_a_plan_event_keeps_its_last_offset() {
        let doc = json!({"op": "copyStarted", "brokerLeaderEpoch": 5, "segment": {
            "remoteLogSegmentId": {"topicIdPartition": {"name": "orders", "id": "ASNFZ4mrze_-3LqYdlQyEA", "partition": 0},
                "id": "EREREREREREiIiIiIiIiIg"},
            "startOffset": 0, "endOffset": 99, "brokerId": 1, "maxTimestampMs": 1, "eventTimestampMs": 1,
            "segmentLeaderEpochs": [{"leaderEpoch": 5, "offset": 0}, {"leaderEpoch": 5, "offset": 40},
                {"leaderEpoch": 4, "offset": 0}],
            "segmentSizeInBytes": 1, "customMetadata": null, "txnIndexEmpty": false}});
        let epochs = match event_from_json(&doc) {
            Ok(Event::CopyStarted { segment, .. }) => segment.leader_epochs.to_vec(),
            other => panic!("not a copyStarted event: {other:?}"),
        };
        // As Kafka's sorted map holds them, and as the cache keeps a decoded record's epochs.
        assert_eq!(epochs, vec![(4, 0), (5, 40)]);
    }

    fn tp() -> TopicIdPartition {
        TopicIdPartition {
            topic_id: Uuid::new(0x0123456789abcdef, 9),
            topic: "orders".into(),
            partition: 0,
        }
    }

    /// Issue 31: the leader stays, KRaft bumps its epoch (a shrink of the replica set), and the
    /// segment's own data carries the new epoch while the host knows the old one. Before the
    /// writer rule every such copy was refused ("below epoch 6 of the segment's own data").
    #[test]
    fn a_copy_after_an_epoch_bump_under_the_same_leader_is_keyed_by_the_new_epoch() {
        let store = Store::held();
        let copy = crate::testing::stock::started(&tp(), Uuid::new(1, 1), 0, 6).unwrap();
        let stale = Writer {
            leads: true,
            known_epoch: 5,
        };
        let explicit = store.plan_value(&copy, stale.known_epoch, 2);
        assert_eq!(
            explicit.err().map(|e| e.kind()),
            Some(ErrorKind::InvalidState),
            "an explicit stale epoch stays refused"
        );
        let planned = store.plan_for_writer(&copy, stale, 2).unwrap();
        assert_eq!(planned.len(), 1);
        assert_eq!(planned[0].key.broker_leader_epoch, 6);
        assert_eq!(planned[0].key.end_offset, 99);
        // data older than the known epoch: the known one
        let older = crate::testing::stock::started(&tp(), Uuid::new(2, 2), 100, 4).unwrap();
        let planned = store.plan_for_writer(&older, stale, 2).unwrap();
        assert_eq!(planned[0].key.broker_leader_epoch, 5);
    }

    #[test]
    fn a_copy_needs_a_leader_that_knows_its_term() {
        let store = Store::held();
        let copy = crate::testing::stock::started(&tp(), Uuid::new(1, 1), 0, 6).unwrap();
        let deposed = Writer {
            leads: false,
            known_epoch: 6,
        };
        let e = store.plan_for_writer(&copy, deposed, 2).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidState);
        assert!(e.message().contains("does not lead"), "{e}");
        let new_term = Writer {
            leads: true,
            known_epoch: UNKNOWN_EPOCH,
        };
        let e = store.plan_for_writer(&copy, new_term, 2).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotInitialized, "{e}");
    }
}
