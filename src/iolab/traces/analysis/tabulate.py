"""The per-IO passes of the stream analysis (see streams.py for the method): the SEQ rule,
the in-flight count and the tabulation of each chunk per (step, stream) are one walk over the
IOs in compiled code (`iolab._sim.StreamWalk`, crates/sim/src/streams.rs), which reads the
scan's Arrow stream itself; this module merges its rows and builds the result."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from iolab import _sim
from iolab.core.errors import IolabError
from iolab.traces.analysis.streamstats import SeqRule, StepStat, StreamAnalysis, StreamStat
from iolab.traces.sqltext import sql_str


@dataclass(frozen=True)
class Scan:
    """The analysis's scan of a trace table: its rows passing `where`, in file order."""

    path: str
    where: str  # SQL over the table's columns (and file_row_number)
    lat_sql: str  # latency in µs, < 0 when there is none
    dev_sql: str  # ", <device code> AS dev" when there are several devices, else ""
    rows: int  # the table's rows
    chunk_rows: int  # file rows per chunk of the tabulation

    def sql(self, columns: str) -> str:
        return f"SELECT {columns} FROM read_parquet({sql_str(self.path)}, file_row_number = true) WHERE {self.where}"


_SPREAD_TYPES = (np.int64, np.bool_, np.bool_, np.int64, np.float64)  # times, SEQ, write, size, latency


class Accumulator:
    """Running state of the analysis across chunks (all per-IO work is in the walk)."""

    def __init__(self, step_ns: int, seq: SeqRule, has_latency: bool, max_steps: int) -> None:
        self.step_ns = step_ns
        self.seq = seq
        self.has_latency = has_latency
        self.ios = 0
        self.end_ns = 0  # last issue, or last completion when known
        self.walk = _sim.StreamWalk(
            step_ns=step_ns,
            lookback=seq.lookback,
            gap_bytes=seq.gap_bytes,
            has_latency=has_latency,
            max_steps=max_steps,
        )
        # (step, seq, write, size) -> [ios, bytes, latency count, latency sum, latency max]
        self.groups: dict[tuple[int, bool, bool, int], list] = {}

    def close(self) -> None:
        pass

    def consume(self, con, scan: Scan) -> None:
        """Walk the scan's rows: one query, its Arrow stream read by the walk, whose rows
        are merged a chunk at a time. The stream runs on a cursor of its own, so `con` stays
        free to group a spread chunk meanwhile."""
        # Only a filtered scan needs the file row numbers to cut the chunks where they fall.
        frn = ", file_row_number AS frn" if scan.where != "TRUE" else ""
        columns = f"time_ns, CAST(op = 'write' AS UTINYINT) AS w, offset_bytes, size_bytes, CAST({scan.lat_sql} AS DOUBLE) AS lat"
        cur = con.cursor()
        try:
            self.walk.open(stream=cur.sql(scan.sql(columns + scan.dev_sql + frn)), chunk_rows=scan.chunk_rows)
            while (got := self._next_chunk()) is not None:
                rows, spread = got
                if spread is not None:  # too many (step, stream) slots for the walk's dense table
                    cols: list[np.ndarray] = [np.frombuffer(b, d) for b, d in zip(spread, _SPREAD_TYPES)]
                    t, seq, w, size, lat = cols
                    self._merge(_group_in_duckdb(self._steps(t), seq, w, size, lat, con))
                else:
                    assert rows is not None
                    self._merge(
                        [
                            ((st, sq, ww, sz), [n, n * sz, ln, ls if ln else 0.0, lm if ln else None])
                            for st, sq, ww, sz, n, ln, ls, lm in rows
                        ]
                    )
        finally:
            self.walk.close()
            cur.close()
        self.ios, self.end_ns = self.walk.ios, self.walk.last_issue_ns

    def _next_chunk(self):
        """The walk's next chunk; what it refuses (a column it cannot read, an IO past the
        limit of steps that analyse() checked before) is said as iolab's error, not a trace."""
        try:
            return self.walk.next_chunk()
        except ValueError as e:
            raise IolabError(f"stream analysis: {e}") from None

    def _merge(self, tab: list) -> None:
        """Add one chunk's (step, seq, write, size) rows to the running groups."""
        for key, vals in tab:
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

    def result(self, *, table, step_s, threshold, devices, process, excluded_ios) -> StreamAnalysis:
        total_ios, end_ns = self.ios, self._end_ns()
        # Steps cover [0, end]; an end exactly on a boundary does not open an empty step,
        # so anything counted at index n_steps (an instant at the very end) joins the last.
        n_steps = max(1, -(-end_ns // self.step_ns))
        last = n_steps - 1
        inflight, oio_max = self._closed_steps(n_steps)
        streams, by_step = self._trace_streams(total_ios, threshold, last)
        steps = [self._step_stat(k, by_step.get(k, []), end_ns, inflight, oio_max) for k in range(n_steps)]
        notes = list(table.notes)
        missing = self._missing_latency()
        if self.has_latency and missing:
            notes.append(
                f"{missing:,} IOs have no response time (completion not in the trace); "
                "they are left out of response times and outstanding IO."
            )
        res = StreamAnalysis(
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
        partial = res.partial_note()  # said in the summary and kept in analysis.json alike
        return replace(res, notes=res.notes + (partial,)) if partial else res

    def _end_ns(self) -> int:
        return max(self.end_ns, self.walk.last_completion_ns or 0)

    def _missing_latency(self) -> int:
        return self.walk.missing_latency

    def _closed_steps(self, n_steps: int) -> tuple[np.ndarray, np.ndarray]:
        """Per step: the in-flight time (ns) and the maximum outstanding IO, with anything
        counted past the last step folded into it."""
        last = n_steps - 1
        try:
            inflight_ns, oio = self.walk.finish(n_steps=n_steps)
        except ValueError as e:  # more steps than the limit: analyse() refuses those before
            raise IolabError(f"stream analysis: {e}") from None
        all_inflight, all_max = np.array(inflight_ns, np.float64), np.array(oio, np.int64)
        inflight = all_inflight[:n_steps].copy()
        inflight[last] += all_inflight[n_steps:].sum()
        oio_max = all_max[:n_steps].copy()
        oio_max[last] = max(oio_max[last], all_max[n_steps:].max(initial=0))
        return inflight, oio_max

    def _trace_streams(
        self, total_ios: int, threshold: float, last: int
    ) -> tuple[tuple[StreamStat, ...], dict[int, list]]:
        """The whole-trace streams, most IOs first, and each step's (stream index, write,
        group counts) entries."""
        per_stream: dict[tuple[bool, bool, int], list] = {}
        by_step: dict[int, list] = {}
        for (_step, sq, w, size), (n, b, ln, ls, lm) in self.groups.items():
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
        return streams, by_step

    def _step_stat(self, k: int, entries: list, end_ns: int, inflight: np.ndarray, oio_max: np.ndarray) -> StepStat:
        start = k * self.step_ns
        dur_ns = min(self.step_ns, end_ns - start)
        # A step can hold the same stream twice after folding the end instant in.
        counts: dict[int, int] = {}
        ios = reads = nbytes = lat_n = 0
        lat_s, lat_m = 0.0, None
        for i, w, g in entries:
            counts[i] = counts.get(i, 0) + g[0]
            ios += g[0]
            reads += 0 if w else g[0]
            nbytes += g[1]
            lat_n += g[2]
            lat_s += g[3]
            if g[4] is not None:
                lat_m = g[4] if lat_m is None else max(lat_m, g[4])
        dur_s = dur_ns / 1e9
        return StepStat(
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
            partial=dur_ns < self.step_ns,
        )


def _group_in_duckdb(step: np.ndarray, seq: np.ndarray, w: np.ndarray, size: np.ndarray, lat: np.ndarray, con):
    """One chunk's (step, seq, write, size) -> [ios, bytes, latency count, sum, max] rows,
    grouped by DuckDB: for chunks with more possible (step, stream) slots than the walk's
    dense table holds (many steps, or sizes with no common power of two)."""
    con.register("iolab_chunk", {"step": step, "seq": seq, "w": w, "size": size, "lat": lat})
    try:
        rows = con.execute(
            "SELECT step, seq, w, size, count(*), sum(size), count(*) FILTER (lat >= 0),"
            " sum(lat) FILTER (lat >= 0), max(lat) FILTER (lat >= 0) FROM iolab_chunk GROUP BY ALL"
        ).fetchall()
    finally:
        con.unregister("iolab_chunk")
    return [((st, sq, ww, sz), [n, int(b), ln, ls or 0.0, lm]) for st, sq, ww, sz, n, b, ln, ls, lm in rows]
