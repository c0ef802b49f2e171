#!/usr/bin/env bash
# make bench-cold-test (issue 32): `make test` as a fresh machine runs it, as near as one machine gets.
# A clean clone of HEAD runs `.ci/run` with every download cache empty: cargo's home (registry, git,
# installed binaries such as wasm-bindgen), Maven's local repository, pip's and npm's caches, all in a
# new directory; the Debian packages and rustup targets that `make test` installs are removed first, so
# its setup installs them again. What it does not redo: rustup's toolchain, Java, Maven, Node and
# Python themselves (the machine's base, as toolchain.md lists it), and apt's package lists when they
# are present. A measurement: prints the wall time and per-target start times, asserts nothing.
# Destructive for the machine: removes valgrind, qemu-user-static, libc6-arm64-cross,
# chromium-headless-shell and the wasm32/aarch64 rustup targets (the run installs them again).
# It also samples the disk the clone and its caches take (every 30 s) and prints the peak. Its log is
# copied to build/bench-cold-test.log and its directory deleted at the end (a cold run leaves about
# 7 GiB, and kept runs filled the disk a CI run then needed), unless COLD_KEEP=1.
# Env: COLD_DIR (default: a new mktemp -d), COLD_KEEP_APT=1 keeps the Debian packages,
#      COLD_KEEP=1 keeps the directory.
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
T="${COLD_DIR:-$(mktemp -d /tmp/rlmeta-cold.XXXXXX)}"
mkdir -p "$T/bin"
echo "[cold] caches and clone under $T"
# cargo and rustup by rustup's proxies, without ~/.cargo/bin on PATH (its binaries are a warm cache)
for tool in cargo rustc rustup rustfmt cargo-fmt cargo-clippy clippy-driver rustdoc; do
  ln -sf "$(command -v rustup)" "$T/bin/$tool"
done
clean_path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -vx "$HOME/.cargo/bin" | paste -sd:)
if [ "${COLD_KEEP_APT:-0}" != 1 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get remove -y -q valgrind qemu-user-static libc6-arm64-cross \
    chromium-headless-shell >"$T/apt-remove.log" 2>&1 || true
  apt-get clean
fi
rustup target remove wasm32-unknown-unknown aarch64-unknown-linux-gnu >"$T/rustup-remove.log" 2>&1 || true
git clone -q "$src" "$T/clone"
cd "$T/clone"
start=$(date +%s)
( while sleep 30; do du -sk "$T" 2>/dev/null | cut -f1; done >"$T/disk-kib.log" ) &
sampler=$!
set +e
env PATH="$T/cargo/bin:$T/bin:$clean_path" CARGO_HOME="$T/cargo" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" \
  MAVEN_OPTS="-Dmaven.repo.local=$T/m2" PIP_CACHE_DIR="$T/pip" npm_config_cache="$T/npm" \
  bash .ci/run 2>&1 | while IFS= read -r line; do printf '%s +%ss %s\n' "$(date +%T)" $(( $(date +%s) - start )) "$line"; done \
  >"$T/run.log"
rc=${PIPESTATUS[0]}
set -e
end=$(date +%s)
kill "$sampler" 2>/dev/null || true
peak_kib=$(sort -n "$T/disk-kib.log" | tail -n 1)
grep -E 'FAILED|passed|^[0-9:]+ \+[0-9]+s make' "$T/run.log" | tail -n 40 || true
mkdir -p "$src/build" && cp "$T/run.log" "$src/build/bench-cold-test.log"
echo "[cold] .ci/run exit status $rc after $(( end - start )) s ($(( (end - start) / 60 )) min $(( (end - start) % 60 )) s);" \
  "the clone and its caches took at most $(( ${peak_kib:-0} / 1024 )) MiB; log $src/build/bench-cold-test.log"
if [ "${COLD_KEEP:-0}" = 1 ]; then echo "[cold] kept $T"; else rm -rf "$T"; fi
exit "$rc"
