#!/usr/bin/env bash
# Self-test of the interop harness (run from anywhere): DecodeCheck must pass on v0.json and on
# kafka-4.4.0-values.json, and must fail on a deliberately corrupted copy of the latter.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
mvnx() { mvn -q -B -f tests/interop/pom.xml compile exec:java -Dexec.mainClass="dev.rlmeta.interop.$1" -Dexec.args="$2"; }

mvnx DecodeCheck "tests/vectors/v0.json tests/vectors/kafka-4.4.0-values.json" | tail -1

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/corrupted.json" <<'PY'
import json, sys
d = json.load(open("tests/vectors/kafka-4.4.0-values.json"))
c = d["cases"]
c[0]["record"]["startOffset"] += 1                       # field differs
c[1]["hex"] = c[1]["hex"][:-2] + "02"                    # txnIndexEmpty byte 2: decodes, not canonical
c[2]["record"]["brokerLeaderEpoch"] = 0                  # field 4.4.0 does not have
c[3]["record"]["remoteLogSegmentId"]["id"] = "AAAAAAAAAAAAAAAAAAAAAA"
c[4]["version"] = 1                                      # version differs
c[5]["record"]["segmentLeaderEpochs"].pop()              # array length differs
del c[6]["record"]["txnIndexEmpty"]                      # tagged field missing
c[7]["hex"] += "00"                                      # trailing byte
d["source"] = "corrupted copy of kafka-4.4.0-values.json (selftest)"
json.dump(d, open(sys.argv[1], "w"))
PY
if mvnx DecodeCheck "$tmp/corrupted.json" > "$tmp/out.txt"; then
  echo "selftest FAILED: DecodeCheck accepted a corrupted file"; exit 1
fi
# Not echoed as is: a bare "N passed, 8 failed" line would read as a failing test run.
tail -1 "$tmp/out.txt" | grep -qx '[0-9]* passed, 8 failed' || { echo "selftest FAILED: unexpected result"; cat "$tmp/out.txt"; exit 1; }
echo "selftest OK: DecodeCheck rejected the 8 corrupted cases ($(tail -1 "$tmp/out.txt" | cut -d' ' -f1) others passed)"
