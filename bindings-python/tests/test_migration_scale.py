"""The migration tool at scale, small enough for ``make test``: a real Kafka 4.4.0 broker with the
stock 50 metadata partitions holds a stock (null-key, version-0) history of SCALE_RECORDS records,
and ``--check`` and ``--check --backfill`` read it to its end with exact counts, in a memory that
does not grow with the topic: each runs in its own process, whose peak RSS must stay below
RSS_BOUND_MB. The design before (every record kept for the keyed verification, a null-key pair
per record, one store per partition for the whole read) took 160 MB at 120,000 records where this
one took 75 MB, and grows with the topic (about 115 MB more at 200,000 records); this one took
90 MB at 200,000 on one run and 136 MB on another (the interpreter, kafka-python and the native
library vary; one metadata partition's records at a time, for --check and --check --backfill
alike). 180 MB passes either and fails the old design in either.
"""

import base64
import os
import random
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import rlmeta
from kafka_broker import Broker, wait

SCALE_RECORDS = int(os.environ.get("RLMETA_MIGRATION_SCALE_RECORDS", "200000"))
RSS_BOUND_MB = int(os.environ.get("RLMETA_MIGRATION_RSS_BOUND_MB", "180"))
METADATA_PARTITIONS = 50
TOPIC = "__remote_log_metadata"


def _id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def stock_history(n: int, seed: int = 33):
    """(metadata partition, value) of n stock records: segments of 400 user partitions copied,
    finished, and a quarter of them deleted, with occasional leader-epoch changes. Returns the
    records and the number of live segments (copied and not deleted)."""
    rnd = random.Random(seed)
    parts = [(_id(), f"t{t}", p) for t in range(40) for p in range(10)]
    state = {tp: {"next": 0, "epoch": 0, "live": []} for tp in parts}
    out, live = [], 0
    while len(out) < n:
        tp = rnd.choice(parts)
        s = state[tp]
        tid = {"name": tp[1], "id": tp[0], "partition": tp[2]}
        mp = rlmeta.metadata_partition(tp[0], tp[2], METADATA_PARTITIONS)
        if s["live"] and rnd.random() < 0.2 and len(out) + 2 <= n:
            seg = s["live"].pop(0)
            for state_id in (2, 3):
                out.append((mp, update(tid, seg, state_id)))
            live -= 1
            continue
        if len(out) + 2 > n:
            break
        if rnd.random() < 0.05:
            s["epoch"] += 1
        start, end = s["next"], s["next"] + 999
        s["next"] = end + 1
        seg = _id()
        out.append((mp, rlmeta.encode_value({"apiKey": 0, "version": 0, "record": {
            "remoteLogSegmentId": {"topicIdPartition": tid, "id": seg}, "startOffset": start, "endOffset": end,
            "brokerId": 1, "maxTimestampMs": 1_700_000_000_000, "eventTimestampMs": 1_700_000_000_000,
            "segmentLeaderEpochs": [{"leaderEpoch": s["epoch"], "offset": start}], "segmentSizeInBytes": 1 << 20,
            "customMetadata": None, "remoteLogSegmentState": 0, "txnIndexEmpty": False}})))
        out.append((mp, update(tid, seg, 1)))
        s["live"].append(seg)
        live += 1
    return out, live


def update(tid, seg: str, state_id: int) -> bytes:
    return rlmeta.encode_value({"apiKey": 1, "version": 0, "record": {
        "remoteLogSegmentId": {"topicIdPartition": tid, "id": seg}, "brokerId": 1,
        "eventTimestampMs": 1_700_000_000_001, "customMetadata": None, "remoteLogSegmentState": state_id}})


@pytest.fixture(scope="module")
def big():
    b = Broker(metadata_partitions=METADATA_PARTITIONS)
    try:
        b.start()
        from kafka import KafkaAdminClient, KafkaProducer

        admin = KafkaAdminClient(bootstrap_servers=b.bootstrap)
        wait("the metadata topic", lambda: TOPIC in admin.list_topics())
        admin.close()
        records, live = stock_history(SCALE_RECORDS)
        producer = KafkaProducer(bootstrap_servers=b.bootstrap, acks=1, linger_ms=50, batch_size=1 << 20,
                                 max_request_size=8 << 20)
        for mp, value in records:
            producer.send(TOPIC, value=value, partition=mp)
        producer.flush()
        producer.close()
        yield b, len(records), live
    finally:
        b.cleanup()


def run_measured(broker: Broker, *args: str):
    """The migration tool in its own process; returns (returncode, stdout, stderr, peak RSS in MB)."""
    code = ("import atexit, resource, sys\n"
            "atexit.register(lambda: sys.stderr.write('PEAK_RSS_KB %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
            "from rlmeta import migration\n"
            "sys.exit(migration.main(sys.argv[1:]))\n")
    out = subprocess.run([sys.executable, "-c", code, "--bootstrap-server", broker.bootstrap, "--no-progress",
                          "--timeout-ms", "30000", *args], capture_output=True, text=True, timeout=600)
    m = re.search(r"PEAK_RSS_KB (\d+)", out.stderr)
    assert m, out.stderr[-2000:]
    return out.returncode, out.stdout, out.stderr, int(m.group(1)) / 1024


def test_check_reads_a_large_stock_topic_exactly_in_bounded_memory(big):
    broker, n, _ = big
    rc, out, err, rss = run_measured(broker, "--check")
    assert rc == 1, (out[-2000:], err[-2000:])
    assert f"Total messages scanned: {n}" in out and f"Messages with null keys: {n}" in out
    assert f"❌ VALIDATION FAILED: Found {n} message(s) with null keys." in out
    named = out.count("⚠️  Found message with null key at partition=")
    more = sum(int(x) for x in re.findall(r"\.\.\. and (\d+) more message\(s\) with null keys", out))
    assert named <= 20 * METADATA_PARTITIONS and named + more == n, (named, more)
    assert "NOT read to its end" not in out
    print(f"\nmigration --check: {n} records in {METADATA_PARTITIONS} partitions, {named} named, peak RSS {rss:.0f} MB")
    assert rss < RSS_BOUND_MB, f"peak RSS {rss:.0f} MB for {n} records (bound {RSS_BOUND_MB} MB)"


def test_check_backfill_verifies_every_partition_in_bounded_memory(big):
    broker, n, live = big
    rc, out, err, rss = run_measured(broker, "--check", "--backfill")
    assert rc == 1, (out[-2000:], err[-2000:])
    # every live segment is held only by null-key records: exactly the generator's live segments fail
    assert f"Live segments: {live}; not held by keyed records: {live}; superseded upload attempts: 0" in out, out[-3000:]
    assert f"Backfill incomplete: {live} live segment(s)" in err
    per = re.findall(r"partition=(\d+): (\d+) live segment\(s\), \d+ not held by keyed records; (\d+) record\(s\)", out)
    assert len(per) == METADATA_PARTITIONS and sum(int(r) for _, _, r in per) == n
    print(f"\nmigration --check --backfill: {n} records, {live} live segments, peak RSS {rss:.0f} MB")
    assert rss < RSS_BOUND_MB, f"peak RSS {rss:.0f} MB for {n} records (bound {RSS_BOUND_MB} MB)"
