#!/usr/bin/env bash
# Runs Kafka 4.4.0's own kafka-dump-log --remote-log-metadata-decoder on every crafted fixture
# (tests/fixtures/crafted/<case>/__remote_log_metadata-0/*.log) and writes its output to
# OUTDIR/<case>.txt (default: tests/fixtures/crafted/dump, the committed goldens). No broker.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$HERE/../fixtures/crafted"
OUT="${1:-$SRC/dump}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
CPFILE="$HERE/target/classpath.txt"
"$HERE/build-jar.sh"
CP="$(cat "$CPFILE")"
for dir in "$SRC"/*/__remote_log_metadata-0; do
  case_name="$(basename "$(dirname "$dir")")"
  (cd "$dir" && timeout 120 java -Dlog4j2.level=WARN -cp "$CP" org.apache.kafka.tools.DumpLogSegments \
     --remote-log-metadata-decoder --files 00000000000000000000.log 2>/dev/null) > "$OUT/$case_name.txt"
done
echo "dumped $(ls "$SRC" | grep -vc '^dump$') crafted files into $OUT"
