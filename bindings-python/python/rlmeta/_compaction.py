"""Kafka's log cleaner and retention in memory, and the growth projection, over the core's
``compaction`` and ``projection``.

Owns: the dataclasses. Never: what the cleaner keeps or how the topic grows; those are the core's.
"""

from __future__ import annotations

import os

from dataclasses import dataclass
from typing import Any, Iterable, List, Optional, Sequence, Tuple

from . import _native
from ._tables import LEVEL_PRESETS

__all__ = [
    "TopicConfig",
    "CompactionLog",
    "CompactionPreview",
    "preview_compaction",
    "preview_compaction_files",
    "preview_compaction_paths",
    "preview_compaction_paths_at",
    "GrowthPoint",
    "project_growth",
    "normalize_cleanup_policy",
]


def normalize_cleanup_policy(text: str) -> str:
    """Kafka's spelling of a ``cleanup.policy`` value; raises InvalidArgumentError otherwise."""
    return _native.cleanup_policy_name(text)


_COMPACTED = LEVEL_PRESETS[2]


@dataclass(frozen=True)
class TopicConfig:
    """The configs the cleaner and retention follow (Kafka's defaults for a compacted topic, the
    core's level-2 preset)."""

    cleanup_policy: str = _COMPACTED["cleanup_policy"]
    retention_ms: int = _COMPACTED["retention_ms"]
    min_compaction_lag_ms: int = _COMPACTED["min_compaction_lag_ms"]
    delete_retention_ms: int = _COMPACTED["delete_retention_ms"]
    segment_ms: int = _COMPACTED["segment_ms"]
    #: Records per segment before a roll (stands in for ``segment.bytes``).
    segment_records: int = 2**62

    @classmethod
    def for_level(cls, level: int, **changes: int) -> "TopicConfig":
        """What the cleaner follows at a ``remote.log.metadata.version`` level (the core's presets)."""
        return cls(**{**LEVEL_PRESETS[int(level)], **changes})


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
class CompactionPreview:
    """What retention and the cleaner keep of a log at one moment (the core's ``CompactionPreview``)."""

    records_before: int
    bytes_before: int
    records_after: int
    bytes_after: int
    null_keys_dropped: int
    live_before: int
    #: Live segments a broker replaying the cleaned log would no longer know.
    lost: Tuple[str, ...]


def _config_args(c: TopicConfig) -> tuple:
    return (c.cleanup_policy, c.retention_ms, c.min_compaction_lag_ms, c.delete_retention_ms, c.segment_ms, c.segment_records)


def _preview(t: tuple) -> CompactionPreview:
    return CompactionPreview(*t[:6], tuple(t[6]))


def preview_compaction_files(files: Sequence[bytes], config: TopicConfig, now_ms: int) -> CompactionPreview:
    """The core's model over one metadata partition's segment files (offset order): records up to
    each file's first corrupt batch, sized as in their batches, cleaned at ``now_ms`` as if a
    record arrived then (so the active segment rolls once ``segment.ms`` has passed)."""
    return _preview(_native.preview_compaction_files([bytes(f) for f in files], _config_args(config), now_ms))


def preview_compaction_paths(paths: Sequence["os.PathLike[str] | str"], config: TopicConfig, now_ms: int) -> CompactionPreview:
    """:func:`preview_compaction_files` of the files at ``paths``, read by the binding in chunks,
    once per pass of the core's streamed model (GIL released): memory bounded by the keys of the
    range the cleaner would clean and the live segments, not by the files."""
    return preview_compaction_paths_at(paths, config, [now_ms])[0]


def preview_compaction_paths_at(paths: Sequence["os.PathLike[str] | str"], config: TopicConfig,
                                moments: Sequence[int]) -> List[CompactionPreview]:
    """:func:`preview_compaction_paths` at each of ``moments``, every moment's model fed from the
    same reads of the files (two in all, not two per moment): fewer reads, but the models (each
    the keys it maps) are held at once."""
    return [_preview(t) for t in _native.preview_compaction_paths([os.fspath(p) for p in paths], _config_args(config),
                                                                  list(moments))]


def preview_compaction(
    records: Iterable[Tuple[int, int, Optional[bytes], Optional[bytes]]], config: TopicConfig, now_ms: int
) -> CompactionPreview:
    """:func:`preview_compaction_files` over ``(offset, timestamp, key, value)`` records read from a
    cluster; a record's size is its key and value bytes."""
    return _preview(_native.preview_compaction(list(records), _config_args(config), now_ms))


def preview_compaction_fetched(log: Any, config: TopicConfig, moments: Sequence[int]) -> List[CompactionPreview]:
    """:func:`preview_compaction` at each of ``moments`` of one metadata partition kept by the
    core from a live topic's raw fetches (``_native.FetchedLog``: their whole record batches,
    read again for each pass of the core's streamed model): the records a consumer reads up to
    the end offset, each sized as its key and value bytes."""
    return [_preview(t) for t in log.previews(_config_args(config), list(moments))]


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
