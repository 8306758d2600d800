"""What does `iolab capture` cost the traced workload? fio IOPS with and without capture.

    .venv/bin/python bench/capture_overhead.py [--dir /var/tmp] [--size 512MiB] [--seconds 5] [--repeats 3]

Needs root. Makes a file, attaches it as a loop device with direct IO, and runs the same fio
job (4 KiB random reads, libaio, QD 32) on that device alternately without and with a
tracefs capture of it, `--repeats` times each way. Prints every run's IOPS, the ratio of
each (with / without) pair and the median ratio: the goal is a drop of at most 5 %.
Asserts nothing: a ratio on a shared machine is a measurement, not a pass/fail.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import threading
from pathlib import Path

from iolab.traces import capture
from iolab.units import parse_duration, parse_size


def fio_iops(device: str, seconds: float) -> float:
    out = subprocess.run(
        ["fio", "--name=cap", f"--filename={device}", "--rw=randread", "--bs=4k", "--ioengine=libaio",
         "--iodepth=32", "--direct=1", "--time_based", f"--runtime={seconds:g}", "--output-format=json"],
        capture_output=True, text=True, check=True,
    )
    return float(json.loads(out.stdout)["jobs"][0]["read"]["iops"])


def captured_iops(device: str, seconds: float, work: Path, i: int) -> tuple[float, int]:
    """fio's IOPS while a capture runs on the device, and the IOs the capture recorded."""
    ready, result = threading.Event(), {}

    def run() -> None:
        result["r"] = capture(device, seconds + 2, work / f"cap{i}.parquet", ready=ready)

    t = threading.Thread(target=run)
    t.start()
    if not ready.wait(30):
        raise SystemExit("capture did not start within 30 s")
    iops = fio_iops(device, seconds)
    t.join()
    return iops, result["r"].table.rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="/var/tmp", help="where the loop device's backing file goes")
    ap.add_argument("--size", default="512MiB")
    ap.add_argument("--seconds", default="5", help="fio run time per run (default 5s)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per way (default 3)")
    args = ap.parse_args()
    size, seconds = parse_size(args.size, "--size"), parse_duration(args.seconds, "--seconds")

    work = Path(tempfile.mkdtemp(prefix="iolab-capbench-", dir=args.dir))
    backing = work / "backing.img"
    subprocess.run(["fio", "--name=fill", f"--filename={backing}", "--rw=write", "--bs=1M", f"--size={size}",
                    "--direct=1", "--output-format=terse"], capture_output=True, check=True)
    dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(backing)],
                         capture_output=True, text=True, check=True).stdout.strip()
    try:
        ratios = []
        for i in range(args.repeats):
            base = fio_iops(dev, seconds)
            traced, recorded = captured_iops(dev, seconds, work, i)
            ratios.append(traced / base)
            print(f"run {i + 1}: without capture {base:,.0f} IOPS, with capture {traced:,.0f} IOPS "
                  f"({recorded:,} IOs recorded), ratio {traced / base:.3f}", flush=True)
        med = statistics.median(ratios)
        print(f"median ratio with/without capture: {med:.3f} ({(1 - med) * 100:.1f} % fewer IOPS with capture; goal ≤ 5 %)")
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        for f in work.iterdir():
            f.unlink()
        work.rmdir()


if __name__ == "__main__":
    main()
