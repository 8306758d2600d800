"""Speed and memory of the simulated drive (issue 3 §7). Prints figures; asserts nothing.

    .venv/bin/python bench/sim_speed.py            # the default preset (400 GB on 512 GB)
    .venv/bin/python bench/sim_speed.py --quick    # a 1/8-size copy (same dies and timings)
    .venv/bin/python bench/sim_speed.py --preset client-nvme-slc --memory-only   # memory of another preset

Figures: host IOs simulated per second of CPU time and of wall time, for 4 KiB random
writes at QD32 in steady state (rho = 0.28; goal >= 3 M/s), and for 4 KiB random reads;
bytes of drive memory per GiB of simulated flash (goal <= 4 MiB/GiB); and the wall time of
a Write Saturation run (RND 4 KiB W, TC4 x QD32, from purge to 4x the user capacity;
goal < 2 min). CPU time is the fairer figure on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import time

from iolab import _sim

KIB = 1024
GIB = 1024**3


def rss_bytes() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def timed(drive: _sim.Drive, label: str, streams, *, qd: int = 32, threads: int = 1,
          duration_s: float | None = None, bytes_budget: int | None = None) -> dict:
    wall, cpu = time.perf_counter(), time.thread_time()
    raw = json.loads(drive.run(streams, threads, qd, 1.0, 1.0, None, duration_s, bytes_budget, 1))
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    ios = raw["read"]["ios"] + raw["write"]["ios"]
    waf = raw["counters"].get("waf")
    print(f"{label:<44} {ios / 1e6:8.2f} M IOs  {ios / cpu / 1e6:6.2f} M IO/s per CPU s  "
          f"{ios / wall / 1e6:6.2f} M IO/s wall  {raw['runtime_s']:8.1f} virtual s  "
          f"{ios / raw['runtime_s']:9.0f} IOPS" + (f"  WAF {waf:.3f}" if waf is not None else ""))
    return {"wall": wall, "cpu": cpu, "raw": raw}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a 1/8-size drive (faster preconditioning)")
    ap.add_argument("--warmup", type=float, default=2.0, help="drive-writes of random warm-up before measuring")
    ap.add_argument("--preset", default=_sim.DEFAULT_PRESET, help="which preset (default: the default preset at rho 0.28)")
    ap.add_argument("--memory-only", action="store_true", help="stop after the memory figures")
    args = ap.parse_args()
    params = [("op", "0.28")] if args.preset == _sim.DEFAULT_PRESET else []
    params += [("blocks_per_plane", "477")] if args.quick else []
    before = rss_bytes()
    t0 = time.perf_counter()
    drive = _sim.Drive(args.preset, params)
    info = json.loads(drive.describe())
    flash_gib = info["physical_bytes"] / GIB
    # Touch every page of the maps (as a filled drive does) before measuring resident memory.
    rnd_w = [("rnd", "write", 4 * KIB, 1.0)]
    timed(drive, "sequential fill (128 KiB, 1x capacity)", [("seq", "write", 128 * KIB, 1.0)],
          bytes_budget=drive.capacity)
    rss = rss_bytes() - before
    print(f"drive: {info['preset']} {drive.capacity / 1e9:.1f} GB user on {info['physical_bytes'] / 1e9:.1f} GB flash "
          f"(rho {info['op']:.3f}); built in {time.perf_counter() - t0:.1f} s wall")
    print(f"memory: maps {drive.memory_bytes() / 2**20:.0f} MiB = {drive.memory_bytes() / 2**20 / flash_gib:.2f} MiB per GiB "
          f"of flash; process RSS grew {rss / 2**20:.0f} MiB = {rss / 2**20 / flash_gib:.2f} MiB per GiB (goal <= 4)")
    if args.memory_only:
        return
    timed(drive, f"random-write warm-up ({args.warmup:g}x capacity)", rnd_w, bytes_budget=int(args.warmup * drive.capacity))
    timed(drive, "steady 4 KiB random write QD32, 60 s", rnd_w, duration_s=60.0)
    timed(drive, "4 KiB random read QD32, 60 s", [("rnd", "read", 4 * KIB, 1.0)], duration_s=60.0)
    drive.purge()
    w = timed(drive, "WSAT from purge to 4x capacity (TC4 x QD32)", rnd_w, threads=4, bytes_budget=4 * drive.capacity)
    print(f"WSAT to 4x capacity: {w['wall']:.1f} s wall, {w['cpu']:.1f} s CPU (goal < 120 s wall); "
          f"{w['raw']['runtime_s'] / 3600:.2f} virtual hours")


if __name__ == "__main__":
    main()
