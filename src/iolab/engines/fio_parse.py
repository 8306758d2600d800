"""Reading fio's output back: pure functions on fio's JSON+ report and per-second logs, so
unit tests can feed recorded files. Two JSON shapes are read: fio 3.x (ns fields,
`bw_bytes`) and fio 2.x (µs fields, KiB units). A field iolab uses that is missing is an
error naming the field and the file, never a silent zero."""

from __future__ import annotations

import csv
import math
import os
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.core.errors import EngineError
from iolab.core.results import (
    LOG_INTERVAL_MS,
    Histogram,
    OpStats,
    RoundResult,
    SecondSample,
    fio_completed_ios,
    json_objects,
    partial_row,
)
from iolab.core.safefile import read_output
from iolab.engines import fio_hist

_LOG_RE = re.compile(r"_(iops|bw|lat|clat|slat)\.(\d+)\.log$")


class _Fields:
    """Reads required fields from fio's JSON, naming path and file when one is missing."""

    def __init__(self, source: str):
        self.source = source

    def get(self, obj: dict, key: str, where: str):
        if not isinstance(obj, dict) or key not in obj or obj[key] is None:
            raise EngineError(
                f"fio output {self.source}: required field {where}.{key} is missing, so this "
                "round cannot be trusted. The file may be truncated (fio killed?) or written by "
                "a fio version iolab does not read (it reads fio 2.x and 3.x JSON); rerun the "
                "round, and report the fio version if it persists."
            )
        return obj[key]

    def num(self, obj: dict, key: str, where: str) -> float:
        v = self.get(obj, key, where)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise EngineError(f"fio output {self.source}: field {where}.{key} is {v!r}, not a number.")
        return v


def _histogram(bins: dict, max_us: float, per_us: float, fields: _Fields, where: str) -> Histogram:
    """Histogram from a json+ `bins` object; bin values are in units of 1/per_us µs."""
    try:
        if "FIO_IO_U_PLAT_BITS" in bins:  # fio 2.x json+: index-keyed bins
            bits = int(fields.num(bins, "FIO_IO_U_PLAT_BITS", where))
            val = int(fields.num(bins, "FIO_IO_U_PLAT_VAL", where))
            # fio 2.x json+ keyed its bins by index (µs), with the stat.c constants beside them
            items = [
                (fio_hist.bin_value(int(k), bits, val), int(c)) for k, c in bins.items() if not k.startswith("FIO_")
            ]
        else:
            items = [(float(k), int(c)) for k, c in bins.items()]
    except (ValueError, TypeError):
        raise EngineError(f"fio output {fields.source}: {where} holds a bin that is not a number.") from None
    acc: dict[float, int] = defaultdict(int)
    for v, c in items:
        if c:
            acc[v / per_us] += c
    keys = sorted(acc)
    return Histogram(tuple(keys), tuple(acc[k] for k in keys), max_us)


def _direction(d: dict, fields: _Fields, where: str, require_bins: bool) -> tuple[OpStats, float]:
    """OpStats for one direction of one job entry, and its runtime in seconds."""
    issued = int(fields.num(d, "total_ios", where))
    # the IOs its latencies and bytes count, not those issued after the ramp (core/results.py)
    ios = (fio_completed_ios(d) or 0) if issued else 0
    if ios == 0:
        # Nothing measured in this direction: None latencies, not zeros posing as numbers.
        return OpStats.idle(), 0.0
    iops = float(fields.num(d, "iops", where))
    runtime_s = fields.num(d, "runtime", where) / 1000.0
    if "clat_ns" in d or "lat_ns" in d:  # fio 3.x: bytes, B/s, ns
        io_bytes = int(fields.num(d, "io_bytes", where))
        mbps = fields.num(d, "bw_bytes", where) / 1e6
        lat_key, clat_key, per_us = "lat_ns", "clat_ns", 1000.0
    else:  # fio 2.x: io_bytes in KiB, bw in KiB/s, latencies in µs
        io_bytes = int(fields.num(d, "io_bytes", where)) * 1024
        mbps = fields.num(d, "bw", where) * 1024 / 1e6
        lat_key, clat_key, per_us = "lat", "clat", 1.0
    # Every latency figure of a cell (mean, min, max, percentiles) comes from one definition.
    # Total latency (submission + completion, what a user waits) when fio binned it: iolab's
    # job files ask for it (lat_percentiles=1). Without total-latency bins (fio 2.x, or a job
    # file without that option) fio bins only completion latency, so then every figure is
    # completion latency rather than a mean of one kind beside percentiles of the other.
    lat = fields.get(d, lat_key, where)
    if isinstance(lat, dict) and "bins" in lat:
        kind, src, sw = "total", lat, f"{where}.{lat_key}"
    else:
        kind, src, sw = "completion", fields.get(d, clat_key, where), f"{where}.{clat_key}"
    max_us = fields.num(src, "max", sw) / per_us
    # Percentiles are capped at the largest latency fio saw (a bin's value is its middle).
    if require_bins or "bins" in src:
        hist = _histogram(fields.get(src, "bins", sw), max_us, per_us, fields, f"{sw}.bins")
    else:
        hist = None
    stats = OpStats(
        ios=ios,
        io_bytes=io_bytes,
        iops=iops,
        mbps=mbps,
        lat_mean_us=fields.num(src, "mean", sw) / per_us,
        lat_max_us=max_us,
        lat_min_us=fields.num(src, "min", sw) / per_us,
        histogram=hist,
        latency=kind,
    )
    return stats, runtime_s


def _combine(parts: list[OpStats]) -> OpStats:
    """Jobs that ran side by side in one group: counts and rates add, latencies merge."""
    live = [p for p in parts if p.ios]
    if not live:
        return OpStats.idle()
    if len(live) == 1:
        return live[0]
    ios = sum(p.ios for p in live)
    hists = [p.histogram for p in live if p.histogram is not None]
    means, maxes, mins = _latencies(live)
    return OpStats(
        ios=ios,
        io_bytes=sum(p.io_bytes for p in live),
        iops=sum(p.iops for p in live),
        mbps=sum(p.mbps for p in live),
        lat_mean_us=sum(p.ios * m for p, m in zip(live, means)) / ios,
        lat_max_us=max(maxes),
        lat_min_us=min(mins),
        histogram=Histogram.merge(hists) if len(hists) == len(live) else None,
        latency=live[0].latency,  # one fio run: every job has the same latency options
    )


def _latencies(live: list[OpStats]) -> tuple[list[float], list[float], list[float]]:
    """Each job's mean, maximum and minimum latency: fio reports them for a job that did IOs."""
    means: list[float] = []
    maxes: list[float] = []
    mins: list[float] = []
    for p in live:
        if p.lat_mean_us is None or p.lat_max_us is None or p.lat_min_us is None:
            raise EngineError(f"fio output: a job that did {p.ios} IOs reports no latency.")
        means.append(p.lat_mean_us)
        maxes.append(p.lat_max_us)
        mins.append(p.lat_min_us)
    return means, maxes, mins


def parse_fio_json(text: str, source: str, *, require_bins: bool = True) -> RoundResult:
    """A `RoundResult` (no series, no raw files yet) from fio's JSON output.

    `text` may hold several JSON objects (periodic status reports); the last is the final
    report. `source` names the file in error messages. With `require_bins` the json+
    latency bins must be there (iolab always asks for them); without, a direction lacking
    them gets no histogram rather than an invented one.
    """
    objs, other, _cut = json_objects(text)  # a truncated object is kept as text for the message
    if not objs:
        tail = " | ".join(other[-5:])[-400:]
        raise EngineError(
            f"fio output {source} holds no JSON report (fio failed before writing one?). "
            f"Its text ends with: {tail or '(empty file)'}"
        )
    return fio_result(objs[-1], source, require_bins=require_bins)


def fio_result(report: dict, source: str, *, require_bins: bool = True) -> RoundResult:
    """`parse_fio_json`'s result from fio's final report, parsed."""
    f = _Fields(source)
    version = f.get(report, "fio version", "(top level)")
    jobs = f.get(report, "jobs", "(top level)")
    if not isinstance(jobs, list) or not jobs:
        raise EngineError(f"fio output {source}: 'jobs' is empty, so fio ran nothing. Check the job file.")
    groups = {j.get("groupid") for j in jobs if isinstance(j, dict)}
    if len(groups) > 1:
        raise EngineError(
            f"fio output {source} reports {len(groups)} groups that ran one after another; iolab "
            "reads one group per round (all jobs side by side) and will not add up rates from "
            "different periods."
        )
    reads, writes, runtimes = [], [], []
    for i, job in enumerate(jobs):
        where = f"jobs[{i}]"
        err = f.num(job, "error", where)
        if err:
            raise EngineError(
                f"fio output {source}: job {job.get('jobname', i)!r} ended with error {int(err)} "
                f"({os.strerror(int(err)) if 0 < err < 200 else 'fio error code'}). See fio's stderr "
                "next to this file for the cause."
            )
        r, rt_r = _direction(f.get(job, "read", where), f, f"{where}.read", require_bins)
        w, rt_w = _direction(f.get(job, "write", where), f, f"{where}.write", require_bins)
        reads.append(r)
        writes.append(w)
        runtimes.append(max(rt_r, rt_w))
    read, write = _combine(reads), _combine(writes)
    if read.ios + write.ios == 0:
        raise EngineError(
            f"fio output {source}: fio completed no IO in this round, so there is nothing to "
            "measure. Check the target is reachable and the round is long enough."
        )
    return RoundResult(
        read=read,
        write=write,
        runtime_s=max(runtimes),
        counters=_cpu(jobs, f),
        engine="fio",
        engine_version=str(version),
    )


def _cpu(jobs: list, f: _Fields) -> dict[str, float]:
    """fio's CPU use of the round (usr_cpu/sys_cpu, % of one CPU per job, averaged over the
    job entries) as counters, which stored runs from before simply lack."""
    out = {}
    for key in ("usr_cpu", "sys_cpu"):
        if not all(key in j for j in jobs):
            continue
        vals = [f.num(j, key, f"jobs[{i}]") for i, j in enumerate(jobs)]
        if any(not math.isfinite(v) or v < 0 for v in vals):
            raise EngineError(
                f"fio output {f.source}: {key} {vals} is impossible (a CPU share below 0 or not a number)."
            )
        out[f"{key}_pct"] = sum(vals) / len(vals)
    return out


# ---------------------------------------------------------------------------------------
# Parsing fio's per-second logs
# ---------------------------------------------------------------------------------------


@dataclass
class _LogFile:
    kind: str  # iops | bw | lat
    job: int
    # (bucket, ddir) -> (time_ms, value); bucket k is the interval ending near k seconds
    points: dict[tuple[int, int], tuple[int, float]]

    def buckets(self) -> set[int]:
        return {k for k, _ in self.points}


def _read_log(path: Path, kind: str, job: int, interval_ms: int) -> _LogFile:
    """One fio log (`time_ms, value, ddir, bs, offset[, prio]` per line, one line per
    direction per interval with log_avg_msec).

    Samples are put in interval buckets per direction: bucket = floor(t / interval), but
    never the same bucket twice in a row. fio stamps an interval when it closes it: bw/iops
    a millisecond or so early or late, latency at the first completion after the boundary
    (late on slow devices), and a final partial interval at exit; "next bucket at least"
    absorbs all three without drift over long rounds.
    """
    points: dict[tuple[int, int], tuple[int, float]] = {}
    last: dict[int, int] = defaultdict(int)
    with fio_hist.log_lines(path, "fio log") as lines:
        for lineno, row in enumerate(csv.reader(lines, skipinitialspace=True), 1):
            if not row:
                continue
            try:
                t_ms, value, ddir = int(row[0]), float(row[1]), int(row[2])
            except (ValueError, IndexError):
                raise EngineError(
                    f"fio log {path}, line {lineno}: expected 'time, value, direction, ...', got "
                    f"{','.join(row)[:80]!r}. The log is damaged; rerun the round."
                ) from None
            if ddir not in (0, 1):
                continue  # trims and syncs are not part of a workload
            k = max(t_ms // interval_ms, last[ddir] + 1)
            last[ddir] = k
            points[(k, ddir)] = (t_ms, value)
    return _LogFile(kind, job, points)


def parse_fio_logs(
    paths: Iterable[Path],
    *,
    lat_per_us: float = 1000.0,
    interval_ms: int = LOG_INTERVAL_MS,
    maxima: dict[int, float] | None = None,
    totals: RoundResult | None = None,
) -> tuple[SecondSample, ...]:
    """The per-second series from fio's iops, bw and lat logs (one file per job each).

    A second is reported only when every job's iops and bw logs cover it, so a partial last
    interval or a job that logged late never shows up as a dip. IOPS and MB/s add over jobs;
    mean latency is the IOPS-weighted mean of the jobs' (total latency) lat log values.
    lat log values are in units of 1/lat_per_us µs: fio 3.x logs ns (1000), fio 2.x µs (1).
    With the round's `totals`, what they hold beyond the logged seconds is one more, partial,
    row (`tail_row`); a round of a whole interval or more of which fio logged none is that row
    alone (`whole_round`).
    """
    logs = []
    for p in paths:
        m = _LOG_RE.search(Path(p).name)
        if m and m.group(1) in ("iops", "bw", "lat"):
            logs.append(_read_log(Path(p), m.group(1), int(m.group(2)), interval_ms))
    iops = [lf for lf in logs if lf.kind == "iops"]
    bw = [lf for lf in logs if lf.kind == "bw"]
    lat = [lf for lf in logs if lf.kind == "lat"]
    if not iops or not bw:
        # no log with a line: a run keeps only non-empty raw files (load_round), so the audit,
        # deriving the series again from what the run kept, finds none where the run found empty ones
        return () if totals is None else tuple(whole_round(totals, maxima))
    complete = set.intersection(*(lf.buckets() for lf in iops + bw))
    iops_by_job = {lf.job: lf for lf in iops}
    out = []
    for k in sorted(complete):
        per_dir = [0.0, 0.0]
        t_ms = 0
        for lf in iops:
            for d in (0, 1):
                if (k, d) in lf.points:
                    t, v = lf.points[(k, d)]
                    per_dir[d] += v
                    t_ms = max(t_ms, t)
        kib_s = sum(lf.points[(k, d)][1] for lf in bw for d in (0, 1) if (k, d) in lf.points)
        num = den = 0.0
        for lf in lat:
            weights = iops_by_job.get(lf.job)
            for d in (0, 1):
                if (k, d) in lf.points and weights is not None and (k, d) in weights.points:
                    wgt = weights.points[(k, d)][1]
                    num += wgt * lf.points[(k, d)][1] / lat_per_us
                    den += wgt
        out.append(
            SecondSample(
                t_s=t_ms / 1000.0,
                read_iops=per_dir[0],
                write_iops=per_dir[1],
                mbps=kib_s * 1024 / 1e6,
                lat_mean_us=num / den if den > 0 else None,
                lat_max_us=(maxima or {}).get(k),  # fio_hist.maxima: same buckets
            )
        )
    if totals is not None and out:
        k = max(complete) + 1
        lat_k = [lf.points[(k, d)][1] / lat_per_us for lf in lat for d in (0, 1) if (k, d) in lf.points]
        tail = tail_row(out, totals, lat_k[0] if len(lat_k) == 1 else None, (maxima or {}).get(k))
        out += [tail] if tail else []
    elif totals is not None:
        out = whole_round(totals, maxima)
    return tuple(out)


def whole_round(totals: RoundResult, maxima: dict[int, float] | None) -> list[SecondSample]:
    """The series of a round whose iops and bw logs hold no line: its totals as one row, when it
    lasted a whole interval (a shorter one has no second to show).

    fio (3.33) adds an averaged iops or bw point only when its helper thread, ticking about once
    per `log_avg_msec`, finds a whole interval gone while the job still runs; the flush at the
    job's end writes only an interval that already holds such a point. A job of exactly one
    interval (a 1 s cell) ends at about 1,000 ms, and the tick comes at 1,000-1,025 ms: of 7 such
    jobs on one file, 2 run here and 3 through a fio server logged no line (a host's server starts
    the job apart from its helper's ticks), so a hosts run's 1 s cells often stored no
    per-second row. The row spans the whole round: its rates are the round's IOs and bytes over
    its runtime and its mean latency the round's own (the lat logs' lines each cover a part)."""
    if partial_row(totals.runtime_s):
        return []
    row = tail_row([], totals, totals.lat_mean_us, max(maxima.values()) if maxima else None)
    return [row] if row else []


TAIL_MIN_S = 0.05  # a shorter rest after the last logged second is the logs' own jitter


def tail_row(
    rows: list[SecondSample], totals: RoundResult, lat_mean_us: float | None, lat_max_us: float | None
) -> SecondSample | None:
    """The rest of a round after its last logged second, as one partial row.

    fio (3.33) writes no iops or bw log line for the interval its job ends in, so the IOs that
    completed after the last whole logged interval, the drain of a round that ran past its
    nominal time among them, were in no row. Here they are the row from the last logged
    second's end to the end of the round's runtime: the round's IOs and bytes less what the
    rows hold (each row's rate × its length), its rates over its own length. Its mean latency
    is the lat log's final line when one job logged one (fio does write that one), else
    unknown. Each logged rate is rounded to a whole IO (KiB) a second, so the rest is exact to
    within that; None when less than TAIL_MIN_S remains (fio's log stamps and its runtime
    differ by milliseconds) or nothing is left (under half an IO).
    """
    t0 = rows[-1].t_s if rows else 0.0
    span = totals.runtime_s - t0
    if span < TAIL_MIN_S:
        return None
    held = [0.0, 0.0, 0.0]  # read IOs, write IOs, bytes
    prev = 0.0
    for r in rows:
        dt, prev = r.t_s - prev, r.t_s
        held[0] += r.read_iops * dt
        held[1] += r.write_iops * dt
        held[2] += r.mbps * 1e6 * dt
    reads = max(0.0, totals.read.ios - held[0])
    writes = max(0.0, totals.write.ios - held[1])
    if reads + writes < 0.5:
        return None
    rest = max(0.0, totals.read.io_bytes + totals.write.io_bytes - held[2])
    return SecondSample(t0 + span, reads / span, writes / span, rest / span / 1e6, lat_mean_us, lat_max_us)


def log_files(raw_dir: Path, tag: str, names: Iterable[str] | None = None) -> list[Path]:
    """fio's log files for one round, in a stable order; `names`: the round's names
    (fio_hist.tagged) when the caller has listed them."""
    return fio_hist.matching(raw_dir, fio_hist.tagged(raw_dir, tag) if names is None else names, tag, _LOG_RE)


def load_round(raw_dir: Path, tag: str, *, require_bins: bool = True) -> RoundResult:
    """A complete `RoundResult` from a round's stored fio output (JSON, logs), with its raw
    files listed relative to the run directory (raw_dir's parent)."""
    json_path = raw_dir / f"{tag}.json"
    try:
        text = read_output(json_path)
    except FileNotFoundError:
        raise EngineError(f"fio output {json_path} does not exist: fio did not write a report.") from None
    except OSError as e:
        raise EngineError(f"fio output {json_path} cannot be read ({e.strerror or e}).") from None
    result = parse_fio_json(text, str(json_path), require_bins=require_bins)
    names = fio_hist.tagged(raw_dir, tag)  # one listing of the (large) raw directory for both
    logs = log_files(raw_dir, tag, names)
    lat_per_us = 1.0 if result.engine_version.startswith("fio-2.") else 1000.0
    hists = fio_hist.files(raw_dir, tag, names) if lat_per_us == 1000.0 else []  # fio 3.x bins
    maxima = fio_hist.maxima(hists, LOG_INTERVAL_MS)
    series = parse_fio_logs(logs, lat_per_us=lat_per_us, maxima=maxima, totals=result)
    run_dir = raw_dir.parent
    raw = [raw_dir / f"{tag}.fio", json_path, raw_dir / f"{tag}.stderr", *logs, *hists]
    rel = tuple(str(p.relative_to(run_dir)) for p in raw if p.exists() and p.stat().st_size > 0)
    return replace(result, series=series, raw_files=rel)
