//! Realistic `__remote_log_metadata` histories of many user partitions, for the measurements of
//! what a broker's store holds per live segment (`make bench-store-memory`, the memory-bound
//! test): segments copied, some uploads failed (cleaned up, or left behind by a leader change
//! and deleted later by retention), one to three leader epochs a segment, leadership changes,
//! and the oldest segments deleted by retention so that rows are freed and reused.
//!
//! Owns: the events of each partition's life and their order in the log (partitions
//! interleaved, as in a shared metadata partition). Every record is written by rlmeta's own
//! planner ([`Store::plan`]) from a writer's store, as the plugin writes it: at level 0 with
//! null keys (the stock value format), at level 2 under KIP-1266 keys, or migrated (a level-0
//! history, the planner's backfill, then level 2); and replaying it as a broker does
//! ([`History::replay_held`]). Never: any rule of the store. Not part of the supported API.

use crate::cache::{SegmentMetadata, Store};
use crate::error::{Error, ErrorKind, Result};
use crate::feature::MetadataLevel;
use crate::model::{SegmentState, TopicIdPartition, Uuid};
use crate::plan::{Event, SegmentEvent};

/// How a history's records are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writing {
    /// Level 0: null keys, version-0 values (what a stock broker writes).
    Stock,
    /// Level 2: KIP-1266 keys, version-1 values, tombstones after each deletion.
    Keyed,
    /// Level 0 for the first half of each partition's life, then the planner's backfill and
    /// level 2: a partition with a null-key history, whose deletions a broker's store
    /// remembers from then on.
    Migrated,
}

/// The size and kind of a history.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// User partitions the broker hosts.
    pub hosted: u32,
    /// User partitions of the same metadata partition it does not host.
    pub unhosted: u32,
    /// Finished segments each partition keeps at the end (retention deletes the older ones).
    pub live: u32,
    /// Segments uploaded per partition over its life, beyond `live` (all deleted by the end).
    pub deleted: u32,
    pub writing: Writing,
    pub seed: u64,
}

/// A record: its key and value, either null.
pub type KeyValue = (Option<Vec<u8>>, Option<Vec<u8>>);

/// A history: `(key, value)` records in log order (offset = position), and the partitions a
/// broker hosts.
pub struct History {
    pub records: Vec<KeyValue>,
    pub hosted: Vec<TopicIdPartition>,
}

impl History {
    /// The history replayed as a broker's store holds it: [`Store::held`] with every hosted
    /// partition loaded, each record at its offset, then every hosted partition initialized.
    pub fn replay_held(&self) -> Store {
        let mut store = Store::held();
        for tp in &self.hosted {
            store.load_partition(tp);
        }
        for (offset, (k, v)) in self.records.iter().enumerate() {
            store.apply(offset as i64, k.as_deref(), v.as_deref());
        }
        for tp in &self.hosted {
            store.mark_initialized(tp);
        }
        store
    }

    /// Live segments of the hosted partitions in `store`.
    pub fn live_segments(&self, store: &Store) -> usize {
        self.hosted
            .iter()
            .map(|tp| store.segments(tp).map_or(0, |s| s.len()))
            .sum()
    }
}

/// splitmix64: a seeded sequence, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// True one time in `n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.next() % n == 0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One partition's life, as its leader sees it.
struct Life {
    tp: TopicIdPartition,
    epoch: i32,
    broker: i32,
    next_offset: i64,
    next_id: i64,
    /// Epoch changes inside the data not yet uploaded: the segment in progress has them.
    pending_epochs: Vec<(i32, i64)>,
    /// Live segments in upload order: (id, end offset, finished).
    live: std::collections::VecDeque<(Uuid, i64, bool)>,
    uploaded: u32,
}

struct Writer {
    store: Store,
    records: Vec<KeyValue>,
    clock: i64,
}

impl Writer {
    /// Plans `event` at `level` and writes what the planner says (null keys at level 0).
    fn write(&mut self, event: &Event, level: MetadataLevel) -> Result<()> {
        self.clock += 1;
        for p in self.store.plan(event, level)? {
            self.put(&p.key, p.value, level)?;
        }
        Ok(())
    }

    fn put(
        &mut self,
        key: &crate::key::RecordKey,
        value: Option<Vec<u8>>,
        level: MetadataLevel,
    ) -> Result<()> {
        let key = (level != MetadataLevel::V0).then(|| key.format().into_bytes());
        let offset = self.records.len() as i64;
        match self.store.apply(offset, key.as_deref(), value.as_deref()) {
            crate::cache::Applied::Applied | crate::cache::Applied::Skipped(_) => {}
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidState,
                    format!("the writer's own record did not apply: {other:?}"),
                ));
            }
        }
        self.records.push((key, value));
        Ok(())
    }
}

impl Life {
    fn event(&self, id: Uuid, clock: i64) -> SegmentEvent {
        SegmentEvent {
            partition: self.tp.clone(),
            segment_id: id,
            broker_id: self.broker,
            event_timestamp_ms: 1_700_000_000_000 + clock,
            custom_metadata: None,
            broker_leader_epoch: self.epoch,
        }
    }

    fn new_id(&mut self, p: u32) -> Uuid {
        self.next_id += 1;
        let hi = (i64::from(p) << 32) | self.next_id;
        Uuid::new(hi, hi.wrapping_mul(0x9e37_79b9_7f4a_7c15u64 as i64) | 1)
    }

    fn copy_started(
        &mut self,
        w: &mut Writer,
        id: Uuid,
        start: i64,
        end: i64,
        level: MetadataLevel,
    ) -> Result<()> {
        let mut leader_epochs: crate::model::LeaderEpochs = Default::default();
        for &e in &self.pending_epochs {
            leader_epochs.push(e);
        }
        let segment = SegmentMetadata {
            id,
            start_offset: start,
            end_offset: end,
            broker_id: self.broker,
            max_timestamp_ms: 1_700_000_000_000 + w.clock,
            event_timestamp_ms: 1_700_000_000_000 + w.clock,
            leader_epochs,
            segment_size_in_bytes: 1 << 30,
            custom_metadata: None,
            state: SegmentState::CopySegmentStarted,
            txn_index_empty: true,
            broker_leader_epoch: self.epoch,
        };
        w.write(
            &Event::CopyStarted {
                partition: self.tp.clone(),
                segment,
            },
            level,
        )
    }

    fn update(
        &self,
        w: &mut Writer,
        id: Uuid,
        state: SegmentState,
        level: MetadataLevel,
    ) -> Result<()> {
        let e = self.event(id, w.clock);
        let event = match state {
            SegmentState::CopySegmentFinished => Event::CopyFinished(e),
            SegmentState::DeleteSegmentStarted => Event::DeleteStarted(e),
            _ => Event::DeleteFinished(e),
        };
        w.write(&event, level)
    }

    fn delete(&self, w: &mut Writer, id: Uuid, level: MetadataLevel) -> Result<()> {
        self.update(w, id, SegmentState::DeleteSegmentStarted, level)?;
        self.update(w, id, SegmentState::DeleteSegmentFinished, level)
    }

    fn leader_change(&mut self, at: i64) {
        self.epoch += 1;
        self.broker = (self.broker + 1) % 3;
        self.pending_epochs.push((self.epoch, at));
    }

    /// One step of the partition's life: a segment uploaded (perhaps after a failed attempt),
    /// then retention.
    fn step(
        &mut self,
        w: &mut Writer,
        rng: &mut Rng,
        p: u32,
        keep: u32,
        level: MetadataLevel,
    ) -> Result<()> {
        let start = self.next_offset;
        let len = 50_000 + rng.below(100_000) as i64;
        let end = start + len - 1;
        // Leadership changes inside this segment's data: one segment in 8 has a second epoch,
        // one in 64 a third.
        let mut changes = u32::from(rng.one_in(8));
        changes += u32::from(changes == 1 && rng.one_in(8));
        for c in 0..changes {
            self.leader_change(start + (len * i64::from(c + 1)) / 3);
        }
        if rng.one_in(20) {
            // A failed upload: cleaned up by the same leader, or (one in three) left behind
            // when leadership moves before the retry, then deleted by retention later.
            let failed = self.new_id(p);
            self.copy_started(w, failed, start, end, level)?;
            if rng.one_in(3) {
                self.live.push_back((failed, end, false));
                self.epoch += 1;
                self.broker = (self.broker + 1) % 3;
            } else {
                self.delete(w, failed, level)?;
            }
        }
        let id = self.new_id(p);
        self.copy_started(w, id, start, end, level)?;
        self.update(w, id, SegmentState::CopySegmentFinished, level)?;
        self.live.push_back((id, end, true));
        self.uploaded += 1;
        self.next_offset = end + 1;
        self.pending_epochs = vec![(self.epoch, self.next_offset)];
        // Retention: the oldest segments beyond `keep` finished ones (and failed attempts left
        // among them) are deleted, oldest first.
        while self.live.iter().filter(|s| s.2).count() > keep as usize {
            if let Some((old, _, _)) = self.live.pop_front() {
                self.delete(w, old, level)?;
            }
        }
        Ok(())
    }
}

fn partition(p: u32) -> TopicIdPartition {
    let topic = p / 10;
    TopicIdPartition {
        topic_id: Uuid::new(
            0x0005_ca1e_0000 + i64::from(topic),
            0x7edc_ba98_7654_3210 ^ i64::from(topic),
        ),
        topic: format!("tiered-{topic:04}"),
        partition: (p % 10) as i32,
    }
}

/// The history of `shape`: every partition (hosted and not) lives `live + deleted` uploads,
/// one step of every partition after another.
pub fn history(shape: &Shape) -> Result<History> {
    let mut rng = Rng(shape.seed);
    let total = shape.hosted + shape.unhosted;
    let mut lives: Vec<Life> = (0..total)
        .map(|p| Life {
            tp: partition(p),
            epoch: 0,
            broker: (p % 3) as i32,
            next_offset: 0,
            next_id: 0,
            pending_epochs: vec![(0, 0)],
            live: Default::default(),
            uploaded: 0,
        })
        .collect();
    let mut w = Writer {
        store: Store::new(),
        records: Vec::new(),
        clock: 0,
    };
    let steps = shape.live + shape.deleted;
    let migrate_at = steps / 2;
    for step in 0..steps {
        for (p, life) in lives.iter_mut().enumerate() {
            let level = match shape.writing {
                Writing::Stock => MetadataLevel::V0,
                Writing::Keyed => MetadataLevel::V2,
                Writing::Migrated if step < migrate_at => MetadataLevel::V0,
                Writing::Migrated => MetadataLevel::V2,
            };
            if shape.writing == Writing::Migrated && step == migrate_at {
                // The new level's backfill: the null-key history written again under keys.
                let planned = w.store.plan_backfill(&life.tp, life.epoch, level)?;
                for pl in planned {
                    w.put(&pl.key, pl.value, level)?;
                }
            }
            life.step(&mut w, &mut rng, p as u32, shape.live, level)?;
        }
    }
    Ok(History {
        records: w.records,
        hosted: (0..shape.hosted).map(partition).collect(),
    })
}
