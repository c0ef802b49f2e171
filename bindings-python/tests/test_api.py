"""The Pythonic API: dataclasses, enums, errors, keys, on the installed wheel."""

import dataclasses
import json
import pickle
import sys
import threading
from pathlib import Path

import pytest

import rlmeta
from rlmeta import (
    ApiKey,
    LeaderEpoch,
    PartitionDeleteMetadataRecord,
    PartitionDeleteState,
    RecordKey,
    SegmentId,
    SegmentMetadataRecord,
    SegmentMetadataSnapshotRecord,
    SegmentMetadataUpdateRecord,
    SegmentState,
    TopicIdPartition,
    Value,
    _native,
)

TOPIC_ID = "ASNFZ4mrze_-3LqYdlQyEA"
SEGMENT_ID = "EREREREREREiIiIiIiIiIg"
LONG_MAX, LONG_MIN = 2**63 - 1, -(2**63)


def segment_value(**changes):
    tip = TopicIdPartition(name="foo", id=TOPIC_ID, partition=0)
    record = SegmentMetadataRecord(
        remote_log_segment_id=SegmentId(topic_id_partition=tip, id=SEGMENT_ID),
        start_offset=0,
        end_offset=100,
        broker_id=1,
        max_timestamp_ms=-1,
        event_timestamp_ms=1700000000000,
        segment_leader_epochs=(LeaderEpoch(0, 0), LeaderEpoch(1, 20)),
        segment_size_in_bytes=1024,
        custom_metadata=None,
        remote_log_segment_state=SegmentState.COPY_SEGMENT_STARTED,
        txn_index_empty=False,
        broker_leader_epoch=5,
    )
    return Value(ApiKey.REMOTE_LOG_SEGMENT_METADATA, 1, dataclasses.replace(record, **changes))


def test_installed_wheel_is_under_test():
    assert "site-packages" in Path(rlmeta.__file__).parts, rlmeta.__file__
    assert Path(_native.__file__).parent == Path(rlmeta.__file__).parent
    assert (Path(rlmeta.__file__).parent / "py.typed").is_file()
    assert rlmeta.__version__ == _native.__version__


# ------------------------------------------------------------------------------ values


def test_decoded_types(value_cases):
    record_types = {0: SegmentMetadataRecord, 1: SegmentMetadataUpdateRecord, 2: PartitionDeleteMetadataRecord, 3: SegmentMetadataSnapshotRecord}
    for case in value_cases:
        v = rlmeta.decode_value(case["raw"])
        assert type(v.api_key) is ApiKey and v.api_key == case["apiKey"]
        assert type(v.record) is record_types[case["apiKey"]]
        state = getattr(v.record, "remote_log_segment_state", None)
        if state is None:
            assert type(v.record.remote_partition_delete_state) is PartitionDeleteState
        else:
            assert type(state) is SegmentState
        cm = getattr(v.record, "custom_metadata", None)
        assert cm is None or type(cm) is bytes
        for e in getattr(v.record, "segment_leader_epochs", ()):
            assert type(e) is LeaderEpoch


def test_unknown_tagged_fields_are_tag_bytes_pairs(value_cases):
    seen = 0
    for case in value_cases:
        v = rlmeta.decode_value(case["raw"])
        for tags in _all_tags(v.record):
            assert type(tags) is tuple
            for tag, data in tags:
                assert type(tag) is int and type(data) is bytes
                seen += 1
    assert seen > 0


def _all_tags(obj):
    if dataclasses.is_dataclass(obj):
        yield obj.unknown_tagged_fields
        for f in dataclasses.fields(obj):
            yield from _all_tags(getattr(obj, f.name))
    elif type(obj) is tuple:
        for x in obj:
            yield from _all_tags(x)


def test_handmade_value_round_trips():
    v = segment_value(custom_metadata=b"\x00\xff", unknown_tagged_fields=((7, b"\x01\x02"),))
    raw = rlmeta.encode_value(v)
    assert rlmeta.decode_value(raw) == v
    assert raw.hex().startswith("0100")


def test_round_trip_through_replace(value_cases):
    for case in value_cases:
        v = rlmeta.decode_value(case["raw"])
        changed = dataclasses.replace(v, record=dataclasses.replace(v.record, broker_id=4242))
        again = rlmeta.decode_value(rlmeta.encode_value(changed))
        assert again == changed and again.record.broker_id == 4242


def test_64_bit_numbers_stay_exact():
    v = segment_value(start_offset=LONG_MIN, end_offset=LONG_MAX, event_timestamp_ms=LONG_MAX - 1)
    back = rlmeta.decode_value(rlmeta.encode_value(v))
    assert (back.record.start_offset, back.record.end_offset, back.record.event_timestamp_ms) == (LONG_MIN, LONG_MAX, LONG_MAX - 1)
    assert back.to_dict()["record"]["endOffset"] == LONG_MAX


def test_unknown_state_stays_a_raw_int():
    back = rlmeta.decode_value(rlmeta.encode_value(segment_value(remote_log_segment_state=7)))
    assert back.record.remote_log_segment_state == 7 and type(back.record.remote_log_segment_state) is int


def test_to_dict_is_plain_json(value_cases):
    for case in value_cases:
        d = rlmeta.decode_value(case["raw"]).to_dict()
        assert json.loads(json.dumps(d)) == d
        assert type(d["apiKey"]) is int


def test_absent_tagged_fields_are_none_and_left_out(first_of):
    v = rlmeta.decode_value(first_of(1, 0))
    assert v.record.broker_leader_epoch is None and v.record.end_offset is None
    assert "brokerLeaderEpoch" not in v.to_dict()["record"]
    v1 = rlmeta.decode_value(first_of(1, 1))
    assert v1.record.broker_leader_epoch is not None and "endOffset" in v1.to_dict()["record"]


def test_everything_is_frozen_and_hashable(first_of):
    v = rlmeta.decode_value(first_of(0, 1))
    targets = [(v, "version"), (v.record, "broker_id"), (v.record.remote_log_segment_id, "id"),
               (v.record.remote_log_segment_id.topic_id_partition, "partition"), (v.record.segment_leader_epochs[0], "offset"),
               (RecordKey(TOPIC_ID, "foo", 0, 1, 2, False), "topic")]
    for obj, attr in targets:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attr, 1)
    assert hash(v) == hash(rlmeta.decode_value(first_of(0, 1)))


def test_bytes_like_inputs(first_of):
    raw = first_of(0, 0)
    want = rlmeta.decode_value(raw)
    assert rlmeta.decode_value(bytearray(raw)) == want
    assert rlmeta.decode_value(memoryview(raw)) == want
    assert rlmeta.key_for_value(bytearray(raw)) == rlmeta.key_for_value(raw)


def test_large_values_decode_in_threads():
    # Over 64 KiB: the native calls release the GIL.
    v = segment_value(custom_metadata=bytes(range(256)) * 1024)
    raw = rlmeta.encode_value(v)
    results = []
    threads = [threading.Thread(target=lambda: results.append(rlmeta.decode_value(raw))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [v] * 4


# ------------------------------------------------------------------------------ keys, partitions


def test_keys():
    key = RecordKey(TOPIC_ID, "foo", 0, 100, 5, False)
    assert key.format() == str(key) == "ASNFZ4mrze_-3LqYdlQyEA:foo:0:100:5"
    assert RecordKey.parse(key.format() + ":UPDATE") == dataclasses.replace(key, update=True)
    assert rlmeta.key_for_value(rlmeta.encode_value(segment_value())) == key


def test_key_errors(first_of):
    with pytest.raises(rlmeta.InvalidKeyError) as e:
        RecordKey.parse("ASNFZ4mrze_-3LqYdlQyEA:foo:00:100:5")
    assert e.value.field == "partition"
    with pytest.raises(rlmeta.InvalidKeyError) as e:
        RecordKey.parse(b"\xff")
    assert e.value.offset == 0
    with pytest.raises(rlmeta.InvalidUuidError):
        RecordKey("nope", "foo", 0, 1, 2, False).format()
    with pytest.raises(rlmeta.InvalidArgumentError):
        rlmeta.key_for_value(first_of(3, 1))
    with pytest.raises(rlmeta.UnsupportedVersionError):
        rlmeta.key_for_value(first_of(1, 0))
    with pytest.raises(TypeError):
        RecordKey.parse(5)


def test_metadata_partition():
    assert [rlmeta.metadata_partition("ASNFZ4mrze_-3LqYdlQyEA", p, 50) for p in range(3)] == [11, 2, 38]
    with pytest.raises(rlmeta.InvalidArgumentError) as e:
        rlmeta.metadata_partition(TOPIC_ID, 0, 0)
    assert e.value.field == "numPartitions"
    with pytest.raises(OverflowError):
        rlmeta.metadata_partition(TOPIC_ID, 2**31, 50)


# ------------------------------------------------------------------------------ errors


def test_error_classes_match_the_code_table():
    codes = rlmeta.error_codes()
    classes = [c for c in vars(_native).values() if isinstance(c, type) and issubclass(c, rlmeta.RlmetaError) and c is not rlmeta.RlmetaError]
    assert sorted(c.code for c in classes) == sorted(codes.values())
    for cls in classes:
        assert codes[cls.kind] == cls.code
        assert cls.__name__ == "".join(w.capitalize() for w in cls.kind.split("_")) + "Error"
        assert cls.__module__ == "rlmeta" and getattr(rlmeta, cls.__name__) is cls
        assert cls.__bases__ == (rlmeta.RlmetaError,)
    assert rlmeta.RlmetaError.__bases__ == (Exception,)
    assert codes["truncated"] == 1 and codes["internal"] == 99


def test_typed_error_with_position(first_of):
    with pytest.raises(rlmeta.TruncatedError) as e:
        rlmeta.decode_value(b"\x01")
    err = e.value
    assert (err.code, err.kind, err.offset, err.field) == (1, "truncated", 1, "apiKey")
    assert err.message and err.message in str(err)
    raw = first_of(2, 1)
    with pytest.raises(rlmeta.TrailingBytesError) as e:
        rlmeta.decode_value(raw + b"\x00")
    assert e.value.offset == len(raw) and e.value.code == 2
    with pytest.raises(rlmeta.BadFrameVersionError):
        rlmeta.decode_value(b"\x00")


def test_errors_pickle_and_can_be_raised_from_python():
    with pytest.raises(rlmeta.TruncatedError) as e:
        rlmeta.decode_value(b"\x01")
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is rlmeta.TruncatedError and (back.offset, back.field, str(back)) == (1, "apiKey", str(e.value))
    mine = rlmeta.InvalidRecordError("made here")
    assert (mine.code, mine.kind, mine.offset, mine.field) == (13, "invalid_record", None, None)


def test_json_errors(first_of):
    with pytest.raises(rlmeta.InvalidJsonError):
        _native.encode_value_json("{")
    with pytest.raises(rlmeta.InvalidJsonError) as e:
        rlmeta.encode_value({"apiKey": 0, "record": {}})
    assert e.value.field == "version"
    d = rlmeta.decode_value(first_of(0, 1)).to_dict()
    del d["record"]["remoteLogSegmentId"]["topicIdPartition"]["id"]
    with pytest.raises(rlmeta.InvalidJsonError) as e:
        Value.from_dict(d)
    assert e.value.field == "record.remoteLogSegmentId.topicIdPartition.id"
    with pytest.raises(rlmeta.InvalidJsonError) as e:
        rlmeta.encode_value(d)
    assert e.value.field == "record.remoteLogSegmentId.topicIdPartition.id"
    d = rlmeta.decode_value(first_of(0, 1)).to_dict()
    d["record"]["customMetadata"] = "zz"
    with pytest.raises(rlmeta.InvalidJsonError) as e:
        Value.from_dict(d)
    assert e.value.field == "record.customMetadata"
    with pytest.raises(rlmeta.UnknownApiKeyError) as e:
        Value.from_dict({"apiKey": 9, "version": 0, "record": {}})
    assert e.value.field == "apiKey"


def test_kafka_message_kinds():
    codes = rlmeta.error_codes()
    assert _native.error_kind_for_kafka_message("java.nio.BufferUnderflowException") == codes["truncated"]
    assert _native.error_kind_for_kafka_message("something else entirely") is None


def test_no_python_on_the_hot_path_leaks_references(first_of):
    # A crude leak check of the native calls: the refcount of the input stays put.
    raw = first_of(0, 1)
    before = sys.getrefcount(raw)
    for _ in range(1000):
        _native.decode_value_json(raw)
        _native.key_for_value(raw)
    assert sys.getrefcount(raw) == before
