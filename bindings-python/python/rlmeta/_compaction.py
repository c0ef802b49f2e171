"""Kafka's log cleaner and retention in memory, and the growth projection, over the core's
``compaction`` and ``projection``.

Owns: the dataclasses. Never: what the cleaner keeps or how the topic grows; those are the core's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List, Optional, Tuple

from . import _native

__all__ = ["TopicConfig", "CompactionLog", "GrowthPoint", "project_growth", "normalize_cleanup_policy"]


def normalize_cleanup_policy(text: str) -> str:
    """Kafka's spelling of a ``cleanup.policy`` value; raises InvalidArgumentError otherwise."""
    return _native.cleanup_policy_name(text)


@dataclass(frozen=True)
class TopicConfig:
    """The configs the cleaner and retention follow (Kafka's defaults for a compacted topic)."""

    cleanup_policy: str = "compact"
    retention_ms: int = -1
    min_compaction_lag_ms: int = 0
    delete_retention_ms: int = 86_400_000
    segment_ms: int = 604_800_000
    #: Records per segment before a roll (stands in for ``segment.bytes``).
    segment_records: int = 2**62


class CompactionLog:
    """A partition's log, appended to and cleaned as Kafka's cleaner would at a given time."""

    def __init__(self, config: TopicConfig = TopicConfig()) -> None:
        self.config = config
        self._native = _native.CompactionLog(
            config.cleanup_policy,
            config.retention_ms,
            config.min_compaction_lag_ms,
            config.delete_retention_ms,
            config.segment_ms,
            config.segment_records,
        )

    def append(self, timestamp_ms: int, key: Optional[bytes], value: Optional[bytes]) -> int:
        return self._native.append(timestamp_ms, key, value)

    def append_many(self, records: Iterable[Tuple[int, Optional[bytes], Optional[bytes]]]) -> None:
        self._native.append_many(list(records))

    def clean(self, now_ms: int) -> None:
        """Runs retention, then the cleaner, as at ``now_ms``."""
        self._native.clean(now_ms)

    def records(self) -> List[Tuple[int, int, Optional[bytes], Optional[bytes]]]:
        """What remains: ``(offset, timestamp, key, value)``."""
        return self._native.records()

    def __len__(self) -> int:
        return len(self._native)


@dataclass(frozen=True)
class GrowthPoint:
    day: int
    live_segments: int
    append_only_records: int
    append_only_bytes: int
    compacted_records: int
    compacted_bytes: int


def project_growth(
    upload_bytes_per_day: int,
    segment_bytes: int = 1 << 30,
    tiered_retention_ms: int = 30 * 86_400_000,
    user_partitions: int = 64,
    days: int = 365,
    sample_every_days: int = 30,
) -> List[GrowthPoint]:
    """How the topic grows, append-only (level 0) vs compacted (level 2), with the records the
    planner writes for every upload and deletion (key+value bytes)."""
    return [
        GrowthPoint(*p)
        for p in _native.project_growth_points(
            upload_bytes_per_day, segment_bytes, tiered_retention_ms, user_partitions, days, sample_every_days
        )
    ]
