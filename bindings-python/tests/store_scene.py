"""What the reconcile tests against real servers share: free ports, a server process started and
stopped, and the remote store the Kafka 4.4.0 fixture run left (tests/fixtures/broker) with a
dangling segment, a size mismatch and an orphaned upload injected."""

import socket
import subprocess
import time
from pathlib import Path
from typing import List, Tuple

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "broker"
#: The orphaned upload's segment id (no metadata names it).
ORPHAN = "AAAAAAAAAAAAAAAAAAAAAA"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(argv: List[str], port: int, what: str, **kw) -> subprocess.Popen:
    """Starts a server and waits (60 s at most) until it accepts connections on the port."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return proc
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError(f"{what} did not start")
            time.sleep(0.2)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def fixture_objects() -> List[Tuple[str, int]]:
    """(key, size) of the fixture's store in the layout its RSM wrote (`rlmeta-file`): the first
    segment's objects gone (dangling), the second's log 10 bytes (size mismatch), and the third's
    files again under another segment id (orphaned)."""
    sizes = {}
    for line in (FIXTURE / "remote-journal.txt").read_text().splitlines():
        if line.startswith("COPY "):
            _, _, seg, _, _, size = line.split()
            sizes[seg] = int(size)
    dirs = []
    for line in (FIXTURE / "remote-listing.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        d, files = line.split(":", 1)
        dirs.append((d, files.split()))
    dirs.sort()
    out = []
    for i, (d, files) in enumerate(dirs):
        if i == 0:
            continue
        for f in files:
            size = sizes[d.split("/")[1]] if f == "segment.log" else 8
            out.append((f"{d}/{f}", 10 if i == 1 and f == "segment.log" else size))
    orphan = dirs[2][0].split("/")[0] + "/" + ORPHAN
    out += [(f"{orphan}/{f}", 8) for f in dirs[2][1]]
    return out
