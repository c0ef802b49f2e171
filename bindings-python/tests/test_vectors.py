"""Every conformance vector (vectors README), through the installed wheel.

The files are $RLMETA_VECTORS (space-separated paths) when set, else tests/vectors/*.json of the
repository (tests/vectors/*.json and tests/plans/*.json). A case's kind is its `kind`, or told by
its fields as the Rust runner does. Replay cases run through `rlmeta.Store`, write plans through
`Store.plan` with every planned record fed back through replay.
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
    if listed:
        return [Path(p) for p in listed]
    return sorted((REPO / "tests" / "vectors").glob("*.json")) + sorted((REPO / "tests" / "plans").glob("*.json"))


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


def _tip(j):
    return (j["id"], j["name"], j["partition"])


def _event_bytes(event, name):
    v = event.get(name)
    if v is None:
        return None
    return v.encode("utf-8") if name == "key" else bytes.fromhex(v)


def _answer(store, q):
    tp, op = _tip(q["topicIdPartition"]), q["op"]
    ids = lambda segs: [m.id for m in segs]  # noqa: E731
    if op == "segmentFor":
        m = store.segment_for(tp, q["leaderEpoch"], q["offset"])
        return None if m is None else m.id
    if op == "highestOffsetForEpoch":
        return store.highest_offset_for_epoch(tp, q["leaderEpoch"])
    if op == "listSegments":
        return ids(store.segments(tp))
    if op == "listSegmentsForEpoch":
        return ids(store.segments_for_epoch(tp, q["leaderEpoch"]))
    if op == "segmentState":
        s = store.segment_state(tp, q["segmentId"])
        return None if s is None else int(s)
    raise AssertionError(f"unknown query op {op!r}")


ERRORS = {"notFound": rlmeta.NotFoundError, "notInitialized": rlmeta.NotInitializedError}


def replay_case(case):
    store = rlmeta.Store()
    for event in case["events"]:
        if "markInitialized" in event:
            store.mark_initialized(_tip(event["markInitialized"]))
            continue
        store.apply(event["offset"], _event_bytes(event, "key"), _event_bytes(event, "value"))
    for i, q in enumerate(case["queries"]):
        if "error" in q:
            with pytest.raises(ERRORS[q["error"]]):
                _answer(store, q)
            continue
        got, want = _answer(store, q), q["expect"]
        if q.get("ordered") is False:
            got, want = sorted(got), sorted(want)
        assert got == want, f"query #{i} {q}"


def plan_case(case):
    # A plan case is a regression example: without the log it must produce it checks nothing.
    assert isinstance(case.get("expect"), list), "a plan case needs \"expect\" (the records it produces)"
    store, log = rlmeta.Store(), []
    for i, event in enumerate(case["events"]):
        for p in store.plan(event, case["featureLevel"]):
            store.apply(len(log), p.key_bytes(), p.value)
            log.append({"key": p.key, "value": None if p.value is None else p.value.hex()})
    assert log == case["expect"]


RUNNERS = {
    "value": value_case,
    "invalid": invalid_case,
    "key": key_case,
    "partitioner": partitioner_case,
    "replay": replay_case,
    "plan": plan_case,
}


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
