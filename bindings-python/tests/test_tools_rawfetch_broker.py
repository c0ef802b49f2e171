"""``rlmeta scan``, ``inspect``, ``simulate`` and ``profile`` with ``--bootstrap-server`` read raw
record batches (``Reader.each_partition_raw``, decoded by the core through ``FetchWindow``)
against a real Kafka 4.4.0 broker: each command's output (text and ``--json``) equals that of the
per-record path it replaced, kept here as the reference: every record decoded by kafka-python's
own consumer, from each partition's start offset up to the end offset the command captured, and
handed to the command as records (``cli.Partition(records=...)``, the branch a record-fed
partition still takes).

The metadata partitions hold null keys, keyed records, tombstones, an undecodable value, level
records (a valid and an invalid one), in gzip and zstd batches; one stays empty; records are
produced after the end offsets were captured (read by neither); and the fetch size is also made
small enough that most fetches end in a cut batch, fetched again from the window's next offset
(2,500 bytes: a batch or two and a cut one), or smaller than a batch (700 bytes: the broker
returns one whole batch a fetch).

Skipped (with the reason) only when Java or Maven is missing.
"""

import json
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
import rlmeta
from rlmeta import _kafka, cli
from rlmeta._kafka import METADATA_TOPIC

import kafka_broker

sys.path.insert(0, str(Path(__file__).parent))

missing = [t for t in ("java", "mvn") if not shutil.which(t)]
if missing:
    raise RuntimeError(f"test_tools_rawfetch_broker.py needs {', '.join(missing)} on PATH")

NOW_MS = 1_800_000_000_000
#: Partitions records go to (the third of the broker's three stays empty).
FILLED = (0, 1)


def produce(broker, partition, records, compression):
    kafka_broker.produce(broker, METADATA_TOPIC, partition, records, compression)


@pytest.fixture(scope="module")
def topic(broker, value_cases):
    """Every value vector under a null key (as a stock broker writes) and, for each that has one,
    under its KIP-1266 key; tombstones, an undecodable value, a valid and an invalid level
    record; half in gzip batches, half in zstd (the broker's own metadata manager writes nothing
    while no topic is tiered)."""
    records = []
    for i in range(6):
        for c in value_cases:
            records.append((None, c["raw"]))
            try:
                records.append((rlmeta.key_for_value(c["raw"]).format().encode(), c["raw"]))
            except rlmeta.RlmetaError:
                pass
            if len(records) % 9 == 0:
                records.append((b"t:%d" % len(records), None))  # a tombstone
    records[40:40] = [(None, b"\x00\x01not a record"), (rlmeta.LEVEL_RECORD_KEY, b"1"), (rlmeta.LEVEL_RECORD_KEY, b"x")]
    half = len(records) // 2
    produce(broker, 0, records[:half], "gzip")
    produce(broker, 0, records[half:], "zstd")
    produce(broker, 1, records[: len(records) // 3] + [(rlmeta.LEVEL_RECORD_KEY, b"1")], None)
    return records


def consumed(bootstrap, windows):
    """The reference records: kafka-python's consumer, each partition from its start offset to its
    end offset (``windows``: partition -> (start, end)), as ``(offset, timestamp, key, value)``."""
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=[bootstrap], enable_auto_commit=False, group_id=None)
    out = {}
    try:
        for p, (start, end) in sorted(windows.items()):
            tp = TopicPartition(METADATA_TOPIC, p)
            c.assign([tp])
            c.seek(tp, start)
            recs, deadline = [], time.monotonic() + 30
            while start < end and c.position(tp) < end:
                assert time.monotonic() < deadline, f"partition {p} not read to {end}"
                for r in c.poll(timeout_ms=500).get(tp, []):
                    if start <= r.offset < end:
                        recs.append((r.offset, r.timestamp, r.key, r.value))
            out[p] = recs
    finally:
        c.close()
    return out


def ends_cut(data):
    """Whether a fetch's bytes end in a cut batch, read from the batch headers' lengths alone
    (base offset: 8 bytes, then the length of the rest: 4)."""
    pos = 0
    while pos + 12 <= len(data):
        pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
    return pos != len(data)


def printed(args, text, doc, written):
    """What ``cli.main`` prints for a command's result (all partitions read to their end)."""
    return written + (json.dumps(doc, indent=1) + "\n" if args.json else text)


COMMANDS = [
    ["scan", "--now-ms", str(NOW_MS)],
    ["scan", "--now-ms", str(NOW_MS), "--json"],
    ["scan", "--now-ms", str(NOW_MS), "--verbose"],
    ["inspect"],
    ["inspect", "--json"],
    ["inspect", "--summary"],
    ["inspect", "--summary", "--json"],
    ["simulate", "--now-ms", str(NOW_MS)],
    ["simulate", "--now-ms", str(NOW_MS), "--json", "--after-ms", "1", "--retention-ms", "100", "--segment-records", "5"],
    ["profile", "--json"],
]


def _timeless(doc):
    """A profile's rows without the times (measured, never equal twice)."""
    return [{k: v for k, v in r.items() if k not in ("replaySeconds", "recordsPerSecond")}
            for r in sorted(doc["partitions"], key=lambda r: r["partition"])]


@pytest.mark.parametrize("fetch_bytes", [16 << 20, 2500, 700])
@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_raw_topic_read_equals_the_per_record_path(broker, topic, argv, fetch_bytes, monkeypatch, capsys):
    monkeypatch.setattr(_kafka, "FETCH_BYTES", fetch_bytes)
    windows, cut = {}, []
    raw_read = _kafka.Reader.each_partition_raw

    def spied(reader, make):
        def made(p, start, end):
            if not windows:  # every end offset is taken: records produced now lie past them
                for q in FILLED:
                    produce(broker, q, [(None, topic[0][1]), (b"late", None)] * 3, "gzip")
            windows[p] = (start, end)
            return make(p, start, end)
        return raw_read(reader, made)
    monkeypatch.setattr(_kafka.Reader, "each_partition_raw", spied)
    real_fetch = _kafka.Reader._fetch

    def fetch(reader, consumer, tp, offset):
        err, data = real_fetch(reader, consumer, tp, offset)
        if data:
            cut.append(ends_cut(data))
        return err, data
    monkeypatch.setattr(_kafka.Reader, "_fetch", fetch)

    capsys.readouterr()
    full = [argv[0], "--bootstrap-server", broker.bootstrap, "--no-progress", *argv[1:]]
    assert cli.main(full) == 0
    got = capsys.readouterr().out
    assert sorted(windows) == [0, 1, 2] and windows[2][0] == windows[2][1]  # one partition is empty

    recs = consumed(broker.bootstrap, windows)
    assert len(recs[0]) >= len(topic) and not recs[2]
    parts = [cli.Partition(f"{METADATA_TOPIC}-{p}", records=recs[p],
                           bytes=sum(len(k or b"") + len(v or b"") for _, _, k, v in recs[p])) for p in sorted(recs)]
    args = cli.build_parser().parse_args(full)
    text, doc = cli.COMMANDS[args.command](args, parts)
    want = printed(args, text, doc, capsys.readouterr().out)
    if argv[0] == "profile":
        assert _timeless(json.loads(got)) == _timeless(json.loads(want))
        assert [r["records"] for r in _timeless(json.loads(got))] == [len(recs[p]) for p in sorted(recs)]
    else:
        assert got == want
    if fetch_bytes == 2500:  # a batch or two, then most fetches end in a cut batch, fetched again
        assert len(cut) > 20 and sum(cut) > len(cut) // 2, cut
    elif fetch_bytes == 700:  # smaller than most batches: the broker returns one whole batch each
        assert len(cut) > 40, cut


def test_the_late_records_exist_and_the_counts_are_exact(broker, topic, capsys):
    """The numbers a scan prints are the records' own (not only equal to the reference): every
    record produced before the end offsets, by kind."""
    capsys.readouterr()
    assert cli.main(["scan", "--bootstrap-server", broker.bootstrap, "--no-progress", "--json", "--now-ms", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    p0 = doc["partitions"][0]
    recs = consumed(broker.bootstrap, {0: (0, p0["records"])})[0]
    assert p0["records"] == len(recs) >= len(topic)
    assert p0["byKind"]["nullKey"] == sum(1 for _, _, k, _ in recs if k is None)
    assert p0["byKind"]["tombstones"] == sum(1 for _, _, k, v in recs if k is not None and v is None)
    assert p0["byKind"]["undecodable"] >= 1 and p0["byKind"]["levelRecords"] == 2
    assert [t["offset"] for t in p0["tombstones"]] == [o for o, _, k, v in recs if k is not None and v is None]


@pytest.mark.parametrize("fetch_bytes", [16 << 20, 2500, 700])
def test_reconcile_reads_the_topic_raw_as_the_per_record_path_did(broker, topic, fetch_bytes, monkeypatch, capsys,
                                                                 tmp_path):
    """``rlmeta reconcile --bootstrap-server`` replays raw fetched batches into the core's ledger
    (``Ledger.apply_fetch``): its report (text and --json, against an empty store, so that every
    segment the metadata names is judged) equals the one of the per-record read it replaced
    (kafka-python's consumer, each partition's ``fetch`` cleared), fetches cut or not."""
    monkeypatch.setattr(_kafka, "FETCH_BYTES", fetch_bytes)
    store = tmp_path / "store"
    store.mkdir()
    reads = []
    raw_read, record_read = _kafka.Reader.each_partition_raw, _kafka.Reader.each_partition
    monkeypatch.setattr(_kafka.Reader, "each_partition_raw", lambda r, *a: (reads.append("raw"), raw_read(r, *a))[1])
    monkeypatch.setattr(_kafka.Reader, "each_partition", lambda r, *a: (reads.append("records"), record_read(r, *a))[1])
    load = cli.partitions_from_cluster

    def per_record(args):
        parts = load(args)
        for p in parts:
            p.fetch = None
        return parts
    outs = {}
    for read in ("raw", "records"):
        monkeypatch.setattr(cli, "partitions_from_cluster", load if read == "raw" else per_record)
        for fmt in ([], ["--json"]):
            capsys.readouterr()
            rc = cli.main(["reconcile", "--bootstrap-server", broker.bootstrap, "--no-progress", "--store", f"file://{store}",
                           "--now-ms", str(NOW_MS), *fmt])
            outs[read, bool(fmt)] = (rc, capsys.readouterr().out)
        assert reads[-1] == read and reads.count(read) == 2, reads
    assert outs["raw", False] == outs["records", False] and outs["raw", True] == outs["records", True]
    assert outs["raw", True][0] == 0, outs["raw", True][1][-2000:]
    doc = json.loads(outs["raw", True][1])
    m = re.search(r"\((\d+) records\)", doc["metadata"])
    assert m and int(m.group(1)) >= len(topic) + len(topic) // 3, doc["metadata"]
