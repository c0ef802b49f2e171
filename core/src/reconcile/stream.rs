//! The reconciliation of a listing fed a chunk at a time ([`Classifier`]).
//!
//! Owns: every rule of the module doc applied as objects arrive, keeping per segment the ledger
//! names only counts, bytes, which required files were seen and whether the size file matched,
//! and per object only what is not (yet) known live: an object of a finished segment waits until
//! its segment has every required file and a matching size file (then it and the segment's later
//! objects are counted live and dropped), every other object is decided when it arrives. Memory is
//! the ledger's segments plus the objects that are not live, never the listing.
//! Never: I/O, the clock, or a rule outside this module's parent ([`super::reconcile`] is this
//! classifier fed the whole listing at once).

use std::collections::HashMap;

use super::{
    Ledger, Named, Object, ObjectClass, ObjectFinding, Params, SegmentClass, SegmentFinding, Tally,
    deleted, disagreement, unmatched,
};
use crate::cache::hash::UuidHash;
use crate::error::{Error, ErrorKind, Result};
use crate::model::{SegmentState, TopicIdPartition, Uuid};
use crate::reconcile::{KeyMatch, Layout};

/// One object the classifier gives back with its verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Emitted {
    /// Its position in the whole listing (0 for the first object of the first chunk).
    pub ordinal: u32,
    pub object: Object,
    pub finding: ObjectFinding,
}

/// What [`Classifier::finish`] gives: the segment side, the objects that waited, the totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// User partitions, by index (the ledger's, then ones only keys named).
    pub partitions: Vec<TopicIdPartition>,
    /// The segments any record named, by partition and start offset, with the ordinals of their
    /// objects: all of them when live objects are kept; else only those neither live nor
    /// deleted (those are counted in the totals only), so that the answer is bounded by what
    /// needs attention. (An [`Emitted`] object's `segment` indexes all the ledger's segments in
    /// that order.)
    pub segments: Vec<SegmentFinding>,
    /// Objects decided only now (of finished segments that are not live, or all with `keep_live`).
    pub emitted: Vec<Emitted>,
    /// Per (partition index or `None`, class name).
    pub totals: std::collections::BTreeMap<(Option<u32>, &'static str), Tally>,
    /// Indices into `segments` of the segments that need a person.
    pub needs_person: Vec<u32>,
    /// Objects fed in all.
    pub objects: u64,
}

/// What the classifier knows of one segment the ledger names.
#[derive(Clone, Copy, Debug)]
struct Seg {
    state: SegmentState,
    is_deleted: bool,
    kafka_knows: bool,
    covered: bool,
    count: u64,
    bytes: u64,
    /// Bit i: required file i seen.
    present: u64,
    /// 0: size file not seen; 1: seen, size agrees; 2: seen, size differs (key in `mismatch`).
    size_seen: u8,
    /// Known live: every later object of it is counted and dropped.
    live: bool,
}

/// A listing classified a chunk at a time against a ledger (see the module doc). Feed every chunk
/// with [`Classifier::feed`], in listing order, then call [`Classifier::finish`].
#[derive(Debug)]
pub struct Classifier {
    layout: Layout,
    p: Params,
    keep_live: bool,
    partitions: Vec<TopicIdPartition>,
    part_of: HashMap<TopicIdPartition, u32>,
    /// Segment index (by partition, start offset, id) of each named id.
    index: HashMap<Uuid, u32, UuidHash>,
    ids: Vec<Uuid>,
    segs: Vec<Seg>,
    /// Ordinals of the objects of segments that are not live.
    ordinals: HashMap<u32, Vec<u32>>,
    /// Objects of finished segments not yet known live.
    pending: HashMap<u32, Vec<Emitted>>,
    /// (key, size) of a size file whose size differs.
    mismatch: HashMap<u32, (String, u64)>,
    sums: HashMap<(Option<u32>, ObjectClass), Tally, UuidHash>,
    orphan_ids: HashMap<(Option<u32>, Uuid), (), UuidHash>,
    fed: u64,
    matched: u64,
    first_key: Option<String>,
}

impl Classifier {
    /// A classifier of listings against `ledger`. `keep_live`: give back live objects too (for a
    /// whole-listing report). Errors: a negative grace, a layout requiring more than 64 files
    /// (`InvalidArgument`).
    pub fn new(ledger: &Ledger, layout: Layout, p: Params, keep_live: bool) -> Result<Classifier> {
        p.check()?;
        if layout.required_files.len() > 64 {
            return Err(Error::field(
                ErrorKind::InvalidArgument,
                "layout",
                format!(
                    "layout {} requires {} files; at most 64",
                    layout.name,
                    layout.required_files.len()
                ),
            ));
        }
        let partitions = ledger.parts.clone();
        let part_of = partitions
            .iter()
            .enumerate()
            .map(|(i, tp)| (tp.clone(), i as u32))
            .collect();
        // Kafka's state where its cache holds the segment (then it serves it: never deleted
        // here), else the latest record's; and whether the segment is deleted.
        let verdict = |id: Uuid, n: &Named| {
            let cached = ledger
                .store
                .partition_cache(&ledger.parts[n.partition as usize])
                .and_then(|c| c.segment(id))
                .map(|m| m.state);
            match cached {
                Some(s) => (s, false, true),
                None => (n.last_state, deleted(n), false),
            }
        };
        // Finished segments' offset ranges per partition, merged, for the coverage rule.
        let mut finished: HashMap<u32, Vec<(i64, i64)>, UuidHash> = HashMap::default();
        for (id, n) in &ledger.named {
            let (state, is_deleted, _) = verdict(*id, n);
            if state == SegmentState::CopySegmentFinished && !is_deleted {
                if let (Some(s), Some(e)) = (n.start_offset, n.end_offset) {
                    finished.entry(n.partition).or_default().push((s, e));
                }
            }
        }
        for r in finished.values_mut() {
            r.sort_unstable();
            let mut merged: Vec<(i64, i64)> = Vec::with_capacity(r.len());
            for &(s, e) in r.iter() {
                match merged.last_mut() {
                    Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
                    _ => merged.push((s, e)),
                }
            }
            *r = merged;
        }
        let covered = |part: u32, s: i64, e: i64| {
            finished.get(&part).is_some_and(|r| {
                let i = r.partition_point(|x| x.0 <= s);
                i > 0 && r[i - 1].1 >= e
            })
        };
        let mut named: Vec<(&Uuid, &Named)> = ledger.named.iter().collect();
        named.sort_unstable_by_key(|(id, n)| (n.partition, n.start_offset, **id));
        let mut index: HashMap<Uuid, u32, UuidHash> = HashMap::default();
        index.reserve(named.len());
        let mut ids = Vec::with_capacity(named.len());
        let mut segs = Vec::with_capacity(named.len());
        for (i, (id, n)) in named.into_iter().enumerate() {
            let (state, is_deleted, kafka_knows) = verdict(*id, n);
            let is_covered = !is_deleted
                && state == SegmentState::CopySegmentStarted
                && p.now_ms.saturating_sub(n.since_ms) > p.grace_ms
                && match (n.start_offset, n.end_offset) {
                    (Some(s), Some(e)) => covered(n.partition, s, e),
                    _ => false,
                };
            index.insert(*id, i as u32);
            ids.push(*id);
            segs.push(Seg {
                state,
                is_deleted,
                kafka_knows,
                covered: is_covered,
                count: 0,
                bytes: 0,
                present: 0,
                size_seen: 0,
                live: false,
            });
        }
        Ok(Classifier {
            layout,
            p,
            keep_live,
            partitions,
            part_of,
            index,
            ids,
            segs,
            ordinals: HashMap::new(),
            pending: HashMap::new(),
            mismatch: HashMap::new(),
            sums: HashMap::default(),
            orphan_ids: HashMap::default(),
            fed: 0,
            matched: 0,
            first_key: None,
        })
    }

    /// Objects fed so far.
    pub fn fed(&self) -> u64 {
        self.fed
    }

    /// Objects held until their segment's class is known (of finished segments not yet seen
    /// complete).
    pub fn waiting(&self) -> usize {
        self.pending.values().map(Vec::len).sum()
    }

    /// Seconds a segment's latest record came after the listing, less the grace, if it did.
    fn after_listing(&self, n: &Named) -> Option<i64> {
        self.p
            .listing_as_of_ms
            .map(|l| n.since_ms - (l - self.p.grace_ms))
            .filter(|&d| d > 0)
            .map(|d| d / 1000)
    }

    /// The class of a segment, and why, from what was seen of it.
    fn segment_class(&self, ledger: &Ledger, i: u32) -> (SegmentClass, String, Vec<String>) {
        let s = &self.segs[i as usize];
        let n = &ledger.named[&self.ids[i as usize]];
        let missing: Vec<String> = self
            .layout
            .required_files
            .iter()
            .enumerate()
            .filter(|(b, _)| s.present & (1 << b) == 0)
            .map(|(_, f)| f.clone())
            .collect();
        let age = self.p.now_ms.saturating_sub(n.since_ms);
        let after_listing = self.after_listing(n);
        let (class, why) = if s.is_deleted {
            let how = if n.partition_deleted {
                "its partition was deleted"
            } else if s.state == SegmentState::DeleteSegmentFinished {
                "DELETE_SEGMENT_FINISHED"
            } else {
                "its key was tombstoned"
            };
            if s.count == 0 {
                (SegmentClass::Deleted, how.to_owned())
            } else if let Some(after) = after_listing {
                (
                    SegmentClass::Deleted,
                    format!(
                        "{how} {after} s after the listing less the grace: its {} object(s) there may be gone since",
                        s.count
                    ),
                )
            } else {
                (
                    SegmentClass::Leaked,
                    format!("{how}, yet {} object(s) remain", s.count),
                )
            }
        } else {
            match s.state {
                SegmentState::CopySegmentFinished => {
                    if let Some(after) =
                        after_listing.filter(|_| s.count == 0 || !missing.is_empty())
                    {
                        (
                            SegmentClass::CopyInProgress,
                            format!(
                                "COPY_SEGMENT_FINISHED {after} s after the listing less the grace: the listing may predate its objects"
                            ),
                        )
                    } else if s.count == 0 {
                        (
                            SegmentClass::Dangling,
                            "COPY_SEGMENT_FINISHED, no object in the store".to_owned(),
                        )
                    } else if !missing.is_empty() {
                        (
                            SegmentClass::Dangling,
                            format!("COPY_SEGMENT_FINISHED, missing {}", missing.join(", ")),
                        )
                    } else if let Some((key, got)) = self.mismatch.get(&i) {
                        (
                            SegmentClass::SizeMismatch,
                            format!(
                                "{key} holds {got} bytes, segmentSizeInBytes is {}",
                                n.segment_size_in_bytes.unwrap_or_default()
                            ),
                        )
                    } else {
                        (SegmentClass::Live, String::new())
                    }
                }
                SegmentState::CopySegmentStarted if age > self.p.grace_ms => (
                    SegmentClass::AbandonedUpload,
                    format!(
                        "COPY_SEGMENT_STARTED {} s ago, {} object(s){}",
                        age / 1000,
                        s.count,
                        if s.covered {
                            ", its offsets re-uploaded by finished segments"
                        } else {
                            ", offsets not covered by finished segments"
                        }
                    ),
                ),
                SegmentState::CopySegmentStarted => (
                    SegmentClass::CopyInProgress,
                    format!(
                        "COPY_SEGMENT_STARTED {} s ago, within the grace",
                        age / 1000
                    ),
                ),
                SegmentState::DeleteSegmentStarted if age > self.p.grace_ms => (
                    SegmentClass::StuckDeletion,
                    format!(
                        "DELETE_SEGMENT_STARTED {} s ago, {} object(s) left",
                        age / 1000,
                        s.count
                    ),
                ),
                SegmentState::DeleteSegmentStarted => (
                    SegmentClass::DeletionInProgress,
                    format!(
                        "DELETE_SEGMENT_STARTED {} s ago, within the grace",
                        age / 1000
                    ),
                ),
                // Kafka's cache drops a segment at DELETE_SEGMENT_FINISHED, so `deleted` took it.
                SegmentState::DeleteSegmentFinished => {
                    (SegmentClass::Deleted, "DELETE_SEGMENT_FINISHED".to_owned())
                }
            }
        };
        (class, why, missing)
    }

    /// Whether a segment's class is settled before the listing ends (every class but a finished
    /// segment's, which waits for its files and size file).
    fn settled_early(s: &Seg) -> bool {
        s.is_deleted || s.state != SegmentState::CopySegmentFinished
    }

    /// The plan for one object whose class is known: safe to delete, or why not yet.
    fn plan(&self, e: &mut Emitted) {
        let o = &mut e.finding;
        let eligible = match o.class {
            ObjectClass::Orphaned => true,
            ObjectClass::Segment(SegmentClass::Leaked) => true,
            ObjectClass::Segment(SegmentClass::AbandonedUpload) => {
                o.segment.is_some_and(|s| self.segs[s as usize].covered)
            }
            _ => false,
        };
        if !eligible {
            return;
        }
        let m = e.object.last_modified_ms;
        let age = self.p.now_ms.saturating_sub(m);
        let after_snapshot = self
            .p
            .metadata_as_of_ms
            .filter(|&as_of| as_of.saturating_sub(m) <= self.p.grace_ms);
        if let Some(as_of) = after_snapshot {
            o.note = Some(format!(
                "last modified {} s after the metadata's newest record less the grace: the snapshot may not know its upload",
                (m - as_of + self.p.grace_ms) / 1000
            ));
        } else if age > self.p.grace_ms {
            o.safe_to_delete = true;
        } else {
            o.note = Some(format!(
                "last modified {} s ago, within the grace",
                age / 1000
            ));
        }
    }

    fn tally(&mut self, partition: Option<u32>, class: ObjectClass, size: u64) {
        let t = self.sums.entry((partition, class)).or_default();
        t.objects += 1;
        t.object_bytes += size;
    }

    /// Classifies the next objects of the listing. Returns those already known not live (or
    /// all known ones with `keep_live`); objects of finished segments wait for
    /// [`Classifier::finish`] unless their segment is known live by then.
    /// Errors: more than 2^32 objects in all (`InvalidArgument`).
    pub fn feed(&mut self, ledger: &Ledger, chunk: Vec<Object>) -> Result<Vec<Emitted>> {
        let mut out = Vec::new();
        for object in chunk {
            let ordinal = u32::try_from(self.fed).map_err(|_| {
                Error::field(
                    ErrorKind::InvalidArgument,
                    "listing",
                    "more than 4,294,967,295 objects in one reconciliation".to_owned(),
                )
            })?;
            self.fed += 1;
            if self.first_key.is_none() {
                self.first_key = Some(object.key.clone());
            }
            let why = match self.layout.match_key(&object.key) {
                KeyMatch::Matched(f) => Ok(f),
                KeyMatch::NoMatch => Err("no template of the layout matches the key".to_owned()),
                KeyMatch::Ambiguous(t) => Err(format!(
                    "template {t:?} matches the key in more than one way"
                )),
            };
            let f = match why {
                Ok(f) => f,
                Err(why) => {
                    self.tally(None, ObjectClass::Unmatched, object.size);
                    out.push(Emitted {
                        ordinal,
                        object,
                        finding: unmatched(why),
                    });
                    continue;
                }
            };
            self.matched += 1;
            let seg = self.index.get(&f.segment_id).copied();
            let partition = match seg {
                Some(_) => {
                    let n = &ledger.named[&f.segment_id];
                    let tp = &ledger.parts[n.partition as usize];
                    if let Some(why) = disagreement(&f, tp, n) {
                        let finding =
                            unmatched(format!("names segment {} but {why}", f.segment_id));
                        self.tally(None, ObjectClass::Unmatched, object.size);
                        out.push(Emitted {
                            ordinal,
                            object,
                            finding,
                        });
                        continue;
                    }
                    Some(n.partition)
                }
                None => match (f.topic, f.topic_id, f.partition) {
                    (Some(t), Some(id), Some(p)) => {
                        let tp = TopicIdPartition {
                            topic_id: id,
                            topic: t.to_owned(),
                            partition: p,
                        };
                        let next = self.partitions.len() as u32;
                        let parts = &mut self.partitions;
                        Some(*self.part_of.entry(tp.clone()).or_insert_with(|| {
                            parts.push(tp);
                            next
                        }))
                    }
                    _ => None,
                },
            };
            let segment_id = f.segment_id;
            let file = f.file.to_owned();
            let Some(si) = seg else {
                let mut e = Emitted {
                    ordinal,
                    finding: ObjectFinding {
                        class: ObjectClass::Orphaned,
                        segment: None,
                        segment_id: Some(segment_id),
                        partition,
                        file,
                        safe_to_delete: false,
                        note: None,
                    },
                    object,
                };
                let new_segment = self
                    .orphan_ids
                    .insert((partition, segment_id), ())
                    .is_none();
                let t = self
                    .sums
                    .entry((partition, ObjectClass::Orphaned))
                    .or_default();
                t.objects += 1;
                t.object_bytes += e.object.size;
                t.segments += u64::from(new_segment);
                self.plan(&mut e);
                out.push(e);
                continue;
            };
            // An object of a named segment.
            let want = ledger.named[&segment_id]
                .segment_size_in_bytes
                .map(|s| s as u64);
            let s = &mut self.segs[si as usize];
            s.count += 1;
            s.bytes += object.size;
            if let Some(b) = self.layout.required_files.iter().position(|r| *r == file) {
                s.present |= 1 << b;
            }
            if s.size_seen == 0 && self.layout.size_file.as_deref() == Some(file.as_str()) {
                match want {
                    Some(w) if w != object.size => {
                        s.size_seen = 2;
                        self.mismatch.insert(si, (object.key.clone(), object.size));
                    }
                    _ => s.size_seen = 1,
                }
            }
            let e = Emitted {
                ordinal,
                finding: ObjectFinding {
                    class: ObjectClass::Segment(SegmentClass::Live),
                    segment: Some(si),
                    segment_id: Some(segment_id),
                    partition,
                    file,
                    safe_to_delete: false,
                    note: None,
                },
                object,
            };
            let s = self.segs[si as usize];
            if s.live {
                self.tally(
                    partition,
                    ObjectClass::Segment(SegmentClass::Live),
                    e.object.size,
                );
                if self.keep_live {
                    self.ordinals.entry(si).or_default().push(ordinal);
                    out.push(e);
                }
            } else if Self::settled_early(&s) {
                let (class, _, _) = self.segment_class(ledger, si);
                let mut e = e;
                e.finding.class = ObjectClass::Segment(class);
                self.tally(partition, e.finding.class, e.object.size);
                self.ordinals.entry(si).or_default().push(ordinal);
                self.plan(&mut e);
                out.push(e);
            } else {
                self.pending.entry(si).or_default().push(e);
                let all = if self.layout.required_files.len() == 64 {
                    u64::MAX
                } else {
                    (1u64 << self.layout.required_files.len()) - 1
                };
                let sized = self.layout.size_file.is_none() || want.is_none() || s.size_seen == 1;
                if s.present == all && sized {
                    self.segs[si as usize].live = true;
                    for e in self.pending.remove(&si).unwrap_or_default() {
                        self.tally(e.finding.partition, e.finding.class, e.object.size);
                        if self.keep_live {
                            self.ordinals.entry(si).or_default().push(e.ordinal);
                            out.push(e);
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// The segment side once the whole listing was fed: every segment's class, the objects that
    /// waited for theirs, the totals and the segments that need a person.
    /// Errors: a non-empty listing no key of which the layout matches (`LayoutMismatch`).
    pub fn finish(mut self, ledger: &Ledger) -> Result<Finished> {
        if self.matched == 0 && self.fed > 0 {
            let templates: Vec<&str> = self
                .layout
                .templates
                .iter()
                .map(|t| t.text.as_str())
                .collect();
            return Err(Error::field(
                ErrorKind::LayoutMismatch,
                "layout",
                format!(
                    "layout {} ({}) matches none of the {} listed objects (first key: {:?}): \
                     wrong layout or prefix?",
                    self.layout.name,
                    templates.join(" | "),
                    self.fed,
                    self.first_key.as_deref().unwrap_or_default()
                ),
            ));
        }
        let mut emitted = Vec::new();
        let mut segments = Vec::with_capacity(self.segs.len());
        let mut needs_person = Vec::new();
        for i in 0..self.segs.len() as u32 {
            let (class, why, missing) = self.segment_class(ledger, i);
            let mut pending = self.pending.remove(&i).unwrap_or_default();
            pending.sort_unstable_by_key(|e| e.ordinal);
            for mut e in pending {
                e.finding.class = ObjectClass::Segment(class);
                self.tally(e.finding.partition, e.finding.class, e.object.size);
                self.plan(&mut e);
                if class != SegmentClass::Live || self.keep_live {
                    self.ordinals.entry(i).or_default().push(e.ordinal);
                    emitted.push(e);
                }
            }
            let s = self.segs[i as usize];
            let n = &ledger.named[&self.ids[i as usize]];
            let mut objects = self.ordinals.remove(&i).unwrap_or_default();
            objects.sort_unstable();
            let person = match class {
                SegmentClass::Dangling
                | SegmentClass::StuckDeletion
                | SegmentClass::SizeMismatch => true,
                SegmentClass::AbandonedUpload => !s.covered,
                _ => false,
            };
            if person {
                needs_person.push(segments.len() as u32);
            }
            let t = self
                .sums
                .entry((Some(n.partition), ObjectClass::Segment(class)))
                .or_default();
            t.segments += 1;
            t.segment_bytes += n.segment_size_in_bytes.map_or(0, |b| b.max(0) as u64);
            if !self.keep_live && matches!(class, SegmentClass::Live | SegmentClass::Deleted) {
                continue; // counted in the totals; nothing to act on
            }
            segments.push(SegmentFinding {
                id: self.ids[i as usize],
                partition: n.partition,
                class,
                state: s.state,
                since_ms: n.since_ms,
                start_offset: n.start_offset,
                end_offset: n.end_offset,
                segment_size_in_bytes: n.segment_size_in_bytes,
                kafka_knows: s.kafka_knows,
                objects,
                object_bytes: s.bytes,
                missing_files: if matches!(
                    class,
                    SegmentClass::Dangling | SegmentClass::AbandonedUpload
                ) {
                    missing
                } else {
                    Vec::new()
                },
                covered: s.covered,
                why,
            });
        }
        let totals = self
            .sums
            .into_iter()
            .map(|((p, c), t)| ((p, c.name()), t))
            .collect();
        Ok(Finished {
            partitions: self.partitions,
            segments,
            emitted,
            totals,
            needs_person,
            objects: self.fed,
        })
    }
}
