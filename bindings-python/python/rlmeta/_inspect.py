"""What an operator asks of a metadata partition: lifecycles, a summary, stuck and overlapping
segments, over the core's ``inspect``.

Owns: the Inspector wrapper and frozen dataclasses. Never: a rule; replay, what is stuck or
overlapping and what compaction would keep are the core's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

from . import _native
from ._model import SegmentState, TopicIdPartition
from ._store import Applied, Orphan, _state, _tp_out

__all__ = ["Inspector", "Inspection", "Lifecycle", "Summary", "Stuck", "Overlap"]


@dataclass(frozen=True)
class Lifecycle:
    partition: TopicIdPartition
    id: str
    start_offset: Optional[int]
    end_offset: Optional[int]
    #: Every state a record set, ``(offset, state)`` in log order.
    states: Tuple[Tuple[int, SegmentState], ...]
    #: Where it stands after replay; None once gone.
    now: Optional[SegmentState]


@dataclass(frozen=True)
class Summary:
    records: int
    null_key_records: int
    keyed_records: int
    tombstones: int
    undecodable: int
    fatal_to_old_brokers: int
    live_segments: int
    orphans: int
    kept_by_compaction: int
    lost_by_compaction: Tuple[str, ...]
    #: The last level record: ``{"offset", "level"}`` or ``{"offset", "error"}``; None if none.
    level: Optional[Dict[str, Any]]


@dataclass(frozen=True)
class Inspection:
    segments: Tuple[Lifecycle, ...]
    summary: Summary
    text: str
    #: The core's JSON form of the inspection.
    data: Dict[str, Any]


@dataclass(frozen=True)
class Stuck:
    partition: TopicIdPartition
    id: str
    state: SegmentState
    since_ms: int


@dataclass(frozen=True)
class Overlap:
    partition: TopicIdPartition
    #: ``(segment_id, start_offset, end_offset)`` of each.
    first: Tuple[str, int, int]
    second: Tuple[str, int, int]


def _lifecycle(d: Dict[str, Any]) -> Lifecycle:
    t = d["topicIdPartition"]
    return Lifecycle(
        TopicIdPartition(name=t["name"], id=t["id"], partition=t["partition"]),
        d["id"],
        d["startOffset"],
        d["endOffset"],
        tuple((s["offset"], SegmentState[s["state"]]) for s in d["states"]),
        None if d["now"] is None else SegmentState[d["now"]],
    )


class Inspector:
    """Fed a metadata partition's records (a live topic) or files, in offset order."""

    def __init__(self) -> None:
        self._native = _native.Inspector()

    def push(self, offset: int, timestamp: int, key: Optional[bytes], value: Optional[bytes]) -> Applied:
        return Applied._of(self._native.push(offset, timestamp, key, value))

    def push_many(self, records: Iterable[Tuple[int, int, Optional[bytes], Optional[bytes]]]) -> List[Applied]:
        """``(offset, timestamp, key, value)`` records, the GIL released."""
        return [Applied._of(t) for t in self._native.push_many(list(records))]

    def push_file(self, data: bytes) -> None:
        self._native.push_file(bytes(data))

    def scan_file(self, data: bytes) -> Tuple[List[Tuple[int, int]], List[Tuple[int, int, Applied]], int]:
        """Every record of a file image (native, GIL released): the ``(offset, timestamp)`` of each
        null-key record, ``(offset, timestamp, Applied)`` of each record replay did not simply
        apply, and the last timestamp."""
        nulls, findings, last = self._native.scan_file(bytes(data))
        return nulls, [(o, t, Applied._of(a)) for o, t, a in findings], last

    def stuck(self, now_ms: int, threshold_ms: int) -> List[Stuck]:
        """Live segments in COPY/DELETE_SEGMENT_STARTED whose last event is older than the threshold."""
        return [Stuck(_tp_out(tp), i, _state(s, SegmentState), t) for tp, i, s, t in self._native.stuck(now_ms, threshold_ms)]

    def overlaps(self) -> List[Overlap]:
        return [Overlap(_tp_out(tp), tuple(a), tuple(b)) for tp, a, b in self._native.overlaps()]  # type: ignore[arg-type]

    def orphans(self) -> List[Tuple[TopicIdPartition, Orphan]]:
        return [(_tp_out(tp), Orphan._of(o)) for tp, o in self._native.orphans()]

    def finish(self) -> Inspection:
        text, data = self._native.finish()
        d = json.loads(data)
        s = d["summary"]
        summary = Summary(
            s["records"], s["nullKeyRecords"], s["keyedRecords"], s["tombstones"], s["undecodable"],
            s["fatalToOldBrokers"], s["liveSegments"], s["orphans"], s["keptByCompaction"],
            tuple(s["lostByCompaction"]), s["level"],
        )
        return Inspection(tuple(_lifecycle(x) for x in d["segments"]), summary, text, d)
