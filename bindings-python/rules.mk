# Python binding (included by the top Makefile, run from the repository root).
# py-test builds the abi3 wheel with maturin, installs it into $(VENV) and runs pytest on the
# installed package (never on bindings-python/python/). Idempotent: every run rebuilds (cargo is
# incremental) and reinstalls.
# PY_PROFILE: portable (default: the release manylinux2014 x86_64 wheel that `make wheels` ships,
# linked by zig against glibc 2.17; the same cargo build, so make test builds it once), debug (on 2
# cores a cold wheel takes about 16 s, against 26 s for release with its LTO, and 1.3 s against
# 6.3 s after an edit) or release (host glibc, tagged manylinux_2_34).
# maturin builds in its own target dir: it sets PYO3_BUILD_EXTENSION_MODULE and PYO3_CONFIG_FILE,
# which would make every plain cargo build and maturin build in target/ rebuild pyo3 (~8 s each).

PY_DIR     := bindings-python
PY_WHEELS  := $(BUILD)/wheels
PY_PROFILE ?= portable
PY_PORTABLE = --release --zig --compatibility manylinux2014 --target $(1)-unknown-linux-gnu
PY_MATURIN_PROFILE := $(if $(filter release,$(PY_PROFILE)),--release,$(if $(filter portable,$(PY_PROFILE)),$(call PY_PORTABLE,x86_64),))
PY_TARGET_DIR := target/maturin

# The operator tools' runtime dependencies, as in pyproject.toml (the wheel itself is installed
# with --no-deps --no-index): kafka-python (with crc32c, its C CRC-32C), tqdm, boto3 and botocore pinned; pyjks and cryptography (the stores a
# --command-config names) are ranges there, the versions tested here pinned.
PY_RUNTIME_DEPS := kafka-python==3.0.12 crc32c==2.9.post0 tqdm==4.70.1 pyjks==20.0.0 cryptography==50.0.2 boto3==1.44.5 botocore==1.44.8
# Test only: kafka-python's snappy, lz4 and zstd codecs, so that its record reader is a second
# reference for every crafted fixture (tests/test_kafka_python_reader.py).
PY_TEST_DEPS := lz4==4.4.5 zstandard==0.25.0 python-snappy==0.7.3 cramjam==2.14.0 pyarrow==26.0.1 \
  google-cloud-storage==3.17.1 azure-storage-blob==12.31.1 gcp-storage-emulator==2026.7.19 duckdb==2.0.1
# (pyarrow, google-cloud-storage and azure-storage-blob are also the optional `inventory`, `gcs` and
# `azure` extras of pyproject.toml: reconcile --inventory of ORC and Parquet reports, gs:// and az://
# stores; gcp-storage-emulator is the tests' GCS server, Azurite (package.json) their Azure one)
# The tests' own: moto's S3 server (rlmeta reconcile against a real S3-compatible endpoint).
MOTO_VERSION := 5.2.5

.PHONY: py-wheel py-install py-test py-deps

py-deps:
	@# one `pip show` per package: with several names it succeeds when any one is installed
	@for p in $(PY_RUNTIME_DEPS) $(PY_TEST_DEPS); do $(VPY) -m pip show -q $${p%%==*} >/dev/null 2>&1 || \
	  { $(VPY) -m pip install -q $(PY_RUNTIME_DEPS) $(PY_TEST_DEPS); break; }; done
	@$(VPY) -m pip show moto 2>/dev/null | grep -qx 'Version: $(MOTO_VERSION)' || $(VPY) -m pip install -q 'moto[server]==$(MOTO_VERSION)'

py-wheel: | $(BUILD)
	@[ -x $(VENV)/bin/maturin ] || { echo "no maturin in $(VENV): run make setup-py"; exit 1; }
	rm -f $(PY_WHEELS)/rlmeta-*.whl
	cd $(PY_DIR) && $(X_PATH) ../$(VENV)/bin/maturin build -q $(PY_MATURIN_PROFILE) -i ../$(VPY) --target-dir ../$(PY_TARGET_DIR) -o ../$(PY_WHEELS)

py-install: py-wheel py-deps
	$(VPY) -m pip install -q --no-deps --no-index --force-reinstall $(PY_WHEELS)/rlmeta-*.whl

# RLMETA_INSPECT: the Rust example the agreement tests compare scan and simulate with (examples-test
# builds the same release binary, so this costs nothing in make test). RLMETA_C_LIB: the C
# binding's shared library (c-test builds the same debug library), whose packed apply is the
# plugin's store path: the agreement tests take the plugin's counts from it.
py-test: py-install
	$(CARGO) build -q --release -p rlmeta-examples --bin inspect
	$(CARGO) build -q -p rlmeta-c
	RLMETA_VECTORS="$(abspath $(VECTORS))" RLMETA_INSPECT="$(abspath target/release/inspect)" RLMETA_C_LIB="$(abspath $(C_LIBDIR)/librlmeta_c.so)" PYTHONDONTWRITEBYTECODE=1 $(VPY) -m pytest -q -rs $(PY_DIR)/tests

BINDING_TESTS += py-test

# Scan speed of a large segment file, Python API vs the Rust example (a benchmark, not a test;
# numbers in docs/BENCHMARKS.md). Builds the release wheel and the release example first.
.PHONY: py-bench
py-bench:
	$(MAKE) py-install PY_PROFILE=release
	$(CARGO) build -q --release -p rlmeta-examples --bin inspect
	$(VPY) $(PY_DIR)/bench/scan_bench.py

# inspect, inspect --summary, simulate and profile on 1 GiB segments from gen_segment, keyed and
# null-key (a benchmark, not a test; figures in docs/BENCHMARKS.md): wall time and peak RSS by GNU
# time. STREAM_BENCH_RLMETA adds executables to compare (NAME=PATH, e.g. a venv of an older wheel).
STREAM_BENCH_DIR := $(BUILD)/bench-stream
.PHONY: bench-stream
bench-stream:
	$(MAKE) py-install PY_PROFILE=release
	$(CARGO) build -q --release -p rlmeta-examples --bin gen_segment
	@for shape in keyed nullkey; do d=$(STREAM_BENCH_DIR)/$$shape/__remote_log_metadata-0; mkdir -p $$d; \
	  [ -s $$d/00000000000000000000.log ] || target/release/gen_segment $$d/00000000000000000000.log 1024 \
	    $$([ $$shape = keyed ] && echo --keyed); done
	cd $(STREAM_BENCH_DIR) && $(abspath $(VPY)) $(abspath $(PY_DIR))/bench/stream_bench.py \
	  --rlmeta this=$(abspath $(VENV))/bin/rlmeta $(addprefix --rlmeta ,$(STREAM_BENCH_RLMETA)) keyed nullkey

# rlmeta scan and inspect --summary --bootstrap-server on a TOOLS_TOPIC_RECORDS-record topic (default 1 M) of a
# broker started here, the raw read against the per-record read it replaced (a benchmark, not a test;
# figures in docs/BENCHMARKS.md): wall time and peak RSS of each run's process, outputs compared.
.PHONY: bench-tools-topic
bench-tools-topic: py-install
	PYTHONDONTWRITEBYTECODE=1 $(VPY) $(PY_DIR)/bench/topic_bench.py

# reconcile --inventory at scale (a benchmark, not a test; figures in docs/BENCHMARKS.md): ROWS
# (default 100 M) Parquet inventory rows, PER_SEGMENT objects a segment, generated once under
# build/bench-inventory, classified with the release wheel; wall time and peak RSS.
.PHONY: bench-reconcile-inventory
bench-reconcile-inventory:
	$(MAKE) py-install PY_PROFILE=release
	PYTHONDONTWRITEBYTECODE=1 $(VPY) $(PY_DIR)/bench/reconcile_inventory_bench.py

# ---------------------------------------------------------------- portable wheels (issue 18)
#   wheels          manylinux2014 wheels for x86_64 and aarch64 (maturin --zig: glibc 2.17) and the
#                   sdist, in $(PY_DIST); auditwheel show must find each wheel consistent with
#                   manylinux_2_17 (= manylinux2014) of its arch, and the file name must carry that tag
#   wheel-aarch64-test  (in make test) the aarch64 wheel in an aarch64 CPython (Debian's python3.11:arm64, make
#                   setup-arm64) under qemu-aarch64: import, then the vector tests
#   wheel-py39-test (in make test) py-test's wheel (with PY_PROFILE=portable, the manylinux2014
#                   x86_64 one) in a fresh venv of CPython 3.9 (the oldest requires-python
#                   allows): `rlmeta scan --json` of a real broker's segment equals the same wheel's
#                   answer on $(VENV)'s Python; `kafka-remote-log-metadata-migration --help` runs
#   sdist-test      (in make test, after the wheels; also `make cross-test`: a full release build from
#                   source, about a minute) the sdist installs with pip in a fresh venv and its module
#                   decodes a vector
PY_DIST      := $(BUILD)/dist
# the wheels' names (expanded when a recipe runs, after `wheels` made them)
PY_WHEEL_aarch64 = $(wildcard $(PY_DIST)/rlmeta-*-cp39-abi3-*manylinux2014_aarch64*.whl)
# pyenv's CPython 3.9 (preinstalled on this machine kind; neither Debian 12 nor PyPI has a 3.9)
PY39         ?= $(shell pyenv root 2>/dev/null)/versions/3.9.18/bin/python3.9
ARM64_PY     := qemu-aarch64-static -L $(ARM64_ROOT) $(ARM64_ROOT)/usr/bin/python3.11
PY_SEGMENT   := tests/fixtures/broker/remote_log_metadata/__remote_log_metadata-2/00000000000000000000.log

.PHONY: wheels wheel-aarch64-test wheel-py39-test sdist-test

wheels: | $(BUILD)
	@[ -x $(VENV)/bin/auditwheel ] || { echo "no auditwheel in $(VENV): run make setup-cross"; exit 1; }
	@rm -rf $(PY_DIST)
	@for a in $(X_ARCHES); do (cd $(PY_DIR) && $(X_PATH) ../$(VENV)/bin/maturin build -q $(call PY_PORTABLE,$$a) \
	  --target-dir ../$(PY_TARGET_DIR) -o ../$(PY_DIST)) >$(BUILD)/wheel-$$a.log 2>&1 || { cat $(BUILD)/wheel-$$a.log; echo "FAILED: wheel $$a"; exit 1; }; done
	@(cd $(PY_DIR) && ../$(VENV)/bin/maturin sdist -o ../$(PY_DIST)) >$(BUILD)/sdist.log 2>&1 || { cat $(BUILD)/sdist.log; echo "FAILED: sdist"; exit 1; }
	@pass=0; fail=0; for a in $(X_ARCHES); do w=$$(ls $(PY_DIST)/rlmeta-*-cp39-abi3-*manylinux2014_$$a*.whl 2>/dev/null || true); \
	  if [ "$$(wc -w <<<"$$w")" != 1 ]; then echo "  $$a: not one manylinux2014_$$a wheel (built: $$(ls $(PY_DIST)))"; fail=$$((fail + 1)); continue; fi; \
	  show=$$($(VENV)/bin/auditwheel show $$w 2>&1) || true; \
	  if tr '\n' ' ' <<<"$$show" | grep -c "consistent with the following platform tag: *\"manylinux_2_17_$$a\"" >/dev/null; then \
	    echo "  $$(basename $$w): $$(du -k $$w | cut -f1) KiB; auditwheel: manylinux_2_17_$$a (manylinux2014)"; pass=$$((pass + 1)); \
	  else printf '%s\n' "$$show"; echo "  $$a: auditwheel does not find $$w consistent with manylinux2014"; fail=$$((fail + 1)); fi; done; \
	  sd=$$(ls $(PY_DIST)/rlmeta-*.tar.gz 2>/dev/null || true); if [ "$$(wc -w <<<"$$sd")" = 1 ] && tar -tzf $$sd | grep -c '^rlmeta-[^/]*/core/src/lib.rs$$' >/dev/null; then \
	    echo "  $$(basename $$sd): $$(du -k $$sd | cut -f1) KiB, with the core crate's sources"; pass=$$((pass + 1)); \
	  else echo "  no sdist with the core sources: $$(ls $(PY_DIST))"; fail=$$((fail + 1)); fi; \
	  echo "wheels: $$pass passed, $$fail failed"; [ $$fail = 0 ]

wheel-aarch64-test: wheels setup-arm64
	@rm -rf $(BUILD)/arm64-site
	@# the wheel without its dependencies: the vector tests need the codec only, and the tools' pyjks
	@# needs twofish, which PyPI has as an sdist alone (no aarch64 wheel to install across arches)
	@$(VPY) -m pip install -q --target $(BUILD)/arm64-site --platform manylinux2014_aarch64 --python-version 3.11 \
	  --implementation cp --only-binary=:all: pytest==$(PYTEST_VERSION) >$(BUILD)/arm64-site.log 2>&1 \
	  && $(VPY) -m pip install -q --target $(BUILD)/arm64-site --platform manylinux2014_aarch64 --python-version 3.11 \
	  --implementation cp --only-binary=:all: --no-deps $(PY_WHEEL_aarch64) >>$(BUILD)/arm64-site.log 2>&1 \
	  || { cat $(BUILD)/arm64-site.log; echo "FAILED: pip install for aarch64"; exit 1; }
	@readelf -h $(BUILD)/arm64-site/rlmeta/_native.abi3.so | grep -q 'Machine:.*AArch64' || { echo "FAILED: the installed _native is not AArch64"; exit 1; }
	@PYTHONPATH=$(BUILD)/arm64-site $(ARM64_PY) -c 'import platform, rlmeta, rlmeta._native as n; assert platform.machine() == "aarch64"; \
	  assert n.__file__.startswith("$(CURDIR)/$(BUILD)/arm64-site/"), n.__file__; print("wheel-aarch64-test: import rlmeta", rlmeta.__version__, "on", platform.machine(), "CPython", platform.python_version())'
	@start=$$(date +%s.%N); out=$$(RLMETA_VECTORS="$(abspath $(VECTORS))" PYTHONPATH=$(BUILD)/arm64-site PYTHONDONTWRITEBYTECODE=1 \
	  $(ARM64_PY) -m pytest -q -p no:cacheprovider $(PY_DIR)/tests/test_vectors.py 2>&1) || { printf '%s\n' "$$out" | tail -n 40; echo "FAILED: wheel-aarch64-test"; exit 1; }; \
	  last=$$(printf '%s\n' "$$out" | tail -n 1); n() { grep -o "[0-9]* $$1" <<<"$$last" | cut -d' ' -f1 || echo 0; }; \
	  echo "wheel-aarch64-test vectors under qemu-aarch64: $$(n passed) passed, $$(( $$(n failed) + $$(n error) )) failed ($$(printf '%.1f' $$(echo "$$(date +%s.%N) - $$start" | bc)) s; pytest: $$last)"

wheel-py39-test: py-install
	@[ -x "$(PY39)" ] || { echo "FAILED: no CPython 3.9 at $(PY39) (PY39=<python3.9> to name one)"; exit 1; }
	@[ "$(PY_PROFILE)" != portable ] || ls $(PY_WHEELS)/rlmeta-*-cp39-abi3-*manylinux2014_x86_64*.whl >/dev/null \
	  || { echo "FAILED: $(PY_WHEELS) has no manylinux2014 x86_64 wheel: $$(ls $(PY_WHEELS))"; exit 1; }
	@rm -rf $(BUILD)/venv39 && $(PY39) -m venv $(BUILD)/venv39
	@$(BUILD)/venv39/bin/python -m pip install -q --disable-pip-version-check $(PY_WHEELS)/rlmeta-*.whl >$(BUILD)/venv39.log 2>&1 \
	  || { cat $(BUILD)/venv39.log; echo "FAILED: pip install of the wheel into Python 3.9"; exit 1; }
	@pass=0; fail=0; v=$$($(BUILD)/venv39/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
	  [ "$$v" = 3.9 ] || { echo "FAILED: $(PY39) is Python $$v"; exit 1; }; \
	  if out=$$($(BUILD)/venv39/bin/rlmeta scan --json $(PY_SEGMENT) 2>&1) && ref=$$($(VENV)/bin/rlmeta scan --json $(PY_SEGMENT)) \
	    && [ "$$out" = "$$ref" ] && grep -q '"records": 12,' <<<"$$out"; then pass=$$((pass + 1)); \
	  else printf '%s\n' "$$out" | head -n 20; echo "  rlmeta scan --json on 3.9 differs from $(VENV)'s or does not count the segment's 12 records"; fail=$$((fail + 1)); fi; \
	  if out=$$($(BUILD)/venv39/bin/kafka-remote-log-metadata-migration --help 2>&1) && grep -q 'usage: kafka-remote-log-metadata-migration' <<<"$$out"; then pass=$$((pass + 1)); \
	  else printf '%s\n' "$$out"; echo "  kafka-remote-log-metadata-migration --help failed"; fail=$$((fail + 1)); fi; \
	  echo "wheel-py39-test (CPython $$($(BUILD)/venv39/bin/python -V | cut -d' ' -f2)): $$pass passed, $$fail failed"; [ $$fail = 0 ]

sdist-test: wheels
	@rm -rf $(BUILD)/venv-sdist && $(PYTHON) -m venv $(BUILD)/venv-sdist
	@start=$$(date +%s); $(BUILD)/venv-sdist/bin/python -m pip install -q --disable-pip-version-check $(wildcard $(PY_DIST)/rlmeta-*.tar.gz) \
	  >$(BUILD)/sdist-test.log 2>&1 || { cat $(BUILD)/sdist-test.log; echo "FAILED: pip install of the sdist"; exit 1; }; \
	  echo "sdist-test: pip install built the sdist in $$(( $$(date +%s) - start )) s"
	@cd $(BUILD) && venv-sdist/bin/python -c 'import json, rlmeta._native, rlmeta; c = json.load(open("../tests/vectors/v1.json"))["cases"][0]; \
	  got = json.loads(rlmeta.decode_value_json(bytes.fromhex(c["hex"]))); \
	  assert (got["apiKey"], got["version"], got["record"]) == (c["apiKey"], c["version"], c["record"]), got; print("sdist-test: 1 passed, 0 failed")'

BINDING_TESTS += wheel-py39-test
BINDING_TESTS += wheels wheel-aarch64-test sdist-test
CROSS_TESTS += sdist-test
