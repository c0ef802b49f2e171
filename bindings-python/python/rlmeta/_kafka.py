"""A live cluster, through kafka-python 3.0.12: the host side of the operator tools.

Owns: connecting (``--bootstrap-server``, ``--command-config`` properties), reading every
partition of a topic to its end with a progress bar, topic and broker configs, finalized
features, and producing one record. Never: a decision about what it reads; the tools ask the
core for every verdict.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

METADATA_TOPIC = "__remote_log_metadata"

# Java client properties (--command-config) -> kafka-python's keyword arguments.
_DIRECT = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "client.id": "client_id",
    "request.timeout.ms": "request_timeout_ms",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
}
_INT = {"request_timeout_ms"}


def load_properties(path: str) -> Dict[str, str]:
    """A Java ``.properties`` file: ``key=value`` or ``key: value`` lines, ``#``/``!`` comments,
    backslash line continuations."""
    props: Dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        text = re.sub(r"\\\n\s*", "", fh.read())
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        m = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)", line)
        if m:
            props[m.group(1)] = m.group(2).strip()
    return props


def client_configs(bootstrap: str, props: Mapping[str, str]) -> Dict[str, Any]:
    """kafka-python keyword arguments for the properties a Java Admin/Consumer client would take.
    Properties with no kafka-python equivalent are reported on stderr and ignored."""
    conf: Dict[str, Any] = {"bootstrap_servers": bootstrap.split(",")}
    for key, value in props.items():
        if key == "bootstrap.servers":
            continue
        if key in _DIRECT:
            name = _DIRECT[key]
            conf[name] = int(value) if name in _INT else value
        elif key == "sasl.jaas.config":
            user = re.search(r'username\s*=\s*"([^"]*)"', value)
            password = re.search(r'password\s*=\s*"([^"]*)"', value)
            if user:
                conf["sasl_plain_username"] = user.group(1)
            if password:
                conf["sasl_plain_password"] = password.group(1)
        elif key == "ssl.endpoint.identification.algorithm":
            conf["ssl_check_hostname"] = value.strip().lower() == "https"
        elif key == "ssl.truststore.location" and value.endswith((".pem", ".crt")):
            conf["ssl_cafile"] = value
        else:
            print(f"warning: --command-config property {key} has no kafka-python equivalent; ignored", file=sys.stderr)
    return conf


@dataclass(frozen=True)
class ConsumedRecord:
    partition: int
    offset: int
    timestamp: int
    key: Optional[bytes]
    value: Optional[bytes]


class Cluster:
    """One cluster, its admin client made on first use."""

    def __init__(self, bootstrap: str, command_config: Optional[str] = None, timeout_ms: int = 60000) -> None:
        self.bootstrap = bootstrap
        self.timeout_ms = timeout_ms
        self.conf = client_configs(bootstrap, load_properties(command_config) if command_config else {})
        # Requests (and the first connection) give up within the tool's own timeout.
        self.conf.setdefault("request_timeout_ms", max(1000, timeout_ms))
        self._bootstrap_timeout_ms = max(1000, min(timeout_ms, 30000))
        self._admin: Any = None

    @property
    def admin(self) -> Any:
        if self._admin is None:
            from kafka import KafkaAdminClient

            self._admin = KafkaAdminClient(bootstrap_timeout_ms=self._bootstrap_timeout_ms, **self.conf)
        return self._admin

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    # ---- metadata -------------------------------------------------------------------------
    def partitions(self, topic: str = METADATA_TOPIC) -> Optional[List[int]]:
        """The topic's partition numbers, None if it does not exist."""
        if topic not in self.admin.list_topics():
            return None
        (desc,) = self.admin.describe_topics([topic])
        return sorted(p["partition_index"] for p in desc["partitions"])

    def brokers(self) -> List[int]:
        return sorted(b["broker_id"] for b in self.admin.describe_cluster()["brokers"])

    def topics(self) -> List[str]:
        return sorted(self.admin.list_topics())

    def _configs(self, resource_type: Any, names: List[str]) -> Dict[str, Dict[str, str]]:
        from kafka.admin import ConfigResource

        resources = [ConfigResource(resource_type, n) for n in names]
        result = self.admin.describe_configs(resources, config_filter="all")
        out: Dict[str, Dict[str, str]] = {}
        for by_name in result.values():
            for name, configs in by_name.items():
                out[str(name)] = {k: (v.get("value") if isinstance(v, dict) else v) for k, v in configs.items()}
        return out

    def topic_overrides(self, topic: str) -> Dict[str, str]:
        """The topic's dynamic overrides (configs set on the topic itself)."""
        from kafka.admin import ConfigResource, ConfigResourceType

        result = self.admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all")
        out: Dict[str, str] = {}
        for by_name in result.values():
            for configs in by_name.values():
                for k, v in configs.items():
                    if isinstance(v, dict) and str(v.get("config_source", "")).endswith("DYNAMIC_TOPIC_CONFIG"):
                        out[k] = v.get("value")
        return out

    def topic_configs(self, topics: List[str]) -> Dict[str, Dict[str, str]]:
        from kafka.admin import ConfigResourceType

        return self._configs(ConfigResourceType.TOPIC, topics)

    def broker_configs(self, brokers: List[int]) -> Dict[str, Dict[str, str]]:
        """Each broker's configs, read from that broker (describeConfigs on a BROKER resource)."""
        from kafka.admin import ConfigResourceType

        return self._configs(ConfigResourceType.BROKER, [str(b) for b in brokers])

    def alter_topic_configs(self, topic: str, configs: Mapping[str, Optional[str]]) -> None:
        """Sets each config (None: deletes the override), incrementally."""
        from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType

        ops = {k: (AlterConfigOp.DELETE, None) if v is None else (AlterConfigOp.SET, v) for k, v in configs.items()}
        result = self.admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs=ops)], incremental=True)
        for by_name in result.values():
            for name, status in by_name.items():
                if status != "OK":
                    raise RuntimeError(f"altering the configs of {name} failed: {status}")

    def features(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """(supported, finalized) features: name -> level range."""
        raw = self.admin.describe_features()
        supported: Dict[str, Any] = {}
        finalized: Dict[str, Any] = {}
        if "supported_features" in raw:
            return raw.get("supported_features") or {}, raw.get("finalized_features") or {}
        for name, d in raw.items():
            if isinstance(d, dict):
                if "supported" in d:
                    supported[name] = d["supported"]
                if "finalized" in d:
                    finalized[name] = d["finalized"]
        return supported, finalized

    def update_feature(self, name: str, level: int) -> None:
        result = self.admin.update_features({name: level})
        status = result.get(name)
        if status != "OK":
            raise RuntimeError(f"updating feature {name} to {level} failed: {status}")

    # ---- data -----------------------------------------------------------------------------
    def read(self, topic: str, partitions: List[int], progress: bool, desc: str = "Scanning") -> "Reader":
        return Reader(self, topic, partitions, progress, desc)

    def produce(self, topic: str, partition: int, key: Optional[bytes], value: Optional[bytes]) -> int:
        """Produces one record and waits for its acknowledgement; returns its offset."""
        from kafka import KafkaProducer

        producer = KafkaProducer(acks="all", **self.conf)
        try:
            meta = producer.send(topic, key=key, value=value, partition=partition).get(timeout=self.timeout_ms / 1000)
            producer.flush()
            return meta.offset
        finally:
            producer.close()


class Reader:
    """Reads partitions from their earliest offset to the end offset seen when reading started.
    Iterate it for records; afterwards ``read_to_end`` says which partitions were finished
    before the timeout, ``end_offsets`` where each stopped."""

    def __init__(self, cluster: Cluster, topic: str, partitions: List[int], progress: bool, desc: str) -> None:
        self.cluster, self.topic, self.partitions = cluster, topic, partitions
        self.progress, self.desc = progress, desc
        self.read_to_end: Dict[int, bool] = {p: False for p in partitions}
        self.end_offsets: Dict[int, int] = {}
        self.start_offsets: Dict[int, int] = {}
        self.bytes_read: Dict[int, int] = {p: 0 for p in partitions}

    def __iter__(self) -> Iterator[ConsumedRecord]:
        from kafka import KafkaConsumer, TopicPartition
        from tqdm import tqdm

        tps = [TopicPartition(self.topic, p) for p in self.partitions]
        consumer = KafkaConsumer(enable_auto_commit=False, group_id=None, **self.cluster.conf)
        try:
            consumer.assign(tps)
            ends = consumer.end_offsets(tps)
            starts = consumer.beginning_offsets(tps)
            self.end_offsets = {tp.partition: ends[tp] for tp in tps}
            self.start_offsets = {tp.partition: starts[tp] for tp in tps}
            pending = {tp for tp in tps if starts[tp] < ends[tp]}
            for tp in tps:
                if tp not in pending:
                    self.read_to_end[tp.partition] = True
            total = sum(ends[tp] - starts[tp] for tp in tps)
            consumer.seek_to_beginning(*tps)
            deadline = time.monotonic() + self.cluster.timeout_ms / 1000
            bar = tqdm(total=total, desc=self.desc, unit="rec", file=sys.stderr, disable=None if self.progress else True, leave=False)
            try:
                while pending and time.monotonic() < deadline:
                    polled = consumer.poll(timeout_ms=500, max_records=5000)
                    for tp, records in polled.items():
                        for r in records:
                            if r.offset >= ends[tp]:
                                continue
                            self.bytes_read[tp.partition] += len(r.key or b"") + len(r.value or b"")
                            yield ConsumedRecord(tp.partition, r.offset, r.timestamp, r.key, r.value)
                        bar.update(len(records))
                    for tp in list(pending):
                        if consumer.position(tp) >= ends[tp]:
                            pending.discard(tp)
                            self.read_to_end[tp.partition] = True
            finally:
                bar.close()
        finally:
            consumer.close()
