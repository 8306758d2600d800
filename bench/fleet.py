"""A fleet of drives run at once: does the fleet report find the drive made slower on purpose,
and only it? What does the coordinator cost, and how long does the fleet take against its
slowest drive alone (goal <= 1.1x)? (prints figures, asserts nothing).

    .venv/bin/python bench/fleet.py                      # 64 simulated drives, one with t_prog_us +30 %
    .venv/bin/python bench/fleet.py --drives 128 --parallel 16 --cell-time 250ms
    .venv/bin/python bench/fleet.py --smoke              # 6 drives, 100 ms cells, 1 round
    .venv/bin/python bench/fleet.py --hosts 16           # as root: 16 netns hosts x 2 IO-bound nbdkit drives
    .venv/bin/python bench/fleet.py --hosts 16 --host-drive file --burn 24   # file drives, 24 CPU burners
    .venv/bin/python bench/fleet.py --hosts 4 --src /work/main/src           # another tree's code

Simulated (the default): a fleet file of DRIVES simulated drives of one model
(`sim:enterprise-sas`, a small user_gb, seeds 1..N-1) and one more, `slow`, whose NAND program
time is raised 30 % (1,150 -> 1,495 us), run with `iolab run iops --quick --fleet FILE` as a
user would; the fleet's terminal report (the drive the outlier rule flagged, per figure). These
drives are CPU-bound: each simulator runs in its own process, so the fleet cannot take less wall
time than the CPU its drives need divided by this machine's cores, and the bench prints that
bound beside the ratio.

With `--hosts N` (root): N network-namespace hosts on this machine (tests/integration/netns.py),
each running `fio --server`, with 2 drives each, run with `latency --quick` (2 rounds, no
purge), all at once unless --parallel says otherwise:
- `--host-drive nbd` (default): IO-bound drives, each an nbdkit memory disk behind its delay
  filter (`--delay`, default 2 ms per read and write) started in its host's namespace and reached
  by that host's fio through a Unix socket (fio's nbd engine): a drive whose time is spent
  waiting on the device, as a real one's is;
- `--host-drive file`: 16 MiB files, which fio drives as fast as the CPU lets it.
One drive is then run alone through its host. The CPU counted: the fleet command's process tree
on this machine (the coordinator, the drives' runs, their fio clients) and every process of the
namespaces (fio servers with their forked jobs, nbdkit).

For both: the coordinator's own CPU time and peak memory (the `iolab run --fleet` process alone,
read from /proc while it runs), per drive; where each drive's wall time went, from its run's raw
files (bench/fleetparts.py), median over the fleet beside the drive alone; the fleet's wall time
against the drive alone, with the CPU bound on that ratio: (CPU of all processes / cores) / the
drive alone's wall time. `--burn K` runs K busy-looping processes during the fleet (a loaded
machine on demand); `--src DIR` runs the code of another tree (e.g. /work/main/src).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from fleetparts import fleet_parts, ns_cpu, run_parts, show_parts, show_probes  # noqa: E402

IOLAB = [sys.executable, "-c", "from iolab.cli.main import main; main()"]
SIM = "sim:enterprise-sas?user_gb={gb}"
SLOW_T_PROG_US = 1495  # the preset's 1,150 us + 30 %
GOAL = 1.1


def fleet_file(d: Path, drives: int, parallel: int, gb: float) -> Path:
    f = d / "fleet.toml"
    sim = SIM.format(gb=gb)
    f.write_text(
        f'[fleet]\nname = "bench"\nparallel = {parallel}\n'
        f'[[drive]]\ntarget = "{sim}&seed={{i}}"\ncount = {drives - 1}\nname = "d{{i}}"\nlabels = {{ firmware = "A" }}\n'
        f'[[drive]]\ntarget = "{sim}&seed={drives}&t_prog_us={SLOW_T_PROG_US}"\nname = "slow"\n'
        'labels = { firmware = "A" }\n'
    )
    return f


def watch(pid: int, out: dict) -> None:
    """The process's own CPU (utime + stime, not its children's) and peak RSS, until it ends."""
    tick = os.sysconf("SC_CLK_TCK")
    while True:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return
        if stat[0] == "Z":
            return
        out["cpu_s"] = (int(stat[11]) + int(stat[12])) / tick
        hwm = next((ln for ln in status.splitlines() if ln.startswith("VmHWM:")), None)
        if hwm:
            out["peak_rss_mib"] = int(hwm.split()[1]) / 1024
        time.sleep(0.2)


@dataclass
class Ran:
    """One command's run: exit status, output, wall s, epoch start/end, CPU of its process tree
    (RUSAGE_CHILDREN) and of the hosts' namespaces, the coordinator's own CPU and peak RSS."""

    code: int
    out: str
    wall: float
    t0: float
    t1: float
    cpu: float
    hosts_cpu: float = 0.0
    own: dict = field(default_factory=dict)


def timed(cmd: list[str], env: dict, namespaces: list[str], watch_own: bool = False) -> Ran:
    before, ns0 = resource.getrusage(resource.RUSAGE_CHILDREN), ns_cpu(namespaces)
    t0, m0 = time.time(), time.monotonic()
    proc = subprocess.Popen(cmd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    own: dict = {}
    w = threading.Thread(target=watch, args=(proc.pid, own), daemon=True)
    if watch_own:
        w.start()
    out, _ = proc.communicate()
    wall, t1 = time.monotonic() - m0, time.time()
    if watch_own:
        w.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return Ran(proc.returncode, out, wall, t0, t1, cpu, ns_cpu(namespaces) - ns0, own)


def run_fleet(args: list[str], f: Path, runs: Path, env: dict, namespaces: list[str]) -> tuple[Ran, Path, dict]:
    """`iolab run ARGS --fleet F`: its run, the fleet directory and its report document."""
    r = timed([*IOLAB, "run", *args, "--fleet", str(f), "--runs-dir", str(runs)], env, namespaces, watch_own=True)
    line = next((ln for ln in r.out.splitlines() if ln.startswith("fleet directory: ")), None)
    if line is None:
        sys.exit(f"the fleet did not run (exit {r.code}):\n{r.out[-3000:]}")
    fdir = Path(line.split(": ", 1)[1])
    return r, fdir, json.loads((fdir / "report.json").read_text())


def alone(args: list[str], row: dict, runs: Path, env: dict, extra: list[str], namespaces: list[str]):
    """The drive run alone with the same arguments: its run and its wall time by part."""
    cmd = [*IOLAB, "run", *args, "--target", row["target"], *extra, "--runs-dir", str(runs), "--json", "--quiet"]
    r = timed(cmd, env, namespaces)
    try:
        run_dir = Path(json.loads(r.out[r.out.index("{") :])["runs"][0]["path"])
        parts = run_parts(run_dir, r.t0, r.t1)
    except (ValueError, KeyError, IndexError, TypeError, OSError):
        parts = {"start": float("nan"), "fio": float("nan"), "between": float("nan"), "end": float("nan")}
    return r, parts


@contextmanager
def burners(k: int):
    """K processes that busy-loop until the block ends: a loaded machine."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(k)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def summary(doc: dict, fleet: Ran, solo: Ran, parallel: int, loads: tuple) -> None:
    print(fleet.out)
    n = len(doc["drives"])
    parallel = min(parallel, n)
    cores = len(os.sched_getaffinity(0))
    print(f"fleet exit status {fleet.code}; alone exit status {solo.code}")
    print(f"drives complete: {doc['summary']['complete']} of {n}")
    failed = [r for r in doc["drives"] if r["state"] != "complete"]
    for r in failed[:5]:
        print(f"  {r['name']}: {r['state']}: {r.get('error')}")
    print(f"outlier drives: {', '.join(doc['summary']['outlier_drives']) or 'none'}")
    own = fleet.own
    print(
        f"coordinator: {own.get('cpu_s', float('nan')):.2f} s CPU ({1000 * own.get('cpu_s', 0) / n:.1f} ms per drive), "
        f"peak RSS {own.get('peak_rss_mib', float('nan')):.0f} MiB ({own.get('peak_rss_mib', 0) / n:.2f} MiB per drive)"
    )
    cpu = fleet.cpu + fleet.hosts_cpu
    print(
        f"CPU of the fleet: {fleet.cpu:.0f} s on this machine's side (coordinator, drives' runs, fio clients)"
        + (f" + {fleet.hosts_cpu:.0f} s in the hosts (fio servers' jobs, nbdkit)" if fleet.hosts_cpu else "")
        + f" = {cpu / n:.2f} s per drive; the drive alone: {solo.cpu + solo.hosts_cpu:.2f} s"
    )
    bound = cpu / cores / solo.wall
    ratio = fleet.wall / solo.wall
    print(
        f"fleet wall {fleet.wall:.1f} s for {n} drives, {parallel} at once; the drive alone {solo.wall:.1f} s: "
        f"ratio {ratio:.2f} (goal <= {GOAL}: {'met' if ratio <= GOAL else 'not met'})"
    )
    print(
        f"CPU bound: {cpu:.0f} s of CPU on {cores} cores is at least {cpu / cores:.0f} s of wall, "
        f"{bound:.2f} x the drive alone"
        + (f" ({parallel} at once: at least {-(-n // parallel)} turns of the drive alone)" if parallel < n else "")
        + f"; load average {loads[0]:.1f} at the start, {loads[1]:.1f} at the end: the fleet's processes got "
        f"{cpu / fleet.wall:.2f} of the {cores} cores on average (other work had the rest)"
    )


@contextmanager
def nbd_disks(hosts: list[tuple[str, str]], d: Path, delay: str):
    """Two nbdkit memory disks per host, each behind the delay filter, started in the host's
    namespace; yields their sockets [[h0d0, h0d1], ...]."""
    procs, socks = [], []
    try:
        for i, (ns, _) in enumerate(hosts):
            socks.append([d / f"h{i}d{j}.sock" for j in range(2)])
            for s in socks[-1]:
                procs.append(
                    subprocess.Popen(
                        ["ip", "netns", "exec", ns, "nbdkit", "-f", "-U", str(s), "--filter=delay", "memory", "64M"]
                        + [f"rdelay={delay}", f"wdelay={delay}"],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
        end = time.monotonic() + 30
        while not all(s.exists() for h in socks for s in h):
            if time.monotonic() > end:
                sys.exit("nbdkit did not start (is it installed, with its delay filter?)")
            time.sleep(0.05)
        yield socks
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=10)


def host_fleet_file(d: Path, hosts, parallel: int, socks) -> Path:
    def drive(i: int, j: int) -> str:
        if socks is None:
            return f'[[host.drive]]\ntarget = "file:{d}/h{i}d{j}.img?size=16MiB"\n'
        return f'[[host.drive]]\ntarget = "nbd+unix:///?socket={socks[i][j]}&size=64MiB"\nname = "h{i}d{j}"\n'

    f = d / "fleet.toml"
    f.write_text(
        f'[fleet]\nname = "hosts"\nparallel = {parallel}\n'
        + "".join(
            f'[[host]]\naddress = "{addr}"\nlabels = {{ rack = "r{i % 4}" }}\n' + drive(i, 0) + drive(i, 1)
            for i, (_, addr) in enumerate(hosts)
        )
    )
    return f


def hosts_fleet(a, d: Path, env: dict) -> None:
    from tests.integration.netns import fio_hosts

    args = ["latency", "--quick", "--cell-time", a.cell_time, "--max-rounds", a.max_rounds, "--no-report"]
    args += ["--purge", "none", "--allow-unsafe-target"]  # servers reached through fio alone: targets unchecked
    runs = d / "runs"
    parallel = a.parallel or 2 * a.hosts
    with fio_hosts(a.hosts) as hosts:
        namespaces = [ns for ns, _ in hosts]
        with nbd_disks(hosts, d, a.delay) if a.host_drive == "nbd" else _none() as socks:
            f = host_fleet_file(d, hosts, parallel, socks)
            loads = [os.getloadavg()[0]]
            with burners(a.burn):
                fleet, fdir, doc = run_fleet(args, f, runs, env, namespaces)
            loads.append(os.getloadavg()[0])
            row = doc["drives"][0]
            hf = fdir / "drives" / row["name"] / "hosts.toml"
            solo, solo_parts = alone(args, row, runs, env, ["--hosts-file", str(hf)], namespaces)
    kind = (
        f"nbdkit memory disks behind the delay filter ({a.delay} per read and write), IO-bound"
        if a.host_drive == "nbd"
        else "16 MiB files"
    )
    summary(doc, fleet, solo, parallel, tuple(loads))
    show_parts(fleet_parts(fdir, doc), solo_parts, _seconds(a.cell_time), fleet.t0, fleet.t1)
    show_probes(doc)
    print(f"hosts: {a.hosts} network namespaces with a fio server each, 2 drives each: {kind}; burners: {a.burn}")
    for r in doc["drives"][:2]:
        print(f"  {r['name']}: {r['where']} {r['state']} {r['run_dir']}")


@contextmanager
def _none():
    yield None


def _seconds(text: str) -> float:
    return float(text[:-2]) / 1000 if text.endswith("ms") else float(text.rstrip("s"))


def sim_fleet(a, d: Path, env: dict) -> None:
    runs = d / "runs"
    args = ["iops", "--quick", "--cell-time", a.cell_time, "--max-rounds", a.max_rounds, "--no-report"]
    f = fleet_file(d, a.drives, a.parallel or 8, a.user_gb)
    loads = [os.getloadavg()[0]]
    with burners(a.burn):
        fleet, fdir, doc = run_fleet(args, f, runs, env, [])
    loads.append(os.getloadavg()[0])
    slow = next(row for row in doc["drives"] if row["name"] == "slow")
    solo, solo_parts = alone(args, slow, runs, env, [], [])
    summary(doc, fleet, solo, a.parallel or 8, tuple(loads))
    show_parts(fleet_parts(fdir, doc), solo_parts, _seconds(a.cell_time), fleet.t0, fleet.t1)
    print("planted outlier: slow (t_prog_us +30 %); simulated drives are CPU-bound (see the CPU bound above)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--drives", type=int, default=64)
    p.add_argument("--parallel", type=int, default=0, help="drives at once (default: 8 simulated, all host drives)")
    p.add_argument("--cell-time", default=None, help="default: 250ms simulated, 2s host drives")
    p.add_argument("--max-rounds", default=None, help="default: 5 simulated, 2 host drives")
    p.add_argument("--user-gb", type=float, default=0.25)
    p.add_argument("--hosts", type=int, default=0, help="as root: a fleet of N netns hosts x 2 drives instead")
    p.add_argument("--host-drive", choices=("nbd", "file"), default="nbd", help="the hosts' drives (see above)")
    p.add_argument("--delay", default="2ms", help="nbdkit's delay per read and write (--host-drive nbd)")
    p.add_argument("--burn", type=int, default=0, help="busy-looping processes during the fleet")
    p.add_argument("--keep", action="store_true", help="keep the fleet's directory (its path is printed)")
    p.add_argument("--src", type=Path, default=ROOT / "src", help="the iolab code to run (a tree's src/)")
    p.add_argument("--smoke", action="store_true", help="6 drives (2 hosts with --hosts), 100 ms cells, 1 round")
    a = p.parse_args()
    host = bool(a.hosts)
    a.cell_time = a.cell_time or ("2s" if host else "250ms")
    a.max_rounds = a.max_rounds or ("2" if host else "5")
    if a.smoke:
        a.drives, a.cell_time, a.max_rounds, a.user_gb = 6, "100ms", "1", 0.1
        a.hosts = min(a.hosts, 2)
    env = {**os.environ, "PYTHONPATH": str(a.src.resolve()), "COLUMNS": "200"}
    print(f"code: {a.src}; load average {os.getloadavg()[0]:.1f}; {len(os.sched_getaffinity(0))} cores")
    if a.keep:
        tmp = tempfile.mkdtemp(prefix="iolab-bench-fleet-", dir="/var/tmp")
        print(f"kept: {tmp}")
        (hosts_fleet if host else sim_fleet)(a, Path(tmp), env)
        return
    with tempfile.TemporaryDirectory(prefix="iolab-bench-fleet-", dir="/var/tmp") as tmp:
        (hosts_fleet if host else sim_fleet)(a, Path(tmp), env)


if __name__ == "__main__":
    main()
