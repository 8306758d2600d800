"""Start-up time of the commands that write no report, against `python -c pass`, against
importing the Typer app (every command's declaration) and against another ref's code (default
main), measured alternately in one run.

    .venv/bin/python bench/startup.py [--base main] [--repeats 7]

For `iolab --help`, `--version`, `runs` (an empty runs directory), `tests`, `sim presets` and
`run -h`, and for three that do work besides starting: a quick run on a tiny simulated drive
without a report (`run latency --quick --cell-time 1s --no-report`), `show RUN` and `check RUN
-b RUN` on two such runs stored first (by this tree's code, before the timing starts):
the median wall and CPU milliseconds (user + system of the command's process, from wait4) of
each code (this tree's src/ and the base's, unpacked by git archive, both with compiled
bytecode), the CPU ratio base/this, this tree's CPU above `python -c pass` (the goal: under
300 ms) and as a multiple of importing the command line module. Each repeat runs every command
of both trees once, in the reverse order of the repeat before, so a change of load while it
runs falls on both. Nothing asserts; on a shared machine read the CPU columns.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from treetime import REPO, iolab_argv, load, unpack_src

GOAL_MS = 300
# the Typer app with every command's declaration: cli/app.py, or cli/main.py in a tree before it
# (where the console script and the app were one module)
IMPORT_APP = "try:\n    import iolab.cli.app\nexcept ModuleNotFoundError:\n    import iolab.cli.main"


# a run small enough to time often: the tests' own tiny drive, one-second cells
QUICK_RUN = ("run", "latency", "--quick", "--cell-time", "1s", "--no-report", "-t", "sim:enterprise-sas?user_gb=0.1")
WORK = ("iolab run quick sim", "iolab show RUN", "iolab check")
# `check` exits 7 when the candidate measured worse than the baseline beyond noise: a verdict, not a failure
VERDICTS = (0, 7)


def timed(argv: list[str], src: Path) -> tuple[float, float]:
    """(wall ms, CPU ms) of one command run with `src` first on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in VERDICTS:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode})")
    return wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="main")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="this tree against itself, one repeat of two commands: does the bench still run?",
    )
    a = ap.parse_args()
    here = REPO / "src"
    if a.smoke:  # no base to unpack: the tree stands in for it (a copy, removed below like an unpacked one)
        a.base, a.repeats = "this tree", 1
        base = Path(tempfile.mkdtemp(prefix="iolab-bench-smoke-")) / "src"
        shutil.copytree(here, base, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        base = unpack_src(a.base)
    # both trees compiled: where PYTHONDONTWRITEBYTECODE is set, a module of this tree edited since
    # scripts/setup was compiled again at every start (cli/app.py, new, cost ~30 ms a command)
    for tree in (base, here):
        compileall.compile_dir(str(tree), quiet=1)
    runs = tempfile.mkdtemp(prefix="iolab-bench-runs-")
    stored, scratch = Path(runs) / "stored", Path(runs) / "scratch"
    for _ in range(1 if a.smoke else 2):  # show's run, then check's candidate
        timed(iolab_argv(*QUICK_RUN, "--runs-dir", str(stored)), here)
    first, *others = sorted(str(d) for d in stored.iterdir())
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import the app": [sys.executable, "-c", IMPORT_APP],
        "iolab --help": iolab_argv("--help"),
        "iolab --version": iolab_argv("--version"),
        "iolab runs": iolab_argv("runs", "--runs-dir", runs),
        "iolab tests": iolab_argv("tests"),
        "iolab sim presets": iolab_argv("sim", "presets"),
        "iolab run -h": iolab_argv("run", "-h"),
        "iolab run quick sim": iolab_argv(*QUICK_RUN, "--runs-dir", str(scratch)),
        "iolab show RUN": iolab_argv("show", first),
        "iolab check": iolab_argv("check", *others, "-b", first),
    }
    if a.smoke:  # the stored run's `show` stands for the commands that read one
        commands = {
            k: v
            for k, v in commands.items()
            if k in ("python -c pass", "import the app", "iolab --version", "iolab show RUN")
        }
    trees = {"base": base, "this": here}
    jobs = [(name, tree) for name in commands for tree in trees]
    got: dict[tuple[str, str], list[tuple[float, float]]] = {job: [] for job in jobs}
    try:
        for r in range(a.repeats):
            for name, tree in jobs if r % 2 == 0 else reversed(jobs):
                got[name, tree].append(timed(commands[name], trees[tree]))
    finally:
        shutil.rmtree(base.parent)
        shutil.rmtree(runs)

    def median(name: str, tree: str, i: int) -> float:
        return statistics.median(t[i] for t in got[name, tree])

    print(f"load average {load()}; {a.repeats} repeats; medians in ms (CPU: user + system)")
    print(
        f"{'command':20} {a.base + ' wall':>10} {a.base + ' CPU':>9} {'this wall':>9} {'this CPU':>8} "
        f"{'CPU ratio':>9} {'CPU - pass':>10} {'CPU / import':>12}"
    )
    bare, imported = median("python -c pass", "this", 1), median("import the app", "this", 1)
    for name in commands:
        (bw, bc), (hw, hc) = ((median(name, t, 0), median(name, t, 1)) for t in trees)
        over = hc - bare
        unmarked = ("python -c pass", "import the app", *WORK)
        mark = "" if name in unmarked else (" ok" if over < GOAL_MS else " OVER")
        print(
            f"{name:20} {bw:10.0f} {bc:9.0f} {hw:9.0f} {hc:8.0f} {bc / hc:8.2f}× {over:10.0f} "
            f"{hc / imported:11.2f}×{mark}"
        )
    print(f"goal: CPU - pass under {GOAL_MS} ms (not for {', '.join(WORK)}: they do more than start)")


if __name__ == "__main__":
    main()
