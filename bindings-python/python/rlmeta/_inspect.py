"""What an operator asks of a metadata partition: lifecycles, a summary, stuck and overlapping
segments, over the core's ``inspect``.

Owns: the Inspector wrapper and frozen dataclasses. Never: a rule; replay, what is stuck or
overlapping and what compaction would keep are the core's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

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
    #: Records in or after a file's first batch a consumer cannot read (a bad CRC): not replayed.
    unread_records: int = 0
    #: Where reading a file stopped before its end: ``{"file", "position", "unread", "error"}``.
    stops: Tuple[Dict[str, Any], ...] = ()


#: The kinds of record a scan lists, in the order of a scan's counts (the core's ``ScanKind``).
SCAN_KINDS = ("tombstone", "undecodable", "level_record", "bad_key")

#: ``(null keys, findings, last timestamp, count of each kind)``: see :meth:`Inspector.scan_file`.
ScanResult = Tuple[List[Tuple[int, int]], List[Tuple[int, int, Applied]], int, Tuple[int, ...]]


def _scan_result(t: Tuple[Any, ...]) -> ScanResult:
    nulls, findings, last, found = t
    return nulls, [(o, ts, Applied._of(a)) for o, ts, a in findings], last, tuple(found)


class Inspection:
    """A finished inspection. The summary is read at once; the lifecycles, the text and the
    core's JSON form are rendered by the core when first asked for (on a large log they hold an
    entry per segment record, which a summary does not need)."""

    __slots__ = ("_native", "summary", "_segments", "_text", "_data")

    def __init__(self, native: Any) -> None:
        self._native = native
        self.summary = _summary(json.loads(native.summary_json()))
        self._segments: Optional[Tuple[Lifecycle, ...]] = None
        self._text: Optional[str] = None
        self._data: Optional[Dict[str, Any]] = None

    @property
    def segments(self) -> Tuple[Lifecycle, ...]:
        if self._segments is None:
            self._segments = tuple(_lifecycle(x) for x in self.data["segments"])
        return self._segments

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self._native.text()
        return self._text

    def write_text(self, write: Callable[[str], object]) -> None:
        """:attr:`text` handed to ``write`` a piece at a time (10,000 lifecycles each, then the
        summary), never whole."""
        self._native.write_text(write)

    @property
    def summary_text(self) -> str:
        """The text of the summary alone (the end of :attr:`text`)."""
        return self._native.summary_text()

    @property
    def summary_data(self) -> Dict[str, Any]:
        """The summary's JSON form alone (``data["summary"]``)."""
        return json.loads(self._native.summary_json())

    @property
    def data(self) -> Dict[str, Any]:
        """The core's JSON form of the inspection."""
        if self._data is None:
            self._data = json.loads(self._native.json())
        return self._data


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


def _summary(s: Dict[str, Any]) -> Summary:
    return Summary(
        s["records"], s["nullKeyRecords"], s["keyedRecords"], s["tombstones"], s["undecodable"],
        s["fatalToOldBrokers"], s["liveSegments"], s["orphans"], s["keptByCompaction"],
        tuple(s["lostByCompaction"]), s["level"], s["unreadRecords"], tuple(s["stops"]),
    )


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
    """Fed a metadata partition's records (a live topic) or files, in offset order.

    ``scan_only``: keep what a scan shows (the summary's counts, the store, null keys, stops)
    and no lifecycles or compaction what-if: :meth:`finish` then has no segments, and the
    summary's ``kept_by_compaction`` and ``lost_by_compaction`` stay 0 and empty.

    ``files``: fed files with :meth:`push_path` and ended by :meth:`finish_files`, which reads
    them again for the compaction what-if: the same inspection, in memory bounded by the live
    segments, the lifecycles and the keys the cleaner maps, never the records."""

    def __init__(self, scan_only: bool = False, files: bool = False) -> None:
        self._native = _native.Inspector(scan_only, files)

    def push(self, offset: int, timestamp: int, key: Optional[bytes], value: Optional[bytes]) -> Applied:
        return Applied._of(self._native.push(offset, timestamp, key, value))

    def push_many(self, records: Iterable[Tuple[int, int, Optional[bytes], Optional[bytes]]]) -> List[Applied]:
        """``(offset, timestamp, key, value)`` records, the GIL released."""
        return [Applied._of(t) for t in self._native.push_many(list(records))]

    def push_file(self, data: bytes) -> None:
        self._native.push_file(bytes(data))

    def push_path(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """:meth:`push_file` of the file at ``path``, read by the binding in chunks (GIL
        released, no ``bytes`` made of it); OSError if it does not read."""
        self._native.push_path(os.fspath(path))

    def finish_files(self, paths: Iterable[Union[str, "os.PathLike[str]"]]) -> Inspection:
        """:meth:`finish` of an inspector made with ``files``: the compaction what-if from the
        same files (``paths``, in the order pushed), read again in chunks."""
        return Inspection(self._native.finish_files([os.fspath(p) for p in paths]))

    def finish_fetched(self, log: Any) -> Inspection:
        """:meth:`finish` of an inspector made with ``files`` or ``scan_only`` and fed a live
        topic's partition: the compaction what-if from the partition's whole fetched batches
        ``log`` kept (``_native.FetchedLog``), read again by the core's streamed model."""
        return Inspection(self._native.finish_fetched(log))

    def scan_file(self, data: bytes, each_null_key: bool = False, limit: Optional[int] = None) -> ScanResult:
        """Every record of a file image (native, GIL released): the ``(offset, timestamp)`` of each
        null-key record (only if ``each_null_key``; :meth:`null_keys` tells where they lie),
        ``(offset, timestamp, Applied)`` of each record a scan lists (tombstones, undecodable
        values, level records, bad keys: the first ``limit`` of each kind, all without one), the
        last timestamp, and how many of each kind there are (:data:`SCAN_KINDS` names them)."""
        return _scan_result(self._native.scan_file(bytes(data), each_null_key, limit))

    def scan_path(self, path: Union[str, "os.PathLike[str]"], each_null_key: bool = False, limit: Optional[int] = None) -> ScanResult:
        """:meth:`scan_file` of the file at ``path``, read by the binding in chunks with the GIL
        released (no ``bytes`` made of it, memory bounded by the largest batch); OSError if it
        does not read."""
        return _scan_result(self._native.scan_path(path, each_null_key, limit))

    def scan_records(self, records: Iterable[Tuple[int, int, Optional[bytes], Optional[bytes]]], each_null_key: bool = False,
                     limit: Optional[int] = None) -> ScanResult:
        """:meth:`scan_file` of ``(offset, timestamp, key, value)`` records read from a topic."""
        return _scan_result(self._native.scan_records(list(records), each_null_key, limit))

    def scan_fetch(self, window: Any, data: bytes, each_null_key: bool = False, limit: Optional[int] = None) -> ScanResult:
        """:meth:`scan_records` of the records of one fetch of a live topic (its raw record
        batches) that ``window`` (``_native.FetchWindow``) reads: whole batches only, from the
        partition's start offset up to its end offset; decoded by the core, no object per
        record. A batch that does not read raises RlmetaError."""
        return _scan_result(self._native.scan_fetch(window, data, each_null_key, limit))

    def push_fetch(self, window: Any, data: bytes) -> None:
        """:meth:`push` of every record of one fetch that ``window`` reads (:meth:`scan_fetch`)."""
        self._native.push_fetch(window, data)

    def push_fetch_write(self, window: Any, data: bytes, write: Callable[[str], Any]) -> None:
        """:meth:`push_fetch`, writing the records' listing (``record_line`` each, a newline after
        each) to ``write`` a piece (about 1 MiB) at a time as the core decodes them."""
        self._native.push_fetch_write(window, data, write)

    def push_fetch_records(self, window: Any, data: bytes) -> List[Tuple[int, int, Optional[bytes], Optional[bytes]]]:
        """:meth:`push_fetch`, returning the records, ``(offset, timestamp, key, value)``."""
        return self._native.push_fetch_records(window, data)

    def null_keys(self) -> Optional[Tuple[int, int, int, int]]:
        """``(first_offset, last_offset, min_timestamp, max_timestamp)`` of the null-key records
        so far, or None if there are none (their count is the summary's)."""
        return self._native.null_keys()

    def stuck(self, now_ms: int, threshold_ms: int) -> List[Stuck]:
        """Live segments in COPY/DELETE_SEGMENT_STARTED whose last event is older than the threshold."""
        return [Stuck(_tp_out(tp), i, _state(s, SegmentState), t) for tp, i, s, t in self._native.stuck(now_ms, threshold_ms)]

    def overlaps(self) -> List[Overlap]:
        return [Overlap(_tp_out(tp), tuple(a), tuple(b)) for tp, a, b in self._native.overlaps()]  # type: ignore[arg-type]

    def orphans(self) -> List[Tuple[TopicIdPartition, Orphan]]:
        return [(_tp_out(tp), Orphan._of(o)) for tp, o in self._native.orphans()]

    def finish(self) -> Inspection:
        return Inspection(self._native.finish())
