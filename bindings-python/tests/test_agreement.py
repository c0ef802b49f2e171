"""Agreement of the products on every fixture and every kind of file: `rlmeta scan --json`,
`rlmeta simulate --json`, the Rust example `inspect --json` and the plugin's view (the outcome codes
of the C ABI's `rlmeta_store_apply`, the packed batch the JNI MetadataStore passes, and the store's
dump) count the same records, kinds, fatal records and live segments, and simulate's later moment
is the summary's compaction (the same records kept, the same live segments lost).

Every count comes from one core function; this proves the products are views of it rather than
copies (issue 20: simulate had its own fold with other defaults, and counted differently).
The fixtures: a real Kafka 4.4.0 broker's three metadata partitions, the crafted files (every
codec, a corrupt batch, a torn tail, KIP-1266 keys with tombstones and a partition deletion), and files
written here by kafka-python's own batch writer (a second encoder, sharing no rlmeta code) from
those records and a few odd ones: every codec including none, null-key and keyed records in one
file, tombstones (keyed and null-key), undecodable values, a bad key, valid and invalid level
records, a corrupt batch (plain and compressed) and a torn tail.
"""

import ctypes
import json
import os
import subprocess
from pathlib import Path

import pytest
from kafka.record import MemoryRecords
from kafka.record.memory_records import MemoryRecordsBuilder

from rlmeta import LEVEL_RECORD_KEY, OutcomeCode, _tables, cli

REPO = Path(__file__).resolve().parents[2]
FIXTURES = sorted(
    [*(REPO / "tests/fixtures/broker/remote_log_metadata").glob("__remote_log_metadata-*"),
     *(REPO / "tests/fixtures/crafted").glob("*/__remote_log_metadata-0")]
)
# The release example `make py-test` builds (rules.mk sets it); without it the Rust side is skipped.
INSPECT = os.environ.get("RLMETA_INSPECT")
# The C binding's shared library (rules.mk sets it): the plugin's store path, without a JVM.
C_LIB = os.environ.get("RLMETA_C_LIB")
# kafka-python's compression type ids
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
# Files written here: (name, codec, records per batch, what is done to the bytes).
WRITTEN = [
    *((f"written-{c}", c, 4, None) for c in CODECS),
    ("written-corrupt-none", "none", 4, "corrupt"),
    ("written-corrupt-zstd", "zstd", 4, "corrupt"),
    ("written-torn-none", "none", 4, "torn"),
    ("written-torn-snappy", "snappy", 3, "torn"),
    ("written-one-a-batch", "none", 1, None),
]


def _read(data: bytes):
    """Every batch kafka-python's reader walks: (CRC valid, [(offset, timestamp, key, value)])."""
    out, mr = [], MemoryRecords(data)
    while mr.has_next():
        b = mr.next_batch()
        if b is None:
            break
        valid = b.validate_crc()  # before iterating, as kafka-python requires
        out.append((valid, [(r.offset, r.timestamp, r.key, r.value) for r in b] if valid else []))
    return out


def _records(d: Path):
    """The records a consumer gets from the files: up to the first batch that fails its CRC (a
    Kafka consumer, as the plugin's, raises there and gets nothing past it)."""
    out = []
    for f in sorted(d.glob("*.log")):
        for valid, rs in _read(f.read_bytes()):
            if not valid:
                return out
            out += rs
    return out


def _all_records(d: Path) -> int:
    """Every record the files hold, read or not: the record counts of the batch headers of every
    whole entry (a v2 batch keeps its count at byte 57; a torn tail holds none)."""
    n = 0
    for f in sorted(d.glob("*.log")):
        data, pos = f.read_bytes(), 0
        while pos + 12 <= len(data):
            size = 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
            if pos + size > len(data):
                break
            n += int.from_bytes(data[pos + 57:pos + 61], "big")
            pos += size
    return n


def _write(path: Path, records, codec: str, per_batch: int, damage):
    """`records` as kafka-python's producer batches them, `per_batch` a batch, then damaged."""
    out, batches = bytearray(), []
    for i in range(0, len(records), per_batch):
        b = MemoryRecordsBuilder(magic=2, compression_type=CODECS[codec], batch_size=1 << 20, offset=i)
        for _, ts, k, v in records[i:i + per_batch]:
            assert b.append(ts, k, v, []) is not None
        b.close()
        batches.append(len(out))
        out += b.buffer()
    if damage == "corrupt":  # a byte of the third batch from the end (past its 61-byte header)
        out[batches[-3] + 61 + 7] ^= 0x01
    elif damage == "torn":  # the last batch cut in the middle
        out = out[: (batches[-1] + len(out)) // 2]
    path.mkdir(parents=True)
    (path / "00000000000000000000.log").write_bytes(bytes(out))


@pytest.fixture(scope="session")
def written(tmp_path_factory):
    """The kinds of file written here, each a metadata partition directory."""
    stock = _records(REPO / "tests/fixtures/broker/remote_log_metadata/__remote_log_metadata-0")
    keyed = _records(REPO / "tests/fixtures/crafted/kip1266-keyed/__remote_log_metadata-0")
    ts = stock[-1][1]
    level_key = LEVEL_RECORD_KEY.encode() if isinstance(LEVEL_RECORD_KEY, str) else LEVEL_RECORD_KEY
    odd = [
        (None, b"\x00\x01garbage"),  # undecodable
        (b"not-a-kip1266-key", stock[1][3]),  # a bad key on a stock update
        (None, None),  # a null-key tombstone
        (level_key, b"9"),  # an invalid level record
        (level_key, b"1"),  # a valid one
    ]
    # null-key history, odd records, then the KIP-1266 keyed log (tombstones, a partition deleted)
    pairs = [(k, v) for _, _, k, v in stock] + odd + [(k, v) for _, _, k, v in keyed]
    records = [(i, ts + i, k, v) for i, (k, v) in enumerate(pairs)]
    root = tmp_path_factory.mktemp("written")
    for name, codec, per_batch, damage in WRITTEN:
        _write(root / name / "__remote_log_metadata-0", records, codec, per_batch, damage)
    return root


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


def _plugin(d: Path):
    """The plugin's view of the records a consumer gets from the files: one outcome code per
    record from the C ABI's packed apply (the JNI MetadataStore's call), and the store's dump."""
    if not C_LIB:
        pytest.skip("RLMETA_C_LIB (the C binding's shared library) not given")
    lib = ctypes.CDLL(C_LIB)
    lib.rlmeta_store_new.restype = ctypes.c_void_p
    lib.rlmeta_store_free.argtypes = [ctypes.c_void_p]
    lib.rlmeta_store_apply.restype = ctypes.c_uint32
    lib.rlmeta_store_apply.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                       ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                       ctypes.c_void_p]
    lib.rlmeta_outcome_fatal_to_kafka.restype = ctypes.c_bool
    lib.rlmeta_outcome_fatal_to_kafka.argtypes = [ctypes.c_uint8]

    class Buf(ctypes.Structure):
        _fields_ = [("data", ctypes.POINTER(ctypes.c_char)), ("len", ctypes.c_size_t)]

    lib.rlmeta_store_dump_json.restype = ctypes.c_uint32
    lib.rlmeta_store_dump_json.argtypes = [ctypes.c_void_p, ctypes.POINTER(Buf), ctypes.c_void_p]
    lib.rlmeta_buf_free.argtypes = [ctypes.POINTER(Buf)]
    records = _records(d)
    n = len(records)
    offsets = (ctypes.c_int64 * n)(*(o for o, _, _, _ in records))
    klen = (ctypes.c_int32 * n)(*(-1 if k is None else len(k) for _, _, k, _ in records))
    vlen = (ctypes.c_int32 * n)(*(-1 if v is None else len(v) for _, _, _, v in records))
    data = b"".join((k or b"") + (v or b"") for _, _, k, v in records)
    out = (ctypes.c_uint8 * n)()
    store = lib.rlmeta_store_new()
    try:
        assert lib.rlmeta_store_apply(store, offsets, data, len(data), klen, vlen, n, out, None) == 0
        buf = Buf()
        assert lib.rlmeta_store_dump_json(store, ctypes.byref(buf), None) == 0
        dump = json.loads(ctypes.string_at(buf.data, buf.len))
        lib.rlmeta_buf_free(ctypes.byref(buf))
    finally:
        lib.rlmeta_store_free(store)
    codes = list(out)
    fatal = [lib.rlmeta_outcome_fatal_to_kafka(c) for c in codes]
    assert fatal == [_tables.OUTCOME_FATAL_TO_KAFKA[c] for c in codes]  # C and Python: the core's table
    return records, codes, sum(fatal), dump


def test_every_kind_of_fixture_is_here(written):
    names = {p.parent.name if p.name.endswith("-0") and p.parent.name != "remote_log_metadata" else p.name for p in FIXTURES}
    assert {"corrupt-crc", "truncated-tail", "kip1266-keyed", "gzip", "lz4", "snappy", "zstd"} <= names, names
    assert len(FIXTURES) == 10
    assert sorted(p.name for p in written.iterdir()) == sorted(w[0] for w in WRITTEN)


DIRS = [*(pytest.param(d, id=f"{d.parent.name}/{d.name}") for d in FIXTURES),
        *(pytest.param(w[0], id=w[0]) for w in WRITTEN)]


@pytest.mark.parametrize("d", DIRS)
def test_scan_simulate_rust_inspect_and_the_plugin_agree(capsys, written, d):
    if isinstance(d, str):
        d = written / d / "__remote_log_metadata-0"
    (scan,) = _cli(capsys, "scan", "--json", "--no-progress", str(d))["partitions"]
    sim_doc = _cli(capsys, "simulate", "--json", "--no-progress", str(d))
    (sim,) = sim_doc["partitions"]
    assert sim_doc["projection"] is None  # not asked for: no growth projection (it took minutes)
    rust = _rust(d)
    now, later = sim["moments"]

    # records and kinds: scan and the Rust inspection; simulate reads the same records
    assert scan["records"] == rust["records"] == sim["records"] == now["records"]
    # every record of the files is read or unread (in or after the first corrupt batch), by one rule
    assert scan["unreadRecords"] == rust["unreadRecords"]
    assert scan["records"] + scan["unreadRecords"] == _all_records(d)
    assert [s["position"] for s in scan["stops"] if s["unread"]] == [s["position"] for s in rust["stops"] if s["unread"]]
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

    # the plugin's view: every record a consumer gets, one outcome code each (the C ABI's)
    records, codes, fatal, dump = _plugin(d)
    count = {c: codes.count(c) for c in OutcomeCode}
    assert len(records) == scan["records"], "records a consumer gets vs records scan read"
    assert fatal == scan["fatalToPreKip1266Brokers"] == rust["fatalToOldBrokers"]
    assert count[OutcomeCode.UNDECODABLE] == kinds["undecodable"] == len(scan["undecodable"])
    # every null value, null key or not (byKind counts a null-key one under nullKey)
    assert count[OutcomeCode.TOMBSTONE] == len(scan["tombstones"])
    levels = [OutcomeCode.LEVEL_0, OutcomeCode.LEVEL_1, OutcomeCode.LEVEL_2, OutcomeCode.LEVEL_INVALID]
    assert sum(count[c] for c in levels) == kinds["levelRecords"] == len(scan["levelRecords"])
    # the level in force: the last level record, as the plugin tracks it and the summary reports it
    last = next((c for c in reversed(codes) if c in levels), None)
    assert (rust["level"] or {}).get("offset") == (scan["levelRecords"][-1]["offset"] if scan["levelRecords"] else None)
    assert (rust["level"] or {}).get("level") == (None if last in (None, OutcomeCode.LEVEL_INVALID) else last - OutcomeCode.LEVEL_0)
    bad_key = [OutcomeCode.BAD_KEY, OutcomeCode.APPLIED_WITH_BAD_KEY, OutcomeCode.APPLIED_WITH_BAD_KEY_V1]
    assert sum(count[c] for c in bad_key) == len(scan["badKeys"])
    assert sum(len(p["orphans"]) for p in dump["partitions"]) == len(scan["orphans"]) == rust["orphans"]
    assert sum(len(p["segments"]) for p in dump["partitions"]) == scan["liveSegments"]
