"""A synthetic cluster at inventory scale, shared by the scale test and the benchmark: metadata
records for N finished segments of one partition (the records encoded by rlmeta from one
template, each segment's id written into the template's bytes), and an S3 Inventory (Parquet,
as AWS writes it, with its manifest) of the store those segments left in the `rlmeta-file`
layout: every segment's 5 required files plus extra ones, some segments dangling (no objects),
some orphaned objects (segment ids no record names).

Run as a script it classifies the inventory in this process and prints one JSON line of counts
and memory (peak RSS, RSS after the ledger, and what holding every row as a tuple would take).
"""

import base64
import hashlib
import json
import resource
import sys
import time
from pathlib import Path

TOPIC, PARTITION = "orders", 0
TOPIC_ID = base64.urlsafe_b64encode(b"\x07" * 16).decode().rstrip("=")
MARK = b"\x5a" * 16  # the template's segment id, replaced per segment
REQUIRED = ["segment.log", "offset.index", "time.index", "producer.snapshot", "leader-epoch.checkpoint"]
LOG_SIZE = 1000
T0 = 1_700_000_000_000
NOW = T0 + 10 * 86_400_000
GRACE = 3_600_000
CREATED = NOW - 3_600_000
BUCKET, PREFIX = "tiered", "cluster/"


def _b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def seg_id(i: int) -> bytes:
    return b"\x01" + i.to_bytes(15, "big")


def records(segments: int, chunk: int = 50_000):
    """(offset, None, value) lists: COPY_SEGMENT_STARTED then FINISHED for each segment."""
    import rlmeta

    tp = {"name": TOPIC, "id": TOPIC_ID, "partition": PARTITION}
    sid = {"topicIdPartition": tp, "id": _b64(MARK)}
    started = rlmeta.encode_value({"apiKey": 0, "version": 0, "record": {
        "remoteLogSegmentId": sid, "startOffset": 0, "endOffset": 9, "brokerId": 1, "maxTimestampMs": T0,
        "eventTimestampMs": T0, "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": 0}], "segmentSizeInBytes": LOG_SIZE,
        "customMetadata": None, "remoteLogSegmentState": 0, "txnIndexEmpty": False}})
    finished = rlmeta.encode_value({"apiKey": 1, "version": 0, "record": {
        "remoteLogSegmentId": sid, "brokerId": 1, "eventTimestampMs": T0 + 1, "customMetadata": None,
        "remoteLogSegmentState": 1}})
    a, b = started.split(MARK), finished.split(MARK)
    assert len(a) == 2 and len(b) == 2, "the template's segment id occurs once"
    out, off = [], 0
    for i in range(segments):
        s = seg_id(i)
        out.append((off, None, a[0] + s + a[1]))
        out.append((off + 1, None, b[0] + s + b[1]))
        off += 2
        if len(out) >= chunk:
            yield out
            out = []
    if out:
        yield out


def ledger(segments: int):
    from rlmeta import _native

    led = _native.Ledger()
    for chunk in records(segments):
        led.apply_many(chunk)
    return led


def write_inventory(root: Path, segments: int, per_segment: int, dangling: int, orphans: int, files: int = 2,
                    group: int = 200_000) -> dict:
    """Writes the Parquet inventory and its manifest under root; returns the expected counts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    extra = [f"extra-{j}.bin" for j in range(per_segment - len(REQUIRED))]
    names = REQUIRED + extra
    schema = pa.schema([("bucket", pa.string()), ("key", pa.string()), ("size", pa.int64()),
                        ("last_modified_date", pa.timestamp("ms")), ("e_tag", pa.string())])
    live = segments - dangling
    base = f"{PREFIX}{TOPIC}-{PARTITION}-{TOPIC_ID}/"
    # objects: the live segments' (ids dangling..segments), then the orphans' (ids past segments)
    units = [(i, names) for i in range(dangling, segments)]
    units += [(segments + k, REQUIRED) for k in range(orphans // len(REQUIRED))]
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    per_file = (len(units) + files - 1) // files
    entries, rows = [], 0
    for f in range(files):
        path = data / f"part-{f}.parquet"
        with pq.ParquetWriter(path, schema, compression="snappy") as w:
            part = units[f * per_file:(f + 1) * per_file]
            for g in range(0, len(part), max(1, group // per_segment)):
                keys, sizes = [], []
                for i, fl in part[g:g + max(1, group // per_segment)]:
                    d = base + _b64(seg_id(i)) + "/"
                    keys += [d + n for n in fl]
                    sizes += [LOG_SIZE if n == "segment.log" else 8 for n in fl]
                n = len(keys)
                rows += n
                w.write_table(pa.table({"bucket": [BUCKET] * n, "key": keys, "size": sizes,
                                        "last_modified_date": pa.array([T0] * n, pa.timestamp("ms")),
                                        "e_tag": ["d41d8cd98f00b204e9800998ecf8427e"] * n}, schema=schema))
        md5 = hashlib.md5(path.read_bytes()).hexdigest()
        entries.append({"key": f"data/{path.name}", "size": path.stat().st_size, "MD5checksum": md5})
    manifest = {"sourceBucket": BUCKET, "destinationBucket": "arn:aws:s3:::inventory", "version": "2016-11-30",
                "creationTimestamp": str(CREATED), "fileFormat": "Parquet",
                "fileSchema": "message s3.inventory { required binary bucket (STRING); required binary key (STRING); "
                              "optional int64 size; optional int64 last_modified_date (TIMESTAMP(MILLIS,true)); "
                              "optional binary e_tag (STRING);}",
                "files": entries}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return {"rows": rows, "live_segments": live, "live_objects": live * per_segment, "dangling": dangling,
            "orphaned_objects": (orphans // len(REQUIRED)) * len(REQUIRED), "orphaned_segments": orphans // len(REQUIRED)}


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def classify(root: Path, segments: int) -> dict:
    """Classifies the inventory under root against the ledger of `segments`: counts and memory."""
    from rlmeta import _inventory, _reconcile

    t0 = time.monotonic()
    led = ledger(segments)
    ledger_s = time.monotonic() - t0
    # What holding the listing would take: 100,000 rows as the stores give them (measured
    # before the classification, whose freed memory the rows would reuse), scaled.
    before = _rss()
    sample = [(f"{TOPIC}-{PARTITION}-{TOPIC_ID}/{_b64(seg_id(i))}/segment.log", LOG_SIZE + i, T0 + i) for i in range(100_000)]
    per_row = (_rss() - before) / len(sample)
    del sample
    after_ledger = _rss()
    inv = _inventory.Inventory(str(root / "manifest.json"), BUCKET, PREFIX)
    t1 = time.monotonic()
    f = _reconcile.classify(led, inv.pages(), "rlmeta-file", NOW, GRACE, None, inv.created_ms)
    classify_s = time.monotonic() - t1
    # VmHWM, not getrusage's ru_maxrss: Linux carries that across exec, so under a grown pytest it
    # reads the parent's size (peak_rss.py)
    peak = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    sums = _reconcile._class_sums(f)
    return {"rows": inv.rows, "listed": f.listed, "summary": sums, "safe": len(f.safe), "person": len(f.person),
            "held_objects": len(f.objects), "peak_rss": peak, "rss_after_ledger": after_ledger,
            "tuple_bytes_per_row": per_row, "ledger_s": ledger_s, "classify_s": classify_s}


if __name__ == "__main__":
    print(json.dumps(classify(Path(sys.argv[1]), int(sys.argv[2]))))
