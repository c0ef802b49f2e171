"""A live cluster, through kafka-python 3.0.12: the host side of the operator tools.

Owns: connecting (``--bootstrap-server``, ``--command-config`` properties), reading every
partition of a topic to its end with a progress bar (as records, or as the raw record batches a
Fetch returns, handed to a core accumulator without a Python object per record), topic and broker configs, finalized
features, and producing one record. Never: a decision about what it reads; the tools ask the
core for every verdict.
"""

from __future__ import annotations

import logging
import ssl
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from ._files import METADATA_TOPIC  # defined with the file readers: a file scan names it without this module
from ._security import AccessDenied, AuthenticationFailed, ClientSecurity, client_security, load_properties

__all__ = ["METADATA_TOPIC", "Cluster", "Reader", "ConsumedRecord", "client_configs", "load_properties",
           "AccessDenied", "AuthenticationFailed"]


TOPIC_RESOURCE = "Topic:" + METADATA_TOPIC
#: Bytes a raw Fetch asks for (of its one partition): 16 MiB, as the record reader's
#: ``max_partition_fetch_bytes`` (the default 1 MiB made a 578 MB topic 578 round trips).
FETCH_BYTES = 16 << 20


def client_configs(bootstrap: str, props: Mapping[str, str]) -> Dict[str, Any]:
    """kafka-python keyword arguments for a Java client's properties (see _security.py).
    A client key is written to a private temporary directory removed at interpreter exit."""
    return {"bootstrap_servers": bootstrap.split(","), **client_security(props).conf}


def _data_before_eof() -> None:
    """kafka-python 3.0.12's transports read a socket until it would block, and when that read
    ends at the peer's close they drop the bytes read before it (``_sock_recv`` returns them with
    the error, and ``_read_from_sock`` aborts without handing them on). A broker answers a failed
    SASL authentication and closes the connection together (after
    ``connection.failed.authentication.delay.ms``), so a client that reads both at once loses
    the error response, sees "socket disconnected", and retries until its bootstrap times out:
    an operator got a timeout instead of "authentication failed" when the machine was busy.
    This hands the bytes on first and reports the close at the next read (the socket stays
    readable at its end). Applied once to each transport class; a no-op where a read brings no
    bytes with the close."""
    from kafka.net import transport as T

    for cls in (T.KafkaTCPTransport, T.KafkaSSLTransport):
        recv = cls.__dict__.get("_sock_recv")
        if recv is None or getattr(recv, "_rlmeta_data_before_eof", False):
            continue

        def patched(self: Any, _recv: Callable[[Any], Tuple[bytes, Any]] = recv) -> Tuple[bytes, Any]:
            pending = self.__dict__.pop("_rlmeta_eof", None)
            if pending is not None:
                return b"", pending
            data, err = _recv(self)
            if err is not None and data:
                self._rlmeta_eof = err
                return data, None
            return data, err

        patched._rlmeta_data_before_eof = True  # type: ignore[attr-defined]
        setattr(cls, "_sock_recv", patched)


class _StopBootstrap(Exception):
    """Raised from kafka-python's own bootstrap loop to end it at the first refused credential."""


class _BootstrapFailures(logging.Handler):
    """kafka-python logs why a bootstrap connection failed, then retries until its timeout, even
    when the cluster refused the credentials or the TLS handshake. This keeps those failures and
    ends the loop at the first one: the warning is logged from inside the loop's ``except``, so an
    exception raised here fails the bootstrap (kafka-python 3.0.12, kafka/net/manager.py)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.failures: List[BaseException] = []
        self.stopped = False

    def emit(self, record: logging.LogRecord) -> None:
        for arg in record.args if isinstance(record.args, tuple) else ():
            if isinstance(arg, BaseException) and not isinstance(arg, _StopBootstrap) and _auth_failure(arg):
                self.failures.append(arg)
                if not self.stopped and record.name == "kafka.net.manager" and str(record.msg).startswith("Bootstrap connection to"):
                    self.stopped = True
                    raise _StopBootstrap(str(arg))


def _auth_failure(exc: BaseException) -> bool:
    import kafka.errors as E

    text = f"{type(exc).__name__} {exc}"
    return isinstance(exc, (E.SaslAuthenticationFailedError, ssl.SSLError)) or any(
        s in text for s in ("Authentication", "SSL", "certificate", "CERTIFICATE", "handshake"))


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
        self.security: ClientSecurity = client_security(load_properties(command_config) if command_config else {})
        self.conf: Dict[str, Any] = {"bootstrap_servers": bootstrap.split(","), **self.security.conf}
        # Requests (and the first connection) give up within the tool's own timeout.
        self.conf.setdefault("request_timeout_ms", max(1000, timeout_ms))
        self._bootstrap_timeout_ms = max(1000, min(timeout_ms, 30000))
        self._admin: Any = None

    @property
    def admin(self) -> Any:
        if self._admin is None:
            from kafka import KafkaAdminClient

            self._admin = self.connect(lambda: KafkaAdminClient(bootstrap_timeout_ms=self._bootstrap_timeout_ms, **self.conf))
        return self._admin

    def connect(self, make: Callable[[], Any]) -> Any:
        """Makes a client; a bootstrap that failed on credentials or TLS is an AuthenticationFailed."""
        import kafka.errors as E

        _data_before_eof()
        watch = _BootstrapFailures()
        loggers = [logging.getLogger(n) for n in ("kafka.net.manager", "kafka.net.connection", "kafka.client_async")]
        for lg in loggers:
            lg.addHandler(watch)
        try:
            return make()
        except Exception as e:
            if watch.failures and (watch.stopped or isinstance(e, (E.KafkaTimeoutError, getattr(E, "NoBrokersAvailable", E.KafkaTimeoutError)))):
                f = watch.failures[-1]
                raise AuthenticationFailed(f"authentication failed connecting to {self.bootstrap} "
                                           f"(security.protocol={self.conf.get('security_protocol')}"
                                           f"{', sasl.mechanism=' + self.conf['sasl_mechanism'] if 'sasl_mechanism' in self.conf else ''}): "
                                           f"{type(f).__name__}: {f}") from e
            raise
        finally:
            for lg in loggers:
                lg.removeHandler(watch)

    def denied(self, exc: BaseException, operation: str, resource: str, request: str) -> BaseException:
        """An AccessDenied for a kafka-python authorization error, else the error itself."""
        import kafka.errors as E

        if isinstance(exc, E.AuthorizationError):
            return AccessDenied(operation, resource, request, type(exc).__name__)
        return exc

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        self.security.close()

    # ---- metadata -------------------------------------------------------------------------
    def partitions(self, topic: str = METADATA_TOPIC) -> Optional[List[int]]:
        """The topic's partition numbers, None if it does not exist."""
        import kafka.errors as E

        (desc,) = self.admin.describe_topics([topic])
        err = E.for_code(desc.get("error_code") or 0)
        if err is E.UnknownTopicOrPartitionError:
            return None
        if issubclass(err, E.AuthorizationError):
            raise AccessDenied("DESCRIBE", f"Topic:{topic}", "Metadata", err.__name__)
        if err is not E.NoError:
            raise err(f"describing topic {topic}")
        return sorted(p["partition_index"] for p in desc["partitions"])

    def brokers(self) -> List[int]:
        return sorted(b["broker_id"] for b in self.admin.describe_cluster()["brokers"])

    def topics(self) -> List[str]:
        return sorted(self.admin.list_topics())

    def _configs(self, resource_type: Any, names: List[str]) -> Dict[str, Dict[str, str]]:
        from kafka.admin import ConfigResource

        resources = [ConfigResource(resource_type, n) for n in names]
        result = self._describe_configs(resources)
        out: Dict[str, Dict[str, str]] = {}
        for by_name in result.values():
            for name, configs in by_name.items():
                out[str(name)] = {k: (v.get("value") if isinstance(v, dict) else v) for k, v in configs.items()}
        return out

    def _describe_configs(self, resources: List[Any]) -> Dict[str, Dict[str, Dict[str, Any]]]:
        """kafka-python's describe_configs, but a resource's error (which kafka-python 3.0.12
        drops, returning no configs) is raised: an AccessDenied naming DESCRIBE_CONFIGS."""
        import kafka.errors as E

        admin = self.admin

        async def send() -> List[Any]:
            brokers, others = admin._group_config_resources(resources)
            responses = []
            for broker_id, rs in brokers.items():
                responses.append(await admin._manager.send(admin._describe_configs_request(rs, False), node_id=broker_id))
            if others:
                responses.append(await admin._manager.send(admin._describe_configs_request(others, False)))
            return responses

        responses = admin._manager.run(send)
        for response in responses:
            for r in response.results:
                err = E.for_code(r.error_code)
                if err is E.NoError:
                    continue
                kind = "Cluster:kafka-cluster" if r.resource_type == 4 else f"Topic:{r.resource_name}"
                if issubclass(err, E.AuthorizationError):
                    raise AccessDenied("DESCRIBE_CONFIGS", kind, "DescribeConfigs", err.__name__)
                raise err(f"describing the configs of {kind}: {r.error_message or ''}")
        return admin._describe_configs_process_responses(responses, "all")

    def topic_overrides(self, topic: str) -> Dict[str, str]:
        """The topic's dynamic overrides (configs set on the topic itself)."""
        from kafka.admin import ConfigResource, ConfigResourceType

        result = self._describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
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
        result = self.admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs=ops)], incremental=True,
                                          raise_on_unknown=False)
        for by_name in result.values():
            for name, status in by_name.items():
                if "AuthorizationFailed" in str(status):
                    raise AccessDenied("ALTER_CONFIGS", f"Topic:{name}", "IncrementalAlterConfigs", str(status))
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
        if "AuthorizationFailed" in str(status):
            raise AccessDenied("ALTER", "Cluster:kafka-cluster", "UpdateFeatures", str(status))
        if status != "OK":
            raise RuntimeError(f"updating feature {name} to {level} failed: {status}")

    # ---- data -----------------------------------------------------------------------------
    def read(self, topic: str, partitions: List[int], progress: bool, desc: str = "Scanning") -> "Reader":
        return Reader(self, topic, partitions, progress, desc)

    def produce(self, topic: str, partition: int, key: Optional[bytes], value: Optional[bytes]) -> int:
        """Produces one record and waits for its acknowledgement; returns its offset."""
        from kafka import KafkaProducer

        producer = self.connect(lambda: KafkaProducer(acks="all", **self.conf))
        try:
            meta = producer.send(topic, key=key, value=value, partition=partition).get(timeout=self.timeout_ms / 1000)
            producer.flush()
            return meta.offset
        except Exception as e:
            if "ClusterAuthorizationFailed" in str(e):  # kafka-python wraps InitProducerId's refusal in a KafkaError
                raise AccessDenied("WRITE", f"Topic:{topic}", "InitProducerId of an idempotent producer",
                                   "ClusterAuthorizationFailedError; Kafka lets a principal holding WRITE on any topic, "
                                   "or IDEMPOTENT_WRITE on the cluster, start one") from e
            raise self.denied(e, "WRITE", f"Topic:{topic}", "Produce") from e
        finally:
            producer.close()


class Reader:
    """Reads partitions from their earliest offset to the end offset seen when reading started, one
    partition after the other with one consumer, so a caller can fold a partition and drop it before
    the next (every record of a user partition lives in one metadata partition).

    Iterate it for records (partition by partition), or :meth:`each_partition` for one iterator per
    partition. The timeout bounds the wait for data (reset by every poll that brings records), not
    the length of the read: a 10 M-record topic is read to its end. Afterwards ``read_to_end`` says
    which partitions were finished, ``end_offsets`` where each stopped. Progress (records, rate, ETA)
    goes to stderr."""

    def __init__(self, cluster: Cluster, topic: str, partitions: List[int], progress: bool, desc: str) -> None:
        self.cluster, self.topic, self.partitions = cluster, topic, partitions
        self.progress, self.desc = progress, desc
        self.read_to_end: Dict[int, bool] = {p: False for p in partitions}
        self.end_offsets: Dict[int, int] = {}
        self.start_offsets: Dict[int, int] = {}
        self.bytes_read: Dict[int, int] = {p: 0 for p in partitions}

    def __iter__(self) -> Iterator[ConsumedRecord]:
        for _, records in self.each_partition():
            yield from records

    @contextmanager
    def _opened(self, **consumer_options: Any) -> Iterator[Tuple[Any, List[Any], Dict[Any, int], Dict[Any, int], Any]]:
        """A consumer of the topic, its partitions, their start and end offsets (kept as
        ``start_offsets`` and ``end_offsets``) and a progress bar in records: closed on exit."""
        from kafka import KafkaConsumer, TopicPartition
        from tqdm import tqdm

        tps = [TopicPartition(self.topic, p) for p in self.partitions]
        consumer = self.cluster.connect(lambda: KafkaConsumer(enable_auto_commit=False, group_id=None,
                                                              **consumer_options, **self.cluster.conf))
        try:
            try:
                ends = consumer.end_offsets(tps)
                starts = consumer.beginning_offsets(tps)
            except Exception as e:
                raise self.cluster.denied(e, "READ", f"Topic:{self.topic}", "ListOffsets") from e
            self.end_offsets = {tp.partition: ends[tp] for tp in tps}
            self.start_offsets = {tp.partition: starts[tp] for tp in tps}
            total = sum(max(0, ends[tp] - starts[tp]) for tp in tps)
            bar = tqdm(total=total, desc=self.desc, unit="rec", file=sys.stderr, disable=None if self.progress else True,
                       leave=False, smoothing=0.05)
            try:
                yield consumer, tps, starts, ends, bar
            finally:
                bar.close()
        finally:
            consumer.close()

    def each_partition(self) -> Iterator[Tuple[int, Iterator[ConsumedRecord]]]:
        """``(partition, records)`` for each partition in turn; read each ``records`` to its end (or
        drop it) before taking the next pair."""
        # one partition is assigned at a time: fetch up to 16 MiB of it a round trip (the default 1 MiB
        # made a 578 MB topic 578 round trips one after the other)
        with self._opened(max_partition_fetch_bytes=FETCH_BYTES) as (consumer, tps, starts, ends, bar):
            for tp in tps:
                yield tp.partition, self._partition(consumer, tp, starts[tp], ends[tp], bar)

    def each_partition_raw(self, make: Callable[[int, int, int], Any]) -> Iterator[Tuple[int, Any]]:
        """``(partition, scan)`` for each partition in turn, where ``scan = make(partition, start,
        end)`` is a core accumulator (``push(bytes)``, ``next_offset()``, ``done()``: the
        migration's ``rlmeta._native.PartitionScan``, the operator tools' models read through a
        ``_native.FetchWindow``, ``_native.FetchedLog``) fed the raw record batches of Fetch responses, from the
        partition's earliest offset until it has read every record before the end offset seen
        when reading started. A batch cut at a response's end is fetched again from the
        accumulator's next offset; the host never decodes a record. ``read_to_end``, the timeout
        (reset whenever data arrives) and the progress bar (in offsets) are as for
        :meth:`each_partition`."""
        with self._opened() as (consumer, tps, starts, ends, bar):
            consumer.assign(tps)  # the topic's leaders are kept in the client's metadata
            for tp in tps:
                scan = make(tp.partition, starts[tp], ends[tp])
                self._partition_raw(consumer, tp, starts[tp], ends[tp], scan, bar)
                yield tp.partition, scan

    def _partition_raw(self, consumer: Any, tp: Any, start: int, end: int, scan: Any, bar: Any) -> None:
        import kafka.errors as E

        wait = self.cluster.timeout_ms / 1000
        deadline = time.monotonic() + wait
        floor = start  # the log's start: it moves on when retention deletes what was not read yet
        while not scan.done() and time.monotonic() < deadline:
            before = scan.next_offset()
            offset = max(before, floor)
            err, data = self._fetch(consumer, tp, offset)
            if err is E.NoError:
                if data:
                    deadline = time.monotonic() + wait  # data came: the wait starts again
                    self.bytes_read[tp.partition] += len(data)
                    scan.push(data)
                    bar.update(min(scan.next_offset(), end) - min(before, end))
            elif err is E.OffsetOutOfRangeError:
                floor = max(floor, consumer.beginning_offsets([tp])[tp])
                if floor >= end:
                    break  # deleted before it was read: nothing before the end is left
            elif issubclass(err, E.AuthorizationError):
                raise AccessDenied("READ", f"Topic:{self.topic}", "Fetch", err.__name__)
            elif getattr(err, "retriable", False) or issubclass(err, E.InvalidMetadataError):
                self._refresh_leaders(consumer)  # a new leader, an election under way
                time.sleep(0.1)
            else:
                raise err(f"fetching {tp.topic}-{tp.partition} at offset {offset}")
        self.read_to_end[tp.partition] = bool(scan.done()) or floor >= end

    @staticmethod
    def _refresh_leaders(consumer: Any) -> None:
        future = consumer._cluster.request_update()
        consumer._net.run(consumer._manager.wait_for, future, None)

    def _fetch(self, consumer: Any, tp: Any, offset: int) -> Tuple[Any, Optional[bytes]]:
        """One Fetch (v4-v12: topic names, KIP-74 "at least one whole batch") of one partition to
        its leader, no fetch session: ``(error class, raw record batches)``."""
        import kafka.errors as E
        from kafka.protocol.consumer import FetchRequest

        manager = consumer._manager
        node = manager.cluster.leader_for_partition(tp)
        if node is None or node == -1:
            return E.LeaderNotAvailableError, None
        epoch = manager.cluster.leader_epoch_for_partition(tp)
        part = FetchRequest.FetchTopic.FetchPartition(
            partition=tp.partition, current_leader_epoch=-1 if epoch is None else epoch, fetch_offset=offset,
            last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=FETCH_BYTES)
        request = FetchRequest(
            replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=FETCH_BYTES, isolation_level=0, session_id=0,
            session_epoch=-1, topics=[FetchRequest.FetchTopic(topic=tp.topic, partitions=[part])],
            forgotten_topics_data=[], rack_id="", min_version=4, max_version=12)

        async def send() -> Any:
            return await manager.send(request, node_id=node)

        try:
            response = manager.run(send)
        except (E.KafkaConnectionError, E.NodeNotReadyError, E.RequestTimedOutError, E.KafkaTimeoutError):
            return E.NodeNotReadyError, None
        for t in response.responses:
            for p in t.partitions:
                if p.partition_index == tp.partition:
                    records = p.records
                    return E.for_code(p.error_code), (bytes(records) if records else None)
        return E.UnknownTopicOrPartitionError, None

    def _partition(self, consumer: Any, tp: Any, start: int, end: int, bar: Any) -> Iterator[ConsumedRecord]:
        if start >= end:
            self.read_to_end[tp.partition] = True
            return
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        wait = self.cluster.timeout_ms / 1000
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                polled = consumer.poll(timeout_ms=500, max_records=5000)
            except Exception as e:
                raise self.cluster.denied(e, "READ", f"Topic:{self.topic}", "Fetch") from e
            for records in polled.values():
                if records:
                    deadline = time.monotonic() + wait  # data came: the wait starts again
                for r in records:
                    if r.offset >= end:
                        continue
                    self.bytes_read[tp.partition] += len(r.key or b"") + len(r.value or b"")
                    yield ConsumedRecord(tp.partition, r.offset, r.timestamp, r.key, r.value)
                bar.update(len(records))
            if consumer.position(tp) >= end:
                self.read_to_end[tp.partition] = True
                return
