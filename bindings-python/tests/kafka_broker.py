"""A real single-node KRaft Apache Kafka 4.4.0 (broker + controller) with tiered storage, for the
operator-tool tests. The approach of tests/e2e/run-broker.sh: Kafka's jars from Maven Central
(tests/e2e/pom.xml, resolved once into tests/e2e/target/classpath.txt), the repo's file-backed
RemoteStorageManager, 127.0.0.1 only, free ports picked at run time, a small heap, bounded
waits, and always stopped (SIGTERM, then SIGKILL) by whoever started it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[2]
E2E = REPO / "tests" / "e2e"
CLASSPATH = E2E / "target" / "classpath.txt"
RSM_JAR = E2E / "target" / "rlmeta-e2e-0.1.0.jar"
STOCK_MANAGER = "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager"


def ensure_jars(timeout: int = 600) -> str:
    """Kafka 4.4.0's class path (tests/e2e/build-jar.sh builds the jar and resolves it when stale)."""
    subprocess.run([str(E2E / "build-jar.sh"), str(timeout)], check=True, timeout=timeout + 60)
    return CLASSPATH.read_text().strip()


def free_ports(n: int) -> List[int]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Broker:
    """One node; ``start`` formats on first use, ``restart`` keeps its data with new configs."""

    def __init__(self, workdir: Optional[Path] = None, metadata_partitions: int = 3) -> None:
        self.classpath = ensure_jars()
        self.dir = Path(workdir or tempfile.mkdtemp(prefix="rlmeta-py-broker."))
        self.port, self.controller_port = free_ports(2)
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.metadata_partitions = metadata_partitions
        self.proc: Optional[subprocess.Popen] = None
        self.formatted = False
        self.format_args: List[str] = []  # extra `kafka-storage format` arguments (e.g. --add-scram)
        (self.dir / "remote").mkdir(parents=True, exist_ok=True)
        (self.dir / "log4j2.properties").write_text(
            "status = warn\nappender.file.type = File\nappender.file.name = FILE\n"
            "appender.file.fileName = ${sys:rlmeta.log.file}\nappender.file.layout.type = PatternLayout\n"
            "appender.file.layout.pattern = [%d] %p %m (%c)%n\nrootLogger.level = INFO\n"
            "rootLogger.appenderRef.file.ref = FILE\n"
        )

    def properties(self, overrides: Dict[str, str]) -> str:
        p = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.dir / "data"),
            "metadata.log.dir": str(self.dir / "meta"),
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "false",
            "log.retention.check.interval.ms": "1000",
            "log.initial.task.delay.ms": "500",
            "file.delete.delay.ms": "1000",
            "remote.log.storage.system.enable": "true",
            "remote.log.storage.manager.class.name": "dev.rlmeta.e2e.FileRemoteStorageManager",
            "remote.log.storage.manager.class.path": str(RSM_JAR),
            "rsm.config.dir": str(self.dir / "remote"),
            "remote.log.metadata.manager.class.name": STOCK_MANAGER,
            "remote.log.metadata.manager.listener.name": "PLAINTEXT",
            "rlmm.config.remote.log.metadata.topic.num.partitions": str(self.metadata_partitions),
            "rlmm.config.remote.log.metadata.topic.replication.factor": "1",
            "rlmm.config.remote.log.metadata.topic.min.isr": "1",
            "remote.log.manager.task.interval.ms": "1000",
        }
        p.update(overrides)
        return "".join(f"{k}={v}\n" for k, v in p.items())

    def java(self, log_name: str, *args: str, heap: str = "256m") -> List[str]:
        return ["java", f"-Xmx{heap}", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}",
                f"-Drlmeta.log.file={self.dir / (log_name + '.log')}", "-cp", self.classpath, *args]

    def tool(self, main: str, *args: str, timeout: int = 60) -> str:
        """Runs one of Kafka's own command-line tools; returns its stdout."""
        out = subprocess.run(self.java("tool", main, *args), capture_output=True, text=True, timeout=timeout)
        if out.returncode != 0:
            raise RuntimeError(f"{main} {args} failed ({out.returncode}): {out.stderr[-2000:]}")
        return out.stdout

    def start(self, **overrides: str) -> None:
        props = self.dir / "server.properties"
        props.write_text(self.properties(overrides))
        if not self.formatted:
            cluster_id = self.tool("kafka.tools.StorageTool", "random-uuid").strip()
            self.tool("kafka.tools.StorageTool", "format", "--standalone", "--cluster-id", cluster_id, "--config", str(props),
                      *self.format_args)
            self.formatted = True
        log = self.dir / "server.log"
        if log.exists():
            log.unlink()
        self.proc = subprocess.Popen(
            self.java("server", "-Dlog4j2.shutdownHookEnabled=false", "kafka.Kafka", str(props), heap="768m"),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 90
        while "Kafka Server started" not in (log.read_text(errors="replace") if log.exists() else ""):
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker exited during startup: {log.read_text(errors='replace')[-3000:] if log.exists() else ''}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("broker did not start within 90 s")
            time.sleep(0.3)

    def stop(self, limit: float = 30) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)

    def restart(self, **overrides: str) -> None:
        self.stop()
        self.start(**overrides)

    def journal(self) -> str:
        j = self.dir / "remote" / "journal.txt"
        return j.read_text() if j.exists() else ""

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- what the broker tests share (conftest.py's ``broker`` fixture starts the broker) ---------


def wait(what: str, cond, limit: float = 90, every: float = 1.0) -> None:
    """Polls ``cond`` every ``every`` seconds until it is true; fails after ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {limit}s waiting for {what}")
        time.sleep(every)


def produce(broker: "Broker", topic: str, partition: int, records, compression: Optional[str]) -> None:
    """Each ``(key, value)`` into one partition of ``topic``, in small batches (2 KiB, 20 ms linger)
    of ``compression``, acknowledged by every replica."""
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", compression_type=compression,
                      batch_size=2048, linger_ms=20)
    for k, v in records:
        p.send(topic, key=k, value=v, partition=partition)
    p.flush()
    p.close()


def say(capsys, text: str) -> None:
    """Prints past pytest's capture (a test's figures, shown in make test's output)."""
    with capsys.disabled():
        print(text)


def metadata_records(bootstrap: str) -> list:
    """Every record of the metadata topic, read to its end: (partition, offset, key, value)."""
    from rlmeta._kafka import METADATA_TOPIC, Cluster

    c = Cluster(bootstrap, timeout_ms=30000)
    try:
        reader = c.read(METADATA_TOPIC, c.partitions(), progress=False)
        got = [(r.partition, r.offset, r.key, r.value) for r in reader]
        assert all(reader.read_to_end.values())
        return got
    finally:
        c.close()


def wait_metadata_settled(bootstrap: str, limit: float = 60) -> None:
    """Waits until the metadata topic holds records and two reads a second apart count the same."""
    last: list = [None]

    def settled() -> bool:
        now = len(metadata_records(bootstrap))
        done, last[0] = now == last[0] and now > 0, now
        return done

    wait("the metadata topic to settle", settled, limit)


def migration_tool(broker: "Broker", *args: str, kill_after: Optional[int] = None, timeout: int = 120):
    """The installed migration console script against ``broker``, as an operator runs it; with
    ``kill_after``, the tool kills itself (-9) after that many actions."""
    import sys

    from rlmeta import migration

    env = dict(os.environ)
    env.pop(migration.KILL_HOOK, None)
    if kill_after is not None:
        env[migration.KILL_HOOK] = str(kill_after)
    exe = Path(sys.executable).parent / "kafka-remote-log-metadata-migration"
    return subprocess.run([str(exe), "--bootstrap-server", broker.bootstrap, "--no-progress", *args],
                          capture_output=True, text=True, env=env, timeout=timeout)


def until_complete(broker: "Broker", *args: str, timeout: int = 120):
    """Runs the migration tool killed after its first action, again and again, then returns the
    first run that completed and how many were killed."""
    killed = 0
    for _ in range(10):
        out = migration_tool(broker, *args, kill_after=1, timeout=timeout)
        if out.returncode == 0:
            return out, killed
        assert out.returncode == -9, (out.returncode, out.stdout[-3000:], out.stderr[-2000:])
        killed += 1
    raise AssertionError("the tool never completed")


if __name__ == "__main__":  # a broker for a developer's hands: runs until Ctrl-C
    b = Broker()
    try:
        b.start()
        print(b.bootstrap, b.dir, flush=True)
        while True:
            time.sleep(1)
    finally:
        b.cleanup()
