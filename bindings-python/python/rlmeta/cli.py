"""``rlmeta``: what ``__remote_log_metadata`` holds, from segment files or a live cluster.

    rlmeta inspect  [FILE|DIR...] [--bootstrap-server HOST:PORT]   kafka-dump-log listing with keys, lifecycles
                                                                  (--summary: the summary alone)
    rlmeta scan     [FILE|DIR...] [--bootstrap-server HOST:PORT]   records by kind, null keys, tombstones,
                                                                  undecodable values, orphans, stuck, overlaps
    rlmeta simulate [FILE|DIR...] [--bootstrap-server HOST:PORT]   what compaction keeps now and later, and
                                                                  the topic's growth over months
    rlmeta profile  [FILE|DIR...] [--bootstrap-server HOST:PORT]   replay cost per metadata partition
    rlmeta reconcile [FILE|DIR...] [--bootstrap-server HOST:PORT] --store DIR|s3://BUCKET/PREFIX
                                                                  the metadata against the remote store:
                                                                  orphaned, leaked, dangling, abandoned,
                                                                  stuck; the cleanup plan; --delete
    rlmeta decode HEX | rlmeta encode JSON                         one record value

Every subcommand takes ``--json`` (one JSON document on stdout). A FILE is a ``.log`` segment of
``__remote_log_metadata-N/``; a DIR is such a partition directory or a log dir holding them.
Segment files are read in chunks by the binding, never whole; the live topic (``--bootstrap-server``)
one metadata partition at a time, as the raw record batches of Fetch requests that the core decodes
(``_native.FetchWindow``: whole batches, each partition's start and end offsets taken when reading
began); the listing is written as it is produced. Progress bars go to stderr (off when it is not a terminal, or with ``--no-progress``).
Exit status: 0, 1 for an error (printed to stderr), 2 for bad usage, a ``--command-config`` that
cannot be honoured, refused credentials or an operation the cluster's authorizer refuses.

Every verdict is the core's; this module reads files or the cluster, measures time and prints.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from . import _native, _reconcile
from ._errors import describe
from ._compaction import (
    CompactionPreview,
    TopicConfig,
    preview_compaction,
    preview_compaction_fetched,
    preview_compaction_paths_at,
    project_growth,
)
from ._tables import COMPACTION_HORIZON_MS, SUMMARY_COMPACTION
from ._files import METADATA_TOPIC, dump_log_json, read_records, write_dump_log
from ._inspect import SCAN_KINDS, Inspector
from ._model import SegmentState
from ._store import Outcome, SkipKind, Store

Rec = Tuple[int, int, Optional[bytes], Optional[bytes]]
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
CHUNK = 10_000
#: Records of each kind a scan lists in text (``--json`` lists every one).
LIST = 20


def _n(v: int) -> str:
    """A count for people: thousands separators (never in --json)."""
    return f"{v:,}"


def _bytes(v: int) -> str:
    return f"{v:,} bytes"


def _age(ms: int) -> str:
    """A span of time for people: days and hours, or minutes and seconds when shorter."""
    if ms < 0:
        return "infinite"
    d, rest = divmod(ms // 1000, 86_400)
    h, rest = divmod(rest, 3_600)
    m, sec = divmod(rest, 60)

    def unit(n: int, name: str) -> str:
        return f"{n:,} {name}{'' if n == 1 else 's'}"

    if d:
        return f"{unit(d, 'day')} {unit(h, 'hour')}" if h else unit(d, "day")
    if h:
        return f"{unit(h, 'hour')} {unit(m, 'minute')}" if m else unit(h, "hour")
    return f"{unit(m, 'minute')} {unit(sec, 'second')}" if m else unit(sec, "second")


def _ms(v: int) -> str:
    """A duration config for people: its value, and in days or hours where it is whole; a
    negative value (Kafka's -1) is infinite and says so."""
    if v < 0:
        return f"{v} (infinite)"
    for unit, name in ((DAY_MS, "day"), (HOUR_MS, "hour")):
        if v >= unit and v % unit == 0:
            k = v // unit
            return f"{v:,} ms ({k:,} {name}{'' if k == 1 else 's'})"
    return f"{v:,} ms"


@dataclass
class Partition:
    """One metadata partition's records, from files or from the cluster. A partition of the cluster
    is read once, one partition after the other (``bytes``, its records' key and value bytes, and
    ``read_to_end`` are known after): the operator tools hand the raw record batches of its fetches
    to a core model (:meth:`read_fetched`), reconcile's ledger too; ``stream`` iterates its
    records through kafka-python's consumer instead (the per-record read the raw read replaced,
    kept as the reference ``make bench-tools-topic`` and the broker tests compare with)."""

    name: str
    files: List[Path] = field(default_factory=list)
    records: List[Rec] = field(default_factory=list)
    bytes: int = 0
    read_to_end: bool = True
    stream: Optional[Callable[[], Iterator[Rec]]] = None
    fetch: Optional[Callable[[Callable[[int, int], Any]], Any]] = None

    def read_fetched(self, make: Callable[[int, int], Any]) -> Any:
        """Reads a partition of the cluster: ``make(start, end)`` is the accumulator its fetches'
        raw bytes go to (``push(bytes)``, ``next_offset()``, ``done()``, ``bytes()``: a
        :class:`_Fetches` or ``_native.FetchedLog``), returned once the partition is read."""
        if self.fetch is None:
            raise RuntimeError(f"{self.name} is not read from a cluster")
        return self.fetch(make)

    def iter_records(self, bar: Any = None) -> Iterator[Rec]:
        if self.files:
            for f in self.files:
                for r in read_records(f):
                    yield (r.offset, r.timestamp, r.key, r.value)
                if bar is not None:
                    bar.update(f.stat().st_size)
        elif self.stream is not None:
            yield from self.stream()
        else:
            yield from self.records


class Parts(List[Partition]):
    """The partitions a command reads; those of a cluster share one consumer, closed by
    :meth:`close` (or once the last partition is read)."""

    def close(self) -> None:
        closer = getattr(self, "_close", None)
        if closer is not None:
            closer()


def _base_offset(p: Path) -> int:
    return int(p.stem) if p.stem.isdigit() else 0


def partitions_from_files(paths: List[str]) -> List[Partition]:
    by_name: Dict[str, Partition] = {}
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            logs = sorted(p.glob("*.log"))
            files = logs if logs else sorted(p.glob(f"{METADATA_TOPIC}-*/*.log"))
        elif p.is_file():
            files = [p]
        else:
            raise FileNotFoundError(f"no such file or directory: {arg}")
        for f in files:
            part = by_name.setdefault(f.parent.name, Partition(f.parent.name))
            part.files.append(f)
            part.bytes += f.stat().st_size
    for part in by_name.values():
        part.files.sort(key=_base_offset)
    return [by_name[n] for n in sorted(by_name, key=lambda n: (len(n), n))]


class _Fetches:
    """One partition's fetches handed to a core model through the core's window
    (``_native.FetchWindow``: whole batches only, the partition's start and end offsets kept):
    ``each(window, data)`` is the model's binding call, e.g. ``Inspector.scan_fetch``. The
    accumulator :meth:`rlmeta._kafka.Reader.each_partition_raw` feeds."""

    def __init__(self, start: int, end: int, each: Callable[[Any, bytes], Any]) -> None:
        self.window = _native.FetchWindow(start, end)
        self._each = each

    def push(self, data: bytes) -> None:
        self._each(self.window, data)

    def next_offset(self) -> int:
        return self.window.next_offset()

    def done(self) -> bool:
        return self.window.done()

    def records(self) -> int:
        return self.window.records()

    def bytes(self) -> int:
        return self.window.bytes()


class _Kept(_Fetches):
    """:class:`_Fetches` that also keeps the partition's whole fetched batches (``log``, a
    ``_native.FetchedLog``) for the summary's compaction what-if, which the core's streamed model
    reads again from them at the end (``Inspector.finish_fetched``): the inspector holds no
    record for it."""

    def __init__(self, start: int, end: int, each: Callable[[Any, bytes], Any]) -> None:
        super().__init__(start, end, each)
        self.log = _native.FetchedLog(start, end)

    def push(self, data: bytes) -> None:
        super().push(data)
        self.log.push(data)


def partitions_from_cluster(args: argparse.Namespace) -> Parts:
    """The metadata topic's partitions, each read when a command reads it, in order, with one
    consumer: memory holds what a command keeps of a partition, never the topic. The operator
    tools and reconcile read raw record batches (``Reader.each_partition_raw``) decoded by the
    core; a partition whose ``fetch`` is cleared iterates records (``Reader.each_partition``)."""
    from ._kafka import Cluster  # imported when a cluster is read (a file scan never is)

    cluster = Cluster(args.bootstrap_server, args.command_config, args.timeout_ms)
    try:
        numbers = cluster.partitions(METADATA_TOPIC)
        if numbers is None:
            raise FileNotFoundError(f"topic {METADATA_TOPIC} does not exist on {args.bootstrap_server}")
    except BaseException:
        cluster.close()
        raise
    reader = cluster.read(METADATA_TOPIC, numbers, not args.no_progress, desc=f"Reading {METADATA_TOPIC}")
    readers: Dict[str, Iterator[Any]] = {}  # the one read a command makes: raw batches or records
    making: List[Callable[[int, int], Any]] = []
    parts = Parts()

    def next_of(kind: str, part: Partition, p: int) -> Any:
        if kind not in readers:
            if readers:
                raise RuntimeError(f"{part.name} read as {kind} after another read of the topic")
            readers[kind] = (reader.each_partition_raw(lambda _, start, end: making[-1](start, end)) if kind == "raw"
                             else reader.each_partition())
        q, got = next(readers[kind])
        if q != p:  # commands read partitions in order, each once
            raise RuntimeError(f"{part.name} read out of order (partition {q} was next)")
        return got

    def ended(part: Partition, p: int) -> None:
        part.read_to_end = reader.read_to_end.get(p, False)
        if p == numbers[-1]:
            parts.close()

    def stream(part: Partition, p: int) -> Callable[[], Iterator[Rec]]:
        def records() -> Iterator[Rec]:
            for r in next_of("records", part, p):
                yield (r.offset, r.timestamp, r.key, r.value)
            part.bytes = reader.bytes_read.get(p, 0)
            ended(part, p)
        return records

    def fetch(part: Partition, p: int) -> Callable[[Callable[[int, int], Any]], Any]:
        def read(make: Callable[[int, int], Any]) -> Any:
            making.append(make)
            sink = next_of("raw", part, p)
            part.bytes = sink.bytes()  # key and value bytes, as the record read counts them
            ended(part, p)
            return sink
        return read

    for p in numbers:
        part = Partition(f"{METADATA_TOPIC}-{p}", read_to_end=False)
        part.stream, part.fetch = stream(part, p), fetch(part, p)
        parts.append(part)

    def close() -> None:
        for it in readers.values():
            it.close()  # type: ignore[attr-defined]
        cluster.close()
    parts._close = close  # type: ignore[attr-defined]
    return parts


def load(args: argparse.Namespace) -> Parts:
    if args.bootstrap_server:
        if args.files:
            raise ValueError("give files or --bootstrap-server, not both")
        return partitions_from_cluster(args)
    if not args.files:
        raise ValueError("give segment files or directories, or --bootstrap-server")
    return Parts(partitions_from_files(args.files))


def _chunks(records: Iterable[Rec]) -> Iterator[List[Rec]]:
    chunk: List[Rec] = []
    for r in records:
        chunk.append(r)
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _NoBar:
    """No progress bar: --no-progress, or stderr is not a terminal (tqdm would draw nothing there,
    and importing it costs a tenth of a large file's scan)."""

    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(args: argparse.Namespace, total: int, desc: str) -> Any:
    if args.no_progress or not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, file=sys.stderr, disable=None, leave=False)


def _unread_note(parts: List[Partition]) -> List[str]:
    return [p.name for p in parts if not p.read_to_end]


# ---------------------------------------------------------------------------------------------- inspect
def cmd_inspect(args: argparse.Namespace, parts: List[Partition]) -> Tuple[str, Any]:
    """The listing is written to stdout as it is produced (files are read in chunks by the
    binding; a topic's fetches decoded by the core, each fetch's listing written a 1 MiB piece at
    a time); with --json the document is returned whole."""
    out = sys.stdout
    docs = []

    def piece(t: str) -> None:
        out.write(t if t.endswith("\n") else t + "\n")
    for part in parts:
        doc: Dict[str, Any] = {"partition": part.name}
        if args.summary:
            report = _summary(part)
            doc["readToEnd"] = part.read_to_end
            if args.json:
                doc["summary"] = report.summary_data
            else:  # (the summary's data, every lost segment's id, is the JSON document's alone)
                piece(f"{part.name}:\n{report.summary_text}")
            docs.append(doc)
            continue
        if part.files:
            # files are read again for the compaction what-if (finish_files): never held whole
            ins = Inspector(files=True)
            listings = []
            for f in part.files:
                ins.push_path(f)
                if args.json:
                    listings.append(json.loads(dump_log_json(f, f.name)))
                else:
                    write_dump_log(f, out.write, f.name)
            doc["files"] = listings
            report = ins.finish_files(part.files)
        elif part.fetch is not None:
            # the raw batches of each fetch decoded by the core: a line per record as read (text),
            # or the records themselves when --json lists them
            ins = Inspector(files=True)  # the lifecycles; the what-if from the batches kept
            records = []
            if args.json:
                kept = part.read_fetched(lambda s, e: _Kept(s, e, lambda w, d: records.extend(
                    _record_json(r) for r in ins.push_fetch_records(w, d))))
            else:
                out.write(f"Dumping {part.name} (live, {args.bootstrap_server})\n")
                kept = part.read_fetched(lambda s, e: _Kept(s, e, lambda w, d: ins.push_fetch_write(w, d, out.write)))
            doc["records"] = records
            report = ins.finish_fetched(kept.log)
        else:
            ins = Inspector()
            if not args.json:
                out.write(f"Dumping {part.name} (live, {args.bootstrap_server})\n")
            records = []
            lines: List[str] = []
            for r in part.iter_records():
                ins.push(*r)
                if args.json:
                    records.append(_record_json(r))
                else:
                    lines.append(_native.record_line(*r))
                    if len(lines) >= CHUNK:
                        out.write("\n".join(lines) + "\n")
                        lines = []
            if lines:
                out.write("\n".join(lines) + "\n")
            doc["records"] = records
            report = ins.finish()
        doc["readToEnd"] = part.read_to_end
        if args.json:
            doc["inspection"] = report.data
        else:  # the report written a piece at a time (a lifecycle a line: millions on a large log)
            out.write(f"{part.name}:\n")
            report.write_text(out.write)
        docs.append(doc)
    return "", {"partitions": docs}


def _summary(part: Partition) -> Any:
    """``inspect --summary`` of one partition: no listing and no lifecycles, so memory holds the
    live segments and the keys the cleaner maps, never a record (files are read in chunks, three
    times: the replay, then the compaction model's two passes); a topic's partition keeps its
    fetched batches (its size in the log) for the model's two passes (a consumer's read is not
    read again)."""
    if part.files:
        ins = Inspector(scan_only=True)
        for f in part.files:
            ins.push_path(f)
        return ins.finish_files(part.files)
    if part.fetch is not None:
        # the raw batches of each fetch, decoded and replayed by the core (no lifecycles), kept
        # for the what-if the streamed model reads again from them
        ins = Inspector(scan_only=True)
        return ins.finish_fetched(part.read_fetched(lambda s, e: _Kept(s, e, ins.push_fetch)).log)
    ins = Inspector()
    for chunk in _chunks(part.iter_records()):
        ins.push_many(chunk)
    return ins.finish()


def _record_json(r: Rec) -> Dict[str, Any]:
    offset, ts, key, value = r
    d: Dict[str, Any] = {"offset": offset, "timestamp": ts, "key": None if key is None else key.decode("utf-8", "replace")}
    if value is None:
        d["value"] = None
    else:
        try:
            d["value"] = json.loads(_native.decode_value_json(value))
        except _native.RlmetaError as e:
            d["value"] = {"error": {"code": e.code, "kind": e.kind, "message": str(e)}, "hex": value.hex()}
    return d


# ---------------------------------------------------------------------------------------------- scan
def cmd_scan(args: argparse.Namespace, parts: List[Partition]) -> Tuple[str, Any]:
    lines, docs = [], []
    totals: Dict[str, int] = {}
    bar = _progress(args, sum(p.bytes for p in parts if p.files), "Scanning")
    for part in parts:
        ins = Inspector(scan_only=True)  # a scan shows no lifecycles and no compaction what-if
        null_keys: List[Tuple[int, int]] = []
        tombstones: List[Tuple[int, Optional[str]]] = []
        undecodable: List[Tuple[int, str]] = []
        levels: List[Tuple[int, str]] = []
        bad_keys: List[Tuple[int, str]] = []
        last_ts = 0
        # Natively, in chunks: only what a scan lists comes back, the first LIST of each kind (all
        # of them for --json, which lists them, and each null key only then), and the counts.
        limit = None if args.json else LIST
        findings: List[Tuple[int, Any]] = []
        found = [0] * len(SCAN_KINDS)

        def add(result: Any) -> None:
            nonlocal last_ts
            nulls, listed, last, counts = result
            null_keys.extend(nulls)
            findings.extend((o, a) for o, _, a in listed)
            last_ts = max(last_ts, last)
            for i, n in enumerate(counts):
                found[i] += n
        if part.files:
            for f in part.files:
                add(ins.scan_path(f, args.json, limit))  # read in chunks by the binding: no bytes object
                bar.update(f.stat().st_size)
        elif part.fetch is not None:  # the raw batches of each fetch, decoded by the core
            part.read_fetched(lambda s, e: _Fetches(s, e, lambda w, d: add(ins.scan_fetch(w, d, args.json, limit))))
        else:
            for chunk in _chunks(part.iter_records()):
                add(ins.scan_records(chunk, args.json, limit))
        for offset, a in findings:
            if a.skip is SkipKind.TOMBSTONE:
                tombstones.append((offset, a.detail))
            elif a.skip is SkipKind.UNDECODABLE:
                undecodable.append((offset, a.detail or ""))
            elif a.skip is SkipKind.LEVEL_RECORD:
                levels.append((offset, a.detail or ""))
            elif a.skip is SkipKind.BAD_KEY or a.outcome is Outcome.APPLIED_WITH_BAD_KEY:
                bad_keys.append((offset, a.detail or ""))
        now = args.now_ms if args.now_ms is not None else (int(time.time() * 1000) if part.records or args.bootstrap_server else last_ts)
        stuck = ins.stuck(now, args.stuck_after_ms)
        overlaps = ins.overlaps()
        orphans = ins.orphans()
        null_span = ins.null_keys()  # (first offset, last offset, min timestamp, max timestamp)
        report = ins.finish()
        s = report.summary
        doc = {
            "partition": part.name, "readToEnd": part.read_to_end, "records": s.records,
            "unreadRecords": s.unread_records,
            "stops": [{"file": str(part.files[t["file"]]) if t["file"] < len(part.files) else None, "position": t["position"],
                       "unread": t["unread"], "error": t["error"]} for t in s.stops],
            "byKind": {"nullKey": s.null_key_records, "keyed": s.keyed_records, "tombstones": s.tombstones,
                       "undecodable": s.undecodable, "levelRecords": found[SCAN_KINDS.index("level_record")]},
            "fatalToPreKip1266Brokers": s.fatal_to_old_brokers,
            "nullKeys": [{"offset": o, "timestamp": t} for o, t in null_keys],
            "tombstones": [{"offset": o, "key": k} for o, k in tombstones],
            "undecodable": [{"offset": o, "error": e} for o, e in undecodable],
            "levelRecords": [{"offset": o, "level": lv} for o, lv in levels],
            "badKeys": [{"offset": o, "why": w} for o, w in bad_keys],
            "orphans": [{"partition": str_tp(tp), "segmentId": o.segment_id, "state": _name(o.state), "key": o.key, "offset": o.offset} for tp, o in orphans],
            "stuckUploads": [_stuck(x, now) for x in stuck if x.state == SegmentState.COPY_SEGMENT_STARTED],
            "stuckDeletions": [_stuck(x, now) for x in stuck if x.state == SegmentState.DELETE_SEGMENT_STARTED],
            "overlaps": [{"partition": str_tp(o.partition), "first": list(o.first), "second": list(o.second)} for o in overlaps],
            "liveSegments": s.live_segments, "stuckAfterMs": args.stuck_after_ms, "nowMs": now,
        }
        docs.append(doc)
        for k in ("records", "unreadRecords", "liveSegments"):
            totals[k] = totals.get(k, 0) + doc[k]
        for k, v in doc["byKind"].items():
            totals[k] = totals.get(k, 0) + v
        if s.records == 0 and s.unread_records == 0 and not s.stops and part.read_to_end and not args.verbose:
            continue  # an empty partition says nothing (--verbose lists it; --json always does)
        unread = f", {_n(s.unread_records)} NOT READ (in or after a corrupt batch)" if s.unread_records else ""
        lines.append(f"{part.name}: {_n(s.records)} records{unread}{'' if part.read_to_end else ' (NOT read to its end)'}")
        for t in doc["stops"]:
            lines.append(f"  NOT READ: {t['file']} from byte {_n(t['position'])} on ({_n(t['unread'])} records): {t['error']['message']}")
        lines.append(f"  by kind: {_n(s.null_key_records)} null-key, {_n(s.keyed_records)} keyed, {_n(s.tombstones)} tombstones, "
                     f"{_n(s.undecodable)} undecodable, {_n(doc['byKind']['levelRecords'])} level records")
        lines.append(f"  records that would stop a pre-KIP-1266 broker's metadata consumer: {_n(s.fatal_to_old_brokers)}")
        if null_span is not None:
            first, last, oldest, newest = null_span
            lines.append(f"  null-key records: {_n(s.null_key_records)} (offsets {first}-{last}, timestamps {oldest}-{newest})")
        for kind, label, what, items in (("tombstone", "tombstone", "tombstones", tombstones),
                                          ("undecodable", "undecodable value", "undecodable values", undecodable),
                                          ("level_record", "level record", "level records", levels),
                                          ("bad_key", "bad key", "bad keys", bad_keys)):
            for o, d in items[:LIST]:
                lines.append(f"  {label} at offset {o}: {d}")
            more = found[SCAN_KINDS.index(kind)] - min(len(items), LIST)
            if more > 0:
                lines.append(f"  ... {_n(more)} more {what} (--json lists them all)")
        lines.append(f"  live segments: {_n(s.live_segments)}, orphaned updates: {_n(len(orphans))}")
        for tp, o in orphans:
            lines.append(f"    orphan {str_tp(tp)} {o.segment_id} {_name(o.state)} at offset {o.offset} (key {o.key})")
        for label, state in (("stuck uploads", SegmentState.COPY_SEGMENT_STARTED), ("stuck deletions", SegmentState.DELETE_SEGMENT_STARTED)):
            these = [x for x in stuck if x.state == state]
            lines.append(f"  {label} (older than {_age(args.stuck_after_ms)}): {_n(len(these))}")
            for x in these:
                lines.append(f"    {str_tp(x.partition)} {x.id} {_name(x.state)} since {x.since_ms} ({_age(now - x.since_ms)} ago)")
        lines.append(f"  overlapping live segments: {_n(len(overlaps))}")
        for o in overlaps:
            lines.append(f"    {str_tp(o.partition)} {o.first[0]} [{o.first[1]}..{o.first[2]}] overlaps {o.second[0]} [{o.second[1]}..{o.second[2]}]")
    bar.close()
    empty = sum(1 for d in docs if d["records"] == 0)
    lines.append(f"total: {_n(totals.get('records', 0))} records ({_n(totals.get('nullKey', 0))} null-key, {_n(totals.get('keyed', 0))} keyed, "
                 f"{_n(totals.get('tombstones', 0))} tombstones, {_n(totals.get('undecodable', 0))} undecodable), "
                 f"{_n(totals.get('liveSegments', 0))} live segments in {len(parts)} partition(s)"
                 f"{f' ({empty} empty)' if empty else ''}"
                 + (f"; {_n(totals['unreadRecords'])} records NOT READ (in or after a corrupt batch)" if totals.get("unreadRecords") else ""))
    return "\n".join(lines) + "\n", {"partitions": docs, "total": totals}


def str_tp(tp: Any) -> str:
    return f"{tp.id}:{tp.name}-{tp.partition}"


def _name(state: Any) -> str:
    return state.name if hasattr(state, "name") else str(state)


def _stuck(x: Any, now: int) -> Dict[str, Any]:
    return {"partition": str_tp(x.partition), "segmentId": x.id, "state": _name(x.state), "sinceMs": x.since_ms, "ageMs": now - x.since_ms}


# ---------------------------------------------------------------------------------------------- simulate
def _last_timestamp(part: Partition) -> int:
    """The newest record timestamp of a partition's files (the core's replay reads them)."""
    ins = Inspector(scan_only=True)
    return max((ins.scan_path(f, False, 0)[2] for f in part.files), default=0)


def _previews(part: Partition, config: TopicConfig, moments: List[int]) -> List[CompactionPreview]:
    """The core's compaction model (the one `rlmeta inspect` and the page use) at each moment,
    over the partition's files (read in chunks, twice for each moment: one model at a time, since
    each holds the keys it maps; fed from the same reads, two models held 322 MB against 170 MB on
    a 1 GiB keyed segment, and took longer), a topic's partition from its fetched batches (kept by
    the core, read again for each pass of the same streamed model, one moment at a time), or
    records handed over (held for the moments)."""
    if part.files:
        return [preview_compaction_paths_at(part.files, config, [at])[0] for at in moments]
    if part.fetch is not None:  # the partition's records kept by the core from the raw fetches
        return preview_compaction_fetched(part.read_fetched(_native.FetchedLog), config, moments)
    records = list(part.iter_records())
    return [preview_compaction(records, config, at) for at in moments]


SIZE = re.compile(r"^\s*([\d.]+)\s*([KMGTP]?i?B)?\s*$", re.I)
UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
         "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40, "PIB": 2**50}


def parse_size(text: str) -> int:
    m = SIZE.match(text.replace("/day", "").replace("/d", ""))
    if not m:
        raise ValueError(f"not a size: {text!r} (e.g. 1TB, 512MiB)")
    return int(float(m.group(1)) * UNITS[(m.group(2) or "").upper()])


def _live_topic_config(args: argparse.Namespace) -> TopicConfig:
    from ._kafka import Cluster

    cluster = Cluster(args.bootstrap_server, args.command_config, args.timeout_ms)
    try:
        c = cluster.topic_configs([METADATA_TOPIC])[METADATA_TOPIC]
    finally:
        cluster.close()
    return TopicConfig(c["cleanup.policy"], int(c["retention.ms"]), int(c["min.compaction.lag.ms"]),
                       int(c["delete.retention.ms"]), int(c["segment.ms"]), args.segment_records)


def cmd_simulate(args: argparse.Namespace, parts: List[Partition]) -> Tuple[str, Any]:
    """The text is written to stdout a partition at a time, as each is simulated (a stock topic's
    line of live segments a replay would lose names every one of them: 173 MB of text at 10 M
    records, held whole before, with a Python list of them for the JSON document besides); the
    JSON document (--json) is built whole and returned."""
    out = sys.stdout

    def emit(line: str) -> None:
        if not args.json:
            out.write(line + "\n")
    if args.topic_configs:
        if not args.bootstrap_server:
            raise ValueError("--topic-configs reads the live topic's configs: give --bootstrap-server")
        config = _live_topic_config(args)
    else:
        config = TopicConfig(args.cleanup_policy, args.retention_ms, args.min_compaction_lag_ms,
                             args.delete_retention_ms, args.segment_ms, args.segment_records)
    emit(f"compaction model: cleanup.policy={config.cleanup_policy} retention.ms={_ms(config.retention_ms)} "
         f"min.compaction.lag.ms={_ms(config.min_compaction_lag_ms)} delete.retention.ms={_ms(config.delete_retention_ms)} "
         f"segment.ms={_ms(config.segment_ms)}")
    docs = []
    for part in parts:
        if args.now_ms is not None:
            now = args.now_ms
        elif part.files:
            # the last record's time: what the core's summary (rlmeta inspect) compacts after
            now = _last_timestamp(part)
        else:
            now = int(time.time() * 1000)
        doc: Dict[str, Any] = {"partition": part.name, "nowMs": now, "moments": []}
        moments = (("now", now), (f"after {_ms(args.after_ms)}", now + args.after_ms))
        previews = _previews(part, config, [at for _, at in moments])
        for (label, at), p in zip(moments, previews):
            if not doc["moments"]:
                doc["records"], doc["bytes"] = p.records_before, p.bytes_before
                emit(f"{part.name}: {_n(p.records_before)} records, {_bytes(p.bytes_before)}, "
                     f"{_n(p.live_before)} live segments")
            lost = sorted(p.lost)
            doc["moments"].append({"atMs": at, "records": p.records_before, "kept": p.records_after, "keptBytes": p.bytes_after,
                                   "nullKeysDropped": p.null_keys_dropped, "liveSegments": p.live_before,
                                   "lostLiveSegments": lost if args.json else len(lost)})
            emit(f"  {label}: compaction keeps {_n(p.records_after)} of {_n(p.records_before)} records "
                 f"({_bytes(p.bytes_after)}); live segments a replay would lose: {_n(len(lost))}"
                 f"{(' ' + ', '.join(lost)) if lost else ''}")
            del lost
        docs.append(doc)
    proj = None
    if args.upload_rate is not None:
        points = project_growth(parse_size(args.upload_rate), parse_size(args.segment_bytes), args.tiered_retention_ms,
                                args.user_partitions, args.months * 30, 30)
        emit(f"projection: {args.upload_rate}/day uploaded in {args.segment_bytes} segments over {args.user_partitions} "
             f"user partitions, tiered retention {_ms(args.tiered_retention_ms)} (planner's records, key+value bytes)")
        emit(f"  {'month':>5} {'live segs':>10} {'append-only records':>20} {'bytes':>14} {'compacted records':>18} {'bytes':>12}")
        for pt in points:
            emit(f"  {pt.day // 30:>5} {_n(pt.live_segments):>10} {_n(pt.append_only_records):>20} {_n(pt.append_only_bytes):>14} "
                 f"{_n(pt.compacted_records):>18} {_n(pt.compacted_bytes):>12}")
        proj = [pt.__dict__ for pt in points]
    else:
        emit("projection: not run (give --upload-rate, e.g. the KIP's 1TB, for the topic's growth over --months)")
    return "", {"config": config.__dict__, "partitions": docs, "projection": proj}


# ---------------------------------------------------------------------------------------------- profile
def cmd_profile(args: argparse.Namespace, parts: List[Partition]) -> Tuple[str, Any]:
    rows = []
    bar = _progress(args, sum(p.bytes for p in parts), "Replaying")
    try:
        for part in parts:
            store = Store()
            if part.files:
                # read in chunks by the binding: the time is the read (warm: page cache) and replay
                t0 = time.perf_counter()
                n = sum(store.apply_path(f) for f in part.files)
                elapsed = time.perf_counter() - t0
            elif part.fetch is not None:
                # the raw batches of each fetch replayed as they come (decoding and replay timed,
                # as a file's read and replay are)
                spent = [0.0]

                def each(w: Any, d: bytes) -> None:
                    t0 = time.perf_counter()
                    store.apply_fetch(w, d)
                    spent[0] += time.perf_counter() - t0
                n, elapsed = part.read_fetched(lambda s, e: _Fetches(s, e, each)).records(), spent[0]
            else:
                # a topic's records replayed CHUNK at a time as they are read (the replay alone timed)
                n, elapsed = 0, 0.0
                for chunk in _chunks(part.iter_records()):
                    batch = [(o, k, v) for o, _, k, v in chunk]
                    t0 = time.perf_counter()
                    store.apply_many(batch)
                    elapsed += time.perf_counter() - t0
                    n += len(batch)
            bar.update(part.bytes)
            live = sum(len(store.all_segments(tp)) for tp in store.partitions())
            rows.append({"partition": part.name, "records": n, "bytes": part.bytes, "replaySeconds": elapsed,
                         "recordsPerSecond": n / elapsed if elapsed > 0 else None, "liveSegments": live,
                         "userPartitions": len(store.partitions()), "readToEnd": part.read_to_end})
    finally:
        bar.close()
    rows.sort(key=lambda r: -r["replaySeconds"])
    what = "file bytes" if parts and parts[0].files else "key+value bytes"
    lines = [f"replay cost per metadata partition, slowest first (rlmeta's replay, warm, sequential; bytes: {what})",
             f"  {'partition':<28} {'records':>9} {'bytes':>11} {'replay ms':>10} {'records/s':>12} {'live segs':>9}"]
    for r in rows:
        rate = f"{r['recordsPerSecond']:.0f}" if r["recordsPerSecond"] else "-"
        lines.append(f"  {r['partition']:<28} {r['records']:>9} {r['bytes']:>11} {r['replaySeconds'] * 1000:>10.3f} {rate:>12} {r['liveSegments']:>9}")
    return "\n".join(lines) + "\n", {"partitions": rows}


# ---------------------------------------------------------------------------------------------- reconcile
def _ledger(args: argparse.Namespace) -> Tuple[Any, str]:
    """The metadata, replayed into the core's ledger one metadata partition at a time; raises
    MetadataError when it cannot be read (or, before a deletion, was not read to its end)."""
    where = args.bootstrap_server or ", ".join(args.files)
    try:
        parts = load(args)
    except ValueError:
        raise
    except Exception as e:
        raise _reconcile.MetadataError("metadata_unreadable", f"cannot read {METADATA_TOPIC} from {where}: {type(e).__name__}: {e}") from e
    if not parts:
        raise _reconcile.MetadataError("metadata_not_found", f"no {METADATA_TOPIC} partition found in {', '.join(args.files)}")
    ledger = _native.Ledger()
    try:
        for part in parts:
            if part.files:
                for f in part.files:
                    ledger.apply_path(f)  # read in chunks by the binding
            elif part.fetch is not None:  # the raw batches of each fetch, decoded and replayed by the core
                part.read_fetched(lambda s, e: _Fetches(s, e, ledger.apply_fetch))
            else:
                for chunk in _chunks(part.iter_records()):
                    ledger.apply_many([(o, k, v) for o, _, k, v in chunk])
    except ValueError:
        raise
    except Exception as e:
        raise _reconcile.MetadataError("metadata_unreadable", f"cannot read {METADATA_TOPIC} from {where}: {type(e).__name__}: {e}") from e
    finally:
        parts.close()
    unread = _unread_note(parts)
    if unread:
        raise _reconcile.MetadataError("metadata_incomplete", f"{METADATA_TOPIC} not read to its end within --timeout-ms: {', '.join(unread)} "
                                       "(a partial history would call live segments' objects orphaned)")
    source = (f"{METADATA_TOPIC} on {args.bootstrap_server}" if args.bootstrap_server else f"{len(parts)} metadata partition(s) from files")
    return ledger, f"{source} ({ledger.records()} records)"


def _judged_at(args: argparse.Namespace, ledger: Any) -> Tuple[int, Optional[int]]:
    """Reconcile's clock (--now-ms or now) and how recent the metadata is: files are a snapshot, as
    recent as their newest record and no more (objects modified later, less the grace, may be
    uploads they do not know yet: the core never plans to delete them); the live topic, now."""
    now = args.now_ms if args.now_ms is not None else int(time.time() * 1000)
    return now, None if args.bootstrap_server else (ledger.newest_event_ms() or 0)


def _emit_sql(args: argparse.Namespace, store: Any, inventory: Any, grace: int) -> int:
    """--emit-sql DIR: the ledger as CSV and the core's query that joins it with the inventory's
    table, for Athena or Trino when the inventory is too large for this machine. Nothing is
    listed or deleted."""
    if inventory is None or not isinstance(store, _reconcile.S3Store):
        raise ValueError("--emit-sql joins an S3 Inventory's table: give an s3:// --store and its --inventory manifest")
    out = Path(args.emit_sql)
    out.mkdir(parents=True, exist_ok=True)
    ledger, source = _ledger(args)
    now, as_of = _judged_at(args, ledger)
    query = _native.reconcile_sql(args.layout, args.sql_inventory_table, args.sql_ledger_table, store.bucket, store.prefix,
                                  inventory.format == "CSV", now, grace, as_of, inventory.created_ms)
    rows = ledger.write_sql_ledger(out / "ledger.csv")
    (out / "reconcile.sql").write_text(query)
    written = [f"{out / 'ledger.csv'} ({rows:,} segments)", str(out / "reconcile.sql")]
    if args.sql_ledger_location:
        (out / "ledger-table.sql").write_text(_native.reconcile_sql_ledger_ddl(args.sql_ledger_table, args.sql_ledger_location))
        written.append(str(out / "ledger-table.sql"))
    print(f"rlmeta reconcile --emit-sql: metadata {source}; inventory {inventory.name} ({inventory.format}); wrote "
          + ", ".join(written) + f". Upload ledger.csv as table {args.sql_ledger_table}"
          + ("" if args.sql_ledger_location else " (--sql-ledger-location S3_FOLDER writes Athena's CREATE TABLE for it)")
          + f", then run reconcile.sql where {args.sql_inventory_table} is the inventory's table (docs/SCALING.md).")
    return 0


def cmd_reconcile(args: argparse.Namespace) -> int:
    def fail(msg: str) -> int:
        print(f"rlmeta reconcile: {msg}; nothing deleted", file=sys.stderr)
        return 2

    from ._inventory import InventoryError, open_inventory

    try:
        grace = _reconcile.parse_duration_ms(args.grace)
        _native.parse_layout(args.layout)
        store = _reconcile.open_store(args.store, args.endpoint_url, args.region, args.profile, args.gcs_project,
                                      args.azure_connection_string)
        inventory = open_inventory(args.inventory, store) if args.inventory else None
    except (ValueError, _native.RlmetaError, _reconcile.StoreError, InventoryError) as e:
        return fail(describe(e))
    progress = not args.no_progress
    if args.emit_sql:
        try:
            return _emit_sql(args, store, inventory, grace)
        except (ValueError, OSError, _reconcile.MetadataError, _native.RlmetaError, *_security_errors()) as e:
            return fail(describe(e))

    def run() -> Tuple[_reconcile.Finding, str, int]:
        ledger, source = _ledger(args)
        pages = inventory.pages(progress) if inventory is not None else store.pages(progress)
        now, as_of = _judged_at(args, ledger)
        listed_at = inventory.created_ms if inventory is not None else None
        found = _reconcile.classify(ledger, pages, args.layout, now, grace, as_of, listed_at)
        if listed_at is not None:
            source += (f"; listing: {inventory.name}, {_age(max(0, now - listed_at))} before now "
                       f"({inventory.rows:,} rows)")
        return found, source, now

    try:
        found, source, now = run()
        result = None
        if args.delete:
            journal = Path(args.journal or "rlmeta-reconcile-journal.jsonl")
            # with an inventory (up to a day old) every key both runs call safe is read again from
            # the store itself (HEAD) and deleted only if unchanged since the inventory
            result = _reconcile.execute(found, lambda: run()[0], store, journal, args.yes, head=inventory is not None)
    except (ValueError, _reconcile.StoreError, _reconcile.MetadataError, InventoryError, *_security_errors()) as e:
        return fail(describe(e))
    except _native.RlmetaError as e:
        return fail(describe(e))
    name = _native.parse_layout(args.layout)[0]
    if args.delete and not args.bootstrap_server:
        print("rlmeta reconcile: note: metadata read from files: objects modified after their newest record, less the "
              "grace, are never deleted (the files may not know their uploads); --bootstrap-server reads the live topic",
              file=sys.stderr)
    if args.json:
        doc = _reconcile.report_json(found, store.name, name, grace, now)
        doc["metadata"] = source
        if result is not None:
            doc["delete"] = result
        print(json.dumps(doc, indent=1))
    else:
        text = _reconcile.report_text(found, store.name, name, grace, source)
        if result is not None and result["dryRun"]:
            text += f"\n--delete without --yes: a dry run; would delete {len(result['wouldDelete'])} objects ({result['bytes']} bytes)\n"
        elif result is not None:
            text += (f"\nDeleted {len(result['deleted'])} objects ({result['bytes']} bytes), journal {result['journal']}; "
                     f"skipped as changed since the first listing: {len(result['skippedChangedSinceFirstRun'])}; failed: {len(result['failed'])}\n")
            for f in result["failed"]:
                text += f"  failed: {f['key']}: {f['error']}\n"
        sys.stdout.write(text)
    return 1 if result is not None and result.get("failed") else 0


# ---------------------------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlmeta", description="What __remote_log_metadata holds: segment files or a live cluster.")
    sub = parser.add_subparsers(dest="command", required=True)

    def source(p: argparse.ArgumentParser) -> None:
        p.add_argument("files", nargs="*", metavar="FILE|DIR", help="__remote_log_metadata segment files, partition dirs or log dirs")
        p.add_argument("--bootstrap-server", help="read the live topic from this cluster instead of files")
        p.add_argument("--command-config", help="Property file with configs for the Admin/Consumer client")
        p.add_argument("--timeout-ms", type=int, default=60000, help="longest wait while reading the live topic (default: 60000)")
        p.add_argument("--json", action="store_true", help="one JSON document on stdout")
        p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")

    ins = sub.add_parser("inspect", help="the kafka-dump-log listing with keys, and per-segment lifecycles")
    source(ins)
    ins.add_argument("--summary", action="store_true", help="the summary alone: no listing, no lifecycles (memory "
                     "bounded by the live segments, not the files)")
    scan = sub.add_parser("scan", help="records by kind, null keys, tombstones, undecodable values, orphans, stuck and overlapping segments")
    source(scan)
    scan.add_argument("--stuck-after-ms", type=int, default=3_600_000, help="a copy or deletion started longer ago than this is stuck (default: 1 hour)")
    scan.add_argument("--verbose", action="store_true", help="list empty partitions too (--json always does)")
    scan.add_argument("--now-ms", type=int, help="the time to judge at (default: now for a cluster, the last record's for files)")
    sim = sub.add_parser("simulate", help="what compaction keeps now and after a time; the topic's growth over months")
    source(sim)
    sim.add_argument("--topic-configs", action="store_true", help="model the live topic's own cleanup.policy, retention.ms, "
                     "min.compaction.lag.ms, delete.retention.ms and segment.ms (with --bootstrap-server)")
    # The model's defaults are the core's: Kafka's compacted topic (level 2) with segments of 1,000
    # records, compacted 30 days after the last record, as `rlmeta inspect` and the page summarize.
    c = SUMMARY_COMPACTION
    sim.add_argument("--cleanup-policy", default=c["cleanup_policy"], help=f"cleanup.policy of the model (default: {c['cleanup_policy']})")
    sim.add_argument("--retention-ms", type=int, default=c["retention_ms"], help=f"(default: {c['retention_ms']}, infinite)")
    sim.add_argument("--min-compaction-lag-ms", type=int, default=c["min_compaction_lag_ms"], help=f"(default: {c['min_compaction_lag_ms']})")
    sim.add_argument("--delete-retention-ms", type=int, default=c["delete_retention_ms"], help=f"(default: {_ms(c['delete_retention_ms'])})")
    sim.add_argument("--segment-ms", type=int, default=c["segment_ms"], help=f"segment.ms of the model (default: Kafka's {_ms(c['segment_ms'])})")
    sim.add_argument("--segment-records", type=int, default=c["segment_records"], help=f"records per segment (stands in for segment.bytes; default: {c['segment_records']:,})")
    sim.add_argument("--now-ms", type=int, help="the moment 'now' (default: the last record's time for files, the clock for a cluster)")
    sim.add_argument("--after-ms", type=int, default=COMPACTION_HORIZON_MS, help=f"the later moment, after now (default: {_ms(COMPACTION_HORIZON_MS)}, when `rlmeta inspect` compacts)")
    sim.add_argument("--upload-rate", help="bytes uploaded to remote storage per day, e.g. the KIP's 1TB: projects the topic's growth (not run without it: 1TB/day for 12 months plans 335,000 uploads, minutes of CPU)")
    sim.add_argument("--segment-bytes", default="1GiB", help="size of a remote segment (default: 1GiB)")
    sim.add_argument("--tiered-retention-ms", type=int, default=30 * DAY_MS, help="how long tiered topics keep data (-1: forever; default: 30 days)")
    sim.add_argument("--user-partitions", type=int, default=64)
    sim.add_argument("--months", type=int, default=12)
    source(sub.add_parser("profile", help="replay cost per metadata partition, slowest first"))
    rec = sub.add_parser("reconcile", help="the metadata against the remote store itself, and a safe cleanup",
                         description="Holds __remote_log_metadata (segment files, or the live topic with --bootstrap-server) "
                         "against a listing of the remote store: live, dangling, size-mismatched, abandoned, stuck, leaked and "
                         "orphaned, with bytes per class and partition, and the cleanup plan. Exit status 2: a store that cannot "
                         "be listed, a layout that matches nothing, metadata that cannot be read (nothing is deleted then).",
                         epilog=_reconcile.layouts_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    source(rec)
    rec.add_argument("--store", required=True, help="the remote store: a directory (file://DIR), s3://BUCKET/PREFIX, "
                     "gs://BUCKET/PREFIX or az://CONTAINER/PREFIX")
    rec.add_argument("--inventory", metavar="MANIFEST", help="list the bucket from an S3 Inventory report instead of the "
                     "API: its manifest.json, s3://BUCKET/KEY or a local copy (CSV, ORC or Parquet; Key, Size and "
                     "LastModifiedDate enabled); segments newer than the report, less the grace, are not judged by it; "
                     "with --delete each planned key is read again with HEAD and deleted only if unchanged")
    rec.add_argument("--layout", default="aiven", help="a preset (below) or a template spec (default: aiven)")
    rec.add_argument("--endpoint-url", help="S3-compatible endpoint (default: AWS's)")
    rec.add_argument("--region", help="S3 region (default: as AWS tools find it)")
    rec.add_argument("--profile", help="AWS profile of the credentials (default: as AWS tools find them)")
    rec.add_argument("--gcs-project", help="Google Cloud project of a gs:// store (default: as gcloud finds it; "
                     "credentials: Application Default Credentials, or STORAGE_EMULATOR_HOST for an emulator)")
    rec.add_argument("--azure-connection-string", help="the storage account of an az://CONTAINER/PREFIX store "
                     "(default: $AZURE_STORAGE_CONNECTION_STRING)")
    rec.add_argument("--grace", default="24h", help="objects younger, and copies or deletions started more recently, "
                     "than this are left alone (default: 24h)")
    rec.add_argument("--now-ms", type=int, help="the time to judge at (default: the clock)")
    rec.add_argument("--emit-sql", metavar="DIR", help="with an s3:// --store and its --inventory: write the ledger "
                     "(ledger.csv) and one SQL query (reconcile.sql) that classifies the inventory's objects on Athena or "
                     "Trino, for inventories too large for this machine; nothing is listed or deleted (docs/SCALING.md)")
    rec.add_argument("--sql-inventory-table", default="s3_inventory", help="the inventory's table in the query (default: s3_inventory)")
    rec.add_argument("--sql-ledger-table", default="rlmeta_ledger", help="the ledger's table in the query (default: rlmeta_ledger)")
    rec.add_argument("--sql-ledger-location", metavar="S3_FOLDER", help="with --emit-sql: also write Athena's CREATE TABLE "
                     "for ledger.csv uploaded under this folder (ledger-table.sql)")
    rec.add_argument("--delete", action="store_true", help="delete what the plan calls safe (a dry run unless --yes)")
    rec.add_argument("--yes", action="store_true", help="with --delete: really delete")
    rec.add_argument("--journal", help="with --delete --yes: append what was deleted here, one JSON line an object "
                     "(default: rlmeta-reconcile-journal.jsonl in the current directory)")
    dec = sub.add_parser("decode", help="record value hex -> JSON")
    dec.add_argument("hex", help='value bytes in hex, or "-" for stdin')
    enc = sub.add_parser("encode", help="JSON -> record value hex")
    enc.add_argument("json", help='{"apiKey", "version", "record"}, or "-" for stdin')
    return parser


COMMANDS = {"inspect": cmd_inspect, "scan": cmd_scan, "simulate": cmd_simulate, "profile": cmd_profile}


def _security_errors() -> Tuple[type, ...]:
    """The cluster client's configuration, authentication and authorization errors, once a command
    has imported it (only then can one be raised): a file scan starts without it (kafka-python's
    wrapper, ssl and logging are a tenth of its run)."""
    s = sys.modules.get(f"{__package__}._security")
    return (s.CommandConfigError, s.AccessDenied, s.AuthenticationFailed) if s is not None else ()


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "reconcile":
        return cmd_reconcile(args)
    if args.command in ("decode", "encode"):
        from .__main__ import main as value_main

        return value_main([args.command, args.hex if args.command == "decode" else args.json])
    parts = Parts()
    try:
        if not (args.command == "simulate" and not args.files and not args.bootstrap_server):
            parts = load(args)
        text, doc = COMMANDS[args.command](args, parts)
    except _security_errors() as e:
        print(f"rlmeta {args.command}: {describe(e)}", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError) as e:
        print(f"rlmeta {args.command}: {e}", file=sys.stderr)
        return 2 if isinstance(e, ValueError) and "give " in str(e) else 1
    except _native.RlmetaError as e:
        print(f"rlmeta {args.command}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # the cluster could not be read
        print(f"rlmeta {args.command}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        parts.close()
    unread = _unread_note(parts)
    if args.json:
        if unread:
            doc["notReadToEnd"] = unread
        print(json.dumps(doc, indent=1))
    else:
        sys.stdout.write(text)
        if unread:
            print(f"warning: not read to their end within --timeout-ms: {', '.join(unread)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
