"""What `--json` adds to a run: `iolab run TEST --quick --no-report` with and without `--json`,
alternately in one bench run, CPU seconds of each command's process tree.

    .venv/bin/python bench/json_overhead.py [--test iops] [--repeats 5] [--base REF] [--smoke]

Each repeat runs the plain command and the `--json` one, in the reverse order every other
repeat, on the default simulated drive in a temporary runs directory (removed at the end). It
prints the median CPU seconds of each and the ratio json/plain beside its goal (at most 1.05:
the JSON document is the run's summary, already computed for the table, written once more as
JSON). With `--base REF` the same pairs run with REF's code too (its src/ unpacked by `git
archive`), interleaved with this tree's, so the two ratios come from one run. On a shared
machine the wall time grows with other users' CPU; the CPU ratio is the figure to read.
`--smoke` checks that the bench runs (one repeat of a two-round run, no goal verdict).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from treetime import REPO, become_subreaper, iolab_argv, load, timed, unpack_src

GOAL = 1.05  # json/plain CPU at most


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--test", default="iops")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--base", help="also measure this git ref's code, interleaved")
    ap.add_argument("--smoke", action="store_true", help="one repeat of a tiny run: does the bench still run?")
    a = ap.parse_args()
    become_subreaper()
    extra = ["--max-rounds", "2", "--cell-time", "200ms"] if a.smoke else []
    repeats = 1 if a.smoke else a.repeats
    trees = {"this tree": REPO / "src"}
    if a.base:
        trees[a.base] = unpack_src(a.base)
    runs = Path(tempfile.mkdtemp(prefix="iolab-bench-json-"))
    cpu: dict[tuple[str, str], list[float]] = {(t, k): [] for t in trees for k in ("plain", "json")}
    try:
        print(f"load average at start {load()}; iolab run {a.test} --quick --no-report {' '.join(extra)}")
        for i in range(repeats):
            order = [(t, k) for t in trees for k in ("plain", "json")]
            for tree, kind in order if i % 2 == 0 else order[::-1]:
                args = ["run", a.test, "--quick", "--no-report", *extra, "--runs-dir", str(runs)]
                _, c = timed(iolab_argv(*args, *(["--json"] if kind == "json" else [])), trees[tree])
                cpu[tree, kind].append(c)
        print(f"{repeats} repeat(s), median CPU seconds of the command's process tree")
        print(f"{'code':12} {'plain':>8} {'--json':>8} {'json/plain':>11} {'goal':>7}")
        for tree in trees:
            plain, js = (statistics.median(cpu[tree, k]) for k in ("plain", "json"))
            ratio = js / plain
            verdict = "" if a.smoke else ("met" if ratio <= GOAL else "NOT met")
            print(f"{tree:12} {plain:8.2f} {js:8.2f} {ratio:10.3f}× {'≤ ' + str(GOAL):>7} {verdict}")
            print(f"{'':12} plain {', '.join(f'{c:.2f}' for c in cpu[tree, 'plain'])}")
            print(f"{'':12} json  {', '.join(f'{c:.2f}' for c in cpu[tree, 'json'])}")
        print(f"load average at end {load()}")
    finally:
        shutil.rmtree(runs, ignore_errors=True)
        for tree, src in trees.items():
            if tree != "this tree":
                shutil.rmtree(src.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
