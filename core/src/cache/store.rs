//! All user partitions of one `__remote_log_metadata` partition, rebuilt by replaying records:
//! Kafka's `RemotePartitionMetadataStore` fed as its `ConsumerTask` feeds it (spec §6.5-6.7).
//!
//! Owns: replay of `(offset, key, value)` records, where the key is null (records written before
//! KIP-1266), a KIP-1266 key, or anything else, and the value is a record of any version or null
//! (a tombstone); the queries Kafka's `RemoteLogMetadataManager` answers, with Kafka's errors;
//! and, beyond Kafka, what it learns that Kafka drops: updates whose base record is missing
//! (orphans, kept for deletion retries), every event Kafka would drop or die on, reported as
//! data, and, in a broker's store, the deleted segments of a partition with a null-key history
//! that a later record brought back ([`Store::resurrections`]). Never: I/O, time, or what to
//! write next.

use hashbrown::{HashMap, HashSet};

use super::buried::Buried;
use super::hash::UuidHash;
use super::keys::{Holder, Keys};
use super::memory::{MemoryUse, vec_bytes};
use super::partition::{Dropped, PartitionCache};
use super::segment::{SegmentMetadata, SegmentUpdate};
use crate::error::{Error, ErrorKind, Result};
use crate::feature::{MetadataLevel, parse_level_record};
use crate::key::RecordKey;
use crate::model::{PartitionDeleteState, SegmentState, TopicIdPartition, Uuid};
use crate::record::{
    Plain, PlainPartition, Record, Value, check_offsets_and_epochs, decode_value, read_plain,
};

/// A value as [`Store::apply_seen`] read it: by the plain reader (segment and update values as
/// Kafka writes them) or decoded in full.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Seen<'v, 'a> {
    Plain(&'v Plain<'a>),
    Value(&'v Value<'a>),
}

/// The latest partition-delete event of a user partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionDelete {
    pub state: PartitionDeleteState,
    pub broker_id: i32,
    pub event_timestamp_ms: i64,
}

/// An update whose segment record is missing (compacted away, expired by retention, or never
/// written): Kafka drops it and forgets the segment; the store keeps what the update and its key
/// tell, so the host can still delete the segment's remote data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Orphan {
    pub segment_id: Uuid,
    pub state: SegmentState,
    /// From the record's key or its version-1 fields; `None` for a null-key version-0 update.
    pub end_offset: Option<i64>,
    pub broker_leader_epoch: Option<i32>,
    pub key: Option<String>,
    /// Offset of the record in the metadata partition.
    pub offset: i64,
}

/// Why a record changed nothing Kafka's cache answers, or would have stopped Kafka's consumer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
    /// A null value: the KIP-1266 tombstone of `key` (never fatal here; fatal to Kafka before
    /// KIP-1266).
    Tombstone { key: Option<String> },
    /// The value does not decode or fails Kafka's object checks (fatal to Kafka's consumer).
    Undecodable(Error),
    /// A snapshot record (api key 3) in the topic: Kafka's consumer cannot handle it.
    SnapshotRecord,
    /// The level record of `remote.log.metadata.version` (key [`crate::feature::LEVEL_RECORD_KEY`]): the level
    /// it carries, or why it carries none. Hosts track each metadata partition's level from it.
    LevelRecord(Result<MetadataLevel>),
    /// The key is neither null nor a KIP-1266 key, or does not match the value.
    BadKey { key: String, why: String },
    /// Kafka's cache dropped the event.
    Dropped {
        partition: TopicIdPartition,
        reason: Dropped,
    },
    /// The record's user partition was deleted by DELETE_PARTITION_FINISHED (Kafka throws).
    PartitionDeleted { partition: TopicIdPartition },
    /// Not after the last record applied for this user partition (a re-delivery).
    AlreadyApplied {
        partition: TopicIdPartition,
        last: i64,
    },
    /// A store that keeps only loaded partitions ([`Store::held`]) does not hold the record's
    /// user partition (Kafka's `ConsumerTask` skips it the same way).
    NotHeld { partition: TopicIdPartition },
}

impl Skip {
    /// Whether this would have stopped the metadata consumer of a broker that predates KIP-1266
    /// (its thread exits on any non-retriable exception).
    pub fn fatal_to_kafka(&self) -> bool {
        match self {
            Skip::Tombstone { .. }
            | Skip::Undecodable(_)
            | Skip::SnapshotRecord
            | Skip::LevelRecord(_)
            | Skip::PartitionDeleted { .. } => true,
            Skip::Dropped { reason, .. } => matches!(
                reason,
                Dropped::StartedUpdate { .. } | Dropped::NotStarted { .. }
            ),
            Skip::BadKey { .. } | Skip::AlreadyApplied { .. } | Skip::NotHeld { .. } => false,
        }
    }
}

/// What replaying one record did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Kafka's cache applied it.
    Applied,
    /// Kafka's cache does not hold the segment, and the store kept the update as an orphan.
    Orphaned,
    /// Applied, but the record's key is wrong for its value (reported, not fatal).
    AppliedWithBadKey(Skip),
    /// It changed nothing Kafka's cache answers.
    Skipped(Skip),
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Slot {
    /// `None` once DELETE_PARTITION_FINISHED removed the partition.
    pub(crate) cache: Option<PartitionCache>,
    delete: Option<PartitionDelete>,
    last_applied: Option<i64>,
    pub(crate) orphans: HashMap<Uuid, Orphan, UuidHash>,
    /// `(endOffset, brokerLeaderEpoch)` -> what its two keys hold (non-tombstoned), and
    /// segment -> the key pair its segment record was written under.
    pub(crate) keys: Keys,
    /// Whether a null-key segment record of this partition was applied (it has a history written
    /// before KIP-1266, which a backfill keys again). Only then are deletions remembered.
    unkeyed: bool,
    /// In a [`Store::held`] store, for a partition with a null-key history: the segments written
    /// with a null key whose DELETE_SEGMENT_FINISHED this store applied. A record that brings one
    /// back is a deposed leader's late backfill (segment ids are never reused; a segment first
    /// written with a key is held by its keys and never backfilled).
    buried: Buried,
    /// Buried segments a later record brought back (held again, or an orphan update): what
    /// [`Store::resurrections`] reports and the leader deletes again.
    pub(crate) risen: HashSet<Uuid, UuidHash>,
}

impl Slot {
    fn add_memory(&self, m: &mut MemoryUse) {
        if let Some(c) = &self.cache {
            c.add_memory(m);
        }
        m.orphans += self.orphans.allocation_size()
            + self
                .orphans
                .values()
                .map(|o| o.key.as_ref().map_or(0, String::capacity))
                .sum::<usize>();
        m.keys += self.keys.heap_bytes();
        m.buried += self.buried.heap_bytes() + self.risen.allocation_size();
    }
}

/// User partitions by topic id and partition number, then name (partitions are equal only when
/// all three are), so that a record's partition is found without building an owned key.
#[derive(Clone, Debug, Default)]
struct Partitions {
    by_id: HashMap<(Uuid, i32), Vec<(TopicIdPartition, Slot)>, UuidHash>,
}

impl Partitions {
    fn get(&self, topic_id: Uuid, partition: i32, name: &[u8]) -> Option<&Slot> {
        self.by_id
            .get(&(topic_id, partition))?
            .iter()
            .find(|(tp, _)| tp.topic.as_bytes() == name)
            .map(|(_, s)| s)
    }

    fn get_mut(&mut self, topic_id: Uuid, partition: i32, name: &[u8]) -> Option<&mut Slot> {
        self.by_id
            .get_mut(&(topic_id, partition))?
            .iter_mut()
            .find(|(tp, _)| tp.topic.as_bytes() == name)
            .map(|(_, s)| s)
    }

    /// The slot, created (Kafka's `maybeLoadPartition`) if the partition was never seen.
    /// `name` is UTF-8 (a `str`'s bytes).
    fn load(&mut self, topic_id: Uuid, partition: i32, name: &[u8]) -> &mut Slot {
        let list = self.by_id.entry((topic_id, partition)).or_default();
        let i = match list.iter().position(|(tp, _)| tp.topic.as_bytes() == name) {
            Some(i) => i,
            None => {
                let tp = TopicIdPartition {
                    topic_id,
                    topic: String::from_utf8_lossy(name).into_owned(),
                    partition,
                };
                // Nearly every list holds one partition: no room for more (a slot is 512 bytes).
                list.reserve_exact(1);
                list.push((
                    tp,
                    Slot {
                        cache: Some(PartitionCache::default()),
                        ..Slot::default()
                    },
                ));
                list.len() - 1
            }
        };
        &mut list[i].1
    }

    fn unload(&mut self, topic_id: Uuid, partition: i32, name: &str) {
        if let Some(list) = self.by_id.get_mut(&(topic_id, partition)) {
            list.retain(|(tp, _)| tp.topic != name);
            if list.is_empty() {
                self.by_id.remove(&(topic_id, partition));
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = &(TopicIdPartition, Slot)> {
        self.by_id.values().flatten()
    }
}

/// The replayed state of one or more metadata partitions.
///
/// Two modes, one rule each:
/// - [`Store::new`] keeps every user partition a record names (the tools: the whole topic).
/// - [`Store::held`] keeps only the user partitions loaded into it, as a broker's `ConsumerTask`
///   does: a record of any other partition is skipped ([`Skip::NotHeld`]) and leaves no trace, so
///   a partition unloaded and loaded again starts empty and is rebuilt by replaying its metadata
///   partition from the beginning, exactly as a fresh replay would build it. Which partitions
///   need that replay is the store's answer ([`Store::load_partition`],
///   [`Store::rewind_metadata_partition`]), never a host's guess.
#[derive(Clone, Debug, Default)]
pub struct Store {
    partitions: Partitions,
    held_only: bool,
}

impl Store {
    pub fn new() -> Store {
        Store::default()
    }

    /// A store that keeps only the user partitions loaded into it (a broker's view).
    pub fn held() -> Store {
        Store {
            held_only: true,
            ..Store::default()
        }
    }

    /// Whether this store keeps only loaded partitions ([`Store::held`]).
    pub fn is_held_only(&self) -> bool {
        self.held_only
    }

    /// Kafka's `maybeLoadPartition`: start holding a user partition (no-op if already held or
    /// deleted). True when the partition was not held: its slot is new and empty, and the host
    /// must replay its metadata partition from the beginning before marking it initialized (in a
    /// [`Store::held`] store, nothing of it was kept while it was not held).
    pub fn load_partition(&mut self, tp: &TopicIdPartition) -> bool {
        let fresh = self
            .partitions
            .get(tp.topic_id, tp.partition, tp.topic.as_bytes())
            .is_none();
        self.partitions
            .load(tp.topic_id, tp.partition, tp.topic.as_bytes());
        fresh
    }

    /// Holds a user partition again from nothing: empty, not initialized, nothing applied. What a
    /// host does on the thread that applies records, right before it replays the partition's
    /// metadata partition from the beginning: records applied between [`Store::load_partition`]
    /// and that replay (by a poll already under way) would otherwise stand as already applied and
    /// hide the older records the replay brings.
    pub fn reset_partition(&mut self, tp: &TopicIdPartition) {
        *self
            .partitions
            .load(tp.topic_id, tp.partition, tp.topic.as_bytes()) = Slot {
            cache: Some(PartitionCache::default()),
            ..Slot::default()
        };
    }

    /// Forgets everything replayed for the user partitions held in metadata partition `mp` (of
    /// `num_partitions`) and holds them again, empty and not initialized: what a host does before
    /// it replays that one metadata partition from its beginning (a rebuild of one metadata
    /// partition, not of the whole store). Returns the partitions reset, sorted; the host marks
    /// each initialized once the replay reaches the metadata partition's end.
    pub fn rewind_metadata_partition(
        &mut self,
        mp: i32,
        num_partitions: i32,
    ) -> Result<Vec<TopicIdPartition>> {
        let mut reset = Vec::new();
        for ((topic_id, partition), list) in self.partitions.by_id.iter_mut() {
            if crate::partitioner::metadata_partition(*topic_id, *partition, num_partitions)? != mp
            {
                continue;
            }
            for (tp, slot) in list.iter_mut() {
                *slot = Slot {
                    cache: Some(PartitionCache::default()),
                    ..Slot::default()
                };
                reset.push(tp.clone());
            }
        }
        reset.sort();
        Ok(reset)
    }

    /// Marks a user partition initialized (replay has caught up), loading it first if needed.
    /// Returns false if the partition was deleted.
    pub fn mark_initialized(&mut self, tp: &TopicIdPartition) -> bool {
        match self
            .partitions
            .load(tp.topic_id, tp.partition, tp.topic.as_bytes())
            .cache
            .as_mut()
        {
            Some(c) => {
                c.mark_initialized();
                true
            }
            None => false,
        }
    }

    /// Kafka's `onStopPartitions`: forgets a user partition entirely (a later load starts it
    /// empty, and replay must start again from the metadata partition's beginning).
    pub fn unload_partition(&mut self, tp: &TopicIdPartition) {
        self.partitions.unload(tp.topic_id, tp.partition, &tp.topic);
    }

    /// The user partition known under a topic id and partition number (for hosts that name
    /// partitions by id alone, as Kafka's `TopicIdPartition` equality nearly does): one still
    /// held is preferred over one deleted.
    pub fn partition_by_id(&self, topic_id: Uuid, partition: i32) -> Option<&TopicIdPartition> {
        let list = self.partitions.by_id.get(&(topic_id, partition))?;
        list.iter()
            .find(|(_, s)| s.cache.is_some())
            .or_else(|| list.first())
            .map(|(tp, _)| tp)
    }

    /// Replays one record of the metadata partition. Either part may be null.
    pub fn apply(&mut self, offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Applied {
        self.apply_seen(offset, key, value, |_| {})
    }

    /// [`Store::apply`] for a host that reads only the outcome's code ([`Applied::outcome_code`]):
    /// a record of a partition not held (most of what a broker reads) is skipped without
    /// copying the partition's name into the skip, and a tombstone without copying its key,
    /// which nobody reads.
    pub(crate) fn apply_code(
        &mut self,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> u8 {
        self.apply_as::<false>(offset, key, value, |_| {})
            .outcome_code(value)
    }

    /// [`Store::apply`], showing `seen` the value as replay read it, so that a host folding the
    /// same record (the inspector's lifecycles) reads it once: called exactly once when the
    /// value decodes (before Kafka's object checks), never for a tombstone or a record under
    /// the level record key (replay does not read those as values).
    #[inline(always)]
    pub(crate) fn apply_seen(
        &mut self,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        seen: impl FnMut(Seen<'_, '_>),
    ) -> Applied {
        self.apply_as::<true>(offset, key, value, seen)
    }

    /// [`Store::apply_seen`]; `NAMED` false leaves the topic name out of a [`Skip::NotHeld`]
    /// of a plain value (its id and number stay) and the key out of a [`Skip::Tombstone`], for
    /// [`Store::apply_code`] alone.
    #[inline(always)]
    fn apply_as<const NAMED: bool>(
        &mut self,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        mut seen: impl FnMut(Seen<'_, '_>),
    ) -> Applied {
        if let Some(level) = parse_level_record(key, value) {
            return Applied::Skipped(Skip::LevelRecord(level));
        }
        let Some(value) = value else {
            if let Some(k) = key.and_then(|k| RecordKey::parse_bytes(k).ok()) {
                self.forget_key(&k);
            }
            return Applied::Skipped(Skip::Tombstone {
                key: key
                    .filter(|_| NAMED)
                    .map(|k| String::from_utf8_lossy(k).into_owned()),
            });
        };
        let plain = read_plain(value);
        // What the full reader gives when the plain reader reads a value (read_plain's promise).
        let shown = plain.is_some();
        if let Some(p) = &plain {
            seen(Seen::Plain(p));
            if let Some(skipped) = self.not_held::<NAMED>(p) {
                return skipped;
            }
        }
        if let Some(p) = plain {
            // A key takes this way too when it parses and names this very record; any other
            // key takes the full way, which says what is wrong with it.
            let key = match key {
                None => Some(None),
                Some(k) => RecordKey::parse_bytes(k)
                    .ok()
                    .filter(|k| key_fits_plain(k, &p))
                    .map(Some),
            };
            if let Some(key) = key {
                if let Some(applied) = self.apply_plain(offset, p, key) {
                    return applied;
                }
            }
        }
        let decoded = match decode_value(value) {
            Ok(v) => v,
            Err(e) => return Applied::Skipped(Skip::Undecodable(e)),
        };
        if !shown {
            seen(Seen::Value(&decoded));
        }
        if let Err(e) = decoded.validate() {
            return Applied::Skipped(Skip::Undecodable(e));
        }
        let key = match key.map(RecordKey::parse_bytes).transpose() {
            Ok(k) => k,
            Err(e) => {
                let text = key
                    .map(|k| String::from_utf8_lossy(k).into_owned())
                    .unwrap_or_default();
                return self.apply_value(
                    offset,
                    &decoded,
                    None,
                    Some(Skip::BadKey {
                        key: text,
                        why: e.message().to_owned(),
                    }),
                );
            }
        };
        let mismatch = key.as_ref().and_then(|k| key_mismatch(k, &decoded));
        if let (Some(k), None) = (&key, &mismatch) {
            self.hold_key(k, &decoded);
        }
        self.apply_value(offset, &decoded, key, mismatch)
    }

    /// A plain value (see [`read_plain`]) with a null key or the key that fits it (`key`, then
    /// held as `hold_key` would hold it), the common case of replay, applied without building a
    /// decoded [`Value`]. `None` when Kafka's object checks refuse it: the
    /// caller then takes the full way, which reports why. Inlined: taking `p` apart where it
    /// was read spares copying it (a memcpy a record).
    #[inline(always)]
    fn apply_plain(
        &mut self,
        offset: i64,
        p: Plain<'_>,
        key: Option<RecordKey>,
    ) -> Option<Applied> {
        match p {
            Plain::Segment {
                part,
                version: _,
                id,
                start_offset,
                end_offset,
                broker_id,
                max_timestamp_ms,
                event_timestamp_ms,
                leader_epochs,
                segment_size_in_bytes,
                custom_metadata,
                state,
                txn_index_empty,
                broker_leader_epoch,
            } => {
                let state = SegmentState::from_id(state)?;
                check_offsets_and_epochs(start_offset, end_offset, leader_epochs.len()).ok()?;
                let m = SegmentMetadata {
                    id,
                    start_offset,
                    end_offset,
                    broker_id,
                    max_timestamp_ms,
                    event_timestamp_ms,
                    leader_epochs: SegmentMetadata::sorted_epochs(leader_epochs),
                    segment_size_in_bytes,
                    custom_metadata: custom_metadata.map(Box::from),
                    state,
                    txn_index_empty,
                    broker_leader_epoch,
                };
                if let Some(k) = &key {
                    self.hold_key_with(k, Held::Segment(m.id));
                }
                Some(self.apply_segment(offset, part, m, key.is_none()))
            }
            Plain::Update {
                part,
                version,
                id,
                broker_id,
                event_timestamp_ms,
                custom_metadata,
                state,
                broker_leader_epoch,
                end_offset,
            } => {
                let upd = SegmentUpdate {
                    id,
                    broker_id,
                    event_timestamp_ms,
                    custom_metadata: custom_metadata.map(<[u8]>::to_vec),
                    state: SegmentState::from_id(state)?,
                };
                let v1 = (version >= 1).then_some((end_offset, broker_leader_epoch));
                if let Some(k) = &key {
                    self.hold_key_with(k, Held::Update(Holder::Segment(id, upd.state)));
                }
                Some(self.apply_update(offset, part, &upd, key.as_ref(), v1))
            }
        }
    }

    /// [`Skip::NotHeld`] for a plain value of a partition a store of held partitions does not
    /// hold, once Kafka's object checks pass ([`plain_checked`]); `None` otherwise. Every way
    /// [`Store::apply_seen`] could take from there ends in [`Store::admit`]'s `NotHeld`, whatever
    /// the key: the plain way when the key fits; else the full way, whose `validate` and
    /// `from_record` check what `plain_checked` checked (the sorted epochs stay non-empty), a
    /// held key of an unheld partition is a no-op, and a key's problem is reported only with a
    /// record that applied. So most records a broker reads (of partitions it does not host) are
    /// skipped without parsing their key or building their metadata.
    #[inline(always)]
    fn not_held<const NAMED: bool>(&self, p: &Plain<'_>) -> Option<Applied> {
        let part = match p {
            Plain::Segment { part, .. } | Plain::Update { part, .. } => *part,
        };
        (self.held_only
            && plain_checked(p)
            && self
                .partitions
                .get(part.topic_id, part.partition, part.name.as_bytes())
                .is_none())
        .then(|| {
            Applied::Skipped(Skip::NotHeld {
                partition: if NAMED {
                    owned(part)
                } else {
                    TopicIdPartition {
                        topic_id: part.topic_id,
                        topic: String::new(),
                        partition: part.partition,
                    }
                },
            })
        })
    }

    /// The partition's slot, loaded if new, unless the record is a re-delivery (Kafka's
    /// ConsumerTask skips a record not after the last one applied for its partition).
    fn admit(
        &mut self,
        offset: i64,
        part: PlainPartition<'_>,
    ) -> std::result::Result<&mut Slot, Applied> {
        let slot = if self.held_only {
            match self
                .partitions
                .get_mut(part.topic_id, part.partition, part.name.as_bytes())
            {
                Some(slot) => slot,
                None => {
                    return Err(Applied::Skipped(Skip::NotHeld {
                        partition: owned(part),
                    }));
                }
            }
        } else {
            self.partitions
                .load(part.topic_id, part.partition, part.name.as_bytes())
        };
        if let Some(last) = slot.last_applied.filter(|&last| offset <= last) {
            return Err(Applied::Skipped(Skip::AlreadyApplied {
                partition: owned(part),
                last,
            }));
        }
        slot.last_applied = Some(offset);
        Ok(slot)
    }

    /// Kafka's handling of a segment record (COPY_SEGMENT_STARTED); `unkeyed`: its key is null.
    fn apply_segment(
        &mut self,
        offset: i64,
        part: PlainPartition<'_>,
        m: SegmentMetadata,
        unkeyed: bool,
    ) -> Applied {
        let held_only = self.held_only;
        let slot = match self.admit(offset, part) {
            Ok(slot) => slot,
            Err(skipped) => return skipped,
        };
        let Some(cache) = slot.cache.as_mut() else {
            return Applied::Skipped(Skip::PartitionDeleted {
                partition: owned(part),
            });
        };
        if !slot.orphans.is_empty() {
            slot.orphans.remove(&m.id);
        }
        slot.unkeyed |= unkeyed && held_only;
        let id = m.id;
        match cache.add_copy_in_progress(m) {
            Ok(()) => {
                if unkeyed && held_only {
                    cache.mark_unkeyed(id);
                }
                if !slot.buried.is_empty() && slot.buried.contains(&id) {
                    slot.risen.insert(id);
                }
                Applied::Applied
            }
            Err(reason) => Applied::Skipped(Skip::Dropped {
                partition: owned(part),
                reason,
            }),
        }
    }

    /// Kafka's handling of an update record; an update of a segment the cache does not hold is
    /// kept as an orphan, with the end offset and epoch its key or its version-1 fields (`v1`:
    /// `(endOffset, brokerLeaderEpoch)`) tell.
    fn apply_update(
        &mut self,
        offset: i64,
        part: PlainPartition<'_>,
        upd: &SegmentUpdate,
        key: Option<&RecordKey>,
        v1: Option<(i64, i32)>,
    ) -> Applied {
        let slot = match self.admit(offset, part) {
            Ok(slot) => slot,
            Err(skipped) => return skipped,
        };
        let Some(cache) = slot.cache.as_mut() else {
            return Applied::Skipped(Skip::PartitionDeleted {
                partition: owned(part),
            });
        };
        // Only a segment written before KIP-1266 (or one buried already, come back) can be
        // written again by a backfill: only its deletion is remembered, so that the memory is
        // bounded by the history written before the upgrade, not by every deletion since.
        let remember = upd.state == SegmentState::DeleteSegmentFinished
            && slot.unkeyed
            && (cache.is_unkeyed(upd.id) || slot.buried.contains(&upd.id));
        match cache.update(upd) {
            Ok(()) => {
                if remember {
                    slot.buried.insert(upd.id);
                    slot.risen.remove(&upd.id);
                }
                Applied::Applied
            }
            Err(Dropped::UnknownSegment { .. }) => {
                if !slot.buried.is_empty() && slot.buried.contains(&upd.id) {
                    if upd.state == SegmentState::DeleteSegmentFinished {
                        slot.risen.remove(&upd.id);
                    } else {
                        slot.risen.insert(upd.id);
                    }
                }
                let (end_offset, epoch) = match (key, v1) {
                    (Some(k), _) => (Some(k.end_offset), Some(k.broker_leader_epoch)),
                    (None, Some((end, epoch))) => (Some(end), Some(epoch)),
                    (None, None) => (None, None),
                };
                if upd.state == SegmentState::DeleteSegmentFinished {
                    slot.orphans.remove(&upd.id);
                } else {
                    slot.orphans.insert(
                        upd.id,
                        Orphan {
                            segment_id: upd.id,
                            state: upd.state,
                            end_offset,
                            broker_leader_epoch: epoch,
                            key: key.map(RecordKey::format),
                            offset,
                        },
                    );
                }
                Applied::Orphaned
            }
            Err(reason) => Applied::Skipped(Skip::Dropped {
                partition: owned(part),
                reason,
            }),
        }
    }

    /// Applies a decoded value; a bad key is reported with the outcome when the value applied.
    fn apply_value(
        &mut self,
        offset: i64,
        v: &Value<'_>,
        key: Option<RecordKey>,
        key_problem: Option<Skip>,
    ) -> Applied {
        let entry = match &v.record {
            Record::Segment(s) => &s.remote_log_segment_id.topic_id_partition,
            Record::Update(u) => &u.remote_log_segment_id.topic_id_partition,
            Record::PartitionDelete(d) => &d.topic_id_partition,
            Record::Snapshot(_) => return Applied::Skipped(Skip::SnapshotRecord),
        };
        let part = PlainPartition {
            topic_id: entry.id,
            partition: entry.partition,
            name: &entry.name,
        };
        // The metadata and update are built before the partition is looked at: `validate`
        // has run, so building them cannot fail.
        let outcome = match &v.record {
            Record::PartitionDelete(d) => {
                let slot = match self.admit(offset, part) {
                    Ok(slot) => slot,
                    Err(skipped) => return skipped,
                };
                let Some(state) = PartitionDeleteState::from_id(d.remote_partition_delete_state)
                else {
                    return Applied::Skipped(Skip::Undecodable(Error::new(
                        ErrorKind::InvalidRecord,
                        "unknown partition delete state",
                    )));
                };
                if state == PartitionDeleteState::DeletePartitionFinished {
                    slot.cache = None;
                    slot.delete = None;
                    slot.orphans.clear();
                } else {
                    slot.delete = Some(PartitionDelete {
                        state,
                        broker_id: d.broker_id,
                        event_timestamp_ms: d.event_timestamp_ms,
                    });
                }
                Applied::Applied
            }
            Record::Segment(s) => match SegmentMetadata::from_record(s) {
                Ok(m) => {
                    let unkeyed =
                        key.is_none() && !matches!(key_problem, Some(Skip::BadKey { .. }));
                    self.apply_segment(offset, part, m, unkeyed)
                }
                Err(e) => return Applied::Skipped(Skip::Undecodable(e)),
            },
            Record::Update(u) => match SegmentUpdate::from_record(u) {
                Ok(upd) => {
                    let v1 = (v.version >= 1).then_some((u.end_offset, u.broker_leader_epoch));
                    self.apply_update(offset, part, &upd, key.as_ref(), v1)
                }
                Err(e) => return Applied::Skipped(Skip::Undecodable(e)),
            },
            Record::Snapshot(_) => Applied::Skipped(Skip::SnapshotRecord),
        };
        match key_problem {
            Some(problem) if outcome == Applied::Applied => Applied::AppliedWithBadKey(problem),
            _ => outcome,
        }
    }

    /// A tombstone: the key now holds nothing.
    fn forget_key(&mut self, k: &RecordKey) {
        let Some(slot) = self
            .partitions
            .get_mut(k.topic_id, k.partition, k.topic.as_bytes())
        else {
            return;
        };
        slot.keys
            .forget((k.end_offset, k.broker_leader_epoch), k.update);
        slot.orphans
            .retain(|_, o| o.key.as_deref() != Some(&k.format()));
    }

    /// A keyed record: its key now holds this value.
    fn hold_key(&mut self, k: &RecordKey, v: &Value<'_>) {
        let held = match &v.record {
            Record::Segment(s) => Held::Segment(s.remote_log_segment_id.id),
            Record::Update(u) => match SegmentState::from_id(u.remote_log_segment_state) {
                Some(state) => Held::Update(Holder::Segment(u.remote_log_segment_id.id, state)),
                None => return,
            },
            Record::PartitionDelete(d) => {
                match PartitionDeleteState::from_id(d.remote_partition_delete_state) {
                    Some(state) => Held::Update(Holder::PartitionDelete(state)),
                    None => return,
                }
            }
            Record::Snapshot(_) => return,
        };
        self.hold_key_with(k, held);
    }

    fn hold_key_with(&mut self, k: &RecordKey, held: Held) {
        let slot = if self.held_only {
            match self
                .partitions
                .get_mut(k.topic_id, k.partition, k.topic.as_bytes())
            {
                Some(slot) => slot,
                None => return,
            }
        } else {
            self.partitions
                .load(k.topic_id, k.partition, k.topic.as_bytes())
        };
        let pair = (k.end_offset, k.broker_leader_epoch);
        match held {
            Held::Segment(id) => slot.keys.hold_segment(pair, id),
            Held::Update(holder) => slot.keys.hold_update(pair, holder),
        }
    }

    pub(crate) fn slot(&self, tp: &TopicIdPartition) -> Option<&Slot> {
        self.partitions
            .get(tp.topic_id, tp.partition, tp.topic.as_bytes())
    }

    fn cache(&self, tp: &TopicIdPartition) -> Result<&PartitionCache> {
        let cache = self
            .partitions
            .get(tp.topic_id, tp.partition, tp.topic.as_bytes())
            .and_then(|s| s.cache.as_ref())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::NotFound,
                    format!("no resource found for partition: {tp}"),
                )
            })?;
        if !cache.is_initialized() {
            return Err(Error::new(
                ErrorKind::NotInitialized,
                format!("remote log metadata cache is not initialized for partition: {tp}"),
            ));
        }
        Ok(cache)
    }

    /// Kafka's `remoteLogSegmentMetadata(tp, epoch, offset)`.
    pub fn segment_for(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
        offset: i64,
    ) -> Result<Option<&SegmentMetadata>> {
        Ok(self.cache(tp)?.segment_for(epoch, offset))
    }

    /// Kafka's `highestOffsetForEpoch(tp, epoch)`.
    pub fn highest_offset_for_epoch(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
    ) -> Result<Option<i64>> {
        Ok(self.cache(tp)?.highest_offset_for_epoch(epoch))
    }

    /// Kafka's `listRemoteLogSegments(tp)` (by start offset here; Kafka's order is undefined).
    pub fn segments(&self, tp: &TopicIdPartition) -> Result<Vec<&SegmentMetadata>> {
        Ok(self.cache(tp)?.segments())
    }

    /// How many segments [`Store::segments`] lists for `tp` (same errors), without listing them:
    /// what a metric counts, in constant time.
    pub fn segment_count(&self, tp: &TopicIdPartition) -> Result<usize> {
        Ok(self.cache(tp)?.len())
    }

    /// Kafka's `listRemoteLogSegments(tp, epoch)`, in Kafka's order.
    pub fn segments_for_epoch(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
    ) -> Result<Vec<&SegmentMetadata>> {
        self.cache(tp)?.segments_for_epoch(epoch)
    }

    /// Kafka's `nextSegmentWithTxnIndex(tp, epoch, offset)`.
    pub fn next_segment_with_txn_index(
        &self,
        tp: &TopicIdPartition,
        epoch: i32,
        offset: i64,
    ) -> Result<Option<&SegmentMetadata>> {
        Ok(self.cache(tp)?.next_segment_with_txn_index(epoch, offset))
    }

    /// The state of a segment as Kafka's full listing shows it, `None` if not listed.
    pub fn segment_state(&self, tp: &TopicIdPartition, id: Uuid) -> Result<Option<SegmentState>> {
        Ok(self.cache(tp)?.segment(id).map(|m| m.state))
    }

    /// The latest partition-delete event of a partition still held.
    pub fn partition_delete(&self, tp: &TopicIdPartition) -> Option<&PartitionDelete> {
        self.partitions
            .get(tp.topic_id, tp.partition, tp.topic.as_bytes())?
            .delete
            .as_ref()
    }

    /// Updates whose segment record is missing, for deletion retries (beyond Kafka).
    pub fn orphans(&self, tp: &TopicIdPartition) -> Vec<&Orphan> {
        let mut out: Vec<_> = self
            .partitions
            .get(tp.topic_id, tp.partition, tp.topic.as_bytes())
            .map(|s| s.orphans.values().collect())
            .unwrap_or_default();
        out.sort_by_key(|o| o.offset);
        out
    }

    /// Segments this store saw deleted (DELETE_SEGMENT_FINISHED applied) that a later record
    /// brought back: held again, or an update kept as an orphan. Only a [`Store::held`] store of
    /// a partition with a history written before KIP-1266 remembers deletions, as only a backfill
    /// (of such a history, by a deposed leader whose record landed late) writes a deleted
    /// segment's records again. The partition's leader deletes them again
    /// ([`Store::plan_backfill`]). Sorted.
    pub fn resurrections(&self, tp: &TopicIdPartition) -> Vec<Uuid> {
        let Some(slot) = self.slot(tp) else {
            return Vec::new();
        };
        let mut out: Vec<Uuid> = slot
            .risen
            .iter()
            .copied()
            .filter(|id| {
                slot.cache
                    .as_ref()
                    .is_some_and(|c| c.segment(*id).is_some())
                    || slot.orphans.contains_key(id)
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// The user partitions held (not deleted), sorted.
    pub fn partitions(&self) -> Vec<&TopicIdPartition> {
        let mut out: Vec<_> = self
            .partitions
            .iter()
            .filter(|(_, s)| s.cache.is_some())
            .map(|(tp, _)| tp)
            .collect();
        out.sort();
        out
    }

    /// The heap bytes this store holds, by structure (what `make bench-store-memory` checks
    /// against a counting allocator).
    pub fn memory(&self) -> MemoryUse {
        let mut m = MemoryUse {
            partitions: self.partitions.by_id.allocation_size(),
            ..MemoryUse::default()
        };
        for list in self.partitions.by_id.values() {
            m.partitions += vec_bytes(list);
            for (tp, slot) in list {
                m.partitions += tp.topic.capacity();
                slot.add_memory(&mut m);
            }
        }
        m
    }

    /// A partition's cache regardless of initialization (for inspection tools).
    pub fn partition_cache(&self, tp: &TopicIdPartition) -> Option<&PartitionCache> {
        self.partitions
            .get(tp.topic_id, tp.partition, tp.topic.as_bytes())?
            .cache
            .as_ref()
    }
}

/// Whether a plain value passes Kafka's object checks, as [`Store::apply_plain`] checks them
/// (a known state; a segment's offsets and leader epochs).
#[inline(always)]
fn plain_checked(p: &Plain<'_>) -> bool {
    match p {
        Plain::Segment {
            start_offset,
            end_offset,
            leader_epochs,
            state,
            ..
        } => {
            SegmentState::from_id(*state).is_some()
                && check_offsets_and_epochs(*start_offset, *end_offset, leader_epochs.len()).is_ok()
        }
        Plain::Update { state, .. } => SegmentState::from_id(*state).is_some(),
    }
}

/// The user partition, owned, for a report.
fn owned(part: PlainPartition<'_>) -> TopicIdPartition {
    TopicIdPartition {
        topic_id: part.topic_id,
        topic: part.name.to_owned(),
        partition: part.partition,
    }
}

/// What a key holds once its record is applied: a segment record, or a state change.
enum Held {
    Segment(Uuid),
    Update(Holder),
}

/// Whether `key` is the key of the plain record `p`, in every field `key_mismatch` checks.
fn key_fits_plain(key: &RecordKey, p: &Plain<'_>) -> bool {
    let (part, update) = match p {
        Plain::Segment {
            part, end_offset, ..
        } => {
            if key.end_offset != *end_offset {
                return false;
            }
            (part, false)
        }
        Plain::Update { part, .. } => (part, true),
    };
    key.topic_id == part.topic_id
        && key.partition == part.partition
        && key.topic == part.name
        && key.update == update
}

/// Why a KIP-1266 key does not belong to its value, if it does not.
fn key_mismatch(key: &RecordKey, v: &Value<'_>) -> Option<Skip> {
    let expected_update = !matches!(v.record, Record::Segment(_));
    let (tid, name, partition) = match &v.record {
        Record::Segment(s) => {
            let t = &s.remote_log_segment_id.topic_id_partition;
            (t.id, &t.name, t.partition)
        }
        Record::Update(u) => {
            let t = &u.remote_log_segment_id.topic_id_partition;
            (t.id, &t.name, t.partition)
        }
        Record::PartitionDelete(d) => (
            d.topic_id_partition.id,
            &d.topic_id_partition.name,
            d.topic_id_partition.partition,
        ),
        Record::Snapshot(_) => return None,
    };
    let why = if key.topic_id != tid || key.topic != *name || key.partition != partition {
        "the key names another partition than the value"
    } else if key.update != expected_update {
        "the key's :UPDATE suffix does not match the record type"
    } else if matches!(&v.record, Record::Segment(s) if s.end_offset != key.end_offset) {
        "the key's end offset differs from the segment's"
    } else {
        return None;
    };
    Some(Skip::BadKey {
        key: key.format(),
        why: why.to_owned(),
    })
}
