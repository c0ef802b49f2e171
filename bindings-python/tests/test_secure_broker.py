"""The operator tools on a secured Kafka 4.4.0 (kafka_secure_broker.py: SASL_SSL and mTLS,
StandardAuthorizer, allow.everyone.if.no.acl.found=false), one broker for the whole module.

- Every ``--command-config`` shape an operator writes (SCRAM-SHA-512 with a JKS, PKCS12, PEM-file
  and inline-PEM truststore; SCRAM-SHA-256; PLAIN; mTLS with a JKS keystore whose key has its own
  password, and with a PKCS12 keystore) runs ``--check`` and ``rlmeta scan --bootstrap-server``.
- Each command's least-privilege ACL set (docs/SECURITY.md): with exactly that set the command
  works; with any one ACL of it removed it exits 2 naming the missing operation and resource.
- Wrong credentials (SCRAM password, a client certificate the broker does not trust, a truststore
  without the broker's CA): exit 2, "authentication failed".
ACLs are created and deleted with kafka-python's Admin as the broker's own identity (the only
super user), and each change is waited for until the broker's authorizer reports it.
"""

import functools
import json
import logging
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import rlmeta
from rlmeta import cli, migration

sys.path.insert(0, str(Path(__file__).parent))
import kafka_broker  # noqa: E402
from kafka_secure_broker import STORE_PASSWORD, SecureBroker, command_configs  # noqa: E402

wait = functools.partial(kafka_broker.wait, limit=60, every=0.2)

missing = [t for t in ("java", "mvn", "openssl", "keytool") if not shutil.which(t)]
if missing:  # a test that needs a tool fails without it (never skips silently)
    raise RuntimeError(f"test_secure_broker.py needs {', '.join(missing)} on PATH")

T = "__remote_log_metadata"
REPO = Path(__file__).resolve().parents[2]
KEYED = next((REPO / "tests" / "fixtures" / "crafted" / "kip1266-keyed").glob("*"))
TOPIC = ("TOPIC", T)
CLUSTER = ("CLUSTER", "kafka-cluster")
# The least-privilege ACL sets, found by running each command against this broker (docs/SECURITY.md).
ACLS = {
    "scan": [("READ", TOPIC)],
    "check": [("READ", TOPIC), ("DESCRIBE_CONFIGS", TOPIC)],
    "simulate": [("READ", TOPIC), ("DESCRIBE_CONFIGS", TOPIC)],  # with --topic-configs
    "upgrade-to-v1": [("READ", TOPIC), ("WRITE", TOPIC), ("ALTER_CONFIGS", TOPIC), ("DESCRIBE_CONFIGS", CLUSTER)],
    "upgrade-to-v2": [("READ", TOPIC), ("WRITE", TOPIC), ("ALTER_CONFIGS", TOPIC)],  # only its success is tested
}
SHAPES = {  # shape -> (principal, user or None for mTLS, bootstrap attribute)
    "scram512-jks": ("User:checker", "checker", "sasl_bootstrap"),
    "scram512-p12": ("User:checker", "checker", "sasl_bootstrap"),
    "scram512-pem": ("User:checker", "checker", "sasl_bootstrap"),
    "scram512-pem-inline": ("User:checker", "checker", "sasl_bootstrap"),
    "scram256-pem": ("User:checker256", "checker256", "sasl_bootstrap"),
    "plain-jks": ("User:plainops", "plainops", "sasl_bootstrap"),
    "mtls-jks": ("User:CN=mtls-ops", None, "ssl_bootstrap"),
    "mtls-p12": ("User:CN=mtls-ops", None, "ssl_bootstrap"),
}


class Env:
    def __init__(self, broker, tmp):
        from kafka import KafkaAdminClient

        self.b, self.tmp = broker, tmp
        self.admin = KafkaAdminClient(**broker.admin_conf())
        self.templates = command_configs(broker, tmp)

    def config(self, shape, user=None, password=None):
        text = self.templates[shape].read_text()
        user = user or SHAPES[shape][1] or ""
        text = text.replace("{user}", user).replace("{password}", password or f"{user}-secret")
        f = self.tmp / f"{shape}-{user}-{abs(hash(password))}.properties"
        f.write_text(text)
        return str(f)

    def bootstrap(self, shape):
        return getattr(self.b, SHAPES[shape][2])

    # ---- the topic ----------------------------------------------------------------------------
    def reset_topic(self):
        """A fresh __remote_log_metadata (3 partitions, as a stock broker makes it) holding the
        KIP-1266-keyed fixture's records in partition 0; returns how many."""
        from kafka import KafkaProducer

        if T in self.admin.list_topics():
            self.admin.delete_topics([T])
            wait("the topic's deletion", lambda: T not in self.admin.list_topics())
        wait("the topic's creation", lambda: self._create())
        recs = [r for r in rlmeta.read_records(KEYED.joinpath("00000000000000000000.log").read_bytes())]
        p = KafkaProducer(acks="all", **self.b.admin_conf())
        for r in recs:
            p.send(T, key=r.key, value=r.value, partition=0)
        p.flush()
        p.close()
        self.tombstones = sum(r.value is None for r in recs)
        return len(recs)

    def _create(self):
        try:
            self.admin.create_topics({T: {"num_partitions": 3, "replication_factor": 1, "configs": {"retention.ms": "-1"}}},
                                     wait_for_metadata=True)
            return True
        except Exception:  # still being deleted
            return False

    # ---- ACLs ---------------------------------------------------------------------------------
    def _acl(self, principal, op, res):
        from kafka.admin import ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourcePattern, ResourceType

        return ACL(principal, "*", ACLOperation[op], ACLPermissionType.ALLOW,
                   ResourcePattern(ResourceType[res[0]], res[1], ACLResourcePatternType.LITERAL))

    def acls(self, principal):
        from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourcePatternFilter,
                                 ResourceType)

        got, err = self.admin.describe_acls(ACLFilter(principal, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                                      ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)))
        from kafka.errors import NoError

        assert err is None or err is NoError or isinstance(err, NoError), err
        return {(a.operation.name, (a.resource_pattern.resource_type.name, a.resource_pattern.resource_name)) for a in got}

    def grant_exactly(self, principal, wanted):
        """Leaves the principal holding exactly ``wanted``; waits until the authorizer says so."""
        wanted = set(wanted)
        have = self.acls(principal)
        if have - wanted:
            from kafka.admin import ACLFilter, ACLPermissionType, ResourcePatternFilter, ACLResourcePatternType, ResourceType, ACLOperation

            self.admin.delete_acls([ACLFilter(principal, "*", ACLOperation[op], ACLPermissionType.ALLOW,
                                              ResourcePatternFilter(ResourceType[r[0]], r[1], ACLResourcePatternType.LITERAL))
                                    for op, r in have - wanted])
        if wanted - have:
            result = self.admin.create_acls([self._acl(principal, op, r) for op, r in wanted - have])
            assert not result["failed"], result
        wait(f"{principal}'s ACLs", lambda: self.acls(principal) == wanted)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    b = SecureBroker()
    try:
        b.start()
        e = Env(b, tmp_path_factory.mktemp("command-configs"))
        e.records = e.reset_topic()
        for principal in {p for p, _, _ in SHAPES.values()}:
            e.grant_exactly(principal, ACLS["check"])
        yield e
        e.admin.close()
    finally:
        b.cleanup()


def run(capsys, command, bootstrap, config, *extra):
    """One command in-process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    if command in ("check", "upgrade-to-v1"):
        rc = migration.main(["--bootstrap-server", bootstrap, "--command-config", config, "--no-progress",
                             "--timeout-ms", "20000", f"--{command}", *extra])
    else:
        rc = cli.main([command, "--bootstrap-server", bootstrap, "--command-config", config, "--no-progress",
                       "--timeout-ms", "20000", "--json", *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("shape", list(SHAPES))
def test_each_command_config_shape_checks_and_scans(env, capsys, shape):
    cfg, bootstrap = env.config(shape), env.bootstrap(shape)
    rc, out, err = run(capsys, "check", bootstrap, cfg)
    assert rc == 0, (out[-1500:], err[-1500:])
    assert f"Total messages scanned: {env.records}" in out and "Messages with null keys: 0" in out
    assert "retention.ms=-1ms" in out  # the topic's configs were read
    rc, out, err = run(capsys, "scan", bootstrap, cfg)
    assert rc == 0, err[-1500:]
    doc = json.loads(out)
    assert doc["total"]["records"] == env.records and doc["total"]["nullKey"] == 0
    assert doc["total"]["tombstones"] == env.tombstones and doc["total"]["keyed"] == env.records - env.tombstones
    assert "warning" not in err, err


def _ops_named(op):
    """The operations a refusal of ``op`` may be reported under (Kafka's implied operations:
    READ/WRITE/ALTER_CONFIGS missing shows as the DESCRIBE/DESCRIBE_CONFIGS they imply)."""
    return {"READ": ("READ", "DESCRIBE"), "WRITE": ("WRITE",), "ALTER_CONFIGS": ("ALTER_CONFIGS", "DESCRIBE_CONFIGS"),
            "DESCRIBE_CONFIGS": ("DESCRIBE_CONFIGS",)}[op]


def _refused(capsys, command, op, res, rc, out, err):
    with capsys.disabled():
        print(f"\n  {command} without {op} on {res[0]}:{res[1]}: exit {rc}: {err.strip().splitlines()[-1] if err.strip() else ''}")
    assert rc == 2, (rc, out[-800:], err[-1500:])
    assert "Traceback" not in err and "authorization failed" in err, err
    assert any(f"lacks {o} on " in err for o in _ops_named(op)) and op in err, err
    assert f"{res[0].capitalize()}:{res[1]}" in err, err


def _store(env):
    """A local remote store (Aiven's layout) holding one segment's object that no metadata names
    (orphaned) and one object no layout names (unmatched)."""
    store = env.tmp / "store"
    seg = store / "orders-ASNFZ4mrze_-3LqYdlQyEA" / "0" / "00000000000000099999-c2VjdXJlLW9ycGhhbmVkAA.log"
    seg.parent.mkdir(parents=True, exist_ok=True)
    seg.write_bytes(b"x" * 100)
    (store / "README.txt").write_text("left by an operator")
    return str(store)


@pytest.mark.parametrize("command,principal,user", [
    ("scan", "User:scanner", "scanner"), ("inspect", "User:scanner", "scanner"), ("profile", "User:scanner", "scanner"),
    ("simulate", "User:scanner", "scanner"), ("reconcile", "User:scanner", "scanner"), ("check", "User:checker", "checker"),
])
def test_least_privilege_acls_of_reading_commands(env, capsys, command, principal, user):
    acls = ACLS["scan" if command in ("scan", "inspect", "profile", "reconcile") else command]
    # (a small projection: the default, 1TB/day over 12 months, takes minutes)
    extra = ["--topic-configs", "--months", "1", "--upload-rate", "20GB"] if command == "simulate" else []
    extra = ["--store", _store(env)] if command == "reconcile" else extra
    cfg = env.config("scram512-pem", user)
    env.grant_exactly(principal, acls)
    rc, out, err = run(capsys, command, env.b.sasl_bootstrap, cfg, *extra)
    assert rc == 0, err[-1500:]
    if command == "simulate":  # the live topic's own configs were modelled
        assert json.loads(out)["config"]["cleanup_policy"] == "delete" and json.loads(out)["partitions"][0]["records"] == env.records
    if command == "reconcile":  # the whole topic was read, and the store listed
        doc = json.loads(out)
        assert doc["metadata"].endswith(f"({env.records} records)"), doc["metadata"]
        assert doc["summary"]["unmatched"]["objects"] == 1 and doc["summary"]["orphaned"]["objects"] == 1, doc["summary"]
    for missing in acls:
        env.grant_exactly(principal, [a for a in acls if a != missing])
        _refused(capsys, command, *missing, *run(capsys, command, env.b.sasl_bootstrap, cfg, *extra))
    env.grant_exactly(principal, acls)


def test_reconcile_over_mtls(env, capsys):
    """``rlmeta reconcile`` reads the topic as an mTLS principal holding READ alone."""
    env.grant_exactly("User:CN=mtls-ops", ACLS["scan"])
    rc, out, err = run(capsys, "reconcile", env.b.ssl_bootstrap, env.config("mtls-p12"), "--store", _store(env))
    env.grant_exactly("User:CN=mtls-ops", ACLS["check"])
    assert rc == 0, err[-1500:]
    assert json.loads(out)["metadata"].endswith(f"({env.records} records)")


def test_least_privilege_acls_of_upgrade_to_v1(env, capsys):
    """Each refusal on a fresh topic (the upgrade is resumable: a partial run leaves actions done)."""
    principal, acls = "User:upgrader", ACLS["upgrade-to-v1"]
    cfg = env.config("scram512-jks", "upgrader")
    for missing in acls:
        env.reset_topic()
        env.grant_exactly(principal, [a for a in acls if a != missing])
        _refused(capsys, "--upgrade-to-v1", *missing, *run(capsys, "upgrade-to-v1", env.b.sasl_bootstrap, cfg))
    env.reset_topic()
    env.grant_exactly(principal, acls)
    rc, out, err = run(capsys, "upgrade-to-v1", env.b.sasl_bootstrap, cfg)
    assert rc == 0, (out[-1500:], err[-1500:])
    assert "Upgrade to version 1 completed successfully" in out
    from kafka.admin import ConfigResource, ConfigResourceType

    got = env.admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, T)], config_filter="all")["topic"][T]
    assert got["cleanup.policy"]["value"] == "compact,delete" and got["min.compaction.lag.ms"]["value"] == got["retention.ms"]["value"]
    # and the level records it wrote are read back by the mTLS principal's --check
    rc, out, err = run(capsys, "check", env.b.ssl_bootstrap, env.config("mtls-p12"))
    assert rc == 0 and "level record: 1" in out, (out[-1500:], err[-1500:])
    # --check --upgrade-to-v2 --auto-upgrade with exactly its set (no cluster ACL)
    env.grant_exactly(principal, ACLS["upgrade-to-v2"])
    rc, out, err = run(capsys, "check", env.b.sasl_bootstrap, cfg, "--upgrade-to-v2", "--auto-upgrade")
    assert rc == 0 and "Successfully upgraded to remote.log.metadata.version=2" in out, (out[-1500:], err[-1500:])
    got = env.admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, T)], config_filter="all")["topic"][T]
    assert got["cleanup.policy"]["value"] == "compact"
    env.records = env.reset_topic()


@pytest.mark.parametrize("shape,bad,command", [
    ("scram512-pem", "password", "check"),
    ("mtls-p12", "certificate", "scan"),
    ("scram512-pem", "truststore", "check"),
])
def test_wrong_credentials_exit_2_as_authentication_failures(env, capsys, caplog, shape, bad, command):
    if bad == "password":
        cfg = env.config(shape, "checker", "not-the-password")
    elif bad == "truststore":  # the client trusts another CA than the one that signed the broker's certificate
        d = env.tmp / "rogue-ca"
        d.mkdir(exist_ok=True)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "k.pem", "-out", "ca.pem", "-days", "1",
                        "-subj", "/CN=another-ca"], cwd=d, check=True, capture_output=True, timeout=60)
        cfg = env.config(shape)
        Path(cfg).write_text(Path(cfg).read_text().replace(env.b.store("ca.pem"), str(d / "ca.pem")))
    else:  # a certificate from a CA the broker does not trust
        d = env.tmp / "rogue"
        d.mkdir(exist_ok=True)
        for args in (["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "k.pem", "-out", "c.pem", "-days", "1", "-subj", "/CN=mtls-ops"],
                     ["pkcs12", "-export", "-in", "c.pem", "-inkey", "k.pem", "-out", "rogue.p12", "-passout", f"pass:{STORE_PASSWORD}"]):
            subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)
        cfg = env.config(shape)
        Path(cfg).write_text(Path(cfg).read_text().replace(env.b.store("mtls-ops.p12"), str(d / "rogue.p12")))
    t0 = time.monotonic()
    with caplog.at_level(logging.DEBUG, logger="kafka.net"):
        rc, out, err = run(capsys, command, env.bootstrap(shape), cfg)
    # The broker sends its refusal and closes at once (after 100 ms): the first connection must
    # see the refusal, not "socket disconnected" (kafka-python 3.0.12 dropped bytes read with the
    # close, and the tool retried until its timeout under load; rlmeta._kafka._data_before_eof).
    lost = [m for m in (r.getMessage() for r in caplog.records) if m.startswith("Bootstrap connection") and "socket disconnected" in m]
    assert not lost, lost
    with capsys.disabled():
        print(f"\n  wrong {bad} ({shape}), {command}: exit {rc} after {time.monotonic() - t0:.1f} s: {err.strip().splitlines()[-1]}")
    assert rc == 2 and "authentication failed" in err and "Traceback" not in err, (rc, err[-1500:])
