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

For each case, `analyse` runs in one child process and the plots (`stream_plots.write_all`:
SVG files, from the saved analysis) in another, so each reports its own wall time, CPU time and peak RSS (VmHWM of
that child; the plot child resets its peak after loading the analysis, so its figure is the
plotting alone, next to the RSS the loaded analysis already held). Ratios printed: IOs/s to
the 5 M IOs/s goal, peak memory to the Parquet file's size, and the many-step plots' time to
the throughput case's plots (few steps) measured in the same run. The load average is
printed too: on a shared machine other work slows the wall-clock rate, the CPU-second rate
much less.

Beside the throughput case's analysis the bench times a bare DuckDB GROUP BY of the same
trace (IOs and latency sum per op and size, one DuckDB thread and the analysis's memory limit,
the query the issue's goal is stated against) in a process of its own, and the analysis's
query read as an Arrow stream and nothing else (the floor of the design), then read by the
compiled walk: the analysis's CPU as a multiple of the GROUP BY's, inside the process and for
the whole process (Python's start and imports included, from wait4), goal at most 5x.

With --base REF the throughput trace is analysed --repeats times with this tree's code and as
often with REF's (unpacked by git archive, run with the same Python and libraries), in
alternating order: the CPU ratio tells a change of code from a busier machine, which lowers
both. No plots and no many-step case then.

Nothing here asserts: benchmarks print, tests assert behaviour.
"""

from __future__ import annotations

import argparse
import hashlib
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


GROUP_BY = "SELECT op, size_bytes, count(*), sum(latency_us) FROM read_parquet(?) GROUP BY ALL"
SCAN = (
    "SELECT time_ns, CAST(op = 'write' AS UTINYINT) AS w, offset_bytes, size_bytes, CAST(latency_us AS DOUBLE) AS lat"
    " FROM read_parquet('{}', file_row_number = true) WHERE TRUE"
)  # the analysis's query on a table of reads and writes only, with response times


def groupby_child(path: str) -> None:
    """The baseline: a bare GROUP BY over the trace, alone in its process."""
    from iolab.traces.table import connect

    con = connect(memory_limit="512MB", threads=1)  # as analyse connects
    t0, c0 = time.perf_counter(), time.process_time()
    groups = len(con.execute(GROUP_BY, [path]).fetchall())
    print(json.dumps({"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "groups": groups}))


def drain(capsule) -> int:
    """Read every record batch of an Arrow C stream (a PyCapsule) and release it, touching
    nothing: the scan's own cost. Through ctypes, as pyarrow is not installed."""
    import ctypes as c

    class Array(c.Structure):
        pass

    release = c.CFUNCTYPE(None, c.POINTER(Array))
    Array._fields_ = [(f, c.c_int64) for f in ("length", "null_count", "offset", "n_buffers", "n_children")] + [
        ("buffers", c.c_void_p),
        ("children", c.c_void_p),
        ("dictionary", c.c_void_p),
        ("release", release),
        ("private_data", c.c_void_p),
    ]

    class Stream(c.Structure):
        pass

    Stream._fields_ = [
        ("get_schema", c.c_void_p),
        ("get_next", c.CFUNCTYPE(c.c_int, c.POINTER(Stream), c.POINTER(Array))),
        ("get_last_error", c.c_void_p),
        ("release", c.CFUNCTYPE(None, c.POINTER(Stream))),
        ("private_data", c.c_void_p),
    ]
    get = c.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = c.c_void_p, [c.py_object, c.c_char_p]
    stream = c.cast(get(capsule, b"arrow_array_stream"), c.POINTER(Stream))
    rows = 0
    try:
        while True:
            a = Array()
            if stream.contents.get_next(stream, c.byref(a)) != 0:
                raise RuntimeError("Arrow stream error")
            if not a.release:
                return rows
            rows += a.length
            a.release(c.byref(a))
    finally:
        stream.contents.release(stream)


def scan_child(path: str, step_s: float) -> None:
    """The analysis's query read as an Arrow stream and nothing else (the floor of the
    design); then the same stream read by the compiled walk (SEQ rule, in-flight count,
    tabulation), whose cost is the difference."""
    from iolab import _sim
    from iolab.traces.analysis.streams import MAX_STEPS
    from iolab.traces.table import connect

    con = connect(memory_limit="512MB", threads=1)
    query = SCAN.format(path.replace("'", "''"))
    c0 = time.process_time()
    drain(con.sql(query).__arrow_c_stream__())
    c1 = time.process_time()
    walk = _sim.StreamWalk(
        step_ns=int(round(step_s * 1e9)), lookback=64, gap_bytes=0, has_latency=True, max_steps=MAX_STEPS
    )
    try:
        walk.open(stream=con.sql(query), chunk_rows=1_000_000)
        while walk.next_chunk() is not None:
            pass
    finally:
        walk.close()
    c2 = time.process_time()
    print(json.dumps({"cpu_s": c1 - c0, "walk_cpu_s": (c2 - c1) - (c1 - c0)}))


def plot_child(saved: str, out: str) -> None:
    from iolab.pages.report.stream_plots import write_all
    from iolab.traces.analysis.streamstats import StreamAnalysis

    a = StreamAnalysis.load(saved)
    loaded = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:  # reset VmHWM to the current RSS
        f.write("5")
    t0, c0 = time.perf_counter(), time.process_time()
    files = write_all(a, out)
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
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        sys.exit(f"child {args[:2]} failed (status {status})")
    return {**json.loads(out), "process_cpu_s": usage.ru_utime + usage.ru_stime}


def _baseline_child(path: Path, step_s: float) -> dict:
    """The bare GROUP BY, and the scan with the walk apart, each in a process of its own."""
    scan = _child("--_scan", str(path), "--step", repr(step_s))
    return {**_child("--_groupby", str(path)), "scan_cpu_s": scan["cpu_s"], "walk_cpu_s": scan["walk_cpu_s"]}


def baseline(path: Path, a: dict, g: dict) -> None:
    """The analysis's CPU against the bare GROUP BY's (see the module docstring)."""
    print(
        f"[baseline] bare GROUP BY {g['cpu_s']:.2f} s CPU ({g['groups']} groups); the analysis's query read as "
        f"an Arrow stream {g['scan_cpu_s']:.2f} s CPU = {g['scan_cpu_s'] / g['cpu_s']:.1f} x the GROUP BY; the walk over "
        f"them {g['walk_cpu_s']:.2f} s CPU = {g['walk_cpu_s'] / g['cpu_s']:.1f} x"
    )
    print(
        f"[baseline] analysis / GROUP BY: {a['cpu_s'] / g['cpu_s']:.1f} x inside the process, "
        f"{a['process_cpu_s'] / g['process_cpu_s']:.1f} x whole process ({a['process_cpu_s']:.2f} / "
        f"{g['process_cpu_s']:.2f} CPU-s); goal at most 5 x"
    )


def run_case(name: str, path: Path, step_s: float, work: Path, groupby: bool = False) -> tuple[dict, dict]:
    saved = work / f"{name}-analysis.json"
    g = _baseline_child(path, step_s) if groupby else None
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
    if g is not None:
        baseline(path, a, g)
    return a, p


def compare_code(ref: str, path: Path, step_s: float, repeats: int, work: Path, sim: str | None = None) -> None:
    """`analyse` on one trace with this tree's code and `ref`'s, alternately (each repeat in the
    reverse order of the one before), so both meet the same load. `sim`: the built simulator
    extension for `ref`'s code, when this tree's no longer fits it."""
    from treetime import REPO, unpack_src

    trees = {ref: unpack_src(ref), "this": REPO / "src"}
    if sim:
        # under the name this tree's extension has: a copy under its own name (sim_base.so)
        # is never imported, and REF's code then ran on this tree's extension
        [ext] = (REPO / "src" / "iolab").glob("_sim*.so")
        shutil.copy2(sim, trees[ref] / "iolab" / ext.name)
    got: dict[str, list[dict]] = {name: [] for name in trees}
    groupby: list[dict] = []
    try:
        for r in range(repeats):
            groupby.append(_baseline_child(path, step_s))
            for name in list(trees) if r % 2 == 0 else list(trees)[::-1]:
                saved = work / "compared-analysis.json"
                got[name].append(
                    _child("--_analyse", str(path), "--step", repr(step_s), "--_save", str(saved), src=trees[name])
                )
                got[name][-1]["sha256"] = hashlib.sha256(saved.read_bytes()).hexdigest()
    finally:
        shutil.rmtree(trees[ref].parent)
    g_cpu = statistics.median(g["cpu_s"] for g in groupby)
    g_proc = statistics.median(g["process_cpu_s"] for g in groupby)
    cpu = {name: statistics.median(a["cpu_s"] for a in runs) for name, runs in got.items()}
    for name, runs in got.items():
        ios = runs[0]["ios"]
        wall = statistics.median(a["wall_s"] for a in runs)
        proc = statistics.median(a["process_cpu_s"] for a in runs)
        peak = max(a["peak_bytes"] for a in runs)
        print(
            f"[{name}] analysis median {cpu[name]:.2f} s CPU = {ios / cpu[name] / 1e6:.2f} M IOs per CPU s, "
            f"{wall:.2f} s wall, peak {peak / 1e6:,.0f} MB RSS; / GROUP BY: {cpu[name] / g_cpu:.1f} x inside the "
            f"process, {proc / g_proc:.1f} x whole process (goal at most 5 x)"
        )
    scan, walk = (statistics.median(g[k] for g in groupby) for k in ("scan_cpu_s", "walk_cpu_s"))
    print(
        f"[baseline] bare GROUP BY median {g_cpu:.2f} s CPU ({g_proc:.2f} whole process); the analysis's query "
        f"read as an Arrow stream {scan:.2f} s CPU = {scan / g_cpu:.1f} x; the compiled walk over them {walk:.2f} s CPU = "
        f"{walk / g_cpu:.1f} x; the rest of this tree's analysis {cpu['this'] - scan - walk:.2f} s CPU"
    )
    same = len({a["sha256"] for runs in got.values() for a in runs}) == 1
    print(
        f"CPU this / {ref}: {cpu['this'] / cpu[ref]:.3f} ({repeats} repeats each); analysis JSON: "
        f"{'identical (sha256 ' + got[ref][0]['sha256'][:16] + ')' if same else 'DIFFERENT'}"
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
    ap.add_argument("--trace", help="analyse this trace table for the throughput case instead of generating one")
    ap.add_argument("--base", help="analyse the throughput trace with this git ref's code too, alternately")
    ap.add_argument("--repeats", type=int, default=3, help="with --base: analyses of each code (default 3)")
    ap.add_argument("--base-sim", help="with --base: REF's built _sim extension (default: this tree's)")
    ap.add_argument("--_analyse", help=argparse.SUPPRESS)
    ap.add_argument("--_plot", help=argparse.SUPPRESS)
    ap.add_argument("--_groupby", help=argparse.SUPPRESS)
    ap.add_argument("--_scan", help=argparse.SUPPRESS)
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
    if args._groupby:
        groupby_child(args._groupby)
        return
    if args._scan:
        scan_child(args._scan, args.step)
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
        if args.trace:
            path = Path(args.trace)
        else:
            path = work / f"synthetic-{args.ios}.parquet"
            made.append(path)
            t0 = time.perf_counter()
            table, _ = generate(SynthSpec(mix, args.ios, iops=args.iops, latency_us=250.0), path)
            print(
                f"[throughput] generated {table.rows:,} IOs over {table.duration_s:,.0f} s at {args.iops:,.0f} IOPS "
                f"in {time.perf_counter() - t0:.1f} s"
            )
        if args.base:
            compare_code(args.base, path, args.step, args.repeats, work, args.base_sim)
            return
        _, base_plots = run_case("throughput", path, args.step, work, groupby=True)
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
