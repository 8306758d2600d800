"""Start-up time of the commands that write no report, against `python -c pass` and against
another ref's code (default main), measured alternately in one run.

    .venv/bin/python bench/startup.py [--base main] [--repeats 5]

For `iolab --help`, `iolab runs` (an empty runs directory) and `iolab tests`: the median wall
and CPU seconds of each code (this tree's src/ and the base's, unpacked by git archive, both
with compiled bytecode), the CPU ratio base/this, and this tree's CPU less `python -c pass`'s
(the goal: under 0.3 s). Nothing asserts; on a shared machine read the CPU columns.
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import sys
import tempfile

from treetime import REPO, become_subreaper, iolab_argv, load, timed, unpack_src

GOAL_S = 0.3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="main")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    become_subreaper()
    base = unpack_src(a.base)
    compileall.compile_dir(str(base), quiet=1)
    here = REPO / "src"
    runs = tempfile.mkdtemp(prefix="iolab-bench-runs-")
    commands = {
        "python -c pass": None,
        "iolab --help": ["--help"],
        "iolab runs": ["runs", "--runs-dir", runs],
        "iolab tests": ["tests"],
    }
    print(f"load average {load()}; {a.repeats} repeats; median wall / CPU seconds")
    print(
        f"{'command':16} {a.base + ' wall':>11} {a.base + ' CPU':>10} {'this wall':>10} {'this CPU':>9} "
        f"{'CPU ratio':>10} {'CPU over python -c pass':>24}"
    )
    bare = None
    for name, args in commands.items():
        got: dict[str, list[tuple[float, float]]] = {"base": [], "here": []}
        for _ in range(a.repeats):
            for which, src in (("base", base), ("here", here)):
                argv = [sys.executable, "-c", "pass"] if args is None else iolab_argv(*args)
                got[which].append(timed(argv, src))
        (bw, bc), (hw, hc) = (
            (statistics.median(w for w, _ in got[k]), statistics.median(c for _, c in got[k])) for k in ("base", "here")
        )
        if args is None:
            bare = hc
        over = "" if args is None else f"{hc - bare:.2f} (goal < {GOAL_S})"
        print(f"{name:16} {bw:11.2f} {bc:10.2f} {hw:10.2f} {hc:9.2f} {bc / hc:9.1f}× {over:>24}")


if __name__ == "__main__":
    main()
