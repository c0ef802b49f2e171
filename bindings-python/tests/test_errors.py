"""The operator tools' own error codes: every code a raise names is a known one, every known one
is raised somewhere and documented in the README's table, and the CLI prints it."""

import re
import subprocess
import sys
from pathlib import Path

import rlmeta
from rlmeta import _errors

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(Path(rlmeta.__file__).parent.glob("*.py"))


def raised_codes():
    found = {}
    for f in SOURCES:
        text = f.read_text()
        for m in re.finditer(r'(?:Error|Failed|Denied|ToolError)\(\s*"([a-z0-9_]+)"', text):
            found.setdefault(m.group(1), f.name)
        for m in re.finditer(r'super\(\).__init__\(\s*"([a-z0-9_]+)"', text):
            found.setdefault(m.group(1), f.name)
    return found


def test_every_code_raised_is_known_and_every_known_one_raised():
    raised = raised_codes()
    assert set(raised) - set(_errors.CODES) == set(), raised
    assert set(_errors.CODES) - set(raised) == set()


def test_every_code_is_in_the_readme_table():
    readme = (ROOT / "README.md").read_text()
    table = set(re.findall(r"^\| `([a-z0-9_]+)` \| ", readme, re.M))
    assert set(_errors.CODES) <= table, set(_errors.CODES) - table


def test_the_cli_prints_the_code_and_exits_2(tmp_path):
    out = subprocess.run([sys.executable, "-m", "rlmeta.cli", "reconcile", "--no-progress", str(tmp_path),
                          "--store", str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert out.returncode == 2, out
    assert "metadata_not_found: no __remote_log_metadata partition found in" in out.stderr, out.stderr
    assert str(tmp_path) in out.stderr and "nothing deleted" in out.stderr
