//! How `__remote_log_metadata` grows over months for an upload rate: append-only (level 0)
//! against compacted (level 2), with the records the planner really writes.
//!
//! Owns: a synthetic but honest workload (segments of a fixed size uploaded evenly over each
//! day across user partitions, deleted once older than the tiered topics' retention), every
//! event planned by [`crate::cache::Store::plan`] at level 0 and at level 2, the level-0 log
//! kept whole (`cleanup.policy=delete`, `retention.ms=-1`) and the level-2 log cleaned daily by
//! the in-memory cleaner with the KIP's compacted configs. Counts are records and key+value
//! bytes (no batch or record framing). Never: I/O, a clock (days are simulated).

use crate::cache::{SegmentMetadata, Store};
use crate::compaction::{CleanupPolicy, Log, TopicConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::feature::MetadataLevel;
use crate::model::{SegmentState, TopicIdPartition, Uuid};
use crate::plan::{Event, Planned, SegmentEvent};

const DAY_MS: i64 = 86_400_000;
/// Cap on simulated segment uploads, so that a projection stays interactive.
pub const MAX_SEGMENTS: u64 = 2_000_000;

/// What to project.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrowthParams {
    pub upload_bytes_per_day: u64,
    pub segment_bytes: u64,
    /// How long tiered topics keep a remote segment; -1 keeps every segment forever.
    pub tiered_retention_ms: i64,
    pub user_partitions: u32,
    pub days: u32,
    /// One point every this many days (and one at the last day).
    pub sample_every_days: u32,
}

/// The size of both logs at the end of a day.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GrowthPoint {
    pub day: u32,
    pub live_segments: u64,
    pub append_only_records: u64,
    pub append_only_bytes: u64,
    pub compacted_records: u64,
    pub compacted_bytes: u64,
}

fn size(p: &Planned) -> u64 {
    (p.key.format().len() + p.value.as_ref().map_or(0, Vec::len)) as u64
}

/// The projection, one point per sample.
pub fn project_growth(params: &GrowthParams) -> Result<Vec<GrowthPoint>> {
    let bad = |why: &str| Err(Error::new(ErrorKind::InvalidArgument, why.to_owned()));
    if params.segment_bytes == 0 || params.segment_bytes > i32::MAX as u64 {
        return bad("segment size must be between 1 byte and 2 GiB");
    }
    if params.user_partitions == 0 || params.sample_every_days == 0 {
        return bad("user partitions and the sample interval must be positive");
    }
    let per_day = params.upload_bytes_per_day / params.segment_bytes;
    if per_day.saturating_mul(u64::from(params.days)) > MAX_SEGMENTS {
        return bad("more than 2,000,000 segment uploads: use larger segments or fewer days");
    }
    let topic_id = Uuid::from_bytes(*b"rlmeta-projectio");
    let parts: Vec<TopicIdPartition> = (0..params.user_partitions as i32)
        .map(|p| TopicIdPartition {
            topic_id,
            topic: "tiered".to_owned(),
            partition: p,
        })
        .collect();
    let mut level0 = Store::new();
    let mut level2 = Store::new();
    let mut log = Log::new(TopicConfig {
        cleanup_policy: CleanupPolicy::Compact,
        retention_ms: -1,
        min_compaction_lag_ms: 0,
        delete_retention_ms: DAY_MS,
        segment_ms: 3_600_000,
        segment_records: usize::MAX,
    });
    let mut next_offset = vec![0i64; parts.len()];
    // (upload time, partition index, segment id) of live segments, oldest first.
    let mut live: std::collections::VecDeque<(i64, usize, Uuid)> = Default::default();
    let (mut ao_records, mut ao_bytes, mut off0, mut seq) = (0u64, 0u64, 0i64, 0u128);
    let mut points = Vec::new();
    let run = |event: &Event,
               level0: &mut Store,
               level2: &mut Store,
               log: &mut Log,
               now: i64,
               ao: (&mut u64, &mut u64, &mut i64)|
     -> Result<()> {
        for p in level0.plan(event, MetadataLevel::V0)? {
            *ao.0 += 1;
            *ao.1 += size(&p);
            let key = p.key.format();
            level0.apply(*ao.2, Some(key.as_bytes()), p.value.as_deref());
            *ao.2 += 1;
        }
        for p in level2.plan(event, MetadataLevel::V2)? {
            let key = p.key.format().into_bytes();
            let offset = log.append(now, Some(key.clone()), p.value.clone());
            level2.apply(offset, Some(&key), p.value.as_deref());
        }
        Ok(())
    };
    for day in 1..=params.days {
        let day_start = i64::from(day - 1) * DAY_MS;
        for i in 0..per_day {
            let now = day_start + (i as i64) * DAY_MS / (per_day as i64).max(1);
            // Deletions first: every segment older than the tiered retention.
            while let Some(&(t, pi, id)) = live.front() {
                if params.tiered_retention_ms < 0 || t >= now - params.tiered_retention_ms {
                    break;
                }
                live.pop_front();
                let e = SegmentEvent {
                    partition: parts[pi].clone(),
                    segment_id: id,
                    broker_id: 1,
                    event_timestamp_ms: now,
                    custom_metadata: None,
                    broker_leader_epoch: 1,
                };
                for ev in [Event::DeleteStarted(e.clone()), Event::DeleteFinished(e)] {
                    run(
                        &ev,
                        &mut level0,
                        &mut level2,
                        &mut log,
                        now,
                        (&mut ao_records, &mut ao_bytes, &mut off0),
                    )?;
                }
            }
            seq += 1;
            let pi = (seq as usize) % parts.len();
            let id = Uuid::from_bytes(seq.to_be_bytes());
            let start = next_offset[pi];
            let end = start + 999_999;
            next_offset[pi] = end + 1;
            let segment = SegmentMetadata {
                id,
                start_offset: start,
                end_offset: end,
                broker_id: 1,
                max_timestamp_ms: now,
                event_timestamp_ms: now,
                leader_epochs: smallvec::smallvec![(1, start)],
                segment_size_in_bytes: params.segment_bytes as i32,
                custom_metadata: None,
                state: SegmentState::CopySegmentStarted,
                txn_index_empty: true,
                broker_leader_epoch: 1,
            };
            let started = Event::CopyStarted {
                partition: parts[pi].clone(),
                segment,
            };
            let finished = Event::CopyFinished(SegmentEvent {
                partition: parts[pi].clone(),
                segment_id: id,
                broker_id: 1,
                event_timestamp_ms: now,
                custom_metadata: None,
                broker_leader_epoch: 1,
            });
            for ev in [started, finished] {
                run(
                    &ev,
                    &mut level0,
                    &mut level2,
                    &mut log,
                    now,
                    (&mut ao_records, &mut ao_bytes, &mut off0),
                )?;
            }
            live.push_back((now, pi, id));
        }
        log.clean(day_start + DAY_MS);
        if day % params.sample_every_days == 0 || day == params.days {
            let (records, bytes) = log.records().fold((0u64, 0u64), |(n, b), r| {
                let len = r.key.as_ref().map_or(0, Vec::len) + r.value.as_ref().map_or(0, Vec::len);
                (n + 1, b + len as u64)
            });
            points.push(GrowthPoint {
                day,
                live_segments: live.len() as u64,
                append_only_records: ao_records,
                append_only_bytes: ao_bytes,
                compacted_records: records,
                compacted_bytes: bytes,
            });
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacted_stays_bounded_while_append_only_grows() {
        let points = project_growth(&GrowthParams {
            upload_bytes_per_day: 100 << 30,
            segment_bytes: 1 << 30,
            tiered_retention_ms: 7 * DAY_MS,
            user_partitions: 4,
            days: 60,
            sample_every_days: 30,
        })
        .unwrap_or_default();
        assert_eq!(points.len(), 2);
        let (a, b) = (points[0], points[1]);
        // 100 uploads a day, 4 records each once deleted.
        assert!(
            b.append_only_records > a.append_only_records * 19 / 10,
            "{points:?}"
        );
        assert_eq!(a.live_segments, b.live_segments);
        // Two keys per live segment plus a day of tombstones and segment.ms worth of rolls.
        assert!(
            b.compacted_records <= a.compacted_records + 50,
            "{points:?}"
        );
        assert!(
            b.compacted_records < b.append_only_records / 5,
            "{points:?}"
        );
    }
}
