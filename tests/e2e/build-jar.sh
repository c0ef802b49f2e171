#!/usr/bin/env bash
# Builds tests/e2e's file RSM jar (target/rlmeta-e2e-0.1.0.jar) and resolves Kafka's class path
# (target/classpath.txt) when either is missing, older than its sources or the pom, or names a jar
# that has gone from the local Maven repository. Idempotent and quiet: on success it prints nothing.
#
# Every user of the jar calls this one script, under a lock (run-broker.sh, dump-fixtures.sh,
# dump-crafted.sh, check-fixture-dumps.sh, tests/cluster/run.sh, the Python tests' kafka_broker.py),
# so runs that start at once (make test's two lanes) build it once and never read a half-written jar.
#
# Usage: tests/e2e/build-jar.sh [TIMEOUT_SECONDS]   (default 600; Maven's output goes to stderr on failure)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LIMIT="${1:-600}"
JAR="$HERE/target/rlmeta-e2e-0.1.0.jar"
CPFILE="$HERE/target/classpath.txt"
mkdir -p "$HERE/target"
exec 9>"$HERE/target/.build.lock"
flock 9

stale() {
  [ -s "$JAR" ] && [ -s "$CPFILE" ] || return 0
  [ "$HERE/pom.xml" -nt "$CPFILE" ] && return 0
  [ -n "$(find "$HERE/src" -newer "$JAR" -type f -print -quit)" ] && return 0
  local entries e
  IFS=: read -r -a entries <"$CPFILE" || true
  for e in "${entries[@]}"; do [ -e "$e" ] || return 0; done
  return 1
}

if stale; then
  log="$HERE/target/build-jar.log"
  if ! timeout "$LIMIT" mvn -q -B -Dstyle.color=never -f "$HERE/pom.xml" package dependency:build-classpath \
      -Dmdep.outputFile="$CPFILE" >"$log" 2>&1; then
    cat "$log" >&2
    echo "FAILED: building $JAR and Kafka's class path with Maven (log $log)" >&2
    exit 1
  fi
fi
