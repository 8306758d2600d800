"""Shared by bench/fleet.py: where a fleet's wall time went, read from each drive's own evidence
(the fleet's rows and the drives' run directories), and the CPU the drives and their hosts took.

A drive's time is cut at its raw files: a cell's fio run starts as its job file is written
(`*.fio`) and ends as fio's JSON document is (`*.json`, the output of the fio client or process).
So per drive: process start to the first job file (Python start and imports, target checks,
fio server start and probe, purge), the fio runs (cell time plus what fio's start, its
client/server exchange and its exit add), iolab between cells (storing each cell, deciding the
next), and the last document to the process's end (summary, run record, report)."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def ns_cpu(namespaces: list[str]) -> float:
    """CPU seconds of every process in these network namespaces, with their reaped children
    (a fio server's forked jobs, nbdkit): read twice, the difference is what ran between."""
    total = 0
    for ns in namespaces:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += sum(int(x) for x in f[11:15])  # utime, stime, cutime, cstime
    return total / TICK


def run_parts(run_dir: Path, start: float, end: float) -> dict:
    """One run's wall time by part (seconds), from its raw files' times; start/end: the process's."""
    raw = Path(run_dir) / "raw"
    jobs: dict[str, float] = {}
    docs: dict[str, float] = {}
    for p in raw.iterdir():
        stem = p.name.split(".", 1)[0]
        if p.suffix == ".fio":
            jobs[stem] = min(jobs.get(stem, float("inf")), p.stat().st_mtime)
        elif p.suffix == ".json":
            docs[stem] = p.stat().st_mtime
    cells = sorted((jobs[s], docs[s]) for s in jobs if s in docs)
    if not cells:
        return {"start": end - start, "fio": 0.0, "between": 0.0, "end": 0.0, "cells": 0}
    return {
        "start": cells[0][0] - start,
        "fio": sum(b - a for a, b in cells),
        "between": sum(cells[i + 1][0] - cells[i][1] for i in range(len(cells) - 1)),
        "end": end - cells[-1][1],
        "cells": len(cells),
    }


def _boot_time() -> float:
    return float(next(ln.split()[1] for ln in Path("/proc/stat").read_text().splitlines() if ln.startswith("btime")))


def fleet_parts(fdir: Path, doc: dict) -> list[dict]:
    """Each drive's parts: its process started when its run's manifest says (the process's own
    start time, /proc/PID/stat) and ended as it wrote its out.json (the fleet's row's `seconds`
    also holds the time the coordinator took to notice the end, seconds under load)."""
    boot = _boot_time()
    out = []
    for r in doc["drives"]:
        if not r.get("run_dir"):
            continue
        try:
            started = json.loads((Path(r["run_dir"]) / "manifest.json").read_text())["pid_start"]
            start, end = boot + started / TICK, (fdir / "drives" / r["name"] / "out.json").stat().st_mtime
        except (OSError, ValueError, KeyError, TypeError):
            continue
        out.append({**run_parts(Path(r["run_dir"]), start, end), "t0": start, "t1": end})
    return out


def show_parts(drives: list[dict], solo: dict, cell_s: float, t0: float, t1: float) -> None:
    def med(k: str) -> float:
        return statistics.median(d[k] for d in drives) if drives else float("nan")

    n = solo.get("cells", 0)
    if not n and not any(d["cells"] for d in drives):  # a simulated drive keeps no fio files
        whole = statistics.median(d["t1"] - d["t0"] for d in drives) if drives else float("nan")
        print(f"a drive's process, start to end (median over the fleet's drives): {whole:.1f} s")
    else:
        _cells(drives, solo, n, cell_s, med)
    if drives:
        first, last = min(d["t0"] for d in drives), max(d["t1"] for d in drives)
        print(
            f"  the coordinator: its first drive started {first - t0:.1f} s after the fleet command, "
            f"its last ended {t1 - last:.1f} s before the command did (fleet report)"
        )


def _cells(drives: list[dict], solo: dict, n: int, cell_s: float, med) -> None:
    print("where a drive's wall time went, seconds (median over the fleet's drives | the drive alone):")
    print(
        f"  process start to its first cell (Python, imports, checks, fio server probe, purge): "
        f"{med('start'):.1f} | {solo['start']:.1f}"
    )
    print(
        f"  fio runs, {n} cells (a measured cell {cell_s:g} s of IO; a preconditioning cell as long as its "
        f"bytes take), the rest fio's start, client/server exchange and exit: {med('fio'):.1f} | {solo['fio']:.1f}"
    )
    print(f"  iolab between cells (storing a cell, deciding the next): {med('between'):.1f} | {solo['between']:.1f}")
    print(f"  last cell to the process's end (summary, record): {med('end'):.1f} | {solo['end']:.1f}")


_ANSWER = re.compile(r"may take ([\d.]+) s \((.*?)\); .* answered in ([\d.]+) s \((\d+) attempt")


def show_probes(doc: dict) -> None:
    """The fio server probes of the drives' runs, from each run's notes (a tree whose runs do not
    record them: nothing)."""
    got = []
    for r in doc["drives"]:
        try:
            notes = json.loads((Path(r["run_dir"]) / "manifest.json").read_text())["notes"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for n in notes:
            m = _ANSWER.search(n) if n.startswith("fio server probe") else None
            if m:
                got.append((float(m.group(1)), m.group(2), float(m.group(3)), int(m.group(4))))
    if not got:
        print("fio server probes: not recorded by this code")
        return
    waits = sorted(g[2] for g in got)
    budgets = sorted(g[0] for g in got)
    print(
        f"fio server probes of {len(got)} runs: answered in {statistics.median(waits):.1f} s median, "
        f"{waits[-1]:.1f} s at most, {sum(g[3] for g in got) - len(got)} attempt(s) repeated; budgets "
        f"{budgets[0]:g} to {budgets[-1]:g} s (the largest: {max(got)[1]})"
    )
