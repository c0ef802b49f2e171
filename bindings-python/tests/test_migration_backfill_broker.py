"""The migration tool's backfill path (``--backfill``, rlmeta's extension) against a real Kafka
4.4.0 broker (kafka_broker.py): a null-key history written by stock
TopicBasedRemoteLogMetadataManager for a tiered topic kept for ever (``retention.ms=-1``) and one
whose segments retention deletes; ``--check --backfill`` naming every live segment with the offsets
of its records; the refusal of stock brokers; level 1 without any config change; the refusal of
level 2 while segments are held only by null-key records, and the watch of the backfill's
progress; level 2 once it holds; every step killed after each action and run again; then Kafka's
own log cleaner compacting the topic, after which a replay lists the same live segments.

Here the test writes the backfill itself, with the core's ``plan_backfill`` (the same records the
broker plugin writes at level 1 on each partition's leader): the broker restarts with tiered
storage off (no metadata manager loaded, its configured class named KIP-1266-capable), so nothing
else writes to the topic. The plugin writing it on a live 3-broker cluster is the journey test's
(tests/cluster JourneyTest).

Skipped (with the reason) only when Java or Maven is missing.
"""

import functools
import re
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import rlmeta
from rlmeta import MetadataLevel
from rlmeta._kafka import METADATA_TOPIC, Cluster

sys.path.insert(0, str(Path(__file__).parent))
import kafka_broker  # noqa: E402
from kafka_broker import STOCK_MANAGER, say, wait, wait_metadata_settled  # noqa: E402
from kafka_broker import metadata_records as records  # noqa: E402

pytestmark = pytest.mark.skipif(not (shutil.which("java") and shutil.which("mvn")), reason="needs java and mvn")

CAPABLE = "dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager"
# The backfill's runs read and write more than the plain migration's: a longer bound each.
tool = functools.partial(kafka_broker.migration_tool, timeout=180)
until_complete = functools.partial(kafka_broker.until_complete, timeout=180)
FOREVER, DELETED = "forever", "deleted"


def live_segments(recs):
    """The live segments a replay of the topic lists: {segment id: state}."""
    stores = {}
    for p, o, k, v in recs:
        stores.setdefault(p, rlmeta.Store()).apply(o, k, v)
    return {m.id: m.state for s in stores.values() for tp in s.partitions() for m in s.all_segments(tp)}


def journal_live(broker):
    """The segments remote storage holds now (the RSM's journal: COPY minus DELETE)."""
    copied, deleted = set(), set()
    for line in broker.journal().splitlines():
        f = line.split(" ")
        if len(f) > 2 and f[0] in ("COPY", "DELETE"):
            (copied if f[0] == "COPY" else deleted).add(f[2])
    return copied - deleted, deleted


def configs(broker):
    c = Cluster(broker.bootstrap)
    try:
        return c.topic_overrides(METADATA_TOPIC)
    finally:
        c.close()


def backfill(broker, recs, limit=None):
    """Writes the core's backfill (as the broker plugin does at level 1) to each metadata partition;
    at most `limit` user partitions' worth. Returns the records written."""
    c = Cluster(broker.bootstrap)
    written = 0
    try:
        stores = {}
        for p, o, k, v in recs:
            stores.setdefault(p, rlmeta.Store()).apply(o, k, v)
        done = 0
        for p, store in sorted(stores.items()):
            for tp in store.partitions():
                if limit is not None and done >= limit:
                    return written
                planned = store.plan_backfill(tp, 0, MetadataLevel.V1)
                for r in planned:
                    c.produce(METADATA_TOPIC, p, r.key.encode(), r.value)
                written += len(planned)
                done += 1 if planned else 0
        return written
    finally:
        c.close()


def test_backfill_path_to_level_two_without_waiting_for_retention(broker, capsys):
    # ---- a null-key history: one tiered topic kept for ever, one that retention deletes -------
    c = Cluster(broker.bootstrap)
    base = {"remote.storage.enable": "true", "internal.segment.bytes": "16384", "local.retention.bytes": "16384",
            "segment.index.bytes": "4096"}
    c.admin.create_topics({FOREVER: {"num_partitions": 2, "replication_factor": 1, "configs": {**base, "retention.ms": "-1"}},
                           DELETED: {"num_partitions": 1, "replication_factor": 1, "configs": {**base, "retention.bytes": "32768"}}},
                          wait_for_metadata=True)
    c.close()
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", batch_size=4096, linger_ms=0)
    for i in range(300):
        producer.send(FOREVER, value=b"x" * 512, partition=i % 2)
        producer.send(DELETED, value=b"y" * 512, partition=0)
    producer.flush()
    producer.close()
    wait("remote copies and deletions", lambda: broker.journal().count("COPY ") >= 10 and broker.journal().count("DELETE ") >= 2, 120)
    wait_metadata_settled(broker.bootstrap)
    before = records(broker.bootstrap)
    assert before and all(k is None for _, _, k, _ in before)
    live = live_segments(before)
    remote_live, remote_deleted = journal_live(broker)
    assert set(live) == remote_live and remote_deleted, (sorted(live), sorted(remote_live))
    stock_configs = configs(broker)  # stock TBRLMM's own overrides: cleanup.policy=delete, retention.ms=-1
    say(capsys, f"history: {len(before)} null-key records, {len(live)} live segments, {len(remote_deleted)} deleted")

    # ---- --check --backfill names every live segment with its offsets -----------------------
    out = tool(broker, "--check", "--backfill")
    assert out.returncode == 1, out.stdout[-2000:]
    assert f"Live segments: {len(live)}; not held by keyed records: {len(live)}" in out.stdout, out.stdout[-2000:]
    named = set(re.findall(r"⚠️  segment=(\S+) of .*: COPY_SEGMENT_FINISHED, held only by null-key records \(records at offsets \d", out.stdout))
    assert named == set(live), out.stdout[-3000:]
    assert "run kafka-remote-log-metadata-migration --upgrade-to-v1 --backfill first" in out.stdout
    assert f"Backfill incomplete: {len(live)} live segment(s)" in out.stderr

    # ---- stock brokers refused, by level 1 and by level 2 -----------------------------------
    for step in ("--upgrade-to-v1", "--upgrade-to-v2"):
        out = tool(broker, step, "--backfill")
        assert out.returncode == 1 and "broker 1" in out.stderr and STOCK_MANAGER in out.stderr, out.stderr
    now = records(broker.bootstrap)
    assert set(before) <= set(now) and all(k is None for _, _, k, _ in now), "a refused step wrote"
    assert configs(broker) == stock_configs, "a refused step changed a config"

    # ---- the broker names the KIP-1266-capable manager (tiered storage off: nothing else writes)
    broker.restart(**{"remote.log.storage.system.enable": "false", "remote.log.metadata.manager.class.name": CAPABLE})
    before = records(broker.bootstrap)

    # ---- 0 -> 1 without a config change, killed after every action and run again -------------
    out, killed = until_complete(broker, "--upgrade-to-v1", "--backfill")
    assert killed == 3, (killed, out.stdout)  # one level record per partition, no config change
    assert "✅ Upgrade to version 1 (backfill) completed successfully!" in out.stdout
    assert "Keeping the __remote_log_metadata topic configuration: cleanup.policy=delete, retention.ms=-1" in out.stdout
    after = records(broker.bootstrap)
    assert set(before) <= set(after)
    assert Counter((p, v) for p, _, k, v in after if k == rlmeta.LEVEL_RECORD_KEY) == Counter({(p, b"1"): 1 for p in range(3)})
    assert configs(broker) == stock_configs, "level 1 by backfill changes no topic config"

    # ---- level 2 refused while only null-key records hold the segments ----------------------
    out = tool(broker, "--upgrade-to-v2", "--backfill")
    assert out.returncode == 1 and f"{len(live)} live segment(s) not held by keyed records" in out.stderr, out.stderr
    assert configs(broker) == stock_configs

    # ---- the backfill, watched as it progresses ---------------------------------------------
    t0 = time.monotonic()
    first = backfill(broker, after, limit=1)
    out = tool(broker, "--check", "--backfill")
    remaining = int(re.search(r"not held by keyed records: (\d+)", out.stdout).group(1))
    assert out.returncode == 1 and 0 < remaining < len(live), out.stdout[-2000:]
    rest = backfill(broker, records(broker.bootstrap))
    out = tool(broker, "--check", "--backfill")
    assert out.returncode == 0 and "✅ BACKFILL COMPLETE" in out.stdout, out.stdout[-2000:]
    backfill_s = time.monotonic() - t0

    # ---- 1 -> 2, killed after every action and run again -------------------------------------
    t0 = time.monotonic()
    out, killed = until_complete(broker, "--upgrade-to-v2", "--backfill")
    migrate_s = time.monotonic() - t0
    assert killed == 4, (killed, out.stdout)  # one config change, one level record per partition
    assert "✅ BACKFILL VERIFIED" in out.stdout and "✅ Successfully upgraded to remote.log.metadata.version=2!" in out.stdout
    assert configs(broker).get("cleanup.policy") == "compact"
    again = tool(broker, "--upgrade-to-v2", "--backfill")
    assert again.returncode == 0 and "Current remote.log.metadata.version: 2" in again.stdout, again.stdout

    # ---- Kafka's log cleaner compacts the topic for real: the same live segments -------------
    fast = {"segment.ms": "1000", "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "1000", "min.compaction.lag.ms": "0"}
    c = Cluster(broker.bootstrap)
    try:
        c.alter_topic_configs(METADATA_TOPIC, fast)
        for _ in range(3):  # roll the active segments so that the cleaner reaches every null-key record
            time.sleep(1.5)
            for p in range(3):
                c.produce(METADATA_TOPIC, p, *rlmeta.level_record(2))
    finally:
        c.close()
    wait("Kafka's cleaner to drop every null-key record", lambda: not any(k is None for _, _, k, _ in records(broker.bootstrap)), 120)
    compacted = records(broker.bootstrap)
    assert live_segments(compacted) == live
    say(capsys, f"backfill path: {first + rest} backfill records in {backfill_s:.1f} s; 1 -> 2 with 4 kills in {migrate_s:.1f} s; "
        f"compacted by Kafka's cleaner from {len(after) + first + rest} to {len(compacted)} "
        f"records, {len(live)} live segments kept, none resurrected")
