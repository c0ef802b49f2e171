# The broker plugin and its tests against real Kafka 4.4.0 (included by the top Makefile).
#   plugin              build/rlmeta-kafka-plugin.jar: dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager,
#                       rlmeta's Java library and the release native library in one jar (Kafka not bundled)
#   plugin-test         JUnit: the plugin driven through Kafka's RLMM interface against a real broker, and
#                       its level from cleanup.policy once no level record is left (PluginPolicyLevelTest), and
#                       faults injected into a live instance: a failed apply, a panic in the core, a dead consumer
#                       thread each stop serving and rebuild; reads during a large apply; close at any moment of
#                       the start leaks nothing (PluginFaultTest)
#   cluster-test        JUnit: the cluster scenarios (controller + 3 brokers with the plugin, by class.path and libs/),
#                       and the plugin's MBean read over JMX from broker 1's process; then a rolling upgrade at
#                       level 0 (one stock TBRLMM broker, two plugin brokers)
#   secure-test         JUnit: the plugin on a secured single-node cluster (SASL_SSL SCRAM-SHA-512 and mTLS,
#                       StandardAuthorizer, no ACL = denied) under least privilege: missing ACLs and a wrong
#                       password named once, recovery once fixed without a restart, tiering (SecurePluginTest)
#   cluster-stock-test  the harness itself on stock TBRLMM (not part of make test)
PLUGIN_DIR      := bindings-c/java/plugin
PLUGIN_JAR      := $(BUILD)/rlmeta-kafka-plugin.jar
CLUSTER_DIR     := tests/cluster
CLUSTER_REPORTS := $(CLUSTER_DIR)/target/surefire-reports
CLUSTER_TESTS   := PluginClusterTest,RollingUpgradeTest
PLUGIN_TESTS    := PluginApiTest,PluginPolicyLevelTest,PluginFaultTest

.PHONY: plugin plugin-test cluster-test cluster-stock-test cluster-kill-delete-test secure-test

plugin: | $(BUILD)
	@$(CARGO) build -q --release -p rlmeta-c
	@cd $(PLUGIN_DIR) && mvn -q -B -Dstyle.color=never package -Drlmeta.native.dir=$(CURDIR)/target/release \
	  >$(CURDIR)/$(BUILD)/plugin-build.log 2>&1 || { cat $(CURDIR)/$(BUILD)/plugin-build.log; echo "FAILED: plugin"; exit 1; }
	@cp $(PLUGIN_DIR)/target/rlmeta-kafka-plugin-0.1.0.jar $(PLUGIN_JAR)
	@unzip -l $(PLUGIN_JAR) >$(BUILD)/plugin-listing.txt
	@! grep -q ' org/apache/kafka/' $(BUILD)/plugin-listing.txt || { echo "FAILED: $(PLUGIN_JAR) bundles Kafka classes"; exit 1; }
	@grep -q 'dev/rlmeta/native/linux-x86_64/librlmeta_c-' $(BUILD)/plugin-listing.txt || { echo "FAILED: no native library in $(PLUGIN_JAR)"; exit 1; }
	@echo "plugin: $(PLUGIN_JAR) ($$(du -k $(PLUGIN_JAR) | cut -f1) KiB, native library inside, no Kafka classes)"

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

secure-test: plugin
	$(call cluster_run,SecurePluginTest,secure-test,$(PLUGIN_JAR))

BINDING_TESTS += plugin-test cluster-test secure-test

# The bootstrap benchmark (not a test): RLMM start to ready on a 1.2 M-record history, stock
# TBRLMM vs the plugin on the same append-only topic vs the plugin on the compacted keyed history.
# RLMETA_BENCH_RECORDS sets the history size.
.PHONY: bench-plugin
bench-plugin: plugin
	@rm -rf $(CLUSTER_REPORTS)
	@RLMETA_CLUSTER_TIMEOUT=2400 MAVEN_OPTS="$${MAVEN_OPTS:-}" $(CLUSTER_DIR)/run.sh BootstrapBenchmark $(PLUGIN_JAR) \
	  -Drlmeta.bench.records=$${RLMETA_BENCH_RECORDS:-1200000} 2>&1 | tee $(BUILD)/bench-plugin.log | grep '^\[bench\]\|^\[cluster\]\|FAIL\|ERROR\]'
