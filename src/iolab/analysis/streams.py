"""Stream analysis of a normalised IO table (SNIA RWSW "IO streams" per capture step).

    analyse(table, step_s=300, threshold=0.03, seq=SeqRule()) -> StreamAnalysis

An IO *stream* is a unique (RND|SEQ, block size, READ|WRITE). Only reads and writes with a
size > 0 take part; trims, flushes and zero-length IOs are counted in `excluded_ios`.

SEQ rule (`SeqRule`, a parameter): an IO is SEQ when its offset equals the end offset
(offset + size) of one of the last `lookback` IOs *of the same direction on the same
device*, in issue order; with `gap_bytes` > 0 it may also start up to that many bytes past
such an end (a small skip still counts as sequential). Everything else is RND. Looking back
over several IOs (default 64) keeps a sequential stream SEQ while other streams interleave
with it: a stream that is a share s of its direction's IOs loses track after more than 64
others in a row, with probability (1 - s)^64 (0.1 % at s = 10 %, 4 % at s = 5 %); raise
`lookback` for traces with many interleaved streams (the cost is one vectorised
comparison per IO per step back). The chance that a random IO lands exactly at the end of
one of the recent IOs is negligible on any real device.

Per step (default 5 minutes; the last step ends at the trace's last completion, or its last
issue when there are no response times) the analysis gives: IOs per stream, IOPS, MB/s
(10^6 B/s), read %, average and maximum outstanding IO, average and maximum response time.
Outstanding IO comes from issue and completion times (issue + latency): the average is the
time-weighted mean over the step (the sum of each IO's in-flight time inside the step,
divided by the step's length), the maximum is the exact peak of the in-flight count. IOs
without a response time are left out of outstanding IO; a trace without response times has
None for outstanding IO and response times, never 0. Outstanding IO counts every device
analysed together; pass `devices` to look at one.

Dominant streams are those with at least `threshold` of all analysed IOs over the whole
trace (SNIA uses 3 %).

How: DuckDB scans the Parquet table in time order, a chunk of rows at a time (the next
chunk is read while numpy works on the current one); numpy does the two order-dependent
parts (the SEQ rule and the in-flight count, side by side) on whole chunks of IOs, carrying
a few values from one chunk to the next, and tabulates each chunk per (step, stream) with
bincount. No Python code runs per IO, and memory is bounded by the chunk size, not the trace.

`StreamAnalysis.save(path)` / `StreamAnalysis.load(path)` keep the result as JSON.
"""

from __future__ import annotations

import json
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..errors import IolabError
from ..traces.table import TraceTable, connect, sql_str
from ..units import kib_label
from ..workload import Stream

CHUNK_ROWS = 1_000_000  # IOs per numpy batch: ~40 MB of columns, a few times that in flight
_SEQ_BLOCK = 65_536  # IOs per block of the SEQ passes: offsets and ends of a block fit in the cache


@dataclass(frozen=True)
class SeqRule:
    """When an IO counts as sequential (see the module docstring)."""

    lookback: int = 64
    gap_bytes: int = 0

    def __post_init__(self) -> None:
        if self.lookback < 1:
            raise IolabError(f"SEQ rule: lookback must be ≥ 1 IO, got {self.lookback}")
        if self.gap_bytes < 0:
            raise IolabError(f"SEQ rule: gap must be ≥ 0 bytes, got {self.gap_bytes}")


@dataclass(frozen=True)
class StreamStat:
    """One stream over the whole trace."""

    access: str  # rnd | seq
    op: str  # read | write
    block_size: int  # bytes
    ios: int
    io_bytes: int
    pct: float  # % of all analysed IOs
    dominant: bool
    rt_avg_us: float | None
    rt_max_us: float | None

    def label(self) -> str:
        return f"{self.access.upper()} {kib_label(self.block_size)} {self.op[0].upper()}"

    def stream(self, share: float) -> Stream:
        return Stream(self.access, self.op, self.block_size, share)  # type: ignore[arg-type]


@dataclass(frozen=True)
class StepStat:
    """One capture step. `streams` pairs an index into `StreamAnalysis.streams` with the IO
    count of that stream in this step (streams absent from the step are left out)."""

    index: int
    start_s: float
    duration_s: float
    ios: int
    read_ios: int
    io_bytes: int
    iops: float | None  # None only for a zero-length step
    mbps: float | None
    read_pct: float | None  # None for a step without IOs
    oio_avg: float | None
    oio_max: int | None
    rt_avg_us: float | None
    rt_max_us: float | None
    streams: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class StreamAnalysis:
    source: str  # the trace table analysed
    fmt: str
    step_s: float
    threshold: float  # fraction, 0.03 = 3 %
    seq: SeqRule
    devices: tuple[str, ...]  # filter applied (empty: all devices)
    process: str | None  # filter applied
    total_ios: int  # reads and writes analysed
    excluded_ios: int  # trims, flushes, zero-length IOs (and other ops) left out
    duration_s: float
    has_latency: bool
    streams: tuple[StreamStat, ...]  # by IO count, largest first
    steps: tuple[StepStat, ...]
    notes: tuple[str, ...] = ()

    @property
    def dominant(self) -> tuple[StreamStat, ...]:
        return tuple(s for s in self.streams if s.dominant)

    @property
    def dominant_pct(self) -> float:
        """% of all analysed IOs that belong to a dominant stream."""
        return sum(s.pct for s in self.dominant)

    def read_pct(self) -> float:
        return 100.0 * sum(s.ios for s in self.streams if s.op == "read") / self.total_ios

    def oio_avg(self) -> float | None:
        """Time-weighted average outstanding IO over the whole trace."""
        vals = [(s.oio_avg, s.duration_s) for s in self.steps if s.oio_avg is not None]
        total = sum(d for _, d in vals)
        return sum(v * d for v, d in vals) / total if vals and total > 0 else None

    def summary(self, max_streams: int = 20) -> str:
        """A plain-text report: the stream table and the per-step ranges (for the CLI)."""
        rule = f"offset = end of one of the last {self.seq.lookback} IOs of the same direction on the device"
        if self.seq.gap_bytes:
            rule += f" (or up to {self.seq.gap_bytes} B past it)"
        head = [
            f"{self.source} ({self.fmt}): {self.total_ios:,} reads and writes, {len(self.steps)} steps of "
            f"{self.step_s:g} s ({self.duration_s:,.1f} s)"
            + (f"; {self.excluded_ios:,} other IOs (trim, flush, zero-length) left out" if self.excluded_ios else ""),
            f"SEQ rule: {rule}",
            "",
            f"{'stream':<16} {'IOs':>14} {'%':>7}  {'dominant':<8} {'avg RT µs':>10}",
        ]
        for st in self.streams[:max_streams]:
            rt = "" if st.rt_avg_us is None else f"{st.rt_avg_us:,.1f}"
            head.append(f"{st.label():<16} {st.ios:>14,} {st.pct:>7.2f}  {'yes' if st.dominant else '':<8} {rt:>10}")
        if len(self.streams) > max_streams:
            rest = self.streams[max_streams:]
            head.append(f"{f'+{len(rest)} more':<16} {sum(x.ios for x in rest):>14,} {sum(x.pct for x in rest):>7.2f}")
        head += ["", f"dominant streams (≥ {self.threshold * 100:g} %): {len(self.dominant)}, "
                 f"{self.dominant_pct:.1f} % of the IOs; read {self.read_pct():.1f} %"]

        def rng(name: str, vals: list, fmt: str) -> str:
            vals = [v for v in vals if v is not None]
            if not vals:
                return f"{name}: not in this trace"
            return f"{name}: average over steps {format(sum(vals) / len(vals), fmt)}, max {format(max(vals), fmt)}"

        head += [
            "per step " + rng("IOPS", [x.iops for x in self.steps], ",.0f"),
            "per step " + rng("MB/s", [x.mbps for x in self.steps], ",.1f"),
            "per step " + rng("average outstanding IO", [x.oio_avg for x in self.steps], ",.2f")
            + ("" if not self.has_latency else f"; peak {max((x.oio_max or 0) for x in self.steps)}"),
            "per step " + rng("average response time µs", [x.rt_avg_us for x in self.steps], ",.1f")
            + ("" if not self.has_latency else f"; max {max((x.rt_max_us or 0) for x in self.steps):,.1f} µs"),
        ]
        head += [f"note: {n}" for n in self.notes]
        return "\n".join(head)

    # -- persistence ----------------------------------------------------------------------
    def to_json(self) -> dict:
        return asdict(self)

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return p

    @classmethod
    def load(cls, path: str | Path) -> "StreamAnalysis":
        p = Path(path)
        try:
            d = json.loads(p.read_text())
        except FileNotFoundError:
            raise IolabError(f"{p}: no such stream analysis file.") from None
        except json.JSONDecodeError as e:
            raise IolabError(f"{p}:{e.lineno}: not valid JSON ({e.msg}).") from None
        try:
            d["seq"] = SeqRule(**d["seq"])
            d["streams"] = tuple(StreamStat(**s) for s in d["streams"])
            d["steps"] = tuple(
                StepStat(**{**s, "streams": tuple((int(i), int(n)) for i, n in s["streams"])}) for s in d["steps"]
            )
            d["devices"] = tuple(d["devices"])
            d["notes"] = tuple(d.get("notes", ()))
            return cls(**d)
        except (KeyError, TypeError, ValueError) as e:
            raise IolabError(
                f"{p}: not a stream analysis written by iolab ({type(e).__name__}: {e}); "
                "re-run the analysis to rebuild it."
            ) from None


# ---------------------------------------------------------------------------------------
# The analysis


def analyse(
    table: TraceTable | str | Path,
    step_s: float = 300.0,
    threshold: float = 0.03,
    seq: SeqRule = SeqRule(),
    devices: tuple[str, ...] = (),
    process: str | None = None,
    memory_limit: str | None = "512MB",
    chunk_rows: int = CHUNK_ROWS,
) -> StreamAnalysis:
    """Cut the trace into steps and tabulate its IO streams (see the module docstring).

    `devices` keeps only those devices, `process` only IOs issued by that process name.
    """
    if not isinstance(table, TraceTable):
        table = TraceTable.open(table)
    if step_s <= 0:
        raise IolabError(f"stream analysis: step must be > 0 s, got {step_s}")
    if not 0 < threshold < 1:
        raise IolabError(f"stream analysis: dominant-stream threshold must be in (0, 1), got {threshold}")
    step_ns = int(round(step_s * 1e9))

    # One DuckDB thread: the chunked scan already runs beside two numpy threads (SEQ rule,
    # in-flight count), and splitting a 1 M-row scan over more threads costs more CPU than
    # it saves.
    con = connect(memory_limit=memory_limit, threads=1)
    try:
        scan = table.scan_sql()
        where = ["TRUE"]
        if devices:
            where.append("device IN (" + ", ".join(sql_str(d) for d in devices) + ")")
        if process is not None:
            where.append(f"process = {sql_str(process)}")
        sel = " AND ".join(where)
        io_filter = "op IN ('read', 'write') AND size_bytes > 0 AND offset_bytes IS NOT NULL AND time_ns IS NOT NULL"
        # SEQ is tracked per device: number the devices only when there are several
        # (the footer statistics say so without a scan).
        lo_dev, hi_dev = con.execute(
            "SELECT min(stats_min_value), max(stats_max_value) FROM parquet_metadata(?) WHERE path_in_schema = 'device'",
            [str(table.path)],
        ).fetchall()[0]
        if lo_dev is None or lo_dev != hi_dev:
            con.execute(f"CREATE TYPE iolab_dev AS ENUM (SELECT DISTINCT device FROM {scan} WHERE {sel} AND device IS NOT NULL ORDER BY 1)")
            n_dev = con.execute("SELECT len(enum_range(NULL::iolab_dev))").fetchall()[0][0]
            dev_sql = f", coalesce(enum_code(CAST(device AS iolab_dev)), {n_dev}) AS dev"  # no device: its own group
        else:
            dev_sql = ""  # one device: the direction alone is the group
        lat_sql = "coalesce(latency_us, -1.0)" if table.has_latency else "-1.0"
        query = (
            f"SELECT time_ns, op = 'write' AS w, offset_bytes, size_bytes, {lat_sql} AS lat{dev_sql}"
            f" FROM read_parquet({sql_str(str(table.path))}, file_row_number = true)"
            f" WHERE {sel} AND {io_filter} AND file_row_number >= $lo AND file_row_number < $hi"
        )
        acc = _Accumulator(step_ns, seq, table.has_latency)
        try:
            for chunk in _prefetch(con, query, table.rows, chunk_rows):
                acc.add(con, chunk)
        finally:
            acc.close()
        if not acc.ios:
            what = f" matching {' and '.join(where[1:])}" if len(where) > 1 else ""
            raise IolabError(f"{table.path}: no reads or writes{what}; nothing to analyse.")
        n_sel = con.execute(f"SELECT count(*) FROM {scan} WHERE {sel}").fetchall()[0][0]
        return acc.result(
            table=table, step_s=step_s, threshold=threshold, devices=devices, process=process,
            excluded_ios=int(n_sel - acc.ios),
        )
    finally:
        con.close()


def _prefetch(con, query: str, rows: int, chunk_rows: int):
    """Yield numpy chunks of `query` over row ranges, fetching the next while the caller
    works on the current one (DuckDB and numpy both release the GIL, so this uses 2 cores)."""
    q: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    cur = con.cursor()

    def put(item) -> None:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return
            except queue.Full:
                pass

    def worker() -> None:
        try:
            for lo in range(0, max(rows, 1), chunk_rows):
                if stop.is_set():
                    return
                put(cur.execute(query.replace("$lo", str(lo)).replace("$hi", str(lo + chunk_rows))).fetchnumpy())
            put(None)
        except BaseException as e:  # handed to the consumer, which re-raises it
            put(e)

    t = threading.Thread(target=worker, daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if item is None:
                break
            if isinstance(item, BaseException):
                raise item
            if len(item["time_ns"]):
                yield item
    finally:
        stop.set()
        t.join()
        cur.close()


class _Accumulator:
    """Running state of the analysis across chunks (all per-IO work is vectorised)."""

    def __init__(self, step_ns: int, seq: SeqRule, has_latency: bool) -> None:
        self.step_ns = step_ns
        self.seq = seq
        self.has_latency = has_latency
        self.ios = 0
        self.missing_latency = 0
        self.end_ns = 0  # last issue, or last completion when known
        # SEQ rule carry: the last `lookback` IOs (group code, end offset) of every group.
        self.carry_g = np.empty(0, np.int64)
        self.carry_end = np.empty(0, np.int64)
        # Outstanding-IO carry: completions not yet passed, IOs issued and completed so far.
        self.pending = np.empty(0, np.int64)
        self.issued = 0
        self.completed = 0
        self.next_bound = 0  # first step whose start-of-step level is not yet known
        # Per step (grown as the trace goes on): in-flight time and peak in-flight count.
        self.inflight_ns = np.zeros(0, np.float64)
        self.oio_max = np.zeros(0, np.int64)
        # (step, seq, write, size) -> [ios, bytes, latency count, latency sum, latency max]
        self.groups: dict[tuple[int, bool, bool, int], list] = {}
        self._pool = ThreadPoolExecutor(max_workers=1)

    def close(self) -> None:
        self._pool.shutdown()

    def _grow(self, n: int) -> None:
        if n > len(self.inflight_ns):
            extra = n - len(self.inflight_ns) + 64
            self.inflight_ns = np.r_[self.inflight_ns, np.zeros(extra)]
            self.oio_max = np.r_[self.oio_max, np.zeros(extra, np.int64)]

    def add(self, con, c: dict) -> None:
        t = c["time_ns"]
        self.ios += len(t)
        self.end_ns = max(self.end_ns, int(t[-1]))
        step = self._steps(t)
        # The SEQ rule and the in-flight count keep separate state, so they run side by side
        # (numpy releases the GIL in its loops).
        oio = self._pool.submit(self._outstanding, t, c["lat"], step) if self.has_latency else None
        group = c["w"].astype(np.int64) if "dev" not in c else c["dev"].astype(np.int64) * 2 + c["w"]
        seq = self._seq_flags(group, c["offset_bytes"], c["size_bytes"])
        if oio is not None:
            oio.result()
        for key, vals in _tabulate(step, seq, c["w"], c["size_bytes"], c["lat"], con):
            g = self.groups.get(key)
            if g is None:
                self.groups[key] = vals
            else:
                g[0] += vals[0]
                g[1] += vals[1]
                g[2] += vals[2]
                g[3] += vals[3]
                if vals[4] is not None:
                    g[4] = vals[4] if g[4] is None else max(g[4], vals[4])

    def _steps(self, t: np.ndarray) -> np.ndarray:
        """Step number of each IO. Issue times are sorted, so the steps are runs: find the
        few boundaries and repeat (a division per IO costs more)."""
        first, last = int(t[0]) // self.step_ns, int(t[-1]) // self.step_ns
        ids = np.arange(first, last + 1)
        cuts = np.searchsorted(t, ids[1:] * self.step_ns, side="left")
        counts = np.diff(np.r_[0, cuts, len(t)])
        return np.repeat(ids, counts)

    def _seq_flags(self, g: np.ndarray, off: np.ndarray, size: np.ndarray) -> np.ndarray:
        """The SEQ rule over one chunk, continuing from the previous chunk's tail."""
        lb, gap = self.seq.lookback, self.seq.gap_bytes
        nc = len(self.carry_g)
        g_all = np.concatenate([self.carry_g, g])
        off_all = np.concatenate([np.zeros(nc, np.int64), off])
        end_all = np.concatenate([self.carry_end, off + size])
        # Group IOs by (device, direction), keeping issue order inside each group.
        codes = np.flatnonzero(np.bincount(g_all))  # group codes are small integers
        if len(codes) <= 8:  # one or a few devices: a pass per group beats a sort
            order = np.concatenate([np.flatnonzero(g_all == code) for code in codes])
        else:
            kind = np.uint16 if codes[-1] < 1 << 16 else np.int64
            order = np.argsort(g_all.astype(kind), kind="stable")
        gs, offs, ends = g_all[order], off_all[order], end_all[order]
        n = len(gs)

        def match(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            if gap == 0:
                return a == b
            d = a - b
            return (d >= 0) & (d <= gap)

        # Compare every IO with the k-th previous one, ignoring groups (one pass per k)...
        # block by block, so that the `lookback` passes over a block find it in the CPU
        # cache: whole-chunk passes would stream the chunk from memory `lookback` times.
        hit = np.zeros(n, bool)
        tmp = np.empty(min(n, _SEQ_BLOCK), bool)
        for b0 in range(0, n, _SEQ_BLOCK):
            b1 = min(n, b0 + _SEQ_BLOCK)
            for k in range(1, lb + 1):
                a = max(b0, k)
                if a >= b1:
                    break
                t = tmp[: b1 - a]
                if gap == 0:
                    np.equal(offs[a:b1], ends[a - k : b1 - k], out=t)
                else:
                    t[:] = match(offs[a:b1], ends[a - k : b1 - k])
                np.logical_or(hit[a:b1], t, out=hit[a:b1])
        # ...then redo the first `lookback` IOs of each group, where k reaches into the
        # previous group, with the group check.
        starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
        edge = np.unique((starts[:, None] + np.arange(lb)).ravel())
        edge = edge[edge < n]
        exact = np.zeros(len(edge), bool)
        for k in range(1, lb + 1):
            j = edge - k
            ok = j >= 0
            e, jj = edge[ok], j[ok]
            exact[ok] |= match(offs[e], ends[jj]) & (gs[e] == gs[jj])
        hit[edge] = exact
        flags = np.empty(n, bool)
        flags[order] = hit
        # Keep the last `lookback` IOs of every group for the next chunk (carry rows have
        # offset 0 and are never counted: they only serve as earlier ends).
        stops = np.r_[starts[1:], n]
        tail = np.concatenate([np.arange(max(a, b - lb), b) for a, b in zip(starts.tolist(), stops.tolist())])
        self.carry_g, self.carry_end = gs[tail], ends[tail]
        return flags[nc:]

    def _outstanding(self, t: np.ndarray, lat: np.ndarray, step: np.ndarray) -> None:
        """In-flight IO count: exact peak per step and in-flight time per step."""
        have = lat >= 0
        n_have = int(have.sum())
        self.missing_latency += len(lat) - n_have
        if n_have == len(lat):
            ti, si, li = t, step, lat
        else:
            ti, si, li = t[have], step[have], lat[have]
        if not len(ti):
            return
        comp = ti + (li * 1000 + 0.5).astype(np.int64)  # latency ≥ 0: +0.5 rounds
        self.end_ns = max(self.end_ns, int(comp.max()))
        self._grow(int(comp.max() // self.step_ns) + 1)
        # Completions up to this chunk's last issue are final; later ones wait for the next chunk.
        horizon = ti[-1]
        allc = np.sort(np.concatenate([self.pending, comp]))  # plain integers: any sort gives the same
        cut = int(np.searchsorted(allc, horizon, side="right"))
        done, self.pending = allc[:cut], allc[cut:]
        # Level right after each issue (a completion at the same instant counts first).
        level = self.issued + np.arange(1, len(ti) + 1) - (self.completed + np.searchsorted(done, ti, side="right"))
        starts = np.flatnonzero(np.r_[True, si[1:] != si[:-1]])
        np.maximum.at(self.oio_max, si[starts], np.maximum.reduceat(level, starts))
        # The level at each step start also counts (IOs carried over from the previous
        # step), for every step up to this chunk's last, idle ones included.
        ks = np.arange(self.next_bound, int(si[-1]) + 1)
        bounds = ks * self.step_ns
        at_b = self.issued + np.searchsorted(ti, bounds, side="left") - (
            self.completed + np.searchsorted(done, bounds, side="right")
        )
        np.maximum.at(self.oio_max, ks, at_b)
        self.next_bound = int(si[-1]) + 1
        self.issued += len(ti)
        self.completed += cut
        self._inflight_time(ti, comp, si)

    def _inflight_time(self, t: np.ndarray, c: np.ndarray, k0: np.ndarray) -> None:
        n = len(self.inflight_ns)
        same = c < (k0 + 1) * self.step_ns  # completes in the step it was issued in
        if same.all():
            self.inflight_ns += np.bincount(k0, weights=c - t, minlength=n)
            return
        self.inflight_ns += np.bincount(k0[same], weights=(c - t)[same], minlength=n)
        # IOs crossing step boundaries: split their in-flight time over the steps they span.
        t2, c2, a = t[~same], c[~same], k0[~same]
        b = c2 // self.step_ns
        self.inflight_ns += np.bincount(a, weights=(a + 1) * self.step_ns - t2, minlength=n)
        self.inflight_ns += np.bincount(b, weights=c2 - b * self.step_ns, minlength=n)
        span = b - a - 1
        if span.max() > 0:
            mid = np.repeat(a, span) + (np.arange(span.sum()) - np.repeat(np.cumsum(span) - span, span)) + 1
            self.inflight_ns += np.bincount(mid, minlength=n) * float(self.step_ns)

    def result(self, *, table, step_s, threshold, devices, process, excluded_ios) -> StreamAnalysis:
        total_ios, end_ns = self.ios, self.end_ns
        # Steps cover [0, end]; an end exactly on a boundary does not open an empty step,
        # so anything counted at index n_steps (an instant at the very end) joins the last.
        n_steps = max(1, -(-end_ns // self.step_ns))
        last = n_steps - 1
        self._grow(n_steps)
        if self.has_latency and self.next_bound < n_steps:
            # Steps after the last issue: only completions remain.
            ks = np.arange(self.next_bound, n_steps)
            at_b = self.issued - self.completed - np.searchsorted(self.pending, ks * self.step_ns, side="right")
            np.maximum.at(self.oio_max, ks, at_b)
        inflight = self.inflight_ns[:n_steps].copy()
        inflight[last] += self.inflight_ns[n_steps:].sum()
        oio_max = self.oio_max[:n_steps].copy()
        oio_max[last] = max(oio_max[last], self.oio_max[n_steps:].max(initial=0))

        # Whole-trace streams.
        per_stream: dict[tuple[bool, bool, int], list] = {}
        by_step: dict[int, list] = {}
        for (st, sq, w, size), (n, b, ln, ls, lm) in self.groups.items():
            a = per_stream.setdefault((sq, w, size), [0, 0, 0, 0.0, None])
            a[0] += n
            a[1] += b
            a[2] += ln
            a[3] += ls
            if lm is not None:
                a[4] = lm if a[4] is None else max(a[4], lm)
        ordered = sorted(per_stream.items(), key=lambda kv: (-kv[1][0], kv[0][2], kv[0][0], kv[0][1]))
        streams = tuple(
            StreamStat(
                access="seq" if sq else "rnd",
                op="write" if w else "read",
                block_size=int(size),
                ios=int(n),
                io_bytes=int(b),
                pct=100.0 * n / total_ios,
                dominant=n / total_ios >= threshold,
                rt_avg_us=ls / ln if ln else None,
                rt_max_us=lm,
            )
            for (sq, w, size), (n, b, ln, ls, lm) in ordered
        )
        index = {k: i for i, (k, _) in enumerate(ordered)}
        for (st, sq, w, size), g in self.groups.items():
            by_step.setdefault(min(int(st), last), []).append((index[(sq, w, size)], w, g))

        steps = []
        for k in range(n_steps):
            start = k * self.step_ns
            dur_ns = min(self.step_ns, end_ns - start)
            # A step can hold the same stream twice after folding the end instant in.
            counts: dict[int, int] = {}
            ios = reads = nbytes = lat_n = 0
            lat_s, lat_m = 0.0, None
            for i, w, g in by_step.get(k, []):
                counts[i] = counts.get(i, 0) + g[0]
                ios += g[0]
                reads += 0 if w else g[0]
                nbytes += g[1]
                lat_n += g[2]
                lat_s += g[3]
                if g[4] is not None:
                    lat_m = g[4] if lat_m is None else max(lat_m, g[4])
            dur_s = dur_ns / 1e9
            steps.append(
                StepStat(
                    index=k,
                    start_s=start / 1e9,
                    duration_s=dur_s,
                    ios=ios,
                    read_ios=reads,
                    io_bytes=nbytes,
                    iops=ios / dur_s if dur_s > 0 else None,
                    mbps=nbytes / dur_s / 1e6 if dur_s > 0 else None,
                    read_pct=100.0 * reads / ios if ios else None,
                    oio_avg=float(inflight[k] / dur_ns) if self.has_latency and dur_ns > 0 else None,
                    oio_max=int(oio_max[k]) if self.has_latency else None,
                    rt_avg_us=lat_s / lat_n if lat_n else None,
                    rt_max_us=lat_m,
                    streams=tuple(sorted(counts.items())),
                )
            )
        notes = list(table.notes)
        if self.has_latency and self.missing_latency:
            notes.append(
                f"{self.missing_latency:,} IOs have no response time (completion not in the trace); "
                "they are left out of response times and outstanding IO."
            )
        return StreamAnalysis(
            source=str(table.path),
            fmt=table.fmt,
            step_s=step_s,
            threshold=threshold,
            seq=self.seq,
            devices=tuple(devices),
            process=process,
            total_ios=total_ios,
            excluded_ios=excluded_ios,
            duration_s=end_ns / 1e9,
            has_latency=self.has_latency,
            streams=streams,
            steps=tuple(steps),
            notes=tuple(notes),
        )


_MAX_BINS = 1 << 22  # numpy tabulation up to this many (step, seq, write, size) slots per chunk


def _tabulate(step: np.ndarray, seq: np.ndarray, w: np.ndarray, size: np.ndarray, lat: np.ndarray, con):
    """One chunk's (step, seq, write, size) -> [ios, bytes, latency count, sum, max] rows.

    Sizes are few and mostly multiples of a power of two, so every group gets a slot in a
    small dense table (bincount: no sort, no hashing); a chunk with too many possible
    slots is grouped by DuckDB instead."""
    s0 = int(step[0])
    spread = int(np.bitwise_or.reduce(size))
    tz = (spread & -spread).bit_length() - 1
    m = (int(size.max()) >> tz) + 1
    bins = (int(step[-1]) - s0 + 1) * 4 * m
    if bins > _MAX_BINS:
        con.register("iolab_chunk", {"step": step, "seq": seq, "w": w, "size": size, "lat": lat})
        try:
            rows = con.execute(
                "SELECT step, seq, w, size, count(*), sum(size), count(*) FILTER (lat >= 0),"
                " sum(lat) FILTER (lat >= 0), max(lat) FILTER (lat >= 0) FROM iolab_chunk GROUP BY ALL"
            ).fetchall()
        finally:
            con.unregister("iolab_chunk")
        return [((st, sq, ww, sz), [n, int(b), ln, ls or 0.0, lm]) for st, sq, ww, sz, n, b, ln, ls, lm in rows]
    key = step - s0
    key *= 4
    key += seq.view(np.uint8) * 2
    key += w.view(np.uint8)
    key *= m
    key += size >> tz
    n = np.bincount(key, minlength=bins)
    have = lat >= 0
    if have.all():
        ln, ls = n, np.bincount(key, weights=lat, minlength=bins)
    else:
        ln = np.bincount(key[have], minlength=bins)
        ls = np.bincount(key[have], weights=lat[have], minlength=bins)
    lm = np.full(bins, -1.0)
    np.maximum.at(lm, key, lat)  # missing latencies are -1: they never raise a maximum
    out = []
    for k in np.flatnonzero(n).tolist():
        sz, rest = (k % m) << tz, k // m
        st, sq, ww = s0 + (rest >> 2), bool(rest & 2), bool(rest & 1)
        has = int(ln[k])
        out.append(((st, sq, ww, sz), [int(n[k]), int(n[k]) * sz, has, float(ls[k]) if has else 0.0,
                                       float(lm[k]) if has else None]))
    return out

