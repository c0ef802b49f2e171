#!/usr/bin/env bash
# Re-runs Kafka 4.4.0's own kafka-dump-log on the committed fixture files and checks that the
# output equals the committed golden dumps (tests/fixtures/broker/dump/). No broker needed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FIX="$HERE/../fixtures/broker"
CPFILE="$HERE/target/classpath.txt"
"$HERE/build-jar.sh"
CP="$(cat "$CPFILE")"
fail=0; n=0
while IFS= read -r f; do
  dir="$(dirname "$FIX/$f")"; base="$(basename "$f")"; part="$(basename "$dir")"
  case "$base" in *.log) opt=--remote-log-metadata-decoder ;; *) opt=--cluster-metadata-decoder ;; esac
  golden="$FIX/dump/$part-$base.txt"
  if (cd "$dir" && timeout 120 java -Dlog4j2.level=WARN -cp "$CP" org.apache.kafka.tools.DumpLogSegments \
        "$opt" --files "$base" 2>/dev/null) | diff -u "$golden" - >/dev/null; then
    echo "ok   $f"
  else
    echo "DIFF $f (vs $golden)"; fail=$((fail + 1))
  fi
  n=$((n + 1))
done < <(cd "$FIX" && find remote_log_metadata cluster_metadata -type f \( -name '*.log' -o -name '*.checkpoint' \) | sort)
[ "$n" -gt 0 ] || { echo "no fixture files found under $FIX" >&2; exit 1; }
echo "$((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
