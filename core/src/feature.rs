//! The feature `remote.log.metadata.version` (KIP-1266 migration levels 0, 1, 2).
//!
//! Owns: what each level means for the topic's configuration and for what the planner may write,
//! which level changes are legal, the level record that carries a metadata partition's level on
//! a cluster without the feature (docs/FEATURE-LEVEL.md), the null-key scan verdict of the
//! migration check, and the retention that level 1 can use without deleting metadata of live
//! segments. Never: reading the cluster (hosts pass in what they read; an unknown level is an
//! input of its own, never 0).

use crate::compaction::{CleanupPolicy, TopicConfig};
use crate::error::{Error, ErrorKind, Result};
use std::collections::BTreeMap;

/// The feature's name in KRaft's finalized features.
pub const FEATURE_NAME: &str = "remote.log.metadata.version";
/// The topic whose level this module decides.
pub const METADATA_TOPIC: &str = "__remote_log_metadata";

/// A level of `remote.log.metadata.version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MetadataLevel {
    /// Null keys allowed, `cleanup.policy=delete`; every broker can read everything written.
    V0 = 0,
    /// `compact,delete` with a finite retention so that null-key records expire.
    V1 = 1,
    /// `compact` only; no null-key record may remain.
    V2 = 2,
}

/// Default retention of level 1 in the KIP's tool (14 days).
pub const DEFAULT_V1_RETENTION_MS: i64 = 1_209_600_000;
/// Default `segment.ms` of level 1 in the KIP's tool (1 day).
pub const DEFAULT_V1_SEGMENT_MS: i64 = 86_400_000;

impl MetadataLevel {
    pub const ALL: [MetadataLevel; 3] = [MetadataLevel::V0, MetadataLevel::V1, MetadataLevel::V2];
    /// What a freshly formatted cluster starts at (KIP-1266: LATEST_PRODUCTION).
    pub const LATEST: MetadataLevel = MetadataLevel::V2;

    pub fn level(self) -> i16 {
        self as i16
    }

    /// The level with this number. Unknown numbers are an error ("Unknown remote log metadata
    /// feature level"), as in Kafka.
    pub fn from_level(level: i16) -> Result<MetadataLevel> {
        MetadataLevel::ALL
            .into_iter()
            .find(|l| l.level() == level)
            .ok_or_else(|| {
                Error::field(
                    ErrorKind::InvalidArgument,
                    FEATURE_NAME,
                    format!("unknown remote log metadata feature level: {level}"),
                )
            })
    }

    /// Whether values are written at KIP-1266's version 1 (with `brokerLeaderEpoch`/`endOffset`):
    /// only once no broker that predates KIP-1266 can be reading the topic.
    pub fn writes_kip1266_values(self) -> bool {
        self >= MetadataLevel::V1
    }

    /// Whether tombstones may be written (a tombstone stops an older broker's consumer, and only
    /// a compacted topic removes anything with them).
    pub fn allows_tombstones(self) -> bool {
        self >= MetadataLevel::V1
    }

    /// The topic configuration of `__remote_log_metadata` at this level, as `(name, value)`
    /// pairs to set; `None` values are overrides to remove.
    pub fn topic_configs(
        self,
        v1_retention_ms: i64,
        v1_segment_ms: i64,
    ) -> Vec<(&'static str, Option<String>)> {
        match self {
            MetadataLevel::V0 => vec![("cleanup.policy", Some("delete".into()))],
            MetadataLevel::V1 => vec![
                ("cleanup.policy", Some("compact,delete".into())),
                ("retention.ms", Some(v1_retention_ms.to_string())),
                ("min.compaction.lag.ms", Some(v1_retention_ms.to_string())),
                ("segment.ms", Some(v1_segment_ms.to_string())),
            ],
            MetadataLevel::V2 => vec![
                ("cleanup.policy", Some("compact".into())),
                ("retention.ms", None),
                ("min.compaction.lag.ms", None),
            ],
        }
    }

    /// What the cleaner and retention follow at this level (the presets of every viewer and of
    /// `rlmeta simulate`): Kafka's defaults for the topic ([`TopicConfig::compacted`]; retention
    /// -1, as `remote.log.metadata.topic.retention.ms` defaults) with [`Self::topic_configs`]
    /// applied, a removed override going back to that default.
    pub fn cleaner_config(self, v1_retention_ms: i64, v1_segment_ms: i64) -> TopicConfig {
        let defaults = TopicConfig::compacted();
        let mut c = defaults;
        for (name, value) in self.topic_configs(v1_retention_ms, v1_segment_ms) {
            let ms = |default: i64| {
                value
                    .as_deref()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(default)
            };
            match name {
                "cleanup.policy" => {
                    c.cleanup_policy = value
                        .as_deref()
                        .and_then(|v| CleanupPolicy::parse(v).ok())
                        .unwrap_or(defaults.cleanup_policy)
                }
                "retention.ms" => c.retention_ms = ms(defaults.retention_ms),
                "min.compaction.lag.ms" => {
                    c.min_compaction_lag_ms = ms(defaults.min_compaction_lag_ms)
                }
                "segment.ms" => c.segment_ms = ms(defaults.segment_ms),
                _ => {}
            }
        }
        c
    }

    /// Whether moving from `self` to `to` is legal: never down; an existing cluster one step at
    /// a time (its null-key records must expire at level 1 first); a fresh cluster (no
    /// `__remote_log_metadata` records yet) may go straight to 2.
    pub fn check_upgrade(self, to: MetadataLevel, fresh_cluster: bool) -> Result<()> {
        let refuse = |why: String| Err(Error::field(ErrorKind::InvalidState, FEATURE_NAME, why));
        if to < self {
            return refuse(format!(
                "cannot downgrade {FEATURE_NAME} from {} to {}",
                self.level(),
                to.level()
            ));
        }
        if to.level() - self.level() > 1 && !fresh_cluster {
            return refuse(format!(
                "cannot upgrade {FEATURE_NAME} from {} to {} directly: upgrade to 1 first and let null-key records expire",
                self.level(),
                to.level()
            ));
        }
        Ok(())
    }
}

/// The key of the level record: on a cluster that does not finalize [`FEATURE_NAME`] (stock
/// Kafka 4.4.0), the record under this key in a metadata partition carries that partition's
/// level. No KIP-1266 key can equal it (a KIP-1266 key has at least four `:`).
pub const LEVEL_RECORD_KEY: &[u8] = b"remote.log.metadata.version";

/// The value of the level record for `level`: the level's decimal digit in ASCII, so that a
/// console consumer shows it as it is.
pub fn level_record_value(level: MetadataLevel) -> &'static [u8] {
    match level {
        MetadataLevel::V0 => b"0",
        MetadataLevel::V1 => b"1",
        MetadataLevel::V2 => b"2",
    }
}

/// If `key` is [`LEVEL_RECORD_KEY`], the level the record's value carries; `None` for any other
/// record. A null value (a tombstone of the level key) or a value that is not exactly one known
/// level's digits is an invalid record: the level of that partition stays what it was.
pub fn parse_level_record(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Option<Result<MetadataLevel>> {
    if key != Some(LEVEL_RECORD_KEY) {
        return None;
    }
    let invalid = |why: String| Error::field(ErrorKind::InvalidRecord, FEATURE_NAME, why);
    Some(match value {
        None => Err(invalid(
            "the level record is a tombstone: a level is never deleted".into(),
        )),
        Some(v) => MetadataLevel::ALL
            .into_iter()
            .find(|l| level_record_value(*l) == v)
            .ok_or_else(|| {
                invalid(format!(
                    "the level record's value {:?} is not a known level (\"0\", \"1\" or \"2\")",
                    String::from_utf8_lossy(v)
                ))
            }),
    })
}

/// What the migration check found: null-key records in the topic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NullKeyScan {
    pub null_key_records: u64,
    /// Timestamp of the newest null-key record, if any.
    pub last_null_key_timestamp_ms: Option<i64>,
}

/// The verdict of the level-2 readiness check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// No null-key record remains: level 2 is safe.
    Ready,
    /// Null-key records remain; they are expected to be gone at this time (last null-key
    /// timestamp + `segment.ms` + `retention.ms`, as the KIP's tool estimates), if retention is
    /// finite.
    Wait {
        null_key_records: u64,
        estimated_cleanup_ms: Option<i64>,
    },
}

impl NullKeyScan {
    pub fn readiness(&self, segment_ms: i64, retention_ms: i64) -> Readiness {
        if self.null_key_records == 0 {
            return Readiness::Ready;
        }
        let estimated_cleanup_ms = self
            .last_null_key_timestamp_ms
            .zip(expected_deletion_ms(segment_ms, retention_ms))
            .and_then(|(ts, wait)| ts.checked_add(wait));
        Readiness::Wait {
            null_key_records: self.null_key_records,
            estimated_cleanup_ms,
        }
    }
}

/// The smallest level-1 `retention.ms` that deletes no keyed record of a live segment: a
/// segment's records are written when it is uploaded, after its last record's timestamp, and the
/// segment lives until its topic's retention passes that timestamp (plus `margin_ms` for the
/// remote log manager to run and delete it). `tiered_retention_ms` holds the `retention.ms` of
/// every tiered topic; -1 (infinite) in any of them means no finite retention is safe.
pub fn safe_v1_retention_ms(tiered_retention_ms: &[i64], margin_ms: i64) -> Result<i64> {
    let refuse = |why: String| Err(Error::field(ErrorKind::InvalidState, "retention.ms", why));
    if tiered_retention_ms.iter().any(|&r| r < 0) {
        return refuse(
            "a tiered topic keeps its segments forever (retention.ms=-1): any finite retention of __remote_log_metadata \
             deletes metadata of live segments"
                .into(),
        );
    }
    let longest = tiered_retention_ms.iter().copied().max().unwrap_or(0);
    longest.checked_add(margin_ms.max(0)).map_or_else(
        || refuse("retention overflows a 64-bit millisecond count".into()),
        Ok,
    )
}

/// Checks a requested level-1 retention against the tiered topics' retention. Refuses an unsafe
/// one with the reason unless `force` is set.
pub fn check_v1_retention(
    requested_ms: i64,
    tiered_retention_ms: &[i64],
    margin_ms: i64,
    force: bool,
) -> Result<()> {
    if force {
        return Ok(());
    }
    if requested_ms < 0 {
        return Err(Error::field(
            ErrorKind::InvalidArgument,
            "retention.ms",
            "level 1 needs a finite retention.ms so that null-key records expire",
        ));
    }
    let safe = safe_v1_retention_ms(tiered_retention_ms, margin_ms)?;
    if requested_ms < safe {
        return Err(Error::field(
            ErrorKind::InvalidState,
            "retention.ms",
            format!(
                "retention.ms={requested_ms} would delete metadata of live remote segments: the longest tiered-topic retention \
                 needs at least {safe} ms"
            ),
        ));
    }
    Ok(())
}

/// Raw configs of one resource (a topic or a broker) as a host described them: name to value, an
/// absent name (or one the host could not read) is a config left at its default.
pub type Configs = BTreeMap<String, String>;

/// `remote.log.manager.task.interval.ms`: Kafka 4.4.0's default (storage/src/main/java/org/apache/
/// kafka/server/log/remote/storage/RemoteLogManagerConfig.java,
/// `DEFAULT_REMOTE_LOG_MANAGER_TASK_INTERVAL_MS`, 30 s): how long an expired remote segment may
/// wait for the remote log manager's next run to delete it.
pub const DEFAULT_RLM_TASK_INTERVAL_MS: i64 = 30_000;
/// `log.retention.hours`: Kafka 4.4.0's default, 168 h (server-common/src/main/java/org/apache/
/// kafka/server/config/ServerLogConfigs.java, `LOG_RETENTION_HOURS_DEFAULT`), what a topic without
/// `retention.ms` keeps unless the broker sets `log.retention.ms` or `log.retention.minutes`.
pub const DEFAULT_LOG_RETENTION_MS: i64 = 168 * 3_600_000;
/// `segment.ms`' default: `log.roll.hours` 168 h (ServerLogConfigs.java, `LOG_ROLL_TIME_HOURS_DEFAULT`).
pub const DEFAULT_SEGMENT_MS: i64 = 168 * 3_600_000;

fn ms_config(configs: &Configs, name: &str) -> Result<Option<i64>> {
    configs
        .get(name)
        .map(|v| {
            v.trim().parse::<i64>().map_err(|_| {
                Error::field(
                    ErrorKind::InvalidArgument,
                    name,
                    format!("{v:?} is not a number"),
                )
            })
        })
        .transpose()
}

/// The retention a broker gives topics without `retention.ms`, -1 for infinite: Kafka's
/// precedence `log.retention.ms`, then `log.retention.minutes`, then `log.retention.hours`
/// (LogConfig/KafkaConfig `logRetentionTimeMillis`), any negative value meaning infinite.
fn broker_retention_ms(broker: &Configs) -> Result<i64> {
    let ms = match (
        ms_config(broker, "log.retention.ms")?,
        ms_config(broker, "log.retention.minutes")?,
        ms_config(broker, "log.retention.hours")?,
    ) {
        (Some(ms), _, _) => ms,
        (None, Some(m), _) => m.saturating_mul(60_000),
        (None, None, Some(h)) => h.saturating_mul(3_600_000),
        (None, None, None) => DEFAULT_LOG_RETENTION_MS,
    };
    Ok(if ms < 0 { -1 } else { ms })
}

/// The longest default retention any broker gives (a topic's partitions may be led by any of
/// them); -1 if one of them keeps forever; Kafka's default with no broker described.
fn brokers_retention_ms(brokers: &BTreeMap<String, Configs>) -> Result<i64> {
    let mut longest: Option<i64> = None;
    for b in brokers.values() {
        let r = broker_retention_ms(b)?;
        longest = Some(match longest {
            Some(l) if l < 0 || r < 0 => -1,
            Some(l) => l.max(r),
            None => r,
        });
    }
    Ok(longest.unwrap_or(DEFAULT_LOG_RETENTION_MS))
}

/// A topic's effective `retention.ms` (-1: infinite): its own override, else the brokers'
/// default ([`brokers_retention_ms`]).
pub fn effective_retention_ms(topic: &Configs, brokers: &BTreeMap<String, Configs>) -> Result<i64> {
    match ms_config(topic, "retention.ms")? {
        Some(ms) => Ok(if ms < 0 { -1 } else { ms }),
        None => brokers_retention_ms(brokers),
    }
}

/// One tiered topic whose retention decides the safe level-1 retention.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TieredRetention {
    pub topic: String,
    /// Its effective `retention.ms`; -1: its remote segments live for ever.
    pub retention_ms: i64,
}

/// The verdict on a level-1 `retention.ms` for `__remote_log_metadata`
/// ([`v1_retention_safety`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetentionSafety {
    /// The tiered topics (`remote.storage.enable=true`), by name, with their effective retention.
    pub tiered: Vec<TieredRetention>,
    /// The time the remote log manager may take to delete an expired segment: the longest
    /// `remote.log.manager.task.interval.ms` of any broker (default 30 s).
    pub margin_ms: i64,
    /// The smallest safe retention; `None` when no finite one is (a tiered topic keeps its
    /// segments for ever).
    pub safe_ms: Option<i64>,
    /// Whether the requested retention is safe.
    pub safe: bool,
    /// Why, one line each: the deciding topic, the margin, and each tiered topic whose
    /// retention is infinite or bounded only by size.
    pub reasons: Vec<String>,
}

/// Whether `requested_ms` as level 1's `retention.ms` of `__remote_log_metadata` deletes no
/// record of a live remote segment, from raw configs: `topics` (name to configs, the metadata
/// topic itself skipped) and `brokers` (id to configs), each missing config at Kafka 4.4.0's
/// default. The rule ([`safe_v1_retention_ms`]): a segment's metadata is written when it is
/// uploaded, after its last record, and the segment lives until its topic's retention passes
/// that record plus one run of the remote log manager; so the safe value is the longest
/// tiered-topic retention plus the longest task interval.
/// - A topic is tiered when `remote.storage.enable` is `true` (any case, as Kafka parses
///   booleans; default `false`, LogConfig).
/// - Its retention is its `retention.ms`, else the brokers' `log.retention.ms` / `.minutes` /
///   `.hours` (default 168 h), the longest over brokers; negative is infinite.
/// - A cleanup.policy without `delete` never expires anything: infinite.
/// - `retention.bytes` bounds a partition's size, not a segment's age (a partition that stops
///   growing keeps its segments), so it never makes a retention safe; it is named in the reasons
///   where it is the only bound. `local.retention.*` governs local copies only: not an input.
pub fn v1_retention_safety(
    requested_ms: i64,
    topics: &BTreeMap<String, Configs>,
    brokers: &BTreeMap<String, Configs>,
) -> Result<RetentionSafety> {
    let mut margin_ms = None::<i64>;
    for b in brokers.values() {
        let m = ms_config(b, "remote.log.manager.task.interval.ms")?
            .unwrap_or(DEFAULT_RLM_TASK_INTERVAL_MS)
            .max(0);
        margin_ms = Some(margin_ms.map_or(m, |x| x.max(m)));
    }
    let margin_ms = margin_ms.unwrap_or(DEFAULT_RLM_TASK_INTERVAL_MS);
    let mut tiered = Vec::new();
    let mut reasons = Vec::new();
    for (name, c) in topics {
        let on = c
            .get("remote.storage.enable")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if name == METADATA_TOPIC || !on {
            continue;
        }
        let deletes = match c.get("cleanup.policy") {
            Some(p) => CleanupPolicy::parse(p)? != CleanupPolicy::Compact,
            None => true,
        };
        let retention_ms = if deletes {
            effective_retention_ms(c, brokers)?
        } else {
            -1
        };
        if retention_ms < 0 {
            let bytes = ms_config(c, "retention.bytes")?.filter(|b| *b >= 0);
            reasons.push(match (deletes, bytes) {
                (false, _) => format!("tiered topic {name} has cleanup.policy={}: nothing expires", c.get("cleanup.policy").map_or("", String::as_str)),
                (true, Some(b)) => format!(
                    "tiered topic {name} has infinite retention.ms; its retention.bytes={b} bounds size, not age: a partition that stops growing keeps its segments for ever"
                ),
                (true, None) => format!("tiered topic {name} keeps its segments for ever (retention.ms=-1)"),
            });
        }
        tiered.push(TieredRetention {
            topic: name.clone(),
            retention_ms,
        });
    }
    let times: Vec<i64> = tiered.iter().map(|t| t.retention_ms).collect();
    let safe_ms = safe_v1_retention_ms(&times, margin_ms).ok();
    match (safe_ms, tiered.iter().max_by_key(|t| t.retention_ms)) {
        (Some(s), Some(t)) => reasons.insert(
            0,
            format!(
                "tiered topic {} keeps its segments {} ms and the remote log manager may take {margin_ms} ms more to delete one: retention.ms needs at least {s} ms",
                t.topic, t.retention_ms
            ),
        ),
        (Some(s), None) => reasons.insert(0, format!("no topic is tiered: retention.ms needs at least {s} ms")),
        (None, _) => reasons.insert(
            0,
            "no finite retention of __remote_log_metadata is safe: it would delete metadata of live segments".into(),
        ),
    }
    if requested_ms < 0 {
        reasons.insert(
            0,
            "level 1 needs a finite retention.ms so that null-key records expire".into(),
        );
    }
    Ok(RetentionSafety {
        safe: requested_ms >= 0 && safe_ms.is_some_and(|s| requested_ms >= s),
        tiered,
        margin_ms,
        safe_ms,
        reasons,
    })
}

/// [`v1_retention_safety`] as a refusal: an `InvalidState` error (`InvalidArgument` for a
/// negative request) with the reasons, unless the retention is safe or `force` is set.
pub fn check_v1_retention_configs(
    requested_ms: i64,
    topics: &BTreeMap<String, Configs>,
    brokers: &BTreeMap<String, Configs>,
    force: bool,
) -> Result<RetentionSafety> {
    let v = v1_retention_safety(requested_ms, topics, brokers)?;
    if v.safe || force {
        return Ok(v);
    }
    let kind = if requested_ms < 0 {
        ErrorKind::InvalidArgument
    } else {
        ErrorKind::InvalidState
    };
    Err(Error::field(
        kind,
        "retention.ms",
        format!(
            "retention.ms={requested_ms} would delete metadata of live remote segments: {}",
            v.reasons.join("; ")
        ),
    ))
}

/// When the null-key records written now are gone under `segment_ms` and `retention_ms` (the
/// KIP's "segment.ms + retention.ms": a record waits for its segment to roll, then for the
/// retention): their sum in ms, `None` when retention is infinite (negative), either is
/// negative, or the sum overflows. Whole days are a display matter: sum first, round after.
pub fn expected_deletion_ms(segment_ms: i64, retention_ms: i64) -> Option<i64> {
    if segment_ms < 0 || retention_ms < 0 {
        return None;
    }
    segment_ms.checked_add(retention_ms)
}

/// The timing that the level-2 check reads from `__remote_log_metadata`'s raw configs, each
/// missing one at Kafka's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CleanupTiming {
    pub segment_ms: i64,
    /// -1: infinite.
    pub retention_ms: i64,
    pub min_compaction_lag_ms: i64,
    /// [`expected_deletion_ms`] of the two.
    pub expected_deletion_ms: Option<i64>,
}

/// [`CleanupTiming`] of the metadata topic: `segment.ms` (default `log.roll.hours` 168 h),
/// `retention.ms` ([`effective_retention_ms`]), `min.compaction.lag.ms` (default 0).
pub fn cleanup_timing(
    topic: &Configs,
    brokers: &BTreeMap<String, Configs>,
) -> Result<CleanupTiming> {
    let segment_ms = ms_config(topic, "segment.ms")?.unwrap_or(DEFAULT_SEGMENT_MS);
    let retention_ms = effective_retention_ms(topic, brokers)?;
    Ok(CleanupTiming {
        segment_ms,
        retention_ms,
        min_compaction_lag_ms: ms_config(topic, "min.compaction.lag.ms")?.unwrap_or(0),
        expected_deletion_ms: expected_deletion_ms(segment_ms, retention_ms),
    })
}

/// Whether the backfill path (rlmeta's extension of the KIP's tool) may move a topic to level 1
/// without changing its configs: under `cleanup.policy=delete` nothing may expire before every
/// live segment is held by keyed records, so `retention.ms` must be infinite (a finite one
/// expires null-key records of live segments, and the level records too, which would read as
/// level 0 again). A topic already at `compact,delete` (the KIP's level 1) keeps its own guard,
/// `min.compaction.lag.ms`.
pub fn check_backfill_v1(cleanup_policy: &str, retention_ms: i64) -> Result<()> {
    if level_implied_by_cleanup_policy(cleanup_policy)? == MetadataLevel::V0 && retention_ms >= 0 {
        return Err(Error::field(
            ErrorKind::InvalidState,
            "retention.ms",
            format!(
                "__remote_log_metadata has cleanup.policy=delete with retention.ms={retention_ms}: it expires null-key records of \
                 live segments before the backfill holds them, and the level records with them; set retention.ms=-1 first, or \
                 take the KIP's path (--upgrade-to-v1 without --backfill)"
            ),
        ));
    }
    Ok(())
}

/// The remote log metadata managers that read KIP-1266 keys, tombstones and level records
/// without their consumer dying: rlmeta's broker plugin. Stock Kafka 4.4.0's
/// `TopicBasedRemoteLogMetadataManager` is not one (its consumer thread exits on a tombstone).
pub const KIP1266_CAPABLE_MANAGERS: &[&str] = &["dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager"];

/// Whether a broker whose `remote.log.metadata.manager.class.name` is `class_name` may read a
/// topic at level 1 or 2.
pub fn manager_is_kip1266_capable(class_name: &str) -> bool {
    KIP1266_CAPABLE_MANAGERS.contains(&class_name.trim())
}

/// What a host knows of one metadata partition's level record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionLevel {
    /// Read to its end: the last level record's level, `None` when it holds none.
    Read(Option<MetadataLevel>),
    /// Not read to its end yet.
    Unknown,
}

/// The level of the topic on a cluster without the finalized feature: every partition must be
/// read (an unread one makes the level unknown, never 0), and the level is the lowest partition's
/// (a partition without a level record is at 0), since a move writes the partitions one by one
/// and is finished only when the last one has its record.
pub fn topic_level(partitions: &[PartitionLevel]) -> Result<MetadataLevel> {
    let mut lowest = None;
    for (i, p) in partitions.iter().enumerate() {
        let level = match p {
            PartitionLevel::Unknown => {
                return Err(Error::field(
                    ErrorKind::NotInitialized,
                    FEATURE_NAME,
                    format!(
                        "metadata partition {i} has not been read to its end: its level is unknown"
                    ),
                ));
            }
            PartitionLevel::Read(l) => l.unwrap_or(MetadataLevel::V0),
        };
        lowest = Some(lowest.map_or(level, |l: MetadataLevel| l.min(level)));
    }
    lowest.ok_or_else(|| {
        Error::field(
            ErrorKind::NotFound,
            FEATURE_NAME,
            "the metadata topic has no partitions",
        )
    })
}

/// The lowest level a `cleanup.policy` of `__remote_log_metadata` implies: stock Kafka creates
/// the topic with `delete`; only a move to level 1 sets `compact,delete`, and `compact` is level
/// 1's successor. Needed because level 1's own retention expires the level records themselves:
/// once `retention.ms` has passed, a partition's level record is gone while the topic is still
/// at level 1 (or further).
pub fn level_implied_by_cleanup_policy(policy: &str) -> Result<MetadataLevel> {
    Ok(match crate::compaction::CleanupPolicy::parse(policy)? {
        crate::compaction::CleanupPolicy::Delete => MetadataLevel::V0,
        _ => MetadataLevel::V1,
    })
}

/// The topic's level on a cluster without the finalized feature, from its partitions' level
/// records and its `cleanup.policy`: the higher of [`topic_level`] and
/// [`level_implied_by_cleanup_policy`].
pub fn topic_level_with_policy(
    partitions: &[PartitionLevel],
    policy: &str,
) -> Result<MetadataLevel> {
    Ok(topic_level(partitions)?.max(level_implied_by_cleanup_policy(policy)?))
}

/// The topic's level when its `cleanup.policy` is not known (the plugin may lack the permission
/// to read topic configs): [`topic_level`] where no policy could raise it (a policy implies at
/// most [`MetadataLevel::V1`]), else `None`: the level waits for the policy.
pub fn topic_level_without_policy(partitions: &[PartitionLevel]) -> Result<Option<MetadataLevel>> {
    let level = topic_level(partitions)?;
    Ok((level >= MetadataLevel::V1).then_some(level))
}

/// The level a broker writes a metadata partition at, and the level the migration tool reads the
/// topic at: one rule for both. `finalized` is the cluster's finalized
/// `remote.log.metadata.version` (`None`: the cluster finalizes none); `partitions` what the host
/// read of the level records (one partition for the plugin, every partition for the tool);
/// `cleanup_policy` the topic's policy, `None` when not read (yet, or not permitted).
/// `Ok(None)` is "unknown": the caller must not write (an unknown level is never 0).
/// 1. A finalized level decides alone (a Kafka with KIP-1266 keeps the level in the feature).
/// 2. Otherwise the level records and the policy decide ([`topic_level_with_policy`]); a
///    partition not read to its end makes the level unknown, and without the policy only a level
///    record of 1 or more decides ([`topic_level_without_policy`]).
///
/// "Supported but not finalized" (the brokers know the feature, nobody finalized it: Kafka's
/// level 0) is case 2, not an implied 0: on any topic that only Kafka ever managed it gives the
/// same 0 (no level records, `cleanup.policy=delete`), and where rlmeta already moved the topic
/// (records or policy at 1 or 2, before the cluster learnt the feature) the level it reached
/// stands, since a level never goes down ([`MetadataLevel::check_upgrade`]) and level 0's
/// null-key records would be refused by a compacted topic. The tool then finalizes the feature
/// from that level.
pub fn write_level(
    finalized: Option<i16>,
    partitions: &[PartitionLevel],
    cleanup_policy: Option<&str>,
) -> Result<Option<MetadataLevel>> {
    if let Some(l) = finalized {
        return MetadataLevel::from_level(l).map(Some);
    }
    if partitions.contains(&PartitionLevel::Unknown) {
        return Ok(None);
    }
    match cleanup_policy {
        Some(p) => topic_level_with_policy(partitions, p).map(Some),
        None => topic_level_without_policy(partitions),
    }
}

/// How a broker creates `__remote_log_metadata` when it does not exist ([`fresh_topic_plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreshTopicPlan {
    /// The level the new topic starts at.
    pub level: MetadataLevel,
    /// The topic configs to create it with (`name`, `value`).
    pub configs: Vec<(&'static str, String)>,
    /// The level record value to write to every partition once created; `None` when the
    /// finalized feature carries the level.
    pub level_record: Option<&'static [u8]>,
}

/// The plan for a fresh `__remote_log_metadata`: a fresh topic holds no null-key record, so it
/// starts at [`MetadataLevel::LATEST`], unless the cluster finalizes a level (then that level,
/// which the writes will follow). Its configs are that level's [`MetadataLevel::topic_configs`]
/// (overrides to remove are simply not set; level 1 with the KIP tool's defaults), plus
/// `remote.storage.enable=false` (the metadata topic is never tiered) and, at level 0 only,
/// `retention.ms` = `metadata_topic_retention_ms` (`remote.log.metadata.topic.retention.ms`,
/// as Kafka's own manager creates its topic; at levels 1 and 2 the level decides retention).
/// Level records go to every partition where no finalized feature carries the level.
pub fn fresh_topic_plan(
    finalized: Option<i16>,
    metadata_topic_retention_ms: i64,
) -> Result<FreshTopicPlan> {
    let level = match finalized {
        Some(l) => MetadataLevel::from_level(l)?,
        None => MetadataLevel::LATEST,
    };
    let mut configs: Vec<(&'static str, String)> = level
        .topic_configs(DEFAULT_V1_RETENTION_MS, DEFAULT_V1_SEGMENT_MS)
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect();
    if level == MetadataLevel::V0 {
        configs.push(("retention.ms", metadata_topic_retention_ms.to_string()));
    }
    configs.push(("remote.storage.enable", "false".into()));
    Ok(FreshTopicPlan {
        level,
        configs,
        level_record: finalized.is_none().then(|| level_record_value(level)),
    })
}

/// What a move of the topic to a level writes ([`level_move`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LevelMove {
    /// Finalize the feature at this level (the cluster's brokers support it).
    Finalize(MetadataLevel),
    /// Write the level record to these metadata partitions (by index; the others have it).
    Records(Vec<usize>),
    /// Nothing: the level is already reached where the cluster keeps it.
    Done,
}

/// Where a move to `target` sets the level: the finalized feature where the cluster's brokers
/// support it (`feature_supported`; finalizing it makes [`write_level`] follow it), else the
/// level record in every partition lacking one of `target` or more ([`partitions_missing_level`]).
/// Each step is skipped when done, so an interrupted move resumes.
pub fn level_move(
    feature_supported: bool,
    finalized: Option<i16>,
    partitions: &[PartitionLevel],
    target: MetadataLevel,
) -> Result<LevelMove> {
    if feature_supported {
        let current = finalized.map(MetadataLevel::from_level).transpose()?;
        return Ok(match current {
            Some(l) if l >= target => LevelMove::Done,
            _ => LevelMove::Finalize(target),
        });
    }
    let missing = partitions_missing_level(partitions, target);
    Ok(if missing.is_empty() {
        LevelMove::Done
    } else {
        LevelMove::Records(missing)
    })
}

/// The metadata partitions that still need the level record of `target` (a move interrupted
/// part-way resumes by writing only these).
pub fn partitions_missing_level(
    partitions: &[PartitionLevel],
    target: MetadataLevel,
) -> Vec<usize> {
    partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| !matches!(p, PartitionLevel::Read(Some(l)) if *l >= target))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use MetadataLevel::*;

    #[test]
    fn without_the_policy_only_a_level_record_of_1_or_more_decides() {
        use PartitionLevel::*;
        assert_eq!(
            topic_level_without_policy(&[Read(Some(V2))]).ok(),
            Some(Some(V2))
        );
        assert_eq!(
            topic_level_without_policy(&[Read(Some(V1))]).ok(),
            Some(Some(V1))
        );
        assert_eq!(
            topic_level_without_policy(&[Read(Some(V0))]).ok(),
            Some(None)
        );
        assert_eq!(topic_level_without_policy(&[Read(None)]).ok(), Some(None));
    }

    #[test]
    fn topic_level_is_the_lowest_partition_and_unread_is_unknown() {
        use PartitionLevel::*;
        assert_eq!(topic_level(&[Read(Some(V1)), Read(None)]).ok(), Some(V0));
        assert_eq!(
            topic_level(&[Read(Some(V1)), Read(Some(V2))]).ok(),
            Some(V1)
        );
        assert_eq!(
            topic_level(&[Read(Some(V1)), Unknown])
                .err()
                .map(|e| e.kind()),
            Some(ErrorKind::NotInitialized)
        );
        assert_eq!(
            partitions_missing_level(&[Read(Some(V1)), Read(None), Read(Some(V2))], V1),
            vec![1]
        );
        assert!(manager_is_kip1266_capable(
            "dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager"
        ));
        assert!(!manager_is_kip1266_capable(
            "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager"
        ));
    }

    #[test]
    fn levels_and_moves() {
        assert_eq!(MetadataLevel::from_level(2).ok(), Some(V2));
        assert_eq!(
            MetadataLevel::from_level(3).err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument)
        );
        assert!(V0.check_upgrade(V1, false).is_ok());
        assert!(V1.check_upgrade(V2, false).is_ok());
        assert!(V2.check_upgrade(V2, false).is_ok());
        assert_eq!(
            V0.check_upgrade(V2, false).err().map(|e| e.kind()),
            Some(ErrorKind::InvalidState)
        );
        assert!(V0.check_upgrade(V2, true).is_ok());
        assert_eq!(
            V2.check_upgrade(V1, true).err().map(|e| e.kind()),
            Some(ErrorKind::InvalidState)
        );
        assert!(!V0.allows_tombstones() && !V0.writes_kip1266_values());
        assert!(V1.allows_tombstones() && V2.writes_kip1266_values());
    }

    #[test]
    fn level_record_round_trips_and_refuses_anything_else() {
        for l in MetadataLevel::ALL {
            let v = level_record_value(l);
            assert_eq!(
                parse_level_record(Some(LEVEL_RECORD_KEY), Some(v)).map(|r| r.ok()),
                Some(Some(l))
            );
        }
        assert_eq!(parse_level_record(Some(b"other"), Some(b"1")), None);
        assert_eq!(parse_level_record(None, Some(b"1")), None);
        for bad in [&b"3"[..], b"", b"01", b" 1", b"2\n", b"-1"] {
            let e = parse_level_record(Some(LEVEL_RECORD_KEY), Some(bad)).and_then(|r| r.err());
            assert_eq!(
                e.map(|e| e.kind()),
                Some(ErrorKind::InvalidRecord),
                "{bad:?}"
            );
        }
        let tomb = parse_level_record(Some(LEVEL_RECORD_KEY), None).and_then(|r| r.err());
        assert_eq!(tomb.map(|e| e.code()), Some(13));
        // No key Kafka's planner writes can be taken for the level key.
        assert!(crate::RecordKey::parse_bytes(LEVEL_RECORD_KEY).is_err());
    }

    #[test]
    fn cleaner_presets_are_the_level_configs_over_kafkas_defaults() {
        let v1 = V1.cleaner_config(DEFAULT_V1_RETENTION_MS, DEFAULT_V1_SEGMENT_MS);
        assert_eq!(v1.cleanup_policy, CleanupPolicy::CompactDelete);
        assert_eq!(
            (v1.retention_ms, v1.min_compaction_lag_ms),
            (1_209_600_000, 1_209_600_000)
        );
        assert_eq!(
            (v1.segment_ms, v1.delete_retention_ms),
            (86_400_000, 86_400_000)
        );
        let v2 = V2.cleaner_config(DEFAULT_V1_RETENTION_MS, DEFAULT_V1_SEGMENT_MS);
        assert_eq!(v2, TopicConfig::compacted());
        let v0 = V0.cleaner_config(DEFAULT_V1_RETENTION_MS, DEFAULT_V1_SEGMENT_MS);
        assert_eq!(
            (v0.cleanup_policy, v0.retention_ms),
            (CleanupPolicy::Delete, -1)
        );
        assert_eq!(v0.segment_ms, 604_800_000);
    }

    #[test]
    fn topic_configs_follow_the_kip() {
        let v1 = V1.topic_configs(DEFAULT_V1_RETENTION_MS, DEFAULT_V1_SEGMENT_MS);
        assert!(v1.contains(&("cleanup.policy", Some("compact,delete".into()))));
        assert!(v1.contains(&("min.compaction.lag.ms", Some("1209600000".into()))));
        assert!(V2.topic_configs(0, 0).contains(&("retention.ms", None)));
    }

    #[test]
    fn readiness_estimates_cleanup_like_the_kip_tool() {
        let scan = NullKeyScan {
            null_key_records: 4,
            last_null_key_timestamp_ms: Some(1_780_448_357_367),
        };
        assert_eq!(
            scan.readiness(86_400_000, 600_000),
            Readiness::Wait {
                null_key_records: 4,
                estimated_cleanup_ms: Some(1_780_448_357_367 + 86_400_000 + 600_000)
            }
        );
        assert_eq!(
            scan.readiness(86_400_000, -1),
            Readiness::Wait {
                null_key_records: 4,
                estimated_cleanup_ms: None
            }
        );
        assert_eq!(
            NullKeyScan {
                null_key_records: 0,
                last_null_key_timestamp_ms: None
            }
            .readiness(1, 1),
            Readiness::Ready
        );
    }

    #[test]
    fn v1_retention_must_outlive_every_tiered_topic() {
        let day = 86_400_000;
        assert_eq!(
            safe_v1_retention_ms(&[7 * day, 30 * day], 3_600_000).ok(),
            Some(30 * day + 3_600_000)
        );
        assert_eq!(
            safe_v1_retention_ms(&[7 * day, -1], 0)
                .err()
                .map(|e| e.kind()),
            Some(ErrorKind::InvalidState)
        );
        assert_eq!(
            check_v1_retention(14 * day, &[30 * day], 0, false)
                .err()
                .map(|e| e.kind()),
            Some(ErrorKind::InvalidState)
        );
        assert!(check_v1_retention(14 * day, &[30 * day], 0, true).is_ok());
        assert!(check_v1_retention(31 * day, &[30 * day], 0, false).is_ok());
    }

    #[test]
    fn the_backfill_path_keeps_configs_only_where_nothing_expires() {
        assert!(check_backfill_v1("delete", -1).is_ok());
        assert!(check_backfill_v1("compact,delete", 1000).is_ok());
        let e = check_backfill_v1("delete", 604_800_000).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidState);
        assert!(e.to_string().contains("retention.ms=604800000"), "{e}");
        assert_eq!(
            check_backfill_v1("bogus", -1).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }

    fn configs(pairs: &[(&str, &str)]) -> Configs {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn named(list: &[(&str, Configs)]) -> BTreeMap<String, Configs> {
        list.iter()
            .map(|(n, c)| (n.to_string(), c.clone()))
            .collect()
    }

    #[test]
    fn write_level_finalized_wins_else_records_and_policy() {
        use PartitionLevel::*;
        // a finalized feature decides alone, whatever the records say
        assert_eq!(
            write_level(Some(1), &[Read(Some(V2))], None).ok(),
            Some(Some(V1))
        );
        assert_eq!(
            write_level(Some(0), &[Unknown], Some("compact")).ok(),
            Some(Some(V0))
        );
        assert_eq!(
            write_level(Some(3), &[], None).err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument)
        );
        // none finalized (stock 4.4.0, or supported but not finalized): records and policy
        assert_eq!(
            write_level(None, &[Read(None)], Some("delete")).ok(),
            Some(Some(V0))
        );
        assert_eq!(
            write_level(None, &[Read(None)], Some("compact,delete")).ok(),
            Some(Some(V1))
        );
        assert_eq!(
            write_level(None, &[Read(Some(V2))], Some("compact")).ok(),
            Some(Some(V2))
        );
        // supported-not-finalized on a topic rlmeta moved to 2: stays 2, never an implied 0
        assert_eq!(
            write_level(None, &[Read(Some(V2)), Read(Some(V2))], Some("compact")).ok(),
            Some(Some(V2))
        );
        // unknown: an unread partition, or no policy and no record of 1+
        assert_eq!(
            write_level(None, &[Read(Some(V2)), Unknown], Some("compact")).ok(),
            Some(None)
        );
        assert_eq!(write_level(None, &[Read(None)], None).ok(), Some(None));
        assert_eq!(
            write_level(None, &[Read(Some(V1))], None).ok(),
            Some(Some(V1))
        );
        assert_eq!(
            write_level(None, &[Read(None)], Some("retain"))
                .err()
                .map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument)
        );
    }

    #[test]
    fn fresh_topic_plan_follows_the_level_configs() {
        let p = fresh_topic_plan(None, -1).unwrap();
        assert_eq!(p.level, V2);
        assert_eq!(
            p.configs,
            vec![
                ("cleanup.policy", "compact".into()),
                ("remote.storage.enable", "false".into())
            ]
        );
        assert!(!p.configs.iter().any(|(k, _)| *k == "retention.ms"));
        assert_eq!(p.level_record, Some(&b"2"[..]));
        let p0 = fresh_topic_plan(Some(0), -1).unwrap();
        assert_eq!(p0.level, V0);
        assert!(p0.configs.contains(&("cleanup.policy", "delete".into())));
        assert!(p0.configs.contains(&("retention.ms", "-1".into())));
        assert_eq!(p0.level_record, None);
        let p1 = fresh_topic_plan(Some(1), -1).unwrap();
        assert!(p1.configs.contains(&("retention.ms", "1209600000".into())));
        assert!(fresh_topic_plan(Some(7), -1).is_err());
    }

    #[test]
    fn retention_safety_uses_kafkas_defaults() {
        let day = 86_400_000;
        let tiered = |r: &str| configs(&[("remote.storage.enable", "true"), ("retention.ms", r)]);
        // no broker described: task interval 30 s (RemoteLogManagerConfig
        // DEFAULT_REMOTE_LOG_MANAGER_TASK_INTERVAL_MS), so 30 days exactly is not enough
        let topics = named(&[
            ("a", tiered(&(30 * day).to_string())),
            ("b", configs(&[("retention.ms", "-1")])), // not tiered
            (METADATA_TOPIC, tiered("-1")),            // the metadata topic itself
        ]);
        let none = BTreeMap::new();
        let v = v1_retention_safety(30 * day, &topics, &none).unwrap();
        assert_eq!(
            (v.margin_ms, v.safe_ms, v.safe),
            (30_000, Some(30 * day + 30_000), false)
        );
        assert_eq!(v.tiered.len(), 1);
        assert!(
            v.reasons[0].contains("topic a keeps its segments 2592000000 ms"),
            "{:?}",
            v.reasons
        );
        assert!(
            v.reasons[0].contains("needs at least 2592030000 ms"),
            "{:?}",
            v.reasons
        );
        assert!(
            v1_retention_safety(30 * day + 30_000, &topics, &none)
                .unwrap()
                .safe
        );
        // a broker that leaves the interval unset is at the default; the longest one counts
        let brokers = named(&[
            ("1", configs(&[])),
            (
                "2",
                configs(&[("remote.log.manager.task.interval.ms", "60000")]),
            ),
        ]);
        assert_eq!(
            v1_retention_safety(0, &topics, &brokers).unwrap().margin_ms,
            60_000
        );
        // without retention.ms: log.retention.ms, then .minutes, then .hours (default 168 h,
        // ServerLogConfigs LOG_RETENTION_HOURS_DEFAULT)
        let bare = named(&[("t", configs(&[("remote.storage.enable", "TRUE")]))]);
        let s = |b: &BTreeMap<String, Configs>| v1_retention_safety(0, &bare, b).unwrap().safe_ms;
        assert_eq!(s(&none), Some(7 * day + 30_000));
        assert_eq!(
            s(&named(&[("1", configs(&[("log.retention.hours", "24")]))])),
            Some(day + 30_000)
        );
        assert_eq!(
            s(&named(&[(
                "1",
                configs(&[
                    ("log.retention.minutes", "60"),
                    ("log.retention.hours", "24")
                ])
            )])),
            Some(3_600_000 + 30_000)
        );
        assert_eq!(
            s(&named(&[(
                "1",
                configs(&[
                    ("log.retention.ms", "1000"),
                    ("log.retention.minutes", "60")
                ])
            )])),
            Some(1000 + 30_000)
        );
        assert_eq!(
            s(&named(&[("1", configs(&[("log.retention.ms", "-1")]))])),
            None
        );
        // retention.bytes bounds size, not age: infinite time retention stays unsafe, named
        let by_size = named(&[(
            "s",
            configs(&[
                ("remote.storage.enable", "true"),
                ("retention.ms", "-1"),
                ("retention.bytes", "1073741824"),
            ]),
        )]);
        let v = v1_retention_safety(365 * day, &by_size, &none).unwrap();
        assert!(!v.safe && v.safe_ms.is_none());
        assert!(
            v.reasons
                .iter()
                .any(|r| r.contains("retention.bytes=1073741824")),
            "{:?}",
            v.reasons
        );
        let e = check_v1_retention_configs(365 * day, &by_size, &none, false).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidState);
        assert!(check_v1_retention_configs(365 * day, &by_size, &none, true).is_ok());
        assert_eq!(
            check_v1_retention_configs(-1, &topics, &none, false)
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidArgument
        );
        let bad = named(&[(
            "x",
            configs(&[("remote.storage.enable", "true"), ("retention.ms", "soon")]),
        )]);
        assert_eq!(
            v1_retention_safety(0, &bad, &none).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }

    #[test]
    fn cleanup_estimate_sums_before_rounding_and_knows_infinity() {
        let half_day = 43_200_000;
        assert_eq!(expected_deletion_ms(half_day, half_day), Some(86_400_000));
        assert_eq!(expected_deletion_ms(half_day, -1), None);
        assert_eq!(expected_deletion_ms(i64::MAX, 1), None);
        let none = BTreeMap::new();
        let t = cleanup_timing(
            &configs(&[("retention.ms", "1209600000"), ("segment.ms", "86400000")]),
            &none,
        )
        .unwrap();
        assert_eq!(t.expected_deletion_ms, Some(1_296_000_000));
        assert_eq!(t.min_compaction_lag_ms, 0);
        let d = cleanup_timing(&configs(&[]), &none).unwrap();
        assert_eq!(
            (d.segment_ms, d.retention_ms),
            (DEFAULT_SEGMENT_MS, DEFAULT_LOG_RETENTION_MS)
        );
        let inf = cleanup_timing(&configs(&[("retention.ms", "-1")]), &none).unwrap();
        assert_eq!((inf.retention_ms, inf.expected_deletion_ms), (-1, None));
    }

    #[test]
    fn a_move_finalizes_where_supported_else_writes_missing_records() {
        use PartitionLevel::*;
        let parts = [Read(Some(V1)), Read(None), Read(Some(V2))];
        assert_eq!(
            level_move(true, None, &parts, V1).ok(),
            Some(LevelMove::Finalize(V1))
        );
        assert_eq!(
            level_move(true, Some(1), &parts, V1).ok(),
            Some(LevelMove::Done)
        );
        assert_eq!(
            level_move(true, Some(1), &parts, V2).ok(),
            Some(LevelMove::Finalize(V2))
        );
        assert_eq!(
            level_move(false, None, &parts, V1).ok(),
            Some(LevelMove::Records(vec![1]))
        );
        assert_eq!(
            level_move(false, None, &parts[2..], V2).ok(),
            Some(LevelMove::Done)
        );
        assert!(level_move(true, Some(9), &parts, V2).is_err());
    }
}
