"""The fio engine: turns a `Workload` into a fio job file, runs fio on a real target (block
device, file or NBD export) and reads fio's JSON+ output and per-second logs back into a
`RoundResult`.

Three parts, top to bottom:

- job generation (`FioEngine.job_text`): one fio job section per access pattern (RND, SEQ);
  inside a section, read % and per-direction block-size splits are exact fio options.
- running (`FioEngine.run`): fio is a child in its own session, so Ctrl-C reaches iolab only
  and iolab stops fio on purpose; live IOPS come from fio's periodic JSON status reports.
- parsing (`parse_fio_json`, `parse_fio_logs`): pure functions on fio's output, so unit
  tests can feed recorded files. Two JSON shapes are read: fio 3.x (ns fields, `bw_bytes`)
  and fio 2.x (µs fields, KiB units). A field iolab uses that is missing is an error naming
  the field and the file, never a silent zero.
"""

from __future__ import annotations

import codecs
import csv
import json
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from ..errors import EngineError, IolabError
from ..results import Histogram, OpStats, RoundResult, SecondSample
from ..targets import PurgeOutcome, Target
from ..workload import Stream, Workload
from . import fio_hist

Progress = Callable[[float, float], None]

LOG_INTERVAL_MS = 1000  # one point per second in the per-second series
# Sleep (µs) of a job that is ahead of its `flow` share. With the default 0 fio busy-spins
# the blocked job, which starves the other jobs on small machines (measured: 2 cores, 4 jobs
# lost >90 % of their IOPS); 20 µs keeps the proportions and costs almost nothing.
FLOW_SLEEP_US = 20
_TAG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_LOG_RE = re.compile(r"_(iops|bw|lat|clat|slat)\.(\d+)\.log$")


# ---------------------------------------------------------------------------------------
# fio itself: version and the best async IO engine on this host
# ---------------------------------------------------------------------------------------


def _fio_missing(fio: str) -> EngineError:
    return EngineError(
        f"fio was not found (looked for {fio!r} on PATH). iolab drives real targets through "
        "fio: install it (Debian/Ubuntu: apt install fio; Fedora: dnf install fio) or point "
        "iolab at the binary."
    )


@lru_cache(maxsize=None)
def _fio_version(fio: str) -> str:
    try:
        out = subprocess.run([fio, "--version"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise _fio_missing(fio) from None
    except subprocess.TimeoutExpired:
        raise EngineError(f"`{fio} --version` did not answer within 30 s (it was stopped). Check the fio installation.") from None
    version = out.stdout.strip()
    if out.returncode != 0 or not version.startswith("fio-"):
        raise EngineError(
            f"`{fio} --version` did not print a fio version (exit {out.returncode}, output "
            f"{(out.stdout + out.stderr).strip()[-200:]!r}). Check the fio installation."
        )
    return version


@lru_cache(maxsize=None)
def _async_ioengine(fio: str) -> str:
    """'io_uring' if a tiny fio run with it succeeds on this host, else 'libaio'.

    io_uring can be compiled in yet unusable (old kernel, seccomp in containers,
    io_uring_disabled sysctl), so we ask the kernel rather than the version number. The probe
    uses buffered IO on a temp file because /tmp may be tmpfs, which refuses O_DIRECT.
    """
    with tempfile.TemporaryDirectory(prefix="iolab-fio-probe-") as tmp:
        cmd = [fio, "--name=probe", f"--filename={tmp}/probe", "--size=64k", "--io_size=4k",
               "--bs=4k", "--rw=read", "--ioengine=io_uring", "--output-format=json"]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            raise _fio_missing(fio) from None
        except subprocess.TimeoutExpired:
            return "libaio"
        try:
            job = json.loads(out.stdout)["jobs"][0]
            ok = out.returncode == 0 and job["error"] == 0 and job["read"]["total_ios"] == 1
        except (ValueError, KeyError, IndexError, TypeError):
            ok = False
    return "io_uring" if ok else "libaio"


# ---------------------------------------------------------------------------------------
# Job generation
# ---------------------------------------------------------------------------------------


def _apportion(total: int, weights: list[float]) -> list[int]:
    """Split `total` into one integer ≥ 1 per weight, proportional to the weights, summing to
    `total` exactly (largest remainder). Needs total ≥ len(weights)."""
    wsum = sum(weights)
    raw = [total * w / wsum for w in weights]
    out = [max(1, int(r)) for r in raw]
    while sum(out) > total:
        i = max((i for i in range(len(out)) if out[i] > 1), key=lambda i: out[i] - raw[i])
        out[i] -= 1
    while sum(out) < total:
        i = max(range(len(out)), key=lambda i: raw[i] - out[i])
        out[i] += 1
    return out


def _split_text(streams: list[Stream]) -> str:
    """fio bssplit for one direction: 'bs/pct:bs/pct', percentages to 0.01 summing to 100."""
    by_bs: dict[int, float] = defaultdict(float)
    for s in streams:
        by_bs[s.block_size] += s.share
    sizes = sorted(by_bs)
    units = _apportion(10_000, [by_bs[b] for b in sizes])
    return ":".join(f"{b}/{u / 100:g}" for b, u in zip(sizes, units))


def _escape_filename(path: str) -> str:
    # fio splits `filename` on ':' (several files); a literal colon must be escaped.
    return path.replace(":", "\\:")


@dataclass(frozen=True)
class _Section:
    """One fio job section: the streams of one access pattern and their slice of the load."""

    access: str
    streams: tuple[Stream, ...]
    share: float  # this section's share of all IOs
    numjobs: int
    iodepth: int

    def by_op(self, op: str) -> list[Stream]:
        return [s for s in self.streams if s.op == op]

    @property
    def max_bs(self) -> int:
        return max(s.block_size for s in self.streams)

    @property
    def bytes_per_io(self) -> float:
        """Mean bytes per IO of this section, weighted by the streams' shares."""
        return sum(s.share * s.block_size for s in self.streams) / self.share


def _sections(w: Workload) -> tuple[list[_Section], str | None]:
    """Group streams by access pattern and split the outstanding IO between the groups.

    One fio job expresses any mix of read/write and block sizes exactly (rwmixread plus a
    per-direction bssplit), but not a mix of random and sequential streams with their joint
    shares, so each access pattern gets its own section. Returns the sections and, when the
    requested outstanding IO cannot be split (fewer IOs in flight than sections), a note for
    the job file saying what was run instead.
    """
    groups: dict[str, list[Stream]] = {}
    for s in w.streams:
        groups.setdefault(s.access, []).append(s)
    accesses = sorted(groups, key=lambda a: a != "rnd")  # rnd first: stable section order
    shares = [sum(s.share for s in groups[a]) for a in accesses]
    n = len(accesses)
    note = None
    if n == 1:
        jobs, depths = [w.threads], [w.queue_depth]
    elif w.queue_depth >= n:
        jobs, depths = [w.threads] * n, _apportion(w.queue_depth, shares)
    elif w.threads >= n:
        jobs, depths = _apportion(w.threads, shares), [w.queue_depth] * n
    else:
        jobs, depths = [w.threads] * n, [1] * n
        note = (f"outstanding IO raised from {w.outstanding} to {sum(j * d for j, d in zip(jobs, depths))}: "
                "each access pattern needs at least one IO in flight")
    secs = [_Section(a, tuple(groups[a]), sh, j, d) for a, sh, j, d in zip(accesses, shares, jobs, depths)]
    return secs, note


def _rw(section: _Section) -> str:
    reads, writes = bool(section.by_op("read")), bool(section.by_op("write"))
    if section.access == "rnd":
        return "randrw" if reads and writes else "randread" if reads else "randwrite"
    return "rw" if reads and writes else "read" if reads else "write"


def _block_sizes(section: _Section) -> str:
    """`bs=` when each direction has one block size, else a per-direction `bssplit=`."""
    reads, writes = section.by_op("read"), section.by_op("write")
    present = [ss for ss in (reads, writes) if ss]
    if all(len({s.block_size for s in ss}) == 1 for ss in present):
        sizes = [str(ss[0].block_size) for ss in present]
        if len(sizes) == 2 and sizes[0] == sizes[1]:
            sizes = sizes[:1]
        return "bs=" + ",".join(sizes)
    # With one direction present, its split alone is given (fio applies it to all).
    return "bssplit=" + ",".join(_split_text(ss) for ss in present)


def build_job(target: Target, w: Workload, tag: str, ioengine: str) -> str:
    """The fio job file for one round. `ioengine` is the async engine for block devices and
    files (NBD targets always use fio's nbd engine). Logs and output paths are relative: fio
    runs in the round's raw directory, where this file is stored."""
    if not _TAG_RE.match(tag):
        raise IolabError(
            f"round tag {tag!r} cannot name fio's output files: use letters, digits, '.', '_' "
            "and '-' only, starting with a letter or digit."
        )
    if target.kind not in ("block", "file", "nbd"):
        raise EngineError(
            f"the fio engine drives block devices, files and NBD exports, not a {target.kind!r} "
            f"target ({target.spec}). Simulated targets run on the sim engine."
        )
    sections, note = _sections(w)
    max_bs = max(s.block_size for s in w.streams)
    size = int(w.active_range * target.capacity) // max_bs * max_bs
    if size < max_bs:
        raise IolabError(
            f"workload {w.label()!r}: the active range ({w.active_range:g} of {target.capacity} B "
            f"on {target.spec}) is smaller than one {max_bs} B block. Use a larger target or range."
        )

    head = [
        f"; iolab round {tag}: {w.label()} on {target.spec}",
        f"; outstanding IO {w.threads} thread(s) x QD {w.queue_depth}, active range {w.active_range:g}"
        f" ({size} B from offset 0), entropy {w.entropy:g}",
        f"; run by hand from this directory: fio --output-format=json+ --output={tag}.json {tag}.fio",
    ]
    if note:
        head.append(f"; note: {note}")
    g = ["[global]"]
    if target.kind == "nbd":
        g += ["ioengine=nbd", f"uri={target.path}"]
    else:
        g += [f"ioengine={ioengine}", f"filename={_escape_filename(target.path)}"]
    g += [
        "direct=1",
        f"size={size}",
        "group_reporting=1",
        # Uniform random with replacement over the whole range, as the PTS asks; fio's random
        # map (touch each block once per pass) also costs memory on large drives.
        "norandommap=1",
        # The 32-bit default generator cannot address every block of drives > 16 TiB at 4 KiB.
        "random_generator=tausworthe64",
        f"randseed={w.seed_for(tag)}",
        # json+ bins of total latency (submission + completion), so percentiles describe the
        # same latency as the mean and the maximum.
        "lat_percentiles=1",
    ]
    if w.duration_s is not None:
        # fio takes ms, so sub-second cells (quick profiles) are exact.
        runtime_ms = max(1, round(w.duration_s * 1000))
        g += [f"runtime={runtime_ms}ms"]
        if w.bytes_budget is None:
            g += ["time_based=1"]
    if w.ramp_s > 0:
        # fio runs the warm-up first and resets its statistics after it (logs too), so
        # nothing of it enters the JSON; runtime counts from the end of the warm-up.
        g += [f"ramp_time={max(1, round(w.ramp_s * 1000))}ms"]
    if any(s.op == "write" for s in w.streams):
        # refill_buffers: fresh data for every write, so a drive that dedupes or compresses
        # sees what `entropy` says. Reads never use these buffers.
        g += ["refill_buffers=1"]
        compress = round((1 - w.entropy) * 100)
        if compress > 0:
            g += [f"buffer_compress_percentage={compress}"]
    g += [f"write_iops_log={tag}", f"write_bw_log={tag}", f"write_lat_log={tag}",
          f"log_avg_msec={LOG_INTERVAL_MS}"]
    if w.max_per_second:
        g += [f"write_hist_log={tag}", f"log_hist_msec={LOG_INTERVAL_MS}"]

    body: list[str] = []
    planned_bytes = 0
    # fio's flow weights are integers up to 1000.
    weights = _apportion(1000, [s.share for s in sections]) if len(sections) > 1 else []
    for i, sec in enumerate(sections):
        lines = ["", f"[{sec.access}]", f"rw={_rw(sec)}"]
        reads = sum(s.share for s in sec.by_op("read"))
        if sec.by_op("read") and sec.by_op("write"):
            # fio takes whole percent; keep both directions present when both are asked for.
            lines.append(f"rwmixread={min(99, max(1, round(100 * reads / sec.share)))}")
        lines += [_block_sizes(sec), f"numjobs={sec.numjobs}", f"iodepth={sec.iodepth}"]
        if sec.access == "seq" and sec.numjobs > 1:
            # Each sequential thread streams its own slice instead of all re-reading block 0.
            per_job = size // sec.numjobs // sec.max_bs * sec.max_bs
            if per_job >= sec.max_bs:
                lines += [f"size={per_job}", f"offset_increment={per_job}"]
        if w.bytes_budget is not None:
            total_bpi = sum(s.share * s.block_size for s in w.streams)
            part = w.bytes_budget * sec.share * sec.bytes_per_io / total_bpi
            # Whole blocks per job (at least one), so fio stops exactly at io_size.
            per_job = max(sec.max_bs, int(part / sec.numjobs) // sec.max_bs * sec.max_bs)
            lines.append(f"io_size={per_job}")
            planned_bytes += per_job * sec.numjobs
        if w.rate_iops is not None:
            lines.append("rate_iops=" + _rate_text(w, sec))
        if len(sections) > 1:
            # IO proportions between sections follow the stream shares (fio counts IOs).
            lines += [f"flow={weights[i]}", f"flow_sleep={FLOW_SLEEP_US}"]
        body += lines
    if w.bytes_budget is not None and planned_bytes != w.bytes_budget:
        head.append(f"; note: byte budget {w.bytes_budget} B rounded to whole blocks per job: {planned_bytes} B")
    return "\n".join(head + g + body) + "\n"


def _rate_text(w: Workload, sec: _Section) -> str:
    """Per-job, per-direction IOPS caps ('r,w') that add up to the workload's rate."""
    assert w.rate_iops is not None
    parts = []
    for op in ("read", "write"):
        share = sum(s.share for s in sec.by_op(op))
        if share == 0:
            parts.append("")
            continue
        per_job = w.rate_iops * share / sec.numjobs
        if per_job < 1:
            raise IolabError(
                f"workload {w.label()!r}: a rate of {w.rate_iops} IOPS leaves {per_job:.2f} IOPS "
                f"per fio job for {op}s ({sec.numjobs} jobs), and fio caps rates in whole IOPS. "
                "Use fewer threads or a higher rate."
            )
        parts.append(str(round(per_job)))
    return ",".join(parts).rstrip(",")


# ---------------------------------------------------------------------------------------
# Parsing fio's JSON output
# ---------------------------------------------------------------------------------------


def _json_objects(text: str) -> tuple[list[dict], list[str]]:
    """All top-level JSON objects in `text` (fio writes one per status report, the final
    report last) and the non-JSON lines fio may print around them (warnings)."""
    dec = json.JSONDecoder()
    objs, other = [], []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        if text[i] == "{":
            try:
                obj, i = dec.raw_decode(text, i)
                objs.append(obj)
                continue
            except json.JSONDecodeError:
                pass  # a truncated object: keep the rest as text for the error message
        end = text.find("\n", i)
        end = n if end < 0 else end
        other.append(text[i:end])
        i = end + 1
    return objs, other


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
            items = [(fio_hist.bin_value(int(k), bits, val), int(c)) for k, c in bins.items() if not k.startswith("FIO_")]
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
    ios = int(fields.num(d, "total_ios", where))
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
    hists = [p.histogram for p in live]
    return OpStats(
        ios=ios,
        io_bytes=sum(p.io_bytes for p in live),
        iops=sum(p.iops for p in live),
        mbps=sum(p.mbps for p in live),
        lat_mean_us=sum(p.ios * p.lat_mean_us for p in live) / ios,  # type: ignore[operator]
        lat_max_us=max(p.lat_max_us for p in live),  # type: ignore[type-var]
        lat_min_us=min(p.lat_min_us for p in live),  # type: ignore[type-var]
        histogram=Histogram.merge(hists) if all(h is not None for h in hists) else None,  # type: ignore[arg-type]
        latency=live[0].latency,  # one fio run: every job has the same latency options
    )


def parse_fio_json(text: str, source: str, *, require_bins: bool = True) -> RoundResult:
    """A `RoundResult` (no series, no raw files yet) from fio's JSON output.

    `text` may hold several JSON objects (periodic status reports); the last is the final
    report. `source` names the file in error messages. With `require_bins` the json+
    latency bins must be there (iolab always asks for them); without, a direction lacking
    them gets no histogram rather than an invented one.
    """
    objs, other = _json_objects(text)
    if not objs:
        tail = " | ".join(other[-5:])[-400:]
        raise EngineError(
            f"fio output {source} holds no JSON report (fio failed before writing one?). "
            f"Its text ends with: {tail or '(empty file)'}"
        )
    report = objs[-1]
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
    return RoundResult(read=read, write=write, runtime_s=max(runtimes), engine="fio", engine_version=str(version))


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
    with open(path, newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh, skipinitialspace=True), 1):
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


def parse_fio_logs(paths: Iterable[Path], *, lat_per_us: float = 1000.0, interval_ms: int = LOG_INTERVAL_MS,
                   maxima: dict[int, float] | None = None) -> tuple[SecondSample, ...]:
    """The per-second series from fio's iops, bw and lat logs (one file per job each).

    A second is reported only when every job's iops and bw logs cover it, so a partial last
    interval or a job that logged late never shows up as a dip. IOPS and MB/s add over jobs;
    mean latency is the IOPS-weighted mean of the jobs' (total latency) lat log values.
    lat log values are in units of 1/lat_per_us µs: fio 3.x logs ns (1000), fio 2.x µs (1).
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
        return ()
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
        out.append(SecondSample(
            t_s=t_ms / 1000.0,
            read_iops=per_dir[0],
            write_iops=per_dir[1],
            mbps=kib_s * 1024 / 1e6,
            lat_mean_us=num / den if den > 0 else None,
            lat_max_us=(maxima or {}).get(k),  # fio_hist.maxima: same buckets
        ))
    return tuple(out)


def log_files(raw_dir: Path, tag: str) -> list[Path]:
    """fio's log files for one round, in a stable order."""
    pat = re.compile(re.escape(tag) + _LOG_RE.pattern)
    return sorted(p for p in raw_dir.iterdir() if pat.fullmatch(p.name))


def load_round(raw_dir: Path, tag: str, *, require_bins: bool = True) -> RoundResult:
    """A complete `RoundResult` from a round's stored fio output (JSON, logs), with its raw
    files listed relative to the run directory (raw_dir's parent)."""
    json_path = raw_dir / f"{tag}.json"
    try:
        text = json_path.read_text(errors="replace")
    except FileNotFoundError:
        raise EngineError(f"fio output {json_path} does not exist: fio did not write a report.") from None
    result = parse_fio_json(text, str(json_path), require_bins=require_bins)
    logs = log_files(raw_dir, tag)
    lat_per_us = 1.0 if result.engine_version.startswith("fio-2.") else 1000.0
    hists = fio_hist.files(raw_dir, tag) if lat_per_us == 1000.0 else []  # fio 3.x bins
    series = parse_fio_logs(logs, lat_per_us=lat_per_us, maxima=fio_hist.maxima(hists, LOG_INTERVAL_MS))
    run_dir = raw_dir.parent
    raw = [raw_dir / f"{tag}.fio", json_path, raw_dir / f"{tag}.stderr", *logs, *hists]
    rel = tuple(str(p.relative_to(run_dir)) for p in raw if p.exists() and p.stat().st_size > 0)
    return replace(result, series=series, raw_files=rel)


# ---------------------------------------------------------------------------------------
# Running fio
# ---------------------------------------------------------------------------------------


class _ReportStream:
    """Splits fio's stdout into its JSON reports as they arrive.

    With --status-interval fio prints a full json+ report every second and the final report
    last. Only the final one is stored (a json+ report is 25-120 KB: keeping one per second
    would store gigabytes per PTS run); the others feed live progress. Text that is not
    JSON (e.g. "fio: connected to NBD server") is kept for fio's console file.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._json = json.JSONDecoder()
        self._buf = ""
        self.final_text: str | None = None  # the last complete report, exactly as printed
        self.notes: list[str] = []
        self._prev_ios = 0
        self._prev_ms = 0.0
        self.ios = 0  # most IOs any report so far counted: the watchdog's sign of progress

    def feed(self, data: bytes) -> list[tuple[float, float]]:
        """Consume stdout bytes; return (elapsed s, IOPS since the previous report) for
        each complete report."""
        self._buf += self._decoder.decode(data)
        points = []
        while True:
            start = self._buf.find("{")
            if start < 0:
                self._keep_note(self._buf)
                self._buf = ""
                break
            if start:
                self._keep_note(self._buf[:start])
                self._buf = self._buf[start:]
            try:
                obj, end = self._json.raw_decode(self._buf)
            except json.JSONDecodeError:
                break  # incomplete: wait for the rest
            self.final_text = self._buf[:end]
            self._buf = self._buf[end:]
            point = self._point(obj)
            if point:
                points.append(point)
        return points

    def close(self) -> None:
        self._keep_note(self._buf + self._decoder.decode(b"", final=True))
        self._buf = ""

    def _keep_note(self, text: str) -> None:
        if text.strip():
            self.notes.append(text.strip())

    def _point(self, obj: dict) -> tuple[float, float] | None:
        try:
            jobs = obj["jobs"]
            ios = sum(j[d]["total_ios"] for j in jobs for d in ("read", "write"))
            ms = max(j[d]["runtime"] for j in jobs for d in ("read", "write"))
        except (KeyError, TypeError, ValueError):
            return None  # live progress is best effort; the final report is validated
        if isinstance(ios, int) and ios > self.ios:
            self.ios = ios
        if ms <= self._prev_ms:
            return None
        iops = (ios - self._prev_ios) / ((ms - self._prev_ms) / 1000.0)
        self._prev_ios, self._prev_ms = ios, ms
        return ms / 1000.0, iops


def _job_processes(pid: int) -> list[int]:
    """fio's job processes (its children). Each calls setsid(), so signalling fio's process
    group does not reach them."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat_line = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat_line.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry))
    return kids


def _wait_draining(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait for fio to exit while discarding its stdout: a stopping fio prints its final
    report, and with nobody reading, a full pipe would block it forever."""
    fd = proc.stdout.fileno()  # type: ignore[union-attr]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return True
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready and not os.read(fd, 1 << 20):
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                return True
            except subprocess.TimeoutExpired:
                return False
    return proc.poll() is not None


def _stop(proc: subprocess.Popen) -> None:
    """Stop fio the way Ctrl-C in a terminal would (SIGINT: fio tells its jobs to stop and
    prints its report), escalating if it does not exit; a second Ctrl-C while waiting goes
    straight to SIGKILL of fio and its job processes."""
    try:
        for sig, wait_s in ((signal.SIGINT, 15.0), (signal.SIGTERM, 5.0)):
            if proc.poll() is not None:
                return
            proc.send_signal(sig)
            if _wait_draining(proc, wait_s):
                return
    except KeyboardInterrupt:
        pass
    _kill(proc)


KILL_WAIT_S = 10.0


def _kill(proc: subprocess.Popen) -> bool:
    """SIGKILL fio's process group and its job processes (each in its own session, so the
    group does not reach them). False if fio is still there after KILL_WAIT_S: a process
    blocked in the kernel (a dead block device) cannot die until its IO returns, and iolab
    must not hang waiting for it."""
    if proc.poll() is not None:
        return True
    jobs = _job_processes(proc.pid)  # before fio dies: orphans lose the parent link
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in [*jobs, proc.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=KILL_WAIT_S)
        return True
    except subprocess.TimeoutExpired:
        return False


def default_stall_timeout(workload: Workload) -> float:
    """How long fio may complete no IO before the watchdog stops it: 3 × the cell time, at
    least MIN_STALL_S (a round without a duration, e.g. byte-budget preconditioning, gets the
    minimum). Per-second status reports make progress visible every second, so this only
    has to absorb a slow start or a drive's own pauses."""
    return max(MIN_STALL_S, 3.0 * (workload.duration_s or 0.0))


MIN_STALL_S = 30.0


class _Stalled(Exception):
    """fio completed no IO (or did not exit) for the stall timeout."""

    def __init__(self, seconds: float, what: str):
        super().__init__(what)
        self.seconds, self.what = seconds, what  # seconds: the timeout that ran out


class FioEngine:
    """Runs workloads on block devices, files and NBD exports through fio."""

    name = "fio"

    def __init__(self, fio: str = "fio", stall_timeout: float | None = None):
        """`stall_timeout`: seconds without a completed IO before a round is stopped and
        failed (default: `default_stall_timeout` of each round's workload)."""
        from . import check_stall_timeout  # the package imports this module lazily: no cycle

        check_stall_timeout(stall_timeout)
        self.fio = fio
        self.stall_timeout = stall_timeout

    # -- protocol -------------------------------------------------------------------------
    def version(self) -> str:
        return _fio_version(self.fio)

    def prepare(self, target: Target) -> None:
        """Files: created, or extended, to the target's capacity with space allocated, by
        targets.prepare_file (which never shrinks or overwrites data). Block devices and NBD
        exports need nothing."""
        if target.kind == "file":
            from ..targets import prepare_file  # lazy: targets owns file creation and marking

            prepare_file(target)

    def purge(self, target: Target, method: str) -> PurgeOutcome:
        from ..targets import purge  # lazy: targets owns purge methods and safety checks

        return purge(target, method)

    def set_write_cache(self, target: Target, enabled: bool) -> str:
        from ..targets import set_write_cache

        return set_write_cache(target, enabled)

    def job_text(self, target: Target, workload: Workload, tag: str) -> str:
        engine = "nbd" if target.kind == "nbd" else _async_ioengine(self.fio)
        return build_job(target, workload, tag, engine)

    def run(self, target: Target, workload: Workload, raw_dir: Path, tag: str,
            progress: Progress | None = None) -> RoundResult:
        """Run one round. Raw output: raw_dir/<tag>.fio (the job), <tag>.json (fio's final
        json+ report), <tag>.stderr (what fio said besides JSON) and fio's logs
        <tag>_{iops,bw,lat,clat,slat}.N.log. Ctrl-C stops fio and re-raises. A round in
        which fio completes no IO for the stall timeout is killed and fails (EngineError);
        the last status report fio printed is kept as <tag>.stalled.txt."""
        raw_dir = Path(raw_dir)
        raw_dir.mkdir(parents=True, exist_ok=True)
        text = self.job_text(target, workload, tag)
        _check_path(target)
        existing = [p.name for p in raw_dir.iterdir() if p.name.startswith((f"{tag}.", f"{tag}_"))]
        if existing:
            raise EngineError(
                f"raw output of round {tag!r} already exists in {raw_dir} ({', '.join(sorted(existing)[:3])}"
                f"{', ...' if len(existing) > 3 else ''}). iolab never overwrites stored output: "
                "use a new round tag or move the old files away."
            )
        job = raw_dir / f"{tag}.fio"
        job.write_text(text)
        err_path = raw_dir / f"{tag}.stderr"
        # The report comes on stdout (not --output) so periodic status reports can be read
        # live and dropped; only the final one is written to <tag>.json. They are asked for
        # even without a progress display: the stall watchdog needs them.
        cmd = [self.fio, "--output-format=json+", "--status-interval=1", job.name]
        stall_s = self.stall_timeout if self.stall_timeout is not None else default_stall_timeout(workload)
        stalled: _Stalled | None = None
        killed = True
        # If iolab dies without a chance to stop fio (SIGKILL), the kernel sends fio SIGTERM:
        # a byte-budget round has no runtime cap and would otherwise go on writing.
        setpriv = shutil.which("setpriv")
        if setpriv:
            cmd = [setpriv, "--pdeathsig", "TERM", *cmd]
        reports = _ReportStream()
        with open(err_path, "ab") as err:
            try:
                # Own session: a terminal's Ctrl-C reaches iolab only, which then stops fio
                # once, on purpose, and knows the round was interrupted.
                # restore_signals=False: fio inherits Python's ignored SIGPIPE. If iolab dies,
                # fio's "terminating on signal" message then fails with EPIPE instead of
                # killing fio before it has told its job processes to stop (they would run on,
                # orphaned, to the end of the round).
                proc = subprocess.Popen(cmd, cwd=raw_dir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=err, start_new_session=True, restore_signals=False)
            except FileNotFoundError:
                raise _fio_missing(self.fio) from None
            try:
                _pump(proc, reports, progress, stall_s)
            except _Stalled as e:
                stalled = e
                killed = _kill(proc)  # no polite stop: a stuck fio may never act on SIGINT
            except BaseException:
                _stop(proc)
                raise
            finally:
                proc.stdout.close()  # type: ignore[union-attr]
                reports.close()
                if reports.notes:
                    err.write(("\n".join(reports.notes) + "\n").encode())
        if stalled is not None:
            raise _stall_error(stalled, target, tag, job, raw_dir, reports, proc, killed, err_path)
        if reports.final_text is not None:
            (raw_dir / f"{tag}.json").write_text(reports.final_text + "\n")
        if proc.returncode != 0:
            raise EngineError(
                f"fio failed on round {tag!r} (exit {proc.returncode}; job file {job}). "
                f"fio said: {_tail(err_path) or '(nothing)'}"
            )
        try:
            result = load_round(raw_dir, tag)
        except EngineError as e:
            tail = _tail(err_path)
            raise EngineError(f"{e} Job file: {job}." + (f" fio said: {tail}" if tail else "")) from None
        if progress is not None:
            progress(result.runtime_s, result.iops)
        return result

    def close(self) -> None:
        pass  # fio runs are self-contained; nothing stays up between rounds


def _check_path(target: Target) -> None:
    """fio quietly creates a regular file where a block device or file is missing (even in
    /dev), so a typo would be 'measured' as a fresh file in the page cache. Refuse instead."""
    if target.kind == "nbd":
        return
    try:
        mode = os.stat(target.path).st_mode
    except FileNotFoundError:
        what = "block device" if target.kind == "block" else "file (prepare() creates it)"
        raise EngineError(f"target {target.spec}: {target.path} does not exist; expected a {what}.") from None
    if target.kind == "block" and not stat.S_ISBLK(mode):
        raise EngineError(f"target {target.spec}: {target.path} is not a block device.")
    if target.kind == "file" and not stat.S_ISREG(mode):
        raise EngineError(f"target {target.spec}: {target.path} is not a regular file.")


def _pump(proc: subprocess.Popen, reports: _ReportStream, progress: Progress | None, stall_s: float) -> None:
    """Drain fio's stdout as it comes (a full pipe would stall fio's status output) until
    fio closes it and exits. Raises _Stalled when no report shows a new completed IO for
    `stall_s` seconds (a frozen server, a hung device, a fio printing nothing), or when fio
    closes its output but does not exit within that time."""
    fd = proc.stdout.fileno()  # type: ignore[union-attr]
    last_ios, last_progress = 0, time.monotonic()
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            data = os.read(fd, 1 << 20)
            if not data:
                break
            for elapsed, iops in reports.feed(data):
                if progress is not None:
                    progress(elapsed, iops)
            if reports.ios > last_ios:
                last_ios, last_progress = reports.ios, time.monotonic()
        idle = time.monotonic() - last_progress
        if idle >= stall_s:
            raise _Stalled(stall_s, "completed no IO" if last_ios == 0 else f"completed no IO after its first {last_ios:,}")
    try:
        proc.wait(timeout=max(1.0, stall_s - (time.monotonic() - last_progress)))
    except subprocess.TimeoutExpired:
        raise _Stalled(stall_s, "closed its output but did not exit") from None


def _stall_error(stalled: _Stalled, target: Target, tag: str, job: Path, raw_dir: Path, reports: _ReportStream,
                 proc: subprocess.Popen, killed: bool, err_path: Path) -> EngineError:
    kept = ""
    if reports.final_text is not None:
        path = raw_dir / f"{tag}.stalled.txt"
        path.write_text(reports.final_text + "\n")
        kept = f" fio's last status report is kept in {path}."
    fate = ("fio and its job processes were killed" if killed else
            f"fio (pid {proc.pid}) did not die within {KILL_WAIT_S:g} s of SIGKILL (stuck in the kernel?) and was left behind")
    tail = _tail(err_path)
    return EngineError(
        f"no progress for {stalled.seconds:g} s on {target.spec}: fio {stalled.what} (round {tag!r}, job file {job}); "
        f"{fate}. The round is not stored; finished rounds are kept.{kept}"
        + (f" fio said: {tail.rstrip('.')}." if tail else "")
        + " If the target is just this slow, raise --stall-timeout."
    )


def _tail(path: Path, lines: int = 12) -> str:
    try:
        text = path.read_text(errors="replace").strip()
    except FileNotFoundError:
        return ""
    return " | ".join(text.splitlines()[-lines:])[-1500:]

