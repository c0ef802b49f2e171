# The broker plugin and its tests against real Kafka 4.4.0 (included by the top Makefile).
#   plugin              build/rlmeta-kafka-plugin.jar: dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager,
#                       rlmeta's Java library and the release native libraries for linux-x86_64 and
#                       linux-aarch64 (glibc 2.17, `make natives`) in one jar (Kafka not bundled)
#   plugin-test         JUnit: the plugin driven through Kafka's RLMM interface against a real broker, and
#                       its level from cleanup.policy once no level record is left (PluginPolicyLevelTest)
#   cluster-test        JUnit: the cluster scenarios (controller + 3 brokers with the plugin, by class.path and libs/),
#                       then a rolling upgrade at level 0 (one stock TBRLMM broker, two plugin brokers)
#   cluster-stock-test  the harness itself on stock TBRLMM (not part of make test)
PLUGIN_DIR      := bindings-c/java/plugin
PLUGIN_JAR      := $(BUILD)/rlmeta-kafka-plugin.jar
CLUSTER_DIR     := tests/cluster
CLUSTER_REPORTS := $(CLUSTER_DIR)/target/surefire-reports
CLUSTER_TESTS   := PluginClusterTest,RollingUpgradeTest
PLUGIN_TESTS    := PluginApiTest,PluginPolicyLevelTest

.PHONY: plugin plugin-test cluster-test cluster-stock-test cluster-kill-delete-test

PLUGIN_NATIVES := $(BUILD)/plugin-natives

# One jar for linux-x86_64 and linux-aarch64: the `natives` libraries (glibc 2.17, bindings-c/rules.mk).
# The libraries in the jar are checked again as packaged: the same bytes as built, and glibc <= 2.17.
plugin: natives | $(BUILD)
	@cd $(PLUGIN_DIR) && mvn -q -B -Dstyle.color=never package -Drlmeta.native.dir=$(CURDIR)/$(X_LIBDIR_x86_64) \
	  -Drlmeta.native.aarch64.dir=$(CURDIR)/$(X_LIBDIR_aarch64) \
	  >$(CURDIR)/$(BUILD)/plugin-build.log 2>&1 || { cat $(CURDIR)/$(BUILD)/plugin-build.log; echo "FAILED: plugin"; exit 1; }
	@cp $(PLUGIN_DIR)/target/rlmeta-kafka-plugin-0.1.0.jar $(PLUGIN_JAR)
	@unzip -l $(PLUGIN_JAR) >$(BUILD)/plugin-listing.txt
	@! grep -q ' org/apache/kafka/' $(BUILD)/plugin-listing.txt || { echo "FAILED: $(PLUGIN_JAR) bundles Kafka classes"; exit 1; }
	@rm -rf $(PLUGIN_NATIVES) && mkdir -p $(PLUGIN_NATIVES)
	@for a in $(X_ARCHES); do e=dev/rlmeta/native/linux-$$a/librlmeta_c-0.1.0.so; \
	  grep -q " $$e\$$" $(BUILD)/plugin-listing.txt || { echo "FAILED: no $$e in $(PLUGIN_JAR)"; exit 1; }; \
	  unzip -p $(PLUGIN_JAR) $$e >$(PLUGIN_NATIVES)/linux-$$a.so; \
	  cmp -s $(PLUGIN_NATIVES)/linux-$$a.so target/$$a-unknown-linux-gnu/release/librlmeta_c.so \
	    || { echo "FAILED: $$e in $(PLUGIN_JAR) is not target/$$a-unknown-linux-gnu/release/librlmeta_c.so"; exit 1; }; done
	@[ "$$(grep -c ' dev/rlmeta/native/.*\.so$$' $(BUILD)/plugin-listing.txt)" = 2 ] || { echo "FAILED: $(PLUGIN_JAR) has other native files"; grep native/ $(BUILD)/plugin-listing.txt; exit 1; }
	@out=$$(bindings-c/glibc-check.sh $(GLIBC_MAX) $(PLUGIN_NATIVES)/linux-*.so) || { echo "$$out"; echo "FAILED: plugin natives"; exit 1; }; \
	  echo "$$out" | sed 's/^glibc-check/plugin natives glibc-check/'
	@echo "plugin: $(PLUGIN_JAR) ($$(du -k $(PLUGIN_JAR) | cut -f1) KiB; natives $$(cd $(PLUGIN_NATIVES) && ls -l linux-*.so | awk '{printf "%s%s %d B", sep, $$9, $$5; sep=", "}'); no Kafka classes)"

# $(call cluster_run,<test pattern>,<label>,<plugin jar or empty> [extra maven args])
define cluster_run
	@rm -rf $(CLUSTER_REPORTS)
	@$(CLUSTER_DIR)/run.sh '$(1)' $(3) >$(BUILD)/$(2).log 2>&1 \
	  || { tail -n 80 $(BUILD)/$(2).log; echo "FAILED: $(2) (log $(BUILD)/$(2).log, broker logs under $(CLUSTER_DIR)/target/cluster-work)"; exit 1; }
	@grep '^\[' $(BUILD)/$(2).log | grep -v '^\[INFO\]\|^\[WARNING\]\|^\[ERROR\]' || true
	@awk -F'[:,] *' '/^Tests run:/ { run += $$2; fail += $$4 + $$6; skip += $$8 } \
	  END { printf "$(2): %d passed, %d failed, %d skipped\n", run - fail - skip, fail, skip }' $(CLUSTER_REPORTS)/*.txt
endef

plugin-test: plugin
	$(call cluster_run,$(PLUGIN_TESTS),plugin-test,$(PLUGIN_JAR))

cluster-test: plugin
	$(call cluster_run,$(CLUSTER_TESTS),cluster-test,$(PLUGIN_JAR))

# scenario g2 alone (kill -9 between DELETE_SEGMENT_STARTED and FINISHED) on a fresh cluster; it is part of cluster-test
cluster-kill-delete-test: plugin
	$(call cluster_run,PluginClusterTest#killNineOfTheLeaderBetweenDeleteStartedAndFinishedCompletesTheDeletion,cluster-kill-delete-test,$(PLUGIN_JAR))

cluster-stock-test: plugin
	$(call cluster_run,StockClusterTest,cluster-stock-test,$(PLUGIN_JAR))

BINDING_TESTS += plugin-test cluster-test

# The bootstrap benchmark (not a test): RLMM start to ready on a 1.2 M-record history, stock
# TBRLMM vs the plugin on the same append-only topic vs the plugin on the compacted keyed history.
# RLMETA_BENCH_RECORDS sets the history size.
.PHONY: bench-plugin
bench-plugin: plugin
	@rm -rf $(CLUSTER_REPORTS)
	@RLMETA_CLUSTER_TIMEOUT=2400 MAVEN_OPTS="$${MAVEN_OPTS:-}" $(CLUSTER_DIR)/run.sh BootstrapBenchmark $(PLUGIN_JAR) \
	  -Drlmeta.bench.records=$${RLMETA_BENCH_RECORDS:-1200000} 2>&1 | tee $(BUILD)/bench-plugin.log | grep '^\[bench\]\|^\[cluster\]\|FAIL\|ERROR\]'
