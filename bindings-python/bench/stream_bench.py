"""Wall time and peak RSS of ``rlmeta inspect``, ``inspect --summary``, ``simulate`` and ``profile``
on large segment files: a benchmark, not a test (figures in docs/BENCHMARKS.md, "Inspect,
simulate and profile on 1 GiB segments").

    python stream_bench.py --rlmeta NAME=PATH [--rlmeta NAME=PATH ...] DIR [DIR ...]

Each DIR is a ``__remote_log_metadata`` log dir (e.g. ``gen_segment``'s 1 GiB file in
``DIR/__remote_log_metadata-0/``). Each command of each ``rlmeta`` executable (installed from a
wheel of the tree to measure: the one before a change and the one after) runs once per file, its
stdout to /dev/null, under GNU time (``%e`` wall seconds, ``%M`` peak RSS in KB), with the address
space capped at --cap-gb (a run over the cap fails: its peak is then "over the cap"). The file is
read once beforehand (warm page cache). The load average is printed with each row: the machine is
shared.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

COMMANDS = [["inspect"], ["inspect", "--summary"], ["simulate"], ["profile"]]


def run(exe: str, cmd: list, d: str, cap_gb: float, timeout: int) -> str:
    argv = ["/usr/bin/time", "-f", "TIME %e %M", exe, *cmd, "--no-progress", d]
    limit = f"ulimit -v {int(cap_gb * 1024 * 1024)}; exec \"$@\""
    try:
        p = subprocess.run(["bash", "-c", limit, "bash", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"over {timeout} s"
    last = [ln for ln in p.stderr.splitlines() if ln.startswith("TIME ")]
    if not last:
        return "failed: " + p.stderr[-200:].replace("\n", " ")
    wall, kb = last[-1].split()[1:]
    if p.returncode != 0:
        return f"failed after {float(wall):.1f} s ({p.stderr.splitlines()[0][:80] if p.stderr else ''}; cap {cap_gb:g} GB)"
    return f"{float(wall):.1f} s, {int(kb) / 1024:,.0f} MB"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--rlmeta", action="append", required=True, help="NAME=PATH of an rlmeta executable")
    ap.add_argument("--cap-gb", type=float, default=8.0)
    ap.add_argument("--timeout", type=int, default=900)
    args = ap.parse_args()
    exes = [x.split("=", 1) for x in args.rlmeta]
    print(f"| file | command | {' | '.join(n for n, _ in exes)} | load average |")
    print(f"| --- | --- | {' | '.join('---' for _ in exes)} | --- |")
    for d in args.dirs:
        for f in Path(d).rglob("*.log"):
            with open(f, "rb") as fh:  # warm the page cache
                while fh.read(1 << 24):
                    pass
        for cmd in COMMANDS:
            cells = [run(exe, cmd, d, args.cap_gb, args.timeout) for _, exe in exes]
            load = os.getloadavg()[0]
            print(f"| {d} | {' '.join(cmd)} | {' | '.join(cells)} | {load:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
