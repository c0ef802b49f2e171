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

/// The feature's name in KRaft's finalized features.
pub const FEATURE_NAME: &str = "remote.log.metadata.version";

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

    /// The level a cluster's finalized features say, where `None` (the feature is absent from
    /// a known feature set) means level 0. An unknown feature set (`FinalizedFeaturesEpoch` -1,
    /// KIP-1170) is not level 0: callers must not call this without a known set.
    pub fn from_finalized(level: Option<i16>) -> Result<MetadataLevel> {
        level.map_or(Ok(MetadataLevel::V0), MetadataLevel::from_level)
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
        let estimated_cleanup_ms = match self.last_null_key_timestamp_ms {
            Some(ts) if retention_ms >= 0 && segment_ms >= 0 => ts
                .checked_add(segment_ms)
                .and_then(|t| t.checked_add(retention_ms)),
            _ => None,
        };
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
        assert_eq!(MetadataLevel::from_finalized(None).ok(), Some(V0));
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
}
