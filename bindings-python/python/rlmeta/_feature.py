"""The feature ``remote.log.metadata.version`` (KIP-1266 levels 0, 1, 2) over the core's ``feature``.

Owns: the IntEnum and dataclasses. Never: a rule; the configs of each level, legal moves, the
level record, the readiness verdict and cleanup estimate, the safe level-1 retention and which
managers are KIP-1266-capable are the core's.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Dict, List, Optional, Sequence, Tuple

from . import _native

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
    "manager_is_kip1266_capable",
    "kip1266_capable_managers",
    "level_record",
    "parse_level_record",
    "topic_level",
    "topic_level_with_policy",
    "partitions_missing_level",
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


def partitions_missing_level(partitions: Sequence[PartitionLevel], target: int) -> List[int]:
    """The metadata partitions that still need the level record of ``target``."""
    return list(_native.partitions_missing_level(_levels(partitions), int(target)))
