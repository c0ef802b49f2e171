#!/usr/bin/env bash
# The replay race (make bench-kafka): Kafka 4.4.0's own serde and store against rlmeta's decoder
# and store on the same bytes, single-threaded, the two sides interleaved in one run. Installs what
# it needs (a JDK, Maven, the Kafka jars from Maven Central), generates two histories with Kafka's
# classes (tests/interop/.../race/Race.java), runs both sides, checks they end in the same state
# (live segments, states, epochs, every epoch's highest offset, every lookup's answer) and prints
# one table with ratios (tests/interop/race/report.py). Not part of `make test`.
#
# Environment: RACE_OUT (build/race), RACE_ROUNDS (measured rounds per warm process, 3),
# RACE_WARM (warm processes per side and shape, 2), RACE_COLD (fresh processes per side and shape, 2),
# RACE_TUNED=1 also runs Kafka warm on a JVM tuned for it (ParallelGC, 4 GB heap).
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${RACE_OUT:-build/race}
ROUNDS=${RACE_ROUNDS:-3}
WARM=${RACE_WARM:-2}
COLD=${RACE_COLD:-2}
mkdir -p "$OUT"
RESULTS=$OUT/results.txt
: > "$RESULTS"

# Kafka's launcher (kafka-server-start.sh's heap, kafka-run-class.sh's performance options).
LAUNCHER_JVM="-Xmx1G -Xms1G -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true"
TUNED_JVM="-Xmx4G -Xms4G -server -XX:+UseParallelGC -Djava.awt.headless=true"

if ! command -v mvn >/dev/null || ! command -v jcmd >/dev/null; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jdk-headless maven
fi

echo "race: building both sides" >&2
mvn -q -B -f tests/interop/pom.xml compile dependency:build-classpath -Dmdep.outputFile="$PWD/$OUT/classpath.txt" >&2
CP=tests/interop/target/classes:$(cat "$OUT/classpath.txt")
RLMETA=$(cargo build -q --profile bench -p rlmeta --bench race --message-format=json \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "race" and m.get("executable"): print(m["executable"])')
kafka() { local flags=$1; shift; java $flags -cp "$CP" dev.rlmeta.interop.race.Race "$@"; }

for shape in one three; do
  f=$OUT/history-$shape.bin
  seed=$([ $shape = one ] && echo 1266 || echo 1267)
  kafka "$LAUNCHER_JVM" gen $shape $seed "$f" | tee -a "$RESULTS" >&2
  for i in $(seq "$COLD"); do
    echo "race: $shape, first pass in a fresh process, round $i" >&2
    kafka "$LAUNCHER_JVM" cold "$f" >> "$RESULTS"
    "$RLMETA" cold "$f" >> "$RESULTS"
  done
  for i in $(seq "$WARM"); do
    echo "race: $shape, warm, process $i" >&2
    kafka "$LAUNCHER_JVM" warm "$f" "$ROUNDS" "$OUT/state-kafka-$shape.txt" >> "$RESULTS"
    "$RLMETA" warm "$f" "$ROUNDS" "$OUT/state-rlmeta-$shape.txt" >> "$RESULTS"
    if ! cmp -s <(sort "$OUT/state-kafka-$shape.txt") <(sort "$OUT/state-rlmeta-$shape.txt"); then
      echo "race: $shape: rlmeta and Kafka end in different states:" >&2
      diff <(sort "$OUT/state-kafka-$shape.txt") <(sort "$OUT/state-rlmeta-$shape.txt") | head -20 >&2
      exit 1
    fi
    echo "RESULT check $shape same_state $(wc -l < "$OUT/state-kafka-$shape.txt")" >> "$RESULTS"
  done
  if [ "${RACE_TUNED:-0}" = 1 ]; then
    kafka "$TUNED_JVM" warm "$f" "$ROUNDS" "$OUT/state-kafka-tuned-$shape.txt" | sed 's/^RESULT kafka /RESULT kafka-tuned /' >> "$RESULTS"
  fi
done
python3 tests/interop/race/report.py "$RESULTS"
