"""Stream-analysis throughput on a generated trace: IOs analysed per second and peak memory.

    .venv/bin/python bench/trace_analyze.py                 # 50 million IOs (the goal run)
    .venv/bin/python bench/trace_analyze.py --ios 2000000   # a quick run

Generates a synthetic trace (known streams, Poisson arrivals, response times) as a Parquet
trace table, then runs `analyse` on it in a child process and reports, for that child
only: wall time, CPU time, IOs analysed per wall second and per CPU second, and peak RSS
(VmHWM),
next to the trace's size (Parquet on disk, and the in-memory size of its columns). The
goals (issue 5) are ≥ 5 million IOs/s on a 2-core machine and a peak memory well under the
trace's size; the ratios to those goals are printed. The load average is printed too: on a
shared machine other work slows the wall-clock rate, the CPU-second rate much less.

Nothing here asserts: benchmarks print, tests assert behaviour.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_IOS_PER_S = 5_000_000
# time_ns, offset, size, latency (8 B each), op and device codes, process: ~41 B per IO in memory.
BYTES_PER_IO_IN_MEMORY = 8 * 4 + 1 + 4 + 4


def analyse_child(path: str, step_s: float) -> None:
    from iolab.analysis.streams import analyse

    t0, c0 = time.perf_counter(), time.process_time()
    a = analyse(path, step_s=step_s)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    # VmHWM is this process image's own peak: ru_maxrss would also count the parent's pages
    # the child had before exec (Linux carries maxrss across exec).
    hwm_kb = next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:"))
    print(json.dumps({
        "ios": a.total_ios, "wall_s": wall, "cpu_s": cpu, "steps": len(a.steps), "peak_bytes": hwm_kb * 1024,
        "streams": [(s.label(), round(s.pct, 3)) for s in a.dominant],
    }))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ios", type=int, default=50_000_000, help="IOs in the generated trace (default 50 million)")
    ap.add_argument("--step", type=float, default=300.0, help="capture step in seconds (default 300)")
    ap.add_argument("--iops", type=float, default=50_000.0, help="arrival rate of the generated trace")
    ap.add_argument("--dir", help="where to write the trace (default: a temporary directory, removed after)")
    ap.add_argument("--keep", action="store_true", help="keep the generated trace")
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child:
        analyse_child(args._child, args.step)
        return

    from iolab.traces.synth import SynthSpec, generate
    from iolab.workload import Stream

    mix = (
        Stream("rnd", "read", 65536, 0.305), Stream("seq", "write", 512, 0.289), Stream("rnd", "read", 8192, 0.164),
        Stream("seq", "read", 8192, 0.142), Stream("seq", "read", 65536, 0.056), Stream("rnd", "write", 8192, 0.044),
    )  # the composite of SNIA's retail web-portal capture, as a known mix
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="iolab-bench-", dir="/var/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"synthetic-{args.ios}.parquet"
    try:
        t0 = time.perf_counter()
        table, _ = generate(SynthSpec(mix, args.ios, iops=args.iops, latency_us=250.0), path)
        gen_s = time.perf_counter() - t0
        load = os.getloadavg()
        child = subprocess.Popen([sys.executable, __file__, "--_child", str(path), "--step", str(args.step)],
                                 stdout=subprocess.PIPE, text=True)
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        if status != 0:
            sys.exit(f"analysis failed (status {status})")
        r = json.loads(out)
        peak = r["peak_bytes"]
        parquet = path.stat().st_size
        in_memory = table.rows * BYTES_PER_IO_IN_MEMORY
        rate = r["ios"] / r["wall_s"]
        print(f"trace           {table.rows:,} IOs, {table.duration_s:,.0f} s at {args.iops:,.0f} IOPS "
              f"(generated in {gen_s:.1f} s), {r['steps']} steps of {args.step:g} s")
        print(f"trace size      {parquet / 1e9:.2f} GB Parquet on disk, {in_memory / 1e9:.2f} GB as columns in memory")
        print(f"load average    {load[0]:.2f} at the start (2 cores: above ~2 means other work competes)")
        print(f"analysis        {r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU (this process: usage "
              f"{usage.ru_utime + usage.ru_stime:.2f} s)")
        print(f"IOs/s           {rate / 1e6:.2f} million per wall second ({rate / GOAL_IOS_PER_S:.2f} x the 5 M/s goal), "
              f"{r['ios'] / r['cpu_s'] / 1e6:.2f} million per CPU second")
        print(f"peak memory     {peak / 1e6:.0f} MB RSS = {peak / parquet:.2f} x the Parquet file, "
              f"{peak / in_memory:.2f} x the in-memory columns")
        print(f"dominant        {r['streams']}")
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)
            if not args.dir:
                try:
                    work.rmdir()
                except OSError:
                    pass


if __name__ == "__main__":
    main()
