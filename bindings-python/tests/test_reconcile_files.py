"""``rlmeta reconcile`` on a real broker's metadata files (tests/fixtures/broker, Kafka 4.4.0 with
the file RSM) against a store laid out as that run's remote-listing.txt says it was left, with
no broker: a clean store is clean, injected classes are named, the grace holds young objects
back, ``--delete --yes`` skips what changed between its two listings, and bad input exits 2.
"""

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from rlmeta import _reconcile, cli

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "broker"
METADATA = str(FIXTURE / "remote_log_metadata")


@pytest.fixture
def store(tmp_path):
    """The remote store as the fixture run left it: one directory per remaining segment, the log
    as long as the journal's COPY line says, the other files a few bytes."""
    sizes = {}
    for line in (FIXTURE / "remote-journal.txt").read_text().splitlines():
        if line.startswith("COPY "):
            _, _, seg, _, _, size = line.split()
            sizes[seg] = int(size)
    root = tmp_path / "remote"
    for line in (FIXTURE / "remote-listing.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        d, files = line.split(":", 1)
        (root / d).mkdir(parents=True)
        for f in files.split():
            (root / d / f).write_bytes(b"\0" * (sizes[d.split("/")[1]] if f == "segment.log" else 8))
    old = time.time() - 7200
    for p in root.rglob("*"):
        os.utime(p, (old, old))
    return root


def run(capsys, *argv):
    capsys.readouterr()
    rc = cli.main(["reconcile", "--no-progress", METADATA, "--layout", "rlmeta-file", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def doc_of(capsys, *argv):
    rc, out, err = run(capsys, "--json", *argv)
    assert rc == 0, err
    return json.loads(out)


def classes(doc):
    return {c: s["segments"] for c, s in doc["summary"].items()}


def test_the_store_the_run_left_is_clean(store, capsys):
    doc = doc_of(capsys, "--store", str(store), "--grace", "1h")
    assert classes(doc) == {"live": 6, "deleted": 12}
    assert doc["plan"] == {"safeToDelete": [], "needsPerson": []}


def test_injected_classes_the_grace_and_a_delete_that_relists(store, capsys, tmp_path):
    seg = sorted(p for p in store.glob("*/*") if p.is_dir())
    shutil.rmtree(seg[0])  # dangling
    shutil.copytree(seg[1], seg[1].parent / "AAAAAAAAAAAAAAAAAAAAAA", copy_function=shutil.copy)  # orphaned, new
    (seg[2] / "segment.log").write_bytes(b"\0" * 10)  # size mismatch
    doc = doc_of(capsys, "--store", str(store), "--grace", "1h")
    assert classes(doc) == {"live": 4, "deleted": 12, "dangling": 1, "size_mismatch": 1, "orphaned": 1}
    assert doc["plan"]["safeToDelete"] == [], "objects younger than the grace were planned for deletion"
    assert {p["class"] for p in doc["plan"]["needsPerson"]} == {"dangling", "size_mismatch"}

    orphan = sorted((seg[1].parent / "AAAAAAAAAAAAAAAAAAAAAA").iterdir())
    args = ["--store", str(store), "--grace", "1h"]
    ledger, _ = cli._ledger(cli.build_parser().parse_args(["reconcile", METADATA, *args]))
    # Older than the grace, but modified after the files' newest record: the files may not know
    # that upload, so nothing is planned for deletion from them, and each object says why.
    for p in orphan:
        os.utime(p, (time.time() - 7200, time.time() - 7200))
    doc = doc_of(capsys, *args)
    assert doc["plan"]["safeToDelete"] == []
    notes = [o["note"] for o in doc["objects"] if o["class"] == "orphaned"]
    assert len(notes) == 5 and all("the snapshot may not know its upload" in n for n in notes), notes
    # Modified two hours before the files' newest record: safe.
    old = ledger.newest_event_ms() / 1000 - 7200
    for p in orphan:
        os.utime(p, (old, old))
    local = _reconcile.LocalStore(str(store))

    def find():
        return _reconcile.classify(ledger, local.list(False), "rlmeta-file", int(time.time() * 1000), 3_600_000)

    first = find()
    assert len(first.safe) == len(orphan) == 5

    def again():  # between the two listings one file is rewritten: it must be left alone
        orphan[0].write_bytes(b"changed")
        os.utime(orphan[0], (old, old))
        return find()

    journal = tmp_path / "journal.jsonl"
    result = _reconcile.execute(first, again, local, journal, yes=True)
    changed = str(orphan[0].relative_to(store))
    assert result["skippedChangedSinceFirstRun"] == [changed] and len(result["deleted"]) == 4
    assert [p for p in orphan if p.exists()] == [orphan[0]]
    assert [json.loads(line)["class"] for line in journal.read_text().splitlines()] == ["orphaned"] * 4
    # The next run deletes the last one, and the emptied directory goes with it.
    rc, out, _ = run(capsys, *args, "--delete", "--yes", "--journal", str(journal))
    assert rc == 0 and "Deleted 1 objects" in out
    assert not (seg[1].parent / "AAAAAAAAAAAAAAAAAAAAAA").exists() and store.is_dir()


def test_bad_input_exits_2_and_deletes_nothing(store, capsys):
    before = sorted(store.rglob("*"))
    rc, _, err = run(capsys, "--store", str(store), "--layout", "aiven", "--delete", "--yes", "--grace", "0s")
    assert rc == 2 and "layout_mismatch" in err and "nothing deleted" in err
    rc, _, err = run(capsys, "--store", str(store), "--layout", "{topic}/{segment_id}/{file", "--delete", "--yes")
    assert rc == 2 and "invalid_layout" in err and "never closed" in err
    rc, _, err = run(capsys, "--store", str(store / "missing"), "--delete", "--yes")
    assert rc == 2 and "cannot list" in err and "missing" in err
    rc, _, err = run(capsys, "--store", "ftp://bucket/x")
    assert rc == 2 and "unsupported store" in err
    rc, _, err = run(capsys, "--store", str(store), "--grace", "soon")
    assert rc == 2 and "not a duration" in err
    assert sorted(store.rglob("*")) == before


def test_durations():
    assert [_reconcile.parse_duration_ms(t) for t in ("24h", "30m", "90s", "500ms", "1d", "1500")] == [
        86_400_000, 1_800_000, 90_000, 500, 86_400_000, 1500]
    with pytest.raises(ValueError):
        _reconcile.parse_duration_ms("-1h")
