# Fuzzing: `make fuzz FUZZ_SECONDS=600` runs each target (nightly + cargo-fuzz). The regular test
# run replays the kept inputs through core's tests, so it needs neither: fuzz/regressions/value and
# key (crashers once found; core/tests/fuzz_regressions.rs), batch and checkpoint (the real and
# crafted segment and checkpoint files of tests/fixtures, as fuzz-seed writes them;
# core/tests/batch.rs). A missing or empty directory fails those tests. The json target keeps no
# inputs: its property is in its fuzz target only. `make fuzz-keep-seeds` rewrites batch/ and
# checkpoint/ from the fixtures.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := value key batch checkpoint json
.PHONY: fuzz fuzz-seed fuzz-keep-seeds
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
