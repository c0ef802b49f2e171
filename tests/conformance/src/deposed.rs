//! The second family of `rlmeta-conformance --plan-logs`: a deposed leader's late backfill
//! (issue 31, item 9), for the interop harness's `PlanProperty` to judge with Kafka 4.4.0's own
//! store and cleaner.
//!
//! Each case is one partition with a history written before KIP-1266 (null keys, version 0: a
//! few segments copied, the last one perhaps left at COPY_SEGMENT_STARTED, the oldest perhaps
//! deleted). Its leader at epoch 5 plans the backfill and sends only a part of it before it is
//! deposed; another part is in flight and lands late, between any two records of the new leader
//! (epoch 9), which backfills from its own broker's store ([`Store::held`], as the plugin holds
//! it) and then deletes the oldest segments by retention. The new leader then runs its backfill
//! checks until they plan nothing, as the plugin's backfill thread does every check interval,
//! either in the same store or in one rebuilt by a restart (from the whole log, or from the log
//! compacted by the core's cleaner model, which `cleaner-diff-test` checks against Kafka's).
//!
//! The script says what the log must mean: the history's segments in their states, without the
//! ones deleted. The harness replays the whole log in Kafka's store, and from `compactFrom` on
//! (once the new leader's backfill is in, the point where an operator may make the topic
//! compacted) cleans it with Kafka's cleaner after every record and compares every cut with the
//! whole prefix, but for the cuts between the late block's landing and the leader's checks (the
//! window the plugin closes within one `backfill.check.ms`, long before the cleaner may touch
//! records younger than `min.compaction.lag.ms`). The rule under test is the core's (the planner's backfill and its re-deletion of
//! a segment a late record brought back); this file only drives it. Never: a replay of its own
//! to decide what is right.

use std::collections::BTreeMap;

use rlmeta::cache::Store;
use rlmeta::compaction::{Log, TopicConfig};
use rlmeta::feature::MetadataLevel;
use rlmeta::json::to_hex;
use rlmeta::model::{SegmentState, TopicIdPartition, Uuid};
use rlmeta::plan::{Event, SegmentEvent};
use rlmeta::testing::stock;
use serde_json::{Value as Json, json};

use crate::planlogs::v0;
use crate::sample::Rng;

type Rec = (Option<Vec<u8>>, Option<Vec<u8>>);

const OLD_EPOCH: i32 = 5;
const NEW_EPOCH: i32 = 9;

fn planned(plan: Vec<rlmeta::plan::Planned>) -> Vec<Rec> {
    plan.into_iter()
        .map(|p| (Some(p.key.format().into_bytes()), p.value))
        .collect()
}

fn replay_held(tp: &TopicIdPartition, log: &[Rec]) -> Store {
    let mut s = Store::held();
    s.load_partition(tp);
    for (offset, (k, v)) in log.iter().enumerate() {
        s.apply(offset as i64, k.as_deref(), v.as_deref());
    }
    s.mark_initialized(tp);
    s
}

/// The new leader: its broker's store, and the log it appends to (its own records and, once,
/// the deposed leader's late ones, which its store applies as it reads them).
struct Leader<'a> {
    tp: TopicIdPartition,
    store: Store,
    log: Vec<Rec>,
    late: &'a [Rec],
    land_after: usize,
    written: usize,
    landed: bool,
    /// Where the late block landed in the log.
    landed_at: usize,
}

impl Leader<'_> {
    fn append(&mut self, recs: &[Rec]) {
        for (k, v) in recs {
            self.store
                .apply(self.log.len() as i64, k.as_deref(), v.as_deref());
            self.log.push((k.clone(), v.clone()));
        }
    }

    /// Writes its own records one at a time; the late block lands after `land_after` of them.
    fn write(&mut self, recs: Vec<Rec>) {
        for r in recs {
            self.land_if_due();
            self.append(&[r]);
            self.written += 1;
        }
    }

    fn land_if_due(&mut self) {
        if !self.landed && self.written >= self.land_after {
            let late = self.late;
            self.landed_at = self.log.len();
            self.append(late);
            self.landed = true;
        }
    }

    fn event(&self, id: Uuid) -> SegmentEvent {
        SegmentEvent {
            partition: self.tp.clone(),
            segment_id: id,
            broker_id: 2,
            event_timestamp_ms: 1_000 + self.log.len() as i64,
            custom_metadata: None,
            broker_leader_epoch: NEW_EPOCH,
        }
    }
}

pub(crate) fn one(seed: u64, i: u64) -> Result<Json, String> {
    let mut rng =
        Rng(seed.wrapping_mul(0xd6e8_feb8_6659_fd93) ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let tp = TopicIdPartition {
        topic_id: Uuid::new(0x5566_7788, i as i64),
        topic: "orders".into(),
        partition: 3,
    };
    let fail = |what: &str, e: rlmeta::Error| format!("deposed case {i}: {what}: {e}");
    // The history before KIP-1266.
    let n = 2 + rng.below(5) as i64;
    let mut head: Vec<Rec> = Vec::new();
    let mut meant: BTreeMap<Uuid, SegmentState> = BTreeMap::new();
    let mut data_deleted: BTreeMap<Uuid, usize> = BTreeMap::new();
    let mut epoch = 0;
    for s in 1..=n {
        let id = Uuid::new(i as i64 + 1, s);
        epoch += rng.below(2) as i32;
        let started =
            stock::started(&tp, id, (s - 1) * 100, epoch).map_err(|e| fail("a stock record", e))?;
        head.push((None, Some(started)));
        if s == n && rng.below(4) == 0 {
            meant.insert(id, SegmentState::CopySegmentStarted);
            continue;
        }
        let finished = stock::update(&tp, id, SegmentState::CopySegmentFinished)
            .map_err(|e| fail("a stock record", e))?;
        head.push((None, Some(finished)));
        meant.insert(id, SegmentState::CopySegmentFinished);
    }
    if rng.below(3) == 0 {
        let oldest = Uuid::new(i as i64 + 1, 1);
        for state in [
            SegmentState::DeleteSegmentStarted,
            SegmentState::DeleteSegmentFinished,
        ] {
            let v = stock::update(&tp, oldest, state).map_err(|e| fail("a stock record", e))?;
            head.push((None, Some(v)));
        }
        data_deleted.insert(oldest, head.len() - 1);
        meant.remove(&oldest);
    }
    // The deposed leader's backfill: `sent` records of it landed while it led, the next ones
    // are in flight, the rest never sent.
    let zombie = planned(
        replay_held(&tp, &head)
            .plan_backfill(&tp, OLD_EPOCH, MetadataLevel::V1)
            .map_err(|e| fail("the deposed leader's backfill", e))?,
    );
    if zombie.is_empty() {
        return Err(format!("deposed case {i}: the history needs no backfill"));
    }
    let sent = rng.below(zombie.len() as u64) as usize;
    let late = sent + 1 + rng.below((zombie.len() - sent) as u64) as usize;
    let mut log = head.clone();
    log.extend(zombie[..sent].iter().cloned());
    let mut leader = Leader {
        store: replay_held(&tp, &log),
        tp: tp.clone(),
        log,
        late: &zombie[sent..late],
        land_after: rng.below(25) as usize,
        written: 0,
        landed: false,
        landed_at: 0,
    };
    let backfill = leader
        .store
        .plan_backfill(&tp, NEW_EPOCH, MetadataLevel::V1)
        .map_err(|e| fail("the new leader's backfill", e))?;
    leader.write(planned(backfill));
    let compact_from = leader.log.len();
    // Retention: the oldest finished segments, each deletion planned against the store as it is.
    let finished: Vec<Uuid> = meant
        .iter()
        .filter(|(_, s)| **s == SegmentState::CopySegmentFinished)
        .map(|(id, _)| *id)
        .collect();
    let deletions = rng.below(finished.len() as u64 + 1) as usize;
    let first_deletion = leader.log.len();
    for &id in &finished[..deletions] {
        for finish in [false, true] {
            let e = leader.event(id);
            let e = if finish {
                Event::DeleteFinished(e)
            } else {
                Event::DeleteStarted(e)
            };
            let plan = leader
                .store
                .plan(&e, MetadataLevel::V1)
                .map_err(|e| fail("a deletion", e))?;
            if finish {
                // its first record marks the remote data gone; the late block may land first
                leader.land_if_due();
                data_deleted.insert(id, leader.log.len());
            }
            leader.write(planned(plan));
        }
        meant.remove(&id);
    }
    if !leader.landed {
        leader.land_after = 0;
        leader.land_if_due();
    }
    // The leader's backfill checks, in its running store or after a restart; a restart may
    // find the log compacted already (the cleaner ran before the check), unless the late block
    // brought back a segment deleted after it landed: a store rebuilt past its tombstones
    // cannot know it was deleted (Kafka's expiration deletes it again; not judged here).
    let restarted = match rng.below(3) {
        0 => "no",
        1 => "replaying the whole log",
        _ if deletions == 0 || leader.landed_at < first_deletion => "replaying the log compacted",
        _ => "replaying the whole log",
    };
    if restarted == "replaying the whole log" {
        leader.store = replay_held(&tp, &leader.log);
    } else if restarted == "replaying the log compacted" {
        let mut log = Log::new(TopicConfig::compacted());
        for (i, (k, v)) in leader.log.iter().enumerate() {
            log.append(1_000 + i as i64, k.clone(), v.clone());
        }
        log.roll();
        log.clean(1_000 + leader.log.len() as i64);
        let mut s = Store::held();
        s.load_partition(&tp);
        for r in log.records() {
            s.apply(r.offset, r.key.as_deref(), r.value.as_deref());
        }
        s.mark_initialized(&tp);
        leader.store = s;
    }
    let mut checks = 0;
    loop {
        let plan = leader
            .store
            .plan_backfill(&tp, NEW_EPOCH, MetadataLevel::V1)
            .map_err(|e| fail("the leader's backfill check", e))?;
        if plan.is_empty() {
            break;
        }
        checks += 1;
        if checks > 16 {
            return Err(format!(
                "deposed case {i}: the leader's checks never settle"
            ));
        }
        let recs = planned(plan);
        leader.append(&recs);
    }
    let mut records = Vec::with_capacity(leader.log.len());
    for (k, v) in &leader.log {
        let key = k
            .as_deref()
            .map_or(Json::Null, |k| Json::from(String::from_utf8_lossy(k)));
        let (value, value0) = match v {
            Some(v) => (Json::from(to_hex(v)), Json::from(to_hex(&v0(v)?))),
            None => (Json::Null, Json::Null),
        };
        records.push(json!([key, value, value0, 0]));
    }
    Ok(json!({
        "kind": "planLog",
        "name": format!("deposed-leader-{seed}-{i}"),
        "featureLevel": MetadataLevel::V1.level(),
        "compactFrom": compact_from,
        // from the late block's landing to the leader's checks, a compacted log may answer
        // otherwise (the plugin checks every backfill.check.ms; the cleaner waits
        // min.compaction.lag.ms): those cuts are cleaned but not compared
        "unsettled": [leader.landed_at, leader.log.len() - 1],
        "partition": {"topicId": tp.topic_id.to_base64(), "topic": tp.topic, "partition": tp.partition},
        "records": records,
        "dataDeleted": data_deleted.iter().map(|(id, at)| json!([id.to_base64(), at])).collect::<Vec<_>>(),
        "live": meant.iter().map(|(id, s)| json!([id.to_base64(), s.id()])).collect::<Vec<_>>(),
        "partitionDeleted": false,
        "events": {"sent": sent, "late": late - sent, "deletions": deletions, "restarted": restarted, "checks": checks},
        "refused": 0,
    }))
}
