"""The peak memory of a tool run in its own process, for the scale tests.

Read as VmHWM in /proc/self/status when the tool exits: the high-water mark of the process's own
address space since its exec. Not getrusage's ru_maxrss: Linux carries that across exec, so a tool
started by a pytest process that has grown (a broker fixture producing 200,000 records) reports
the parent's size instead of its own (it made the migration scale test's figure move between 90
and 136 MB, and put a 34 MB scan at 138 MB).
"""

import re
import subprocess
import sys
from typing import List, Tuple

#: Code a measured child process runs first: it prints its VmHWM to stderr at exit
#: (also bench/topic_bench.py's).
PRELUDE = (
    "import atexit, sys\n"
    "def _peak():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            return line.split()[1]\n"
    "atexit.register(lambda: sys.stderr.write('PEAK_RSS_KB %s\\n' % _peak()))\n"
)


def run_measured(module: str, argv: List[str], timeout: int = 600) -> Tuple[int, str, str, float]:
    """``rlmeta.<module>.main(argv)`` in its own process: (returncode, stdout, stderr, peak RSS in MB)."""
    code = PRELUDE + f"from rlmeta import {module} as tool\nsys.exit(tool.main(sys.argv[1:]))\n"
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=timeout)
    m = re.search(r"PEAK_RSS_KB (\d+)", out.stderr)
    assert m, out.stderr[-2000:]
    return out.returncode, out.stdout, out.stderr, int(m.group(1)) / 1024
