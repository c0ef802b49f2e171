"""Scan speed of a large ``__remote_log_metadata`` segment file: the Python API against the Rust
``inspect`` example. A benchmark, not a test: ``make py-bench`` (release wheel, release example).

The file is a real Kafka 4.4.0 broker's metadata segment (tests/fixtures/broker, partition 0:
40 records in 26 batches, 5,166 bytes) repeated until it is about --mb MB, each copy's batch base
offsets moved on so that offsets keep growing (a batch's base offset is outside its CRC, so every
batch still verifies). Replay sees the same segments again and again, so its work per record is
that of re-delivered records; decoding and CRC work are those of any file.

Each measure: the file read once beforehand (warm page cache), the best of --runs runs, one
thread, the machine's other core busy with whatever else runs. MB = 10^6 bytes of file. Beside
the wall time, the CPU time of the best run (the process's own, or the child's for a command):
on a shared machine it is the figure that does not move with the other tenants' load.
"""

from __future__ import annotations

import argparse
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import rlmeta

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "tests" / "fixtures" / "broker" / "remote_log_metadata" / "__remote_log_metadata-0" / "00000000000000000000.log"


def build(path: Path, mb: int) -> int:
    seed = SEED.read_bytes()
    entries, pos = [], 0
    while pos < len(seed):
        (length,) = struct.unpack_from(">i", seed, pos + 8)
        entries.append(seed[pos:pos + 12 + length])
        pos += 12 + length
    span = 1 + max(b.last_offset for b in rlmeta.read_batches(seed))
    copies = mb * 1_000_000 // len(seed) + 1
    with open(path, "wb") as out:
        for c in range(copies):
            for e in entries:
                (base,) = struct.unpack_from(">q", e, 0)
                out.write(struct.pack(">q", base + c * span) + e[8:])
    return copies * 40


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best(runs: int, f) -> tuple:
    """(wall seconds, CPU seconds) of the fastest of `runs` runs."""
    times = []
    for _ in range(runs):
        c0, t0 = _cpu(), time.perf_counter()
        f()
        times.append((time.perf_counter() - t0, _cpu() - c0))
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--example", default=str(REPO / "target" / "release" / "inspect"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "__remote_log_metadata-0" / "00000000000000000000.log"
        path.parent.mkdir()
        n = build(path, args.mb)
        size = path.stat().st_size
        data = path.read_bytes()
        mb = size / 1e6
        rows = []

        def records():
            count = 0
            for _ in rlmeta.read_records(data):
                count += 1
            assert count == n, count

        rows.append(("Python API: rlmeta.read_records (every record a frozen dataclass)", best(args.runs, records)))
        rows.append(("Python API: Store.apply_file (replay, native, GIL released)", best(args.runs, lambda: rlmeta.Store().apply_file(data))))
        rows.append(("Python API: Inspector.push_file + finish (lifecycles, compaction what-if)",
                     best(args.runs, lambda: (lambda i: (i.push_file(data), i.finish()))(rlmeta.Inspector()))))
        rlmeta_cli = Path(sys.executable).parent / "rlmeta"
        rows.append(("rlmeta scan FILE (console script, process start included)",
                     best(args.runs, lambda: subprocess.run([str(rlmeta_cli), "scan", str(path)], check=True, stdout=subprocess.DEVNULL))))
        if os.access(args.example, os.X_OK):
            rows.append(("Rust example: inspect --summary FILE (summary alone, release)",
                         best(args.runs, lambda: subprocess.run([args.example, "--summary", str(path)], check=True, stdout=subprocess.DEVNULL))))
            rows.append(("Rust example: inspect FILE (listing + lifecycles + summary, release)",
                         best(args.runs, lambda: subprocess.run([args.example, str(path)], check=True, stdout=subprocess.DEVNULL))))
        else:
            print(f"(no Rust example at {args.example}: cargo build --release -p rlmeta-examples)", file=sys.stderr)
        load = " ".join(os.getloadavg().__repr__().strip("()").split(", "))
        print(f"file: {size:,} bytes, {n:,} records; best of {args.runs}, warm; load average {load}")
        print(f"  {'':<80} {'wall':>8}   {'MB/s':>7}   {'CPU':>7}   {'MB/s':>7}")
        for what, (secs, cpu) in rows:
            print(f"  {what:<80} {secs:8.3f} s {mb / secs:7.1f}   {cpu:7.3f} s {mb / max(cpu, 1e-9):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
