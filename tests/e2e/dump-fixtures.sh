#!/usr/bin/env bash
# Kafka 4.4.0's own DumpLogSegments (org.apache.kafka.tools.DumpLogSegments, the class behind
# kafka-dump-log; jars from Maven Central) over every segment file under tests/fixtures, in two
# runs of one JVM each, written to OUTDIR:
#   rlmd.txt  --remote-log-metadata-decoder: batches, records and each value as Kafka's serde reads
#             it (its toString, or its error)
#   hex.txt   --deep-iteration --print-data-log with dev.rlmeta.e2e.HexDecoder for keys and values:
#             the same batches and records, each key and value as the bytes Kafka's reader gave
# The inspector page's tests (bindings-wasm/inspector/tests/kafka.test.mjs) compare the page and
# inspect --json with these, field by field. Run from anywhere; no broker.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${1:?usage: dump-fixtures.sh OUTDIR}"
mkdir -p "$OUT"
JAR="$HERE/target/rlmeta-e2e-0.1.0.jar"
CPFILE="$HERE/target/classpath.txt"
"$HERE/build-jar.sh"
CP="$(cat "$CPFILE"):$JAR"
cd "$ROOT"
FILES="$(find tests/fixtures -name '*.log' -type f | LC_ALL=C sort | paste -sd, -)"
[ -n "$FILES" ] || { echo "dump-fixtures: no segment files under tests/fixtures" >&2; exit 1; }
dump() {
  timeout 180 java -Xmx256m -Dlog4j2.level=WARN -cp "$CP" org.apache.kafka.tools.DumpLogSegments "$@" --files "$FILES"
}
dump --remote-log-metadata-decoder >"$OUT/rlmd.txt"
dump --deep-iteration --print-data-log --key-decoder-class dev.rlmeta.e2e.HexDecoder \
  --value-decoder-class dev.rlmeta.e2e.HexDecoder >"$OUT/hex.txt"
n=$(grep -c '^Dumping ' "$OUT/hex.txt" || true)
[ "$n" = "$(tr ',' '\n' <<<"$FILES" | wc -l)" ] || { echo "dump-fixtures: Kafka dumped $n of the files" >&2; exit 1; }
echo "dump-fixtures: Kafka 4.4.0's DumpLogSegments read $n segment files ($(grep -c '^| offset' "$OUT/hex.txt") records) into $OUT"
