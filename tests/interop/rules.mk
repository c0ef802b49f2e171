# Interop with Kafka 4.4.0's own jars (included by the top Makefile, run from the repository root).
# interop-test: Kafka's decoder reads what rlmeta's encoder writes (a fixed-seed sample of 2,000
# records, field by field and byte for byte), and the harness proves it can fail (selftest).
INTEROP_POM := tests/interop/pom.xml
INTEROP_RUN  = mvn -q -B -f $(INTEROP_POM) compile exec:java -Dexec.mainClass=dev.rlmeta.interop.$(1) -Dexec.args="$(2)"

.PHONY: interop-test interop-vectors
interop-test: $(CONFORMANCE) | $(BUILD)
	$(CONFORMANCE) --sample 2000 1266 > $(BUILD)/rlmeta-sample.json
	$(call INTEROP_RUN,DecodeCheck,$(BUILD)/rlmeta-sample.json $(wildcard tests/vectors/v0*.json tests/vectors/kafka-4.4.0-*.json))
	bash tests/interop/selftest.sh

# Regenerates the kafka-4.4.0-*.json vectors from the jars (deterministic; not part of make test).
interop-vectors:
	$(call INTEROP_RUN,VectorWriter,tests/vectors)

BINDING_TESTS += interop-test

# diff-test: differential test of rlmeta's cache against Kafka 4.4.0's own RemotePartitionMetadataStore
# (tests/interop/README.md, "Differential test"). DiffHarness generates DIFF_N random histories
# (fixed seed), replays them into Kafka's store and writes Kafka's answers as a replay vector file;
# rlmeta's conformance runner must then pass every case. Harness statistics go to the .log file.
DIFF_N    ?= 2000
DIFF_SEED ?= 1266
DIFF_FILE := $(BUILD)/kafka-diff-histories.json

.PHONY: diff-test diff-shrink
diff-test: $(CONFORMANCE) | $(BUILD)
	$(call INTEROP_RUN,diff.DiffHarness,$(DIFF_N) $(DIFF_SEED) $(DIFF_FILE)) > $(DIFF_FILE:.json=.log)
	@head -1 $(DIFF_FILE:.json=.log)
	$(CONFORMANCE) $(DIFF_FILE)

# After a diff-test failure: shrinks every failing case to a minimal history (Kafka recomputes the
# answers at each step) into build/kafka-diff-min.json and prints it decoded. Not part of make test.
diff-shrink: $(CONFORMANCE) | $(BUILD)
	$(call INTEROP_RUN,diff.Shrink,$(DIFF_FILE) $(CONFORMANCE) $(BUILD)/kafka-diff-min.json)

BINDING_TESTS += diff-test

# bench-kafka: the replay race against Kafka 4.4.0's own serde and store (tests/interop/race/run.sh;
# docs/BENCHMARKS.md). Installs what it needs; a few minutes on 2 cores. Not part of make test.
.PHONY: bench-kafka
bench-kafka:
	tests/interop/race/run.sh

# cleaner-diff-test: rlmeta's compaction model (core/src/compaction.rs) against Kafka 4.4.0's own
# UnifiedLog + Cleaner on real log directories (tests/interop/README.md, "Cleaner differential").
# CleanerDiff writes CLEANER_N random logs (fixed seed) with the offsets Kafka kept at every clean;
# rlmeta's conformance runner replays them into the model and must keep the same offsets.
CLEANER_N     ?= 1000
CLEANER_SEED  ?= 1266
CLEANER_CHUNK ?= 2000
CLEANER_FILE  := $(BUILD)/kafka-cleaner-diff.json

.PHONY: cleaner-diff-test cleaner-diff
cleaner-diff-test: $(CONFORMANCE) | $(BUILD)
	$(call INTEROP_RUN,cleaner.CleanerDiff,$(CLEANER_N) $(CLEANER_SEED) $(CLEANER_FILE)) > $(CLEANER_FILE:.json=.log)
	@head -1 $(CLEANER_FILE:.json=.log)
	$(CONFORMANCE) $(CLEANER_FILE)

# The long run (not part of make test): e.g. `make cleaner-diff CLEANER_N=100000`, in chunks of
# CLEANER_CHUNK logs (cases first..first+chunk-1 of the same seed), stopping at the first failure.
cleaner-diff: $(CONFORMANCE) | $(BUILD)
	@set -e; first=0; while [ $$first -lt $(CLEANER_N) ]; do \
	  n=$$(( $(CLEANER_N) - first < $(CLEANER_CHUNK) ? $(CLEANER_N) - first : $(CLEANER_CHUNK) )); \
	  $(call INTEROP_RUN,cleaner.CleanerDiff,$$n $(CLEANER_SEED) $(CLEANER_FILE) --first $$first) > $(CLEANER_FILE:.json=.log); \
	  head -1 $(CLEANER_FILE:.json=.log); \
	  $(CONFORMANCE) $(CLEANER_FILE) | tail -1; \
	  first=$$(( first + n )); \
	done; echo "cleaner-diff: $(CLEANER_N) logs agree"

BINDING_TESTS += cleaner-diff-test

# plan-property-test: the planner property against Kafka 4.4.0's store and cleaner (issue 22,
# item 2). rlmeta's planner writes PLAN_N random broker lives (levels 0-2, fixed seed) through
# `rlmeta-conformance --plan-logs`; PlanProperty replays each whole log in Kafka's store (it must
# hold what the script meant) and, compacted by Kafka's cleaner after every record, checks that
# every cut answers as the whole prefix does. Prints its counts; exit 1 names the failing log.
PLAN_N    ?= 300
PLAN_SEED ?= 1266
PLAN_FILE := $(BUILD)/plan-property-logs.json

.PHONY: plan-property-test
plan-property-test: $(CONFORMANCE) | $(BUILD)
	$(CONFORMANCE) --plan-logs $(PLAN_N) $(PLAN_SEED) > $(PLAN_FILE)
	$(call INTEROP_RUN,diff.PlanProperty,$(PLAN_FILE))

BINDING_TESTS += plan-property-test
