"""The JSON listing (``rlmeta.dump_log_json``, the core's, which ``inspect --json`` and the
inspector page show) against a second reader that shares no rlmeta code: kafka-python's own record
batch reader (``kafka.record.MemoryRecords``, with its gzip, snappy, lz4 and zstd codecs), on every
segment file under tests/fixtures. Every batch header field, the CRC verdict, every record's
offset, timestamp, key, value and headers, and the invalid bytes at the end. Kafka's own
DumpLogSegments is the other reference (bindings-wasm/inspector/tests/kafka.test.mjs)."""

import json
from pathlib import Path

import pytest
from kafka import codec
from kafka.record import MemoryRecords

import rlmeta

REPO = Path(__file__).resolve().parents[2]
SEGMENTS = sorted((REPO / "tests" / "fixtures").rglob("*.log"))
# kafka-python's compression type ids
CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def test_there_are_fixtures_and_every_codec_is_readable():
    assert len(SEGMENTS) >= 10, SEGMENTS
    # a codec kafka-python cannot load would make it fail, not skip (py-deps installs them)
    assert codec.has_gzip() and codec.has_snappy() and codec.has_lz4() and codec.has_zstd()


def kafka_python(data: bytes):
    """Every batch kafka-python's reader walks, with its records, and where it stopped."""
    records = MemoryRecords(data)
    batches, position = [], 0
    while records.has_next():
        b = records.next_batch()
        if b is None:
            break
        size = b.size_in_bytes
        crc_valid = b.validate_crc()  # before iterating, as kafka-python requires
        batches.append((position, b, crc_valid, list(b)))
        position += size
    return batches, len(data) - position


@pytest.mark.parametrize("path", SEGMENTS, ids=lambda p: str(p.relative_to(REPO / "tests" / "fixtures")))
def test_listing_equals_kafka_pythons_reading(path):
    data = path.read_bytes()
    ours = json.loads(rlmeta.dump_log_json(data, path.name))
    theirs, rest = kafka_python(data)
    assert len(ours["batches"]) == len(theirs)
    assert ours["invalidBytesAtEnd"] == rest
    fields = 0
    for ob, (position, kb, crc_valid, krecs) in zip(ours["batches"], theirs):
        at = f"{path.name} batch at byte {position}"
        pairs = [
            (ob["position"], position), (int(ob["baseOffset"]), kb.base_offset), (int(ob["lastOffset"]), kb.last_offset),
            (ob["count"], kb.records_count), (ob["baseSequence"], kb.base_sequence), (ob["lastSequence"], kb.last_sequence),
            (int(ob["producerId"]), kb.producer_id), (ob["producerEpoch"], kb.producer_epoch),
            (ob["partitionLeaderEpoch"], kb.leader_epoch), (ob["isTransactional"], kb.is_transactional),
            (ob["isControl"], kb.is_control_batch), (int(ob["maxTimestamp"]), kb.max_timestamp),
            (ob["timestampType"], ["CreateTime", "LogAppendTime"][kb.timestamp_type]), (ob["size"], kb.size_in_bytes),
            (ob["magic"], kb.magic), (ob["compression"], CODECS[kb.compression_type]), (ob["crc"], kb.crc),
            (ob["crcValid"], crc_valid), (len(ob["records"]), len(krecs)),
        ]
        for i, (a, b) in enumerate(pairs):
            assert a == b, f"{at}: field {i}: {a!r} != {b!r}"
        fields += len(pairs)
        for orec, krec in zip(ob["records"], krecs):
            rat = f"{at} offset {krec.offset}"
            assert int(orec["offset"]) == krec.offset, rat
            assert int(orec["timestamp"]) == krec.timestamp, rat
            assert (None if orec["key"] is None else orec["key"].encode()) == krec.key, rat
            assert orec["keySize"] == (-1 if krec.key is None else len(krec.key)), rat
            assert orec["valueSize"] == (-1 if krec.value is None else len(krec.value)), rat
            assert orec["valueHex"] == (None if krec.value is None else krec.value.hex()), rat
            assert [(h["key"], h["valueHex"]) for h in orec["headers"]] == [
                (k, None if v is None else v.hex()) for k, v in krec.headers], rat
            fields += 7
    assert fields > 0
