# WASM binding (included by the top Makefile, run from the repository root).
# wasm-build compiles the crate for wasm32 (release: LTO, size-tuned), runs the pinned
# wasm-bindgen CLI for the nodejs and web targets and lays out ONE npm package, build/pkg
# (`rlmeta`, packed by npm-pack into build/rlmeta-<version>.tgz):
#   index.mjs (+ index.d.mts)  Node (exports condition "node"): loaded synchronously on import,
#                              over the nodejs glue rlmeta_wasm.cjs
#   web.mjs (+ web.d.mts)      browsers and bundlers (condition "default"): `await init()`, over the
#                              web glue rlmeta_wasm.js, whose `new URL('rlmeta_wasm_bg.wasm',
#                              import.meta.url)` Vite, webpack and browsers follow with no plugin
# both over api.mjs and errors.mjs (the wrapper, bindings-wasm/js/) and ONE rlmeta_wasm_bg.wasm:
# wasm-bindgen writes the same module for both targets (checked at build), only the glue differs.
# Not the bundler target: it imports the .wasm as an ES module, which Vite needs a plugin for.
# wasm-test runs the Node tests on both entry points (every vector file in VECTORS) and type-checks
# the shipped .d.mts files with TypeScript (installed by `npm ci`); package-test installs the packed
# tarball as users do (tests/package).
# No wasm-opt (apt's binaryen breaks the output; npm's works but weighs 100 MB, and opt-level s
# already takes 30% off opt-level 3's module at the same speed) and no wasm-pack (it downloads
# tools). Others build in the same target dir: cargo waits for its lock.

WASM_DIR      := bindings-wasm
WASM_TRIPLE   := wasm32-unknown-unknown
WASM_RAW      := $(or $(CARGO_TARGET_DIR),target)/$(WASM_TRIPLE)/release/rlmeta_wasm.wasm
WASM_PKG      := $(BUILD)/pkg
WASM_BINDGEN_OUT := $(BUILD)/wasm-bindgen
# __wbg_reset_state lets the wrapper start a fresh instance after a trap (a panic cannot unwind).
WASM_BINDGEN_FLAGS := --experimental-reset-state-function
# Size over speed for the module only (wasm32 artifacts live apart; host builds keep opt-level 3).
WASM_OPT_LEVEL ?= s
WASM_VERSION   := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' Cargo.toml | head -n 1)
WASM_REPO_URL  := $(shell sed -n 's/^repository = "\(.*\)"$$/\1/p' Cargo.toml | head -n 1)
WASM_TARBALL   := $(BUILD)/rlmeta-$(WASM_VERSION).tgz
WASM_TESTS     := $(wildcard $(WASM_DIR)/tests/*.test.mjs)
TSC            := node_modules/.bin/tsc

.PHONY: wasm-tools-check wasm-build npm-pack wasm-size wasm-test wasm-node-test wasm-types wasm-inspect-bin

wasm-tools-check:
	@lock=$$(grep -A1 '^name = "wasm-bindgen"$$' Cargo.lock | sed -n 's/^version = "\(.*\)"$$/\1/p'); \
	  [ "$$lock" = "$(WASM_BINDGEN_VERSION)" ] || { echo "Cargo.lock has wasm-bindgen '$$lock', the Makefile pins $(WASM_BINDGEN_VERSION)"; exit 1; }
	@cli=$$(wasm-bindgen --version 2>/dev/null || true); \
	  [ "$$cli" = "wasm-bindgen $(WASM_BINDGEN_VERSION)" ] || { echo "wasm-bindgen CLI is '$$cli', need $(WASM_BINDGEN_VERSION): run make setup-rust"; exit 1; }

wasm-build: wasm-tools-check | $(BUILD)
	CARGO_PROFILE_RELEASE_OPT_LEVEL=$(WASM_OPT_LEVEL) $(CARGO) build -q -p rlmeta-wasm --target $(WASM_TRIPLE) --release
	rm -rf $(WASM_BINDGEN_OUT) $(WASM_PKG) $(BUILD)/pkg-node $(BUILD)/pkg-web
	wasm-bindgen --target nodejs $(WASM_BINDGEN_FLAGS) --out-dir $(WASM_BINDGEN_OUT)/node $(WASM_RAW)
	wasm-bindgen --target web $(WASM_BINDGEN_FLAGS) --out-dir $(WASM_BINDGEN_OUT)/web $(WASM_RAW)
	@cmp -s $(WASM_BINDGEN_OUT)/node/rlmeta_wasm_bg.wasm $(WASM_BINDGEN_OUT)/web/rlmeta_wasm_bg.wasm \
	  || { echo "wasm-bindgen wrote different modules for nodejs and web: the package cannot share one .wasm"; exit 1; }
	mkdir -p $(WASM_PKG)
	cp $(WASM_BINDGEN_OUT)/web/rlmeta_wasm.js $(WASM_BINDGEN_OUT)/web/rlmeta_wasm.d.ts $(WASM_BINDGEN_OUT)/web/rlmeta_wasm_bg.wasm $(WASM_PKG)/
	cp $(WASM_BINDGEN_OUT)/node/rlmeta_wasm.js $(WASM_PKG)/rlmeta_wasm.cjs
	cp $(WASM_BINDGEN_OUT)/node/rlmeta_wasm.d.ts $(WASM_PKG)/rlmeta_wasm.d.cts
	cd $(WASM_DIR)/js && cp errors.mjs errors.d.mts api.mjs api.d.mts files.mjs files.d.mts tables.mjs tables.d.mts index.mjs index.d.mts \
	  web.mjs web.d.mts README.md $(CURDIR)/$(WASM_PKG)/
	sed -e 's|@VERSION@|$(WASM_VERSION)|' -e 's|@REPOSITORY@|$(WASM_REPO_URL)|' $(WASM_DIR)/js/package.template.json > $(WASM_PKG)/package.json
	@$(MAKE) wasm-size

# npm-pack: the package as npm publishes it, build/rlmeta-<version>.tgz (what package-test installs).
npm-pack: wasm-build
	@rm -f $(BUILD)/rlmeta-*.tgz
	@cd $(BUILD) && npm pack ./pkg --json --silent >npm-pack.json
	@[ -f $(WASM_TARBALL) ] || { echo "FAILED: npm pack wrote no $(WASM_TARBALL)"; exit 1; }
	@node -e 'const [p] = require("./$(BUILD)/npm-pack.json"); console.log(`npm-pack: $(WASM_TARBALL) $${p.size} bytes ($${p.entryCount} files, $${p.unpackedSize} bytes unpacked)`)'

wasm-size:
	@for f in $(WASM_RAW) $(WASM_PKG)/rlmeta_wasm_bg.wasm $(WASM_PKG)/rlmeta_wasm.js $(WASM_PKG)/rlmeta_wasm.cjs; do \
	  printf 'wasm-size: %-48s %8d bytes, %7d gzip -9\n' $$f $$(stat -c %s $$f) $$(gzip -9c $$f | wc -c); done

$(TSC): package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	@touch $@

# The Rust inspector whose JSON (inspect --json) the file tests check the module against.
WASM_INSPECT := $(or $(CARGO_TARGET_DIR),target)/release/inspect
wasm-inspect-bin:
	$(CARGO) build -q --release -p rlmeta-examples --bin inspect

wasm-node-test: wasm-build wasm-inspect-bin
	RLMETA_VECTORS="$(abspath $(VECTORS))" RLMETA_INSPECT="$(abspath $(WASM_INSPECT))" node --test $(WASM_TESTS)

wasm-types: wasm-build $(TSC)
	$(TSC) -p $(WASM_DIR)/tests/tsconfig.json
	@echo "wasm-types: the .d.mts files type-check"

wasm-test: wasm-node-test wasm-types

BINDING_TESTS += wasm-test

# ---------------------------------------------------------------- the inspector page
# inspector-build: bindings-wasm/inspector/ built by Vite into one self-contained HTML file,
# build/inspector/index.html (JS, CSS, worker and module inlined: it opens from disk, offline).
# The page compiles the module once and hands it to its worker, so the web glue's default
# `new URL('rlmeta_wasm_bg.wasm', import.meta.url)` goes (Vite would inline the module twice).
INSPECTOR_PKG  := $(BUILD)/inspector-pkg
INSPECTOR_HTML := $(BUILD)/inspector/index.html
VITE           := node_modules/.bin/vite
WASM_URL_EXPR  := new URL('rlmeta_wasm_bg.wasm', import.meta.url)

.PHONY: inspector inspector-build

$(VITE): package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	@touch $@

inspector: inspector-build

inspector-build: wasm-build $(VITE)
	rm -rf $(INSPECTOR_PKG) && cp -r $(WASM_PKG) $(INSPECTOR_PKG)
	@grep -qF "$(WASM_URL_EXPR)" $(INSPECTOR_PKG)/rlmeta_wasm.js || { echo "wasm-bindgen glue changed: no default module URL to drop"; exit 1; }
	sed -i "s|$(WASM_URL_EXPR)|undefined|" $(INSPECTOR_PKG)/rlmeta_wasm.js
	$(VITE) build --config $(WASM_DIR)/inspector/vite.config.mjs
	@printf 'inspector-build: %s %d bytes, %d gzip -9 (open it in a browser: file://%s)\n' $(INSPECTOR_HTML) \
	  $$(stat -c %s $(INSPECTOR_HTML)) $$(gzip -9c $(INSPECTOR_HTML) | wc -c) $(abspath $(INSPECTOR_HTML))

# inspector-test: the page built from disk, in Debian's Chromium headless shell driven by
# playwright-core (node --test): every fixture under tests/fixtures against inspect --json,
# checkpoints against kafka-dump-log, bad files, a file above 4 GiB refused, 1.5M rows, a 128 MiB file read in slices with the
# renderer's memory bounded (page.test.mjs); and the page and
# inspect --json against Kafka 4.4.0 itself (kafka.test.mjs): every field of every batch, record,
# table row and detail panel against Kafka's DumpLogSegments, the counts against its record
# headers, the live segments against Kafka's own store fed by Kafka's own file reader. Those
# references are made from the jars in the same run (inspector-kafka-ref; tests/e2e/dump-fixtures.sh
# and tests/interop FileReplay). Screenshots: build/inspector-test/.
INSPECTOR_TESTS := $(wildcard $(WASM_DIR)/inspector/tests/*.test.mjs)
CHROMIUM_SHELL  := /usr/lib/chromium/chromium-headless-shell
WASM_GEN        := $(or $(CARGO_TARGET_DIR),target)/release/gen_segment

.PHONY: inspector-browser inspector-test inspector-bins bench-inspector

inspector-browser:
	@[ -x $(CHROMIUM_SHELL) ] || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium-headless-shell; }

inspector-bins:
	$(CARGO) build -q --release -p rlmeta-examples --bin inspect --bin gen_segment

INSPECTOR_KAFKA_REF := $(BUILD)/inspector-kafka
INSPECTOR_SEGMENTS  := $(shell find tests/fixtures -name '*.log' -type f | LC_ALL=C sort)

.PHONY: inspector-kafka-ref
inspector-kafka-ref: | $(BUILD)
	@rm -rf $(INSPECTOR_KAFKA_REF) && mkdir -p $(INSPECTOR_KAFKA_REF)
	@tests/e2e/dump-fixtures.sh $(INSPECTOR_KAFKA_REF)
	@$(call INTEROP_RUN,diff.FileReplay,$(INSPECTOR_KAFKA_REF)/replay.json $(INSPECTOR_SEGMENTS))

inspector-test: inspector-build inspector-bins inspector-browser inspector-kafka-ref
	RLMETA_INSPECT="$(abspath $(WASM_INSPECT))" RLMETA_GEN_SEGMENT="$(abspath $(WASM_GEN))" RLMETA_CHROMIUM=$(CHROMIUM_SHELL) \
	  RLMETA_KAFKA_REF="$(abspath $(INSPECTOR_KAFKA_REF))" node --test $(INSPECTOR_TESTS)

BINDING_TESTS += inspector-test

# bench-inspector (not a test): a generated segment file of INSPECTOR_MIB MiB (default 100;
# `make bench-inspector INSPECTOR_MIB=1024` for Kafka's default segment size) dropped on the page in
# headless Chromium; time to the first rows, every row and the complete summary, the renderer's
# peak memory (VmHWM), module and page sizes.
INSPECTOR_MIB ?= 100
bench-inspector: inspector-build inspector-bins inspector-browser
	INSPECTOR_MIB=$(INSPECTOR_MIB) RLMETA_GEN_SEGMENT="$(abspath $(WASM_GEN))" RLMETA_CHROMIUM=$(CHROMIUM_SHELL) \
	  node $(WASM_DIR)/inspector/bench/bench.mjs
