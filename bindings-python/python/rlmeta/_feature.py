"""The feature ``remote.log.metadata.version`` (KIP-1266 levels 0, 1, 2) over the core's ``feature``.

Owns: the IntEnum and dataclasses. Never: a rule; the configs of each level, legal moves, the
level record, the write level and the fresh-topic plan, the readiness verdict and cleanup estimate,
the keyed-records verification before level 2, the safe level-1 retention (from raw configs) and which
managers are KIP-1266-capable are the core's.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from . import _native
from ._model import SegmentState, TopicIdPartition

__all__ = [
    "FEATURE_NAME",
    "DEFAULT_V1_RETENTION_MS",
    "DEFAULT_V1_SEGMENT_MS",
    "LEVEL_RECORD_KEY",
    "MetadataLevel",
    "Readiness",
    "PartitionLevel",
    "readiness",
    "safe_v1_retention_ms",
    "check_v1_retention",
    "check_backfill_v1",
    "manager_is_kip1266_capable",
    "kip1266_capable_managers",
    "level_record",
    "parse_level_record",
    "topic_level",
    "topic_level_with_policy",
    "write_level",
    "level_move",
    "FreshTopicPlan",
    "fresh_topic_plan",
    "RetentionSafety",
    "check_v1_retention_configs",
    "CleanupTiming",
    "cleanup_timing",
    "expected_deletion_ms",
    "partitions_missing_level",
    "UnheldSegment",
    "KeyedVerdict",
    "SupersededSegment",
    "verify_keyed",
    "keyed_verdict",
]

# The feature's name and the KIP tool's level-1 defaults (14 days, 1 day): the core's (_tables.py).
from ._tables import DEFAULT_V1_RETENTION_MS, DEFAULT_V1_SEGMENT_MS, FEATURE_NAME  # noqa: E402
LEVEL_RECORD_KEY: bytes = _native.level_record_key()


class MetadataLevel(IntEnum):
    V0 = 0
    V1 = 1
    V2 = 2

    def topic_configs(
        self, v1_retention_ms: int = DEFAULT_V1_RETENTION_MS, v1_segment_ms: int = DEFAULT_V1_SEGMENT_MS
    ) -> Dict[str, Optional[str]]:
        """The ``__remote_log_metadata`` configs of this level; None: remove the override."""
        return dict(_native.level_topic_configs(int(self), v1_retention_ms, v1_segment_ms))

    def check_upgrade(self, to: "MetadataLevel", fresh_cluster: bool = False) -> None:
        """Raises InvalidStateError unless moving to ``to`` is legal."""
        _native.check_upgrade(int(self), int(to), fresh_cluster)

    @property
    def writes_kip1266_values(self) -> bool:
        return _native.level_properties(int(self))[0]

    @property
    def allows_tombstones(self) -> bool:
        return _native.level_properties(int(self))[1]


@dataclass(frozen=True)
class Readiness:
    """The level-2 readiness verdict of a null-key scan."""

    ready: bool
    null_key_records: int
    #: last null-key timestamp + segment.ms + retention.ms, when retention is finite.
    estimated_cleanup_ms: Optional[int]


def readiness(null_key_records: int, last_null_key_timestamp_ms: Optional[int], segment_ms: int, retention_ms: int) -> Readiness:
    return Readiness(*_native.readiness(null_key_records, last_null_key_timestamp_ms, segment_ms, retention_ms))


def safe_v1_retention_ms(tiered_retention_ms: Sequence[int], margin_ms: int = 0) -> int:
    """The smallest level-1 retention that deletes no keyed record of a live segment."""
    return _native.safe_v1_retention_ms(list(tiered_retention_ms), margin_ms)


def check_v1_retention(requested_ms: int, tiered_retention_ms: Sequence[int], margin_ms: int = 0, force: bool = False) -> None:
    """Raises (InvalidStateError with the safe value) for an unsafe level-1 retention unless ``force``."""
    _native.check_v1_retention(requested_ms, list(tiered_retention_ms), margin_ms, force)


def check_backfill_v1(cleanup_policy: str, retention_ms: int) -> None:
    """Raises (InvalidStateError) when the backfill path cannot keep the topic's configs at level 1:
    ``delete`` with a finite retention expires null-key records before the backfill holds them."""
    _native.check_backfill_v1(cleanup_policy, retention_ms)


def manager_is_kip1266_capable(class_name: str) -> bool:
    return _native.manager_is_kip1266_capable(class_name)


def kip1266_capable_managers() -> List[str]:
    return list(_native.kip1266_capable_managers())


def level_record(level: int) -> Tuple[bytes, bytes]:
    """The ``(key, value)`` of the level record (docs/FEATURE-LEVEL.md)."""
    return LEVEL_RECORD_KEY, _native.level_record_value(int(level))


def parse_level_record(key: Optional[bytes], value: Optional[bytes]) -> Optional[MetadataLevel]:
    """The level a level record carries; None for any other record; raises for an invalid one."""
    level = _native.parse_level_record(key, value)
    return None if level is None else MetadataLevel(level)


@dataclass(frozen=True)
class PartitionLevel:
    """What a host knows of a metadata partition's level record."""

    read_to_end: bool
    level: Optional[MetadataLevel] = None


def _levels(partitions: Sequence[PartitionLevel]) -> List[Tuple[bool, Optional[int]]]:
    return [(p.read_to_end, None if p.level is None else int(p.level)) for p in partitions]


def topic_level(partitions: Sequence[PartitionLevel]) -> MetadataLevel:
    """The topic's level without the finalized feature: the lowest partition's; raises
    NotInitializedError while a partition is unread."""
    return MetadataLevel(_native.topic_level(_levels(partitions)))


def topic_level_with_policy(partitions: Sequence[PartitionLevel], cleanup_policy: str) -> MetadataLevel:
    """The topic's level from its level records and its ``cleanup.policy`` (level 1's retention
    expires the level records themselves, so ``compact,delete`` alone means level 1)."""
    return MetadataLevel(_native.topic_level_with_policy(_levels(partitions), cleanup_policy))


def write_level(
    finalized: Optional[int], partitions: Sequence[PartitionLevel], cleanup_policy: Optional[str]
) -> Optional[MetadataLevel]:
    """The level the broker plugin writes at and the tool reads (the core's one rule; None:
    unknown): a finalized level decides alone; else the level records and ``cleanup.policy``
    (a feature the brokers support but nobody finalized is "none finalized")."""
    level = _native.write_level(finalized, _levels(partitions), cleanup_policy)
    return None if level is None else MetadataLevel(level)


def level_move(
    feature_supported: bool, finalized: Optional[int], partitions: Sequence[PartitionLevel], target: int
) -> Tuple[Optional[MetadataLevel], List[int]]:
    """Where a move to ``target`` sets the level (the core's rule): the level to finalize the
    feature at where the brokers support it, else the partitions (by index) that need the level
    record; ``(None, [])`` when done."""
    finalize, records = _native.level_move(feature_supported, finalized, _levels(partitions), int(target))
    return (None if finalize is None else MetadataLevel(finalize)), list(records)


@dataclass(frozen=True)
class FreshTopicPlan:
    """How a missing ``__remote_log_metadata`` is created (the plugin's plan, from the core)."""

    level: MetadataLevel
    configs: Dict[str, str]
    #: The level record value every partition gets; None when the finalized feature carries it.
    level_record: Optional[bytes]


def fresh_topic_plan(finalized: Optional[int], metadata_topic_retention_ms: int = -1) -> FreshTopicPlan:
    level, configs, record = _native.fresh_topic_plan(finalized, metadata_topic_retention_ms)
    return FreshTopicPlan(MetadataLevel(level), dict(configs), record)


@dataclass(frozen=True)
class RetentionSafety:
    """The core's verdict on a level-1 ``retention.ms`` from raw topic and broker configs."""

    safe: bool
    #: The smallest safe retention; None when no finite one is.
    safe_ms: Optional[int]
    #: The longest ``remote.log.manager.task.interval.ms`` (Kafka's default 30 s).
    margin_ms: int
    #: Each tiered topic and its effective retention (-1: infinite).
    tiered: Dict[str, int]
    reasons: List[str]


ConfigMaps = Mapping[str, Mapping[str, Optional[str]]]


def check_v1_retention_configs(requested_ms: int, topics: ConfigMaps, brokers: ConfigMaps, force: bool = False) -> RetentionSafety:
    """Raises (InvalidStateError with the reasons) for an unsafe level-1 retention unless ``force``."""
    safe, safe_ms, margin, tiered, reasons = _native.check_v1_retention_configs(
        requested_ms, {k: dict(v) for k, v in topics.items()}, {str(k): dict(v) for k, v in brokers.items()}, force
    )
    return RetentionSafety(safe, safe_ms, margin, dict(tiered), list(reasons))


@dataclass(frozen=True)
class CleanupTiming:
    """``__remote_log_metadata``'s timing for the level-2 check, Kafka's defaults filled in."""

    segment_ms: int
    #: -1: infinite.
    retention_ms: int
    min_compaction_lag_ms: int
    #: segment.ms + retention.ms; None when retention is infinite.
    expected_deletion_ms: Optional[int]


def cleanup_timing(topic: Mapping[str, Optional[str]], brokers: ConfigMaps) -> CleanupTiming:
    return CleanupTiming(*_native.cleanup_timing(dict(topic), {str(k): dict(v) for k, v in brokers.items()}))


def expected_deletion_ms(segment_ms: int, retention_ms: int) -> Optional[int]:
    """segment.ms + retention.ms (summed before any rounding); None when retention is infinite."""
    return _native.expected_deletion_ms(segment_ms, retention_ms)


def partitions_missing_level(partitions: Sequence[PartitionLevel], target: int) -> List[int]:
    """The metadata partitions that still need the level record of ``target``."""
    return list(_native.partitions_missing_level(_levels(partitions), int(target)))


@dataclass(frozen=True)
class UnheldSegment:
    """A segment whose current state keyed records do not hold (the core's ``keyed::UnheldSegment``)."""

    partition: TopicIdPartition
    segment_id: str
    #: ``lost`` (held only by null-key records), ``stale-state`` (its latest update is null-key),
    #: ``resurrected`` (deleted, but compaction brings it back).
    why: str
    #: Its state in the topic as it is, and once compacted (None: not live there).
    state: Optional[SegmentState]
    held: Optional[SegmentState]
    #: Offsets of the records that name it, and those of them with a null key.
    offsets: Tuple[int, ...]
    null_key_offsets: Tuple[int, ...]


@dataclass(frozen=True)
class SupersededSegment:
    """A finished upload attempt Kafka serves no fetch from: a later attempt on the same key pair
    (``served_by``) serves its range. Compaction drops it; not a failure (the core's
    ``keyed::SupersededSegment``)."""

    partition: TopicIdPartition
    segment_id: str
    start_offset: int
    end_offset: int
    served_by: str
    offsets: Tuple[int, ...]


@dataclass(frozen=True)
class KeyedVerdict:
    """Whether one metadata partition holds every live segment under keyed records."""

    live_segments: int
    records: int
    null_key_records: int
    records_after_compaction: int
    unheld: Tuple[UnheldSegment, ...]
    superseded: Tuple[SupersededSegment, ...] = ()
    #: how many fail, are superseded, and fail each way (``lost``, ``stale-state``,
    #: ``resurrected``): all of them, where ``unheld`` and ``superseded`` may name only the first
    unheld_total: int = 0
    superseded_total: int = 0
    unheld_by_why: Tuple[Tuple[str, int], ...] = ()

    @property
    def holds(self) -> bool:
        return self.unheld_total == 0 and not self.unheld


def verify_keyed(records: Iterable[Tuple[int, int, Optional[bytes], Optional[bytes]]]) -> KeyedVerdict:
    """The core's verdict for one metadata partition's ``(offset, timestamp, key, value)`` records,
    read from its start: replayed as they are, and as Kafka's cleaner could leave them at level 2
    (null-key records dropped, compacted), the same live segments in the same states."""
    return keyed_verdict(_native.verify_keyed(list(records)))


def keyed_verdict(native: Tuple[Any, ...]) -> KeyedVerdict:
    """The :class:`KeyedVerdict` of the binding's tuple (``verify_keyed``, ``PartitionScan.verify``)."""
    live, total, nulls, after, unheld, superseded, unheld_total, superseded_total, by_why = native
    st = lambda s: None if s is None else SegmentState(s)  # noqa: E731
    return KeyedVerdict(live, total, nulls, after, tuple(
        UnheldSegment(TopicIdPartition(tp[1], tp[0], tp[2]), sid, why, st(a), st(b), tuple(o), tuple(n))
        for tp, sid, why, a, b, o, n in unheld
    ), tuple(
        SupersededSegment(TopicIdPartition(tp[1], tp[0], tp[2]), sid, so, eo, by, tuple(o))
        for tp, sid, so, eo, by, o in superseded
    ), unheld_total, superseded_total, tuple(by_why))
