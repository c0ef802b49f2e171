"""Agreement of the products on every fixture: `rlmeta scan --json`, `rlmeta simulate --json` and
the Rust example `inspect --json` count the same records, kinds and live segments, and simulate's
later moment is the summary's compaction (the same records kept, the same live segments lost).

Every count comes from one core function; this proves the products are views of it rather than
copies (issue 20: simulate had its own fold with other defaults, and counted differently).
The fixtures: a real Kafka 4.4.0 broker's three metadata partitions and the crafted files (every
codec, a corrupt batch, a torn tail, KIP-1266 keys with tombstones and a level record).
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

from rlmeta import cli

REPO = Path(__file__).resolve().parents[2]
FIXTURES = sorted(
    [*(REPO / "tests/fixtures/broker/remote_log_metadata").glob("__remote_log_metadata-*"),
     *(REPO / "tests/fixtures/crafted").glob("*/__remote_log_metadata-0")]
)
# The release example `make py-test` builds (rules.mk sets it); without it the Rust side is skipped.
INSPECT = os.environ.get("RLMETA_INSPECT")


def _cli(capsys, *argv):
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def _rust(d: Path):
    if not INSPECT:
        pytest.skip("RLMETA_INSPECT (the Rust example inspect) not given")
    assert Path(INSPECT).is_file(), INSPECT
    logs = sorted(str(p) for p in d.glob("*.log"))
    out = subprocess.run([INSPECT, "--json", *logs], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["inspection"]["summary"]


def test_every_kind_of_fixture_is_here():
    names = {p.parent.name if p.name.endswith("-0") and p.parent.name != "remote_log_metadata" else p.name for p in FIXTURES}
    assert {"corrupt-crc", "truncated-tail", "kip1266-keyed", "gzip", "lz4", "snappy", "zstd"} <= names, names
    assert len(FIXTURES) == 10


@pytest.mark.parametrize("d", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_scan_simulate_and_rust_inspect_agree(capsys, d):
    (scan,) = _cli(capsys, "scan", "--json", "--no-progress", str(d))["partitions"]
    sim_doc = _cli(capsys, "simulate", "--json", "--no-progress", str(d))
    (sim,) = sim_doc["partitions"]
    assert sim_doc["projection"] is None  # not asked for: no growth projection (it took minutes)
    rust = _rust(d)
    now, later = sim["moments"]

    # records and kinds: scan and the Rust inspection; simulate reads the same records
    assert scan["records"] == rust["records"] == sim["records"] == now["records"]
    kinds = scan["byKind"]
    assert (kinds["nullKey"], kinds["keyed"], kinds["tombstones"], kinds["undecodable"]) == (
        rust["nullKeyRecords"], rust["keyedRecords"], rust["tombstones"], rust["undecodable"])
    # live segments after replaying every record
    assert scan["liveSegments"] == rust["liveSegments"] == now["liveSegments"]
    # simulate's later moment is the summary's compaction: 30 days after the last record
    assert sim["nowMs"] == scan["nowMs"]
    assert later["atMs"] == rust["compactedAtMs"]
    assert later["kept"] == rust["keptByCompaction"]
    assert sorted(later["lostLiveSegments"]) == sorted(rust["lostByCompaction"])
    # null-key records are all the cleaner drops of a pre-KIP-1266 log
    if kinds["keyed"] == 0 and kinds["tombstones"] == 0:
        assert later["kept"] == 0 and later["nullKeysDropped"] == kinds["nullKey"]
