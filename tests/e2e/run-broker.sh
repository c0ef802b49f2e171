#!/usr/bin/env bash
# Runs a real single-node KRaft Apache Kafka broker (combined broker+controller) with tiered
# storage, makes it copy segments to "remote" storage and delete some of them by retention, stops
# it, and collects the real files it wrote plus Kafka's own dumps of them into OUTDIR.
#
# Usage: tests/e2e/run-broker.sh OUTDIR
#
# Environment (all optional):
#   RLMETA_E2E_TIMEOUT  overall limit in seconds (default 600, Maven resolution included)
#   RLMETA_E2E_WAIT     limit in seconds for the tiering/retention phase (default 120)
#   RLMETA_E2E_KEEP=1   keep the temporary directory (its path is printed) instead of deleting it
#   JAVA                java binary (default: java on PATH)
#
# Everything listens on 127.0.0.1 only, on free ports picked at run time. See README.md.
set -euo pipefail

START_SECONDS=$SECONDS
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OVERALL_TIMEOUT="${RLMETA_E2E_TIMEOUT:-600}"
WAIT_TIMEOUT="${RLMETA_E2E_WAIT:-120}"
JAVA="${JAVA:-java}"

TOPIC=rlmeta-e2e            # 3 partitions: copies + deletions by retention.bytes
GONE_TOPIC=rlmeta-e2e-gone  # 1 partition: copies, then the topic is deleted (partition delete)

# fd 3 = the script's own stderr, so that messages from traps reach the caller even when a trap
# runs while a command's output is redirected to a file.
exec 3>&2
log() { printf '[run-broker %4ds] %s\n' "$((SECONDS - START_SECONDS))" "$*" >&3; }
die() { log "FAILED: $*"; exit 1; }

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1"
OUTDIR="$(cd "$1" && pwd)"

command -v "$JAVA" >/dev/null || die "java not found"
command -v mvn >/dev/null || die "mvn not found"
command -v python3 >/dev/null || die "python3 not found (used to pick free ports)"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/rlmeta-e2e.XXXXXX")"
BROKER_PID=""
WATCHDOG_PID=""

stop_broker() {
  # SIGTERM, then wait up to $1 seconds, then SIGKILL. Returns 0 if it stopped on SIGTERM.
  local pid="$BROKER_PID" limit="$1" i=0
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null && [ "$i" -lt "$((limit * 5))" ]; do sleep 0.2; i=$((i + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
      log "broker (pid $pid) did not stop within ${limit}s of SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      BROKER_PID=""
      return 1
    fi
  fi
  wait "$pid" 2>/dev/null || true
  BROKER_PID=""
  return 0
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$WATCHDOG_PID" ]; then kill "$WATCHDOG_PID" 2>/dev/null || true; fi
  stop_broker 20 || true
  if [ "$rc" -ne 0 ] && [ -f "$TMP/logs/server.log" ]; then
    mkdir -p "$OUTDIR/logs" && cp "$TMP/logs/"*.log "$OUTDIR/logs/" 2>/dev/null || true
    log "broker log kept in $OUTDIR/logs/server.log; last lines:"
    tail -n 20 "$TMP/logs/server.log" >&3 || true
  fi
  if [ "${RLMETA_E2E_KEEP:-0}" = 1 ]; then
    log "kept temporary directory $TMP"
  else
    rm -rf "$TMP"
  fi
  log "finished with exit code $rc after $((SECONDS - START_SECONDS))s"
  exit "$rc"
}
trap cleanup EXIT
trap 'die "interrupted (signal or overall timeout of ${OVERALL_TIMEOUT}s)"' INT TERM

# Watchdog: the whole run is bounded. It polls once a second so that killing it leaves nothing.
# On timeout it signals this script and then this script's own children (the broker, and the
# `timeout` wrapper of whatever tool is running, which passes the signal on), because bash runs a
# trap only once the foreground command has returned.
( n=0; while sleep 1; do n=$((n + 1)); if [ "$n" -ge "$OVERALL_TIMEOUT" ]; then
    echo "[run-broker] overall timeout of ${OVERALL_TIMEOUT}s exceeded" >&3
    kill -TERM $$; pkill -TERM -P $$; exit 0; fi; done ) &
WATCHDOG_PID=$!

# ---------------------------------------------------------------------------------------------
# 1. Build our RSM jar and resolve Kafka's class path (idempotent; quiet).
# ---------------------------------------------------------------------------------------------
JAR="$HERE/target/rlmeta-e2e-0.1.0.jar"
CPFILE="$HERE/target/classpath.txt"
"$HERE/build-jar.sh" "$OVERALL_TIMEOUT" 2>&3 || die "Maven build failed"
KAFKA_CP="$(cat "$CPFILE")"
[ -n "$KAFKA_CP" ] || die "empty class path in $CPFILE"
# Our RSM is deliberately NOT on the broker's class path: the broker loads it from
# remote.log.storage.manager.class.path (Kafka's child-first class loader), as a real plugin.

# ---------------------------------------------------------------------------------------------
# 2. Configuration.
# ---------------------------------------------------------------------------------------------
read -r BROKER_PORT CONTROLLER_PORT < <(python3 - <<'EOF'
import socket
socks = []
for _ in range(2):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
)
BOOTSTRAP="127.0.0.1:$BROKER_PORT"
DATA_DIR="$TMP/data"
META_DIR="$TMP/meta"
REMOTE_DIR="$TMP/remote"
mkdir -p "$TMP/logs" "$REMOTE_DIR"

cat >"$TMP/log4j2.properties" <<'EOF'
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = ${sys:rlmeta.log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = ${sys:rlmeta.log.level:-INFO}
rootLogger.appenderRef.file.ref = FILE
EOF

cat >"$TMP/server.properties" <<EOF
# --- KRaft, single combined node ---
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$BROKER_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$BROKER_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$DATA_DIR
metadata.log.dir=$META_DIR
# --- single node: internal topics with replication factor 1 ---
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
# --- make retention and tiering happen within seconds ---
log.retention.check.interval.ms=1000
log.initial.task.delay.ms=500
file.delete.delay.ms=1000
# --- tiered storage ---
remote.log.storage.system.enable=true
remote.log.storage.manager.class.name=dev.rlmeta.e2e.FileRemoteStorageManager
remote.log.storage.manager.class.path=$JAR
rsm.config.dir=$REMOTE_DIR
remote.log.metadata.manager.class.name=org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager
remote.log.metadata.manager.listener.name=PLAINTEXT
rlmm.config.remote.log.metadata.topic.num.partitions=3
rlmm.config.remote.log.metadata.topic.replication.factor=1
rlmm.config.remote.log.metadata.topic.min.isr=1
remote.log.manager.task.interval.ms=1000
# --- also take one periodic KRaft snapshot besides the zero checkpoint ---
metadata.log.max.snapshot.interval.ms=10000
EOF

# Runs one Kafka command-line class, bounded in time, with its log4j output in $TMP/logs/<name>.log.
# usage: kafka_tool NAME TIMEOUT_SECONDS MAIN_CLASS ARGS...
kafka_tool() {
  local name="$1" limit="$2"; shift 2
  timeout -k 5 "$limit" "$JAVA" -Xmx512m -XX:TieredStopAtLevel=1 \
    -Dlog4j2.configurationFile="$TMP/log4j2.properties" -Drlmeta.log.file="$TMP/logs/$name.log" \
    -Drlmeta.log.level=WARN -cp "$KAFKA_CP" "$@"
}

# ---------------------------------------------------------------------------------------------
# 3. Format with Kafka's storage tool (single-node dynamic quorum).
# ---------------------------------------------------------------------------------------------
CLUSTER_ID="$(kafka_tool storage-uuid 60 kafka.tools.StorageTool random-uuid)" || die "random-uuid failed"
log "formatting cluster $CLUSTER_ID (broker 127.0.0.1:$BROKER_PORT, controller 127.0.0.1:$CONTROLLER_PORT)"
kafka_tool storage-format 120 kafka.tools.StorageTool format --standalone \
    --cluster-id "$CLUSTER_ID" --config "$TMP/server.properties" >"$OUTDIR/format.txt" 2>&1 \
  || { cat "$OUTDIR/format.txt" >&3; die "kafka-storage format failed"; }

# Keep the directories exactly as formatted (before the node ever ran).
mkdir -p "$OUTDIR/formatted"
(cd "$TMP" && find meta data -type f | sort) >"$OUTDIR/formatted/files.txt"
(cd "$TMP" && find meta data -type f \( -name '*.checkpoint' -o -name meta.properties \) -print0 \
  | xargs -0 -r cp --parents -t "$OUTDIR/formatted")

# ---------------------------------------------------------------------------------------------
# 4. Start the broker.
# ---------------------------------------------------------------------------------------------
log "starting broker"
"$JAVA" -Xms512m -Xmx1g -Dlog4j2.configurationFile="$TMP/log4j2.properties" -Dlog4j2.shutdownHookEnabled=false \
  -Drlmeta.log.file="$TMP/logs/server.log" -cp "$KAFKA_CP" kafka.Kafka "$TMP/server.properties" \
  >"$TMP/logs/broker-stdout.log" 2>&1 &
BROKER_PID=$!

deadline=$((SECONDS + 90))
until grep -q 'Kafka Server started' "$TMP/logs/server.log" 2>/dev/null; do
  kill -0 "$BROKER_PID" 2>/dev/null || { cat "$TMP/logs/broker-stdout.log" >&3; die "broker exited during startup"; }
  [ "$SECONDS" -lt "$deadline" ] || die "broker did not start within 90s"
  sleep 0.5
done
log "broker started (pid $BROKER_PID)"

# ---------------------------------------------------------------------------------------------
# 5. Topics and data.
# ---------------------------------------------------------------------------------------------
# internal.segment.bytes: segment.bytes has a 1 MiB minimum in Kafka 4.x; this test-only topic
# config allows 16 KiB segments. retention.bytes is per partition and counts local + remote data.
TOPIC_CONFIGS=(--config remote.storage.enable=true --config internal.segment.bytes=16384
  --config local.retention.bytes=16384 --config segment.index.bytes=4096)
kafka_tool topics 90 org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --create \
    --topic "$TOPIC" --partitions 3 --replication-factor 1 "${TOPIC_CONFIGS[@]}" \
    --config retention.bytes=32768 >"$TMP/logs/topic-create.out" 2>&1 \
  || { cat "$TMP/logs/topic-create.out" >&3; die "creating topic $TOPIC failed"; }
kafka_tool topics 90 org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --create \
    --topic "$GONE_TOPIC" --partitions 1 --replication-factor 1 "${TOPIC_CONFIGS[@]}" \
    >"$TMP/logs/topic-create-gone.out" 2>&1 \
  || { cat "$TMP/logs/topic-create-gone.out" >&3; die "creating topic $GONE_TOPIC failed"; }
log "topics $TOPIC (3 partitions) and $GONE_TOPIC (1 partition) created"

produce() { # topic records
  kafka_tool "produce-$1" 120 org.apache.kafka.tools.ProducerPerformance --topic "$1" \
      --num-records "$2" --record-size 512 --throughput -1 \
      --producer-props bootstrap.servers="$BOOTSTRAP" acks=all batch.size=4096 linger.ms=0 \
      >"$TMP/logs/produce-$1.out" 2>&1 \
    || { cat "$TMP/logs/produce-$1.out" >&3; die "producing to $1 failed"; }
}
produce "$TOPIC" 480
produce "$GONE_TOPIC" 100
log "produced 480 x 512 B to $TOPIC and 100 x 512 B to $GONE_TOPIC"

# ---------------------------------------------------------------------------------------------
# 6. Wait for copies, retention deletions, then delete the second topic and wait for its cleanup.
# ---------------------------------------------------------------------------------------------
JOURNAL="$REMOTE_DIR/journal.txt"
count() { # pattern -> number of journal lines matching it
  if [ -f "$JOURNAL" ]; then grep -cE -- "$1" "$JOURNAL" || true; else echo 0; fi
}
wait_for() { # description limit_seconds condition-command...
  local what="$1" limit="$2"; shift 2
  local deadline=$((SECONDS + limit))
  until "$@"; do
    kill -0 "$BROKER_PID" 2>/dev/null || die "broker died while waiting for $what"
    [ "$SECONDS" -lt "$deadline" ] || die "timed out after ${limit}s waiting for $what (journal: $(count COPY) copies, $(count DELETE) deletions)"
    sleep 1
  done
}
tiered_and_retained() {
  [ "$(count "^COPY [^ ]*:$TOPIC-")" -ge 3 ] && [ "$(count "^DELETE [^ ]*:$TOPIC-")" -ge 2 ] \
    && [ "$(count "^COPY [^ ]*:$GONE_TOPIC-0 ")" -ge 2 ]
}
wait_start=$SECONDS
wait_for "remote copies and retention deletions" "$WAIT_TIMEOUT" tiered_and_retained
log "copies and retention deletions seen: $(count '^COPY') copies, $(count '^DELETE') deletions"

kafka_tool topics 90 org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --delete \
    --topic "$GONE_TOPIC" >"$TMP/logs/topic-delete.out" 2>&1 \
  || { cat "$TMP/logs/topic-delete.out" >&3; die "deleting topic $GONE_TOPIC failed"; }
gone_cleaned() {
  local copies deletes
  copies="$(count "^COPY [^ ]*:$GONE_TOPIC-0 ")"; deletes="$(count "^DELETE [^ ]*:$GONE_TOPIC-0 ")"
  [ "$deletes" -ge "$copies" ]
}
remaining=$((WAIT_TIMEOUT - (SECONDS - wait_start))); [ "$remaining" -ge 10 ] || remaining=10
wait_for "remote data of deleted topic $GONE_TOPIC to be deleted" "$remaining" gone_cleaned
log "remote segments of deleted topic $GONE_TOPIC deleted"
# The RLMM publishes DELETE_SEGMENT_FINISHED / DELETE_PARTITION_FINISHED right after the RSM
# returns; give it a few task intervals.
sleep 5

# ---------------------------------------------------------------------------------------------
# 7. Features, while the broker runs.
# ---------------------------------------------------------------------------------------------
kafka_tool features 60 org.apache.kafka.tools.FeatureCommand --bootstrap-server "$BOOTSTRAP" describe \
    >"$OUTDIR/features.txt" 2>"$TMP/logs/features.err" \
  || { cat "$TMP/logs/features.err" >&3; die "kafka-features describe failed"; }
kafka_tool topics 60 org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --describe \
    --topic "$TOPIC" >"$OUTDIR/topic-describe.txt" 2>/dev/null || true

# ---------------------------------------------------------------------------------------------
# 8. Clean stop.
# ---------------------------------------------------------------------------------------------
log "stopping broker (SIGTERM)"
stop_broker 60 || die "broker did not stop cleanly on SIGTERM"
[ -f "$DATA_DIR/.kafka_cleanshutdown" ] || die "broker stopped without writing $DATA_DIR/.kafka_cleanshutdown"

# ---------------------------------------------------------------------------------------------
# 9. Collect files and Kafka's own dumps of them.
# ---------------------------------------------------------------------------------------------
mkdir -p "$OUTDIR/remote_log_metadata" "$OUTDIR/cluster_metadata/data-dir" "$OUTDIR/dump" "$OUTDIR/logs"
(cd "$DATA_DIR" && find . -maxdepth 2 -path "./__remote_log_metadata-*" -name '*.log' -print0 \
  | xargs -0 -r cp --parents -t "$OUTDIR/remote_log_metadata")
n_meta="$(find "$OUTDIR/remote_log_metadata" -name '*.log' | wc -l)"
[ "$n_meta" -ge 1 ] || die "no __remote_log_metadata-*/*.log files found"

(cd "$META_DIR" && find * -type f \( -name '*.checkpoint' -o -name meta.properties \) -print0 \
  | xargs -0 -r cp --parents -t "$OUTDIR/cluster_metadata")
(cd "$DATA_DIR" && find * -maxdepth 0 -type f \( -name 'bootstrap.checkpoint' -o -name meta.properties \) -print0 \
  | xargs -0 -r cp --parents -t "$OUTDIR/cluster_metadata/data-dir")
(cd "$TMP" && find meta data -maxdepth 2 | sort) >"$OUTDIR/dirs-after-stop.txt"

{
  echo "# remote storage after the run: one directory per remaining segment id"
  echo "# <topic>-<partition>-<topicId>/<segmentId>: files"
  (cd "$REMOTE_DIR" && find . -mindepth 2 -maxdepth 2 -type d | sort | while read -r d; do
     printf '%s: %s\n' "${d#./}" "$(ls "$d" | tr '\n' ' ')"; done)
} >"$OUTDIR/remote-listing.txt"
cp "$JOURNAL" "$OUTDIR/remote-journal.txt"

# kafka-dump-log prints "Dumping <path as given>": run it from the file's directory with the bare
# file name so that the outputs do not depend on where OUTDIR is.
dump() { # decoder-option file-relative-to-OUTDIR output-name
  local dir base
  dir="$(dirname "$OUTDIR/$2")"; base="$(basename "$2")"
  (cd "$dir" && kafka_tool dump-log 120 org.apache.kafka.tools.DumpLogSegments "$1" --files "$base") \
      >"$OUTDIR/dump/$3" 2>"$TMP/logs/dump.err" \
    || { cat "$TMP/logs/dump.err" >&3; die "kafka-dump-log $1 failed on $2"; }
}
for f in $(cd "$OUTDIR" && find remote_log_metadata -name '*.log' | sort); do
  dump --remote-log-metadata-decoder "$f" "$(basename "$(dirname "$f")")-$(basename "$f").txt"
done
for f in $(cd "$OUTDIR" && find cluster_metadata -name '*.checkpoint' | sort); do
  dump --cluster-metadata-decoder "$f" "$(basename "$(dirname "$f")")-$(basename "$f").txt"
done
for f in $(cd "$OUTDIR" && find formatted -name '*.checkpoint' | sort); do
  dump --cluster-metadata-decoder "$f" "formatted-$(basename "$(dirname "$f")")-$(basename "$f").txt"
done
cp "$TMP/server.properties" "$OUTDIR/server.properties"
cp "$TMP/logs/"*.log "$OUTDIR/logs/" 2>/dev/null || true

# ---------------------------------------------------------------------------------------------
# 10. Checks on what Kafka itself reported.
# ---------------------------------------------------------------------------------------------
dumps=("$OUTDIR"/dump/__remote_log_metadata-*.txt)
# (Kafka 4.4.0 brokers never write RemotePartitionDeleteMetadata records: deleting a topic deletes
# its remote segments with DELETE_SEGMENT_STARTED/FINISHED updates only.)
for state in COPY_SEGMENT_STARTED COPY_SEGMENT_FINISHED DELETE_SEGMENT_STARTED DELETE_SEGMENT_FINISHED; do
  grep -q "$state" "${dumps[@]}" || die "no $state record in the dumped __remote_log_metadata segments"
done
if grep -q 'Error at offset' "${dumps[@]}"; then die "kafka-dump-log could not decode some metadata records"; fi
grep -q 'remote.log.metadata.version\|metadata.version' "$OUTDIR/features.txt" || die "features.txt looks wrong"

log "OK: $n_meta metadata segment file(s), $(count '^COPY') copies, $(count '^DELETE') remote deletions"
log "output in $OUTDIR"
log "duration: $((SECONDS - START_SECONDS))s"
