#!/usr/bin/env bash
# glibc-check.sh MAX FILE...
# Every GLIBC_x.y version that each ELF file needs (readelf -V: its .gnu.version_r section, the
# versions the dynamic loader checks at load time) must be MAX or older. Prints each file's
# machine, its GLIBC versions and the symbols bound to the newest one (readelf --dyn-syms), then a
# counted line; exits 1 if any file needs a newer glibc, or is not a dynamically linked ELF file.
set -euo pipefail
max=$1; shift
pass=0; fail=0
newer() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]; }
for f in "$@"; do
  if ! machine=$(readelf -h "$f" 2>/dev/null | sed -n 's/^ *Machine: *//p') || [ -z "$machine" ]; then
    echo "  $f: not an ELF file"; fail=$((fail + 1)); continue
  fi
  versions=$(readelf -V -W "$f" | grep -o 'Name: GLIBC_[0-9][0-9.]*' | sed 's/Name: GLIBC_//' | sort -uV || true)
  if [ -z "$versions" ]; then
    echo "  $f ($machine): needs no versioned glibc symbol (not dynamically linked against glibc?)"; fail=$((fail + 1)); continue
  fi
  newest=$(tail -n 1 <<<"$versions")
  syms=$(readelf --dyn-syms -W "$f" | awk -v v="@GLIBC_$newest" '$8 ~ v"$" || $8 ~ v" " { sub(/@.*/, "", $8); print $8 }' | sort -u | head -n 5 | paste -sd, -)
  line="  $f ($machine): GLIBC $(paste -sd' ' <<<"$versions"); newest $newest (${syms:-no symbol})"
  if newer "$newest" "$max"; then
    echo "$line: NEWER than $max"; fail=$((fail + 1))
  else
    echo "$line"; pass=$((pass + 1))
  fi
done
echo "glibc-check (GLIBC <= $max): $pass passed, $fail failed"
[ "$fail" = 0 ]
