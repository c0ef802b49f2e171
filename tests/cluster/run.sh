#!/usr/bin/env bash
# Runs JUnit tests of this module against real Kafka 4.4.0 clusters that the tests start
# (KafkaCluster: a controller + N brokers on 127.0.0.1, free ports, tiered storage with the file
# RSM of tests/e2e). Whatever process a test started and did not stop is killed on exit (the
# pid file), so no broker outlives the run.
#
# Usage: tests/cluster/run.sh TEST_PATTERN [PLUGIN_JAR [MAVEN_ARGS...]]   (TEST_PATTERN as surefire's -Dtest)
# Env:   RLMETA_CLUSTER_TIMEOUT overall limit in seconds (default 900)
#        RLMETA_CLUSTER_TARGET the module's build directory (default tests/cluster/target): its classes,
#        surefire reports, pid file and broker work directories. Two runs at once (make test's broker
#        lane beside the other lane's aarch64 broker) each take their own, so neither kills, deletes or
#        recompiles what the other runs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PATTERN="${1:?usage: run.sh TEST_PATTERN [PLUGIN_JAR]}"
PLUGIN_JAR="${2:-}"
EXTRA=("${@:3}")
LIMIT="${RLMETA_CLUSTER_TIMEOUT:-900}"
E2E="$HERE/../e2e"
RSM_JAR="$E2E/target/rlmeta-e2e-0.1.0.jar"
TARGET="${RLMETA_CLUSTER_TARGET:-$HERE/target}"
PIDS="$TARGET/cluster-pids.txt"
mkdir -p "$TARGET"
: >"$PIDS"

MVN_PID=""
cleanup() {
  local rc=$? pid
  trap - EXIT INT TERM
  [ -n "$MVN_PID" ] && kill -TERM "$MVN_PID" 2>/dev/null || true
  while read -r pid; do
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && echo "[cluster] killed leftover process $pid" || true
  done <"$PIDS"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$E2E/build-jar.sh" || { echo "FAILED: building the file RSM"; exit 1; }
rm -rf "$TARGET/cluster-work"
args=(-q -B -Dstyle.color=never -f "$HERE/pom.xml" test "-Dtest=$PATTERN" "-Drlmeta.rsm.jar=$RSM_JAR" "-Drlmeta.build.dir=$TARGET")
args+=("${EXTRA[@]}")
[ -n "$PLUGIN_JAR" ] && args+=("-Drlmeta.plugin.jar=$(cd "$(dirname "$PLUGIN_JAR")" && pwd)/$(basename "$PLUGIN_JAR")")
# in the background so that a signal runs the trap at once (bash defers traps while a
# foreground command runs)
timeout -k 10 "$LIMIT" mvn "${args[@]}" &
MVN_PID=$!
wait "$MVN_PID"
