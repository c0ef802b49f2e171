"""`python -m rlmeta`."""

import json
import subprocess
import sys


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "rlmeta", *args], input=stdin, capture_output=True, text=True, cwd="/")


def test_decode_then_encode(value_cases):
    case = value_cases[0]
    out = run("decode", case["hex"])
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc == {"apiKey": case["apiKey"], "version": case["version"], "record": case["record"]}
    back = run("encode", "-", stdin=out.stdout)
    assert back.returncode == 0, back.stderr
    assert back.stdout.strip() == case["hex"]


def test_errors_and_usage():
    out = run("decode", "01")
    assert out.returncode == 1 and out.stderr.startswith("rlmeta: truncated"), out.stderr
    assert run("decode", "0g").returncode == 2
    assert run().returncode == 2
