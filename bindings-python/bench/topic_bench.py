"""make bench-tools-topic: ``rlmeta scan`` and ``rlmeta inspect --summary`` with --bootstrap-server on a
topic of TOOLS_TOPIC_RECORDS records (default 1,000,000), read two ways: the raw read (the record
batches of each Fetch decoded by the core: what the tools do) and the per-record read it replaced
(kafka-python's consumer handing over each record; chosen here by clearing each partition's
``fetch``, so the commands take their record-fed branch). A measurement: it asserts nothing.

The topic is the migration scale test's stock history (tests/test_migration_scale.py: segments of
400 user partitions copied, finished, a quarter deleted; null keys, version 0) in the stock 50
metadata partitions of a real Kafka 4.4.0 broker started here (tests/kafka_broker.py). Each run is
its own process, timed from its start to its exit (wall time) with its peak RSS (VmHWM, as
tests/peak_rss.py reads it); the two reads' outputs are compared (equal, or the first differing
line is printed). Runs alternate between the two reads, TOOLS_TOPIC_RUNS times each (default 2);
TOOLS_TOPIC_COMMANDS picks the commands (default "scan;inspect --summary"). TOOLS_TOPIC_READS picks the
reads (default "per-record;raw"); TOOLS_TOPIC_BASELINE=DIR adds a "baseline" read: the raw read of
another build of the package (DIR holds its ``rlmeta`` directory, e.g. an older wheel unzipped), put
first on ``sys.path``, so that a change is measured against the code before it on the same topic.
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # bindings-python/bench/ -> the repository
sys.path.insert(0, str(ROOT / "bindings-python" / "tests"))

from kafka_broker import Broker  # noqa: E402
from peak_rss import PRELUDE as PEAK_PRELUDE  # noqa: E402
from test_migration_scale import METADATA_PARTITIONS, fill_stock_topic  # noqa: E402

RECORDS = int(os.environ.get("TOOLS_TOPIC_RECORDS", "1000000"))
RUNS = int(os.environ.get("TOOLS_TOPIC_RUNS", "2"))
#: The commands timed, separated by ";" (the listing of ``inspect`` and ``simulate`` can be added).
COMMANDS = [c.split() for c in os.environ.get("TOOLS_TOPIC_COMMANDS", "scan;inspect --summary").split(";") if c.strip()]
BASELINE = os.environ.get("TOOLS_TOPIC_BASELINE")
READS = [r for r in os.environ.get("TOOLS_TOPIC_READS", "per-record;raw").split(";") if r] + (["baseline"] if BASELINE else [])

#: The per-record read: every partition of the cluster without its raw read.
PER_RECORD = (
    "_load = cli.partitions_from_cluster\n"
    "def _records_only(args):\n"
    "    parts = _load(args)\n"
    "    for p in parts:\n"
    "        p.fetch = None\n"
    "    return parts\n"
    "cli.partitions_from_cluster = _records_only\n"
)


def run(read: str, argv):
    first = f"sys.path.insert(0, {BASELINE!r})\n" if read == "baseline" else ""
    code = (PEAK_PRELUDE + first + "from rlmeta import cli\n" + (PER_RECORD if read == "per-record" else "")
            + "sys.exit(cli.main(sys.argv[1:]))\n")
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=3600)
    wall = time.monotonic() - t0
    m = re.search(r"PEAK_RSS_KB (\d+)", out.stderr)
    if out.returncode != 0 or not m:
        raise SystemExit(f"{read} {argv[0]} failed ({out.returncode}): {out.stderr[-2000:]}")
    return wall, int(m.group(1)) / 1024, out.stdout


def main() -> None:
    b = Broker(metadata_partitions=METADATA_PARTITIONS)
    try:
        b.start()
        t0 = time.monotonic()
        n, live = fill_stock_topic(b, RECORDS)
        print(f"[tools-topic] {n:,} records ({live:,} live segments) in {METADATA_PARTITIONS} partitions, "
              f"produced in {time.monotonic() - t0:.0f} s; load average before the runs: {os.getloadavg()}", flush=True)
        for command in COMMANDS:
            argv = [*command, "--bootstrap-server", b.bootstrap, "--no-progress", "--timeout-ms", "60000"]
            outs = {}
            for i in range(RUNS):
                for read in READS:
                    wall, rss, out = run(read, argv)
                    outs.setdefault(read, out)
                    print(f"[tools-topic] rlmeta {' '.join(command)} --bootstrap-server, {read} read, run {i + 1}: "
                          f"{wall:.2f} s wall, peak RSS {rss:.0f} MB, load average {os.getloadavg()[0]:.2f}", flush=True)
            first = READS[0]
            for other in READS[1:]:
                a, c = outs[first].splitlines(), outs[other].splitlines()
                diff = next((f"line {n}: {x!r} vs {y!r}" for n, (x, y) in enumerate(zip(a, c)) if x != y), None)
                same = a == c
                print(f"[tools-topic] rlmeta {' '.join(command)}: the {first} and {other} reads' outputs are "
                      f"{'equal' if same else 'NOT equal: ' + (diff or f'{len(a)} lines vs {len(c)}')} "
                      f"({len(outs[other]):,} bytes)", flush=True)
    finally:
        b.cleanup()


if __name__ == "__main__":
    main()
