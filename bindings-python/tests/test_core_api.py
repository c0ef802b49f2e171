"""The Python API of the whole core, on real files: a Kafka 4.4.0 broker's metadata segments and
checkpoints (tests/fixtures/broker, with Kafka's own kafka-dump-log output beside them) and the
crafted fixtures (every codec, a corrupt CRC, a cut tail, a KIP-1266 keyed log)."""

import json
import re
from pathlib import Path

import pytest

import rlmeta
from rlmeta import MetadataLevel, OutcomeCode, SegmentState

REPO = Path(__file__).resolve().parents[2]
BROKER = REPO / "tests" / "fixtures" / "broker"
CRAFTED = REPO / "tests" / "fixtures" / "crafted"
META_FILES = sorted(BROKER.glob("remote_log_metadata/__remote_log_metadata-*/*.log"))
KAFKA_RECORD = re.compile(r"^\| offset: (\d+) CreateTime: (\d+) keySize: (-?\d+) valueSize: (-?\d+)")


def kafka_dump(path):
    """(offset, timestamp, key size, value size) of every record in Kafka's own dump of a file."""
    name = f"{path.parent.name}-{path.name}.txt"
    rows = []
    for line in (BROKER / "dump" / name).read_text().splitlines():
        m = KAFKA_RECORD.match(line)
        if m:
            rows.append(tuple(int(x) for x in m.groups()))
    return rows


@pytest.mark.parametrize("path", META_FILES, ids=lambda p: p.parent.name)
def test_records_equal_kafka_dump_log(path):
    records = list(rlmeta.read_records(path))
    want = kafka_dump(path)
    got = [(r.offset, r.timestamp, -1 if r.key is None else len(r.key), -1 if r.value is None else len(r.value)) for r in records]
    assert got == want and want
    batches = list(rlmeta.read_batches(path))
    assert all(b.crc_valid and b.magic == 2 and b.compression == "none" for b in batches)
    assert sum(len(b.records) for b in batches) == len(records)
    print(f"{path.parent.name}: {len(records)} records equal kafka-dump-log's")


def test_batches_are_a_lazy_iterator():
    reader = rlmeta.read_batches(META_FILES[0])
    first = next(reader)
    assert reader.position == first.size_in_bytes
    assert first.position == 0 and first.base_offset == 0


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compressed_fixtures(codec):
    (path,) = (CRAFTED / codec).glob("*/*.log")
    batches = list(rlmeta.read_batches(path))
    assert {b.compression for b in batches} == {codec}
    dump = (CRAFTED / "dump" / f"{codec}.txt").read_text()
    assert sum(len(b.records) for b in batches) == len(re.findall(r"^\| offset:", dump, re.M))


def test_corrupt_crc_and_cut_tail_raise_typed_errors():
    (corrupt,) = (CRAFTED / "corrupt-crc").glob("*/*.log")
    with pytest.raises(rlmeta.CorruptError) as e:
        list(rlmeta.read_batches(corrupt))
    assert e.value.code == 17
    assert list(rlmeta.read_batches(corrupt, verify_crc=False))
    (cut,) = (CRAFTED / "truncated-tail").glob("*/*.log")
    reader = rlmeta.read_batches(cut)
    got = []
    with pytest.raises(rlmeta.RlmetaError) as e:
        for b in reader:
            got.append(b)
    assert got and e.value.code in (1, 17) and reader.position < cut.stat().st_size


def test_store_replays_a_broker_segment_and_answers_queries():
    store = rlmeta.Store()
    for path in META_FILES:
        store.apply_file(path.read_bytes())
    parts = store.partitions()
    assert parts and all(isinstance(p, rlmeta.TopicIdPartition) for p in parts)
    live = [m for tp in parts for m in store.all_segments(tp)]
    # Kafka's remote storage still holds exactly these segments (tests/fixtures/broker/remote-listing.txt).
    listing = (BROKER / "remote-listing.txt").read_text()
    remote_ids = set(re.findall(r"/([A-Za-z0-9_-]{22}):", listing))
    assert {m.id for m in live} == remote_ids
    tp = next(tp for tp in parts if store.all_segments(tp))
    with pytest.raises(rlmeta.NotInitializedError):
        store.segments(tp)
    assert store.mark_initialized(tp)
    segs = store.segments(tp)
    assert all(m.state is SegmentState.COPY_SEGMENT_FINISHED for m in segs)
    first = segs[0]
    assert store.segment_for(tp, first.leader_epochs[0][0], first.start_offset) == first
    assert store.highest_offset_for_epoch(tp, first.leader_epochs[-1][0]) >= first.end_offset
    assert store.segment_state(tp, first.id) is SegmentState.COPY_SEGMENT_FINISHED
    with pytest.raises(rlmeta.NotFoundError):
        store.segments(("AAAAAAAAAAAAAAAAAAAAAA", "nope", 0))
    print(f"store: {len(live)} live segments, equal to the broker's remote storage")


def test_apply_reports_what_would_stop_an_old_broker():
    store = rlmeta.Store()
    tomb = store.apply(0, b"ASNFZ4mrze_-3LqYdlQyEA:foo:0:100:5", None)
    assert tomb.skip is rlmeta.SkipKind.TOMBSTONE and tomb.fatal_to_kafka
    bad = store.apply(1, None, b"\x00\x01")
    assert bad.skip is rlmeta.SkipKind.UNDECODABLE and bad.error_code is not None and bad.fatal_to_kafka
    level = store.apply(2, *rlmeta.level_record(1))
    assert level.skip is rlmeta.SkipKind.LEVEL_RECORD and level.detail == "1" and level.fatal_to_kafka
    outcomes = store.apply_many([(3, None, None), (4, b"x", b"\x00")])
    assert [o.outcome for o in outcomes] == [rlmeta.Outcome.SKIPPED] * 2


def test_a_version_1_value_is_fatal_to_an_old_broker_even_when_applied():
    # Kafka 4.4.0's serde cannot read a version-1 value (its nested structs refuse version 1), so
    # its metadata consumer stops on one, whatever the cache would have done with it.
    plans = json.loads((REPO / "tests/plans/lifecycle.json").read_text())
    event = plans["cases"][0]["events"][0]
    assert event["op"] == "copyStarted"
    for level, applied, again in [
        (MetadataLevel.V0, OutcomeCode.APPLIED, OutcomeCode.ALREADY_APPLIED),
        (MetadataLevel.V1, OutcomeCode.APPLIED_V1, OutcomeCode.ALREADY_APPLIED_V1),
        (MetadataLevel.V2, OutcomeCode.APPLIED_V1, OutcomeCode.ALREADY_APPLIED_V1),
    ]:
        store = rlmeta.Store()
        (p,) = store.plan(event, level)
        assert rlmeta.decode_value(p.value).version == (level is not MetadataLevel.V0)
        first, second = store.apply_many([(0, p.key.encode(), p.value)] * 2)
        assert (first.outcome, first.code, second.code) == (rlmeta.Outcome.APPLIED, applied, again), level
        fatal = level is not MetadataLevel.V0
        assert (first.fatal_to_kafka, second.fatal_to_kafka) == (fatal, fatal), level
        assert first.fatal_to_kafka == rlmeta._tables.OUTCOME_FATAL_TO_KAFKA[first.code]
        assert rlmeta.Store().apply(0, p.key.encode(), p.value).fatal_to_kafka == fatal


def test_keyed_log_orphans_and_planner():
    (path,) = (CRAFTED / "kip1266-keyed").glob("*/*.log")
    records = list(rlmeta.read_records(path))
    whole = rlmeta.Store()
    assert whole.apply_file(path.read_bytes()) == len(records) == 15
    assert whole.partitions() == []  # the script ends by deleting the partition
    store = rlmeta.Store()
    store.apply_many([(r.offset, r.key, r.value) for r in records[:4]])  # two uploads, finished
    tp = store.partitions()[0]
    seg = store.all_segments(tp)[0]
    event = {
        "op": "deleteStarted",
        "remoteLogSegmentId": {"topicIdPartition": {"name": tp.name, "id": tp.id, "partition": tp.partition}, "id": seg.id},
        "brokerId": 1, "eventTimestampMs": seg.event_timestamp_ms + 1, "brokerLeaderEpoch": seg.broker_leader_epoch + 1,
        "customMetadata": None,
    }
    planned = store.plan(event, MetadataLevel.V2)
    assert len(planned) == 1 and planned[0].key.endswith(":UPDATE") and planned[0].value
    decoded = rlmeta.decode_value(planned[0].value)
    assert decoded.record.remote_log_segment_state is SegmentState.DELETE_SEGMENT_STARTED
    # The planner reads the store and never changes it.
    assert store.all_segments(tp)[0].state == seg.state
    assert all(p.value is not None for p in store.plan_backfill(tp, 1, MetadataLevel.V1))
    # An update whose segment record is missing is kept as an orphan (for deletion retries).
    lone = rlmeta.Store()
    assert lone.apply(records[1].offset, records[1].key, records[1].value).outcome is rlmeta.Outcome.ORPHANED
    (orphan,) = lone.orphans(tp)
    assert orphan.end_offset == 99 and orphan.broker_leader_epoch == 2 and orphan.key == records[1].key.decode()


def test_checkpoints_and_feature_levels_equal_kafka_features():
    zero, later = sorted((BROKER / "cluster_metadata" / "__cluster_metadata-0").glob("*.checkpoint"))
    cp = rlmeta.read_checkpoint(zero)
    assert cp.complete and cp.header is not None and cp.records
    levels = rlmeta.finalized_features(later)
    described = dict(re.findall(r"Feature: (\S+)\s.*FinalizedVersionLevel: (\S+)", (BROKER / "features.txt").read_text()))
    for name, level in levels.items():
        if described.get(name, "").isdigit():
            assert level == int(described[name]), name
    assert rlmeta.FEATURE_NAME not in levels and "remote.log.metadata.version" not in described


def test_compaction_model_keeps_latest_per_key_and_drops_null_keys():
    log = rlmeta.CompactionLog(rlmeta.TopicConfig(cleanup_policy="compact", segment_ms=10, delete_retention_ms=100))
    log.append(0, b"a", b"1")
    log.append(1, None, b"old")
    log.append(2, b"a", b"2")
    log.append(20, b"b", b"1")
    log.clean(30)
    assert [r[0] for r in log.records()] == [2, 3]
    assert rlmeta.normalize_cleanup_policy("delete, compact") == "compact,delete"
    with pytest.raises(rlmeta.InvalidArgumentError):
        rlmeta.CompactionLog(rlmeta.TopicConfig(cleanup_policy="nope"))


def test_feature_levels_configs_moves_and_verdicts():
    assert MetadataLevel.V1.topic_configs(600_000, 86_400_000) == {
        "cleanup.policy": "compact,delete", "retention.ms": "600000",
        "min.compaction.lag.ms": "600000", "segment.ms": "86400000",
    }
    assert MetadataLevel.V2.topic_configs()["retention.ms"] is None
    MetadataLevel.V0.check_upgrade(MetadataLevel.V1)
    with pytest.raises(rlmeta.InvalidStateError):
        MetadataLevel.V0.check_upgrade(MetadataLevel.V2)
    r = rlmeta.readiness(24, 1780448367505, 86_400_000, 600_000)
    assert not r.ready and r.estimated_cleanup_ms == 1780448367505 + 87_000_000
    assert rlmeta.readiness(0, None, 1, 1).ready
    assert rlmeta.safe_v1_retention_ms([7 * 86_400_000, 30 * 86_400_000]) == 30 * 86_400_000
    with pytest.raises(rlmeta.InvalidStateError) as e:
        rlmeta.check_v1_retention(600_000, [86_400_000])
    assert "86400000" in str(e.value)
    rlmeta.check_v1_retention(600_000, [86_400_000], force=True)
    assert rlmeta.manager_is_kip1266_capable("dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager")
    assert not rlmeta.manager_is_kip1266_capable(
        "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager")
    assert rlmeta.parse_level_record(*rlmeta.level_record(2)) is MetadataLevel.V2
    assert rlmeta.parse_level_record(b"other", b"2") is None
    with pytest.raises(rlmeta.InvalidRecordError):
        rlmeta.parse_level_record(rlmeta.LEVEL_RECORD_KEY, b"3")
    P = rlmeta.PartitionLevel
    assert rlmeta.topic_level([P(True, MetadataLevel.V1), P(True)]) is MetadataLevel.V0
    with pytest.raises(rlmeta.NotInitializedError):
        rlmeta.topic_level([P(False)])
    assert rlmeta.partitions_missing_level([P(True, MetadataLevel.V1), P(True)], 1) == [1]


def test_write_level_is_the_plugins_rule_supported_not_finalized_included():
    P = rlmeta.PartitionLevel
    V0, V1, V2 = MetadataLevel.V0, MetadataLevel.V1, MetadataLevel.V2
    assert rlmeta.write_level(1, [P(True, V2)], "compact") is V1  # a finalized level decides alone
    assert rlmeta.write_level(None, [P(True), P(True)], "delete") is V0
    assert rlmeta.write_level(None, [P(True)], "compact,delete") is V1
    assert rlmeta.write_level(None, [P(True, V2), P(False)], "compact") is None  # unread: unknown, never 0
    assert rlmeta.write_level(None, [P(True)], None) is None
    # The migration tool's level is the same function: a cluster whose brokers support the feature
    # but never finalized it, on a topic rlmeta already moved to 2, is at 2 (the tool's own rule
    # used to say 0 here while the plugin said 2).
    from rlmeta.migration import PartitionScan, TopicState

    scans = {p: PartitionScan(p, level=V2, read_to_end=True) for p in range(2)}
    assert TopicState(scans, {"cleanup.policy": "compact"}, True, None).level() is V2
    assert TopicState(scans, {"cleanup.policy": "compact"}, True, 1).level() is V1
    # where the move writes: the feature where supported, else the partitions lacking the record
    assert rlmeta.level_move(True, None, [P(True, V1)], V1) == (V1, [])
    assert rlmeta.level_move(True, 1, [P(True)], V1) == (None, [])
    assert rlmeta.level_move(False, None, [P(True, V1), P(True)], V1) == (None, [1])


def test_fresh_topic_plan_sets_no_retention_at_level_2():
    plan = rlmeta.fresh_topic_plan(None)
    assert plan.level is MetadataLevel.V2 and plan.level_record == b"2"
    assert plan.configs == {"cleanup.policy": "compact", "remote.storage.enable": "false"}
    plan0 = rlmeta.fresh_topic_plan(0, 604_800_000)
    assert plan0.level_record is None and plan0.configs["retention.ms"] == "604800000"


class _Cluster:
    """The four reads the retention check makes, over fixed configs."""

    def __init__(self, topics, brokers):
        self._topics, self._brokers = topics, brokers

    def topics(self):
        return list(self._topics)

    def topic_configs(self, names):
        return {n: self._topics[n] for n in names}

    def brokers(self):
        return [int(b) for b in self._brokers]

    def broker_configs(self, ids):
        return {str(b): self._brokers[str(b)] for b in ids}


def test_v1_retention_safety_from_raw_configs_with_kafkas_defaults():
    from rlmeta.migration import Failure, check_retention

    day = 86_400_000
    tiered = {"remote.storage.enable": "true", "retention.ms": str(30 * day), "retention.bytes": "-1"}
    # a broker that leaves remote.log.manager.task.interval.ms unset runs it every 30 s (Kafka's
    # default): 30 days exactly deletes metadata of segments still live (the tool used to take 0)
    cluster = _Cluster({"t": tiered, "plain": {"retention.ms": "-1"}}, {"1": {"remote.log.manager.task.interval.ms": None}})
    with pytest.raises(Failure, match="needs at least 2592030000 ms"):
        check_retention(cluster, 30 * day, force=False)
    check_retention(cluster, 30 * day + 30_000, force=False)
    v = rlmeta.check_v1_retention_configs(30 * day, {"t": tiered}, {}, force=True)
    assert (v.safe, v.safe_ms, v.margin_ms, v.tiered) == (False, 30 * day + 30_000, 30_000, {"t": 30 * day})
    # no retention.ms on the topic: the broker's log.retention.hours (default 168 h)
    v = rlmeta.check_v1_retention_configs(0, {"t": {"remote.storage.enable": "true"}}, {"1": {"log.retention.hours": "24"}}, True)
    assert v.safe_ms == day + 30_000
    # retention.bytes bounds size, not age: infinite time retention stays unsafe, and says why
    by_size = {"s": {"remote.storage.enable": "true", "retention.ms": "-1", "retention.bytes": "1073741824"}}
    with pytest.raises(rlmeta.InvalidStateError, match="retention.bytes=1073741824"):
        rlmeta.check_v1_retention_configs(365 * day, by_size, {})
    with pytest.raises(rlmeta.InvalidArgumentError):
        rlmeta.check_v1_retention_configs(0, {"t": {"remote.storage.enable": "true", "retention.ms": "soon"}}, {})


def test_cleanup_estimate_sums_before_rounding():
    half = 43_200_000
    assert rlmeta.expected_deletion_ms(half, half) == 86_400_000  # days(s) + days(r) said 0
    assert rlmeta.expected_deletion_ms(half, -1) is None
    t = rlmeta.cleanup_timing({"retention.ms": "-1", "segment.ms": "86400000", "min.compaction.lag.ms": None}, {})
    assert (t.segment_ms, t.retention_ms, t.min_compaction_lag_ms, t.expected_deletion_ms) == (86_400_000, -1, 0, None)


def test_inspector_on_a_broker_segment_and_stuck_overlaps():
    ins = rlmeta.Inspector()
    ins.push_file(META_FILES[0].read_bytes())
    assert ins.stuck(2**62, 0) == [] or all(s.state in (SegmentState.COPY_SEGMENT_STARTED, SegmentState.DELETE_SEGMENT_STARTED) for s in ins.stuck(2**62, 0))
    report = ins.finish()
    assert report.summary.records == len(kafka_dump(META_FILES[0]))
    assert report.summary.null_key_records == report.summary.records
    assert "Summary:" in report.text and report.segments
    with pytest.raises(rlmeta.InvalidStateError):
        ins.finish()
    # A copy started and never finished is stuck; two live copied (finished) segments of one
    # range overlap. Two copies still in progress do not (neither serves a fetch): the one
    # definition of the core (inspect::is_stuck / overlapping_pairs), the page's marks too.
    store_events = rlmeta.Inspector()
    planner = rlmeta.Store()
    for i, (sid, start, end) in enumerate([("EREREREREREiIiIiIiIiIg", 0, 99), ("MzMzMzMzMzNERERERERERA", 50, 150)]):
        ev = {"op": "copyStarted", "brokerLeaderEpoch": i + 1, "segment": {
            "remoteLogSegmentId": {"topicIdPartition": {"name": "t", "id": "ASNFZ4mrze_-3LqYdlQyEA", "partition": 0}, "id": sid},
            "startOffset": start, "endOffset": end, "brokerId": 1, "maxTimestampMs": 1000, "eventTimestampMs": 1000,
            "segmentLeaderEpochs": [{"leaderEpoch": i + 1, "offset": start}], "segmentSizeInBytes": 10, "customMetadata": None}}
        for p in planner.plan(ev, 2):
            planner.apply(i, p.key_bytes(), p.value)
            store_events.push(i, 1000, p.key_bytes(), p.value)
    stuck = store_events.stuck(now_ms=10_000, threshold_ms=5_000)
    assert {s.id for s in stuck} == {"EREREREREREiIiIiIiIiIg", "MzMzMzMzMzNERERERERERA"}
    assert store_events.stuck(now_ms=2_000, threshold_ms=5_000) == []
    assert store_events.overlaps() == []
    for i, sid in enumerate(["EREREREREREiIiIiIiIiIg", "MzMzMzMzMzNERERERERERA"]):
        ev = {"op": "copyFinished", "brokerLeaderEpoch": i + 1, "brokerId": 1, "eventTimestampMs": 2000,
              "remoteLogSegmentId": {"topicIdPartition": {"name": "t", "id": "ASNFZ4mrze_-3LqYdlQyEA", "partition": 0}, "id": sid}}
        for p in planner.plan(ev, 2):
            planner.apply(2 + i, p.key_bytes(), p.value)
            store_events.push(2 + i, 2000, p.key_bytes(), p.value)
    assert store_events.stuck(now_ms=10_000, threshold_ms=0) == []
    (ov,) = store_events.overlaps()
    assert ov.first[0] == "EREREREREREiIiIiIiIiIg" and ov.second[1] == 50


def test_scan_path_maps_the_file_and_the_scan_inspector_counts_alike(tmp_path):
    # A scan's inspector reading the mapped file: the same file scan, null keys, store and
    # summary counts as a full inspector fed the bytes; no lifecycles, no compaction what-if.
    crafted = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "crafted" / "corrupt-crc" / "__remote_log_metadata-0"
    assert sorted(crafted.glob("*.log")) and META_FILES
    for files in [META_FILES, sorted(crafted.glob("*.log"))]:
        full, scan = rlmeta.Inspector(), rlmeta.Inspector(scan_only=True)
        for f in files:
            assert scan.scan_path(f, True) == full.scan_file(f.read_bytes(), True)
        assert (scan.null_keys(), scan.orphans(), scan.overlaps()) == (full.null_keys(), full.orphans(), full.overlaps())
        a, b = full.finish(), scan.finish()
        assert len(b.segments) == 0 and (len(a.segments) > 0 or files is not META_FILES)
        assert (b.summary.kept_by_compaction, b.summary.lost_by_compaction) == (0, ())
        same = ("records", "unread_records", "stops", "null_key_records", "keyed_records", "tombstones",
                "undecodable", "fatal_to_old_brokers", "live_segments", "orphans", "level")
        assert [getattr(b.summary, k) for k in same] == [getattr(a.summary, k) for k in same]
        assert a.summary.records > 0
    empty = tmp_path / "00000000000000000000.log"
    empty.write_bytes(b"")
    assert rlmeta.Inspector(scan_only=True).scan_path(empty) == ([], [], 0, (0, 0, 0, 0))
    with pytest.raises(FileNotFoundError):
        rlmeta.Inspector(scan_only=True).scan_path(tmp_path / "missing.log")


def test_growth_projection_compacted_stays_bounded():
    points = rlmeta.project_growth(20 << 30, segment_bytes=1 << 30, tiered_retention_ms=7 * 86_400_000,
                                   user_partitions=8, days=60, sample_every_days=30)
    a, b = points
    assert b.append_only_records > 1.9 * a.append_only_records
    assert b.compacted_records <= a.compacted_records + 20 and b.compacted_records < b.append_only_records / 4
    print(f"projection: day 60 append-only {b.append_only_records} records, compacted {b.compacted_records}")
