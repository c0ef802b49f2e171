# bindings-c (included by the top Makefile, run from the repository root).
#   c-test    build rlmeta_c (debug profile), check the committed header for drift, run the C tests
#             against the shared and the static library, under ASan+UBSan and valgrind, and run
#             the C example.
#   jni-test  the Java library (bindings-c/java, Maven + JUnit 5) over the same shared library,
#             under -Xcheck:jni, on every vector file; the replay vectors and the write-plan
#             scripts (tests/plans) through MetadataStore, checked against Kafka 4.4.0's own store.
#   bench-jni the JNI cost per record of a batched MetadataStore.apply (a benchmark, not a test):
#             the Java figure (release library, no -Xcheck:jni) and the core alone on the same
#             bytes (bindings-c/benches/apply.rs); docs/BENCHMARKS.md has the numbers.
# Both tests rebuild only what changed and print one line per step.

C_LIBDIR      := target/debug
C_BUILD       := $(BUILD)/c
C_CC          ?= gcc
C_CXX         ?= g++
C_CFLAGS      := -std=c11 -Wall -Wextra -Werror -g -Ibindings-c/include
C_TEST_SRC    := bindings-c/tests/test_rlmeta.c bindings-c/tests/test_store.c bindings-c/tests/json.c
C_DYN_LINK    := -L$(C_LIBDIR) -lrlmeta_c -Wl,-rpath,'$$ORIGIN/../../$(C_LIBDIR)'
# from: cargo rustc -p rlmeta-c --crate-type staticlib -- --print native-static-libs
C_STATIC_LINK := $(C_LIBDIR)/librlmeta_c.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
C_SANITIZE    := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# valgrind runs the debug core about 30x slower: it gets the API tests and the small public files
C_VALGRIND_VECTORS := $(filter-out tests/vectors/kafka-% tests/vectors/replay-%,$(VECTORS))
# a version-1 segment value from tests/vectors/v1.json, and the key it is written under
C_EXAMPLE_HEX := 0100010253799a4f78019703424f9a77e72bf06de4000000000077065543cdf22ee50303ebe3450f9aea0000000099c8143a3500000099c81dfaec000004b4000001837f4cdfe4000001aa5493464d020000000800000099c8143a35001450afbb000000
C_EXAMPLE_KEY := eZpPeAGXA0JPmnfnK_Bt5A:S:0:660487404268:0
JAVA_DIR      := bindings-c/java
JAVA_REPORTS  := $(JAVA_DIR)/target/surefire-reports

# $(call c_run,<command>,<label>): runs a test program; prints its last line, or all it said on failure.
define c_run
	@out=$$($(1) 2>&1) || { printf '%s\n' "$$out"; echo "FAILED: $(2)"; exit 1; }; \
	  echo "$(2): $$(printf '%s\n' "$$out" | tail -n 1)"
endef

.PHONY: c-build c-header-check c-test c-example jni-test bench-jni

c-build:
	@$(CARGO) build -q -p rlmeta-c

# build.rs regenerated the header; a difference from the committed copy is drift. The header
# must also compile alone as C99 and as C++11.
c-header-check: c-build
	@if git ls-files --error-unmatch bindings-c/include/rlmeta.h >/dev/null 2>&1; then \
	  git diff --exit-code --stat -- bindings-c/include || { echo "bindings-c/include/rlmeta.h is stale: commit the regenerated header"; exit 1; }; \
	  echo "c-header-check: bindings-c/include/rlmeta.h is up to date"; \
	else echo "c-header-check: bindings-c/include/rlmeta.h is not committed yet (nothing to compare)"; fi
	@$(C_CC) -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only bindings-c/include/rlmeta.h
	@$(C_CXX) -std=c++11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c++ bindings-c/include/rlmeta.h

$(C_BUILD):
	@mkdir -p $@

c-test: c-header-check c-example | $(C_BUILD)
	@$(C_CC) $(C_CFLAGS) $(C_TEST_SRC) $(C_DYN_LINK) -o $(C_BUILD)/test_rlmeta_dyn
	@$(C_CC) $(C_CFLAGS) $(C_TEST_SRC) $(C_STATIC_LINK) -o $(C_BUILD)/test_rlmeta_static
	@$(C_CC) $(C_CFLAGS) $(C_SANITIZE) $(C_TEST_SRC) $(C_DYN_LINK) -o $(C_BUILD)/test_rlmeta_asan
	$(call c_run,$(C_BUILD)/test_rlmeta_dyn $(VECTORS),c-test shared library)
	$(call c_run,$(C_BUILD)/test_rlmeta_static $(VECTORS),c-test static library)
	$(call c_run,ASAN_OPTIONS=detect_leaks=1 $(C_BUILD)/test_rlmeta_asan $(VECTORS),c-test ASan+UBSan)
	@command -v valgrind >/dev/null || { echo "FAILED: c-test valgrind: valgrind is not installed (make setup-valgrind)"; exit 1; }
	@out=$$(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
	    $(C_BUILD)/test_rlmeta_dyn $(C_VALGRIND_VECTORS) 2>&1) || { printf '%s\n' "$$out"; echo "FAILED: c-test valgrind"; exit 1; }; \
	  echo "c-test valgrind: $$(printf '%s\n' "$$out" | tail -n 1)"

# The example decodes a value given in hex; a truncated one exits 1 with the error.
c-example: c-build | $(C_BUILD)
	@$(C_CC) $(C_CFLAGS) bindings-c/examples/decode.c $(C_DYN_LINK) -o $(C_BUILD)/decode
	@out=$$($(C_BUILD)/decode $(C_EXAMPLE_HEX)) && grep -q '"startOffset":660486765109,' <<<"$$out" \
	  && grep -qx 'key: $(C_EXAMPLE_KEY)' <<<"$$out" || { echo "$$out"; echo "FAILED: c-example"; exit 1; }
	@err=$$($(C_BUILD)/decode 0100 2>&1) && rc=0 || rc=$$?; [ $$rc = 1 ] && grep -q '^error: truncated (code 1)' <<<"$$err" \
	  || { echo "$$err (exit $$rc)"; echo "FAILED: c-example (error path)"; exit 1; }
	@echo "c-example: decode prints the record and its key; a truncated value exits 1"

jni-test: c-build | $(C_BUILD)
	@rm -rf $(JAVA_REPORTS)
	@cd $(JAVA_DIR) && mvn -q -B -Dstyle.color=never test -Drlmeta.native.dir=$(CURDIR)/$(C_LIBDIR) \
	  -Drlmeta.vectors.dir=$(CURDIR)/tests/vectors -Drlmeta.plans.dir=$(CURDIR)/tests/plans \
	  >$(CURDIR)/$(BUILD)/jni-test.log 2>&1 \
	  || { tail -n 100 $(BUILD)/jni-test.log; echo "FAILED: jni-test (log $(BUILD)/jni-test.log, reports in $(JAVA_REPORTS))"; exit 1; }
	@! ls $(JAVA_REPORTS)/*.dumpstream >/dev/null 2>&1 || { cat $(JAVA_REPORTS)/*.dumpstream; \
	  echo "FAILED: jni-test: the JVM wrote to the test channel (a -Xcheck:jni warning?)"; exit 1; }
	@awk -F'[:,] *' '/^Tests run:/ { run += $$2; fail += $$4 + $$6; skip += $$8 } \
	  END { printf "jni-test: %d passed, %d failed, %d skipped\n", run - fail - skip, fail, skip; exit (run - skip == 0 || fail > 0) }' $(JAVA_REPORTS)/*.txt

BENCH_JNI_DIR     := $(BUILD)/bench/jni
BENCH_JNI_BATCH   ?= 500
BENCH_JNI_ROUNDS  ?= 20

# The release library is loaded by path (the antrun copy into the test jar is skipped, so
# jni-test keeps its debug library).
bench-jni: | $(BUILD)
	@$(CARGO) build -q --release -p rlmeta-c
	@cd $(JAVA_DIR) && mvn -q -B -Dstyle.color=never test-compile -Dmaven.antrun.skip=true
	@cd $(JAVA_DIR) && mvn -q -B -Dstyle.color=never exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
	  -Dexec.args="-cp %classpath -Drlmeta.library.path=$(CURDIR)/target/release/librlmeta_c.so dev.rlmeta.bench.ApplyBenchmark $(CURDIR)/$(BENCH_JNI_DIR) $(BENCH_JNI_BATCH) $(BENCH_JNI_ROUNDS)"
	@RLMETA_BENCH_DIR=$(CURDIR)/$(BENCH_JNI_DIR) $(CARGO) bench -q -p rlmeta-c --bench apply -- $(BENCH_JNI_BATCH) $(BENCH_JNI_ROUNDS)

# Lookup latency while a large bootstrap is applied, the plugin's locking before (one lock around each
# poll's apply and every lookup, as at 7946944) and after (the store's own read-write lock, chunked
# applies); not a test. Each of BENCH_LOOKUP_REPLAYS bootstraps replays 1,092,000 records (13,900
# segments in each of 20 partitions) into a fresh store. The library is the plugin's release one (natives).
BENCH_LOOKUP_POLL     ?= 5000
BENCH_LOOKUP_READERS  ?= 2
BENCH_LOOKUP_SEGMENTS ?= 13900
BENCH_LOOKUP_REPLAYS  ?= 3
.PHONY: bench-lookups
bench-lookups: natives | $(BUILD)
	@cd $(JAVA_DIR) && mvn -q -B -Dstyle.color=never test-compile -Dmaven.antrun.skip=true
	@cd $(JAVA_DIR) && mvn -q -B -Dstyle.color=never exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
	  -Dexec.args="-cp %classpath -Drlmeta.library.path=$(CURDIR)/$(X_LIBDIR_x86_64)/librlmeta_c.so dev.rlmeta.bench.LookupLatencyBenchmark $(BENCH_LOOKUP_POLL) 1024 $(BENCH_LOOKUP_READERS) $(BENCH_LOOKUP_SEGMENTS) $(BENCH_LOOKUP_REPLAYS)"

# listRemoteLogSegments per call, the plugin's (before: an array per segment, all deserialized; after:
# a few packed 64 KiB arrays, each segment deserialized when the iterator reaches it) against Kafka 4.4.0's own store on
# the same partition, and how long applies wait while listings run (ListingBenchmark; not a test).
# The library is the plugin's release one (natives).
BENCH_LISTING_SEGMENTS ?= 350,5000
BENCH_LISTING_CALLS    ?= 200
BENCH_LISTING_ROUNDS   ?= 7
.PHONY: bench-listing
bench-listing: natives | $(BUILD)
	@cd $(JAVA_DIR) && mvn -q -B -Dstyle.color=never test-compile -Dmaven.antrun.skip=true
	@cd $(JAVA_DIR) && mvn -q -B -Dstyle.color=never exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
	  -Dexec.args="-cp %classpath -Drlmeta.library.path=$(CURDIR)/$(X_LIBDIR_x86_64)/librlmeta_c.so dev.rlmeta.bench.ListingBenchmark $(BENCH_LISTING_SEGMENTS) $(BENCH_LISTING_CALLS) $(BENCH_LISTING_ROUNDS)" \
	  | tee $(CURDIR)/$(BUILD)/bench-listing.log

BINDING_TESTS += c-test jni-test

# ---------------------------------------------------------------- cross natives (linux-x86_64, linux-aarch64)
#   natives       the release library for both arches, linked against glibc $(GLIBC_MAX) (cargo-zigbuild
#                 with ziglang from PyPI, one cargo run for both targets), checked by glibc-check.sh
#   cross-c-test  the C runner over every vector, linked (zig cc, glibc $(GLIBC_MAX)) against each of
#                 those two libraries: natively on x86_64, under qemu-aarch64-static on aarch64
# The plugin jar carries exactly these two libraries (bindings-c/java/plugin/rules.mk).
GLIBC_MAX     := 2.17
X_ARCHES      := x86_64 aarch64
X_LIBDIR_x86_64  := target/x86_64-unknown-linux-gnu/release
X_LIBDIR_aarch64 := target/aarch64-unknown-linux-gnu/release
X_LIBS        := $(X_LIBDIR_x86_64)/librlmeta_c.so $(X_LIBDIR_aarch64)/librlmeta_c.so
# cargo-zigbuild finds zig as `python3 -m ziglang`: the venv's python3 first on PATH
X_PATH        := PATH=$(CURDIR)/$(VENV)/bin:$$PATH
X_ZIGCC       := $(VPY) -m ziglang cc
QEMU_AARCH64  := qemu-aarch64-static -L /usr/aarch64-linux-gnu

.PHONY: natives cross-c-test

natives:
	@[ -x $(VENV)/bin/cargo-zigbuild ] || { echo "no cargo-zigbuild in $(VENV): run make setup-cross"; exit 1; }
	@$(X_PATH) $(CARGO) zigbuild -q --release -p rlmeta-c $(foreach a,$(X_ARCHES),--target $(a)-unknown-linux-gnu.$(GLIBC_MAX))
	@out=$$(bindings-c/glibc-check.sh $(GLIBC_MAX) $(X_LIBS)) || { echo "$$out"; echo "FAILED: natives need a glibc newer than $(GLIBC_MAX)"; exit 1; }; \
	  echo "$$out" | sed 's/^glibc-check/natives glibc-check/'
	@# the check itself rejects a host-linked file (this machine's glibc is newer than 2.17)
	@! bindings-c/glibc-check.sh $(GLIBC_MAX) /bin/ls >/dev/null || { echo "FAILED: glibc-check.sh accepts /bin/ls"; exit 1; }

cross-c-test: natives | $(C_BUILD)
	@for a in $(X_ARCHES); do mkdir -p $(C_BUILD)/$$a; \
	  $(X_ZIGCC) -target $$a-linux-gnu.$(GLIBC_MAX) $(C_CFLAGS) $(C_TEST_SRC) -Ltarget/$$a-unknown-linux-gnu/release -lrlmeta_c \
	    -Wl,-rpath,'$$ORIGIN/../../../target/'$$a'-unknown-linux-gnu/release' -o $(C_BUILD)/$$a/test_rlmeta; done
	@out=$$(bindings-c/glibc-check.sh $(GLIBC_MAX) $(foreach a,$(X_ARCHES),$(C_BUILD)/$(a)/test_rlmeta)) || { echo "$$out"; echo "FAILED: cross-c-test runners"; exit 1; }; \
	  echo "$$out" | sed 's/^glibc-check/cross-c-test runners glibc-check/'
	$(call c_run,$(C_BUILD)/x86_64/test_rlmeta $(VECTORS),cross-c-test x86_64 (glibc $(GLIBC_MAX) library))
	@start=$$(date +%s.%N); out=$$($(QEMU_AARCH64) $(C_BUILD)/aarch64/test_rlmeta $(VECTORS) 2>&1) \
	  || { printf '%s\n' "$$out"; echo "FAILED: cross-c-test aarch64 under qemu"; exit 1; }; \
	  grep -q '^Machine:.*AArch64' <(readelf -h $(C_BUILD)/aarch64/test_rlmeta | sed 's/^ *//') || { echo "FAILED: $(C_BUILD)/aarch64/test_rlmeta is not AArch64"; exit 1; }; \
	  echo "cross-c-test aarch64 under qemu-aarch64 ($$(printf '%.1f' $$(echo "$$(date +%s.%N) - $$start" | bc)) s): $$(printf '%s\n' "$$out" | tail -n 1)"

BINDING_TESTS += cross-c-test

# jni-aarch64-test (in make test; about 1.5 minutes under qemu on a quiet machine): the Java library's
# JUnit tests (all of bindings-c/java's, -Xcheck:jni) in Debian's arm64 OpenJDK 17 under
# qemu-aarch64, loading linux-aarch64 from the plugin jar's classes; the child JVMs of
# NativeLoaderTest run under the same qemu (rlmeta.test.launcher).
JNI_A64 := $(BUILD)/jni-aarch64
JUNIT_CONSOLE_VERSION := 1.11.4
# an absolute path: the JVM under qemu execs it for NativeLoaderTest's child JVMs, by fork (its
# default posix_spawn runs the aarch64 jspawnhelper, which the host cannot exec without binfmt_misc)
QEMU_ARM64_ROOT = $(shell command -v qemu-aarch64-static || echo qemu-aarch64-static) -L $(CURDIR)/$(ARM64_ROOT)

.PHONY: jni-aarch64-test
jni-aarch64-test: plugin setup-arm64 | $(BUILD)
	@rm -rf $(JNI_A64) && mkdir -p $(JNI_A64)/classes
	@cd $(JAVA_DIR) && mvn -q -B -Dstyle.color=never test-compile -Dmaven.antrun.skip=true \
	  dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=$(CURDIR)/$(JNI_A64)/deps.cp \
	  dependency:copy -Dartifact=org.junit.platform:junit-platform-console-standalone:$(JUNIT_CONSOLE_VERSION) \
	  -DoutputDirectory=$(CURDIR)/$(JNI_A64) >$(CURDIR)/$(JNI_A64)/mvn.log 2>&1 || { cat $(JNI_A64)/mvn.log; echo "FAILED: jni-aarch64-test (maven)"; exit 1; }
	@cd $(JNI_A64)/classes && unzip -q $(CURDIR)/$(PLUGIN_JAR)
	@start=$$(date +%s); $(QEMU_ARM64_ROOT) $(ARM64_JAVA) -Xcheck:jni -Djdk.lang.Process.launchMechanism=FORK -Drlmeta.vectors.dir=$(CURDIR)/tests/vectors \
	  -Drlmeta.plans.dir=$(CURDIR)/tests/plans -Drlmeta.extract.dir=$(CURDIR)/$(JNI_A64)/extract \
	  "-Drlmeta.test.launcher=$(QEMU_ARM64_ROOT)" \
	  -cp $(JNI_A64)/junit-platform-console-standalone-$(JUNIT_CONSOLE_VERSION).jar:$(JNI_A64)/classes:$(JAVA_DIR)/target/test-classes:$$(cat $(JNI_A64)/deps.cp) \
	  org.junit.platform.console.ConsoleLauncher execute --disable-banner --details=summary --select-package=dev.rlmeta \
	  >$(JNI_A64)/run.log 2>&1 && rc=0 || rc=$$?; \
	  lib=$$(find $(JNI_A64)/extract -name 'librlmeta_c-*.so'); \
	  [ "$$(wc -w <<<"$$lib")" = 1 ] && readelf -h $$lib | grep -q 'Machine:.*AArch64' && cmp -s $$lib $(X_LIBDIR_aarch64)/librlmeta_c.so \
	    || { tail -n 60 $(JNI_A64)/run.log; echo "FAILED: jni-aarch64-test did not load the jar's aarch64 library ($$lib)"; exit 1; }; \
	  ok=$$(sed -n 's/^\[ *\([0-9]*\) tests successful.*/\1/p' $(JNI_A64)/run.log); bad=$$(sed -n 's/^\[ *\([0-9]*\) tests failed.*/\1/p' $(JNI_A64)/run.log); \
	  s1=$$(sed -n 's/^\[ *\([0-9]*\) tests skipped.*/\1/p' $(JNI_A64)/run.log); s2=$$(sed -n 's/^\[ *\([0-9]*\) tests aborted.*/\1/p' $(JNI_A64)/run.log); \
	  skip=$$(( $${s1:-0} + $${s2:-0} )); \
	  [ $$rc = 0 ] && [ "$${ok:-0}" -gt 0 ] || { tail -n 80 $(JNI_A64)/run.log; echo "FAILED: jni-aarch64-test (exit $$rc, log $(JNI_A64)/run.log)"; exit 1; }; \
	  echo "jni-aarch64-test (arm64 OpenJDK 17 under qemu-aarch64, $$(( $$(date +%s) - start )) s): $$ok passed, $$bad failed, $$skip skipped"

BINDING_TESTS += jni-aarch64-test
