"""A simulated fleet with one drive made slower on purpose: does the fleet report find it, and
only it? And what does the coordinator cost? (prints figures, asserts nothing).

    .venv/bin/python bench/fleet.py                      # 64 drives, one with t_prog_us +30 %
    .venv/bin/python bench/fleet.py --drives 128 --parallel 16 --cell-time 250ms
    .venv/bin/python bench/fleet.py --smoke              # 6 drives, 100 ms cells, 2 rounds
    .venv/bin/python bench/fleet.py --hosts 16 --parallel 8   # as root: 16 netns fio-server hosts, 2 file drives each

It writes a fleet file of DRIVES simulated drives of one model (`sim:enterprise-sas`, a small
user_gb, seeds 1..N-1) and one more, `slow`, whose NAND program time is raised 30 % (1,150 ->
1,495 us), runs `iolab run iops --quick --fleet FILE` as a user would, and prints the fleet's
terminal report (the drive the outlier rule flagged, per figure), then:

- the coordinator's own CPU time and peak memory (the `iolab run --fleet` process alone, read
  from /proc while it runs: its children, the drives' runs, are not in it), per drive;
- the fleet's wall time against the slow drive run alone with the same arguments. Simulated
  drives compete for this machine's cores (each runs its simulator in its own process), so on
  a machine with fewer cores than PARALLEL the ratio measures the CPU sharing, not the
  coordinator; the bench prints the cores and the CPU the drives' runs took in all.

With `--hosts N` (root): N network-namespace hosts on this machine (tests/integration/netns.py),
each running `fio --server`, with 2 file drives each (16 MiB files), run with `latency --quick`;
the fleet's wall time is set against one of its drives run alone through its host.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
IOLAB = [sys.executable, "-c", "from iolab.cli.main import main; main()"]
SIM = "sim:enterprise-sas?user_gb={gb}"
SLOW_T_PROG_US = 1495  # the preset's 1,150 us + 30 %


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


def run_fleet(args: list[str], f: Path, runs: Path, env: dict) -> tuple[subprocess.Popen, str, float, dict, float]:
    """`iolab run ARGS --fleet F`: (process, its output, wall s, its own CPU/RSS, all children's CPU s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    cmd = [*IOLAB, "run", *args, "--fleet", str(f), "--runs-dir", str(runs)]
    proc = subprocess.Popen(cmd, env=env, text=True, stdout=subprocess.PIPE)
    own: dict = {}
    w = threading.Thread(target=watch, args=(proc.pid, own), daemon=True)
    w.start()
    out, _ = proc.communicate()
    wall = time.monotonic() - t0
    w.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, out, wall, own, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def alone(args: list[str], row: dict, runs: Path, env: dict, extra: list[str]) -> tuple[int, float]:
    t1 = time.monotonic()
    r = subprocess.run(
        [*IOLAB, "run", *args, "--target", row["target"], *extra, "--runs-dir", str(runs), "--quiet"],
        env=env,
        capture_output=True,
        text=True,
    )
    return r.returncode, time.monotonic() - t1


def summary(
    doc: dict, proc, out: str, wall: float, own: dict, cpu: float, parallel: int, solo: tuple[int, float]
) -> None:
    print(out)
    n = len(doc["drives"])
    print(f"fleet exit status {proc.returncode}; alone exit status {solo[0]}")
    print(f"drives complete: {doc['summary']['complete']} of {n}")
    print(f"outlier drives: {', '.join(doc['summary']['outlier_drives']) or 'none'}")
    print(
        f"coordinator: {own.get('cpu_s', float('nan')):.2f} s CPU ({1000 * own.get('cpu_s', 0) / n:.1f} ms per drive), "
        f"peak RSS {own.get('peak_rss_mib', float('nan')):.0f} MiB ({own.get('peak_rss_mib', 0) / n:.2f} MiB per drive)"
    )
    print(
        f"fleet wall {wall:.1f} s for {n} drives, {parallel} at once, on {os.cpu_count()} cores; "
        f"one drive alone {solo[1]:.1f} s: ratio {wall / solo[1]:.2f}; "
        f"all processes' CPU {cpu:.0f} s ({cpu / n:.2f} s per drive)"
    )


def hosts_fleet(n: int, parallel: int, d: Path, env: dict) -> None:
    from tests.integration.netns import fio_hosts

    args = ["latency", "--quick", "--cell-time", "100ms", "--max-rounds", "2", "--no-report", "--purge", "none"]
    args.append("--allow-unsafe-target")  # servers reached through fio alone cannot check their targets
    runs = d / "runs"
    with fio_hosts(n) as hosts:
        f = d / "fleet.toml"
        f.write_text(
            f'[fleet]\nname = "hosts"\nparallel = {parallel}\n'
            + "".join(
                f'[[host]]\naddress = "{addr}"\nlabels = {{ rack = "r{i % 4}" }}\n'
                + "".join(f'[[host.drive]]\ntarget = "file:{d}/h{i}d{j}.img?size=16MiB"\n' for j in range(2))
                for i, (_, addr) in enumerate(hosts)
            )
        )
        proc, out, wall, own, cpu = run_fleet(args, f, runs, env)
        fdir = Path(next(ln for ln in out.splitlines() if ln.startswith("fleet directory: ")).split(": ", 1)[1])
        doc = json.loads((fdir / "report.json").read_text())
        row = doc["drives"][0]
        hf = fdir / "drives" / row["name"] / "hosts.toml"
        solo = alone(args, row, runs, env, ["--hosts-file", str(hf)])
    summary(doc, proc, out, wall, own, cpu, parallel, solo)
    print(
        f"hosts: {n} network namespaces with a fio server each, 2 file drives each; each drive's run split over its host:"
    )
    for r in doc["drives"][:4]:
        print(f"  {r['name']}: {r['where']} {r['state']} {r['run_dir']}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--drives", type=int, default=64)
    p.add_argument("--parallel", type=int, default=8, help="drives at once (the fleet file's parallel)")
    p.add_argument("--cell-time", default="250ms")
    p.add_argument("--max-rounds", default="5")
    p.add_argument("--user-gb", type=float, default=0.25)
    p.add_argument("--hosts", type=int, default=0, help="as root: a fleet of N netns hosts × 2 file drives instead")
    p.add_argument("--smoke", action="store_true", help="6 drives, 100 ms cells, 2 rounds")
    a = p.parse_args()
    if a.smoke:
        a.drives, a.parallel, a.cell_time, a.max_rounds, a.user_gb = 6, 6, "100ms", "2", 0.1
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    with tempfile.TemporaryDirectory(prefix="iolab-bench-fleet-", dir="/var/tmp") as tmp:
        d = Path(tmp)
        if a.hosts:
            hosts_fleet(a.hosts, a.parallel, d, env)
            return
        runs = d / "runs"
        args = ["iops", "--quick", "--cell-time", a.cell_time, "--max-rounds", a.max_rounds, "--no-report"]
        f = fleet_file(d, a.drives, a.parallel, a.user_gb)
        proc, out, wall, own, cpu = run_fleet(args, f, runs, env)
        fdir = Path(next(ln for ln in out.splitlines() if ln.startswith("fleet directory: ")).split(": ", 1)[1])
        doc = json.loads((fdir / "report.json").read_text())
        slow = next(row for row in doc["drives"] if row["name"] == "slow")
        summary(doc, proc, out, wall, own, cpu, a.parallel, alone(args, slow, runs, env, []))
        print("planted outlier: slow (t_prog_us +30 %)")


if __name__ == "__main__":
    main()
