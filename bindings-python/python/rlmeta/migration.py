"""``kafka-remote-log-metadata-migration``: KIP-1266's tool that moves ``__remote_log_metadata``
from append-only (level 0) to compacted (level 2), with the KIP's flags, help texts and output.

Beyond the KIP (each refusal is the core's verdict; this module only reads the cluster, prints
and writes):
- ``--upgrade-to-v1`` is refused while any broker's ``remote.log.metadata.manager.class.name`` is
  not KIP-1266-capable (a stock broker's metadata consumer stops at the first tombstone or level
  record), naming the brokers; and for a ``--retention-ms`` shorter than the tiered topics' own
  retention needs (it would delete metadata of live segments), with the safe value, unless
  ``--force``.
- ``--check`` also reports, per partition, null-key records (offsets, timestamps), tombstones
  and undecodable values.
- Every step is idempotent and resumable: each action (one config change, one level record per
  partition, one feature update) is skipped when already done, so a run killed between any two
  actions completes when run again. ``RLMETA_MIGRATION_KILL_AFTER_ACTIONS=N`` (a test hook) makes
  the process SIGKILL itself right after its N-th action.
- The level is set where the cluster keeps it: the finalized feature where the cluster supports
  ``remote.log.metadata.version``, else the level record in every metadata partition
  (docs/FEATURE-LEVEL.md).
- Progress bars (tqdm, stderr) on every scan; off when stderr is not a terminal or with
  ``--no-progress``.

The backfill path (``--backfill``, rlmeta's extension; docs/MIGRATION.md) does not wait for
retention, so it also works when a tiered topic keeps data for ever (``retention.ms=-1``), where
the KIP's path cannot finish without ``--force``:
- ``--upgrade-to-v1 --backfill`` refuses stock brokers as the KIP's step does, writes the level-1
  records and changes no topic config (nothing expires, the cleaner does not run); at level >= 1
  the broker plugin on each partition's leader re-writes every live segment known only from
  null-key records under its KIP-1266 keys.
- ``--check --backfill`` reports, per metadata partition, the live segments whose current state
  keyed records do not hold yet (the core's ``keyed::verify_keyed``), with the offsets of their
  records; exit 0 once none remain.
- ``--upgrade-to-v2 --backfill`` does the level-1 step if it is not done, waits up to
  ``--backfill-wait-ms`` for the backfill, verifies from a fresh read of the topic, prints the
  failures and refuses while any remain, else sets level 2's configs (``cleanup.policy=compact``)
  and records. No ``--force``: the verification cannot be overridden.

Exit status: 0 on success; 2 when ``--command-config`` cannot be honoured, the cluster refuses the
credentials, or its authorizer refuses an operation (docs/SECURITY.md lists each command's ACLs);
1 on any other failure (bad usage included).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from . import _native
from ._errors import describe
from ._feature import (
    DEFAULT_V1_RETENTION_MS,
    DEFAULT_V1_SEGMENT_MS,
    FEATURE_NAME,
    MetadataLevel,
    PartitionLevel,
    check_backfill_v1,
    check_v1_retention_configs,
    cleanup_timing,
    expected_deletion_ms,
    kip1266_capable_managers,
    level_move,
    level_record,
    manager_is_kip1266_capable,
    readiness,
    write_level,
    KeyedVerdict,
    keyed_verdict,
)
from ._kafka import METADATA_TOPIC, Cluster
from ._security import AccessDenied, AuthenticationFailed, CommandConfigError

PROG = "kafka-remote-log-metadata-migration"
DAY_MS = 86_400_000
MANAGER_CONFIG = "remote.log.metadata.manager.class.name"
KILL_HOOK = "RLMETA_MIGRATION_KILL_AFTER_ACTIONS"

RETENTION_HELP = (
    "Retention period in milliseconds for the __remote_log_metadata topic when upgrading to version 1 "
    "(default: 1209600000, which is 14 days). This parameter is CRITICAL: it serves two purposes: "
    "1) retention.ms: Ensures old-format (null-key) messages expire and are deleted after this period. "
    "2) min.compaction.lag.ms: Set to the same value to prevent log cleaner from compacting before old "
    "messages expire. Once the topic cleanup policy is changed to 'compact,delete', the log cleaner could "
    "immediately delete null-key messages during compaction. By setting both retention.ms and "
    "min.compaction.lag.ms to the same value, we ensure null-key messages expire naturally via retention "
    "before the log cleaner begins compacting. This prevents data loss during the migration period. "
    "Used with --upgrade-to-v1. (default: 1209600000)"
)
SEGMENT_HELP = (
    "Segment rolling time in milliseconds for the __remote_log_metadata topic when upgrading to version 1 "
    "(default: 86400000, which is 1 day). This controls how frequently new log segments are created. "
    "Smaller values create more segments, which can improve compaction efficiency but increase overhead. "
    "Used with --upgrade-to-v1. (default: 86400000)"
)


class UsageError(Exception):
    pass


class Failure(Exception):
    """A refusal or a failed step: its message goes to stderr and the tool exits 1."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> "NoReturn":  # type: ignore[name-defined]  # noqa: F821
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        # The KIP's help is laid out 160 columns wide with the texts from column 25.
        formatter_class=lambda prog: argparse.HelpFormatter(prog, max_help_position=25, width=160),
        description="Tool to manage remote.log.metadata.version upgrades and migrate the __remote_log_metadata topic.",
    )
    p._optionals.title = "optional arguments"
    p.add_argument(
        "--bootstrap-server", required=True,
        help="REQUIRED: A comma-separated list of host:port pairs to use for establishing the connection to the Kafka cluster.",
    )
    p.add_argument("--command-config", help="Property file containing configs to be passed to Admin/Consumer Client.")
    p.add_argument(
        "--upgrade-to-v1", action="store_true",
        help="Upgrade from remote.log.metadata.version=0 to version 1, and configure topic with min.compaction.lag.ms. (default: false)",
    )
    p.add_argument(
        "--check", action="store_true",
        help="Check if the topic contains any messages with null keys. This is required before upgrading to version 2. (default: false)",
    )
    p.add_argument(
        "--upgrade-to-v2", action="store_true",
        help="Upgrade to remote.log.metadata.version=2 after validation. Requires --check and --auto-upgrade. (default: false)",
    )
    p.add_argument(
        "--auto-upgrade", action="store_true",
        help="Automatically upgrade to version 2 if validation passes. Must be used with --check --upgrade-to-v2. "
        "This is a safety flag to prevent accidental upgrades. (default: false)",
    )
    p.add_argument(
        "--force", action="store_true",
        help="Force upgrade to version 2 even if null-key messages are found. Use with caution: null-key messages "
        "will be lost during compaction. (default: false)",
    )
    p.add_argument("--retention-ms", type=int, default=DEFAULT_V1_RETENTION_MS, help=RETENTION_HELP)
    p.add_argument("--segment-ms", type=int, default=DEFAULT_V1_SEGMENT_MS, help=SEGMENT_HELP)
    p.add_argument(
        "--timeout-ms", type=int, default=60000,
        help="Maximum time in milliseconds to wait while checking for messages (default: 60000). Used with --check. (default: 60000)",
    )
    p.add_argument(
        "--no-progress", action="store_true",
        help="Do not draw progress bars on stderr (they are drawn only when stderr is a terminal). (default: false)",
    )
    p.add_argument(
        "--backfill", action="store_true",
        help="rlmeta extension: migrate without waiting for retention. With --upgrade-to-v1: level 1 without changing the "
        "topic's configs (nothing expires); the broker plugin re-writes every live segment known only from null-key records "
        "under its keys. With --check: report the live segments not yet held by keyed records. With --upgrade-to-v2 (no "
        "--check needed): verify from a fresh read of the topic that keyed records hold every live segment, refuse if not, "
        "else upgrade to version 2. (default: false)",
    )
    p.add_argument(
        "--backfill-wait-ms", type=int, default=0,
        help="With --upgrade-to-v2 --backfill: how long to wait for the backfill to complete before refusing, re-reading "
        "the topic every 5 s. (default: 0)",
    )
    return p


def out(line: str = "") -> None:
    """A line on stdout that never lands in the middle of a progress bar."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stdout)


def days(ms: int) -> int:
    return ms // DAY_MS


class Actions:
    """Counts the tool's actions (each one a cluster change); the test hook kills after the N-th."""

    def __init__(self) -> None:
        self.done = 0
        hook = os.environ.get(KILL_HOOK, "")
        self.kill_after = int(hook) if hook.isdigit() else None

    def did(self) -> None:
        self.done += 1
        if self.kill_after is not None and self.done >= self.kill_after:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)


#: Null-key records (and undecodable values) named one by one per partition by --check, and segments
#: not held by keyed records (and superseded attempts) by --check --backfill; the rest are counted,
#: null keys with their offset and timestamp ranges (a stock topic holds millions of each).
NAMED_PER_PARTITION = 20


@dataclass
class PartitionScan:
    """What one metadata partition's read found, in counts and ranges (the core's
    ``_native.PartitionScan`` counts them): never a list per record."""

    partition: int
    messages: int = 0
    null_keys: int = 0
    #: First and last null-key offsets, and the range of their timestamps.
    null_offsets: Optional[Tuple[int, int]] = None
    null_timestamps: Optional[Tuple[int, int]] = None
    tombstones: int = 0
    undecodable: int = 0
    level: Optional[MetadataLevel] = None
    invalid_level: Optional[str] = None
    read_to_end: bool = False


@dataclass
class TopicState:
    partitions: Dict[int, PartitionScan]
    configs: Dict[str, str]
    feature_supported: bool
    finalized_level: Optional[int]

    def partition_levels(self) -> List[PartitionLevel]:
        return [PartitionLevel(s.read_to_end, s.level) for _, s in sorted(self.partitions.items())]

    def level(self) -> MetadataLevel:
        """The core's write level, the rule the broker plugin writes with (a feature the brokers
        support but nobody finalized is "none finalized": the level records and policy decide)."""
        level = write_level(self.finalized_level, self.partition_levels(), self.configs.get("cleanup.policy"))
        if level is None:
            raise Failure(f"The level of {METADATA_TOPIC} is unknown: a partition is not read to its end, or its "
                          "cleanup.policy could not be read.")
        return level


def scan_topic(cluster: Cluster, progress: bool, report_null_keys: bool,
               each_partition: Optional[Callable[[int, KeyedVerdict], None]] = None) -> TopicState:
    """Reads the metadata topic one partition at a time and keeps counts per partition: the raw
    record batches of each fetch go to the core (``_native.PartitionScan``), which decodes,
    replays and classifies every record; Python handles no record. With ``each_partition``, the
    core also keeps the partition's records and hands ``each_partition`` its backfill verdict
    (``keyed::verify_keyed``) once that partition is read, then drops them: memory is bounded by
    one metadata partition, not the topic (every record of a user partition lives in one metadata
    partition)."""
    parts = cluster.partitions(METADATA_TOPIC)
    if parts is None:
        raise Failure(f"Topic {METADATA_TOPIC} does not exist: there is nothing to migrate.")
    if report_null_keys:
        out(f"Found {len(parts)} partition(s) in {METADATA_TOPIC}")
        out("Scanning messages...")
    scans = {p: PartitionScan(p) for p in parts}
    reader = cluster.read(METADATA_TOPIC, parts, progress, desc="Scanning " + METADATA_TOPIC)
    keep = each_partition is not None
    make = lambda p, start, end: _native.PartitionScan(start, end, NAMED_PER_PARTITION, keep)  # noqa: E731
    for p, native in reader.each_partition_raw(make):
        s = scans[p]
        (s.messages, s.null_keys, s.null_offsets, s.null_timestamps, s.tombstones, s.undecodable, level,
         s.invalid_level) = native.counts()
        s.level = None if level is None else MetadataLevel(level)
        if report_null_keys:
            named_nulls = named_bad = 0
            for offset, timestamp, why in native.named():
                if why is None:
                    named_nulls += 1
                    out(f"⚠️  Found message with null key at partition={p}, offset={offset}, timestamp={timestamp}")
                else:
                    named_bad += 1
                    out(f"⚠️  Found undecodable value at partition={p}, offset={offset}: {why}")
            if s.null_keys > named_nulls:
                out(f"⚠️  ... and {s.null_keys - named_nulls} more message(s) with null keys at partition={p} "
                    f"(offsets {s.null_offsets[0]}-{s.null_offsets[1]})")
            if s.undecodable > named_bad:
                out(f"⚠️  ... and {s.undecodable - named_bad} more undecodable value(s) at partition={p}")
        s.read_to_end = reader.read_to_end[p]
        if each_partition is not None:
            each_partition(p, keyed_verdict(native.verify(NAMED_PER_PARTITION)))
        del native
    supported, finalized = cluster.features()
    fin = finalized.get(FEATURE_NAME)
    return TopicState(
        scans,
        cluster.topic_configs([METADATA_TOPIC])[METADATA_TOPIC],
        FEATURE_NAME in supported,
        None if fin is None else int(fin[-1] if isinstance(fin, (tuple, list)) else fin),
    )


def require_read(state: TopicState, timeout_ms: int) -> None:
    unread = [p for p, s in sorted(state.partitions.items()) if not s.read_to_end]
    if unread:
        raise Failure(
            f"Timed out after {timeout_ms}ms before reading partition(s) {', '.join(map(str, unread))} of "
            f"{METADATA_TOPIC} to their end: their level and null-key records are unknown. Retry with a larger --timeout-ms."
        )


def set_level(cluster: Cluster, state: TopicState, target: MetadataLevel, actions: Actions) -> None:
    """The feature where the cluster has it, else a level record in every partition lacking one
    (the core's ``level_move``)."""
    finalize, missing = level_move(state.feature_supported, state.finalized_level, state.partition_levels(), target)
    if finalize is not None:
        cluster.update_feature(FEATURE_NAME, int(finalize))
        actions.did()
    key, value = level_record(target)
    for p in missing:
        partition = sorted(state.partitions)[p]
        cluster.produce(METADATA_TOPIC, partition, key, value)
        actions.did()


def apply_configs(cluster: Cluster, wanted: Dict[str, Optional[str]], actions: Actions) -> None:
    """Alters only what differs, so a resumed run does not redo a finished change."""
    overrides = cluster.topic_overrides(METADATA_TOPIC)
    change = {k: v for k, v in wanted.items() if (v is None and k in overrides) or (v is not None and overrides.get(k) != v)}
    if change:
        cluster.alter_topic_configs(METADATA_TOPIC, change)
        actions.did()


def check_managers(cluster: Cluster) -> None:
    configs = cluster.broker_configs(cluster.brokers())
    bad = {b: c.get(MANAGER_CONFIG) or "" for b, c in configs.items() if not manager_is_kip1266_capable(c.get(MANAGER_CONFIG) or "")}
    if bad:
        named = ", ".join(f"broker {b} ({cls or 'unset'})" for b, cls in sorted(bad.items()))
        raise Failure(
            f"Refusing to upgrade to remote.log.metadata.version=1: {MANAGER_CONFIG} is not a KIP-1266-capable manager on "
            f"{named}. A stock TopicBasedRemoteLogMetadataManager's consumer stops at the first tombstone or level record. "
            f"Run every broker with one of: {', '.join(kip1266_capable_managers())}."
        )


def check_retention(cluster: Cluster, retention_ms: int, force: bool) -> None:
    """The core's verdict from the raw configs of every topic and broker (Kafka's defaults for
    what they leave unset: which topics are tiered, their retention, the task-interval margin)."""
    topics = [t for t in cluster.topics() if t != METADATA_TOPIC]
    configs = cluster.topic_configs(topics) if topics else {}
    brokers = cluster.broker_configs(cluster.brokers())
    try:
        check_v1_retention_configs(retention_ms, configs, brokers, force)
    except _native.RlmetaError as e:
        raise Failure(f"Refusing --retention-ms {retention_ms}: {e.message}. Use --force to override.") from e


def upgrade_to_v1(cluster: Cluster, args: argparse.Namespace, actions: Actions) -> int:
    r, s = args.retention_ms, args.segment_ms
    out("Initiating upgrade to remote.log.metadata.version=1...")
    out()
    state = scan_topic(cluster, not args.no_progress, report_null_keys=False)
    require_read(state, args.timeout_ms)
    current = state.level()
    out(f"Current remote.log.metadata.version: {int(current)}")
    current.check_upgrade(MetadataLevel.V1)  # refuses a downgrade
    check_retention(cluster, r, args.force)
    check_managers(cluster)
    wanted = MetadataLevel.V1.topic_configs(r, s)
    out(f"Pre-configuring {METADATA_TOPIC} topic...")
    for k, v in wanted.items():
        out(f"  - {k}={v}")
    out()
    out("IMPORTANT: retention.ms and min.compaction.lag.ms are critical for safe migration.")
    out("Once cleanup.policy becomes 'compact,delete', the log cleaner can immediately delete null-key messages during compaction.")
    out(f"Setting retention.ms={r}ms ensures old-format (null-key) messages expire after {days(r)} days.")
    out(f"Setting min.compaction.lag.ms to the same value ensures the log cleaner waits {days(r)} days before compacting,")
    out("allowing null-key messages to expire naturally via retention before compaction begins.")
    out("This prevents data loss during the migration period.")
    out()
    apply_configs(cluster, wanted, actions)
    out("✅ Topic configurations updated successfully.")
    out()
    out("Upgrading feature to version 1...")
    set_level(cluster, state, MetadataLevel.V1, actions)
    out("✅ Feature upgraded to version 1 successfully.")
    out()
    out("✅ Upgrade to version 1 completed successfully!")
    out()
    wait = expected_deletion_ms(s, r)
    total = "never (retention.ms is infinite)" if wait is None else f"{days(wait)} days"
    for line in [
        "==================== NEXT STEPS ====================",
        "",
        "CRITICAL: You must wait for old messages to be fully deleted before proceeding to version 2.",
        "",
        f"Expected deletion time: segment.ms + retention.ms = {days(s)} + {days(r)} = {total}",
        "",
        "Why this waiting period is necessary:",
        "1. Messages deletion happens in two phases:",
        f"   Phase 1 (segment.ms = {days(s)} days):",
        "   - Old-format (null-key) messages stay in active segment",
        "   - Cannot be deleted while in active segment, even if expired",
        "",
        f"   Phase 2 (retention.ms = {days(r)} days):",
        "   - After segment rolls, messages move to closed segment",
        f"   - Messages expire based on retention.ms={r}ms",
        "   - Log cleaner deletes expired messages",
        "",
        "2. During this period:",
        f"   - The log cleaner will NOT compact the topic yet (prevented by min.compaction.lag.ms={r}ms)",
        "   - This ensures null-key messages are deleted via retention, NOT via compaction",
        "",
        f"3. After waiting {total}, run validation and upgrade to version 2:",
        f"   {PROG} --bootstrap-server {args.bootstrap_server} --check --auto-upgrade",
        "",
        "4. The validation check will:",
        f"   - Scan the entire {METADATA_TOPIC} topic for any remaining null-key messages",
        "   - Only proceed with upgrade if NO null-key messages are found",
        "   - Change cleanup.policy to 'compact' (removing 'delete')",
        "   - Set retention.ms to -1 (infinite retention)",
        "   - Remove min.compaction.lag.ms override (use broker default)",
        "",
        "===================================================",
    ]:
        out(line)
    return 0


def check(cluster: Cluster, args: argparse.Namespace, actions: Actions) -> int:
    upgrade = args.upgrade_to_v2 or args.auto_upgrade
    cfg = cluster.topic_configs([METADATA_TOPIC]).get(METADATA_TOPIC)
    if cfg is None:
        raise Failure(f"Topic {METADATA_TOPIC} does not exist: there is nothing to migrate.")
    timing = cleanup_timing(cfg, {})  # described topic configs carry the broker defaults already
    retention, lag, segment = timing.retention_ms, timing.min_compaction_lag_ms, timing.segment_ms
    for line in [
        "========== IMPORTANT REMINDER ==========",
        "",
        f"Current {METADATA_TOPIC} topic configuration:",
        f"  - retention.ms={retention}ms ({days(retention)} days)",
        f"  - min.compaction.lag.ms={lag}ms ({days(lag)} days)",
        "",
        "Before proceeding with this validation, ensure that:",
        f"1. At least {days(retention)} days have passed since upgrading to version 1",
        "2. This allows all old-format (null-key) messages to expire via retention",
        "3. The log cleaner has NOT compacted the topic yet (prevented by min.compaction.lag.ms)",
        "",
        f"If you upgraded to version 1 recently (less than {days(retention)} days ago),",
        "you should WAIT before running this validation to avoid false negatives.",
        "",
        "========================================",
        "",
        f"Checking {METADATA_TOPIC} topic for messages with null keys...",
        f"Bootstrap servers: {args.bootstrap_server}",
        f"Timeout: {args.timeout_ms}ms",
        "Upgrade to V2: ENABLED (will upgrade to version 2 if validation passes)" if upgrade else "Upgrade to V2: DISABLED (validation only)",
        "",
    ]:
        out(line)
    state = scan_topic(cluster, not args.no_progress, report_null_keys=True)
    scans = [s for _, s in sorted(state.partitions.items())]
    total = sum(s.messages for s in scans)
    nulls = sum(s.null_keys for s in scans)
    out()
    out("Scan completed.")
    out(f"Total messages scanned: {total}")
    out(f"Messages with null keys: {nulls}")
    for s in scans:
        line = f"  partition={s.partition}: {s.messages} message(s), {s.null_keys} with null keys"
        if s.null_offsets and s.null_timestamps:
            line += (f" (offsets {s.null_offsets[0]}-{s.null_offsets[1]}, "
                     f"timestamps {s.null_timestamps[0]}-{s.null_timestamps[1]})")
        line += f", {s.tombstones} tombstone(s), {s.undecodable} undecodable value(s)"
        line += f", level record: {int(s.level) if s.level is not None else (('invalid: ' + s.invalid_level) if s.invalid_level else 'none')}"
        if not s.read_to_end:
            line += ", NOT read to its end"
        out(line)
    require_read(state, args.timeout_ms)
    out()
    last_ts = max((s.null_timestamps[1] for s in scans if s.null_timestamps), default=None)
    verdict = readiness(nulls, last_ts, segment, retention)
    if not verdict.ready:
        now = int(time.time() * 1000)
        out(f"❌ VALIDATION FAILED: Found {nulls} message(s) with null keys.")
        out()
        if last_ts is not None:
            age = max(0, now - last_ts)
            out(f"Last null-key message timestamp: {last_ts}")
            out(f"Last null-key message age: {days(age)} days ({age // 3_600_000} hours)")
            out()
        out("Topic configuration:")
        out(f"  - segment.ms: {segment}ms ({days(segment)} days)")
        out(f"  - retention.ms: {retention}ms ({days(retention)} days)")
        if timing.expected_deletion_ms is not None:
            out(f"  - Total wait time for deletion: {timing.expected_deletion_ms}ms ({days(timing.expected_deletion_ms)} days)")
        out()
        out("💡 SUGGESTION:")
        out()
        if verdict.estimated_cleanup_ms is not None:
            est = verdict.estimated_cleanup_ms
            out(f"Estimated cleanup time: {time.strftime('%a %b %d %H:%M:%S %Z %Y', time.localtime(est / 1000))}")
            out()
            out(f"Remaining wait time: approximately {max(0, est - now) // 3_600_000} hours.")
            out()
            out("Please retry this validation after the estimated cleanup time.")
        else:
            out("retention.ms is infinite: null-key messages never expire. Run --upgrade-to-v1 first.")
        out()
        out("Action required:")
        out("1. Wait for null-key messages to expire based on retention.ms setting")
        out("2. Then run this tool again to verify all null-key messages are gone")
        out("3. Only then proceed with the upgrade to remote.log.metadata.version=2")
        out()
        out("To force upgrade despite null-key messages (NOT RECOMMENDED), use --force flag.")
        if not (args.force and upgrade):
            raise Failure(f"Cannot upgrade to version 2: null-key messages found in {METADATA_TOPIC}")
        out()
        out(f"⚠️  --force given: upgrading despite {nulls} null-key message(s); they will be lost during compaction.")
    else:
        out("✅ VALIDATION PASSED: No null-key messages found.")
        out("✅ Safe to upgrade to remote.log.metadata.version=2.")
    if not upgrade:
        return 0
    if not args.auto_upgrade:
        out()
        out("Validation passed. Run again with --auto-upgrade to upgrade to remote.log.metadata.version=2.")
        return 0
    out()
    return upgrade_to_v2(cluster, state, actions)


def upgrade_to_v2(cluster: Cluster, state: TopicState, actions: Actions) -> int:
    out("Initiating upgrade to remote.log.metadata.version=2...")
    out()
    current = state.level()
    out(f"Current remote.log.metadata.version: {int(current)}")
    current.check_upgrade(MetadataLevel.V2)
    out(f"Upgrading from version {int(current)} to version 2...")
    apply_configs(cluster, MetadataLevel.V2.topic_configs(), actions)
    set_level(cluster, state, MetadataLevel.V2, actions)
    out()
    out("✅ Successfully upgraded to remote.log.metadata.version=2!")
    out()
    if state.feature_supported:
        out(f"The controller has automatically updated {METADATA_TOPIC} topic configuration:")
    else:
        out(f"The {METADATA_TOPIC} topic configuration has been updated:")
    out("  - cleanup.policy changed to 'compact' (compact-only)")
    out("  - min.compaction.lag.ms override removed")
    out("  - retention.ms override removed")
    out()
    out("All metadata messages now have proper keys and will be retained indefinitely via compaction.")
    return 0


BACKFILL_POLL_S = 5.0


def show_state(u) -> str:
    return u.name if u is not None else "-"


def verify_backfill(cluster: Cluster, args: argparse.Namespace) -> Tuple[TopicState, int]:
    """A fresh read of the topic and the core's keyed verification of each metadata partition as
    soon as it is read (its records are dropped before the next is read), printed per partition;
    returns the state read and how many segments fail."""
    out(f"Verifying that keyed records hold every live segment of {METADATA_TOPIC} (fresh read)...")
    totals = {"live": 0, "failing": 0, "superseded": 0}

    def verify(p: int, v: KeyedVerdict) -> None:
        totals["live"] += v.live_segments
        totals["failing"] += v.unheld_total
        totals["superseded"] += v.superseded_total
        out(f"  partition={p}: {v.live_segments} live segment(s), {v.unheld_total} not held by keyed records; "
            f"{v.records} record(s), {v.null_key_records} with null keys, {v.records_after_compaction} left once compacted")
        for u in v.unheld:
            where = f"segment={u.segment_id} of {u.partition.name}-{u.partition.partition} (topic id {u.partition.id})"
            if u.why == "lost":
                what = f"{show_state(u.state)}, held only by null-key records"
            elif u.why == "stale-state":
                what = f"{show_state(u.state)}, compaction would leave it {show_state(u.held)}"
            else:
                what = f"deleted, compaction would bring it back as {show_state(u.held)}"
            offsets = ", ".join(map(str, u.offsets))
            nulls = ", ".join(map(str, u.null_key_offsets)) or "none"
            out(f"    ⚠️  {where}: {what} (records at offsets {offsets}; null keys at {nulls})")
        if v.unheld_total > len(v.unheld):
            ways = ", ".join(f"{why}: {n}" for why, n in v.unheld_by_why)
            out(f"    ⚠️  ... and {v.unheld_total - len(v.unheld)} more not held by keyed records at partition={p} "
                f"(all {v.unheld_total} by kind: {ways})")
        for s in v.superseded:
            out(f"    superseded: segment={s.segment_id} of {s.partition.name}-{s.partition.partition} "
                f"(topic id {s.partition.id}), offsets {s.start_offset}..{s.end_offset}: a second upload attempt "
                f"of that range, Kafka serves segment={s.served_by}; not a failure: no fetch is served from it, "
                f"at level 2 its null-key records go and its remote objects become orphans "
                f"(records at offsets {', '.join(map(str, s.offsets))})")
        if v.superseded_total > len(v.superseded):
            out(f"    ... and {v.superseded_total - len(v.superseded)} more superseded upload attempt(s) at partition={p}")

    state = scan_topic(cluster, not args.no_progress, report_null_keys=False, each_partition=verify)
    require_read(state, args.timeout_ms)
    live, failing, superseded = totals["live"], totals["failing"], totals["superseded"]
    out(f"Live segments: {live}; not held by keyed records: {failing}; superseded upload attempts: {superseded}")
    return state, failing


def upgrade_to_v1_backfill(cluster: Cluster, state: TopicState, args: argparse.Namespace, actions: Actions) -> None:
    """Level 1 without changing the topic's configs: only the level, so the plugin backfills."""
    current = state.level()
    current.check_upgrade(MetadataLevel.V1)
    policy = state.configs.get("cleanup.policy", "delete")
    retention = cleanup_timing(state.configs, {}).retention_ms
    check_backfill_v1(policy, retention)
    check_managers(cluster)
    out(f"Keeping the {METADATA_TOPIC} topic configuration: cleanup.policy={policy}, retention.ms={retention} "
        "(nothing expires before the backfill is verified).")
    out("Upgrading feature to version 1...")
    set_level(cluster, state, MetadataLevel.V1, actions)
    out("✅ Feature upgraded to version 1 successfully.")
    out()


def upgrade_to_v1_backfill_cmd(cluster: Cluster, args: argparse.Namespace, actions: Actions) -> int:
    out("Initiating upgrade to remote.log.metadata.version=1 (--backfill: no retention wait)...")
    out()
    state = scan_topic(cluster, not args.no_progress, report_null_keys=False)
    require_read(state, args.timeout_ms)
    out(f"Current remote.log.metadata.version: {int(state.level())}")
    upgrade_to_v1_backfill(cluster, state, args, actions)
    out("✅ Upgrade to version 1 (backfill) completed successfully!")
    out()
    for line in [
        "==================== NEXT STEPS ====================",
        "",
        "The broker plugin on each user partition's leader now writes every live segment known only from null-key",
        "records again under its KIP-1266 keys (it re-checks periodically, so new leaders and restarts finish it).",
        "",
        "1. Watch its progress (per partition, the live segments not yet held by keyed records):",
        f"   {PROG} --bootstrap-server {args.bootstrap_server} --check --backfill",
        "",
        "2. Once none remain, verify and upgrade to version 2 (no retention wait):",
        f"   {PROG} --bootstrap-server {args.bootstrap_server} --upgrade-to-v2 --backfill",
        "",
        "===================================================",
    ]:
        out(line)
    return 0


def check_backfill_cmd(cluster: Cluster, args: argparse.Namespace, actions: Actions) -> int:
    out(f"Checking the backfill of {METADATA_TOPIC}...")
    out(f"Bootstrap servers: {args.bootstrap_server}")
    out(f"Timeout: {args.timeout_ms}ms")
    out()
    state, failing = verify_backfill(cluster, args)
    level = state.level()
    out(f"Current remote.log.metadata.version: {int(level)}")
    out()
    if failing:
        if level < MetadataLevel.V1:
            out(f"The broker plugin backfills only at version 1 or more: run {PROG} --upgrade-to-v1 --backfill first.")
        raise Failure(f"Backfill incomplete: {failing} live segment(s) not yet held by keyed records in {METADATA_TOPIC}")
    out("✅ BACKFILL COMPLETE: every live segment's current state is held by keyed records.")
    return 0


def upgrade_to_v2_backfill_cmd(cluster: Cluster, args: argparse.Namespace, actions: Actions) -> int:
    out("Initiating upgrade to remote.log.metadata.version=2 (--backfill: no retention wait)...")
    out()
    state = scan_topic(cluster, not args.no_progress, report_null_keys=False)
    require_read(state, args.timeout_ms)
    current = state.level()
    out(f"Current remote.log.metadata.version: {int(current)}")
    if current < MetadataLevel.V1:
        upgrade_to_v1_backfill(cluster, state, args, actions)
    check_managers(cluster)
    deadline = time.monotonic() + max(0, args.backfill_wait_ms) / 1000
    while True:
        state, failing = verify_backfill(cluster, args)
        if not failing:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failure(
                f"Refusing to upgrade to remote.log.metadata.version=2: {failing} live segment(s) not held by keyed records "
                f"(listed above); compaction would lose or resurrect them. The broker plugin backfills them at version 1: "
                f"retry later, or give --backfill-wait-ms."
            )
        out(f"Waiting for the backfill ({left:.0f} s left)...")
        time.sleep(min(BACKFILL_POLL_S, left))
    out("✅ BACKFILL VERIFIED: every live segment's current state is held by keyed records.")
    out()
    return upgrade_to_v2(cluster, state, actions)


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.upgrade_to_v1 and (args.check or args.upgrade_to_v2 or args.auto_upgrade):
            raise UsageError("--upgrade-to-v1 cannot be combined with --check, --upgrade-to-v2 or --auto-upgrade")
        if args.backfill and (args.auto_upgrade or args.force or args.check + args.upgrade_to_v1 + args.upgrade_to_v2 != 1):
            raise UsageError("--backfill takes exactly one of --upgrade-to-v1, --check or --upgrade-to-v2, and neither "
                             "--auto-upgrade nor --force (its verification cannot be overridden)")
        if args.backfill_wait_ms and not (args.backfill and args.upgrade_to_v2):
            raise UsageError("--backfill-wait-ms requires --upgrade-to-v2 --backfill")
        if (args.upgrade_to_v2 or args.auto_upgrade) and not args.check and not args.backfill:
            raise UsageError("--upgrade-to-v2 and --auto-upgrade require --check")
        if not (args.upgrade_to_v1 or args.check or args.upgrade_to_v2):
            raise UsageError("one of --upgrade-to-v1 or --check is required")
    except UsageError as e:
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except SystemExit as e:  # -h/--help
        return int(e.code or 0)
    try:
        cluster = Cluster(args.bootstrap_server, args.command_config, args.timeout_ms)
    except CommandConfigError as e:
        print(f"{PROG}: {describe(e)}", file=sys.stderr)
        return 2
    actions = Actions()
    try:
        if args.backfill:
            run = upgrade_to_v1_backfill_cmd if args.upgrade_to_v1 else check_backfill_cmd if args.check else upgrade_to_v2_backfill_cmd
            return run(cluster, args, actions)
        return upgrade_to_v1(cluster, args, actions) if args.upgrade_to_v1 else check(cluster, args, actions)
    except (AccessDenied, AuthenticationFailed) as e:
        sys.stdout.flush()
        print(f"{PROG}: {describe(e)}", file=sys.stderr)
        return 2
    except Failure as e:
        sys.stdout.flush()
        print(str(e), file=sys.stderr)
        return 1
    except _native.RlmetaError as e:
        sys.stdout.flush()
        print(f"{e}", file=sys.stderr)
        return 1
    except Exception as e:  # a cluster that cannot be reached or refuses a request
        sys.stdout.flush()
        print(f"{PROG}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        cluster.close()


if __name__ == "__main__":
    sys.exit(main())
