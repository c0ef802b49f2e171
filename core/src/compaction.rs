//! What Kafka's log cleaner and retention keep of a partition's log at a given time, so that any
//! log can be compacted in memory and replayed.
//!
//! Owns: a log of `(offset, timestamp, key, value)` records, one batch each, split into segments
//! as Kafka rolls them (`segment.ms` by record timestamps, a record-count stand-in for
//! `segment.bytes`, explicit rolls), time retention of whole segments (`delete` policy), and
//! compaction (`compact` policy) as Kafka 4.4.0's `LogCleanerManager` and `Cleaner` do it: rounds
//! that start at the cleaner checkpoint, stop before the active segment and
//! `min.compaction.lag.ms`, keep the latest record of each key, drop keyless records, keep a
//! tombstone until `delete.retention.ms` after the first round that kept it, and merge what they
//! clean into one segment. Checked against Kafka's own classes by `make cleaner-diff-test`
//! (tests/interop/src/main/java/dev/rlmeta/interop/cleaner). When the broker runs a round
//! (`min.cleanable.dirty.ratio`, the cleaner's backoff) is not modelled: a round runs at every
//! [`Log::clean`] that finds something dirty.
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

#[derive(Clone, Debug)]
struct Segment {
    /// Kafka's base offset: the log end offset when the segment was rolled, kept by cleaning.
    base_offset: i64,
    records: Vec<LogRecord>,
    /// Timestamp of the segment's first batch, which starts its `segment.ms` roll timer.
    first_timestamp_ms: i64,
    /// Largest timestamp of the batches the segment holds; `None` when it holds no batch
    /// (Kafka's size 0).
    max_timestamp_ms: Option<i64>,
}

impl Segment {
    fn new(base_offset: i64) -> Segment {
        Segment {
            base_offset,
            records: Vec::new(),
            first_timestamp_ms: 0,
            max_timestamp_ms: None,
        }
    }

    /// Holds at least one batch (Kafka: `size() > 0`).
    fn holds_bytes(&self) -> bool {
        self.max_timestamp_ms.is_some()
    }
}

/// A partition's log, appended to and cleaned.
#[derive(Clone, Debug)]
pub struct Log {
    config: TopicConfig,
    segments: Vec<Segment>,
    next_offset: i64,
    /// Tombstone offset -> the time from which the cleaner drops it: the `now` of the first
    /// cleaning round that kept it plus `delete.retention.ms` (Kafka writes it into the batch).
    horizons: HashMap<i64, i64>,
    /// The cleaner checkpoint: where the last cleaning round stopped (its first dirty offset next).
    checkpoint: Option<i64>,
}

impl Log {
    pub fn new(config: TopicConfig) -> Log {
        Log {
            config,
            segments: vec![Segment::new(0)],
            next_offset: 0,
            horizons: HashMap::new(),
            checkpoint: None,
        }
    }

    pub fn config(&self) -> &TopicConfig {
        &self.config
    }

    /// Changes the topic configuration (a feature-level move), keeping the records.
    pub fn set_config(&mut self, config: TopicConfig) {
        self.config = config;
    }

    /// Appends a record (one batch) and returns its offset, rolling a new segment first when the
    /// active one holds a batch and is full or its first batch is more than `segment.ms` older
    /// than this one (Kafka's `LogSegment.shouldRoll`, no jitter).
    pub fn append(
        &mut self,
        timestamp_ms: i64,
        key: Option<Vec<u8>>,
        value: Option<Vec<u8>>,
    ) -> i64 {
        let roll = self.segments.last().is_none_or(|s| {
            s.holds_bytes()
                && (s.records.len() >= self.config.segment_records
                    || timestamp_ms.saturating_sub(s.first_timestamp_ms) > self.config.segment_ms)
        });
        if roll {
            self.segments.push(Segment::new(self.next_offset));
        }
        let offset = self.next_offset;
        self.next_offset += 1;
        if let Some(seg) = self.segments.last_mut() {
            if !seg.holds_bytes() {
                seg.first_timestamp_ms = timestamp_ms;
            }
            seg.max_timestamp_ms = Some(
                seg.max_timestamp_ms
                    .map_or(timestamp_ms, |m| m.max(timestamp_ms)),
            );
            seg.records.push(LogRecord {
                offset,
                timestamp_ms,
                key,
                value,
            });
        }
        offset
    }

    /// Rolls the active segment now, as Kafka does when it reaches `segment.bytes` (or an admin
    /// asks); nothing happens while the active segment holds no batch.
    pub fn roll(&mut self) {
        if self.segments.last().is_none_or(Segment::holds_bytes) {
            self.segments.push(Segment::new(self.next_offset));
        }
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

    /// Runs retention and then one cleaning round as they would run at `now_ms`.
    pub fn clean(&mut self, now_ms: i64) {
        if self.config.cleanup_policy.deletes() {
            self.apply_retention(now_ms);
        }
        if self.config.cleanup_policy.compacts() {
            self.compact(now_ms);
        }
    }

    fn log_start_offset(&self) -> i64 {
        self.segments
            .first()
            .map_or(self.next_offset, |s| s.base_offset)
    }

    /// Kafka's time retention (`UnifiedLog.deleteOldSegments`): deletes leading segments whose
    /// largest timestamp is more than `retention.ms` before `now`, stopping at the first that is
    /// not (or holds no batch); when every segment goes, the log rolls first.
    fn apply_retention(&mut self, now_ms: i64) {
        if self.config.retention_ms < 0 {
            return;
        }
        let retention = self.config.retention_ms;
        let expired = self
            .segments
            .iter()
            .take_while(|s| {
                s.max_timestamp_ms
                    .is_some_and(|m| now_ms.saturating_sub(m) > retention)
            })
            .count();
        if expired == 0 {
            return;
        }
        self.segments.drain(..expired);
        if self.segments.is_empty() {
            self.segments.push(Segment::new(self.next_offset));
        }
        let start = self.log_start_offset();
        self.horizons.retain(|o, _| *o >= start);
    }

    /// Index of the segment holding `offset` (the last whose base offset is at most it).
    fn floor_segment(&self, offset: i64) -> usize {
        self.segments
            .iter()
            .rposition(|s| s.base_offset <= offset)
            .unwrap_or(0)
    }

    /// One round of Kafka's cleaner (`LogCleanerManager.cleanableOffsets` then `Cleaner.doClean`).
    /// The dirty range starts at the checkpoint (or the log start when retention passed it) and
    /// ends before the active segment and before the first dirty segment whose largest timestamp
    /// is within `min.compaction.lag.ms`; a round runs only when that range holds a batch. The
    /// latest offset of each key is taken from the dirty range alone; every segment before its
    /// end is then rewritten into one (Kafka groups them up to `segment.bytes`, here
    /// `segment_records` records): a keyed record survives when no later dirty record has its
    /// key, keyless records go, a tombstone also goes once its horizon has passed. A segment left
    /// with no batch stays and holds retention back (Kafka would then use its file's modification
    /// time; see docs/DIFFERENCES.md).
    fn compact(&mut self, now_ms: i64) {
        let start = self.log_start_offset();
        let first_dirty = self
            .checkpoint
            .filter(|&c| c >= start && c <= self.next_offset)
            .unwrap_or(start);
        let active = self.segments.len() - 1;
        let mut uncleanable = self.segments[active].base_offset;
        if self.config.min_compaction_lag_ms > 0 {
            let limit = now_ms.saturating_sub(self.config.min_compaction_lag_ms);
            if let Some(s) = self.segments[self.floor_segment(first_dirty)..active]
                .iter()
                .find(|s| s.max_timestamp_ms.is_none_or(|m| m > limit))
            {
                uncleanable = uncleanable.min(s.base_offset);
            }
        }
        let end = uncleanable.max(first_dirty);
        // The dirty segments: from the one holding the first dirty offset to the end.
        let dirty_from = self.floor_segment(first_dirty.min(end));
        let dirty_to = self.segments.partition_point(|s| s.base_offset < end);
        if !self.segments[dirty_from..dirty_to.max(dirty_from)]
            .iter()
            .any(Segment::holds_bytes)
        {
            return;
        }
        let mut latest: HashMap<&[u8], i64> = HashMap::new();
        for r in self.segments[dirty_from..dirty_to]
            .iter()
            .flat_map(|s| s.records.iter())
            .filter(|r| r.offset >= first_dirty && r.offset < end)
        {
            if let Some(k) = &r.key {
                latest.insert(k, r.offset);
            }
        }
        let latest: HashMap<Vec<u8>, i64> =
            latest.into_iter().map(|(k, o)| (k.to_vec(), o)).collect();
        let delete_retention = self.config.delete_retention_ms;
        let old: Vec<Segment> = self.segments.drain(..dirty_to).collect();
        let mut cleaned: Vec<Segment> = Vec::new();
        let mut group_records = usize::MAX;
        for seg in old {
            let size = seg.records.len();
            let start_group = cleaned.is_empty()
                || group_records.saturating_add(size) > self.config.segment_records;
            if start_group {
                cleaned.push(Segment::new(seg.base_offset));
                group_records = 0;
            }
            group_records = group_records.saturating_add(size);
            let Some(dest) = cleaned.last_mut() else {
                break;
            };
            for r in seg.records {
                let keep = match &r.key {
                    None => false,
                    Some(k) => {
                        let newest = r.offset >= latest.get(k).copied().unwrap_or(-1);
                        newest
                            && (r.value.is_some()
                                || self.horizons.get(&r.offset).is_none_or(|&h| now_ms < h))
                    }
                };
                if keep {
                    dest.max_timestamp_ms = Some(
                        dest.max_timestamp_ms
                            .map_or(r.timestamp_ms, |m| m.max(r.timestamp_ms)),
                    );
                }
                if keep {
                    if r.value.is_none() {
                        self.horizons
                            .entry(r.offset)
                            .or_insert_with(|| now_ms.saturating_add(delete_retention));
                    }
                    dest.records.push(r);
                } else if !self.horizons.is_empty() {
                    // (most logs hold no tombstone: a lookup per dropped record would be wasted)
                    self.horizons.remove(&r.offset);
                }
            }
        }
        cleaned.append(&mut self.segments);
        self.segments = cleaned;
        self.checkpoint = Some(end);
    }
}

/// One moment of [`Log`], streamed: what a fresh log holding the given records keeps when a
/// record arrives at `now_ms` and retention and one cleaning round then run (what
/// `inspect::preview_compaction` asks of a [`Log`]), decided in two passes over the records in
/// log order, without holding them.
///
/// Owns: the first pass rolls the segments as [`Log::append`] does, keeping only the segment
/// being filled (retention's expired prefix and the cleaner's dirty end are decided as each
/// segment closes), and the latest position of each key in the dirty range; the second pass
/// says of each record whether it remains. Memory: 24 bytes and the table's slack for each
/// distinct key of the dirty range and of the segment being filled; no key, value or record.
/// A key is held as a 128-bit digest, as Kafka's cleaner holds a 16-byte MD5 of it
/// (`SkimpyOffsetMap`): two SipHash-1-3 digests under keys drawn at random for each model, so
/// that no input can be made to collide; two distinct keys of a log with n keys share a digest
/// with a probability under n²/2¹²⁹ (1e-25 for 10 million keys), and only then would the answer
/// differ from [`Log`]'s. Holding the keys themselves took 418 MB on a 1 GiB KIP-1266 segment
/// (3.1 million keys of some 60 bytes with their allocations); the digests take a quarter.
/// Only one round from a fresh log is modelled (no checkpoint, no tombstone horizon of an
/// earlier round): later rounds are [`Log`]'s.
/// Never: I/O.
#[derive(Clone, Debug)]
pub struct Round {
    config: TopicConfig,
    now_ms: i64,
    /// Records appended so far in this pass (the log offset of the next one).
    next: i64,
    /// The segment being filled: base, records, first batch's timestamp, largest timestamp.
    active: Option<(i64, usize, i64, i64)>,
    /// Every segment closed so far went to retention.
    expired_prefix: bool,
    /// The log start: the first offset retention keeps.
    start: i64,
    /// The dirty range's end, once a closed segment holds a record within the compaction lag
    /// (or, after [`Round::plan`], the active segment's base).
    end: Option<i64>,
    /// The latest offset of each key in the closed segments of the dirty range so far, and in
    /// the segment being filled.
    latest: Digests,
    filling: DigestTable,
    /// The digest's two keyed hashes.
    digest: (std::hash::RandomState, std::hash::RandomState),
    planned: bool,
}

/// Key digest -> offset, in 64 tables by the digest's top bits, so that a table growing (which
/// holds its old and new slots at once) costs a 64th of the map, not twice it. The digests are
/// uniform already: a table hashes one by its low bits.
#[derive(Clone, Debug, Default)]
struct Digests {
    shards: Vec<DigestTable>,
}

/// One table of key digest -> offset.
type DigestTable = HashMap<u128, i64, std::hash::BuildHasherDefault<LowBits>>;

impl Digests {
    const SHARDS: usize = 64;

    fn shard(d: u128) -> usize {
        (d >> 122) as usize
    }

    fn insert(&mut self, d: u128, offset: i64) {
        if self.shards.is_empty() {
            self.shards.resize_with(Self::SHARDS, Default::default);
        }
        if let Some(s) = self.shards.get_mut(Self::shard(d)) {
            s.insert(d, offset);
        }
    }

    fn get(&self, d: u128) -> Option<i64> {
        self.shards.get(Self::shard(d))?.get(&d).copied()
    }

    /// Moves every entry of `other` in (its offsets are later than any here).
    fn absorb(&mut self, other: DigestTable) {
        for (d, o) in other {
            self.insert(d, o);
        }
    }
}

/// The hasher of [`Digests`]: a digest's low 64 bits.
#[derive(Default)]
struct LowBits(u64);

impl std::hash::Hasher for LowBits {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
}

impl Round {
    pub fn new(config: TopicConfig, now_ms: i64) -> Round {
        Round {
            config,
            now_ms,
            next: 0,
            active: None,
            expired_prefix: true,
            start: 0,
            end: None,
            latest: Digests::default(),
            filling: DigestTable::default(),
            digest: Default::default(),
            planned: false,
        }
    }

    /// Whether a record with this timestamp exists at the moment (the model appends only those).
    pub fn present(&self, timestamp_ms: i64) -> bool {
        timestamp_ms <= self.now_ms
    }

    /// First pass: the next record that exists at the moment ([`Round::present`]), in log order.
    pub fn append(&mut self, timestamp_ms: i64, key: Option<&[u8]>) {
        if self.planned {
            return;
        }
        self.roll_for(timestamp_ms);
        if let (Some(k), true) = (key, self.maps_keys()) {
            let d = self.digest_of(k);
            self.filling.insert(d, self.next);
        }
        self.next += 1;
    }

    /// Ends the first pass: the arriving record at the moment is appended (it may roll the last
    /// segment), and what retention and the round take is fixed.
    pub fn plan(&mut self) {
        if self.planned {
            return;
        }
        self.roll_for(self.now_ms);
        let base = self.active.map_or(self.next, |a| a.0);
        self.next += 1;
        self.end = Some(self.end.map_or(base, |e| e.min(base)).max(self.start));
        self.filling = DigestTable::default();
        if !self.cleans() {
            self.latest = Digests::default();
        }
        self.planned = true;
    }

    /// Whether [`Round::plan`] found anything for retention or the cleaner to take.
    pub fn drops_any(&self) -> bool {
        self.start > 0 || self.cleans()
    }

    /// Second pass, after [`Round::plan`]: whether the record the `offset`-th present one (from 0,
    /// as the first pass numbered them) remains after retention and the round.
    pub fn keeps(&self, offset: i64, key: Option<&[u8]>) -> bool {
        if offset < self.start {
            return false;
        }
        if !self.cleans() || offset >= self.end.unwrap_or(i64::MAX) {
            return true;
        }
        key.is_some_and(|k| offset >= self.latest.get(self.digest_of(k)).unwrap_or(-1))
    }

    /// A key's 128-bit digest.
    fn digest_of(&self, key: &[u8]) -> u128 {
        use std::hash::BuildHasher;
        (u128::from(self.digest.0.hash_one(key)) << 64) | u128::from(self.digest.1.hash_one(key))
    }

    /// A round runs: the policy compacts and the dirty range holds a record.
    fn cleans(&self) -> bool {
        self.config.cleanup_policy.compacts() && self.end.is_some_and(|e| e > self.start)
    }

    /// Whether keys seen now may be in the dirty range.
    fn maps_keys(&self) -> bool {
        self.config.cleanup_policy.compacts() && self.end.is_none()
    }

    /// Rolls before a record at `timestamp_ms` as [`Log::append`] does, closing the segment.
    fn roll_for(&mut self, timestamp_ms: i64) {
        let roll = self.active.is_none_or(|(_, n, first, _)| {
            n >= self.config.segment_records
                || timestamp_ms.saturating_sub(first) > self.config.segment_ms
        });
        if roll {
            if let Some(closed) = self.active.take() {
                self.close(closed);
            }
            self.active = Some((self.next, 0, timestamp_ms, timestamp_ms));
        }
        if let Some(a) = &mut self.active {
            a.1 += 1;
            a.3 = a.3.max(timestamp_ms);
        }
    }

    /// A segment closed (not the active one at the moment): retention's prefix, then the
    /// cleaner's lag ([`Log::apply_retention`] and [`Log::compact`]'s dirty end).
    fn close(&mut self, (base, n, _, max): (i64, usize, i64, i64)) {
        let filling = std::mem::take(&mut self.filling);
        let retention = self.config.retention_ms;
        if self.expired_prefix
            && self.config.cleanup_policy.deletes()
            && retention >= 0
            && self.now_ms.saturating_sub(max) > retention
        {
            self.start = base + n as i64;
            return;
        }
        self.expired_prefix = false;
        if !self.maps_keys() {
            return;
        }
        let lag = self.config.min_compaction_lag_ms;
        if lag > 0 && max > self.now_ms.saturating_sub(lag) {
            self.end = Some(base);
            return;
        }
        self.latest.absorb(filling);
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
        log.append(40, k("y"), k("1")); // rolls: the segment at 20 becomes dirty
        log.clean(129);
        assert_eq!(offsets(&log), vec![1, 2, 3]);
        log.append(60, k("x"), k("1"));
        log.clean(130);
        assert_eq!(offsets(&log), vec![2, 3, 4]);
    }

    #[test]
    fn a_past_horizon_waits_for_a_round_and_a_round_needs_something_dirty() {
        // Kafka's Cleaner maps the dirty range only; with nothing dirty no round runs (the broker
        // never picks the log), so an expired tombstone stays until new records are cleanable.
        let mut log = Log::new(config(CleanupPolicy::Compact));
        log.append(0, k("a"), k("1"));
        log.append(1, k("a"), None);
        log.append(20, k("z"), k("1"));
        log.clean(30);
        log.clean(500);
        assert_eq!(
            offsets(&log),
            vec![1, 2],
            "nothing dirty: the tombstone stays"
        );
        log.roll();
        log.clean(501);
        assert_eq!(
            offsets(&log),
            vec![2],
            "the segment at 20 is dirty now: a round runs"
        );
    }

    #[test]
    fn segment_ms_rolls_only_past_the_limit() {
        // LogSegment.shouldRoll: the new batch's timestamp minus the first batch's must exceed
        // segment.ms; at exactly segment.ms the segment stays active.
        let mut log = Log::new(config(CleanupPolicy::Compact));
        log.append(0, k("a"), k("1"));
        log.append(5, k("a"), k("2"));
        log.append(10, k("a"), k("3"));
        log.clean(100);
        assert_eq!(
            offsets(&log),
            vec![0, 1, 2],
            "one active segment: nothing cleans"
        );
        log.append(11, k("a"), k("4"));
        log.clean(100);
        assert_eq!(offsets(&log), vec![2, 3]);
    }

    #[test]
    fn cleaned_segments_merge_and_retention_waits_for_the_newest() {
        // Kafka rewrites every segment before the dirty range's end into one (up to
        // segment.bytes); retention then sees the merged segment's largest timestamp.
        let mut cfg = config(CleanupPolicy::CompactDelete);
        cfg.segment_ms = i64::MAX;
        cfg.retention_ms = 100;
        let mut log = Log::new(cfg);
        log.append(0, k("a"), k("1"));
        log.roll();
        log.append(50, k("b"), k("1"));
        log.roll();
        log.append(90, k("x"), k("1"));
        log.roll();
        log.append(95, k("c"), k("1"));
        log.clean(95);
        assert_eq!(offsets(&log), vec![0, 1, 2, 3]);
        // Alone, the segment of offset 0 would expire at 101; merged with 50 and 90 it waits.
        log.clean(150);
        assert_eq!(offsets(&log), vec![0, 1, 2, 3]);
        log.clean(191);
        assert_eq!(offsets(&log), vec![3]);
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
