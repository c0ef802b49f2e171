#!/usr/bin/env bash
# One lane of `make test`: runs make targets one after another, each in its own `make` with the
# arguments given after `--` (the lane's -o list and its tests/cluster build directory), timed,
# and goes on after a failure so that one run reports every failing suite. Targets named in
# LANE_AFTER_SETUP wait first for the setup lane's verdict in LANE_SETUP ("ok" or "failed", written
# once the wasm-bindgen CLI, valgrind, the arm64 user land and the wheel are installed); if it says
# failed (or says nothing within an hour) they are reported as not run. After a failed target it asks
# tools/disk-check.sh whether the disk is full. Exits 1 if any target failed.
# It owns the order and the timing of a lane; what a target does is the Makefile's.
#
# Usage: tools/test-lane.sh NAME START_EPOCH TARGET... -- MAKE_ARG...
# Env: LANE_AFTER_SETUP (space-separated targets), LANE_SETUP (the verdict file), MAKE (default make).
set -uo pipefail
name="$1" start="$2"
shift 2
targets=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do targets+=("$1"); shift; done
[ $# -gt 0 ] && shift
make_args=("$@")
after=" ${LANE_AFTER_SETUP:-} "
rc=0
for t in "${targets[@]}"; do
  if [[ "$after" == *" $t "* ]]; then
    if [ ! -s "$LANE_SETUP" ]; then
      w=$(date +%s)
      echo "$name: $t waits for the setup lane"
      until [ -s "$LANE_SETUP" ] || [ $(( $(date +%s) - w )) -gt 3600 ]; do sleep 2; done
      echo "$name: the setup lane says $(cat "$LANE_SETUP" 2>/dev/null || echo 'nothing after 3600 s') (waited $(( $(date +%s) - w )) s)"
    fi
    if [ "$(cat "$LANE_SETUP" 2>/dev/null)" != ok ]; then
      echo "FAILED: $t (not run: the setup it needs failed)"
      rc=1
      continue
    fi
  fi
  s=$(date +%s)
  if "${MAKE:-make}" "${make_args[@]}" "$t"; then verdict=passed; else verdict=FAILED; rc=1; tools/disk-check.sh failed; fi
  echo "$name: $t $verdict in $(( $(date +%s) - s )) s (ended $(( $(date +%s) - start )) s after the lanes' start)"
done
exit $rc
