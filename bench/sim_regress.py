"""CPU cost of the simulator's write path against an older build, in one run (prints figures,
asserts nothing).

    .venv/bin/python bench/sim_regress.py                    # this checkout's build vs commit c90eaee
    .venv/bin/python bench/sim_regress.py --old REV --mwrites 4 --ops 0.07
    .venv/bin/python bench/sim_regress.py --old-lib PATH     # an already built lib_sim.so

The old build is a `git worktree` of REV in a temporary directory, built with `cargo build
--release --lib` (its `lib_sim.so` is the same Python extension `uv sync` installs). Each build
runs in its own Python process, loaded from its file, on the same drive: the preset with the
mechanisms the old model lacks turned off (greedy GC, gc_reserve 10, no buffer, no background
GC, no mapping-update core time, units striped over the dies by address, no command-slot
limit, one controller core at 10 us per command as the old preset had), a sequential fill, then MWRITES million 4 KiB random writes at
QD32, of which the CPU time of the process is measured. Old and new alternate `--rounds` times
and the ratio of the medians is printed beside its goal (at or under the old build's CPU) with
both WAFs, which must agree: the machine is shared, so only ratios measured side by side mean
anything.

A line then does the same for each build's default preset as it ships (only its blocks and
`--default-op` set): what a user's run costs. The models differ there (the new one has the
mechanisms above), so its WAFs need not agree: the new preset's foreground GC starts gently
once 40 % of the spare is written (`gc_start_pct` 60, calibrated to the reviewed drive's
Write Saturation bank; docs/simulator.md, "Flash written per host write"), where the old
one's waits for the whole spare, and in the first drive write after a fill it writes up to
1.7x the old one's flash per host write. The last line runs the new preset with
`gc_start_pct=0` (the old build knows no such parameter and runs as before): GC then starts
where the old one's does and the WAFs agree within 1 %, so it gives the CPU per host write of
the same flash work, every other mechanism on. Each line also prints the ratio of the WAFs
(flash written per host write, the model's work) and the CPU ratio divided by it (the CPU per
chunk written to flash): how much of a gap is the model doing more, how much each chunk costing
more.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEW_LIB = ROOT / "src" / "iolab" / "_sim.abi3.so"
# What the drive is, beyond its blocks and op; a build that lacks one of them runs without it.
PARAMS = {
    "pages_per_block": "64",
    "gc": "greedy",
    "gc_reserve": "10",
    "buffer_kib": "0",
    "bg_gc": "off",
    "write_core_us": "0",
    "core_by_lba_pct": "0",
    "gc_start_pct": "0",
    "gc_slice": "1",
    "gc_choices": "0",
    "gc_copy_us": "0",
    "gc_switch_us": "0",
    "time_spread_pct": "0",
    "read_retry_pct": "0",
    "bg_period_ms": "0",
    "gc_pass_period_ms": "0",
    "gc_pace_victims": "0",
    "die_alloc": "striped",
    "queue_slots": "0",
    "controller_cores": "1",
    "overhead_us": "10",
}


def child_source() -> str:
    return r"""
import importlib.util, json, sys, time
spec = importlib.util.spec_from_file_location("_sim", sys.argv[1])
sim = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sim)
preset, blocks, op, mwrites, params = sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), json.loads(sys.argv[6])
known = next({q["name"] for q in p["params"]} for p in json.loads(sim.presets()) if p["name"] == preset)
d = sim.Drive(preset, [("blocks_per_plane", blocks), ("op", op)] + [(k, v) for k, v in params.items() if k in known])
def run(access, bs, budget, seed):
    return json.loads(d.run(streams=[(access, "write", bs, 1.0)], threads=1, queue_depth=32, active_range=1.0,
                            entropy=1.0, rate_iops=None, duration_s=None, bytes_budget=budget, seed=seed))
run("seq", 128 * 1024, d.capacity, 1)
t = time.process_time()
r = run("rnd", 4096, int(mwrites * 1e6) * 4096, 3)
cpu = time.process_time() - t
print(json.dumps({"cpu_s": cpu, "waf": r["counters"]["waf"], "ios": r["write"]["ios"]}))
"""


def build_old(rev: str, tmp: Path) -> Path:
    tree = tmp / "old"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), rev], check=True, capture_output=True
    )
    try:
        subprocess.run(
            ["cargo", "build", "--release", "--lib", "--quiet"],
            cwd=tree / "crates" / "sim",
            check=True,
            env={**os.environ, "CARGO_TARGET_DIR": str(tmp / "target")},
        )
    finally:
        lib = tmp / "lib_sim_old.so"
        built = tmp / "target" / "release" / "lib_sim.so"
        if built.exists():
            built.replace(lib)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    return lib


def measure(lib: Path, args: argparse.Namespace, op: str, params: dict[str, str]) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            child_source(),
            str(lib),
            args.preset,
            args.blocks,
            op,
            str(args.mwrites),
            json.dumps(params),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{lib}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", default="c90eaee", help="git revision of the old build")
    ap.add_argument("--old-lib", type=Path, help="an old build's lib_sim.so (skips building --old)")
    ap.add_argument("--new-lib", type=Path, default=NEW_LIB, help="the new build (default: this checkout's)")
    ap.add_argument("--preset", default="enterprise-sas")
    ap.add_argument(
        "--blocks",
        default="512",
        help="FTL blocks (blocks_per_plane): 17 GB of flash with the mechanisms-off lines' 64 pages per block, "
        "69 GB (a 53.7 GB drive) on the default-preset line, which keeps the preset's 256",
    )
    ap.add_argument("--ops", default="0.07,0.28", help="over-provisioning values, comma-separated")
    ap.add_argument("--mwrites", type=float, default=12.0, help="million random writes measured")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--default-op",
        default="0.28",
        help="over-provisioning of the default-preset line (the preset's own rho); empty: no such line",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="this checkout's build against itself, 10,000 writes at OP 0.28 once: does the bench still run?",
    )
    args = ap.parse_args()
    if args.smoke:  # no old build to make: the new one stands in for it
        args.old_lib, args.ops, args.mwrites, args.rounds = args.new_lib, "0.28", 0.01, 1
    with tempfile.TemporaryDirectory(prefix="iolab-sim-regress-") as tmp:
        old = args.old_lib or build_old(args.old, Path(tmp))
        print(
            f"old {args.old_lib or args.old}, new {args.new_lib}; {args.preset} blocks_per_plane={args.blocks}, "
            f"{args.mwrites:g} M random 4 KiB writes, {args.rounds} rounds"
        )
        for op in args.ops.split(","):
            compare(old, args, f"op {op}", op, PARAMS)
        if args.default_op:
            compare(old, args, f"default preset, op {args.default_op}", args.default_op, {})
            compare(
                old,
                args,
                f"default preset, op {args.default_op}, gc_start_pct=0",
                args.default_op,
                {"gc_start_pct": "0"},
            )


def compare(old: Path, args: argparse.Namespace, label: str, op: str, params: dict[str, str]) -> None:
    """Old and new alternately, `--rounds` times each; prints the ratio of the median CPU times."""
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for _ in range(args.rounds):
        runs["old"].append(measure(old, args, op, params))
        runs["new"].append(measure(args.new_lib, args, op, params))
    cpu = {k: statistics.median(r["cpu_s"] for r in v) for k, v in runs.items()}
    ratios = sorted(n["cpu_s"] / o["cpu_s"] for o, n in zip(runs["old"], runs["new"], strict=True))
    waf = {k: v[0]["waf"] for k, v in runs.items()}
    mios = {k: runs[k][0]["ios"] / cpu[k] / 1e6 for k in runs}
    # The WAF is the flash written per host write: where the models differ, the share of the
    # CPU ratio that is the model's extra flash work, and the rest is the cost of each chunk.
    per_chunk = cpu["new"] / cpu["old"] / (waf["new"] / waf["old"])
    print(
        f"{label}: CPU new/old {cpu['new'] / cpu['old']:.2f}x (goal <= 1.00x; pairs {ratios[0]:.2f}-{ratios[-1]:.2f}; old "
        f"{mios['old']:.2f}, new {mios['new']:.2f} M IO per CPU s); WAF old {waf['old']:.4f}, new {waf['new']:.4f} "
        f"(flash written per host write {waf['new'] / waf['old']:.3f}x; CPU per chunk written {per_chunk:.2f}x)"
    )


if __name__ == "__main__":
    main()
