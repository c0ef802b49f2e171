# Fuzzing. Two ways to run the same five targets (fuzz/fuzz_targets, libFuzzer via libfuzzer-sys):
#   fuzz-smoke (in make test) builds them with the stable toolchain (libfuzzer-sys compiles libFuzzer
#     from its crate with the C++ compiler; the SanitizerCoverage instrumentation comes from stable
#     -C flags, no sanitizer) and runs each for FUZZ_SMOKE_SECONDS from the vector seeds and the kept
#     inputs. Nightly and cargo-fuzz are not needed: a fresh machine cannot download a toolchain, and
#     a cold build here (debug, ~30 s on 2 cores) costs less than building cargo-fuzz would.
#     A crash, a hang (-timeout) or a run that executed nothing fails it; the crashing input is kept
#     under build/fuzz-smoke/<target>/ (copy it into fuzz/regressions/<target>/ once fixed).
#   fuzz (not in make test) `make fuzz FUZZ_SECONDS=600`: long runs with nightly + cargo-fuzz
#     (AddressSanitizer), where nightly is installed.
# The regular test run also replays the kept inputs through core's tests: fuzz/regressions/value
# and key (crashers once found; core/tests/fuzz_regressions.rs), batch and checkpoint (the real and
# crafted segment and checkpoint files of tests/fixtures, as fuzz-seed writes them;
# core/tests/batch.rs). A missing or empty directory fails those tests. The json target keeps no
# inputs: its property is in its fuzz target only. `make fuzz-keep-seeds` rewrites batch/ and
# checkpoint/ from the fixtures.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := value key batch checkpoint json
.PHONY: fuzz fuzz-seed fuzz-keep-seeds fuzz-smoke
fuzz-seed:
	$(PYTHON) fuzz/seed_corpus.py tests/vectors fuzz/corpus
fuzz: fuzz-seed
	@if [ "$$(cargo fuzz --version 2>/dev/null | cut -d' ' -f2)" != "$(CARGO_FUZZ_VERSION)" ]; then \
	  $(CARGO) install cargo-fuzz --version $(CARGO_FUZZ_VERSION) --locked; fi
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  cargo +nightly fuzz run $$t corpus/$$t -- -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 || exit 1; done
fuzz-keep-seeds: | $(BUILD)
	rm -rf $(BUILD)/fuzz-seeds fuzz/regressions/batch fuzz/regressions/checkpoint
	$(PYTHON) fuzz/seed_corpus.py tests/vectors $(BUILD)/fuzz-seeds
	mkdir -p fuzz/regressions/batch fuzz/regressions/checkpoint
	cp $(BUILD)/fuzz-seeds/batch/* fuzz/regressions/batch/
	cp $(BUILD)/fuzz-seeds/checkpoint/* fuzz/regressions/checkpoint/

# The flags cargo-fuzz passes for `--sanitizer none`, all stable: coverage counters, comparison
# tracing, --cfg fuzzing; with debug assertions and overflow checks. --target keeps them off build
# scripts. Its own target dir: these flags would rebuild the workspace's every crate.
FUZZ_SMOKE_SECONDS ?= 2
FUZZ_SMOKE_DIR     := $(BUILD)/fuzz-smoke
FUZZ_HOST          := $(shell rustc -vV | sed -n 's/^host: //p')
FUZZ_SMOKE_BIN     := fuzz/target/smoke/$(FUZZ_HOST)/debug
FUZZ_RUSTFLAGS     := -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
  -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks
fuzz-smoke: | $(BUILD)
	@RUSTFLAGS="$(FUZZ_RUSTFLAGS)" $(CARGO) build -q --locked --manifest-path fuzz/Cargo.toml \
	  --target $(FUZZ_HOST) --target-dir fuzz/target/smoke --bins
	@rm -rf $(FUZZ_SMOKE_DIR) && mkdir -p $(FUZZ_SMOKE_DIR)
	@$(PYTHON) fuzz/seed_corpus.py tests/vectors $(FUZZ_SMOKE_DIR)/seeds
	@pass=0; fail=0; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_SMOKE_DIR)/$$t/new; kept=; [ -d fuzz/regressions/$$t ] && kept=fuzz/regressions/$$t; \
	  if $(FUZZ_SMOKE_BIN)/$$t $(FUZZ_SMOKE_DIR)/$$t/new $(FUZZ_SMOKE_DIR)/seeds/$$t $$kept \
	      -max_total_time=$(FUZZ_SMOKE_SECONDS) -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
	      -artifact_prefix=$(FUZZ_SMOKE_DIR)/$$t/ >$(FUZZ_SMOKE_DIR)/$$t.log 2>&1; then \
	    runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_SMOKE_DIR)/$$t.log); \
	    cov=$$(grep -o 'cov: [0-9]*' $(FUZZ_SMOKE_DIR)/$$t.log | tail -n 1); \
	    seeds=$$(ls $(FUZZ_SMOKE_DIR)/seeds/$$t $$kept | grep -vc ':$$\|^$$' || true); \
	    if [ "$${runs:-0}" -gt 0 ]; then pass=$$((pass + 1)); \
	      echo "fuzz-smoke: $$t: $$runs inputs in $(FUZZ_SMOKE_SECONDS) s from $$seeds seeds, $$cov, no crash"; \
	    else fail=$$((fail + 1)); echo "fuzz-smoke: $$t FAILED: no input was run"; tail -n 20 $(FUZZ_SMOKE_DIR)/$$t.log; fi; \
	  else fail=$$((fail + 1)); echo "fuzz-smoke: $$t FAILED (log $(FUZZ_SMOKE_DIR)/$$t.log; inputs kept: $$(ls $(FUZZ_SMOKE_DIR)/$$t | grep -v '^new$$' | tr '\n' ' '))"; \
	    grep -m 5 -E 'panicked|ERROR|SUMMARY|Test unit written' $(FUZZ_SMOKE_DIR)/$$t.log || tail -n 20 $(FUZZ_SMOKE_DIR)/$$t.log; fi; \
	done; echo "fuzz-smoke: $$pass passed, $$fail failed"; [ $$fail = 0 ] && [ $$pass -gt 0 ]

BINDING_TESTS += fuzz-smoke
