# The packages installed as each ecosystem installs them (included by the top Makefile).
#   package-test  the npm tarball (make npm-pack) in a fresh Node project and in a Vite app opened
#                 in Chromium; the Maven artifacts dev.rlmeta:rlmeta and dev.rlmeta:rlmeta-kafka-plugin
#                 deployed into build/maven-repo and resolved from there by fresh Maven projects.
#                 tests/package/run.sh says what each check is.

.PHONY: package-test

package-test: npm-pack plugin wasm-inspect-bin inspector-browser $(TSC)
	@tests/package/run.sh

BINDING_TESTS += package-test
