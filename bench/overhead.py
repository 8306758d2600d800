"""How much does running fio through iolab cost? Same job, raw fio vs FioEngine.run.

    .venv/bin/python bench/overhead.py [--dir /var/tmp] [--size 1GiB] [--seconds 10] [--repeats 3]

On a file target (filled once with sequential writes so reads reach the device), for 4 KiB
random reads at QD 32 and 4 KiB random writes at QD 32, it runs the exact job file
FioEngine.job_text produces twice over, alternately: raw (`fio --output-format=json JOB`)
and through FioEngine.run (json+, logs, live progress, parsing). It prints IOPS both ways,
their ratio (the goal is iolab/raw ≥ 0.98) and the CPU time iolab's own process used while
fio ran (getrusage RUSAGE_SELF: fio, a child, is not counted). Asserts nothing: a ratio on a
shared machine is a measurement, not a pass/fail.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iolab import targets
from iolab.engines.fio import FioEngine
from iolab.engines.fio_parse import parse_fio_json
from iolab.targets import Target
from iolab.units import parse_duration, parse_size
from iolab.workload import Workload


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def raw_fio(engine: FioEngine, target: Target, w: Workload, work: Path, tag: str) -> float:
    """IOPS of the job run by hand, as a user would from the job file."""
    d = work / tag
    d.mkdir()
    (d / f"{tag}.fio").write_text(engine.job_text(target, w, tag))
    out = subprocess.run(
        [engine.fio, "--output-format=json", f"{tag}.fio"], cwd=d, capture_output=True, text=True, check=True
    )
    return parse_fio_json(out.stdout, str(d / f"{tag}.fio"), require_bins=False).iops


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="/var/tmp", help="where the target file goes (needs O_DIRECT)")
    ap.add_argument("--size", default="1GiB", help="target file size (default 1GiB)")
    ap.add_argument("--seconds", default="10", help="duration of each run (default 10s)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per way and workload (default 3)")
    ap.add_argument("--qd", type=int, default=32, help="queue depth (default 32)")
    ap.add_argument(
        "--target",
        help="a block device to use instead of a file (e.g. /dev/zram0: RAM speed, "
        "so less device noise and iolab's overhead shows more); it is overwritten",
    )
    args = ap.parse_args()

    size, seconds = parse_size(args.size, "--size"), parse_duration(args.seconds, "--seconds")
    work = Path(tempfile.mkdtemp(prefix="iolab-overhead-", dir=args.dir))
    engine = FioEngine()
    try:
        if args.target:
            target = targets.parse_target(args.target)
            targets.check_safe_to_write(target, allow_unsafe=False)
            path, size = target.path, target.capacity
        else:
            path = work / "target.img"
            target = Target("file", f"file:{path}?size={size}", str(path), size)
        engine.prepare(target)
        print(
            f"{engine.version()}, {engine.job_text(target, Workload.mix('rnd', 100, 4096, duration_s=1), 'x').split('ioengine=')[1].split()[0]}, "
            f"target {path} ({size / 2**30:.3g} GiB), {seconds:g} s per run, {args.repeats} runs each way"
        )
        t0 = time.monotonic()
        engine.run(target, Workload.mix("seq", 0, 1 << 20, queue_depth=8, bytes_budget=size), work / "fill", "fill")
        print(f"filled the file with sequential writes in {time.monotonic() - t0:.1f} s\n")

        print(
            f"{'workload':<22}{'run':>4}{'raw IOPS':>12}{'iolab IOPS':>12}{'ratio':>8}{'iolab CPU s':>13}{'CPU %':>7}"
        )
        for name, read_pct in (("4KiB rnd read QD%d", 100), ("4KiB rnd write QD%d", 0)):
            label = name % args.qd
            w = Workload.mix("rnd", read_pct, 4096, queue_depth=args.qd, duration_s=seconds)
            raws, ours, cpus = [], [], []
            for i in range(args.repeats):
                raws.append(raw_fio(engine, target, w, work, f"raw-{read_pct}-{i}"))
                c0, t0 = cpu_s(), time.monotonic()
                result = engine.run(
                    target, w, work / "run" / "raw", f"iolab-{read_pct}-{i}", progress=lambda t, iops: None
                )
                cpus.append(cpu_s() - c0)
                wall = time.monotonic() - t0
                ours.append(result.iops)
                print(
                    f"{label:<22}{i + 1:>4}{raws[-1]:>12,.0f}{ours[-1]:>12,.0f}{ours[-1] / raws[-1]:>8.3f}"
                    f"{cpus[-1]:>13.3f}{100 * cpus[-1] / wall:>7.2f}"
                )
            raw_m, our_m = statistics.mean(raws), statistics.mean(ours)
            print(
                f"{label:<22}{'mean':>4}{raw_m:>12,.0f}{our_m:>12,.0f}{our_m / raw_m:>8.3f}{statistics.mean(cpus):>13.3f}"
            )
            # The median of the paired ratios resists the run-to-run swings of a shared machine.
            med = statistics.median(o / r for o, r in zip(ours, raws))
            print(f"{label:<22}{'median ratio':>36}{med:>8.3f}\n")
        print("ratio = iolab IOPS / raw IOPS (goal ≥ 0.98); iolab CPU = this process only, fio excluded.")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
