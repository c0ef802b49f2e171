# Python binding (included by the top Makefile, run from the repository root).
# py-test builds the abi3 wheel with maturin, installs it into $(VENV) and runs pytest on the
# installed package (never on bindings-python/python/). Idempotent: every run rebuilds (cargo is
# incremental) and reinstalls.
# PY_PROFILE: debug (default; on 2 cores a cold wheel takes about 16 s, against 26 s for release
# with its LTO, and 1.3 s against 6.3 s after an edit) or release (what a published wheel uses).
# maturin builds in its own target dir: it sets PYO3_BUILD_EXTENSION_MODULE and PYO3_CONFIG_FILE,
# which would make every plain cargo build and maturin build in target/ rebuild pyo3 (~8 s each).

PY_DIR     := bindings-python
PY_WHEELS  := $(BUILD)/wheels
PY_PROFILE ?= debug
PY_MATURIN_PROFILE := $(if $(filter release,$(PY_PROFILE)),--release,)
PY_TARGET_DIR := target/maturin

# The operator tools' runtime dependencies, as in pyproject.toml (the wheel itself is installed
# with --no-deps --no-index): kafka-python and tqdm pinned; pyjks and cryptography (the stores a
# --command-config names) are ranges there, the versions tested here pinned.
PY_RUNTIME_DEPS := kafka-python==3.0.12 tqdm==4.70.1 pyjks==20.0.0 cryptography==50.0.2

.PHONY: py-wheel py-install py-test py-deps

py-deps:
	@# one `pip show` per package: with several names it succeeds when any one is installed
	@for p in $(PY_RUNTIME_DEPS); do $(VPY) -m pip show -q $${p%%==*} >/dev/null 2>&1 || \
	  { $(VPY) -m pip install -q $(PY_RUNTIME_DEPS); break; }; done

py-wheel: | $(BUILD)
	@[ -x $(VENV)/bin/maturin ] || { echo "no maturin in $(VENV): run make setup-py"; exit 1; }
	rm -f $(PY_WHEELS)/rlmeta-*.whl
	cd $(PY_DIR) && ../$(VENV)/bin/maturin build -q $(PY_MATURIN_PROFILE) -i ../$(VPY) --target-dir ../$(PY_TARGET_DIR) -o ../$(PY_WHEELS)

py-install: py-wheel py-deps
	$(VPY) -m pip install -q --no-deps --no-index --force-reinstall $(PY_WHEELS)/rlmeta-*.whl

py-test: py-install
	RLMETA_VECTORS="$(abspath $(VECTORS))" PYTHONDONTWRITEBYTECODE=1 $(VPY) -m pytest -q $(PY_DIR)/tests

BINDING_TESTS += py-test

# Scan speed of a large segment file, Python API vs the Rust example (a benchmark, not a test;
# numbers in docs/BENCHMARKS.md). Builds the release wheel and the release example first.
.PHONY: py-bench
py-bench:
	$(MAKE) py-install PY_PROFILE=release
	$(CARGO) build -q --release -p rlmeta-examples --bin inspect
	$(VPY) $(PY_DIR)/bench/scan_bench.py
