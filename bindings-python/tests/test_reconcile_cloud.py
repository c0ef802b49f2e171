"""``rlmeta reconcile`` on Google Cloud Storage and Azure Blob Storage, against real emulators
started here (a GCS emulator from PyPI, ``gcp-storage-emulator``; Azurite from npm) through the
official clients (``google-cloud-storage``, ``azure-storage-blob``). The store is the Kafka 4.4.0
fixture run's (tests/fixtures/broker) with a dangling segment, an orphaned upload and a size
mismatch injected, uploaded to each, under a prefix, in the layout the fixture's RSM wrote; the
report must be the one a local directory of the same objects gives, and ``--delete --yes``
deletes exactly the plan's keys.
"""

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from rlmeta import _reconcile, cli
from store_scene import FIXTURE, ORPHAN, fixture_objects, free_port, serve, stop

REPO = Path(__file__).resolve().parents[2]
METADATA = str(FIXTURE / "remote_log_metadata")
AZURITE = REPO / "node_modules" / ".bin" / "azurite-blob"
PREFIX = "cluster-a/"
# Azurite's well-known development account (its documentation's key)
AZ_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


NOW = int(time.time() * 1000) + 7_200_000  # two hours on: every object is older than the grace


def run(capsys, store, *argv):
    capsys.readouterr()
    rc = cli.main(["reconcile", "--no-progress", METADATA, "--store", store, "--layout", "rlmeta-file", "--grace", "1h",
                   "--now-ms", str(NOW), "--json", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def comparable(doc):
    """The report without what names the store or the objects' own upload times, in key order (a
    directory walk and a bucket listing list keys in different orders)."""
    doc = {k: v for k, v in doc.items() if k not in ("store", "metadata")}
    doc["objects"] = sorted(({k: v for k, v in o.items() if k not in ("lastModifiedMs", "note")} for o in doc["objects"]),
                            key=lambda o: o["key"])
    doc["segments"] = [{**s, "objects": sorted(s["objects"])} for s in doc["segments"]]
    doc["plan"] = {k: sorted(v, key=json.dumps) for k, v in doc["plan"].items()}
    return doc


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    root = tmp_path_factory.mktemp("local")
    for key, size in fixture_objects():
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(b"\0" * size)
    return root


@pytest.fixture(scope="module")
def gcs():
    pytest.importorskip("google.cloud.storage")
    port = free_port()
    proc = serve([sys.executable, "-m", "gcp_storage_emulator", "start", "--host", "127.0.0.1", "--port", str(port),
                   "--in-memory"], port, "the GCS emulator")
    mp = pytest.MonkeyPatch()
    mp.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{port}")
    try:
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        client = storage.Client(project="rlmeta", credentials=AnonymousCredentials())
        bucket = client.create_bucket("tiered")
        for key, size in fixture_objects():
            bucket.blob(PREFIX + key).upload_from_string(b"\0" * size)
        bucket.blob("other-cluster/x.log").upload_from_string(b"not ours")
        yield client
    finally:
        mp.undo()
        stop(proc)


@pytest.fixture(scope="module")
def azure(tmp_path_factory):
    pytest.importorskip("azure.storage.blob")
    if not AZURITE.exists():
        raise RuntimeError(f"no Azurite at {AZURITE}: run make setup-node")
    port = free_port()
    work = tmp_path_factory.mktemp("azurite")
    proc = serve([str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(work), "--silent",
                   "--skipApiVersionCheck"], port, "Azurite")
    conn = (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={AZ_KEY};"
            f"BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1;")
    try:
        from azure.storage.blob import BlobServiceClient

        container = BlobServiceClient.from_connection_string(conn).create_container("tiered")
        for key, size in fixture_objects():
            container.upload_blob(PREFIX + key, b"\0" * size)
        container.upload_blob("other-cluster/x.log", b"not ours")
        yield conn, container
    finally:
        stop(proc)
        shutil.rmtree(work, ignore_errors=True)


def test_gcs_and_azure_give_the_local_directorys_report_and_delete_the_plan(local, gcs, azure, capsys, tmp_path):
    rc, out, err = run(capsys, str(local))
    assert rc == 0, err
    want = json.loads(out)
    classes = {c: s["segments"] for c, s in want["summary"].items()}
    assert classes.get("dangling") == 1 and classes.get("size_mismatch") == 1 and want["summary"]["orphaned"]["objects"] == 5
    conn, container = azure
    ledger, _ = cli._ledger(cli.build_parser().parse_args(["reconcile", METADATA, "--store", "-", "--no-progress"]))
    for url, extra in (("gs://tiered/" + PREFIX, ()), ("az://tiered/" + PREFIX, ("--azure-connection-string", conn))):
        rc, out, err = run(capsys, url, *extra)
        assert rc == 0, err
        doc = json.loads(out)
        assert doc["store"].startswith(url), doc["store"]
        assert comparable(doc) == comparable(want), url
        # Deleting: the metadata files are a snapshot older than these uploads, so the CLI plans
        # nothing; classified as the live topic would be (no snapshot limit), the orphan's five
        # objects are safe, and exactly they go.
        store = _reconcile.open_store(url, None, None, None, None, conn)
        first = _reconcile.classify(ledger, store.list(False), "rlmeta-file", NOW, 3_600_000)
        safe = sorted(first.objects[i]["key"] for i in first.safe)
        assert len(safe) == 5 and all(ORPHAN in k for k in safe), safe
        again = lambda: _reconcile.classify(ledger, store.list(False), "rlmeta-file", NOW, 3_600_000)  # noqa: E731
        result = _reconcile.execute(first, again, store, tmp_path / "journal.jsonl", yes=True)
        assert sorted(result["deleted"]) == safe and not result["failed"]
    gone = {PREFIX + k for k, _ in fixture_objects() if ORPHAN in k}
    every = {PREFIX + k for k, _ in fixture_objects()} | {"other-cluster/x.log"}
    assert {b.name for b in gcs.list_blobs("tiered")} == every - gone
    assert {b.name for b in container.list_blobs()} == every - gone


def test_cloud_stores_that_cannot_be_listed_exit_2(gcs, azure, capsys):
    conn, _ = azure
    rc, _, err = run(capsys, "gs://no-such-bucket/x/")
    assert rc == 2 and "cannot list gs://no-such-bucket/x/" in err and "nothing deleted" in err
    rc, _, err = run(capsys, "az://no-such-container/", "--azure-connection-string", conn)
    assert rc == 2 and "cannot list az://no-such-container/" in err and "ResourceNotFound" in err
    wrong = conn.replace(AZ_KEY, "d3Jvbmc=")
    rc, _, err = run(capsys, "az://tiered/" + PREFIX, "--azure-connection-string", wrong)
    assert rc == 2 and "cannot list az://tiered/" in err and "nothing deleted" in err
    env = os.environ.pop("AZURE_STORAGE_CONNECTION_STRING", None)
    try:
        rc, _, err = run(capsys, "az://tiered/")
        assert rc == 2 and "no connection string" in err
    finally:
        if env is not None:
            os.environ["AZURE_STORAGE_CONNECTION_STRING"] = env
