"""Benchmark: ``rlmeta reconcile --inventory`` on a large Parquet S3 Inventory (make
bench-reconcile-inventory; ROWS, PER_SEGMENT to change the size). Generates the inventory and its
manifest under build/bench-inventory (once per size), then classifies it against the ledger of its
segments in a fresh process (tests/inventory_scale.py) and prints rows, wall times, rows/s, peak
RSS, the ledger's RSS and the RSS holding the rows would take. Not a test: no assertion on time.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
import inventory_scale as scale  # noqa: E402

ROWS = int(os.environ.get("ROWS", "100000000"))
PER_SEGMENT = int(os.environ.get("PER_SEGMENT", "20"))
DANGLING, ORPHANS = 10, 1000


def main() -> None:
    segments = (ROWS - ORPHANS) // PER_SEGMENT + DANGLING
    root = HERE.parents[1] / "build" / "bench-inventory" / f"{ROWS}-{PER_SEGMENT}"
    files = max(1, ROWS // 5_000_000)
    if not (root / "manifest.json").exists():
        t = time.monotonic()
        want = scale.write_inventory(root, segments, PER_SEGMENT, DANGLING, ORPHANS, files=files)
        (root / "want.json").write_text(json.dumps(want))
        print(f"generated {want['rows']:,} rows in {files} Parquet file(s) in {time.monotonic() - t:.0f} s", flush=True)
    want = json.loads((root / "want.json").read_text())
    size = sum(p.stat().st_size for p in (root / "data").iterdir())
    t = time.monotonic()
    out = subprocess.run([sys.executable, scale.__file__, str(root), str(segments)], capture_output=True, text=True, check=True)
    wall = time.monotonic() - t
    got = json.loads(out.stdout)
    s = got["summary"]
    assert got["rows"] == want["rows"] and s["live"]["objects"] == want["live_objects"], (got, want)
    assert s["orphaned"]["objects"] == want["orphaned_objects"] and s["dangling"]["segments"] == DANGLING
    mib = 1 << 20
    print(json.dumps({
        "rows": got["rows"], "segments": segments, "parquetMiB": round(size / mib), "wallS": round(wall, 1),
        "ledgerS": round(got["ledger_s"], 1), "classifyS": round(got["classify_s"], 1),
        "rowsPerS": round(got["rows"] / got["classify_s"]), "peakRssMiB": got["peak_rss"] // mib,
        "ledgerRssMiB": got["rss_after_ledger"] // mib,
        "holdingRowsWouldTakeMiB": round(got["tuple_bytes_per_row"] * got["rows"] / mib),
        "cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()
