"""The wheel as an operator's environment sees it: dependency ranges, and a codec that imports no tool.

`import rlmeta` and everything the codec, the store and the file readers do must work without
the operator tools' dependencies (kafka-python, crc32c, tqdm, pyjks, cryptography, boto3): a program that only
decodes records should not pay for, or be broken by, a Kafka client. The wheel names its
dependencies as ranges so that it installs beside other packages; the versions make test runs
(PY_RUNTIME_DEPS in rules.mk) lie inside them.
"""

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

TOOL_MODULES = ("kafka", "tqdm", "jks", "cryptography", "boto3", "botocore")
REPO = Path(__file__).resolve().parents[2]
SEGMENT = REPO / "tests/fixtures/broker/remote_log_metadata/__remote_log_metadata-2/00000000000000000000.log"


def _requirements(extras=False):
    """{name: specifier} of the installed wheel's Requires-Dist: the required ones, or (extras)
    those of an optional extra, as {name: (extra, specifier)}."""
    out = {}
    for req in metadata.requires("rlmeta") or []:
        m = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*(.*?)\s*(;.*)?$", req)
        assert m, req
        spec = m.group(2).replace("(", "").replace(")", "").replace(" ", "")
        extra = re.search(r"extra\s*==\s*['\"]([a-z0-9-]+)['\"]", m.group(3) or "")
        if extras and extra:
            out[m.group(1).lower()] = (extra.group(1), spec)
        elif not extras and not extra:
            out[m.group(1).lower()] = spec
    return out


def _version_tuple(v):
    return tuple(int(p) for p in re.findall(r"\d+", v)[:3])


def _satisfies(version, spec):
    """Whether `version` meets a specifier list of >=, <, == clauses (all the wheel uses)."""
    for clause in spec.split(","):
        op, v = re.match(r"(>=|<=|==|<|>)(.+)", clause).groups()
        a, b = _version_tuple(version), _version_tuple(v)
        if not {">=": a >= b, "<=": a <= b, "==": a == b, "<": a < b, ">": a > b}[op]:
            return False
    return True


def test_every_dependency_is_a_bounded_range_holding_the_tested_version():
    reqs = _requirements()
    assert set(reqs) == {"kafka-python", "crc32c", "tqdm", "pyjks", "cryptography", "boto3"}, reqs
    for name, spec in reqs.items():
        assert "==" not in spec, f"{name} is pinned ({spec}): the wheel names ranges"
        assert re.search(r">=[\d.]+", spec) and re.search(r"<[\d.]+", spec), f"{name}: {spec} is not bounded both ways"
        installed = metadata.version(name)
        assert _satisfies(installed, spec), f"{name} {installed} (make test's pin) is outside {spec}"
    assert reqs["kafka-python"] == ">=3.0.12,<4"
    extras = _requirements(extras=True)
    assert {n: e for n, (e, _) in extras.items()} == {"pyarrow": "inventory", "google-cloud-storage": "gcs",
                                                       "azure-storage-blob": "azure"}, extras
    for name, (_, spec) in extras.items():
        assert re.search(r">=[\d.]+", spec) and re.search(r"<[\d.]+", spec), f"{name}: {spec} is not bounded both ways"
        installed = metadata.version(name)
        assert _satisfies(installed, spec), f"{name} {installed} (make test's pin) is outside {spec}"


def test_the_codec_store_and_file_readers_import_no_tool_dependency():
    # A fresh interpreter (this one has pytest's and other tests' imports): use the codec, the
    # store, the key parser, the file readers and the inspector on a real broker's segment file.
    code = f"""
import json, sys, rlmeta
data = open({str(SEGMENT)!r}, "rb").read()
records = list(rlmeta.read_records(data))
values = [rlmeta.decode_value(r.value) for r in records if r.value is not None]
assert values and all(rlmeta.encode_value(v) == r.value for v, r in zip(values, [r for r in records if r.value is not None]))
store = rlmeta.Store()
for r in records:
    store.apply(r.offset, r.key, r.value)
rlmeta.dump_log(data)
print(json.dumps({{"records": len(records), "loaded": sorted(m for m in {TOOL_MODULES!r} if m in sys.modules)}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/",
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["records"] > 0
    assert got["loaded"] == [], f"import rlmeta pulled in {got['loaded']}"


def test_a_file_scan_starts_without_the_cluster_client():
    # `rlmeta scan FILE` reads no cluster: the client (rlmeta._kafka, its ssl and logging) and the
    # tools' dependencies stay unimported (a tenth of a 100 MB scan's run); the next test shows the
    # probe sees rlmeta._kafka once it is imported.
    code = f"""
import io, json, sys, contextlib, rlmeta.cli
with contextlib.redirect_stdout(io.StringIO()) as out:
    rc = rlmeta.cli.main(["scan", {str(SEGMENT)!r}])
probe = ("rlmeta._kafka", "rlmeta._security", "ssl", *{TOOL_MODULES!r})
print(json.dumps({{"rc": rc, "records": out.getvalue().count(" records"), "loaded": sorted(m for m in probe if m in sys.modules)}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/",
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["rc"] == 0 and got["records"] >= 1
    assert got["loaded"] == [], f"rlmeta scan FILE imported {got['loaded']}"


def test_the_tools_do_import_them_so_the_check_above_can_fail():
    # The same probe on the CLI module sees kafka-python's import once a tool needs it: the list
    # above is empty because the codec does not import them, not because the probe cannot see.
    code = "import sys, rlmeta._kafka as k, kafka; print(sorted(m for m in ('kafka', 'rlmeta._kafka', 'ssl') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['kafka', 'rlmeta._kafka', 'ssl']"
