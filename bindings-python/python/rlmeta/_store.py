"""The replay store and the write planner over the core's ``Store``.

Owns: converting the store's answers to frozen dataclasses and IntEnums. Never: a rule; replay,
every query, orphans and what the planner writes are the core's.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable, List, Mapping, Optional, Tuple, Union

from . import _native
from ._model import PartitionDeleteState, SegmentState, TopicIdPartition
from ._tables import OUTCOME_NAMES, OutcomeCode

__all__ = [
    "Outcome",
    "OutcomeCode",
    "SkipKind",
    "Applied",
    "SegmentMetadata",
    "Orphan",
    "PartitionDelete",
    "Planned",
    "Store",
    "PartitionLike",
]

#: A user partition: a :class:`TopicIdPartition` or ``(topic_id, topic, partition)``.
PartitionLike = Union[TopicIdPartition, Tuple[str, str, int]]


def _tp(tp: PartitionLike) -> Tuple[str, str, int]:
    if isinstance(tp, TopicIdPartition):
        return (tp.id, tp.name, tp.partition)
    topic_id, topic, partition = tp
    return (topic_id, topic, partition)


def _tp_out(t: Tuple[str, str, int]) -> TopicIdPartition:
    return TopicIdPartition(name=t[1], id=t[0], partition=t[2])


def _state(v: int, enum: Any) -> Any:
    return enum(v) if v in enum._value2member_map_ else v


class Outcome(str, Enum):
    """What replaying one record did."""

    APPLIED = "applied"
    ORPHANED = "orphaned"
    APPLIED_WITH_BAD_KEY = "applied_with_bad_key"
    SKIPPED = "skipped"


class SkipKind(str, Enum):
    """Why a record changed nothing Kafka's cache answers (the core's ``Skip``)."""

    TOMBSTONE = "tombstone"
    UNDECODABLE = "undecodable"
    SNAPSHOT_RECORD = "snapshot_record"
    LEVEL_RECORD = "level_record"
    BAD_KEY = "bad_key"
    DROPPED = "dropped"
    PARTITION_DELETED = "partition_deleted"
    ALREADY_APPLIED = "already_applied"


@dataclass(frozen=True)
class Applied:
    outcome: Outcome
    skip: Optional[SkipKind]
    #: The tombstone's key, the decode error, the level, the drop reason...
    detail: Optional[str]
    #: Whether this record would have stopped the metadata consumer of a pre-KIP-1266 broker:
    #: what replay skipped for a reason fatal to it, and every value of a KIP-1266 version (1),
    #: applied or not, which it cannot deserialize (the ``*_V1`` codes).
    fatal_to_kafka: bool
    #: The core's error code where the detail is an error.
    error_code: Optional[int]
    #: The core's outcome code (the table every binding shares: Java's ``Outcome``, C's
    #: ``RLMETA_OUTCOME_*``); ``code.name`` and :data:`OUTCOME_NAMES` name it. Finer than
    #: ``outcome``/``skip``: it tells REJECTED (Kafka throws) from DROPPED, and the level.
    code: OutcomeCode

    @classmethod
    def _of(cls, t: Tuple[Any, ...]) -> Applied:
        return cls(Outcome(t[0]), None if t[1] is None else SkipKind(t[1]), t[2], t[3], t[4], OutcomeCode(t[5]))

    @property
    def code_name(self) -> str:
        """The outcome code's stable name ("applied", "rejected", ...), as hosts log and count it."""
        return OUTCOME_NAMES[self.code]


@dataclass(frozen=True)
class SegmentMetadata:
    """A remote segment as Kafka's cache holds it."""

    id: str
    start_offset: int
    end_offset: int
    broker_id: int
    max_timestamp_ms: int
    event_timestamp_ms: int
    #: ``(leader_epoch, start_offset)`` pairs, ascending by epoch.
    leader_epochs: Tuple[Tuple[int, int], ...]
    segment_size_in_bytes: int
    custom_metadata: Optional[bytes]
    state: Union[SegmentState, int]
    txn_index_empty: bool
    broker_leader_epoch: int

    @classmethod
    def _of(cls, t: Tuple[Any, ...]) -> SegmentMetadata:
        return cls(
            t[0], t[1], t[2], t[3], t[4], t[5], tuple(tuple(e) for e in t[6]), t[7],  # type: ignore[misc]
            None if t[8] is None else bytes(t[8]), _state(t[9], SegmentState), t[10], t[11],
        )


@dataclass(frozen=True)
class Orphan:
    """An update whose segment record is missing (kept for deletion retries)."""

    segment_id: str
    state: Union[SegmentState, int]
    end_offset: Optional[int]
    broker_leader_epoch: Optional[int]
    key: Optional[str]
    offset: int

    @classmethod
    def _of(cls, t: Tuple[Any, ...]) -> Orphan:
        return cls(t[0], _state(t[1], SegmentState), t[2], t[3], t[4], t[5])


@dataclass(frozen=True)
class PartitionDelete:
    state: Union[PartitionDeleteState, int]
    broker_id: int
    event_timestamp_ms: int


@dataclass(frozen=True)
class Planned:
    """One record to produce: its key text and value bytes (None: a tombstone)."""

    key: str
    value: Optional[bytes]

    def key_bytes(self) -> bytes:
        return self.key.encode("utf-8")


def _planned(items: List[Tuple[str, Optional[bytes]]]) -> List[Planned]:
    return [Planned(k, None if v is None else bytes(v)) for k, v in items]


class Store:
    """The replayed state of one ``__remote_log_metadata`` partition (Kafka's
    ``RemotePartitionMetadataStore``, and what it drops, reported as data)."""

    def __init__(self) -> None:
        self._native = _native.Store()

    def apply(self, offset: int, key: Optional[bytes], value: Optional[bytes]) -> Applied:
        """Replays one record. Either part may be None (a null key, a tombstone)."""
        return Applied._of(self._native.apply(offset, key, value))

    def apply_many(self, records: Iterable[Tuple[int, Optional[bytes], Optional[bytes]]]) -> List[Applied]:
        """Replays ``(offset, key, value)`` records in order, the GIL released."""
        return [Applied._of(t) for t in self._native.apply_many(list(records))]

    def apply_file(self, data: bytes) -> int:
        """Replays every record of a segment file image; returns how many were read."""
        return self._native.apply_file(bytes(data))

    def apply_path(self, path: "Union[str, os.PathLike[str]]") -> int:
        """:meth:`apply_file` of the file at ``path``, read by the binding in chunks (GIL
        released, no ``bytes`` made of it); OSError if it does not read."""
        return self._native.apply_path(os.fspath(path))

    def apply_fetch(self, window: Any, data: bytes) -> int:
        """Replays the records of one fetch of a live topic (its raw record batches) that
        ``window`` (``_native.FetchWindow``) reads: whole batches only, the partition's start and
        end offsets kept; returns how many. A batch that does not read raises RlmetaError."""
        return self._native.apply_fetch(window, data)

    def load_partition(self, tp: PartitionLike) -> None:
        self._native.load_partition(_tp(tp))

    def mark_initialized(self, tp: PartitionLike) -> bool:
        return self._native.mark_initialized(_tp(tp))

    def segment_for(self, tp: PartitionLike, leader_epoch: int, offset: int) -> Optional[SegmentMetadata]:
        """Kafka's ``remoteLogSegmentMetadata(tp, epoch, offset)``."""
        t = self._native.segment_for(_tp(tp), leader_epoch, offset)
        return None if t is None else SegmentMetadata._of(t)

    def highest_offset_for_epoch(self, tp: PartitionLike, leader_epoch: int) -> Optional[int]:
        return self._native.highest_offset_for_epoch(_tp(tp), leader_epoch)

    def segments(self, tp: PartitionLike) -> List[SegmentMetadata]:
        """Kafka's ``listRemoteLogSegments(tp)``, by start offset."""
        return [SegmentMetadata._of(t) for t in self._native.segments(_tp(tp))]

    def segments_for_epoch(self, tp: PartitionLike, leader_epoch: int) -> List[SegmentMetadata]:
        return [SegmentMetadata._of(t) for t in self._native.segments_for_epoch(_tp(tp), leader_epoch)]

    def next_segment_with_txn_index(self, tp: PartitionLike, leader_epoch: int, offset: int) -> Optional[SegmentMetadata]:
        t = self._native.next_segment_with_txn_index(_tp(tp), leader_epoch, offset)
        return None if t is None else SegmentMetadata._of(t)

    def segment_state(self, tp: PartitionLike, segment_id: str) -> Union[SegmentState, int, None]:
        s = self._native.segment_state(_tp(tp), segment_id)
        return None if s is None else _state(s, SegmentState)

    def partition_delete(self, tp: PartitionLike) -> Optional[PartitionDelete]:
        t = self._native.partition_delete(_tp(tp))
        return None if t is None else PartitionDelete(_state(t[0], PartitionDeleteState), t[1], t[2])

    def orphans(self, tp: PartitionLike) -> List[Orphan]:
        return [Orphan._of(t) for t in self._native.orphans(_tp(tp))]

    def partitions(self) -> List[TopicIdPartition]:
        """The user partitions held (not deleted), sorted."""
        return [_tp_out(t) for t in self._native.partitions()]

    def all_segments(self, tp: PartitionLike) -> List[SegmentMetadata]:
        """Every segment the partition's cache holds, initialized or not."""
        return [SegmentMetadata._of(t) for t in self._native.all_segments(_tp(tp))]

    def plan(self, event: Mapping[str, Any], level: int) -> List[Planned]:
        """The records to produce, in order, for a lifecycle event at a feature level. The event
        is the JSON form of write-plan scripts (``{"op": "copyStarted", ...}``, vectors README §6)."""
        return _planned(self._native.plan(json.dumps(event), int(level)))

    def plan_backfill(self, tp: PartitionLike, upload_epoch: int, level: int) -> List[Planned]:
        """The records that key a partition's segments written before KIP-1266."""
        return _planned(self._native.plan_backfill(_tp(tp), upload_epoch, int(level)))
