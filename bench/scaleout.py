"""Does driving N hosts through fio's client/server mode lose IOPS? N = 1, 2, 4 in one run.

    .venv/bin/python bench/scaleout.py [--seconds 3] [--rate-iops 20000] [--qd 4] [--repeats 2]

Each host is a network namespace on this machine with a veth pair and its own `fio --server`
(tests/integration/netns.py; removed at the end, also on failure). Every host runs the same
`ioengine=null` job (4 KiB random reads, one job at --qd, time based), through the code
`iolab run --hosts` uses (`run_clients`, per-host json+ parsing, exact merge). It prints the
aggregate IOPS and aggregate ÷ (N × the one-host IOPS measured in the same run; goal ≥ 0.95),
the CPU time of fio's client process per host (RUSAGE_CHILDREN) and of iolab's own parsing
and merging per host (RUSAGE_SELF).

With --rate-iops 0 each host runs flat out; a null job is then CPU-bound, and on a machine
with fewer cores than hosts the ratio measures the CPU shared between namespaces, not the
client/server mechanism. The default cap keeps every host's demand within one core's reach,
so a ratio below 1 is IO lost in the mechanism. It also states this machine's limit: its
cores, and one flat-out round on 1 and on 4 hosts (the ceiling a null job reaches here, and
how much of N × one host the CPU allows). Asserts nothing: it is a measurement.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from iolab.core.workload import Stream, Workload  # noqa: E402
from iolab.engines.fio_client import client_parts, run_clients  # noqa: E402
from iolab.engines.fio_hosts import Leg  # noqa: E402
from iolab.engines.hostlist import Host  # noqa: E402
from iolab.engines.merge import merge  # noqa: E402
from iolab.targets import Target  # noqa: E402
from tests.integration.netns import fio_hosts  # noqa: E402


def job(seconds: float, qd: int, rate: int, log: str) -> str:
    lines = [
        "[global]",
        "ioengine=null",
        "size=1g",
        "rw=randread",
        "bs=4k",
        f"iodepth={qd}",
        "norandommap=1",
        f"runtime={int(seconds * 1000)}ms",
        "time_based=1",
        "lat_percentiles=1",
        "group_reporting=1",
        f"write_iops_log={log}",
        "log_avg_msec=1000",
    ]
    if rate:
        lines.append(f"rate_iops={rate}")
    return "\n".join(lines + ["[null]", ""])


def usage() -> tuple[float, float]:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime


def once(hosts, seconds: float, qd: int, rate: int, work: Path, tag: str) -> tuple[float, float, float]:
    """(aggregate IOPS, client CPU s, iolab CPU s) of one round on these hosts."""
    raw = work / tag / "raw"
    raw.mkdir(parents=True)
    t = Target("file", "null", "null", 1 << 30)
    w = Workload((Stream("rnd", "read", 4096, 1.0),), queue_depth=qd, duration_s=seconds)
    legs = [(i, Leg(f"{addr}:8765", t, 1.0, Host(addr)), w) for i, (_, addr) in enumerate(hosts)]
    endpoints = {leg.name: (leg.host.address, 8765) for _, leg, _ in legs}
    self0, kids0 = usage()
    code = run_clients(
        [(f"{tag}.p{i}", endpoints[leg.name], job(seconds, qd, rate, f"{tag}.p{i}")) for i, leg, _ in legs],
        raw,
        tag,
        seconds + 60,
    )
    self1, kids1 = usage()
    merged = merge(client_parts(legs, endpoints, raw, tag, code), "fio", "")
    self2, _ = usage()
    return merged.iops, kids1 - kids0, (self2 - self1) + (self1 - self0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rate-iops", type=int, default=20000, help="per host; 0: flat out")
    ap.add_argument("--qd", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--smoke", action="store_true", help="one 0.3 s round per N: does the bench still run?")
    a = ap.parse_args()
    if a.smoke:
        a.seconds, a.repeats = 0.3, 1
    with tempfile.TemporaryDirectory(prefix="iolab-bench-scaleout-") as tmp, fio_hosts(4) as all_hosts:
        results: dict[int, list[tuple[float, float, float]]] = {1: [], 2: [], 4: []}
        for rep in range(a.repeats):
            for n in (1, 2, 4):  # interleaved, so drift on a shared machine hits every N alike
                results[n].append(once(all_hosts[:n], a.seconds, a.qd, a.rate_iops, Path(tmp), f"n{n}-r{rep}"))
                time.sleep(0.2)
        flat = (
            {n: once(all_hosts[:n], a.seconds, a.qd, 0, Path(tmp), f"flat-n{n}")[0] for n in (1, 4)}
            if a.rate_iops
            else {}
        )
    cores = len(os.sched_getaffinity(0))
    print(f"this machine: {cores} cores usable (shared with whatever else runs), every host and the fio client on them")
    if flat:
        print(
            f"  its limit, flat out (one round each): 1 host {flat[1]:,.0f} IOPS, 4 hosts {flat[4]:,.0f} IOPS = "
            f"{flat[4] / (4 * flat[1]):.3f} × (4 × one host): a null job is CPU-bound, so flat-out ratios here "
            f"measure {cores} cores shared by 4 hosts, not the client/server mechanism"
        )
    one = statistics.median(r[0] for r in results[1])
    cap = f"{a.rate_iops:,} IOPS per host" if a.rate_iops else "flat out"
    print(f"null engine, 4 KiB random reads, QD {a.qd}, {a.seconds:g} s, {cap}; medians of {a.repeats}")
    print(
        f"{'N':>2} {'aggregate IOPS':>15} {'ratio':>7} {'of demand':>10} {'fio client CPU s/host':>22} {'iolab CPU s/host':>17}"
    )
    for n, rs in results.items():
        agg = statistics.median(r[0] for r in rs)
        demand = f"{agg / (n * a.rate_iops):>10.3f}" if a.rate_iops else f"{'-':>10}"
        print(
            f"{n:>2} {agg:>15,.0f} {agg / (n * one):>7.3f} {demand} {statistics.median(r[1] for r in rs) / n:>22.3f} "
            f"{statistics.median(r[2] for r in rs) / n:>17.3f}"
        )
    print(
        "ratio: aggregate ÷ (N × the one-host IOPS of this run); goal ≥ 0.95 for every N. "
        "of demand: aggregate ÷ (N × the rate cap)"
    )


if __name__ == "__main__":
    main()
