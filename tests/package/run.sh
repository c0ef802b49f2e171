#!/usr/bin/env bash
# make package-test: rlmeta's packages installed the way each ecosystem installs them.
#   npm    build/rlmeta-<version>.tgz (make npm-pack) installed with `npm install --offline` into a
#          fresh Node project in a temp dir (node --test: vectors, real segment files, checkpoints;
#          tsc with nodenext resolution), and into a Vite app (vite pinned by its lock, node_modules
#          cached under build/package-test/vite): tsc with bundler resolution, `vite build`, the
#          built page in Chromium's headless shell (tests/package/vite.test.mjs).
#   Maven  dev.rlmeta:rlmeta (the Java library, release native library inside) and
#          dev.rlmeta:rlmeta-kafka-plugin (build/rlmeta-kafka-plugin.jar of make plugin) deployed
#          with their poms into the file repository build/maven-repo; fresh Maven projects in a
#          temp dir (tests/package/maven) resolve them from there only: one runs JUnit decodes
#          with rlmeta, one depending on the plugin gets no Kafka jar on its runtime classpath.
# Every check prints a line; the last line counts them (node and JUnit tests one by one).
# Needs: make npm-pack plugin wasm-inspect-bin inspector-browser and the repository's npm ci (tsc,
# playwright-core); the Makefile target runs them first.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$ROOT/build
WORK=$BUILD/package-test
LOGS=$WORK/logs
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -n 1)
TARBALL=$BUILD/rlmeta-$VERSION.tgz
TSC=$ROOT/node_modules/.bin/tsc
MAVEN_REPO=$BUILD/maven-repo
M2=$WORK/m2   # the consumers' local repository (never ~/.m2)
MVN=(mvn -B -Dstyle.color=never)
export RLMETA_ROOT=$ROOT RLMETA_INSPECT=${RLMETA_INSPECT:-$ROOT/target/release/inspect}
export RLMETA_CHROMIUM=${RLMETA_CHROMIUM:-/usr/lib/chromium/chromium-headless-shell}

passed=0
failed=0
mkdir -p "$LOGS"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

pass() { echo "package-test: ok   $1"; passed=$((passed + 1)); }
fail() { echo "package-test: FAIL $1"; failed=$((failed + 1)); }

# check <what> <command...>: one check; its output goes to a log, shown when it fails.
check() {
  local what=$1 log
  shift
  log=$LOGS/$(tr -c 'a-zA-Z0-9\n' '_' <<<"$what" | cut -c1-80).log
  local t0=$SECONDS
  if "$@" >"$log" 2>&1; then pass "$what [$((SECONDS - t0)) s]"; else fail "$what (log ${log#"$ROOT"/})"; tail -n 40 "$log"; fi
}

# node_tests <what> <dir> <node --test args...>: every test of the run counts on its own.
node_tests() {
  local what=$1 dir=$2 log=$LOGS/$3.log rc n f
  shift 3
  local t0=$SECONDS
  (cd "$dir" && node --test --test-reporter=tap "$@") >"$log" 2>&1
  rc=$?
  echo "package-test: $what: node --test took $((SECONDS - t0)) s"
  while IFS= read -r line; do
    case $line in
      'ok '*) pass "$what: ${line#ok * - }" ;;
      'not ok '*) fail "$what: ${line#not ok * - } (log ${log#"$ROOT"/})" ;;
    esac
  done < <(grep -E '^(not )?ok [0-9]+ - ' "$log")
  n=$(grep -cE '^(not )?ok [0-9]+ - ' "$log")
  f=$(grep -cE '^not ok [0-9]+ - ' "$log")
  if [ "$n" = 0 ] || { [ "$rc" != 0 ] && [ "$f" = 0 ]; }; then fail "$what: node --test exited $rc after $n tests (log ${log#"$ROOT"/})"; fi
  if [ "$f" != 0 ] || [ "$rc" != 0 ]; then tail -n 60 "$log"; fi
}

# ---------------------------------------------------------------- npm
tarball_files() {
  [ -f "$TARBALL" ] || { echo "no $TARBALL: make npm-pack"; return 1; }
  node -e '
    const [tgzList, pkgJson] = process.argv.slice(1);
    const got = tgzList.trim().split("\n").map((f) => f.replace(/^package\//, "")).sort();
    const want = [...JSON.parse(pkgJson).files, "package.json", "README.md"].sort();
    console.log(got.join(" "));
    if (JSON.stringify(got) !== JSON.stringify(want)) { console.error(`tarball: ${got}\nwant:    ${want}`); process.exit(1); }
  ' "$(tar tzf "$TARBALL")" "$(tar xzOf "$TARBALL" package/package.json)"
}
check "npm: $(basename "$TARBALL") ($(stat -c %s "$TARBALL" 2>/dev/null) bytes) holds exactly package.json's files" tarball_files

NODE_APP=$TMP/node-app
mkdir -p "$NODE_APP"
cp "$TARBALL" "$ROOT/tests/package/node/consumer.test.mjs" "$ROOT/tests/package/node/consumer.mts" "$ROOT/tests/package/node/tsconfig.json" "$NODE_APP/"
printf '{ "name": "rlmeta-node-consumer", "private": true, "type": "module" }\n' >"$NODE_APP/package.json"
check "npm: npm install --offline ./$(basename "$TARBALL") in a fresh Node project (no registry)" \
  bash -c "cd '$NODE_APP' && npm install --offline --no-audit --no-fund ./$(basename "$TARBALL")"
node_tests "npm: Node project" "$NODE_APP" node-project consumer.test.mjs
check "npm: tsc (nodenext) type-checks a Node consumer against the installed declarations" bash -c "cd '$NODE_APP' && '$TSC' -p tsconfig.json"

VITE_APP=$WORK/vite
vite_install() {
  mkdir -p "$VITE_APP" && rm -rf "$VITE_APP/src" "$VITE_APP/dist" || return 1
  cp -r "$ROOT/tests/package/vite/." "$VITE_APP/" || return 1
  # node_modules is kept between runs; npm ci again whenever the committed lock changes
  if ! cmp -s "$VITE_APP/package-lock.json" "$VITE_APP/node_modules/.rlmeta-package-test.lock"; then
    (cd "$VITE_APP" && npm ci --no-audit --no-fund) || return 1
    cp "$VITE_APP/package-lock.json" "$VITE_APP/node_modules/.rlmeta-package-test.lock"
  fi
  # the last run's rlmeta goes first: a failed install must leave none behind for the checks below
  rm -rf "$VITE_APP/node_modules/rlmeta"
  (cd "$VITE_APP" && npm install --offline --no-save --no-audit --no-fund "$TARBALL") || return 1
  cmp "$VITE_APP/node_modules/rlmeta/rlmeta_wasm_bg.wasm" "$BUILD/pkg/rlmeta_wasm_bg.wasm" \
    && node -e 'const v = require(process.argv[1]).version; if (v !== process.argv[2]) { console.error(`installed rlmeta ${v}`); process.exit(1); }' \
      "$VITE_APP/node_modules/rlmeta/package.json" "$VERSION"
}
check "npm: Vite app (vite $(node -p 'require(process.argv[1]).devDependencies.vite' "$ROOT/tests/package/vite/package.json"), npm ci) gets the tarball with npm install --offline" vite_install
check "npm: tsc (bundler resolution) type-checks the Vite app against the web entry's declarations" bash -c "cd '$VITE_APP' && '$TSC' -p tsconfig.json"
check "npm: vite build" bash -c "cd '$VITE_APP' && node_modules/.bin/vite build"
RLMETA_VITE_APP=$VITE_APP node_tests "npm: Vite app in Chromium" "$ROOT" vite-app tests/package/vite.test.mjs

# ---------------------------------------------------------------- Maven
# The library is built apart from jni-test's target/ (rlmeta.build.dir) with the release native
# library that make plugin puts in the plugin jar (`make natives`: linux-x86_64, glibc 2.17), and
# deployed by the same Maven run; the plugin jar is make plugin's.
LIB_BUILD=$WORK/maven-build/rlmeta
library_deploy() {
  rm -rf "$LIB_BUILD" "$MAVEN_REPO"
  (cd "$ROOT/bindings-c/java" && "${MVN[@]}" -q package org.apache.maven.plugins:maven-deploy-plugin:2.7:deploy \
    -Dmaven.test.skip=true -Drlmeta.native.dir="$ROOT/target/x86_64-unknown-linux-gnu/release" -Drlmeta.build.dir="$LIB_BUILD" \
    -DaltDeploymentRepository="rlmeta-local::default::file://$MAVEN_REPO" -DupdateReleaseInfo=true) || return 1
  unzip -l "$LIB_BUILD/rlmeta-$VERSION.jar" | grep "dev/rlmeta/native/linux-x86_64/librlmeta_c-$VERSION.so" \
    && cmp "$LIB_BUILD/rlmeta-$VERSION.jar" "$MAVEN_REPO/dev/rlmeta/rlmeta/$VERSION/rlmeta-$VERSION.jar"
}
check "maven: dev.rlmeta:rlmeta $VERSION (release native library inside) built and deployed into build/maven-repo" library_deploy

plugin_deploy() {
  [ -f "$BUILD/rlmeta-kafka-plugin.jar" ] || { echo "no build/rlmeta-kafka-plugin.jar: make plugin"; return 1; }
  "${MVN[@]}" -q org.apache.maven.plugins:maven-deploy-plugin:2.7:deploy-file -Dfile="$BUILD/rlmeta-kafka-plugin.jar" \
    -DpomFile="$ROOT/bindings-c/java/plugin/pom.xml" -Durl="file://$MAVEN_REPO" -DrepositoryId=rlmeta-local -DupdateReleaseInfo=true \
    && find "$MAVEN_REPO" -type f | sort
}
check "maven: dev.rlmeta:rlmeta-kafka-plugin $VERSION (build/rlmeta-kafka-plugin.jar) deployed into build/maven-repo" plugin_deploy

poms() {
  python3 - "$MAVEN_REPO/dev/rlmeta" "$VERSION" <<'EOF'
import sys, xml.etree.ElementTree as ET
root, version = sys.argv[1:]
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
bad = []
for artifact in ("rlmeta", "rlmeta-kafka-plugin"):
    pom = ET.parse(f"{root}/{artifact}/{version}/{artifact}-{version}.pom").getroot()
    get = lambda path: (pom.findtext(path, namespaces=ns) or "").strip()
    for path in ("m:groupId", "m:artifactId", "m:version", "m:name", "m:description", "m:url",
                 "m:licenses/m:license/m:name", "m:licenses/m:license/m:url", "m:scm/m:url", "m:scm/m:connection"):
        if not get(path):
            bad.append(f"{artifact}: no {path}")
    if (get("m:groupId"), get("m:artifactId"), get("m:version")) != ("dev.rlmeta", artifact, version):
        bad.append(f"{artifact}: coordinates {get('m:groupId')}:{get('m:artifactId')}:{get('m:version')}")
    deps = [(d.findtext("m:groupId", namespaces=ns), d.findtext("m:artifactId", namespaces=ns), d.findtext("m:scope", namespaces=ns) or "compile")
            for d in pom.findall("m:dependencies/m:dependency", ns)]
    for g, a, scope in deps:
        if artifact == "rlmeta" and scope != "test":
            bad.append(f"rlmeta: {g}:{a} is {scope}: the library needs nothing but the JDK")
        if artifact == "rlmeta-kafka-plugin" and g == "org.apache.kafka" and scope != "provided":
            bad.append(f"plugin: {g}:{a} is {scope}, not provided")
    if artifact == "rlmeta-kafka-plugin" and not any(g == "org.apache.kafka" for g, _, _ in deps):
        bad.append("plugin: no Kafka dependency")
    print(artifact, get("m:name"), "|", get("m:licenses/m:license/m:name"), "|", get("m:scm/m:url"), "|", deps)
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}
check "maven: both poms carry name, description, url, license, scm; the library needs only the JDK, the plugin's Kafka is provided" poms

# Both consumer projects in one Maven run (tests/package/maven: library/ and plugin/), with their
# own local repository, from which rlmeta's artifacts are removed first.
MVN_APP=$TMP/maven-app
cp -r "$ROOT/tests/package/maven" "$MVN_APP"
rm -rf "$M2/dev/rlmeta"
t0=$SECONDS
(cd "$MVN_APP" && "${MVN[@]}" -Dmaven.repo.local="$M2" -Drlmeta.repo="file://$MAVEN_REPO" -Drlmeta.version="$VERSION" \
  -Drlmeta.vectors="$ROOT/tests/vectors" test) >"$LOGS/maven-app.log" 2>&1
rc=$?
echo "package-test: maven: the fresh projects' mvn test took $((SECONDS - t0)) s"
for r in "$MVN_APP"/library/target/surefire-reports/TEST-*.xml; do
  [ -f "$r" ] || continue
  python3 - "$r" <<'EOF'
import sys, xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    bad = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
    print(("not ok " if bad else "ok ") + case.get("name"))
EOF
done >"$LOGS/maven-app.cases"
while IFS= read -r line; do
  case $line in
    'ok '*) pass "maven: fresh project, JUnit: ${line#ok }" ;;
    'not ok '*) fail "maven: fresh project, JUnit: ${line#not ok } (log build/package-test/logs/maven-app.log)" ;;
  esac
done <"$LOGS/maven-app.cases"
if [ "$rc" != 0 ] || ! grep -q '^ok ' "$LOGS/maven-app.cases"; then
  fail "maven: fresh projects: mvn test exited $rc (log build/package-test/logs/maven-app.log)"
  tail -n 60 "$LOGS/maven-app.log"
fi
check "maven: the fresh project resolved rlmeta from build/maven-repo (rlmeta-local), not from ~/.m2" \
  grep -q "^rlmeta-$VERSION.jar>rlmeta-local=" "$M2/dev/rlmeta/rlmeta/$VERSION/_remote.repositories"

plugin_classpath() {
  tr ':' '\n' <"$MVN_APP/plugin/cp.txt" || return 1
  grep -q "/dev/rlmeta/rlmeta-kafka-plugin/$VERSION/rlmeta-kafka-plugin-$VERSION.jar" "$MVN_APP/plugin/cp.txt" \
    && ! grep -q 'org/apache/kafka' "$MVN_APP/plugin/cp.txt" \
    && grep -q "^rlmeta-kafka-plugin-$VERSION.jar>rlmeta-local=" "$M2/dev/rlmeta/rlmeta-kafka-plugin/$VERSION/_remote.repositories"
}
check "maven: a project depending on rlmeta-kafka-plugin gets its jar from build/maven-repo and no Kafka jar at run time" plugin_classpath

echo "package-test: took $SECONDS s"
echo "package-test: $passed passed, $failed failed"
[ "$failed" = 0 ]
