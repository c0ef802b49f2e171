# The broker plugin and its real-cluster tests (included by the top Makefile).
#   cluster-stock-test  the harness on stock TBRLMM (3 brokers tier and serve from offset 0)
CLUSTER_DIR := tests/cluster
CLUSTER_REPORTS := $(CLUSTER_DIR)/target/surefire-reports

# $(call cluster_run,<test pattern>,<label>,<plugin jar or empty>)
define cluster_run
	@rm -rf $(CLUSTER_REPORTS)
	@$(CLUSTER_DIR)/run.sh '$(1)' $(3) >$(BUILD)/$(2).log 2>&1 \
	  || { tail -n 80 $(BUILD)/$(2).log; echo "FAILED: $(2) (log $(BUILD)/$(2).log, broker logs under $(CLUSTER_DIR)/target/cluster-work)"; exit 1; }
	@grep '^\[' $(BUILD)/$(2).log | grep -v '^\[INFO\]\|^\[WARNING\]\|^\[ERROR\]' || true
	@awk -F'[:,] *' '/^Tests run:/ { run += $$2; fail += $$4 + $$6; skip += $$8 } \
	  END { printf "$(2): %d passed, %d failed, %d skipped\n", run - fail - skip, fail, skip }' $(CLUSTER_REPORTS)/*.txt
endef

.PHONY: cluster-stock-test
cluster-stock-test: | $(BUILD)
	$(call cluster_run,StockClusterTest,cluster-stock-test,)
