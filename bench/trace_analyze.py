"""Stream-analysis cost on generated traces: analysis and plots timed and measured apart.

    .venv/bin/python bench/trace_analyze.py                      # 50 M IOs + a 100,000-step case
    .venv/bin/python bench/trace_analyze.py --ios 2000000        # a quick run
    .venv/bin/python bench/trace_analyze.py --many-steps 200000  # the step case with more steps
    .venv/bin/python bench/trace_analyze.py --ios 10000000 --base c659421  # this code against older code

Two cases, each on a synthetic trace (known streams, Poisson arrivals, response times)
written as a Parquet trace table:

  throughput  --ios IOs (default 50 million) in 5-minute steps: IOs analysed per second.
  many steps  --step-ios IOs (default 1 million) cut into --many-steps steps (default
              100,000): what the per-step work and the plots cost when steps are many.

For each case, `analyse` runs in one child process and the plots (`plot_all`, on the saved
analysis) in another, so each reports its own wall time, CPU time and peak RSS (VmHWM of
that child; the plot child resets its peak after loading the analysis, so its figure is the
plotting alone, next to the RSS the loaded analysis already held). Ratios printed: IOs/s to
the 5 M IOs/s goal, peak memory to the Parquet file's size, and the many-step plots' time to
the throughput case's plots (few steps) measured in the same run. The load average is
printed too: on a shared machine other work slows the wall-clock rate, the CPU-second rate
much less.

With --base REF the throughput trace is analysed --repeats times with this tree's code and as
often with REF's (unpacked by git archive, run with the same Python and libraries), in
alternating order: the CPU ratio tells a change of code from a busier machine, which lowers
both. No plots and no many-step case then.

Nothing here asserts: benchmarks print, tests assert behaviour.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_IOS_PER_S = 5_000_000


def _status(key: str) -> int:
    return next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith(key + ":")) * 1024


def analyse_child(path: str, step_s: float, save: str) -> None:
    from iolab.traces.analysis.streams import analyse

    t0, c0 = time.perf_counter(), time.process_time()
    a = analyse(path, step_s=step_s)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    # VmHWM is this process image's own peak: ru_maxrss would also count the parent's pages
    # the child had before exec (Linux carries maxrss across exec).
    peak = _status("VmHWM")
    a.save(save)
    print(
        json.dumps(
            {
                "ios": a.total_ios,
                "wall_s": wall,
                "cpu_s": cpu,
                "steps": len(a.steps),
                "peak_bytes": peak,
                "streams": [(s.label(), round(s.pct, 3)) for s in a.dominant],
            }
        )
    )


def plot_child(saved: str, out: str) -> None:
    from iolab.traces.analysis.plots import plot_all
    from iolab.traces.analysis.streamstats import StreamAnalysis

    a = StreamAnalysis.load(saved)
    loaded = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:  # reset VmHWM to the current RSS
        f.write("5")
    t0, c0 = time.perf_counter(), time.process_time()
    files = plot_all(a, out)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        json.dumps(
            {"wall_s": wall, "cpu_s": cpu, "peak_bytes": _status("VmHWM"), "loaded_bytes": loaded, "plots": len(files)}
        )
    )


def _child(*args: str, src: Path | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)} if src else None
    child = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True, env=env)
    out = child.stdout.read()
    _, status, _ = os.wait4(child.pid, 0)
    if status != 0:
        sys.exit(f"child {args[:2]} failed (status {status})")
    return json.loads(out)


def run_case(name: str, path: Path, step_s: float, work: Path) -> tuple[dict, dict]:
    saved = work / f"{name}-analysis.json"
    a = _child("--_analyse", str(path), "--step", repr(step_s), "--_save", str(saved))
    p = _child("--_plot", str(saved), "--_save", str(work / f"{name}-plots"))
    size = path.stat().st_size
    rate = a["ios"] / a["wall_s"]
    print(f"[{name}] {a['ios']:,} IOs, {a['steps']:,} steps of {step_s:g} s; Parquet {size / 1e6:,.1f} MB")
    print(
        f"[{name}] analysis  {a['wall_s']:.2f} s wall, {a['cpu_s']:.2f} s CPU; {rate / 1e6:.2f} M IOs per wall s "
        f"({rate / GOAL_IOS_PER_S:.2f} x the 5 M/s goal), {a['ios'] / a['cpu_s'] / 1e6:.2f} M per CPU s; "
        f"peak {a['peak_bytes'] / 1e6:,.0f} MB RSS = {a['peak_bytes'] / size:.2f} x the Parquet file"
    )
    print(
        f"[{name}] plots     {p['wall_s']:.2f} s wall, {p['cpu_s']:.2f} s CPU for {p['plots']} plots; "
        f"peak {p['peak_bytes'] / 1e6:,.0f} MB RSS while plotting ({p['loaded_bytes'] / 1e6:,.0f} MB held after "
        "loading the analysis)"
    )
    return a, p


def compare_code(ref: str, path: Path, step_s: float, repeats: int, work: Path) -> None:
    """`analyse` on one trace with this tree's code and `ref`'s, alternately (each repeat in the
    reverse order of the one before), so both meet the same load."""
    from treetime import REPO, unpack_src

    trees = {ref: unpack_src(ref), "this": REPO / "src"}
    got: dict[str, list[dict]] = {name: [] for name in trees}
    try:
        for r in range(repeats):
            for name in list(trees) if r % 2 == 0 else list(trees)[::-1]:
                saved = str(work / "compared-analysis.json")
                got[name].append(
                    _child("--_analyse", str(path), "--step", repr(step_s), "--_save", saved, src=trees[name])
                )
    finally:
        shutil.rmtree(trees[ref].parent)
    cpu = {name: statistics.median(a["cpu_s"] for a in runs) for name, runs in got.items()}
    for name, runs in got.items():
        ios = runs[0]["ios"]
        wall = statistics.median(a["wall_s"] for a in runs)
        print(
            f"[{name}] analysis median {cpu[name]:.2f} s CPU = {ios / cpu[name] / 1e6:.2f} M IOs per CPU s, {wall:.2f} s wall"
        )
    same = all(a["streams"] == got[ref][0]["streams"] for runs in got.values() for a in runs)
    print(
        f"CPU this / {ref}: {cpu['this'] / cpu[ref]:.3f} ({repeats} repeats each); streams found: {'identical' if same else 'DIFFERENT'}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ios", type=int, default=50_000_000, help="IOs in the throughput trace (default 50 million)")
    ap.add_argument("--step", type=float, default=300.0, help="throughput case: step in seconds (default 300)")
    ap.add_argument("--iops", type=float, default=50_000.0, help="arrival rate of the throughput trace")
    ap.add_argument("--many-steps", type=int, default=100_000, help="steps in the many-step case (0: skip it)")
    ap.add_argument("--step-ios", type=int, default=1_000_000, help="IOs in the many-step trace (default 1 million)")
    ap.add_argument("--dir", help="where to write the traces (default: a temporary directory, removed after)")
    ap.add_argument("--keep", action="store_true", help="keep the generated traces")
    ap.add_argument("--base", help="analyse the throughput trace with this git ref's code too, alternately")
    ap.add_argument("--repeats", type=int, default=3, help="with --base: analyses of each code (default 3)")
    ap.add_argument("--_analyse", help=argparse.SUPPRESS)
    ap.add_argument("--_plot", help=argparse.SUPPRESS)
    ap.add_argument("--_save", help=argparse.SUPPRESS)
    ap.add_argument("--smoke", action="store_true", help="20,000 IOs and 10 steps of 2,000: does the bench still run?")
    args = ap.parse_args()
    if args.smoke:
        args.ios, args.many_steps, args.step_ios = 20_000, 10, 2_000
    if args._analyse:
        analyse_child(args._analyse, args.step, args._save)
        return
    if args._plot:
        plot_child(args._plot, args._save)
        return

    from iolab.core.workload import Stream
    from iolab.traces.synth import SynthSpec, generate

    mix = (
        Stream("rnd", "read", 65536, 0.305),
        Stream("seq", "write", 512, 0.289),
        Stream("rnd", "read", 8192, 0.164),
        Stream("seq", "read", 8192, 0.142),
        Stream("seq", "read", 65536, 0.056),
        Stream("rnd", "write", 8192, 0.044),
    )  # the composite of SNIA's retail web-portal capture, as a known mix
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="iolab-bench-", dir="/var/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []
    try:
        print(f"load average    {os.getloadavg()[0]:.2f} at the start (2 cores: above ~2 means other work competes)")
        path = work / f"synthetic-{args.ios}.parquet"
        made.append(path)
        t0 = time.perf_counter()
        table, _ = generate(SynthSpec(mix, args.ios, iops=args.iops, latency_us=250.0), path)
        print(
            f"[throughput] generated {table.rows:,} IOs over {table.duration_s:,.0f} s at {args.iops:,.0f} IOPS "
            f"in {time.perf_counter() - t0:.1f} s"
        )
        if args.base:
            compare_code(args.base, path, args.step, args.repeats, work)
            return
        _, base_plots = run_case("throughput", path, args.step, work)
        if args.many_steps:
            path = work / f"synthetic-steps-{args.step_ios}.parquet"
            made.append(path)
            table, _ = generate(SynthSpec(mix, args.step_ios, iops=1000.0, latency_us=250.0, seed=2), path)
            # A step a little shorter than span / N so the cut gives at least N steps.
            step_s = table.duration_s / args.many_steps * 0.999
            a, p = run_case("many steps", path, step_s, work)
            print(
                f"[many steps] plots take {p['wall_s'] / base_plots['wall_s']:.2f} x the wall time of the throughput "
                f"case's plots ({a['steps']:,} steps vs the throughput case's few)"
            )
    finally:
        if not args.keep:
            for p in made:
                p.unlink(missing_ok=True)
            for f in work.glob("*-analysis.json"):
                f.unlink()
            for d in work.glob("*-plots"):
                for f in d.iterdir():
                    f.unlink()
                d.rmdir()
            if not args.dir:
                try:
                    work.rmdir()
                except OSError:
                    pass


if __name__ == "__main__":
    main()
