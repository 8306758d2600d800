"""CPU of a full compliant `iolab run iops` on the default simulated drive, beside its goal
(prints figures, asserts nothing).

    .venv/bin/python bench/sim_iops.py                                  # this checkout, once
    .venv/bin/python bench/sim_iops.py --base-lib /tmp/main_sim.so --repeats 2

`iolab run iops --no-report` (the enterprise profile, every round to steady state, on the
default target) runs in a child process with this checkout's `src/`, and the CPU seconds of
its whole process tree are printed beside the goal (<= 150 CPU-s). With `--base-lib`, a copy
of the same `src/` whose simulator extension is that file (another build's `lib_sim.so` or
`_sim.abi3.so`) runs alternately with it, so the ratio of the two builds' CPU is measured in
one run on the same Python code. Each run's raw engine outputs are digested too: two builds
of the same model must print the same digest (a speed change leaves the results alone).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import tempfile
from pathlib import Path

from treetime import REPO, iolab_argv, load, timed

GOAL_CPU_S = 150.0


def src_with(lib: Path, tmp: Path) -> Path:
    """A copy of this checkout's src/ with `lib` as its simulator extension."""
    dst = tmp / "base-src"
    shutil.copytree(REPO / "src", dst, ignore=shutil.ignore_patterns("__pycache__", "_sim*.so"))
    shutil.copy2(lib, dst / "iolab" / "_sim.abi3.so")
    return dst


def raw_digest(runs_dir: Path) -> str:
    """A digest of every raw engine output the run stored (each round's simulator JSON): the
    same for two builds whose model gives the same results."""
    h = hashlib.sha256()
    for f in sorted(runs_dir.glob("*/raw/*.json")):
        h.update(f.name.encode() + f.read_bytes())
    return f"{len(list(runs_dir.glob('*/raw/*.json')))} raw outputs, digest {h.hexdigest()[:16]}"


def one(label: str, src: Path, tmp: Path, args: argparse.Namespace, n: int) -> float:
    runs = tmp / f"runs-{label}-{n}"
    argv = ["run", "iops", "--no-report", "--runs-dir", str(runs)] + (["--quick"] if args.smoke else [])
    wall, cpu = timed(iolab_argv(*argv), src)
    print(f"  {label:<5} {cpu:8.1f} CPU-s  {wall:7.1f} s wall  load {load()}  {raw_digest(runs)}", flush=True)
    shutil.rmtree(runs, ignore_errors=True)
    return cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-lib", type=Path, help="another build's simulator extension, run alternately")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--smoke", action="store_true", help="a --quick run once: does the bench still run?")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="iolab-sim-iops-") as d:
        tmp = Path(d)
        builds = {"this": REPO / "src"}
        if args.base_lib:
            builds["base"] = src_with(args.base_lib, tmp)
        print(f"iolab run iops{' --quick' if args.smoke else ''} --no-report, default target; load {load()}")
        cpu: dict[str, list[float]] = {k: [] for k in builds}
        for n in range(args.repeats):
            order = list(builds) if n % 2 == 0 else list(reversed(builds))
            for k in order:
                cpu[k].append(one(k, builds[k], tmp, args, n))
        med = {k: statistics.median(v) for k, v in cpu.items()}
        goal = (
            f"(goal <= {GOAL_CPU_S:g} for the full run; a --quick run is not held to it)"
            if args.smoke
            else f"(goal <= {GOAL_CPU_S:g}: x{med['this'] / GOAL_CPU_S:.2f})"
        )
        print(f"this build: {med['this']:.1f} CPU-s median of {args.repeats} {goal}")
        if "base" in med:
            pairs = sorted(t / b for t, b in zip(cpu["this"], cpu["base"], strict=True))
            print(
                f"base build: {med['base']:.1f} CPU-s; this/base {med['this'] / med['base']:.2f}x "
                f"(pairs {pairs[0]:.2f}-{pairs[-1]:.2f})"
            )


if __name__ == "__main__":
    main()
