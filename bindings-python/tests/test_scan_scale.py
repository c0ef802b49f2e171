"""``rlmeta scan`` at scale, small enough for ``make test``: a 160 MB segment file (the crafted
KIP-1266 keyed fixture repeated, each copy's offsets moved on) scanned with exact counts in a process
whose peak RSS stays below RSS_BOUND_MB. The design before read each file whole (and listed every
tombstone as an object and a line): its peak was above the file's size; this one reads the file in
chunks and keeps only the first LIST records of each kind it lists, so its peak does not grow
with the file (21 MB on a 1 GiB file, measured with GNU time).
"""

import re
import struct
from pathlib import Path

import peak_rss
import rlmeta

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "crafted" / "kip1266-keyed" / "__remote_log_metadata-0" / "00000000000000000000.log"
FILE_MB = 160
RSS_BOUND_MB = 100


def repeated(path: Path, mb: int) -> int:
    """Writes the fixture again and again, each copy's batch base offsets moved past the last
    (the base offset is outside the batch's CRC); returns the number of copies."""
    seed = FIXTURE.read_bytes()
    entries, pos = [], 0
    while pos < len(seed):
        (length,) = struct.unpack_from(">i", seed, pos + 8)
        entries.append((struct.unpack_from(">q", seed, pos)[0], seed[pos + 8:pos + 12 + length]))
        pos += 12 + length
    span = 1 + max(b.last_offset for b in rlmeta.read_batches(seed))
    copies = mb * 1_000_000 // len(seed) + 1
    with open(path, "wb") as out:
        for c in range(copies):
            out.write(b"".join(struct.pack(">q", base + c * span) + rest for base, rest in entries))
    return copies


def test_scan_reads_a_large_file_exactly_in_bounded_memory(tmp_path):
    seed = rlmeta.Inspector(scan_only=True)
    seed.scan_path(FIXTURE)
    one = seed.finish().summary
    assert one.tombstones > 0 and one.keyed_records > 0
    big = tmp_path / "__remote_log_metadata-0" / "00000000000000000000.log"
    big.parent.mkdir()
    copies = repeated(big, FILE_MB)
    size_mb = big.stat().st_size / 1e6
    rc, out, err, rss = peak_rss.run_measured("cli", ["scan", "--no-progress", str(big.parent)])
    assert rc == 0, err
    print(f"\nscan: {size_mb:.0f} MB file, {copies * one.records} records, peak RSS {rss:.0f} MB")
    records = copies * one.records
    tombstones = copies * one.tombstones
    assert f"__remote_log_metadata-0: {records:,} records" in out
    assert f"{copies * one.keyed_records:,} keyed, {tombstones:,} tombstones" in out
    assert len(re.findall(r"^  tombstone at offset ", out, re.M)) == 20
    assert f"  ... {tombstones - 20:,} more tombstones (--json lists them all)" in out
    assert rss < RSS_BOUND_MB < size_mb, f"peak RSS {rss:.0f} MB for a {size_mb:.0f} MB file (bound {RSS_BOUND_MB} MB)"
