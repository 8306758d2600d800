"""What does iolab's fio job cost against a plain one, on io_uring and on libaio?

    .venv/bin/python bench/overhead.py [--dir /var/tmp] [--size 1GiB] [--seconds 10] [--repeats 3]
                                       [--qd 32] [--target /dev/zram0]

On a file target (filled once with sequential writes so reads reach the device), or a block
device given with --target (it is overwritten), for 4 KiB random reads and 4 KiB random
writes at --qd, it runs four ways per repeat, the order reversed every other repeat:

- plain: a hand-written fio job (engine, file, direct IO, rw, bs, iodepth, size, runtime,
  nothing else), run as `fio --output-format=json JOB`, on io_uring and on libaio;
- iolab: `FioEngine(ioengine=...).run` with a live-progress callback, as the runner calls
  it (iolab's job file with its logs and options, json+ output, status reports, parsing).

For each it measures IOPS and fio's CPU time (getrusage RUSAGE_CHILDREN around the run: fio
and its job processes), and prints IOs per fio CPU-second, the median of each way, and the
ratios iolab/plain (per engine) and libaio/io_uring (per job), both in IOPS and in IOs per
fio CPU-second, plus iolab's own CPU time (RUSAGE_SELF, fio excluded). Asserts nothing: a
ratio on a shared machine is a measurement, not a pass/fail.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from iolab import targets
from iolab.core.units import parse_duration, parse_size
from iolab.core.workload import Workload
from iolab.engines.fio import FioEngine
from iolab.engines.fio_parse import parse_fio_json
from iolab.targets import Target

ENGINES = ("io_uring", "libaio")
WAYS = [(job, eng) for job in ("plain", "iolab") for eng in ENGINES]


@dataclass
class Measured:
    iops: float
    ios: int
    fio_cpu: float  # seconds, fio and its job processes
    own_cpu: float  # seconds, this process while fio ran

    @property
    def ios_per_cpu(self) -> float:
        return self.ios / self.fio_cpu if self.fio_cpu > 0 else float("nan")


def cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def plain_job(target: Target, ioengine: str, read_pct: int, qd: int, size: int, seconds: float) -> str:
    """The job a user would write by hand for the same load."""
    return "\n".join(
        [
            "[plain]",
            f"ioengine={ioengine}",
            f"filename={target.path}",
            "direct=1",
            f"rw={'randread' if read_pct == 100 else 'randwrite'}",
            "bs=4096",
            f"iodepth={qd}",
            f"size={size}",
            f"runtime={round(seconds * 1000)}ms",
            "time_based=1",
            "",
        ]
    )


def live(elapsed_s: float, iops: float, lat_us: float | None) -> None:
    """The live-progress callback as the runner passes it (fio_supervise.Progress), doing nothing."""


def run_way(way: tuple[str, str], target: Target, w: Workload, read_pct: int, size: int, work: Path, tag: str):
    job, ioengine = way
    c0, s0 = cpu(resource.RUSAGE_CHILDREN), cpu(resource.RUSAGE_SELF)
    if job == "plain":
        d = work / tag
        d.mkdir(parents=True)
        (d / "job.fio").write_text(plain_job(target, ioengine, read_pct, w.queue_depth, size, w.duration_s or 1))
        out = subprocess.run(["fio", "--output-format=json", "job.fio"], cwd=d, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"fio failed on {d / 'job.fio'}: {out.stderr.strip()[-500:]}")
        result = parse_fio_json(out.stdout, str(d / "job.fio"), require_bins=False)
    else:
        engine = FioEngine(ioengine=ioengine)
        result = engine.run(target, w, work / "iolab", tag, progress=live)
    return Measured(result.iops, result.ios, cpu(resource.RUSAGE_CHILDREN) - c0, cpu(resource.RUSAGE_SELF) - s0)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}" if b else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="/var/tmp", help="where the target file goes (needs O_DIRECT)")
    ap.add_argument("--size", default="1GiB", help="target file size (default 1GiB)")
    ap.add_argument("--seconds", default="10", help="duration of each run (default 10s)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per way and workload (default 3)")
    ap.add_argument("--qd", type=int, default=32, help="queue depth (default 32)")
    ap.add_argument(
        "--target",
        help="a block device to use instead of a file (e.g. /dev/zram0: RAM speed, so fio's own "
        "cost shows most); it is overwritten",
    )
    ap.add_argument(
        "--smoke", action="store_true", help="a tiny run (16 MiB, 0.3 s, one repeat): does the bench still run?"
    )
    args = ap.parse_args()
    if args.smoke:
        args.size, args.seconds, args.repeats = "16MiB", "300ms", 1

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
            f"{engine.version()}, target {path} ({size / 2**30:.3g} GiB), {seconds:g} s per run, "
            f"{args.repeats} runs each way, order reversed every other repeat"
        )
        engine.run(target, Workload.mix("seq", 0, 1 << 20, queue_depth=8, bytes_budget=size), work / "fill", "fill")

        head = f"{'workload':<20}{'run':>4} {'job':<6}{'engine':<9}{'IOPS':>10}{'fio CPU s':>11}{'IO/CPU-s':>11}"
        for name, read_pct in (("4KiB rnd read QD%d", 100), ("4KiB rnd write QD%d", 0)):
            label = name % args.qd
            w = Workload.mix("rnd", read_pct, 4096, queue_depth=args.qd, duration_s=seconds)
            got: dict[tuple[str, str], list[Measured]] = {way: [] for way in WAYS}
            print(f"\n{head}{'iolab CPU s':>13}")
            for i in range(args.repeats):
                for way in WAYS if i % 2 == 0 else WAYS[::-1]:
                    m = run_way(way, target, w, read_pct, size, work, f"{way[0]}-{way[1]}-{read_pct}-{i}")
                    got[way].append(m)
                    own = f"{m.own_cpu:>13.3f}" if way[0] == "iolab" else ""
                    print(
                        f"{label:<20}{i + 1:>4} {way[0]:<6}{way[1]:<9}{m.iops:>10,.0f}{m.fio_cpu:>11.2f}"
                        f"{m.ios_per_cpu:>11,.0f}{own}"
                    )
            med = {
                way: (statistics.median(m.iops for m in ms), statistics.median(m.ios_per_cpu for m in ms))
                for way, ms in got.items()
            }
            for way, (iops, per_cpu) in med.items():
                print(f"{label:<20}{'med':>4} {way[0]:<6}{way[1]:<9}{iops:>10,.0f}{'':>11}{per_cpu:>11,.0f}")
            print(f"{label:<20} ratios (medians)          {'IOPS':>10}{'IO/CPU-s':>22}")
            for eng in ENGINES:
                a, b = med[("iolab", eng)], med[("plain", eng)]
                print(f"{label:<20} iolab/plain {eng:<14}{ratio(a[0], b[0]):>10}{ratio(a[1], b[1]):>22}")
            for job in ("plain", "iolab"):
                a, b = med[(job, "libaio")], med[(job, "io_uring")]
                print(f"{label:<20} libaio/io_uring {job:<10}{ratio(a[0], b[0]):>10}{ratio(a[1], b[1]):>22}")
        print(
            "\nfio CPU s: fio and its job processes (RUSAGE_CHILDREN); IO/CPU-s: IOs completed per fio "
            "CPU-second; iolab CPU s: this process only, fio excluded."
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
