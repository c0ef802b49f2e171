//! The metadata held against the remote store itself (issue 21).
//!
//! Owns: a [`Ledger`] that replays `__remote_log_metadata` records into the [`Store`] (Kafka's
//! view) and remembers every segment any record ever named (what Kafka forgets once a segment is
//! deleted, tombstoned or its partition deleted); and [`reconcile`], which, given that ledger, a
//! listing of remote objects (key, size, last-modified), a [`Layout`], `now` and a grace period,
//! classifies every segment and every object, totals them per class and user partition, and
//! makes the cleanup plan: the objects safe to delete, the segments that need a person.
//! Never: I/O (listing a bucket, deleting an object, reading the topic are the host's), the
//! clock (`now` is a parameter), or writing metadata.
//!
//! The rules, in one place:
//! - a COPY_SEGMENT_FINISHED segment with every required file is live; with some missing it is
//!   dangling (reads of its offsets fail); with the size file's size other than
//!   `segmentSizeInBytes` it is a size mismatch;
//! - COPY_SEGMENT_STARTED older than the grace is an abandoned upload, younger a copy in
//!   progress; DELETE_SEGMENT_STARTED older than the grace is a stuck deletion;
//! - DELETE_SEGMENT_FINISHED, tombstoned, or of a deleted partition, with objects left: leaked;
//! - objects whose segment id no record names: orphaned; keys no template matches (or whose
//!   fields disagree with the metadata of the segment they name): unmatched, reported only;
//! - safe to delete: orphaned and leaked objects last modified longer ago than the grace, and
//!   the objects of abandoned uploads whose offsets finished segments of the same partition
//!   cover; needs a person: dangling segments, stuck deletions, size mismatches, abandoned
//!   uploads not covered. Nothing of a live segment or of a copy that may still run is ever
//!   safe.

pub mod layout;
pub mod sql;
mod stream;

use std::collections::{BTreeMap, HashMap};

use crate::cache::Store;
use crate::cache::hash::UuidHash;
use crate::error::Result;
use crate::key::RecordKey;
use crate::model::{PartitionDeleteState, SegmentState, TopicIdPartition, Uuid};
use crate::record::{Plain, PlainPartition, Record, decode_value, read_plain};

pub use layout::{Field, KeyFields, KeyMatch, Layout, PRESETS, Template};
pub use stream::{Classifier, Emitted, Finished};

/// What every record said about one segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// Index into [`Ledger::partitions`].
    pub partition: u32,
    pub start_offset: Option<i64>,
    pub end_offset: Option<i64>,
    pub segment_size_in_bytes: Option<i32>,
    /// The state of the latest record naming it.
    pub last_state: SegmentState,
    /// Event time of that record.
    pub since_ms: i64,
    /// The segment's key was tombstoned.
    pub tombstoned: bool,
    /// DELETE_PARTITION_FINISHED came for its partition after it was named.
    pub partition_deleted: bool,
}

/// The replay of a metadata history, for reconciling.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    store: Store,
    parts: Vec<TopicIdPartition>,
    part_index: HashMap<(Uuid, i32), Vec<u32>, UuidHash>,
    named: HashMap<Uuid, Named, UuidHash>,
    records: u64,
    newest_event_ms: Option<i64>,
}

impl Ledger {
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// The user partitions records named, by index.
    pub fn partitions(&self) -> &[TopicIdPartition] {
        &self.parts
    }

    /// What the records said about a segment, if any named it.
    pub fn named(&self, id: Uuid) -> Option<&Named> {
        self.named.get(&id)
    }

    /// How many segments records named.
    pub fn named_count(&self) -> usize {
        self.named.len()
    }

    /// Records applied so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The newest event timestamp any record carried: how recent a snapshot of the metadata (files
    /// copied from a log directory) is known to be, at the least.
    pub fn newest_event_ms(&self) -> Option<i64> {
        self.newest_event_ms
    }

    /// Kafka's view (the store the same records built).
    pub fn store(&self) -> &Store {
        &self.store
    }

    fn part(&mut self, p: PlainPartition<'_>) -> u32 {
        let list = self
            .part_index
            .entry((p.topic_id, p.partition))
            .or_default();
        if let Some(i) = list
            .iter()
            .find(|i| self.parts[**i as usize].topic == p.name)
        {
            return *i;
        }
        let i = u32::try_from(self.parts.len()).unwrap_or(u32::MAX);
        self.parts.push(TopicIdPartition {
            topic_id: p.topic_id,
            topic: p.name.to_owned(),
            partition: p.partition,
        });
        list.push(i);
        i
    }

    fn note(
        &mut self,
        part: PlainPartition<'_>,
        id: Uuid,
        state: SegmentState,
        ts: i64,
    ) -> &mut Named {
        let partition = self.part(part);
        self.newest_event_ms = Some(self.newest_event_ms.map_or(ts, |t| t.max(ts)));
        let n = self.named.entry(id).or_insert(Named {
            partition,
            start_offset: None,
            end_offset: None,
            segment_size_in_bytes: None,
            last_state: state,
            since_ms: ts,
            tombstoned: false,
            partition_deleted: false,
        });
        n.last_state = state;
        n.since_ms = ts;
        n
    }

    /// Replays one record (either part may be null), into Kafka's view and the ledger.
    pub fn apply(&mut self, offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) {
        self.records += 1;
        let Some(value) = value else {
            // A tombstone: the segment its (bare) key held is gone from the metadata.
            if let Some(k) = key.and_then(|k| RecordKey::parse_bytes(k).ok()) {
                if !k.update {
                    let tp = TopicIdPartition {
                        topic_id: k.topic_id,
                        topic: k.topic.clone(),
                        partition: k.partition,
                    };
                    let held = self
                        .store
                        .slot(&tp)
                        .and_then(|s| s.keys.get(&(k.end_offset, k.broker_leader_epoch)))
                        .and_then(|h| h.base);
                    if let Some(n) = held.and_then(|id| self.named.get_mut(&id)) {
                        n.tombstoned = true;
                    }
                }
            }
            self.store.apply(offset, key, value);
            return;
        };
        self.store.apply(offset, key, Some(value));
        match read_plain(value) {
            Some(Plain::Segment {
                part,
                id,
                start_offset,
                end_offset,
                event_timestamp_ms,
                segment_size_in_bytes,
                state,
                ..
            }) => {
                if let Some(state) = SegmentState::from_id(state) {
                    let n = self.note(part, id, state, event_timestamp_ms);
                    n.start_offset = Some(start_offset);
                    n.end_offset = Some(end_offset);
                    n.segment_size_in_bytes = Some(segment_size_in_bytes);
                }
            }
            Some(Plain::Update {
                part,
                id,
                event_timestamp_ms,
                state,
                ..
            }) => {
                if let Some(state) = SegmentState::from_id(state) {
                    self.note(part, id, state, event_timestamp_ms);
                }
            }
            None => self.apply_decoded(value),
        }
    }

    fn apply_decoded(&mut self, value: &[u8]) {
        let Ok(v) = decode_value(value) else { return };
        match &v.record {
            Record::Segment(s) => {
                let t = &s.remote_log_segment_id.topic_id_partition;
                let part = PlainPartition {
                    topic_id: t.id,
                    partition: t.partition,
                    name: &t.name,
                };
                if let Some(state) = SegmentState::from_id(s.remote_log_segment_state) {
                    let n = self.note(
                        part,
                        s.remote_log_segment_id.id,
                        state,
                        s.event_timestamp_ms,
                    );
                    n.start_offset = Some(s.start_offset);
                    n.end_offset = Some(s.end_offset);
                    n.segment_size_in_bytes = Some(s.segment_size_in_bytes);
                }
            }
            Record::Update(u) => {
                let t = &u.remote_log_segment_id.topic_id_partition;
                let part = PlainPartition {
                    topic_id: t.id,
                    partition: t.partition,
                    name: &t.name,
                };
                if let Some(state) = SegmentState::from_id(u.remote_log_segment_state) {
                    self.note(
                        part,
                        u.remote_log_segment_id.id,
                        state,
                        u.event_timestamp_ms,
                    );
                }
            }
            Record::PartitionDelete(d)
                if PartitionDeleteState::from_id(d.remote_partition_delete_state)
                    == Some(PartitionDeleteState::DeletePartitionFinished) =>
            {
                let t = &d.topic_id_partition;
                let part = PlainPartition {
                    topic_id: t.id,
                    partition: t.partition,
                    name: &t.name,
                };
                let i = self.part(part);
                for n in self.named.values_mut().filter(|n| n.partition == i) {
                    n.partition_deleted = true;
                }
            }
            _ => {}
        }
    }
}

/// One object of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// The key with the listing's prefix taken off.
    pub key: String,
    pub size: u64,
    pub last_modified_ms: i64,
}

/// What a segment named by metadata is, against the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SegmentClass {
    /// COPY_SEGMENT_FINISHED, every required file present, sizes agree.
    Live,
    /// COPY_SEGMENT_FINISHED with objects missing: reads of its offsets fail.
    Dangling,
    /// COPY_SEGMENT_FINISHED whose log object's size is not `segmentSizeInBytes`.
    SizeMismatch,
    /// COPY_SEGMENT_STARTED within the grace: a copy that may still be running.
    CopyInProgress,
    /// COPY_SEGMENT_STARTED older than the grace (with or without objects).
    AbandonedUpload,
    /// DELETE_SEGMENT_STARTED within the grace.
    DeletionInProgress,
    /// DELETE_SEGMENT_STARTED older than the grace (objects present or gone).
    StuckDeletion,
    /// Deleted (DELETE_SEGMENT_FINISHED, tombstoned, or its partition deleted) with objects left.
    Leaked,
    /// Deleted, and no object left: nothing to do.
    Deleted,
}

impl SegmentClass {
    pub const ALL: [SegmentClass; 9] = [
        SegmentClass::Live,
        SegmentClass::Dangling,
        SegmentClass::SizeMismatch,
        SegmentClass::CopyInProgress,
        SegmentClass::AbandonedUpload,
        SegmentClass::DeletionInProgress,
        SegmentClass::StuckDeletion,
        SegmentClass::Leaked,
        SegmentClass::Deleted,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            SegmentClass::Live => "live",
            SegmentClass::Dangling => "dangling",
            SegmentClass::SizeMismatch => "size_mismatch",
            SegmentClass::CopyInProgress => "copy_in_progress",
            SegmentClass::AbandonedUpload => "abandoned_upload",
            SegmentClass::DeletionInProgress => "deletion_in_progress",
            SegmentClass::StuckDeletion => "stuck_deletion",
            SegmentClass::Leaked => "leaked",
            SegmentClass::Deleted => "deleted",
        }
    }
}

/// What an object is: its segment's class, or one of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectClass {
    Segment(SegmentClass),
    /// Its segment id is named by no record.
    Orphaned,
    /// No template matches its key, or it matches in two ways, or its fields disagree with the
    /// metadata of the segment it names.
    Unmatched,
}

impl ObjectClass {
    pub const fn name(self) -> &'static str {
        match self {
            ObjectClass::Segment(c) => c.name(),
            ObjectClass::Orphaned => "orphaned",
            ObjectClass::Unmatched => "unmatched",
        }
    }
}

/// One segment's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentFinding {
    pub id: Uuid,
    /// Index into [`Reconciliation::partitions`].
    pub partition: u32,
    pub class: SegmentClass,
    pub state: SegmentState,
    pub since_ms: i64,
    pub start_offset: Option<i64>,
    pub end_offset: Option<i64>,
    pub segment_size_in_bytes: Option<i32>,
    /// Whether Kafka's cache holds it (false: deleted, or dropped by Kafka, or an orphaned update).
    pub kafka_knows: bool,
    /// Indices into the listing of its objects.
    pub objects: Vec<u32>,
    pub object_bytes: u64,
    /// Required files with no object (dangling and abandoned segments).
    pub missing_files: Vec<String>,
    /// For an abandoned upload: whether finished segments of its partition cover its offsets.
    pub covered: bool,
    /// Why it is in its class, for people.
    pub why: String,
}

/// One object's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectFinding {
    pub class: ObjectClass,
    /// Index into [`Reconciliation::segments`] of the segment it belongs to.
    pub segment: Option<u32>,
    /// Its segment id as the key names it (also for orphans).
    pub segment_id: Option<Uuid>,
    /// Index into [`Reconciliation::partitions`], when known.
    pub partition: Option<u32>,
    pub file: String,
    /// In the cleanup plan's safe list.
    pub safe_to_delete: bool,
    /// Why not matched, or why not (yet) safe, for people.
    pub note: Option<String>,
}

/// Counts and bytes of one class in one user partition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub segments: u64,
    pub objects: u64,
    /// Bytes of objects in the store.
    pub object_bytes: u64,
    /// `segmentSizeInBytes` of the segments (what breaks reads, for dangling ones).
    pub segment_bytes: u64,
}

/// Everything [`reconcile`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reconciliation {
    /// User partitions, by index (the ledger's, then ones only keys named).
    pub partitions: Vec<TopicIdPartition>,
    /// Every segment any record named, by partition and start offset.
    pub segments: Vec<SegmentFinding>,
    /// One per listed object, in listing order.
    pub objects: Vec<ObjectFinding>,
    /// Per (partition index or `None` for unknown, class name).
    pub totals: BTreeMap<(Option<u32>, &'static str), Tally>,
    /// Indices of objects safe to delete.
    pub safe_to_delete: Vec<u32>,
    /// Indices of segments that need a person.
    pub needs_person: Vec<u32>,
}

/// Parameters of a reconciliation.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub now_ms: i64,
    pub grace_ms: i64,
    /// How recent the metadata is: `None` for a history read to its end just now (the live
    /// topic); for a snapshot (files), the time it is known complete up to (e.g. the ledger's
    /// [`Ledger::newest_event_ms`]). An object modified later than that, less the grace, may
    /// belong to an upload the snapshot does not know yet: it is never safe to delete.
    pub metadata_as_of_ms: Option<i64>,
    /// How old the listing is: `None` for one made just now (the store's API); for a listing
    /// made earlier (an S3 Inventory), when it was made. A segment whose latest record came
    /// after that, less the grace, is not judged by it: a finished copy whose objects it lacks
    /// may have uploaded them since (not dangling: [`SegmentClass::CopyInProgress`]), and a
    /// deleted segment whose objects it shows may have had them removed since (not leaked:
    /// [`SegmentClass::Deleted`]).
    pub listing_as_of_ms: Option<i64>,
}

impl Params {
    /// Refuses a negative grace (`InvalidArgument`): the one check of the parameters every user of
    /// them makes first.
    pub fn check(&self) -> Result<()> {
        if self.grace_ms < 0 {
            return Err(crate::error::Error::field(
                crate::error::ErrorKind::InvalidArgument,
                "grace",
                format!(
                    "the grace period must not be negative (got {} ms)",
                    self.grace_ms
                ),
            ));
        }
        Ok(())
    }
}

/// Classifies every segment the ledger names and every object of `listing` (see the module doc).
/// Errors: a negative grace (`InvalidArgument`); a non-empty listing no key of which the layout
/// matches (`LayoutMismatch`).
pub fn reconcile(
    ledger: &Ledger,
    listing: &[Object],
    layout: &Layout,
    p: Params,
) -> Result<Reconciliation> {
    let mut c = Classifier::new(ledger, layout.clone(), p, true)?;
    let mut all = c.feed(ledger, listing.to_vec())?;
    let done = c.finish(ledger)?;
    all.extend(done.emitted);
    all.sort_unstable_by_key(|e| e.ordinal);
    debug_assert_eq!(all.len(), listing.len());
    let safe_to_delete = all
        .iter()
        .filter(|e| e.finding.safe_to_delete)
        .map(|e| e.ordinal)
        .collect();
    Ok(Reconciliation {
        partitions: done.partitions,
        segments: done.segments,
        objects: all.into_iter().map(|e| e.finding).collect(),
        totals: done.totals,
        safe_to_delete,
        needs_person: done.needs_person,
    })
}

fn deleted(n: &Named) -> bool {
    n.last_state == SegmentState::DeleteSegmentFinished || n.tombstoned || n.partition_deleted
}

fn unmatched(why: String) -> ObjectFinding {
    ObjectFinding {
        class: ObjectClass::Unmatched,
        segment: None,
        segment_id: None,
        partition: None,
        file: String::new(),
        safe_to_delete: false,
        note: Some(why),
    }
}

/// Why a key's fields disagree with the metadata of the segment it names, if they do.
fn disagreement(f: &KeyFields, tp: &TopicIdPartition, n: &Named) -> Option<String> {
    if f.topic.is_some_and(|t| t != tp.topic) {
        return Some(format!(
            "its topic is {:?}, the metadata's {:?}",
            f.topic.unwrap_or_default(),
            tp.topic
        ));
    }
    if f.topic_id.is_some_and(|t| t != tp.topic_id) {
        return Some(format!(
            "its topic id differs from the metadata's {}",
            tp.topic_id
        ));
    }
    if f.partition.is_some_and(|p| p != tp.partition) {
        return Some(format!(
            "its partition differs from the metadata's {}",
            tp.partition
        ));
    }
    match (f.start_offset, n.start_offset) {
        (Some(a), Some(b)) if a != b => Some(format!(
            "its start offset {a} differs from the metadata's {b}"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
