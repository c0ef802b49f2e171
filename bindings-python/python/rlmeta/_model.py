"""Record values as frozen dataclasses, and their dict form (the JSON form of vectors README §1).

Owns: the dataclasses, the IntEnums, and the conversion between a dataclass and its dict, which
is pure type conversion driven by one table (each field's converter, in its ``metadata``): field
names are the dict's keys in snake_case, ``bytes`` are hex strings, states are IntEnums where the
id is known. Never: defaults, validation or any other rule; those are the core's, applied when
a value is encoded. A tagged field that is absent from the dict is ``None`` here, and the other
way round, so the core applies its own default.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache
from typing import Any, Callable, Dict, Mapping, NamedTuple, Optional, Tuple, Type, TypeVar, Union

from . import _native

__all__ = [
    "ApiKey",
    "SegmentState",
    "PartitionDeleteState",
    "TopicIdPartition",
    "SegmentId",
    "LeaderEpoch",
    "SegmentMetadataRecord",
    "SegmentMetadataUpdateRecord",
    "PartitionDeleteMetadataRecord",
    "SegmentMetadataSnapshotRecord",
    "Record",
    "Value",
    "TaggedFields",
]


class ApiKey(IntEnum):
    """The record type, written as the frame's api key."""

    REMOTE_LOG_SEGMENT_METADATA = 0
    REMOTE_LOG_SEGMENT_METADATA_UPDATE = 1
    REMOTE_PARTITION_DELETE_METADATA = 2
    REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT = 3


class SegmentState(IntEnum):
    """Kafka's ``RemoteLogSegmentState``."""

    COPY_SEGMENT_STARTED = 0
    COPY_SEGMENT_FINISHED = 1
    DELETE_SEGMENT_STARTED = 2
    DELETE_SEGMENT_FINISHED = 3


class PartitionDeleteState(IntEnum):
    """Kafka's ``RemotePartitionDeleteState``."""

    DELETE_PARTITION_MARKED = 0
    DELETE_PARTITION_STARTED = 1
    DELETE_PARTITION_FINISHED = 2


#: Tagged fields a schema does not know: ``(tag, data)`` pairs, in the order they were read.
TaggedFields = Tuple[Tuple[int, bytes], ...]


# ---------------------------------------------------------------------------------------------
# The conversion table: how one field goes from its dict form (load) and back (dump).


@dataclass(frozen=True)
class _Conv:
    load: Callable[[Any, str], Any]
    dump: Callable[[Any], Any]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _error(cls: Type[Exception], path: str, why: str) -> Exception:
    err = cls(f"field {path}: {why}")
    err.field, err.message = path, why  # type: ignore[attr-defined]
    return err


def _bad(path: str, why: str) -> Exception:
    return _error(_native.InvalidJsonError, path, why)


_PLAIN = _Conv(lambda v, _p: v, lambda v: v)
_HEX = _Conv(lambda v, _p: None if v is None else bytes.fromhex(v), lambda v: None if v is None else bytes(v).hex())
_TAGS = _Conv(
    lambda v, p: tuple((_item(t, "tag", p), bytes.fromhex(_item(t, "hex", p))) for t in v),
    lambda v: [{"tag": tag, "hex": bytes(data).hex()} for tag, data in v],
)


def _item(d: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in d:
        raise _bad(_join(path, key), "missing field")
    return d[key]


def _state(enum: Type[IntEnum]) -> _Conv:
    """An IntEnum member where the id is known, the raw int otherwise."""
    return _Conv(lambda v, _p: enum(v) if v in enum._value2member_map_ else v, int)


def _nested(cls: type) -> _Conv:
    return _Conv(lambda v, p: _load(cls, v, p), _dump)


def _many(cls: type) -> _Conv:
    return _Conv(lambda v, p: tuple(_load(cls, x, f"{p}[{i}]") for i, x in enumerate(v)), lambda v: [_dump(x) for x in v])


def _field(conv: _Conv = _PLAIN) -> Any:
    """A field always present in the dict."""
    return dataclasses.field(metadata={"conv": conv})


def _tagged(conv: _Conv = _PLAIN) -> Any:
    """A tagged field: ``None`` when absent from the dict, and left out of it when ``None``."""
    return dataclasses.field(default=None, metadata={"conv": conv, "omit": True})


def _unknown_tags() -> Any:
    return dataclasses.field(default=(), metadata={"conv": _TAGS, "omit": True})


_T = TypeVar("_T")


class _Plan(NamedTuple):
    name: str
    key: str
    conv: _Conv
    required: bool
    omit: bool


@lru_cache(maxsize=None)
def _plan(cls: type) -> Tuple[_Plan, ...]:
    """A dataclass's fields as the conversion reads them, worked out once per class."""
    return tuple(
        _Plan(f.name, _camel(f.name), f.metadata.get("conv", _PLAIN), f.default is dataclasses.MISSING, f.metadata.get("omit", False))
        for f in dataclasses.fields(cls)
    )


def _load(cls: Type[_T], d: Any, path: str) -> _T:
    if not isinstance(d, Mapping):
        raise _bad(path, f"expected an object, got {type(d).__name__}")
    kwargs = {}
    for f in _plan(cls):
        if f.key not in d:
            if f.required:
                raise _bad(_join(path, f.key), "missing field")
            continue
        if f.conv is _PLAIN:
            kwargs[f.name] = d[f.key]
            continue
        try:
            kwargs[f.name] = f.conv.load(d[f.key], _join(path, f.key))
        except (TypeError, ValueError, AttributeError) as e:
            raise _bad(_join(path, f.key), str(e)) from e
    return cls(**kwargs)


def _dump(obj: Any) -> Dict[str, Any]:
    out = {}
    for f in _plan(type(obj)):
        v = getattr(obj, f.name)
        if f.omit and (v is None or v == ()):
            continue
        out[f.key] = v if f.conv is _PLAIN else f.conv.dump(v)
    return out


# ---------------------------------------------------------------------------------------------
# The records, fields in schema order.


@dataclass(frozen=True)
class TopicIdPartition:
    name: str
    id: str
    partition: int
    unknown_tagged_fields: TaggedFields = _unknown_tags()


@dataclass(frozen=True)
class SegmentId:
    topic_id_partition: TopicIdPartition = _field(_nested(TopicIdPartition))
    id: str = _field()
    unknown_tagged_fields: TaggedFields = _unknown_tags()


@dataclass(frozen=True)
class LeaderEpoch:
    leader_epoch: int
    offset: int
    unknown_tagged_fields: TaggedFields = _unknown_tags()


@dataclass(frozen=True)
class SegmentMetadataRecord:
    remote_log_segment_id: SegmentId = _field(_nested(SegmentId))
    start_offset: int = _field()
    end_offset: int = _field()
    broker_id: int = _field()
    max_timestamp_ms: int = _field()
    event_timestamp_ms: int = _field()
    segment_leader_epochs: Tuple[LeaderEpoch, ...] = _field(_many(LeaderEpoch))
    segment_size_in_bytes: int = _field()
    custom_metadata: Optional[bytes] = _field(_HEX)
    remote_log_segment_state: Union[SegmentState, int] = _field(_state(SegmentState))
    txn_index_empty: Optional[bool] = _tagged()
    broker_leader_epoch: Optional[int] = _tagged()
    unknown_tagged_fields: TaggedFields = _unknown_tags()


@dataclass(frozen=True)
class SegmentMetadataUpdateRecord:
    remote_log_segment_id: SegmentId = _field(_nested(SegmentId))
    broker_id: int = _field()
    event_timestamp_ms: int = _field()
    custom_metadata: Optional[bytes] = _field(_HEX)
    remote_log_segment_state: Union[SegmentState, int] = _field(_state(SegmentState))
    broker_leader_epoch: Optional[int] = _tagged()
    end_offset: Optional[int] = _tagged()
    unknown_tagged_fields: TaggedFields = _unknown_tags()


@dataclass(frozen=True)
class PartitionDeleteMetadataRecord:
    topic_id_partition: TopicIdPartition = _field(_nested(TopicIdPartition))
    broker_id: int = _field()
    event_timestamp_ms: int = _field()
    remote_partition_delete_state: Union[PartitionDeleteState, int] = _field(_state(PartitionDeleteState))
    broker_leader_epoch: Optional[int] = _tagged()
    end_offset: Optional[int] = _tagged()
    unknown_tagged_fields: TaggedFields = _unknown_tags()


@dataclass(frozen=True)
class SegmentMetadataSnapshotRecord:
    segment_id: str
    start_offset: int
    end_offset: int
    broker_id: int
    max_timestamp_ms: int
    event_timestamp_ms: int
    segment_leader_epochs: Tuple[LeaderEpoch, ...] = _field(_many(LeaderEpoch))
    segment_size_in_bytes: int = _field()
    custom_metadata: Optional[bytes] = _field(_HEX)
    remote_log_segment_state: Union[SegmentState, int] = _field(_state(SegmentState))
    txn_index_empty: Optional[bool] = _tagged()
    broker_leader_epoch: Optional[int] = _tagged()
    unknown_tagged_fields: TaggedFields = _unknown_tags()


Record = Union[SegmentMetadataRecord, SegmentMetadataUpdateRecord, PartitionDeleteMetadataRecord, SegmentMetadataSnapshotRecord]

_RECORD_TYPES: Dict[ApiKey, type] = {
    ApiKey.REMOTE_LOG_SEGMENT_METADATA: SegmentMetadataRecord,
    ApiKey.REMOTE_LOG_SEGMENT_METADATA_UPDATE: SegmentMetadataUpdateRecord,
    ApiKey.REMOTE_PARTITION_DELETE_METADATA: PartitionDeleteMetadataRecord,
    ApiKey.REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT: SegmentMetadataSnapshotRecord,
}


@dataclass(frozen=True)
class Value:
    """A ``__remote_log_metadata`` record value: its api key, schema version and record."""

    api_key: ApiKey
    version: int
    record: Record

    def to_dict(self) -> Dict[str, Any]:
        """The JSON form ``{"apiKey", "version", "record"}`` (vectors README §1), as plain dicts."""
        return {"apiKey": int(self.api_key), "version": self.version, "record": _dump(self.record)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Value:
        """The value of a JSON form ``{"apiKey", "version", "record"}``; other keys are ignored."""
        api_key = _item(d, "apiKey", "")
        if api_key not in ApiKey._value2member_map_:
            raise _error(_native.UnknownApiKeyError, "apiKey", f"no record type has api key {api_key!r}")
        record = _load(_RECORD_TYPES[ApiKey(api_key)], _item(d, "record", ""), "record")
        return cls(ApiKey(api_key), _item(d, "version", ""), record)
