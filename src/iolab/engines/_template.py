"""The template of an engine: copy this file to `engines/<name>.py` to start a new one.

An engine runs one workload on one target for one measurement period and returns what it
measured as a `RoundResult`; it never knows which test, phase or round it serves. This one is
as small as a real engine can be: one thread issuing synchronous reads and writes on a file
target (queue depth 1, direct IO where the filesystem allows it), timing each IO. To make it a
real engine:

1. declare what it can do in `capabilities` (the runner, resume and the suites ask these
   flags, never the engine's name) and give it a `name`;
2. implement every method of the `Engine` protocol (`engines/__init__.py`);
3. refuse in `run` (here `_refuse_unsupported`) every part of a workload it cannot carry out as asked (here: more than
   one outstanding IO, a rate, zones, a warm-up): a figure measured under other conditions
   than the plan says is a wrong figure;
4. add `"iolab.engines.<name>:<Class>"` to `ENGINES`, before any engine that drives the same
   kinds and should lose to it.

It is not in `ENGINES`, so no run uses it; `tests/unit/test_templates.py` puts it first for
one run on a file and checks its figures against the IOs it logged.
"""

from __future__ import annotations

import mmap
import os
import platform
import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from iolab.core.errors import EngineError, IolabError
from iolab.core.results import Histogram, OpStats, RoundResult, SecondSample
from iolab.core.workload import Workload
from iolab.engines.capabilities import Capabilities
from iolab.targets import PURGE_METHODS, PurgeOutcome, Target


class TemplateEngine:
    name = "template"
    capabilities = Capabilities(
        drives=("file",),  # Target.kind values; engine_for picks the first engine in ENGINES that drives one
        idle=True,  # `idle` sleeps in wall time
        trim=False,  # it issues no discards
        purge_methods=tuple(m for m in PURGE_METHODS if m != "none"),  # carried out by the target kind's hook
        write_cache=False,  # it cannot switch a cache: set_write_cache only says so
        replay_timestamps=False,
        remote_targets=False,  # the target is this machine's: the run reads its facts and identity here
        claims_targets=False,  # the run's start claims the target and checks it is safe to write
        virtual_time=False,  # wall-clock time: idles and budgets cost real seconds
        keeps_state=True,  # the file outlives the process, so `iolab resume` can continue a phase
    )

    def __init__(self, stall_timeout: float | None = None):
        # A synchronous IO cannot be abandoned from this thread, so a stalled device stalls the
        # round; an engine that can stop its IO would honour `stall_timeout` (see fio_supervise).
        self.stall_timeout = stall_timeout

    def version(self) -> str:
        return f"template-{platform.python_version()}"

    def prepare(self, target: Target) -> None:
        from iolab.targets import prepare_file  # targets owns file creation, sizing and marking

        prepare_file(target)

    def purge(self, target: Target, method: str) -> PurgeOutcome:
        from iolab.targets import purge

        return purge(target, method)

    def set_write_cache(self, target: Target, enabled: bool) -> str:
        return "not switched: the template engine has no write-cache control"

    def idle(self, target: Target, seconds: float) -> None:
        if seconds < 0:
            raise IolabError(f"idle time {seconds} s must not be negative")
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(left, 0.5))  # short steps keep Ctrl-C prompt

    def job_text(self, target: Target, workload: Workload, tag: str) -> str:
        streams = ", ".join(f"{s.label()} {s.share:.0%}" for s in workload.streams)
        budget = f"{workload.duration_s:g} s" if workload.duration_s else f"{workload.bytes_budget} bytes"
        return f"# template engine, {tag}\nsynchronous IO on {target.path}: {streams}; {budget}\n"

    def close(self) -> None:
        pass

    # -- one measurement period -------------------------------------------------------------

    def run(
        self,
        target: Target,
        workload: Workload,
        raw_dir: Path,
        tag: str,
        progress: Callable[..., None] | None = None,
    ) -> RoundResult:
        _refuse_unsupported(workload)
        span = int(target.capacity * workload.active_range)
        rng = random.Random(workload.seed)
        biggest = max(s.block_size for s in workload.streams)
        buf = mmap.mmap(-1, biggest)  # page-aligned, as direct IO needs
        buf.write(os.urandom(biggest))  # incompressible data (entropy 1.0)
        fd, direct = _open(Path(target.path))
        log: list[tuple[float, str, int, int, int]] = []  # (end s, op, offset, bytes, latency ns)
        seq_next: dict[int, int] = {}
        written = 0
        start = time.perf_counter_ns()
        try:
            while True:
                elapsed = (time.perf_counter_ns() - start) / 1e9
                if workload.duration_s is not None and elapsed >= workload.duration_s:
                    break
                if workload.bytes_budget is not None and written >= workload.bytes_budget:
                    break
                i = rng.choices(range(len(workload.streams)), [s.share for s in workload.streams])[0]
                s = workload.streams[i]
                blocks = max(1, span // s.block_size)
                if s.access == "seq":
                    block = seq_next.get(i, 0) % blocks
                    seq_next[i] = block + 1
                else:
                    block = rng.randrange(blocks)
                offset = block * s.block_size
                view = memoryview(buf)[: s.block_size]
                t0 = time.perf_counter_ns()
                n = os.pwritev(fd, [view], offset) if s.op == "write" else os.preadv(fd, [view], offset)
                t1 = time.perf_counter_ns()
                view.release()
                if n != s.block_size:
                    raise EngineError(
                        f"template engine: {s.op} of {s.block_size} B at {offset} on {target.path} moved {n} B"
                    )
                written += n if s.op == "write" else 0
                log.append(((t1 - start) / 1e9, s.op, offset, n, t1 - t0))
                if progress is not None and len(log) % 1000 == 0:
                    progress(log[-1][0], len(log) / log[-1][0], sum(x[4] for x in log[-1000:]) / 1000 / 1000)
        except OSError as e:
            raise EngineError(f"template engine: IO on {target.path} failed: {e.strerror}") from e
        finally:
            os.close(fd)
            buf.close()
        runtime = (time.perf_counter_ns() - start) / 1e9
        raw = _write_log(raw_dir / f"{tag}.template.csv", log)
        return RoundResult(
            read=_op_stats([x for x in log if x[1] == "read"], runtime),
            write=_op_stats([x for x in log if x[1] == "write"], runtime),
            runtime_s=runtime,
            series=_series(log),
            counters={"direct_io": float(direct)},
            raw_files=(str(raw.relative_to(raw_dir.parent)),),
            engine=self.name,
            engine_version=self.version(),
        )


def _refuse_unsupported(workload: Workload) -> None:
    """Every part of the workload this engine cannot carry out as asked, refused before any IO:
    a figure measured under other conditions than the plan says is a wrong figure."""
    unsupported = [
        what
        for what, bad in (
            (
                f"{workload.threads} threads × QD {workload.queue_depth} (it runs one IO at a time)",
                workload.threads * workload.queue_depth > 1,
            ),
            ("a rate limit", workload.rate_iops is not None),
            ("LBA zones", bool(workload.zones)),
            ("a warm-up", workload.ramp_s > 0),
            ("partly compressible data", workload.entropy < 1.0),
        )
        if bad
    ]
    if unsupported:
        raise EngineError(
            f"template engine: cannot run workload {workload.name!r} as planned: {'; '.join(unsupported)}."
        )
    if workload.duration_s is None and workload.bytes_budget is None:
        raise EngineError(f"template engine: workload {workload.name!r} has neither a duration nor a byte budget.")


def _write_log(raw: Path, log: list[tuple[float, str, int, int, int]]) -> Path:
    """Every IO as issued, so the figures can be checked against it."""
    raw.write_text(
        "end_s,op,offset,bytes,latency_ns\n" + "".join(f"{e:.9f},{o},{off},{b},{lat}\n" for e, o, off, b, lat in log)
    )
    return raw


def _open(path: Path) -> tuple[int, bool]:
    """The file opened for direct IO, or through the page cache where the filesystem refuses
    it (tmpfs); the round's counters say which."""
    try:
        return os.open(path, os.O_RDWR | getattr(os, "O_DIRECT", 0)), hasattr(os, "O_DIRECT")
    except OSError:
        return os.open(path, os.O_RDWR), False


def _op_stats(ios: list[tuple[float, str, int, int, int]], runtime: float) -> OpStats:
    """One direction's figures, every one of them from the logged IOs."""
    if not ios:
        return OpStats.idle()
    lat_us = [x[4] / 1000 for x in ios]
    bins = Counter(round(v, 1) for v in lat_us)  # 0.1 µs bins: finer than the clock's useful resolution
    hist = Histogram(tuple(sorted(bins)), tuple(bins[v] for v in sorted(bins)), max(lat_us))
    moved = sum(x[3] for x in ios)
    return OpStats(
        ios=len(ios),
        io_bytes=moved,
        iops=len(ios) / runtime,
        mbps=moved / runtime / 1e6,
        lat_mean_us=sum(lat_us) / len(lat_us),
        lat_max_us=max(lat_us),
        lat_min_us=min(lat_us),
        histogram=hist,
    )


def _series(ios: list[tuple[float, str, int, int, int]]) -> tuple[SecondSample, ...]:
    """One sample per whole second measured (a shorter period has none; the last, partial
    second is left out)."""
    secs = int(ios[-1][0]) if ios else 0
    acc = [[0, 0, 0, 0] for _ in range(secs)]  # reads, writes, bytes, latency ns
    for end, op, _, n, lat in ios:
        if int(end) < secs:
            a = acc[int(end)]
            a[0 if op == "read" else 1] += 1
            a[2] += n
            a[3] += lat
    return tuple(
        SecondSample(float(i + 1), float(r), float(w), b / 1e6, lat / (r + w) / 1000 if r + w else None)
        for i, (r, w, b, lat) in enumerate(acc)
    )
