"""The two console scripts, in-process on real files (a Kafka 4.4.0 broker's metadata segments,
the crafted fixtures) and once each as installed console scripts. The live-cluster runs are in
test_migration_broker.py."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlmeta import cli, migration

REPO = Path(__file__).resolve().parents[2]
BROKER = REPO / "tests" / "fixtures" / "broker" / "remote_log_metadata"
KEYED = next((REPO / "tests" / "fixtures" / "crafted" / "kip1266-keyed").glob("*"))
KIP_HELP = REPO / "tests" / "fixtures" / "kip-1266" / "migration-help.txt"  # the KIP's sample --help


def run_cli(capsys, *argv):
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_inspect_lists_like_kafka_dump_log_and_folds_lifecycles(capsys):
    rc, out, _ = run_cli(capsys, "inspect", str(BROKER / "__remote_log_metadata-0"))
    assert rc == 0
    kafka = (REPO / "tests" / "fixtures" / "broker" / "dump" / "__remote_log_metadata-0-00000000000000000000.log.txt").read_text()
    # No keys in a stock broker's log: the listing is Kafka's own, line for line.
    assert out.startswith(kafka)
    assert "live, COPY_SEGMENT_FINISHED" in out and "live segments: 4, orphaned updates: 0" in out
    rc, out, _ = run_cli(capsys, "inspect", "--json", str(KEYED))
    doc = json.loads(out)
    (part,) = doc["partitions"]
    assert part["inspection"]["summary"]["tombstones"] == 4 and part["files"][0]["batches"]


def test_scan_reports_kinds_and_null_keys_of_every_partition(capsys):
    rc, out, _ = run_cli(capsys, "scan", "--json", str(BROKER))
    assert rc == 0
    doc = json.loads(out)
    assert [p["partition"] for p in doc["partitions"]] == [f"__remote_log_metadata-{i}" for i in range(3)]
    assert doc["total"]["records"] == doc["total"]["nullKey"] == 60
    assert doc["total"]["liveSegments"] == 6
    assert all(len(p["nullKeys"]) == p["records"] for p in doc["partitions"])
    rc, out, _ = run_cli(capsys, "scan", str(KEYED))
    assert "by kind: 0 null-key, 11 keyed, 4 tombstones" in out and "tombstone at offset 5" in out
    # Kafka 4.4.0's own kafka-dump-log fails on each of them (its version-1 values and tombstones).
    kafka_dump = (REPO / "tests" / "fixtures" / "crafted" / "dump" / "kip1266-keyed.txt").read_text()
    fails = kafka_dump.count("payload: Error at offset")
    assert fails == 15
    assert f"records that would stop a pre-KIP-1266 broker's metadata consumer: {fails}" in out


def test_scan_finds_stuck_uploads(capsys):
    # The broker fixture's live segments finished their copies; judged a day later with a
    # threshold of 0 nothing is stuck, since none is in a STARTED state.
    rc, out, _ = run_cli(capsys, "scan", "--json", "--stuck-after-ms", "0", "--now-ms", str(2**62), str(BROKER))
    doc = json.loads(out)
    assert all(p["stuckUploads"] == [] and p["overlaps"] == [] for p in doc["partitions"])


def test_simulate_says_a_pre_kip_log_must_not_be_compacted(capsys):
    rc, out, _ = run_cli(capsys, "simulate", "--json", "--months", "2", "--upload-rate", "20GB", str(BROKER / "__remote_log_metadata-0"))
    assert rc == 0
    doc = json.loads(out)
    (part,) = doc["partitions"]
    now, later = part["moments"]
    assert later["kept"] == 0 and len(later["lostLiveSegments"]) == 4  # null keys are dropped by the cleaner
    assert len(doc["projection"]) == 2 and doc["projection"][1]["appendOnlyRecords" if False else "append_only_records"] > 0
    rc, out, _ = run_cli(capsys, "simulate", "--months", "2", "--upload-rate", "20GB")
    assert "append-only records" in out and out.count("\n") >= 5


def test_profile_orders_slowest_first(capsys):
    rc, out, _ = run_cli(capsys, "profile", "--json", str(BROKER))
    rows = json.loads(out)["partitions"]
    assert sorted(r["records"] for r in rows) == [8, 12, 40]
    assert [r["replaySeconds"] for r in rows] == sorted((r["replaySeconds"] for r in rows), reverse=True)


def test_cli_errors(capsys):
    rc, _, err = run_cli(capsys, "scan", "/no/such/file.log")
    assert rc == 1 and "no such file" in err
    rc, _, err = run_cli(capsys, "scan")
    assert rc == 2


KIP_FLAGS = ["--bootstrap-server", "--command-config", "--upgrade-to-v1", "--check", "--upgrade-to-v2", "--auto-upgrade",
             "--force", "--retention-ms", "--segment-ms", "--timeout-ms"]


def test_migration_help_has_the_kips_flags_defaults_and_texts(capsys):
    rc = migration.main(["--help"])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith("usage: kafka-remote-log-metadata-migration")
    assert "Tool to manage remote.log.metadata.version upgrades and migrate the __remote_log_metadata topic." in out
    assert "optional arguments:" in out
    flat = " ".join(out.split())
    for flag in KIP_FLAGS:
        assert flag in out
    for text in [
        "REQUIRED: A comma-separated list of host:port pairs to use for establishing the connection to the Kafka cluster.",
        "Property file containing configs to be passed to Admin/Consumer Client.",
        "Upgrade from remote.log.metadata.version=0 to version 1, and configure topic with min.compaction.lag.ms. (default: false)",
        "Upgrade to remote.log.metadata.version=2 after validation. Requires --check and --auto-upgrade. (default: false)",
        "This prevents data loss during the migration period. Used with --upgrade-to-v1. (default: 1209600000)",
        "Used with --upgrade-to-v1. (default: 86400000)",
        "Maximum time in milliseconds to wait while checking for messages (default: 60000). Used with --check. (default: 60000)",
    ]:
        assert text in flat, text
    p = migration.build_parser()
    args = p.parse_args(["--bootstrap-server", "x:1"])
    assert (args.retention_ms, args.segment_ms, args.timeout_ms) == (1209600000, 86400000, 60000)
    # every help sentence of the KIP's sample is in ours
    kip = " ".join(KIP_HELP.read_text().split())
    sentences = re.findall(r"([A-Z][^.]*?\.)\s", kip[kip.index("optional arguments:"):] + " ")
    assert len(sentences) >= 15, sentences
    for sentence in sentences:
        assert " ".join(sentence.split()) in flat or "  " in sentence, sentence


@pytest.mark.parametrize("argv,why", [
    (["--bootstrap-server", "127.0.0.1:1"], "one of --upgrade-to-v1 or --check"),
    (["--bootstrap-server", "127.0.0.1:1", "--upgrade-to-v2"], "require --check"),
    (["--bootstrap-server", "127.0.0.1:1", "--upgrade-to-v1", "--check"], "cannot be combined"),
    (["--check"], "--bootstrap-server"),
    (["--bootstrap-server", "127.0.0.1:1", "--check", "--upgrade-to-v2", "--backfill"], "exactly one of"),
    (["--bootstrap-server", "127.0.0.1:1", "--upgrade-to-v2", "--backfill", "--force"], "cannot be overridden"),
    (["--bootstrap-server", "127.0.0.1:1", "--check", "--backfill-wait-ms", "5"], "requires --upgrade-to-v2 --backfill"),
])
def test_migration_usage_errors_exit_1(capsys, argv, why):
    assert migration.main(argv) == 1
    assert why in capsys.readouterr().err


def test_migration_unreachable_cluster_fails_with_exit_1(capsys):
    rc = migration.main(["--bootstrap-server", "127.0.0.1:1", "--check", "--timeout-ms", "2000", "--no-progress"])
    assert rc == 1 and capsys.readouterr().err.strip()


def _script(name):
    path = Path(sys.executable).parent / name
    assert path.is_file(), f"console script {name} not installed next to {sys.executable}"
    return str(path)


def test_console_scripts_are_installed_and_run():
    env = dict(os.environ, COLUMNS="80")
    out = subprocess.run([_script("kafka-remote-log-metadata-migration"), "--help"], capture_output=True, text=True, env=env, cwd="/")
    assert out.returncode == 0 and "--upgrade-to-v1" in out.stdout
    f = BROKER / "__remote_log_metadata-0" / "00000000000000000000.log"
    out = subprocess.run([_script("rlmeta"), "scan", str(f)], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0 and "40 records" in out.stdout and out.stderr == "", out.stderr
    print("console scripts: kafka-remote-log-metadata-migration --help, rlmeta scan FILE")


def test_command_config_properties_become_client_settings(tmp_path, capsys):
    from rlmeta._kafka import client_configs, load_properties

    f = tmp_path / "c.properties"
    f.write_text("# comment\nsecurity.protocol = SASL_SSL\nsasl.mechanism: PLAIN\n"
                 'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n'
                 '    username="ops" password="s3cret";\nrequest.timeout.ms=5000\nfoo.bar=1\n')
    conf = client_configs("a:1,b:2", load_properties(str(f)))
    import ssl

    ctx = conf.pop("ssl_context")  # SASL_SSL with no truststore: the system's roots, host names checked
    assert isinstance(ctx, ssl.SSLContext) and ctx.check_hostname and ctx.verify_mode == ssl.CERT_REQUIRED
    assert conf == {"bootstrap_servers": ["a:1", "b:2"], "security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN",
                    "sasl_plain_username": "ops", "sasl_plain_password": "s3cret", "request_timeout_ms": 5000}
    assert "foo.bar has no kafka-python equivalent" in capsys.readouterr().err


def test_scan_accounts_for_every_record_of_a_file_with_a_corrupt_batch(capsys):
    """Kafka's kafka-dump-log lists every batch with its count and whether its CRC is valid: the
    records before the first invalid one are what scan reads, the rest it reports as not read."""
    d = REPO / "tests" / "fixtures" / "crafted" / "corrupt-crc"
    kafka = (REPO / "tests" / "fixtures" / "crafted" / "dump" / "corrupt-crc.txt").read_text()
    batches = [(int(m[1]), m[2] == "true") for m in re.finditer(r"^baseOffset: .* count: (\d+) .* isvalid: (\w+)$", kafka, re.M)]
    first_bad = next(i for i, (_, valid) in enumerate(batches) if not valid)
    read, unread = sum(c for c, _ in batches[:first_bad]), sum(c for c, _ in batches[first_bad:])
    rc, out, _ = run_cli(capsys, "scan", "--json", str(d))
    assert rc == 0
    (part,) = json.loads(out)["partitions"]
    assert (part["records"], part["unreadRecords"]) == (read, unread)
    (stop,) = part["stops"]
    assert stop["unread"] == unread and stop["error"]["kind"] == "corrupt"
    rc, out, _ = run_cli(capsys, "scan", str(d))
    assert f"{read:,} records, {unread:,} NOT READ (in or after a corrupt batch)" in out
    assert f"{unread:,} records NOT READ" in out.splitlines()[-1]
