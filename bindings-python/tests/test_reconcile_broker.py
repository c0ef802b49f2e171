"""``rlmeta reconcile`` against a real Kafka 4.4.0 broker with the project's file RSM
(kafka_broker.py), and against a real S3-compatible server (moto's, started here) holding objects
in Aiven's layout for the same broker's metadata.

One broker serves every test of this module. What it goes through, for real where Kafka can:
  - records produced with old timestamps, tiered, and the oldest segment deleted by retention;
    its files, saved before, put back by hand: a LEAKED segment;
  - the broker killed -9 while the file RSM holds a copy (after COPY_SEGMENT_STARTED) and a
    deletion (after DELETE_SEGMENT_STARTED): after the restart Kafka uploads the offsets again
    under a new id, and the first id is an ABANDONED UPLOAD (its half-written ``.tmp`` files put
    there by hand, as a copy killed mid-way leaves); Kafka retries the deletion (a second
    DELETE_SEGMENT_STARTED), and the hold, left in place, keeps it a STUCK DELETION;
and by hand where Kafka cannot: a finished segment's files removed (DANGLING), a byte appended
to one's log (SIZE MISMATCH), a segment's files copied under a new id (ORPHANED).
The report must name exactly those; ``--delete --yes`` removes exactly the safe ones; a second
run finds nothing safe to delete; a consumer still reads every live record.

Skipped (with the reason) only when Java or Maven is missing.
"""

import base64
import functools
import json
import os
import shutil
import signal
import sys
import time
import uuid
from pathlib import Path

import pytest

from rlmeta import _reconcile, cli
from rlmeta._kafka import Cluster

sys.path.insert(0, str(Path(__file__).parent))
import kafka_broker  # noqa: E402
from kafka_broker import Broker, free_ports, say  # noqa: E402
import store_scene  # noqa: E402

pytestmark = pytest.mark.skipif(not (shutil.which("java") and shutil.which("mvn")), reason="needs java and mvn")

TOPIC = "rec.orders"
HOUR = 3_600_000
GRACE = "2s"
wait = functools.partial(kafka_broker.wait, every=0.5)


def journal_lines(broker, kind):
    """The file RSM's journal lines of one kind, split: [kind, tp, segmentId, start, end, ...]."""
    return [line.split() for line in broker.journal().splitlines() if line.startswith(kind + " ")]


def settle(broker, limit=60):
    """Waits until the journal has not changed for 3 s."""
    last = [None, time.monotonic()]

    def still():
        j = broker.journal()
        if j != last[0]:
            last[0], last[1] = j, time.monotonic()
        return time.monotonic() - last[1] > 3

    wait("the remote store to settle", still, limit)


def value(i):
    return b"%08d" % i + b"x" * 500


def kill9(broker):
    proc, broker.proc = broker.proc, None
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)


def run(capsys, *argv):
    capsys.readouterr()
    rc = cli.main(["reconcile", "--no-progress", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def run_json(capsys, *argv):
    rc, out, err = run(capsys, "--json", *argv)
    assert rc == 0, err
    return json.loads(out)


def snapshot(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def scene():
    b = Broker(metadata_partitions=2)
    remote = b.dir / "remote"
    try:
        b.start()
        c = Cluster(b.bootstrap)
        c.admin.create_topics({TOPIC: {"num_partitions": 1, "replication_factor": 1, "configs": {
            "remote.storage.enable": "true", "internal.segment.bytes": "16384", "local.retention.bytes": "16384",
            "segment.index.bytes": "4096", "retention.ms": "-1"}}}, wait_for_metadata=True)
        from kafka import KafkaProducer

        now = int(time.time() * 1000)
        producer = KafkaProducer(bootstrap_servers=b.bootstrap, acks="all", batch_size=4096, linger_ms=0)
        n = 0
        # 4 h old, 2 h old, then new: retention of 3 h and then 1 h deletes the first, then the next.
        for count, age in ((70, 4 * HOUR), (70, 2 * HOUR), (150, 0)):
            for _ in range(count):
                producer.send(TOPIC, value=value(n), partition=0, timestamp_ms=now - age)
                n += 1
            producer.flush()
        wait("remote copies", lambda: len(journal_lines(b, "COPY")) >= 8)
        settle(b)

        # LEAKED: the oldest segment deleted by retention, its files saved before and put back.
        saved = b.dir / "saved"
        shutil.copytree(remote, saved, ignore=shutil.ignore_patterns("journal.txt"))
        c.alter_topic_configs(TOPIC, {"retention.ms": str(3 * HOUR)})
        wait("a retention deletion", lambda: journal_lines(b, "DELETE"))
        settle(b)
        deleted = journal_lines(b, "DELETE")
        leaked = deleted[0][2]
        pdir = next(p for p in remote.iterdir() if p.is_dir())
        shutil.copytree(saved / pdir.name / leaked, pdir / leaked)
        c.alter_topic_configs(TOPIC, {"retention.ms": "-1"})

        # ABANDONED UPLOAD and STUCK DELETION: one kill -9 while the file RSM holds a copy (after
        # COPY_SEGMENT_STARTED) and a deletion (after DELETE_SEGMENT_STARTED).
        (remote / f"hold-copy-{TOPIC}").touch()
        (remote / f"hold-delete-{TOPIC}").touch()
        for _ in range(70):
            producer.send(TOPIC, value=value(n), partition=0, timestamp_ms=int(time.time() * 1000))
            n += 1
        producer.flush()
        producer.close()
        c.alter_topic_configs(TOPIC, {"retention.ms": str(HOUR)})
        c.close()
        wait("a held copy and a held deletion", lambda: journal_lines(b, "HOLD-COPY") and journal_lines(b, "HOLD-DELETE"))
        held_copy = journal_lines(b, "HOLD-COPY")[0]
        kill9(b)
        (remote / f"hold-copy-{TOPIC}").unlink()
        b.start()  # the deletion hold stays: Kafka retries the deletion (DELETE_SEGMENT_STARTED again) and holds
        wait("the held segment uploaded again", lambda: any(
            line[3] == held_copy[3] for line in journal_lines(b, "COPY")), 120)
        wait("the deletion retried", lambda: len(journal_lines(b, "HOLD-DELETE")) >= 2, 60)
        settle(b)
        again = next(line[2] for line in journal_lines(b, "COPY") if line[3] == held_copy[3])
        abandoned = held_copy[2]
        (pdir / f"{abandoned}.tmp").mkdir()
        for f in ("segment.log", "offset.index"):
            shutil.copy(pdir / again / f, pdir / f"{abandoned}.tmp" / f)

        # By hand: DANGLING (newest finished segment's files removed), SIZE MISMATCH (a byte
        # appended to the next one's log), ORPHANED (a finished segment's files under a new id).
        gone = {line[2] for line in journal_lines(b, "DELETE")} | {line[2] for line in journal_lines(b, "HOLD-DELETE")}
        finished = sorted((int(line[3]), int(line[4]), line[2]) for line in journal_lines(b, "COPY")
                          if line[2] not in gone and (pdir / line[2]).is_dir())
        dangling, mismatch, orig = finished[-1], finished[-2], finished[0]
        shutil.rmtree(pdir / dangling[2])
        with open(pdir / mismatch[2] / "segment.log", "ab") as f:
            f.write(b"\0")
        orphan = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        shutil.copytree(pdir / orig[2], pdir / orphan)
        time.sleep(2.5)  # past the grace
        yield {
            "broker": b, "remote": remote, "pdir": pdir, "produced": n, "leaked": leaked, "abandoned": abandoned,
            "reuploaded": again,
            "dangling": dangling, "mismatch": mismatch, "orphan": orphan,
            "deleted": sorted({line[2] for line in deleted}),
        }
    finally:
        hold = remote / f"hold-delete-{TOPIC}"
        if hold.exists():
            hold.unlink()
        b.cleanup()


def stuck(broker):
    """The segments whose deletion the file RSM held (a retry after the restart may add one)."""
    return sorted({line[2] for line in journal_lines(broker, "HOLD-DELETE")})


def by_class(doc, cls):
    return sorted(s["segmentId"] for s in doc["segments"] if s["class"] == cls)


def test_report_names_exactly_what_was_done_to_the_store(scene, capsys):
    b, remote, pdir = scene["broker"], scene["remote"], scene["pdir"]
    args = ["--bootstrap-server", b.bootstrap, "--store", str(remote), "--layout", "rlmeta-file", "--grace", GRACE]
    doc = run_json(capsys, *args)
    assert by_class(doc, "leaked") == [scene["leaked"]]
    assert by_class(doc, "abandoned_upload") == [scene["abandoned"]]
    assert by_class(doc, "stuck_deletion") == stuck(b)
    assert by_class(doc, "dangling") == [scene["dangling"][2]]
    assert by_class(doc, "size_mismatch") == [scene["mismatch"][2]]
    assert by_class(doc, "copy_in_progress") == by_class(doc, "deletion_in_progress") == []
    orphaned = sorted({o["segmentId"] for o in doc["objects"] if o["class"] == "orphaned"})
    assert orphaned == [scene["orphan"]]
    unmatched = sorted(o["key"] for o in doc["objects"] if o["class"] == "unmatched")
    assert unmatched == sorted(["journal.txt", f"hold-delete-{TOPIC}"])
    abandoned = next(s for s in doc["segments"] if s["class"] == "abandoned_upload")
    assert abandoned["covered"] and len(abandoned["objects"]) == 2
    # The plan: exactly the orphan's, the leaked segment's and the abandoned upload's files.
    rel = lambda p: str(p.relative_to(remote))  # noqa: E731
    want = sorted(rel(p) for d in (pdir / scene["orphan"], pdir / scene["leaked"], pdir / f"{scene['abandoned']}.tmp")
                  for p in d.iterdir())
    assert sorted(doc["plan"]["safeToDelete"]) == want
    assert sorted(p["segmentId"] for p in doc["plan"]["needsPerson"]) == sorted(
        [scene["dangling"][2], scene["mismatch"][2], *stuck(b)])
    # Files and the live topic agree on every class and on what needs a person. Files are a
    # snapshot: of the live plan's objects, those modified after the files' newest record (less
    # the grace: here the hand-made orphan) are left out, each saying why, and nothing else is.
    files = run_json(capsys, str(b.dir / "data"), "--store", str(remote), "--layout", "rlmeta-file", "--grace", GRACE)
    assert files["summary"] == doc["summary"]
    assert files["plan"]["needsPerson"] == doc["plan"]["needsPerson"]
    notes = {o["key"]: o["note"] or "" for o in files["objects"]}
    held_back = sorted(set(doc["plan"]["safeToDelete"]) - set(files["plan"]["safeToDelete"]))
    assert set(files["plan"]["safeToDelete"]) <= set(doc["plan"]["safeToDelete"])
    assert all("the snapshot may not know its upload" in notes[k] for k in held_back), {k: notes[k] for k in held_back}
    assert sorted(k for k, n in notes.items() if "the snapshot may not know" in n) == held_back
    rc, text, _ = run(capsys, *args)
    assert rc == 0 and text.startswith("rlmeta reconcile:") and "What costs money" in text.splitlines()[1]
    say(capsys, "\n" + text)


def test_delete_removes_exactly_the_safe_objects_and_a_second_run_is_clean(scene, capsys, tmp_path):
    b, remote = scene["broker"], scene["remote"]
    args = ["--bootstrap-server", b.bootstrap, "--store", str(remote), "--layout", "rlmeta-file", "--grace", GRACE]
    plan = run_json(capsys, *args)["plan"]["safeToDelete"]
    before = snapshot(remote)
    dry = run_json(capsys, *args, "--delete")
    assert dry["delete"]["dryRun"] and sorted(dry["delete"]["wouldDelete"]) == sorted(plan)
    assert snapshot(remote) == before, "a dry run deleted something"
    journal = tmp_path / "journal.jsonl"
    done = run_json(capsys, *args, "--delete", "--yes", "--journal", str(journal))
    assert sorted(done["delete"]["deleted"]) == sorted(plan) and not done["delete"]["failed"]
    assert snapshot(remote) == sorted(set(before) - set(plan))
    assert sorted(json.loads(line)["key"] for line in journal.read_text().splitlines()) == sorted(plan)
    again = run_json(capsys, *args)
    assert again["plan"]["safeToDelete"] == []
    assert again["summary"].get("orphaned", {}).get("objects", 0) == 0
    assert again["summary"].get("leaked", {}).get("objects", 0) == 0
    assert len(again["plan"]["needsPerson"]) == 2 + len(stuck(b))
    say(capsys, f"reconcile --delete --yes: deleted {len(plan)} objects; second run: nothing safe to delete, "
                f"{len(again['plan']['needsPerson'])} segments need a person")

    # A consumer still reads every record of the live segments (all but the two broken ones).
    from kafka import KafkaConsumer, TopicPartition

    tp = TopicPartition(TOPIC, 0)
    consumer = KafkaConsumer(bootstrap_servers=b.bootstrap, enable_auto_commit=False, consumer_timeout_ms=20000,
                             fetch_max_bytes=1 << 20)
    try:
        consumer.assign([tp])
        # Live from past the last segment deleted or being deleted (whatever the log start offset).
        removed = journal_lines(b, "DELETE") + journal_lines(b, "HOLD-DELETE")
        start = max([consumer.beginning_offsets([tp])[tp]] + [int(line[4]) + 1 for line in removed])
        end = consumer.end_offsets([tp])[tp]
        lo, hi = scene["mismatch"][0], scene["dangling"][1]
        want = [o for o in range(start, end) if not lo <= o <= hi]
        got = {}
        for first, last in ((start, lo - 1), (hi + 1, end - 1)):
            if first > last:
                continue
            consumer.seek(tp, first)
            while first <= last and max(got, default=-1) < last:
                batch = consumer.poll(timeout_ms=10000)
                recs = batch.get(tp, [])
                assert recs, f"no records after offset {max(got, default=first)}"
                for r in recs:
                    if first <= r.offset <= last:
                        got[r.offset] = r.value
        assert sorted(got) == want and all(got[o] == value(o) for o in want)
        say(capsys, f"consumer: read all {len(want)} live records, offsets {start}..{end - 1} less {lo}..{hi}")
    finally:
        consumer.close()


def test_bad_input_exits_2_and_deletes_nothing(scene, capsys):
    b, remote = scene["broker"], scene["remote"]
    before = snapshot(remote)
    base = ["--store", str(remote), "--delete", "--yes", "--grace", "0s"]
    # A layout that matches nothing.
    rc, _, err = run(capsys, "--bootstrap-server", b.bootstrap, *base, "--layout", "aiven")
    assert rc == 2 and "layout_mismatch (code 20)" in err and "matches none of the" in err and "nothing deleted" in err
    # A template that does not parse.
    rc, _, err = run(capsys, "--bootstrap-server", b.bootstrap, *base, "--layout", "{topic}/{segmentid}")
    assert rc == 2 and "invalid_layout (code 19)" in err and "{segmentid}" in err
    # A store that cannot be listed.
    rc, _, err = run(capsys, "--bootstrap-server", b.bootstrap, "--store", str(remote / "nope"), "--layout", "rlmeta-file")
    assert rc == 2 and "cannot list" in err and "nope" in err
    # A metadata topic that cannot be read: no broker there, and no such files.
    (port,) = free_ports(1)
    rc, _, err = run(capsys, "--bootstrap-server", f"127.0.0.1:{port}", "--timeout-ms", "3000", *base, "--layout", "rlmeta-file")
    assert rc == 2 and f"127.0.0.1:{port}" in err and "cannot read __remote_log_metadata" in err
    rc, _, err = run(capsys, str(remote / "no-such-log-dir"), *base, "--layout", "rlmeta-file")
    assert rc == 2 and "no-such-log-dir" in err
    assert snapshot(remote) == before


# ---------------------------------------------------------------------------------------------- S3
@pytest.fixture(scope="module")
def s3():
    pytest.importorskip("moto")
    (port,) = free_ports(1)
    proc = store_scene.serve([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], port,
                             "moto's S3 server")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        store_scene.stop(proc)


def test_s3_store_in_aivens_layout_with_pagination(scene, s3, capsys, monkeypatch):
    import boto3

    for k, v in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test"), ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(k, v)
    client = boto3.client("s3", endpoint_url=s3)
    client.create_bucket(Bucket="tiered")
    prefix = "cluster-a/"
    b = scene["broker"]
    # The broker's metadata (every segment it ever named) says what Aiven's RSM would have written.
    ledger, _ = cli._ledger(cli.build_parser().parse_args(
        ["reconcile", "--bootstrap-server", b.bootstrap, "--store", "-", "--no-progress"]))
    # (every segment, deleted ones too: the core's whole-listing reconcile lists them all; the
    # streaming classify only those needing attention)
    parts, segs, *_ = ledger.reconcile([], "aiven", int(time.time() * 1000), 0)
    names = [f"{t}-{p} ({i})" for i, t, p in parts]
    segments = [{"segmentId": s[0], "partition": names[s[1]], "state": _reconcile.STATE_NAMES[s[3]], "startOffset": s[5][0]}
                for s in segs]
    live = [s for s in segments if s["state"] == "COPY_SEGMENT_FINISHED"]
    gone = [s for s in segments if s["state"] == "DELETE_SEGMENT_FINISHED"]
    assert len(live) >= 4 and gone
    tid = live[0]["partition"].split("(")[1].rstrip(")")

    def key(s, suffix):
        return f"{prefix}{TOPIC}-{tid}/0/{s['startOffset']:020d}-{s['segmentId']}.{suffix}"

    dangling, leaked = live[0], gone[0]
    keys = []
    for s in live:
        keys += [key(s, f) for f in ("log", "indexes", "rsm-manifest") if not (s is dangling and f == "log")]
    keys += [key(leaked, f) for f in ("log", "indexes", "rsm-manifest")]
    orphans = [f"{prefix}{TOPIC}-{tid}/0/{i:020d}-{base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()[:22]}.log"
               for i in range(1100)]
    keys += orphans + [f"{prefix}README.txt"]
    for k in keys:
        client.put_object(Bucket="tiered", Key=k, Body=b"x")
    client.put_object(Bucket="tiered", Key="other-prefix/x.log", Body=b"x")
    args = ["--bootstrap-server", b.bootstrap, "--store", "s3://tiered/" + prefix, "--endpoint-url", s3, "--layout", "aiven",
            "--grace", "0s", "--now-ms", str(int(time.time() * 1000) + 60_000)]
    got = run_json(capsys, *args)
    assert sum(t["objects"] for t in got["totals"]) == len(keys) > 1000, "pages of 1,000 keys not followed"
    assert sum(o["class"] == "orphaned" for o in got["objects"]) == 1100
    assert by_class(got, "dangling") == [dangling["segmentId"]]
    assert by_class(got, "leaked") == [leaked["segmentId"]]
    assert [o["key"] for o in got["objects"] if o["class"] == "unmatched"] == ["README.txt"]
    assert len(got["plan"]["safeToDelete"]) == 1100 + 3
    done = run_json(capsys, *args, "--delete", "--yes", "--journal", str(Path(os.devnull)))
    assert len(done["delete"]["deleted"]) == 1103 and not done["delete"]["failed"]
    again = run_json(capsys, *args)
    assert again["plan"]["safeToDelete"] == [] and sum(t["objects"] for t in again["totals"]) == len(keys) - 1103
    left = client.list_objects_v2(Bucket="tiered", Prefix="other-prefix/")["KeyCount"]
    assert left == 1, "an object outside the prefix was touched"
    say(capsys, f"S3 (moto at {s3}): {len(keys)} keys in Aiven's layout, {len(keys) // 1000 + 1} pages; "
                f"1,100 orphaned + 1 leaked segment's 3 objects deleted; second run clean")
    # A bucket that cannot be listed.
    rc, _, err = run(capsys, "--bootstrap-server", b.bootstrap, "--store", "s3://no-such-bucket/", "--endpoint-url", s3,
                     "--delete", "--yes")
    assert rc == 2 and "no-such-bucket" in err and "NoSuchBucket" in err
