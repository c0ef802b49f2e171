"""Segment files (``.log``) and KRaft checkpoints, read batch by batch.

Owns: the iterators and the frozen dataclasses of batches, records and checkpoints. Never: the
walk's rules (framing, CRCs, legacy entries, compression); those are the core's ``batch`` and
``checkpoint``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional, Tuple, Union

from . import _native

# The metadata topic: its partitions' directories are named after it.
from ._tables import METADATA_TOPIC

__all__ = [
    "Batch",
    "LogRecord",
    "BatchReader",
    "read_batches",
    "read_records",
    "Checkpoint",
    "CheckpointRecord",
    "FeatureLevel",
    "read_checkpoint",
    "finalized_features",
    "dump_log",
    "dump_log_json",
    "write_dump_log",
    "FileLike",
]

#: A path or a file's bytes.
FileLike = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]


def _bytes(f: FileLike) -> bytes:
    if isinstance(f, (bytes, bytearray, memoryview)):
        return bytes(f)
    with open(f, "rb") as fh:
        return fh.read()


@dataclass(frozen=True)
class LogRecord:
    """One record of a batch."""

    offset: int
    timestamp: int
    key: Optional[bytes]
    value: Optional[bytes]
    headers: Tuple[Tuple[bytes, Optional[bytes]], ...]


@dataclass(frozen=True)
class Batch:
    """A magic-2 record batch, header fields as stored, and its records."""

    position: int
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    compression: str
    timestamp_type: str
    is_transactional: bool
    is_control: bool
    #: None when CRCs were not checked.
    crc_valid: Optional[bool]
    size_in_bytes: int
    records: Tuple[LogRecord, ...]

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta


class BatchReader:
    """Iterates the batches of a file image. Entries the walk skips (legacy magic 0/1) are kept in
    :attr:`skipped` as errors; an error that ends the walk (a cut entry, a bad CRC) is raised
    after the batches before it were yielded."""

    def __init__(self, data: FileLike, verify_crc: bool = True) -> None:
        self._native = _native.BatchReader(_bytes(data), verify_crc)
        self.skipped: List[_native.RlmetaError] = []

    @property
    def position(self) -> int:
        """Bytes consumed as whole entries so far."""
        return self._native.position

    def __iter__(self) -> Iterator[Batch]:
        return self

    def __next__(self) -> Batch:
        while True:
            item = self._native.next_batch()
            if item is None:
                raise StopIteration
            batch, skipped = item
            if skipped is not None:
                self.skipped.append(skipped)
                continue
            (a, b, c), records = batch
            recs = tuple(LogRecord(o, t, k, v, tuple((bytes(hk), hv) for hk, hv in h)) for o, t, k, v, h in records)
            return Batch(*a, *b, *c, records=recs)


def read_batches(data: FileLike, verify_crc: bool = True) -> BatchReader:
    """The batches of a ``.log`` segment file or a checkpoint (a path or its bytes), lazily."""
    return BatchReader(data, verify_crc)


def read_records(data: FileLike, verify_crc: bool = True) -> Iterator[LogRecord]:
    """Every record of a file, batch by batch."""
    for batch in BatchReader(data, verify_crc):
        yield from batch.records


@dataclass(frozen=True)
class CheckpointRecord:
    offset: int
    api_key: int
    version: int


@dataclass(frozen=True)
class FeatureLevel:
    offset: int
    name: str
    level: int


@dataclass(frozen=True)
class Checkpoint:
    """A KRaft checkpoint (the zero checkpoint of KIP-1170, a snapshot, a bootstrap file)."""

    #: ``(version, last_contained_log_timestamp)`` of the snapshot header, if present.
    header: Optional[Tuple[int, int]]
    footer_version: Optional[int]
    kraft_version: Optional[int]
    voters: Optional[Tuple[int, ...]]
    batches: int
    records: Tuple[CheckpointRecord, ...]
    features: Tuple[FeatureLevel, ...]
    #: Header first and footer last: a cut file could have lost any record.
    complete: bool


def read_checkpoint(data: FileLike) -> Checkpoint:
    h, f, k, v, n, recs, feats, complete = _native.read_checkpoint(_bytes(data))
    return Checkpoint(
        None if h is None else tuple(h),  # type: ignore[arg-type]
        f,
        k,
        None if v is None else tuple(v),
        n,
        tuple(CheckpointRecord(*r) for r in recs),
        tuple(FeatureLevel(*x) for x in feats),
        complete,
    )


def finalized_features(data: FileLike) -> dict:
    """The feature levels a complete checkpoint finalizes, by name (absent is not level 0)."""
    return dict(_native.finalized_features(_bytes(data)))


def dump_log(data: FileLike, name: Optional[str] = None, keys: bool = True) -> str:
    """kafka-dump-log's listing of a segment file, with each record's key unless ``keys=False``
    (which is Kafka 4.4.0's text exactly)."""
    if name is None:
        name = os.path.basename(os.fspath(data)) if not isinstance(data, (bytes, bytearray, memoryview)) else "00000000000000000000.log"
    return _native.dump_log(name, _bytes(data), keys)


def write_dump_log(path: Union[str, "os.PathLike[str]"], write: Callable[[str], object], name: Optional[str] = None,
                   keys: bool = True) -> None:
    """:func:`dump_log` of the file at ``path``, read by the binding in chunks and handed to
    ``write`` (``sys.stdout.write``, say) a piece at a time as it is produced: neither the file
    nor its listing is ever whole in memory. OSError if the file does not read."""
    if name is None:
        name = os.path.basename(os.fspath(path))
    _native.dump_log_path(name, os.fspath(path), keys, write)


def dump_log_json(data: FileLike, name: Optional[str] = None) -> str:
    """The JSON listing of a segment file."""
    if name is None:
        name = os.path.basename(os.fspath(data)) if not isinstance(data, (bytes, bytearray, memoryview)) else "00000000000000000000.log"
    return _native.dump_log_json(name, _bytes(data))
