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

Each run also prints where its CPU went, by phase: the child times the simulator engine's
calls in its own process (making the drive, the purge, the preconditioning round, each round
of the matrix, saving and loading the drive) and the rest of the process tree's CPU is the
runner's Python (start-up, each cell's storing and steady-state checks, power.json).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from treetime import REPO, load, timed

GOAL_CPU_S = 150.0

# The child: `iolab` with the sim engine's calls timed by process CPU, summed by phase and
# written as JSON to $IOLAB_BENCH_PHASES when it exits (round NN of a call's tag: 0 is the
# preconditioning, 1.. the matrix's rounds).
PHASED = """
import atexit, json, os, re, sys, time
from iolab.engines import sim
cpu = {}
def timed(name, phase):
    orig = getattr(sim.SimEngine, name)
    def call(self, *a, **k):
        t = time.process_time()
        try:
            return orig(self, *a, **k)
        finally:
            key = phase(a)
            cpu[key] = cpu.get(key, 0.0) + time.process_time() - t
    setattr(sim.SimEngine, name, call)
def round_of(a):
    m = re.search(r"-r(\\d+)-", a[3])
    return "precondition" if m is None or int(m[1]) == 0 else f"round {int(m[1])}"
for name, phase in [("prepare", lambda a: "drive"), ("purge", lambda a: "purge"), ("run", round_of),
                    ("idle", lambda a: "idle"), ("save_state", lambda a: "save/load")]:
    timed(name, phase)
atexit.register(lambda: open(os.environ["IOLAB_BENCH_PHASES"], "w").write(json.dumps(cpu)))
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""


def phases_line(cpu: dict[str, float], total: float) -> str:
    """Where a run's CPU went: the engine's phases, then the rest of the process tree."""
    rounds = sorted((k for k in cpu if k.startswith("round ")), key=lambda k: int(k.split()[1]))
    r = sum(cpu[k] for k in rounds)
    named = [("drive made", cpu.get("drive", 0.0)), ("purge", cpu.get("purge", 0.0))]
    named += [("preconditioning", cpu.get("precondition", 0.0))]
    named += [(f"{len(rounds)} rounds", r), ("idle", cpu.get("idle", 0.0)), ("save/load", cpu.get("save/load", 0.0))]
    named += [("rest of the tree (Python, runner)", total - sum(cpu.values()))]
    each = ", ".join(f"{cpu[k]:.1f}" for k in rounds)
    parts = ", ".join(f"{n} {v:.1f} ({v / total:.0%})" for n, v in named)
    return f"    CPU-s by phase: {parts}; rounds {each}"


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
    phases = tmp / f"phases-{label}-{n}.json"
    os.environ["IOLAB_BENCH_PHASES"] = str(phases)
    wall, cpu = timed([sys.executable, "-c", PHASED, *argv], src)
    print(f"  {label:<5} {cpu:8.1f} CPU-s  {wall:7.1f} s wall  load {load()}  {raw_digest(runs)}", flush=True)
    print(phases_line(json.loads(phases.read_text()), cpu), flush=True)
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
