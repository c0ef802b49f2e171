#!/usr/bin/env bash
# How much room `make test` has on the disks it writes: the repository (target/, .venv, build/,
# brokers' log dirs under tests/cluster) and $HOME (cargo's registry, ~/.m2, the Kafka downloads).
# It only reports: it never deletes anything and never fails a run.
#
# Usage: tools/disk-check.sh start   before `make test`: prints what is free, warns below $NEED_GIB
#                                    (default 10)
#        tools/disk-check.sh failed  after a failed target: says so if a disk is (nearly) full,
#                                    since a full disk fails every suite after it in odd ways
set -uo pipefail
mode="${1:-start}"
need_gib="${NEED_GIB:-10}"
seen=" "
for dir in . "$HOME"; do
  read -r fs free_kib < <(df -Pk "$dir" 2>/dev/null | awk 'NR == 2 { print $1, $4 }')
  [ -n "${free_kib:-}" ] || continue
  [[ "$seen" == *" $fs "* ]] && continue
  seen+="$fs "
  free_mib=$(( free_kib / 1024 ))
  if [ "$mode" = start ]; then
    echo "make test: $free_mib MiB free on the disk holding $dir"
    if [ "$free_mib" -lt $(( need_gib * 1024 )) ]; then
      echo "WARNING: a cold make test writes up to about $need_gib GiB (README.md); with less," \
        "suites will fail with 'No space left on device'"
    fi
  elif [ "$free_mib" -lt 1024 ]; then
    echo "NOTE: only $free_mib MiB free on the disk holding $dir: this failure may be a full disk"
  fi
done
exit 0
