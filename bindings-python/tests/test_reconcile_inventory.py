"""``rlmeta reconcile --inventory``: an S3 Inventory report as the listing, against a real
S3-compatible server (moto's, started here). The store is the Kafka 4.4.0 fixture run's remote
store (tests/fixtures/broker) with a dangling segment, an orphaned upload and a size mismatch
injected, uploaded to a bucket; its inventory is generated from the server's own listing of the
same objects, in each of AWS's three formats (CSV gzipped with URL-encoded keys, ORC, Parquet),
with a manifest as AWS writes it. The report from the inventory equals the report from the API
listing; an inventory made before the metadata's records does not judge the segments those
records describe; a bad manifest or file exits 2 naming the file and the field.
"""

import csv
import gzip
import hashlib
import io
import json
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

from rlmeta import cli
from store_scene import FIXTURE, fixture_objects, free_port, serve, stop

METADATA = str(FIXTURE / "remote_log_metadata")
PREFIX = "cluster a/"  # a space: CSV inventories URL-encode keys
NOW = None  # set by the scene: one clock for every run


@pytest.fixture(scope="module")
def s3():
    pytest.importorskip("moto")
    port = free_port()
    proc = serve([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], port, "moto's S3 server")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def scene(s3):
    """The fixture run's store in bucket `tiered` under PREFIX, three classes injected; returns
    the boto3 client and the API listing (key, size, last-modified) of the bucket."""
    import boto3

    mp = pytest.MonkeyPatch()
    for k, v in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test"), ("AWS_DEFAULT_REGION", "us-east-1")):
        mp.setenv(k, v)
    client = boto3.client("s3", endpoint_url=s3)
    client.create_bucket(Bucket="tiered")
    client.create_bucket(Bucket="inventory")
    for key, size in fixture_objects():
        client.put_object(Bucket="tiered", Key=PREFIX + key, Body=b"\0" * size)
    client.put_object(Bucket="tiered", Key="other-cluster/x.log", Body=b"not ours")  # outside the prefix
    listing = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket="tiered"):
        listing += [(o["Key"], o["Size"], o["LastModified"], o["ETag"]) for o in page.get("Contents", [])]
    global NOW
    NOW = int(time.time() * 1000) + 7_200_000  # two hours on: every object is older than the grace
    yield {"client": client, "listing": listing, "s3": s3}
    mp.undo()


def write_inventory(scene, fmt, made_ms, tmp: Path, source="tiered", schema=None, corrupt=None, rows=None):
    """Writes an inventory of the listing (or of `rows` like it) in `fmt` to the `inventory`
    bucket and to `tmp` (the same keys); returns (s3 manifest URL, local manifest path)."""
    rows = scene["listing"] if rows is None else rows
    base = f"tiered/daily/{made_ms}"
    if fmt == "CSV":
        buf = io.StringIO()
        w = csv.writer(buf, quoting=csv.QUOTE_ALL)
        for key, size, modified, etag in rows:
            w.writerow(["tiered", urllib.parse.quote_plus(key), size,
                        modified.strftime("%Y-%m-%dT%H:%M:%S.") + f"{modified.microsecond // 1000:03d}Z", etag.strip('"')])
        data = gzip.compress(buf.getvalue().encode())
        name = "data/0.csv.gz"
        file_schema = schema or "Bucket, Key, Size, LastModifiedDate, ETag"
    else:
        import pyarrow as pa

        table = pa.table({
            "bucket": pa.array(["tiered"] * len(rows), pa.string()),
            "key": pa.array([r[0] for r in rows], pa.string()),
            "size": pa.array([r[1] for r in rows], pa.int64()),
            "last_modified_date": pa.array([r[2] for r in rows], pa.timestamp("ms", tz="UTC")),
            "e_tag": pa.array([r[3].strip('"') for r in rows], pa.string()),
        })
        out = io.BytesIO()
        if fmt == "Parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, out)
            name = "data/0.parquet"
            file_schema = schema or ("message s3.inventory { required binary bucket (UTF8); required binary key (UTF8); "
                                     "optional int64 size; optional int64 last_modified_date (TIMESTAMP_MILLIS); "
                                     "optional binary e_tag (UTF8); }")
        else:
            import pyarrow.orc as orc

            orc.write_table(table, out)
            name = "data/0.orc"
            file_schema = schema or "struct<bucket:string,key:string,size:bigint,last_modified_date:timestamp,e_tag:string>"
        data = out.getvalue()
    md5 = hashlib.md5(data).hexdigest()
    if corrupt == "md5":
        md5 = "0" * 32
    if corrupt == "truncated":
        data = data[: len(data) // 2]
        md5 = hashlib.md5(data).hexdigest()
    key = f"{base}/{name}"
    manifest = {"sourceBucket": source, "destinationBucket": "arn:aws:s3:::inventory", "version": "2016-11-30",
                "creationTimestamp": str(made_ms), "fileFormat": fmt, "fileSchema": file_schema,
                "files": [{"key": key, "size": len(data), "MD5checksum": md5}]}
    scene["client"].put_object(Bucket="inventory", Key=key, Body=data)
    scene["client"].put_object(Bucket="inventory", Key=f"{base}/manifest.json", Body=json.dumps(manifest).encode())
    local = tmp / "inventory"
    (local / key).parent.mkdir(parents=True, exist_ok=True)
    (local / key).write_bytes(data)
    (local / base / "manifest.json").write_text(json.dumps(manifest))
    return f"s3://inventory/{base}/manifest.json", str(local / base / "manifest.json")


def run(scene, capsys, *argv):
    capsys.readouterr()
    rc = cli.main(["reconcile", "--no-progress", METADATA, "--store", "s3://tiered/" + PREFIX, "--endpoint-url", scene["s3"],
                   "--layout", "rlmeta-file", "--grace", "1h", "--now-ms", str(NOW), "--json", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def report(scene, capsys, *argv):
    rc, out, err = run(scene, capsys, *argv)
    assert rc == 0, err
    doc = json.loads(out)
    return {k: v for k, v in doc.items() if k != "metadata"}, doc["metadata"]


@pytest.mark.parametrize("fmt", ["CSV", "ORC", "Parquet"])
def test_an_inventory_gives_the_api_listings_report(scene, capsys, tmp_path, fmt):
    if fmt != "CSV":
        pytest.importorskip("pyarrow")
    api, _ = report(scene, capsys)
    classes = {c: s["segments"] for c, s in api["summary"].items()}
    assert classes.get("dangling") == 1 and classes.get("size_mismatch") == 1 and api["summary"]["orphaned"]["objects"] > 0
    on_s3, local = write_inventory(scene, fmt, NOW - 7_000_000, tmp_path)
    for manifest in (on_s3, local):
        doc, source = report(scene, capsys, "--inventory", manifest)
        assert doc == api, manifest
        rows = len(scene["listing"])
        assert f"S3 Inventory {manifest} ({fmt}, 1 file(s)" in source and f"({rows:,} rows)" in source, source


def test_an_inventory_older_than_the_records_does_not_judge_their_segments(scene, capsys, tmp_path):
    # made before the fixture run: every segment's latest record came after it, less the grace
    api, _ = report(scene, capsys)
    _, local = write_inventory(scene, "CSV", 1_000_000_000_000, tmp_path)
    doc, _ = report(scene, capsys, "--inventory", local)
    assert "dangling" not in doc["summary"] and "leaked" not in doc["summary"]
    segs = {s["segmentId"]: s for s in doc["segments"]}
    dangling = [s for s in api["segments"] if s["class"] == "dangling"]
    assert dangling and all("the listing may predate its objects" in segs[s["segmentId"]]["why"] for s in dangling)


def test_bad_inventories_exit_2_naming_the_file_and_field(scene, capsys, tmp_path):
    def refused(*argv):
        rc, out, err = run(scene, capsys, *argv)
        assert rc == 2 and "nothing deleted" in err, (rc, err)
        return err

    _, other = write_inventory(scene, "CSV", NOW, tmp_path / "a", source="another-bucket")
    err = refused("--inventory", other)
    assert "inventory_other_bucket: " in err and "sourceBucket is 'another-bucket'" in err and "another bucket" in err
    _, no_date = write_inventory(scene, "CSV", NOW, tmp_path / "b", schema="Bucket, Key, Size, ETag")
    err = refused("--inventory", no_date)
    assert "inventory_schema_lacks_field: " in err and "fileSchema lacks LastModifiedDate" in err and no_date in err
    _, bad_md5 = write_inventory(scene, "CSV", NOW, tmp_path / "c", corrupt="md5")
    err = refused("--inventory", bad_md5)
    assert "inventory_md5_mismatch: " in err and "MD5checksum" in err and "data/0.csv.gz" in err
    pytest.importorskip("pyarrow")
    _, cut = write_inventory(scene, "Parquet", NOW, tmp_path / "d", corrupt="truncated")
    err = refused("--inventory", cut)
    assert "inventory_file_invalid: " in err and "not a readable Parquet inventory" in err and "data/0.parquet" in err
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "manifest.json").write_text('{"sourceBucket": "tiered"}')
    err = refused("--inventory", str(tmp_path / "e" / "manifest.json"))
    assert "inventory_manifest_field_missing: " in err and "no 'destinationBucket'" in err
    rc, out, err = run(scene, capsys, "--inventory", other)  # (nothing was deleted by any of them)
    assert len(list(scene["client"].list_objects_v2(Bucket="tiered")["Contents"])) == len(scene["listing"])


def test_delete_from_an_inventory_reads_each_planned_key_again(scene, tmp_path):
    """--delete with an inventory: the keys both runs call safe are read with HEAD; one
    overwritten since the inventory is skipped, the rest of the plan deleted. (Classified as the
    live topic would be: the metadata files are older than these uploads, so the CLI plans none.)"""
    from rlmeta import _inventory, _reconcile
    from store_scene import ORPHAN

    _, local = write_inventory(scene, "CSV", NOW - 7_000_000, tmp_path)
    store = _reconcile.open_store("s3://tiered/" + PREFIX, scene["s3"], None, None)
    ledger, _ = cli._ledger(cli.build_parser().parse_args(["reconcile", METADATA, "--store", "-", "--no-progress"]))

    def classify():
        inv = _inventory.open_inventory(local, store)
        return _reconcile.classify(ledger, inv.pages(), "rlmeta-file", NOW, 3_600_000, None, inv.created_ms)

    first = classify()
    safe = sorted(first.objects[i]["key"] for i in first.safe)
    assert len(safe) == 5 and all(ORPHAN in k for k in safe), safe
    changed = safe[0]
    scene["client"].put_object(Bucket="tiered", Key=PREFIX + changed, Body=b"rewritten since the inventory")
    result = _reconcile.execute(first, classify, store, tmp_path / "journal.jsonl", yes=True, head=True)
    assert sorted(result["deleted"]) == safe[1:] and result["skippedChangedSinceFirstRun"] == [changed], result
    left = {o["Key"] for o in scene["client"].list_objects_v2(Bucket="tiered")["Contents"]}
    assert PREFIX + changed in left and not any(PREFIX + k in left for k in safe[1:])


# ---------------------------------------------------------------------------------------------- --emit-sql
def sql_answer(query, inventory_dir: Path, fmt, ledger_csv: Path):
    """Runs the emitted query on DuckDB over the inventory's data file and the ledger CSV:
    {key as listed, URL-decoded, prefix taken off: (class, safe)}."""
    duckdb = pytest.importorskip("duckdb")
    db = duckdb.connect()
    db.execute("SET TimeZone = 'UTC'")
    data = next(inventory_dir.rglob("data/0.*"))
    if fmt == "CSV":
        db.execute(f"CREATE VIEW s3_inventory AS SELECT * FROM read_csv('{data}', header = false, columns = {{"
                   "'bucket': 'VARCHAR', 'key': 'VARCHAR', 'size': 'BIGINT', 'last_modified_date': 'TIMESTAMPTZ', 'e_tag': 'VARCHAR'})")
    else:
        db.execute(f"CREATE VIEW s3_inventory AS SELECT * FROM read_parquet('{data}')")
    db.execute(f"CREATE TABLE rlmeta_ledger AS SELECT * FROM read_csv('{ledger_csv}', header = true, columns = {{"
               "'segment_id': 'VARCHAR', 'topic_id': 'VARCHAR', 'topic': 'VARCHAR', 'partition': 'INTEGER', "
               "'start_offset': 'BIGINT', 'since_ms': 'BIGINT', 'deleted': 'BOOLEAN'})")
    out = {}
    for key, size, modified, seg, cls, safe in db.execute(query).fetchall():
        k = urllib.parse.unquote_plus(key) if fmt == "CSV" else key
        assert k.startswith(PREFIX), k
        out[k[len(PREFIX):]] = (cls, safe)
    return out


QUERY_CLASSES = {"orphaned", "leaked", "unmatched", "deleted"}  # every other class the query calls 'named'


def core_answer(finding, keys):
    """The streaming classifier's answer in the query's terms; abandoned uploads the query never
    plans (it cannot see whether finished segments cover them), so they are 'named', not safe."""
    cls = {o["key"]: o["class"] for o in finding.objects}
    safe = {finding.objects[i]["key"] for i in finding.safe}
    ans = {}
    for k in keys:
        c = cls.get(k, "live")
        ans[k] = (c if c in QUERY_CLASSES else "named", k in safe and c in QUERY_CLASSES)
    return ans


@pytest.mark.parametrize("fmt", ["CSV", "Parquet"])
def test_the_emitted_query_classifies_as_reconcile_does(scene, capsys, tmp_path, fmt):
    """The core's SQL (rlmeta reconcile --emit-sql) run by a real engine, DuckDB, over the
    inventory's own data file and the ledger CSV, gives every object the class and the plan of
    the streaming classifier, on the bucket's objects plus rows injected into the inventory: an
    object of a deleted segment (leaked), one naming a known segment under another topic
    (unmatched), one with a uuid Kafka never prints."""
    if fmt == "Parquet":
        pytest.importorskip("pyarrow")
    from rlmeta import _inventory, _native, _reconcile

    ledger, _ = cli._ledger(cli.build_parser().parse_args(["reconcile", METADATA, "--store", "-", "--no-progress"]))
    ledger.write_sql_ledger(tmp_path / "all.csv")
    rows = [line.split(",") for line in (tmp_path / "all.csv").read_text().splitlines()[1:]]
    gone = next(r for r in rows if r[6] == "true")
    alive = next(r for r in rows if r[6] == "false")
    old = scene["listing"][0][2]
    extra = [(PREFIX + f"{gone[2]}-{gone[3]}-{gone[1]}/{gone[0]}/segment.log", 10, old, '"e"'),
             (PREFIX + f"another-{alive[3]}-{alive[1]}/{alive[0]}/segment.log", 11, old, '"e"'),
             (PREFIX + f"{alive[2]}-{alive[3]}-{alive[1]}/tqimKeZwStOEOwRzT3L5oR/segment.log", 12, old, '"e"')]
    made = NOW - 7_000_000
    _, local = write_inventory(scene, fmt, made, tmp_path / "inv", rows=scene["listing"] + extra)
    store = _reconcile.open_store("s3://tiered/" + PREFIX, scene["s3"], None, None)
    keys = [r[0][len(PREFIX):] for r in scene["listing"] + extra if r[0].startswith(PREFIX)]

    # as the live topic is judged (no snapshot bound): the plan is not empty
    inv = _inventory.open_inventory(local, store)
    finding = _reconcile.classify(ledger, inv.pages(), "rlmeta-file", NOW, 3_600_000, None, inv.created_ms)
    query = _native.reconcile_sql("rlmeta-file", "s3_inventory", "rlmeta_ledger", "tiered", PREFIX, fmt == "CSV",
                                  NOW, 3_600_000, None, inv.created_ms)
    got = sql_answer(query, tmp_path / "inv", fmt, tmp_path / "all.csv")
    want = core_answer(finding, keys)
    assert got == want
    classes = {c for c, _ in got.values()}
    assert {"orphaned", "leaked", "unmatched", "named"} <= classes, classes
    assert sum(s for _, s in got.values()) >= 5, got
    # an inventory made before every record: deleted segments' objects may be gone since
    early = 1_000_000_000_000
    finding = _reconcile.classify(ledger, _inventory.open_inventory(local, store).pages(), "rlmeta-file", NOW, 3_600_000,
                                  None, early)
    query = _native.reconcile_sql("rlmeta-file", "s3_inventory", "rlmeta_ledger", "tiered", PREFIX, fmt == "CSV",
                                  NOW, 3_600_000, None, early)
    got = sql_answer(query, tmp_path / "inv", fmt, tmp_path / "all.csv")
    assert got == core_answer(finding, keys) and "deleted" in {c for c, _ in got.values()}

    # the CLI: files are a snapshot, so what the inventory shows modified after their newest
    # record (less the grace) is never planned, by the query as by reconcile
    capsys.readouterr()
    rc, out, err = run(scene, capsys, "--inventory", local, "--emit-sql", str(tmp_path / "sql"),
                       "--sql-ledger-location", "s3://analytics/rlmeta-ledger/")
    assert rc == 0, err
    assert "reconcile.sql" in out and f"({len(rows):,} segments)" in out, out
    ddl = (tmp_path / "sql" / "ledger-table.sql").read_text()
    assert "CREATE EXTERNAL TABLE rlmeta_ledger" in ddl and "LOCATION 's3://analytics/rlmeta-ledger/'" in ddl
    got = sql_answer((tmp_path / "sql" / "reconcile.sql").read_text(), tmp_path / "inv", fmt, tmp_path / "sql" / "ledger.csv")
    inv = _inventory.open_inventory(local, store)
    snapshot = _reconcile.classify(ledger, inv.pages(), "rlmeta-file", NOW, 3_600_000, ledger.newest_event_ms(), inv.created_ms)
    assert got == core_answer(snapshot, keys)


def test_emit_sql_needs_an_s3_inventory(scene, capsys, tmp_path):
    rc, out, err = run(scene, capsys, "--emit-sql", str(tmp_path / "sql"))
    assert rc == 2 and "--emit-sql joins an S3 Inventory's table" in err, err
    assert not (tmp_path / "sql").exists()
