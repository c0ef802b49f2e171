//! What Kafka's log cleaner and retention keep of a partition's log at a given time, so that any
//! log can be compacted in memory and replayed.
//!
//! Owns: a log of `(offset, timestamp, key, value)` records split into segments as Kafka rolls
//! them (`segment.ms`, a record-count stand-in for `segment.bytes`), time retention of whole
//! segments (`delete` policy), and compaction (`compact` policy) as Kafka's `Cleaner` does it:
//! only segments before the active one and before `min.compaction.lag.ms` are cleaned; there
//! the latest record of each key survives; keyless records are discarded (the cleaner counts them
//! as invalid and drops them); a tombstone survives one cleaning plus `delete.retention.ms`.
//! Never: I/O or a clock (time is an argument).

use std::collections::HashMap;

/// `cleanup.policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CleanupPolicy {
    Delete,
    Compact,
    CompactDelete,
}

impl CleanupPolicy {
    /// Every policy, by [`CleanupPolicy::id`].
    pub const ALL: [CleanupPolicy; 3] = [
        CleanupPolicy::Delete,
        CleanupPolicy::Compact,
        CleanupPolicy::CompactDelete,
    ];

    /// A small number for hosts that pass a policy as a number (the page's preview): 0 delete,
    /// 1 compact, 2 compact,delete.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The policy with this [`CleanupPolicy::id`].
    pub fn from_id(id: u8) -> Option<CleanupPolicy> {
        CleanupPolicy::ALL.get(usize::from(id)).copied()
    }

    /// The policy of a `cleanup.policy` value as Kafka lists it (`delete`, `compact`,
    /// `compact,delete` in either order, spaces allowed).
    pub fn parse(text: &str) -> crate::Result<CleanupPolicy> {
        let mut parts: Vec<&str> = text.split(',').map(str::trim).collect();
        parts.sort_unstable();
        parts.dedup();
        match parts.as_slice() {
            ["delete"] => Ok(CleanupPolicy::Delete),
            ["compact"] => Ok(CleanupPolicy::Compact),
            ["compact", "delete"] => Ok(CleanupPolicy::CompactDelete),
            _ => Err(crate::Error::field(
                crate::ErrorKind::InvalidArgument,
                "cleanup.policy",
                format!("{text:?} is not a cleanup policy (delete, compact or compact,delete)"),
            )),
        }
    }

    /// Kafka's spelling.
    pub fn name(self) -> &'static str {
        match self {
            CleanupPolicy::Delete => "delete",
            CleanupPolicy::Compact => "compact",
            CleanupPolicy::CompactDelete => "compact,delete",
        }
    }

    fn compacts(self) -> bool {
        matches!(self, CleanupPolicy::Compact | CleanupPolicy::CompactDelete)
    }
    fn deletes(self) -> bool {
        matches!(self, CleanupPolicy::Delete | CleanupPolicy::CompactDelete)
    }
}

/// The topic configuration the cleaner and retention follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopicConfig {
    pub cleanup_policy: CleanupPolicy,
    /// -1: keep forever.
    pub retention_ms: i64,
    pub min_compaction_lag_ms: i64,
    pub delete_retention_ms: i64,
    pub segment_ms: i64,
    /// Records per segment before a roll (stands in for `segment.bytes`).
    pub segment_records: usize,
}

impl TopicConfig {
    /// Kafka's defaults for a compacted topic (`delete.retention.ms` 1 day, `segment.ms` 7 days).
    pub fn compacted() -> TopicConfig {
        TopicConfig {
            cleanup_policy: CleanupPolicy::Compact,
            retention_ms: -1,
            min_compaction_lag_ms: 0,
            delete_retention_ms: 86_400_000,
            segment_ms: 604_800_000,
            segment_records: usize::MAX,
        }
    }
}

/// One record of the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    pub offset: i64,
    pub timestamp_ms: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

#[derive(Clone, Debug, Default)]
struct Segment {
    records: Vec<LogRecord>,
    /// Timestamp that started the segment's roll timer.
    first_timestamp_ms: i64,
}

impl Segment {
    fn max_timestamp(&self) -> i64 {
        self.records
            .iter()
            .map(|r| r.timestamp_ms)
            .max()
            .unwrap_or(i64::MIN)
    }
}

/// A partition's log, appended to and cleaned.
#[derive(Clone, Debug)]
pub struct Log {
    config: TopicConfig,
    segments: Vec<Segment>,
    next_offset: i64,
    /// Tombstone offset -> the time after which the cleaner may drop it (its delete horizon).
    horizons: HashMap<i64, i64>,
}

impl Log {
    pub fn new(config: TopicConfig) -> Log {
        Log {
            config,
            segments: vec![Segment::default()],
            next_offset: 0,
            horizons: HashMap::new(),
        }
    }

    pub fn config(&self) -> &TopicConfig {
        &self.config
    }

    /// Changes the topic configuration (a feature-level move), keeping the records.
    pub fn set_config(&mut self, config: TopicConfig) {
        self.config = config;
    }

    /// Appends a record and returns its offset, rolling a new segment first when the active one
    /// is full or older than `segment.ms`.
    pub fn append(
        &mut self,
        timestamp_ms: i64,
        key: Option<Vec<u8>>,
        value: Option<Vec<u8>>,
    ) -> i64 {
        let roll = self.segments.last().is_none_or(|s| {
            !s.records.is_empty()
                && (s.records.len() >= self.config.segment_records
                    || timestamp_ms.saturating_sub(s.first_timestamp_ms) >= self.config.segment_ms)
        });
        if roll {
            self.segments.push(Segment::default());
        }
        let offset = self.next_offset;
        self.next_offset += 1;
        if let Some(seg) = self.segments.last_mut() {
            if seg.records.is_empty() {
                seg.first_timestamp_ms = timestamp_ms;
            }
            seg.records.push(LogRecord {
                offset,
                timestamp_ms,
                key,
                value,
            });
        }
        offset
    }

    /// The records that remain, in offset order.
    pub fn records(&self) -> impl Iterator<Item = &LogRecord> {
        self.segments.iter().flat_map(|s| s.records.iter())
    }

    pub fn len(&self) -> usize {
        self.segments.iter().map(|s| s.records.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs retention and then the cleaner as they would run at `now_ms`.
    pub fn clean(&mut self, now_ms: i64) {
        if self.config.cleanup_policy.deletes() {
            self.apply_retention(now_ms);
        }
        if self.config.cleanup_policy.compacts() {
            self.compact(now_ms);
        }
    }

    /// Deletes leading segments whose newest record is older than `retention.ms` (the active
    /// segment too: Kafka rolls it first).
    fn apply_retention(&mut self, now_ms: i64) {
        if self.config.retention_ms < 0 {
            return;
        }
        let limit = now_ms.saturating_sub(self.config.retention_ms);
        let expired = self
            .segments
            .iter()
            .take_while(|s| !s.records.is_empty() && s.max_timestamp() < limit)
            .count();
        self.segments.drain(..expired);
        if self.segments.is_empty() {
            self.segments.push(Segment::default());
        }
    }

    /// Kafka's cleaner over the cleanable segments: those before the active segment and before
    /// the first segment holding a record newer than `min.compaction.lag.ms`.
    fn compact(&mut self, now_ms: i64) {
        let active = self.segments.len().saturating_sub(1);
        let lag_limit = now_ms.saturating_sub(self.config.min_compaction_lag_ms);
        let cleanable = self
            .segments
            .iter()
            .take(active)
            .take_while(|s| s.max_timestamp() <= lag_limit)
            .count();
        let mut latest: HashMap<&[u8], i64> = HashMap::new();
        for r in self
            .segments
            .iter()
            .take(cleanable)
            .flat_map(|s| s.records.iter())
        {
            if let Some(k) = &r.key {
                latest.insert(k, r.offset);
            }
        }
        let latest: HashMap<Vec<u8>, i64> =
            latest.into_iter().map(|(k, o)| (k.to_vec(), o)).collect();
        let delete_retention = self.config.delete_retention_ms;
        for seg in self.segments.iter_mut().take(cleanable) {
            let horizons = &mut self.horizons;
            seg.records.retain(|r| {
                let Some(k) = &r.key else { return false };
                if latest.get(k) != Some(&r.offset) {
                    return false;
                }
                if r.value.is_some() {
                    return true;
                }
                let horizon = *horizons
                    .entry(r.offset)
                    .or_insert_with(|| now_ms.saturating_add(delete_retention));
                now_ms < horizon
            });
        }
        // A set, not a scan of `latest` per horizon: with many keys and tombstones that scan was
        // quadratic (the growth projection spent nearly all its time here).
        let kept: std::collections::HashSet<i64> = latest.values().copied().collect();
        self.horizons
            .retain(|o, _| kept.contains(o) || *o >= self.next_offset);
        // Empty closed segments disappear (the cleaner merges small segments).
        let last = self.segments.len().saturating_sub(1);
        let mut i = 0;
        self.segments.retain(|s| {
            i += 1;
            i - 1 == last || !s.records.is_empty()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Option<Vec<u8>> {
        Some(s.as_bytes().to_vec())
    }

    fn config(policy: CleanupPolicy) -> TopicConfig {
        TopicConfig {
            cleanup_policy: policy,
            retention_ms: 1000,
            min_compaction_lag_ms: 0,
            delete_retention_ms: 100,
            segment_ms: 10,
            segment_records: 1000,
        }
    }

    fn offsets(log: &Log) -> Vec<i64> {
        log.records().map(|r| r.offset).collect()
    }

    #[test]
    fn compaction_keeps_latest_per_key_drops_keyless_and_spares_the_active_segment() {
        let mut log = Log::new(config(CleanupPolicy::Compact));
        log.append(0, k("a"), k("1"));
        log.append(1, None, k("old"));
        log.append(2, k("a"), k("2"));
        log.append(3, k("b"), k("1"));
        log.append(20, k("a"), k("3")); // rolls: active segment
        log.append(21, None, k("x"));
        log.clean(30);
        assert_eq!(offsets(&log), vec![2, 3, 4, 5]);
    }

    #[test]
    fn tombstones_survive_one_cleaning_plus_delete_retention() {
        let mut log = Log::new(config(CleanupPolicy::Compact));
        log.append(0, k("a"), k("1"));
        log.append(1, k("a"), None);
        log.append(20, k("z"), k("1"));
        log.clean(30);
        assert_eq!(offsets(&log), vec![1, 2]);
        log.clean(129);
        assert_eq!(offsets(&log), vec![1, 2]);
        log.clean(130);
        assert_eq!(offsets(&log), vec![2]);
    }

    #[test]
    fn min_compaction_lag_holds_back_recent_segments() {
        let mut cfg = config(CleanupPolicy::Compact);
        cfg.min_compaction_lag_ms = 50;
        let mut log = Log::new(cfg);
        log.append(0, k("a"), k("1"));
        log.append(20, k("a"), k("2"));
        log.append(40, k("a"), k("3"));
        log.clean(60);
        assert_eq!(
            offsets(&log),
            vec![0, 1, 2],
            "the segment at 20 is within the lag, nothing cleans"
        );
        log.clean(71);
        assert_eq!(offsets(&log), vec![1, 2]);
    }

    #[test]
    fn retention_deletes_whole_expired_segments() {
        let mut log = Log::new(config(CleanupPolicy::CompactDelete));
        log.append(0, None, k("1"));
        log.append(5, None, k("2"));
        log.append(500, k("a"), k("1"));
        log.clean(1004);
        assert_eq!(offsets(&log), vec![2]);
        let mut log = Log::new(config(CleanupPolicy::Delete));
        log.append(0, None, k("1"));
        log.clean(2000);
        assert!(log.is_empty());
    }
}
