"""Shared by bench/startup.py and bench/report_speed.py: the code of a git ref unpacked beside
the working tree's, and one command timed with the CPU of every process it started.

CPU time counts the whole process tree: this process becomes a child subreaper, so the report's
worker processes (children of multiprocessing's fork server, which outlives the command) are
reaped here and their CPU lands in RUSAGE_CHILDREN.
"""

from __future__ import annotations

import ctypes
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PR_SET_CHILD_SUBREAPER = 36

# the `iolab` console script, run from whichever src/ is first on PYTHONPATH
IOLAB = "import sys; sys.argv = ['iolab', *sys.argv[1:]]\nif __name__ == '__main__':\n    from iolab.cli.main import main; main()"


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def unpack_src(ref: str) -> Path:
    """`ref`'s src/ in a temporary directory (with this tree's built simulator extension)."""
    d = Path(tempfile.mkdtemp(prefix=f"iolab-bench-{ref.replace('/', '-')}-"))
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "src"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(d)], input=archive, check=True)
    for so in (REPO / "src/iolab").glob("_sim*.so"):
        shutil.copy2(so, d / "src/iolab" / so.name)
    # compiled now, as scripts/setup compiles this tree's: where PYTHONDONTWRITEBYTECODE is set,
    # the base's commands compiled every module they import again at each start
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(d / "src")], check=True, capture_output=True)
    return d / "src"


def timed(argv: list[str], src: Path | None, quiet: bool = True) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the whole process tree) of one command; `src`: the
    PYTHONPATH it runs with (None: as installed)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen(argv, env=env, stdout=out, stderr=out)
    proc.wait()
    wall = time.monotonic() - t0
    while True:  # the orphans it left (the fork server and its workers) end once it has
        try:
            os.wait()
        except ChildProcessError:
            break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode})")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def iolab_argv(*args: str) -> list[str]:
    return [sys.executable, "-c", IOLAB, *args]


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])
