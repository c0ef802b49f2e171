"""``rlmeta inspect --summary`` and ``rlmeta simulate`` over a segment file larger than their memory
bound, small enough for ``make test``: a 160 MB file (the KIP-1266 keyed fixture and the broker's
null-key partition, one after the other, repeated, each copy's offsets moved on) read with exact
counts in a process whose peak RSS (VmHWM) stays below RSS_BOUND_MB. The design before read each
file whole and held every record (key and value) for the compaction model: its peak was above the
file's size. Now the binding reads files in chunks, and the compaction model (the core's
``PreviewStream``) reads them twice, holding the keys of the range the cleaner cleans and the live
segments, not the records. The counts are checked against the in-memory model on two and three
copies: after 30 days every record is in the cleaned range, so what is kept does not depend on
the number of copies (the test checks that premise on the small files).
"""

import json
import struct
from pathlib import Path

import peak_rss
import rlmeta
from rlmeta._tables import SUMMARY_COMPACTION

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"
SEEDS = [FIXTURES / "crafted" / "kip1266-keyed" / "__remote_log_metadata-0" / "00000000000000000000.log",
         FIXTURES / "broker" / "remote_log_metadata" / "__remote_log_metadata-0" / "00000000000000000000.log"]
FILE_MB = 160
RSS_BOUND_MB = 100
HORIZON_MS = 30 * 86_400_000


def _entries(seed: bytes):
    out, pos = [], 0
    while pos < len(seed):
        (length,) = struct.unpack_from(">i", seed, pos + 8)
        out.append((struct.unpack_from(">q", seed, pos)[0], seed[pos + 8:pos + 12 + length]))
        pos += 12 + length
    return out


def write_copies(path: Path, copies: int) -> None:
    """The seeds one after the other, ``copies`` times, every batch's base offset moved past the
    last (the base offset is outside the batch's CRC)."""
    seeds = [p.read_bytes() for p in SEEDS]
    spans = [1 + max(b.last_offset for b in rlmeta.read_batches(s)) for s in seeds]
    with open(path, "wb") as out:
        base = 0
        for _ in range(copies):
            for seed, span in zip(seeds, spans):
                out.write(b"".join(struct.pack(">q", o + base) + rest for o, rest in _entries(seed)))
                base += span


def held(path: Path):
    """The in-memory models over a small file: the inspector holding its log, and the files preview."""
    data = path.read_bytes()
    ins = rlmeta.Inspector()
    ins.push_file(data)
    s = ins.finish().summary
    last = max(r.timestamp for r in rlmeta.read_records(data))
    c = SUMMARY_COMPACTION  # simulate's defaults
    cfg = rlmeta.TopicConfig(c["cleanup_policy"], c["retention_ms"], c["min_compaction_lag_ms"], c["delete_retention_ms"],
                             c["segment_ms"], c["segment_records"])
    return s, rlmeta.preview_compaction_files([data], cfg, last), rlmeta.preview_compaction_files([data], cfg, last + HORIZON_MS)


def test_inspect_summary_and_simulate_read_a_large_file_exactly_in_bounded_memory(tmp_path):
    small = {}
    for n in (1, 2, 3):
        p = tmp_path / f"copies-{n}.log"
        write_copies(p, n)
        small[n] = held(p)
    one, two, three = small[1], small[2], small[3]
    # the premise: after 30 days what is kept does not depend on the number of copies
    assert (two[0].kept_by_compaction, two[0].lost_by_compaction) == (three[0].kept_by_compaction, three[0].lost_by_compaction)
    assert (two[2].records_after, two[2].lost) == (three[2].records_after, three[2].lost)
    assert two[0].kept_by_compaction > 0 and two[0].lost_by_compaction and one[0].tombstones > 0

    big = tmp_path / "__remote_log_metadata-0" / "00000000000000000000.log"
    big.parent.mkdir()
    copies = FILE_MB * 1_000_000 // sum(p.stat().st_size for p in SEEDS) + 1
    write_copies(big, copies)
    size_mb = big.stat().st_size / 1e6

    rc, out, err, rss = peak_rss.run_measured("cli", ["inspect", "--summary", "--json", "--no-progress", str(big.parent)])
    assert rc == 0, err
    s = json.loads(out)["partitions"][0]["summary"]
    print(f"\ninspect --summary: {size_mb:.0f} MB file, {s['records']:,} records, peak RSS {rss:.0f} MB")
    assert s["records"] == copies * one[0].records
    assert s["tombstones"] == copies * one[0].tombstones
    assert s["liveSegments"] == two[0].live_segments
    assert s["keptByCompaction"] == two[0].kept_by_compaction
    assert s["lostByCompaction"] == list(two[0].lost_by_compaction)
    assert rss < RSS_BOUND_MB < size_mb, f"inspect --summary: peak RSS {rss:.0f} MB for a {size_mb:.0f} MB file"

    rc, out, err, rss = peak_rss.run_measured("cli", ["simulate", "--json", "--no-progress", str(big.parent)])
    assert rc == 0, err
    now, after = json.loads(out)["partitions"][0]["moments"]
    print(f"simulate: peak RSS {rss:.0f} MB")
    assert now["records"] == after["records"] == copies * one[1].records_before
    assert after["kept"] == two[2].records_after
    assert after["lostLiveSegments"] == sorted(two[2].lost)
    assert after["liveSegments"] == two[2].live_before
    assert rss < RSS_BOUND_MB < size_mb, f"simulate: peak RSS {rss:.0f} MB for a {size_mb:.0f} MB file"


def test_inspect_summary_is_the_summary_of_the_full_inspection():
    dirs = sorted(p for p in FIXTURES.rglob("__remote_log_metadata-*") if p.is_dir())
    assert len(dirs) >= 8
    for d in dirs:
        rc_a, full, _, _ = peak_rss.run_measured("cli", ["inspect", "--json", "--no-progress", str(d)])
        rc_b, summary, _, _ = peak_rss.run_measured("cli", ["inspect", "--summary", "--json", "--no-progress", str(d)])
        assert rc_a == rc_b == 0, d
        a, b = json.loads(full)["partitions"][0], json.loads(summary)["partitions"][0]
        assert b["summary"] == a["inspection"]["summary"], d
        rc, text, _, _ = peak_rss.run_measured("cli", ["inspect", "--summary", "--no-progress", str(d)])
        rc, whole, _, _ = peak_rss.run_measured("cli", ["inspect", "--no-progress", str(d)])
        assert text.startswith(f"{d.name}:\nSummary:\n") and whole.endswith(text[len(d.name) + 2:]), d


def test_the_listing_written_in_chunks_is_the_whole_files_listing(tmp_path):
    """``rlmeta inspect`` lists a file read in 4 MiB chunks: the same text as the core's listing of
    the whole image, on a file of several chunks and on every fixture (a cut tail's last line
    too)."""
    big = tmp_path / "__remote_log_metadata-0" / "00000000000000000000.log"
    big.parent.mkdir()
    write_copies(big, 1800)  # about 13 MB: four chunks, entries cut at their ends
    logs = [big] + sorted(FIXTURES.rglob("__remote_log_metadata-*/*.log"))
    assert any("truncated-tail" in str(p) for p in logs)
    for log in logs:
        rc, out, err, _ = peak_rss.run_measured("cli", ["inspect", "--no-progress", str(log)])
        assert rc == 0, err
        listing = rlmeta.dump_log(log.read_bytes(), log.name)
        assert out.startswith(listing) and out[len(listing):].startswith(f"{log.parent.name}:\nSegments ("), log


def _timestamps(data: bytes):
    """The timestamps of a file's records, up to where it stops reading."""
    try:
        for r in rlmeta.read_records(data, verify_crc=False):
            yield r.timestamp
    except rlmeta.RlmetaError:
        return


def test_the_files_preview_read_in_chunks_is_the_held_one_at_every_moment():
    """``preview_compaction_paths_at`` (the files read twice for all moments) against
    ``preview_compaction_files`` (the images held, one model per moment) on every fixture."""
    checked = 0
    for d in sorted(p for p in FIXTURES.rglob("__remote_log_metadata-*") if p.is_dir()):
        files = sorted(d.glob("*.log"))
        datas = [f.read_bytes() for f in files]
        stamps = [t for data in datas for t in _timestamps(data)] or [0]
        moments = [min(stamps) - 1, min(stamps), max(stamps), max(stamps) + HORIZON_MS]
        for cfg in (rlmeta.TopicConfig(), rlmeta.TopicConfig("compact,delete", 5_000, 10, 0, 1_000, 3),
                    rlmeta.TopicConfig("delete", 1, 0, 0, 0, 1)):
            streamed = rlmeta.preview_compaction_paths_at(files, cfg, moments)
            assert streamed == [rlmeta.preview_compaction_files(datas, cfg, at) for at in moments], (d, cfg)
            checked += len(moments)
    assert checked >= 90


def test_a_topics_listing_is_written_as_read(capsys):
    """A partition read from a topic (here, records handed over as a consumer would): the listing
    is written line by line as the records come, then the report, the text the tool printed when
    it built it whole; ``profile`` replays it a chunk at a time and counts every record."""
    import argparse

    from rlmeta import cli

    log = SEEDS[1]
    recs = [(r.offset, r.timestamp, r.key, r.value) for r in rlmeta.read_records(log.read_bytes())] * 3
    args = argparse.Namespace(json=False, summary=False, bootstrap_server="broker:9092", no_progress=True)
    text, _ = cli.cmd_inspect(args, [cli.Partition("__remote_log_metadata-0", records=recs)])
    assert text == ""
    ins = rlmeta.Inspector()
    for r in recs:
        ins.push(*r)
    lines = ["Dumping __remote_log_metadata-0 (live, broker:9092)"] + [rlmeta._native.record_line(*r) for r in recs]
    expected = "\n".join(lines) + "\n" + f"__remote_log_metadata-0:\n{ins.finish().text}"
    assert capsys.readouterr().out == expected
    _, doc = cli.cmd_profile(args, [cli.Partition("__remote_log_metadata-0", records=recs)])
    assert doc["partitions"][0]["records"] == len(recs) and doc["partitions"][0]["liveSegments"] > 0
