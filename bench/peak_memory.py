"""Peak memory of one `manage.py` command, taken in the child process that runs it: the bench of large run files and
the suite's decompression-bomb tests both need the figure of the importing process alone."""

import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

# manage.py, then its own peak resident memory (VmHWM) into the file named first. Not the child's ru_maxrss:
# Linux keeps the larger of a process's peaks across exec, which would count the parent it was forked from.
MEASURED = """
import atexit, runpy, sys
report = sys.argv.pop(1)
def peak():
    with open("/proc/self/status") as status, open(report, "w") as out:
        out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
atexit.register(peak)
sys.argv[0] = "manage.py"
runpy.run_path("manage.py", run_name="__main__")
"""


def run_manage(code: Path, args: list[str], env: Mapping[str, str]) -> tuple[subprocess.CompletedProcess[bytes], int]:
    """Run `manage.py ARGS` in the checkout `code`: (the finished process, its output captured; peak resident KiB)."""
    with tempfile.NamedTemporaryFile(prefix="touchstone-peak-") as report:
        child = subprocess.run([sys.executable, "-c", MEASURED, report.name, *args], cwd=code, env=env,
                               capture_output=True, check=False)
        return child, int(Path(report.name).read_text())
