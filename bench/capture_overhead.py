"""What does `iolab capture` cost the traced workload? fio IOPS with and without capture.

    .venv/bin/python bench/capture_overhead.py [--size 512MiB] [--seconds 3] [--pairs 4]
                                              [--before main] [--tracepoints-only] [--buffer-kb 16384]

Needs root. The target is a loop device (direct IO) over a file in /dev/shm, so the device
is RAM-fast (~150-300 K IOPS for 4 KiB random reads) and the capture's cost shows. zram is
not used: it is a bio-based driver, so the block_rq_issue/complete tracepoints that capture
records never fire on it (checked: 0 request events for 300 K zram IOPS).

Every run is the same fio job (4 KiB random reads, libaio, QD 32, `--seconds` long). One
"pair" is a run without capture (the baseline) and one run per capture variant: the capture
of this tree, with `--before REF` also capture.py as it was at git ref REF (so a change is
measured against its predecessor in one run), and with `--tracepoints-only` a run with the
capture's events on in the kernel and nothing reading them (the floor: the tracepoints' own
cost, in fio's system calls and completions). The order alternates from pair to pair
(ABBA: base, now, before, kernel | kernel, before, now, base) so a drift of the shared machine's load does
not favour either side. Printed per run: fio IOPS; for a captured run the events the kernel
dropped (lost to the trace), the IOs recorded against fio's own count, the CPU the capture
used while fio ran (in cores) and the time to build the table after it. Then per variant:
the median of the pairs' IOPS ratios (captured / baseline of the same pair).

Asserts nothing: a ratio on a shared machine is a measurement, not a pass/fail (goal: a
loss of at most 5 %).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from iolab.core.errors import RefusedError
from iolab.core.units import parse_duration, parse_size
from iolab.traces.capture import capture as capture_now

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Leg:
    variant: str  # "baseline" or a capture variant
    iops: float
    fio_ios: int
    fio_cpu_us: float  # fio's own CPU (user + system) per IO: the tracepoints run in its syscalls
    dropped: int | None = None
    recorded: int | None = None
    cpu_cores: float | None = None  # capture process CPU while fio ran / fio's wall time
    import_s: float | None = None  # from the end of fio to the table written


def fio(device: str, seconds: float) -> tuple[float, int, float, float]:
    """fio's read IOPS, IOs done, CPU µs per IO and wall time (s) for one run."""
    t0 = time.monotonic()
    out = subprocess.run(
        [
            "fio",
            "--name=cap",
            f"--filename={device}",
            "--rw=randread",
            "--bs=4k",
            "--ioengine=libaio",
            "--iodepth=32",
            "--direct=1",
            "--time_based",
            f"--runtime={seconds:g}",
            "--output-format=json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.monotonic() - t0
    job = json.loads(out.stdout)["jobs"][0]
    iops, ios = job["read"]["iops"], job["read"]["total_ios"]
    if not iops > 0 or not ios > 0 or not job["job_runtime"] > 0:
        raise SystemExit(f"fio reported no reads on {device}: {job['read']}")
    cpu_us = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] * 1000 / ios
    return float(iops), int(ios), cpu_us, wall


def cpu_s() -> float:
    """CPU time of this process (all threads: the capture runs in one of them)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def captured(capture, device: str, seconds: float, out: Path, variant: str, buffer_kb: int) -> Leg:
    """One fio run while `capture` records the device; the capture stops when fio ends.
    Waits (up to 5 minutes) while another capture on this machine holds tracefs."""
    for _ in range(150):
        try:
            return captured_once(capture, device, seconds, out, variant, buffer_kb)
        except RefusedError as e:
            print(f"  waiting: {e}", flush=True)
            time.sleep(2)
    raise SystemExit("tracefs stayed busy with another capture for 5 minutes")


def captured_once(capture, device: str, seconds: float, out: Path, variant: str, buffer_kb: int) -> Leg:
    ready, stop, res = threading.Event(), threading.Event(), {}

    def run() -> None:
        try:
            res["r"] = capture(
                device, seconds + 600, out, ready=ready, stop=stop, source="tracefs", buffer_kb=buffer_kb
            )
        except BaseException as e:  # reported by the main thread
            res["err"] = e
            ready.set()

    t = threading.Thread(target=run)
    t.start()
    if not ready.wait(30) or "err" in res:
        stop.set()
        t.join()
        if isinstance(res.get("err"), RefusedError):
            raise res["err"]
        raise SystemExit(f"capture did not start: {res.get('err', 'not armed within 30 s')}")
    c0 = cpu_s()
    iops, ios, fio_cpu, wall = fio(device, seconds)
    cores = (cpu_s() - c0) / wall
    t_end = time.monotonic()
    stop.set()
    t.join()
    if "err" in res:
        raise SystemExit(f"capture failed: {res['err']}")
    r = res["r"]
    return Leg(variant, iops, ios, fio_cpu, r.lost_events, r.table.rows, cores, time.monotonic() - t_end)


def tracepoints_only(device: str, seconds: float, buffer_kb: int) -> Leg:
    """fio with the capture's kernel side on (same instance, filter, buffer, events) and
    nothing reading the buffer: the part of the cost that is the kernel's tracepoints."""
    cap = importlib.import_module("iolab.traces.capture")  # the module (iolab.traces.capture is the function)

    st = os.stat(device)
    root = cap._tracefs()
    cap._check_free(root, os.major(st.st_rdev), os.minor(st.st_rdev), device)
    inst = root / "instances" / cap.INSTANCE
    events = [inst / "events" / "block" / ev for ev in cap.EVENTS]
    inst.mkdir()
    try:
        cap._write(inst / "trace_clock", "mono")
        cap._write(inst / "buffer_size_kb", str(buffer_kb))
        for ev in events:
            cap._write(ev / "filter", f"dev == {os.major(st.st_rdev) << 20 | os.minor(st.st_rdev)}")
            cap._write(ev / "enable", "1")
        iops, ios, fio_cpu, _ = fio(device, seconds)
        for ev in events:
            cap._write(ev / "enable", "0")
        written = cap._events_written(inst)
    finally:
        cap._teardown(inst)
    if written < ios:
        raise SystemExit(f"tracepoints-only run: {written:,} events for {ios:,} IOs; the events were not on")
    return Leg("kernel", iops, ios, fio_cpu)


def capture_at(ref: str):
    """`capture` from src/iolab/traces/capture.py as it was at git ref `ref`, loaded inside
    the iolab.traces package (its relative imports use today's readers and table)."""
    try:
        src = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{ref}:src/iolab/traces/capture.py"], capture_output=True, check=True
        ).stdout
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"--before {ref}: git cannot show capture.py there ({e.stderr.decode().strip()})") from None
    path = Path(tempfile.mkdtemp(prefix="iolab-capbench-src-")) / "capture_before.py"
    path.write_bytes(src)
    spec = importlib.util.spec_from_file_location("iolab.traces._capture_before", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.capture


def ram_loop(size: int) -> tuple[str, Path]:
    backing = Path(tempfile.mkdtemp(prefix="iolab-capbench-", dir="/dev/shm")) / "backing.img"
    subprocess.run(
        [
            "fio",
            "--name=fill",
            f"--filename={backing}",
            "--rw=write",
            "--bs=1M",
            f"--size={size}",
            "--output-format=terse",
        ],
        capture_output=True,
        check=True,
    )
    dev = subprocess.run(
        ["losetup", "--find", "--show", "--direct-io=on", str(backing)], capture_output=True, text=True, check=True
    ).stdout.strip()
    return dev, backing


def show(i: int, leg: Leg) -> None:
    text = f"pair {i + 1} {leg.variant:>9}: {leg.iops:10,.0f} IOPS, fio CPU {leg.fio_cpu_us:.2f} µs/IO"
    if leg.dropped is not None:
        text += (
            f", dropped {leg.dropped:,} events, recorded {leg.recorded:,} of fio's {leg.fio_ios:,} IOs, "
            f"capture CPU {leg.cpu_cores:.2f} cores, table built in {leg.import_s:.1f} s"
        )
    print(text, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="512MiB", help="the RAM-backed loop device's size (default 512MiB)")
    ap.add_argument("--seconds", default="3", help="fio run time per run (default 3s)")
    ap.add_argument("--pairs", type=int, default=4, help="baseline/capture pairs, in alternating order (default 4)")
    ap.add_argument("--before", metavar="REF", help="also measure capture.py as it was at this git ref (e.g. main)")
    ap.add_argument(
        "--tracepoints-only",
        action="store_true",
        help="also runs with the block events on and nothing reading them (the kernel's share of the cost)",
    )
    ap.add_argument(
        "--buffer-kb", type=int, default=16384, help="per-CPU trace buffer of every capture (default 16384)"
    )
    ap.add_argument(
        "--smoke", action="store_true", help="one pair on a 32 MiB device, 0.5 s runs: does the bench still run?"
    )
    args = ap.parse_args()
    if args.smoke:
        args.size, args.seconds, args.pairs = "32MiB", "500ms", 1
    size, seconds = parse_size(args.size, "--size"), parse_duration(args.seconds, "--seconds")
    variants = {"now": capture_now}
    if args.before:
        variants[f"@{args.before}"] = capture_at(args.before)

    dev, backing = ram_loop(size)
    print(
        f"target: {dev} over {backing} ({size >> 20} MiB in RAM); fio 4 KiB randread QD 32, {seconds:g} s per run; "
        f"buffer {args.buffer_kb} KiB per CPU; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
        flush=True,
    )
    legs: list[list[Leg]] = []
    try:
        for i in range(args.pairs):
            order = ["baseline", *variants, *(["kernel"] if args.tracepoints_only else [])]
            pair = []
            for name in order if i % 2 == 0 else order[::-1]:
                if name == "baseline":
                    iops, ios, fio_cpu, _ = fio(dev, seconds)
                    leg = Leg(name, iops, ios, fio_cpu)
                elif name == "kernel":
                    leg = tracepoints_only(dev, seconds, args.buffer_kb)
                else:
                    leg = captured(
                        variants[name], dev, seconds, backing.parent / f"cap{i}.parquet", name, args.buffer_kb
                    )
                show(i, leg)
                pair.append(leg)
            legs.append(pair)
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        shutil.rmtree(backing.parent)
    print(
        f"\nload average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (other work on the machine "
        "makes single runs noisy: compare the pairs' spread with the effect)"
    )
    if args.tracepoints_only:
        print(
            f"tracepoints only (kernel): IOPS ratio median {statistics.median(paired(p, 'kernel', 'iops') for p in legs):.3f}, "
            f"fio CPU per IO ratio median {statistics.median(paired(p, 'kernel', 'fio_cpu_us') for p in legs):.3f}"
        )
    for name in variants:
        ratios = [paired(pair, name, "iops") for pair in legs]
        cpu = statistics.median(paired(pair, name, "fio_cpu_us") for pair in legs)
        runs = [leg for pair in legs for leg in pair if leg.variant == name]
        med = statistics.median(ratios)
        q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (med, med, med)
        print(
            f"capture {name}: IOPS ratio captured/baseline median {med:.3f} ({(1 - med) * 100:.1f} % loss; goal ≤ 5 %), "
            f"quartiles {q1:.3f}-{q3:.3f}, pairs {', '.join(f'{r:.3f}' for r in ratios)}; fio CPU per IO ratio median {cpu:.3f}; dropped events "
            f"per run {', '.join(f'{leg.dropped:,}' for leg in runs)}; capture CPU median "
            f"{statistics.median(leg.cpu_cores for leg in runs):.3f} cores; table built in median "
            f"{statistics.median(leg.import_s for leg in runs):.1f} s",
            flush=True,
        )


def paired(pair: list[Leg], variant: str, what: str) -> float:
    """`what` of the variant's run over the same of the pair's baseline."""
    base = next(leg for leg in pair if leg.variant == "baseline")
    return getattr(next(leg for leg in pair if leg.variant == variant), what) / getattr(base, what)


if __name__ == "__main__":
    main()
