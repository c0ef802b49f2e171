#!/usr/bin/env bash
# make bench-tools-scale: the migration tool on the scale generator's topic (issue 33's aim: a 10 M-record
# stock topic read with peak memory <= 300 MB). Starts `make scale-data` holding its broker, then times
# `kafka-remote-log-metadata-migration --check` and `--check --backfill`, and `rlmeta scan`, `inspect` (its
# listing to /dev/null) and `simulate` with --bootstrap-server, against it with GNU time (wall time and peak
# RSS of the tool's process), and prints one line per run, after the reference: Kafka's own Java consumer
# reading the same topic to its end (timed by the generator, three runs). A measurement: it asserts nothing.
# Env: SCALE_RECORDS (default 10000000), BENCH_HOLD_SECONDS (default 1800), TOOLS_SCALE_RLMETA (default
# "scan inspect simulate": the rlmeta commands timed after the migration; empty for the migration only),
# TOOLS_SCALE_HELD=1 (time against the broker a running `make scale-data` holds, build/scale-bootstrap.txt).
set -euo pipefail
cd "$(dirname "$0")/../.."
BOOT=build/scale-bootstrap.txt
if [ "${TOOLS_SCALE_HELD:-0}" = 1 ]; then
  # a generator already holding its broker (make scale-data with -Drlmeta.scale.hold.seconds): time again
  [ -s "$BOOT" ] || { echo "TOOLS_SCALE_HELD=1 but no $BOOT"; exit 1; }
else
  rm -f "$BOOT"
  HOLD="${BENCH_HOLD_SECONDS:-1800}"
  setsid make scale-data SCALE_EXTRA="-Drlmeta.scale.hold.seconds=$HOLD -Drlmeta.scale.bootstrap.file=$PWD/$BOOT" &
  GEN=$!
  # the generator, its maven and its broker: one process group, stopped together (run.sh kills its brokers on TERM)
  trap 'kill -TERM -- -$GEN 2>/dev/null || true; wait $GEN 2>/dev/null || true' EXIT
  for _ in $(seq 1 1800); do [ -s "$BOOT" ] && break; kill -0 $GEN 2>/dev/null || { echo "scale-data ended first"; exit 1; }; sleep 1; done
  [ -s "$BOOT" ] || { echo "no broker after 30 min"; exit 1; }
fi
BS=$(cat "$BOOT")
cat "$BOOT.reference"
TOOL=.venv/bin/kafka-remote-log-metadata-migration
for args in "--check" "--check --backfill"; do
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %M" -o build/tools-scale.time "$TOOL" --bootstrap-server "$BS" --no-progress $args \
    >build/tools-scale.out 2>build/tools-scale.err || true
  read -r wall rss < <(tail -n 1 build/tools-scale.time)  # a failing tool adds a status line first
  total=$(grep -o 'Total messages scanned: [0-9]*' build/tools-scale.out | grep -o '[0-9]*$' || true)
  live=$(grep -o 'Live segments: [0-9]*' build/tools-scale.out | grep -o '[0-9]*$' || true)
  echo "[tools-scale] migration $args: ${wall} s wall, peak RSS $((rss / 1024)) MB; ${total:+$total records scanned}${live:+$live live segments verified}"
done
for cmd in ${TOOLS_SCALE_RLMETA-scan inspect simulate}; do
  # inspect lists every record (gigabytes at 10 M): counted, not kept
  if [ "$cmd" = inspect ]; then out=/dev/null; else out=build/tools-scale-$cmd.out; fi
  /usr/bin/time -f "%e %M" -o build/tools-scale.time .venv/bin/rlmeta "$cmd" --bootstrap-server "$BS" --no-progress \
    --timeout-ms 60000 2>build/tools-scale.err | tee "$out" | wc -c >build/tools-scale.bytes \
    || echo "(exit status $?: $(tail -n 1 build/tools-scale.err))"
  read -r wall rss < <(tail -n 1 build/tools-scale.time)  # a failing tool adds a status line first
  echo "[tools-scale] rlmeta $cmd --bootstrap-server: ${wall} s wall, peak RSS $((rss / 1024)) MB; $(cat build/tools-scale.bytes) bytes of output"
done
