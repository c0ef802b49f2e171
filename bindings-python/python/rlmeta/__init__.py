"""rlmeta: Apache Kafka's tiered-storage metadata (``__remote_log_metadata``) records.

Decode a record value to frozen dataclasses and encode it back, byte for byte as Kafka does;
format and parse KIP-1266 record keys; find the metadata partition of a user partition. Every
rule is the Rust core's (``rlmeta._native``); this package converts types. Failures raise
:class:`RlmetaError` subclasses carrying ``.code``, ``.kind``, ``.offset``, ``.field``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Union

from ._model import (
    ApiKey,
    LeaderEpoch,
    PartitionDeleteMetadataRecord,
    PartitionDeleteState,
    Record,
    SegmentId,
    SegmentMetadataRecord,
    SegmentMetadataSnapshotRecord,
    SegmentMetadataUpdateRecord,
    SegmentState,
    TaggedFields,
    TopicIdPartition,
    Value,
)
from ._native import (
    BadFrameVersionError,
    CorruptError,
    InternalError,
    InvalidArgumentError,
    InvalidJsonError,
    InvalidKeyError,
    InvalidLayoutError,
    InvalidLengthError,
    InvalidRecordError,
    InvalidStateError,
    InvalidUtf8Error,
    InvalidUuidError,
    InvalidVarintError,
    LayoutMismatchError,
    LimitExceededError,
    NotFoundError,
    NotInitializedError,
    RlmetaError,
    TrailingBytesError,
    TruncatedError,
    UnknownApiKeyError,
    UnsupportedVersionError,
    __version__,
    error_codes,
    metadata_partition,
)
from . import _native
from ._store import Applied, Orphan, Outcome, PartitionDelete, Planned, SegmentMetadata, SkipKind, Store
from ._native import Ledger, layout_presets, parse_layout
from ._native import FetchedLog, FetchWindow, PartitionScan
from ._store import Applied, Orphan, Outcome, OutcomeCode, PartitionDelete, Planned, SegmentMetadata, SkipKind, Store
from ._tables import OUTCOME_NAMES
from ._files import (
    Batch,
    BatchReader,
    Checkpoint,
    CheckpointRecord,
    FeatureLevel,
    LogRecord,
    dump_log,
    dump_log_json,
    finalized_features,
    read_batches,
    read_checkpoint,
    read_records,
)
from ._feature import (
    DEFAULT_V1_RETENTION_MS,
    DEFAULT_V1_SEGMENT_MS,
    FEATURE_NAME,
    LEVEL_RECORD_KEY,
    MetadataLevel,
    PartitionLevel,
    Readiness,
    check_v1_retention,
    kip1266_capable_managers,
    level_record,
    manager_is_kip1266_capable,
    parse_level_record,
    partitions_missing_level,
    readiness,
    safe_v1_retention_ms,
    topic_level,
    topic_level_with_policy,
    write_level,
    level_move,
    FreshTopicPlan,
    fresh_topic_plan,
    RetentionSafety,
    check_v1_retention_configs,
    CleanupTiming,
    cleanup_timing,
    expected_deletion_ms,
    KeyedVerdict,
    UnheldSegment,
    SupersededSegment,
    verify_keyed,
)
from ._compaction import (
    CompactionLog,
    CompactionPreview,
    GrowthPoint,
    TopicConfig,
    normalize_cleanup_policy,
    preview_compaction,
    preview_compaction_files,
    preview_compaction_paths,
    preview_compaction_paths_at,
    project_growth,
)
from ._inspect import Inspection, Inspector, Lifecycle, Overlap, Stuck, Summary

__all__ = [
    # files
    "Batch", "BatchReader", "LogRecord", "read_batches", "read_records", "Checkpoint", "CheckpointRecord",
    "FeatureLevel", "read_checkpoint", "finalized_features", "dump_log", "dump_log_json",
    # replay and planning
    "Store", "Applied", "Outcome", "OutcomeCode", "OUTCOME_NAMES", "SkipKind", "SegmentMetadata", "Orphan", "PartitionDelete", "Planned",
    # feature levels
    "FEATURE_NAME", "DEFAULT_V1_RETENTION_MS", "DEFAULT_V1_SEGMENT_MS", "LEVEL_RECORD_KEY", "MetadataLevel",
    "PartitionLevel", "Readiness", "readiness", "safe_v1_retention_ms", "check_v1_retention",
    "manager_is_kip1266_capable", "kip1266_capable_managers", "level_record", "parse_level_record",
    "topic_level", "topic_level_with_policy", "partitions_missing_level", "write_level", "level_move", "FreshTopicPlan", "fresh_topic_plan",
    "RetentionSafety", "check_v1_retention_configs", "CleanupTiming", "cleanup_timing", "expected_deletion_ms", "UnheldSegment", "SupersededSegment", "KeyedVerdict", "verify_keyed", "PartitionScan", "FetchWindow", "FetchedLog",
    # compaction and growth
    "TopicConfig", "CompactionLog", "CompactionPreview", "preview_compaction", "preview_compaction_files", "preview_compaction_paths", "preview_compaction_paths_at", "GrowthPoint", "project_growth", "normalize_cleanup_policy",
    # inspection
    "Inspector", "Inspection", "Lifecycle", "Summary", "Stuck", "Overlap",
    # the metadata against the remote store (rlmeta reconcile)
    "Ledger", "layout_presets", "parse_layout",
    "__version__",
    # values
    "decode_value",
    "decode_value_json",
    "encode_value",
    "Value",
    "ApiKey",
    "Record",
    "SegmentMetadataRecord",
    "SegmentMetadataUpdateRecord",
    "PartitionDeleteMetadataRecord",
    "SegmentMetadataSnapshotRecord",
    "TopicIdPartition",
    "SegmentId",
    "LeaderEpoch",
    "SegmentState",
    "PartitionDeleteState",
    "TaggedFields",
    # keys and partitions
    "RecordKey",
    "key_for_value",
    "metadata_partition",
    # errors
    "error_codes",
    "RlmetaError",
    "TruncatedError",
    "TrailingBytesError",
    "BadFrameVersionError",
    "UnknownApiKeyError",
    "UnsupportedVersionError",
    "InvalidLengthError",
    "InvalidVarintError",
    "InvalidUtf8Error",
    "InvalidKeyError",
    "InvalidUuidError",
    "InvalidArgumentError",
    "InvalidJsonError",
    "InvalidRecordError",
    "NotFoundError",
    "NotInitializedError",
    "InvalidStateError",
    "CorruptError",
    "LimitExceededError",
    "InvalidLayoutError",
    "LayoutMismatchError",
    "InternalError",
]

BytesLike = Union[bytes, bytearray, memoryview]


def decode_value(value: BytesLike) -> Value:
    """Decodes a record value (the bytes of a ``__remote_log_metadata`` record's value)."""
    return Value.from_dict(json.loads(decode_value_json(value)))


def decode_value_json(value: BytesLike) -> str:
    """Decodes a record value to its JSON text ``{"apiKey", "version", "record"}``."""
    return _native.decode_value_json(value if isinstance(value, bytes) else bytes(value))


def encode_value(value: Union[Value, Mapping[str, Any]]) -> bytes:
    """Encodes a value, or its dict form ``{"apiKey", "version", "record"}``, to record value bytes."""
    d = value.to_dict() if isinstance(value, Value) else value
    return _native.encode_value_json(json.dumps(d))


@dataclass(frozen=True)
class RecordKey:
    """A KIP-1266 record key: ``<topicId>:<topic>:<partition>:<endOffset>:<brokerLeaderEpoch>``,
    with ``:UPDATE`` for update and partition-delete records."""

    topic_id: str
    topic: str
    partition: int
    end_offset: int
    broker_leader_epoch: int
    update: bool

    def format(self) -> str:
        """The key text."""
        return _native.key_format(
            self.topic_id, self.topic, self.partition, self.end_offset, self.broker_leader_epoch, self.update
        )

    def __str__(self) -> str:
        return self.format()

    @classmethod
    def parse(cls, key: Union[str, bytes]) -> RecordKey:
        """Parses key text, or a record's key bytes (UTF-8). Only the text Kafka writes parses."""
        return cls(*_native.key_parse(key))


def key_for_value(value: BytesLike) -> RecordKey:
    """The key KIP-1266 writes for a record value."""
    return RecordKey(*_native.key_for_value(value if isinstance(value, bytes) else bytes(value)))
