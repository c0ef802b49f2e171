# Fuzzing: `make fuzz FUZZ_SECONDS=600` runs each target (nightly + cargo-fuzz). The regular test
# run replays the kept crashers and seeds through core's tests, so it needs neither.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := value key batch checkpoint json
.PHONY: fuzz fuzz-seed
fuzz-seed:
	$(PYTHON) fuzz/seed_corpus.py tests/vectors fuzz/corpus
fuzz: fuzz-seed
	@if [ "$$(cargo fuzz --version 2>/dev/null | cut -d' ' -f2)" != "$(CARGO_FUZZ_VERSION)" ]; then \
	  $(CARGO) install cargo-fuzz --version $(CARGO_FUZZ_VERSION) --locked; fi
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  cargo +nightly fuzz run $$t corpus/$$t -- -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 || exit 1; done
