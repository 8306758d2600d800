"""Report writing time, this tree's code against another ref's (default main), measured
alternately in one run on the same stored runs.

    .venv/bin/python bench/report_speed.py [--base main] [--repeats 1] [--run RUN] [--sequence RUN ...]
    .venv/bin/python bench/report_speed.py --with-without [--base main] [--repeats 1] [--tests latency,characterise]

Without --run, makes a quick latency run first (`iolab run latency --quick --no-report` on the
simulated drive, in a temporary runs directory). Times `iolab report RUN` and, given runs of a
sequence (e.g. the seven of `iolab run characterise --quick --no-report`), `iolab report
--sequence RUN ...`: median wall seconds and CPU seconds of the whole process tree (the plot
workers included), and the ratios base/this. The goals: a quick latency report within 5 s, a
quick characterise sequence report within 60 s, on a 2-core machine. Nothing asserts; on a
shared machine the CPU columns are the comparable ones.

--with-without: what a report costs beside its run (issue 35's goal): `iolab run latency --quick`
and `iolab run characterise --quick` on the simulated drive, each with its report(s) and with
`--no-report`, with this tree's code and the base's, alternately; prints the CPU seconds of each
and the ratio with/without beside the goal (2x).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from treetime import REPO, become_subreaper, iolab_argv, load, timed, unpack_src


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="main")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--run", help="a stored run to report (default: a quick latency run made here)")
    ap.add_argument("--sequence", nargs="*", default=[], help="the runs of a sequence, reported as one")
    ap.add_argument(
        "--smoke", action="store_true", help="this tree against itself on a one-round run: does the bench still run?"
    )
    ap.add_argument("--with-without", action="store_true", help="runs with their reports against --no-report")
    ap.add_argument("--tests", default="latency,characterise", help="--with-without: the tests run, comma-separated")
    a = ap.parse_args()
    become_subreaper()
    here = REPO / "src"
    if a.smoke:  # no base to unpack: this tree's code stands in for it
        a.base, base = "this tree", here
    else:
        base = unpack_src(a.base)
    made: list[str] = []  # temporary directories, removed at the end
    try:
        if a.with_without:
            with_without(a.base, base, here, a.repeats, a.tests.split(","))
        else:
            report_all(a, base, here, made)
    finally:
        for d in made:
            shutil.rmtree(d, ignore_errors=True)
        if base != here:
            shutil.rmtree(base.parent, ignore_errors=True)


def report_all(a: argparse.Namespace, base: Path, here: Path, made: list[str]) -> None:
    run = a.run
    if run is None:
        runs = Path(tempfile.mkdtemp(prefix="iolab-bench-runs-"))
        made.append(str(runs))
        small = ["--max-rounds", "1", "--cell-time", "200ms"] if a.smoke else []
        timed(iolab_argv("run", "latency", "--quick", "--no-report", *small, "--runs-dir", str(runs)), here)
        [run] = [str(p) for p in runs.iterdir()]
    cases = {"quick latency report": ["report", run]}
    if a.sequence:
        cases[f"sequence report ({len(a.sequence)} runs)"] = ["report", "--sequence", *a.sequence]
    print(f"load average at start {load()}; {a.repeats} repeat(s); median wall / CPU seconds (process tree)")
    print(
        f"{'case':28} {a.base + ' wall':>10} {a.base + ' CPU':>9} {'this wall':>10} {'this CPU':>9} "
        f"{'wall ratio':>11} {'CPU ratio':>10}"
    )
    for name, args in cases.items():
        got: dict[str, list[tuple[float, float]]] = {"base": [], "here": []}
        for _ in range(a.repeats):
            for which, src in (("base", base), ("here", here)):
                out = tempfile.mkdtemp(prefix=f"iolab-bench-report-{which}-")
                made.append(out)
                got[which].append(timed(iolab_argv(*args, "--out", out), src))
        (bw, bc), (hw, hc) = (
            (statistics.median(w for w, _ in got[k]), statistics.median(c for _, c in got[k])) for k in ("base", "here")
        )
        print(f"{name:28} {bw:10.1f} {bc:9.1f} {hw:10.1f} {hc:9.1f} {bw / hw:10.1f}× {bc / hc:9.1f}×")
    print(f"load average at end {load()}")


GOAL = 2.0  # a run with its report within 2x the CPU of the same run without (issue 35)
# what pip writes as the `iolab` console script
CONSOLE_SCRIPT = "import sys\nfrom iolab.cli.main import main\nif __name__ == '__main__':\n    sys.exit(main())\n"


def with_without(name: str, base: Path, here: Path, repeats: int, tests: list[str]) -> None:
    # run as the installed `iolab` console script is: multiprocessing runs a main module with a
    # file again in every plot worker it starts, and this one imports the command line at its top
    script = Path(tempfile.mkdtemp(prefix="iolab-bench-script-")) / "iolab"
    script.write_text(CONSOLE_SCRIPT)
    print(f"load average at start {load()}; {repeats} repeat(s); median CPU seconds of the process tree")
    print(f"{'case':22} {'code':>8} {'no report':>10} {'report':>8} {'ratio':>7} {'goal':>6}")
    for test in tests:
        cpu: dict[tuple[str, bool], list[float]] = {(w, r): [] for w in ("base", "here") for r in (False, True)}
        for i in range(repeats):
            order = [("base", base), ("here", here)]
            for which, src in order if i % 2 == 0 else order[::-1]:
                for report in (False, True):
                    runs = tempfile.mkdtemp(prefix=f"iolab-bench-runs-{which}-")
                    flag = [] if report else ["--no-report"]
                    cpu[which, report].append(
                        timed([sys.executable, str(script), "run", test, "--quick", *flag, "--runs-dir", runs], src)[1]
                    )
                    shutil.rmtree(runs, ignore_errors=True)
        for which, label in (("base", name), ("here", "this")):
            off, on = (statistics.median(cpu[which, r]) for r in (False, True))
            print(f"{test + ' --quick':22} {label:>8} {off:10.2f} {on:8.2f} {on / off:6.1f}× {GOAL:5.1f}×")
    print(f"load average at end {load()}")


if __name__ == "__main__":
    main()
