"""The migration's raw-fetch read (``Reader.each_partition_raw`` feeding the core's
``PartitionScan``) against a real Kafka 4.4.0 broker: its numbers equal those of the per-record
path it replaced (kafka-python's consumer decoding each record, ``Store.apply`` and
``parse_level_record`` per record, the loop ``scan_topic`` ran before), on a metadata partition
holding null keys, tombstones, an undecodable value, level records (a valid and an invalid one),
keyed records, gzip and zstd batches, and records produced after the end offsets were captured
(read neither way). Each Fetch is also made small enough that most responses end in a cut batch,
fetched again from the accumulator's next offset. And the backfill verdict of the kept records
equals ``verify_keyed`` of the same records.

Skipped (with the reason) only when Java or Maven is missing.
"""

import shutil
import sys
from pathlib import Path

import pytest
import rlmeta
from rlmeta import _kafka, _native, migration
from rlmeta._feature import keyed_verdict, parse_level_record, verify_keyed
from rlmeta._kafka import METADATA_TOPIC, Cluster
from rlmeta._store import SkipKind, Store

import kafka_broker

sys.path.insert(0, str(Path(__file__).parent))

missing = [t for t in ("java", "mvn") if not shutil.which(t)]
if missing:
    raise RuntimeError(f"test_migration_rawfetch_broker.py needs {', '.join(missing)} on PATH")


def old_scan(records, named):
    """The per-record classification scan_topic did before the raw path, kept here as the
    reference: (counts, named records)."""
    store = Store()
    c = dict(messages=0, null_keys=0, null_offsets=None, null_timestamps=None, tombstones=0, undecodable=0,
             level=None, invalid_level=None)
    names, nn, nb = [], 0, 0
    for offset, ts, key, value in records:
        c["messages"] += 1
        applied = store.apply(offset, key, value)
        if key is None:
            c["null_keys"] += 1
            c["null_offsets"] = (c["null_offsets"][0] if c["null_offsets"] else offset, offset)
            lo, hi = c["null_timestamps"] or (ts, ts)
            c["null_timestamps"] = (min(lo, ts), max(hi, ts))
            if nn < named:
                nn += 1
                names.append((offset, ts, None))
        if applied.skip is SkipKind.TOMBSTONE:
            c["tombstones"] += 1
        elif applied.skip is SkipKind.UNDECODABLE:
            c["undecodable"] += 1
            if nb < named:
                nb += 1
                names.append((offset, None, applied.detail))
        elif applied.skip is SkipKind.LEVEL_RECORD:
            try:
                c["level"], c["invalid_level"] = parse_level_record(key, value), None
            except _native.RlmetaError:
                c["invalid_level"] = applied.detail
    return c, names


def counts_of(native):
    keys = ["messages", "null_keys", "null_offsets", "null_timestamps", "tombstones", "undecodable", "level",
            "invalid_level"]
    c = dict(zip(keys, native.counts()))
    c["level"] = None if c["level"] is None else rlmeta.MetadataLevel(c["level"])
    return c


def produce(broker, partition, records, compression):
    kafka_broker.produce(broker, METADATA_TOPIC, partition, records, compression)


@pytest.fixture(scope="module")
def topic(broker, first_of):
    """Partition 0 of the metadata topic filled with every kind of record, in gzip and zstd
    batches (the broker's own metadata manager writes nothing there while no topic is tiered)."""
    stock = first_of(0, 0)  # a version-0 segment record, as a stock broker writes under a null key
    keyed = first_of(0, 1)
    kv = (rlmeta.key_for_value(keyed).format().encode(), keyed)
    records = []
    for i in range(400):
        records.append((None, stock))
        if i % 7 == 0:
            records.append(kv)
        if i % 11 == 0:
            records.append((b"t:%d" % i, None))  # a tombstone
    records[50:50] = [(None, b"\x00\x01not a record"), (rlmeta.LEVEL_RECORD_KEY, b"1"), (rlmeta.LEVEL_RECORD_KEY, b"x")]
    half = len(records) // 2
    produce(broker, 0, records[:half], "gzip")
    produce(broker, 0, records[half:], "zstd")
    produce(broker, 1, [(rlmeta.LEVEL_RECORD_KEY, b"1")], None)
    return len(records), stock


@pytest.mark.parametrize("fetch_bytes", [16 << 20, 700])
def test_raw_fetch_counts_equal_the_per_record_path(broker, topic, fetch_bytes, monkeypatch):
    total, stock = topic
    monkeypatch.setattr(_kafka, "FETCH_BYTES", fetch_bytes)
    c = Cluster(broker.bootstrap, timeout_ms=30000)
    try:
        parts = c.partitions()
        late = {}

        def make(p, start, end):
            # records produced once the end offsets are captured: past the end, read by neither
            produce(broker, p, [(None, stock)] * 3, "gzip")
            late[p] = end
            return _native.PartitionScan(start, end, migration.NAMED_PER_PARTITION, True)

        reader = c.read(METADATA_TOPIC, parts, progress=False)
        got = {p: scan for p, scan in reader.each_partition_raw(make)}
        assert all(reader.read_to_end.values())
        every = [(r.partition, r.offset, r.timestamp, r.key, r.value) for r in c.read(METADATA_TOPIC, parts, progress=False)]
    finally:
        c.close()
    assert sorted(got) == parts
    for p in parts:
        mine = [(o, ts, k, v) for q, o, ts, k, v in every if q == p and o < late[p]]
        assert len(mine) < len([1 for q, *_ in every if q == p])  # records past the end exist
        want, names = old_scan(mine, migration.NAMED_PER_PARTITION)
        assert counts_of(got[p]) == want, p
        assert got[p].named() == names, p
        assert keyed_verdict(got[p].verify()) == verify_keyed(mine), p
    c0 = counts_of(got[0])
    assert c0["messages"] >= total and c0["tombstones"] >= 37 and c0["undecodable"] == 1
    assert c0["null_keys"] >= 401 and c0["level"] == rlmeta.MetadataLevel.V1 and c0["invalid_level"]
    assert len(got[0].named()) == migration.NAMED_PER_PARTITION + 1  # the limit of null keys, the one undecodable


def test_check_prints_the_counts_of_the_raw_path(broker, topic, capsys):
    capsys.readouterr()
    rc = migration.main(["--bootstrap-server", broker.bootstrap, "--no-progress", "--check"])
    text = capsys.readouterr().out
    assert rc == 1, text  # null keys remain
    assert "Found undecodable value at partition=0" in text
    assert "more message(s) with null keys at partition=0" in text
    line0 = next(line for line in text.splitlines() if line.startswith("  partition=0:"))
    assert ", 1 undecodable value(s)" in line0 and "level record: 1" in line0, line0
