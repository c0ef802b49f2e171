"""The migration tool and ``rlmeta scan`` at scale, small enough for ``make test``: a real Kafka
4.4.0 broker with the stock 50 metadata partitions holds a stock (null-key, version-0) history of
SCALE_RECORDS records, and ``--check``, ``--check --backfill`` and ``scan --bootstrap-server`` read
it to its end with exact counts, in a memory that does not grow with the topic: each runs in its
own process, whose peak RSS (``peak_rss``: VmHWM) must stay below its bound. At 200,000 records
these took 45 MB (--check), 52 MB (--check --backfill) and 48 MB (scan, which holds the 60,610 live
segments); the scan before read every partition first and took 136 MB. The migration tool before
kept every record for the keyed verification (about 450 bytes each: 90 MB at this size on top of
the interpreter's 40).
"""

import base64
import os
import random
import re
import uuid
from pathlib import Path
from typing import Tuple

import pytest

import rlmeta
import peak_rss
from kafka_broker import Broker, wait

SCALE_RECORDS = int(os.environ.get("RLMETA_MIGRATION_SCALE_RECORDS", "200000"))
RSS_BOUND_MB = int(os.environ.get("RLMETA_MIGRATION_RSS_BOUND_MB", "100"))
SCAN_RSS_BOUND_MB = int(os.environ.get("RLMETA_SCAN_RSS_BOUND_MB", "90"))
SIMULATE_RSS_BOUND_MB = int(os.environ.get("RLMETA_SIMULATE_RSS_BOUND_MB", "54"))
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


def fill_stock_topic(b: Broker, n: int) -> Tuple[int, int]:
    """Writes ``stock_history(n)`` into the broker's metadata topic once it exists; returns (records,
    live segments). Also the topic of ``make bench-tools-topic`` (bench/topic_bench.py)."""
    from kafka import KafkaAdminClient, KafkaProducer

    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap)
    wait("the metadata topic", lambda: TOPIC in admin.list_topics())
    admin.close()
    records, live = stock_history(n)
    producer = KafkaProducer(bootstrap_servers=b.bootstrap, acks=1, linger_ms=50, batch_size=1 << 20,
                             max_request_size=8 << 20)
    for mp, value in records:
        producer.send(TOPIC, value=value, partition=mp)
    producer.flush()
    producer.close()
    return len(records), live


@pytest.fixture(scope="module")
def big():
    b = Broker(metadata_partitions=METADATA_PARTITIONS)
    try:
        b.start()
        n, live = fill_stock_topic(b, SCALE_RECORDS)
        yield b, n, live
    finally:
        b.cleanup()


def run_measured(broker: Broker, *args: str):
    """The migration tool in its own process; returns (returncode, stdout, stderr, peak RSS in MB)."""
    return peak_rss.run_measured("migration", ["--bootstrap-server", broker.bootstrap, "--no-progress",
                                               "--timeout-ms", "30000", *args])


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
    # at most 20 failing segments named per partition, the rest counted by kind: every line a
    # segment, and no segment twice (before, a stock 10 M-record topic printed 3.6 M lines)
    named = re.findall(r"⚠️  segment=(\S+) of .*: COPY_SEGMENT_FINISHED, held only by null-key records", out)
    more = [(int(a), int(b), int(c)) for a, b, c in re.findall(
        r"\.\.\. and (\d+) more not held by keyed records at partition=\d+ \(all (\d+) by kind: lost: (\d+)\)", out)]
    assert len(named) <= 20 * METADATA_PARTITIONS and len(set(named)) == len(named), len(named)
    assert more and all(b == c for _, b, c in more) and len(named) + sum(a for a, _, _ in more) == live, (len(named), more[:3])
    print(f"\nmigration --check --backfill: {n} records, {live} live segments, {len(named)} named, peak RSS {rss:.0f} MB")
    assert rss < RSS_BOUND_MB, f"peak RSS {rss:.0f} MB for {n} records (bound {RSS_BOUND_MB} MB)"


def run_cli_measured(broker: Broker, command: str, *args: str):
    """``rlmeta COMMAND`` in its own process against the broker; returns as :func:`run_measured`."""
    return peak_rss.run_measured("cli", [command, "--bootstrap-server", broker.bootstrap, "--no-progress",
                                         "--timeout-ms", "30000", *args])


def test_scan_reads_a_large_topic_one_partition_at_a_time(big):
    # The design before loaded every partition's records before the scan began (and a pair per
    # null-key record): 136 MB at 200,000 records, growing with the topic; this one reads a
    # partition while it scans it and holds the store's live segments (48 MB, 60,610 of them).
    broker, n, live = big
    rc, out, err, rss = run_cli_measured(broker, "scan")
    assert rc == 0, err[-2000:]
    assert (f"total: {n:,} records ({n:,} null-key, 0 keyed, 0 tombstones, 0 undecodable), {live:,} live segments "
            f"in {METADATA_PARTITIONS} partition(s)") in out, out[-2000:]
    assert "NOT read to its end" not in out and "warning" not in err
    print(f"\nscan --bootstrap-server: {n} records, {live} live segments, peak RSS {rss:.0f} MB")
    assert rss < SCAN_RSS_BOUND_MB, f"peak RSS {rss:.0f} MB for {n} records (bound {SCAN_RSS_BOUND_MB} MB)"


def test_simulate_holds_a_partition_s_batches_and_writes_its_text_as_it_goes(big):
    # Before, simulate kept each partition's decoded records (copied again into the cleaner
    # model for each moment) and held its whole text and a Python list of every lost segment's
    # id until the end: 61 MB at 200,000 records (155 MB at 1 M, 1,268 MB at 10 M). It now keeps a
    # partition's fetched batches for the streamed model and writes each partition's lines as it
    # goes: 44 MB here (63 MB at 1 M), the same output byte for byte.
    broker, n, live = big
    rc, out, err, rss = run_cli_measured(broker, "simulate", "--now-ms", "1800000000000")
    assert rc == 0, err[-2000:]
    heads = re.findall(r"^__remote_log_metadata-\d+: ([\d,]+) records, [\d,]+ bytes, ([\d,]+) live segments$", out, re.M)
    assert len(heads) == METADATA_PARTITIONS, out[-2000:]
    assert sum(int(r.replace(",", "")) for r, _ in heads) == n
    assert sum(int(s.replace(",", "")) for _, s in heads) == live
    # a stock topic compacted loses every live segment: every id is named, at both moments
    lost = re.findall(r"^  (?:now|after [^:]+): compaction keeps 0 of [\d,]+ records \(0 bytes\); "
                      r"live segments a replay would lose: ([\d,]+)(.*)$", out, re.M)
    assert len(lost) == 2 * METADATA_PARTITIONS
    assert sum(int(c.replace(",", "")) for c, _ in lost) == 2 * live
    assert sum(len(ids.split(",")) for _, ids in lost if ids) == 2 * live
    assert "warning" not in err
    print(f"\nsimulate --bootstrap-server: {n} records, {live} live segments, peak RSS {rss:.0f} MB")
    assert rss < SIMULATE_RSS_BOUND_MB, f"peak RSS {rss:.0f} MB for {n} records (bound {SIMULATE_RSS_BOUND_MB} MB)"
