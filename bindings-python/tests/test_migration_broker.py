"""The migration tool and ``rlmeta --bootstrap-server`` against a real Kafka 4.4.0 broker started
here (kafka_broker.py): a real null-key history written by stock TopicBasedRemoteLogMetadataManager,
the refusals, 0 -> 1 with Kafka's own ConfigCommand describing the result, --check failing while
null keys remain, the records expired by retention, --check --upgrade-to-v2 --auto-upgrade
passing, the final configs and level records, and every step killed between its actions and run
again until it completes, with no record lost.

The broker first runs stock (so the tool must refuse level 1). Then its tiered topic is deleted
and it restarts with tiered storage off and remote.log.metadata.manager.class.name naming the
KIP-1266-capable plugin (never loaded while tiered storage is off), so that the check, which
reads each broker's config with describeConfigs, passes.

Skipped (with the reason) only when Java or Maven is missing.
"""

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import rlmeta
from rlmeta import cli, migration
from rlmeta._kafka import METADATA_TOPIC, Cluster

sys.path.insert(0, str(Path(__file__).parent))
from kafka_broker import STOCK_MANAGER, say, until_complete, wait, wait_metadata_settled  # noqa: E402
from kafka_broker import metadata_records as records  # noqa: E402
from kafka_broker import migration_tool as tool  # noqa: E402

missing = [t for t in ("java", "mvn") if not shutil.which(t)]
if missing:  # a test that needs a tool fails without it (never skips silently)
    raise RuntimeError(f"test_migration_broker.py needs {', '.join(missing)} on PATH")

CAPABLE = "dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager"
TOPIC = "orders"


def kafka_describe(broker):
    """The topic's overrides as Kafka's own ConfigCommand (kafka-configs --describe) prints them."""
    out = broker.tool("org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", broker.bootstrap, "--entity-type",
                      "topics", "--entity-name", METADATA_TOPIC, "--describe")
    # "Dynamic configs for topic __remote_log_metadata are:\n  cleanup.policy=compact sensitive=false synonyms={...}"
    configs = {}
    for line in out.splitlines()[1:]:
        name, _, rest = line.strip().partition("=")
        if name:
            configs[name] = rest.split(" sensitive=")[0]
    return configs


def run_json(capsys, *argv):
    capsys.readouterr()
    assert cli.main([argv[0], "--json", *argv[1:]]) == 0
    return json.loads(capsys.readouterr().out)


def run_tool(capsys, broker, *argv):
    """The tool in-process: (exit code, stdout)."""
    capsys.readouterr()
    rc = migration.main(["--bootstrap-server", broker.bootstrap, "--no-progress", *argv])
    return rc, capsys.readouterr().out


def level_records(recs):
    return Counter((p, v) for p, _, k, v in recs if k == rlmeta.LEVEL_RECORD_KEY)


def test_migration_end_to_end_on_a_real_broker(broker, capsys):
    # ---- a real null-key history, written by stock TopicBasedRemoteLogMetadataManager -------
    c = Cluster(broker.bootstrap)
    c.admin.create_topics({TOPIC: {"num_partitions": 2, "replication_factor": 1, "configs": {
        "remote.storage.enable": "true", "internal.segment.bytes": "16384", "local.retention.bytes": "16384",
        "segment.index.bytes": "4096", "retention.ms": "3600000"}}}, wait_for_metadata=True)
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", batch_size=4096, linger_ms=0)
    for i in range(300):
        producer.send(TOPIC, value=b"x" * 512, partition=i % 2)
    producer.flush()
    producer.close()
    wait("remote copies", lambda: broker.journal().count("COPY ") >= 6)
    wait_metadata_settled(broker.bootstrap)
    before = records(broker.bootstrap)
    assert before and all(k is None for _, _, k, _ in before)
    say(capsys, f"history: {len(before)} null-key records from {broker.journal().count('COPY ')} remote copies")

    # rlmeta reads the live topic as it reads the broker's own files.
    live = run_json(capsys, "scan", "--no-progress", "--bootstrap-server", broker.bootstrap)
    assert live["total"]["records"] == live["total"]["nullKey"] == len(before)
    files = run_json(capsys, "scan", str(broker.dir / "data"))
    assert files["total"] == live["total"]
    for sub in ("inspect", "simulate", "profile"):
        extra = ["--months", "1", "--upload-rate", "10GB", "--topic-configs"] if sub == "simulate" else []
        doc = run_json(capsys, sub, "--no-progress", "--bootstrap-server", broker.bootstrap, *extra)
        assert doc["partitions"]
        if sub == "simulate":  # the stock topic's own configs: delete, keep forever; nothing is lost
            assert doc["config"]["cleanup_policy"] == "delete" and doc["config"]["retention_ms"] == -1
            assert all(m["kept"] == p["records"] and not m["lostLiveSegments"] for p in doc["partitions"] for m in p["moments"])

    # ---- the check fails while null keys remain, naming each one ------------------------------
    props = broker.dir / "client.properties"
    props.write_text("# the Admin/Consumer client's configs\nsecurity.protocol=PLAINTEXT\nclient.id=rlmeta-migration-test\n")
    out = tool(broker, "--check", "--command-config", str(props))
    assert out.returncode == 1 and "no kafka-python equivalent" not in out.stderr
    assert f"❌ VALIDATION FAILED: Found {len(before)} message(s) with null keys." in out.stdout
    assert out.stdout.count("⚠️  Found message with null key at partition=") == len(before)
    assert "Cannot upgrade to version 2: null-key messages found in __remote_log_metadata" in out.stderr

    # ---- level 1 is refused: retention shorter than the tiered topic's, then stock managers ---
    out = tool(broker, "--upgrade-to-v1", "--retention-ms", "600000")
    assert out.returncode == 1 and "needs at least 3601000 ms" in out.stderr, out.stderr
    out = tool(broker, "--upgrade-to-v1", "--retention-ms", "3601000")
    assert out.returncode == 1 and "broker 1" in out.stderr and STOCK_MANAGER in out.stderr, out.stderr
    assert kafka_describe(broker).get("cleanup.policy") in (None, "delete")
    assert records(broker.bootstrap) == before

    # ---- the tiered topic goes; the broker restarts naming the KIP-1266-capable manager ------
    c.admin.delete_topics([TOPIC])
    c.close()
    wait("remote deletions", lambda: broker.journal().count("DELETE ") >= broker.journal().count("COPY "))
    wait_metadata_settled(broker.bootstrap)
    broker.restart(**{"remote.log.storage.system.enable": "false", "remote.log.metadata.manager.class.name": CAPABLE})
    before = records(broker.bootstrap)

    # ---- 0 -> 1, killed after every action and run again -------------------------------------
    out, killed = until_complete(broker, "--upgrade-to-v1", "--retention-ms", "3600000", "--segment-ms", "600000")
    assert killed == 4, killed  # one config change and one level record per partition
    assert "✅ Upgrade to version 1 completed successfully!" in out.stdout
    assert "Current remote.log.metadata.version: 1" in out.stdout  # the last run found the move done
    after = records(broker.bootstrap)
    assert set(before) <= set(after), "a record was lost"
    assert level_records(after) == Counter({(p, b"1"): 1 for p in range(3)})
    assert {k: v for k, v in kafka_describe(broker).items() if k in ("cleanup.policy", "retention.ms", "min.compaction.lag.ms", "segment.ms")} == {
        "cleanup.policy": "compact,delete", "retention.ms": "3600000", "min.compaction.lag.ms": "3600000", "segment.ms": "600000"}

    # A second run with a short retention re-configures and writes nothing twice.
    rc, text = run_tool(capsys, broker, "--upgrade-to-v1", "--retention-ms", "15000", "--segment-ms", "5000")
    assert rc == 0 and "Expected deletion time: segment.ms + retention.ms = 0 + 0 = 0 days" in text
    assert level_records(records(broker.bootstrap)) == level_records(after)
    assert kafka_describe(broker)["retention.ms"] == "15000"

    # ---- the check fails while the null-key records have not expired -------------------------
    rc, text = run_tool(capsys, broker, "--check", "--upgrade-to-v2")
    assert rc == 1
    assert "Upgrade to V2: ENABLED" in text and "❌ VALIDATION FAILED" in text and "Estimated cleanup time:" in text
    assert "Total wait time for deletion: 20000ms (0 days)" in text

    # ---- retention expires them (and, at level 1, the level records too) ----------------------
    wait("null-key records to expire", lambda: not any(k is None for _, _, k, _ in records(broker.bootstrap)), 150)
    before = records(broker.bootstrap)

    # ---- 1 -> 2, killed after every action and run again -------------------------------------
    out, killed = until_complete(broker, "--check", "--upgrade-to-v2", "--auto-upgrade")
    assert killed == 4, (killed, out.stdout)
    assert "✅ VALIDATION PASSED: No null-key messages found." in out.stdout
    assert "✅ Successfully upgraded to remote.log.metadata.version=2!" in out.stdout
    after = records(broker.bootstrap)
    assert set(before) <= set(after), "a record was lost"
    assert level_records(after) - level_records(before) == Counter({(p, b"2"): 1 for p in range(3)})
    final = kafka_describe(broker)
    assert final.get("cleanup.policy") == "compact" and "retention.ms" not in final and "min.compaction.lag.ms" not in final, final

    # ---- idempotent: once more changes nothing; the level now reads 2 -------------------------
    again = tool(broker, "--check", "--upgrade-to-v2", "--auto-upgrade")
    assert again.returncode == 0 and "Current remote.log.metadata.version: 2" in again.stdout, again.stdout
    assert records(broker.bootstrap) == after
    say(capsys, f"migration: 0 -> 1 -> 2 on Kafka 4.4.0, 8 kills between actions, final configs {final}")
