"""Every conformance vector (vectors README), through the installed wheel.

The files are $RLMETA_VECTORS (space-separated paths) when set, else tests/vectors/*.json of the
repository. A case's kind is its `kind`, or told by its fields as the Rust runner does; kinds
this binding has no API for (replay, plan, ...) are skipped.
"""

import json
import os
from pathlib import Path

import pytest

import rlmeta
from rlmeta import RecordKey, Value, _native

REPO = Path(__file__).resolve().parents[2]


def _files():
    listed = os.environ.get("RLMETA_VECTORS", "").split()
    return [Path(p) for p in listed] if listed else sorted((REPO / "tests" / "vectors").glob("*.json"))


def _kind(case):
    if "kind" in case:
        return case["kind"]
    for field, kind in (("numPartitions", "partitioner"), ("key", "key"), ("error", "invalid"), ("record", "value")):
        if field in case:
            return kind
    return "unknown"


def _params():
    for path in _files():
        for i, case in enumerate(json.loads(path.read_text(encoding="utf-8"))["cases"]):
            yield pytest.param(case, id=f"{path.stem}:{case.get('name', i)}")


CASES = list(_params())


def _same(a, b):
    """Equal as JSON: unlike ==, tells 1 from True and 0 from False."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def value_case(case):
    raw = bytes.fromhex(case["hex"])
    want = {"apiKey": case["apiKey"], "version": case["version"], "record": case["record"]}
    value = rlmeta.decode_value(raw)
    assert _same(value.to_dict(), want), value.to_dict()
    assert rlmeta.encode_value(Value.from_dict(want)) == raw
    assert rlmeta.encode_value(want) == raw
    assert Value.from_dict(want) == value
    assert _same(json.loads(_native.decode_value_json(raw)), want)


def invalid_case(case):
    kafka = " | ".join([case["error"], *case.get("causes", [])])
    with pytest.raises(rlmeta.RlmetaError) as caught:
        rlmeta.decode_value(bytes.fromhex(case["hex"]))
    err = caught.value
    assert type(err).code == err.code and isinstance(err.code, int)
    want = _native.error_kind_for_kafka_message(kafka)
    if want is not None:
        assert err.code == want, f"rlmeta says {err}; Kafka said {kafka}"


def key_case(case):
    key = RecordKey(
        case["topicId"], case["topicName"], case["partition"], case["endOffset"], case["brokerLeaderEpoch"], case["update"]
    )
    assert key.format() == case["key"]
    assert RecordKey.parse(case["key"]) == key
    assert RecordKey.parse(case["key"].encode()) == key


def partitioner_case(case):
    got = rlmeta.metadata_partition(case["topicId"], case["partition"], case["numPartitions"])
    assert got == case["metadataPartition"]


RUNNERS = {"value": value_case, "invalid": invalid_case, "key": key_case, "partitioner": partitioner_case}


@pytest.mark.parametrize("case", CASES)
def test_vector(case):
    kind = _kind(case)
    if kind not in RUNNERS:
        pytest.skip(f"case kind {kind!r} has no Python API yet")
    RUNNERS[kind](case)


def test_vectors_were_found():
    assert _files(), "no vector files"
    kinds = {_kind(p.values[0]) for p in CASES}
    if "RLMETA_VECTORS" not in os.environ:
        assert set(RUNNERS) <= kinds, kinds
