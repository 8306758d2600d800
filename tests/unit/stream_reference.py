"""main's numpy passes of the stream analysis (src/iolab/traces/analysis/tabulate.py before the
passes moved to compiled code, crates/sim/src/streams.rs), kept as the reference the compiled
walk must match bit for bit: test_stream_walk.py analyses traces with both and compares the
JSON. Only the per-IO passes are here; the result is built by the same code for both."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from iolab.traces.analysis.streamstats import SeqRule
from iolab.traces.analysis.tabulate import Accumulator, Scan, _group_in_duckdb

_SEQ_BLOCK = 65_536  # IOs per block of the SEQ passes: offsets and ends of a block fit in the cache


class NumpyAccumulator(Accumulator):
    """The analysis's state with main's numpy passes in place of the walk."""

    def __init__(self, step_ns: int, seq: SeqRule, has_latency: bool, max_steps: int) -> None:
        super().__init__(step_ns, seq, has_latency, max_steps)
        self.missing_latency = 0
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
        self._pool = ThreadPoolExecutor(max_workers=1)

    def close(self) -> None:
        self._pool.shutdown()

    def _end_ns(self) -> int:
        return self.end_ns

    def _missing_latency(self) -> int:
        return self.missing_latency

    def _grow(self, n: int) -> None:
        if n > len(self.inflight_ns):
            extra = n - len(self.inflight_ns) + 64
            self.inflight_ns = np.r_[self.inflight_ns, np.zeros(extra)]
            self.oio_max = np.r_[self.oio_max, np.zeros(extra, np.int64)]

    def consume(self, con, scan: Scan) -> None:
        """main's scan: a query per chunk of file rows, fetched into numpy."""
        columns = f"time_ns, op = 'write' AS w, offset_bytes, size_bytes, {scan.lat_sql} AS lat{scan.dev_sql}"
        query = scan.sql(columns) + " AND file_row_number >= ? AND file_row_number < ?"
        cur = con.cursor()
        try:
            for lo in range(0, max(scan.rows, 1), scan.chunk_rows):
                c = cur.execute(query, [lo, lo + scan.chunk_rows]).fetchnumpy()
                if len(c["time_ns"]):
                    self.add(con, c)
        finally:
            cur.close()

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
        self._merge(_tabulate(step, seq, c["w"], c["size_bytes"], c["lat"], con))

    def _seq_flags(self, g: np.ndarray, off: np.ndarray, size: np.ndarray) -> np.ndarray:
        """The SEQ rule over one chunk, continuing from the previous chunk's tail."""
        lb, gap = self.seq.lookback, self.seq.gap_bytes
        nc = len(self.carry_g)
        g_all = np.concatenate([self.carry_g, g])
        off_all = np.concatenate([np.zeros(nc, np.int64), off])
        end_all = np.concatenate([self.carry_end, off + size])
        # Group IOs by (device, direction), keeping issue order inside each group.
        counts = np.bincount(g_all)
        codes = np.flatnonzero(counts)  # group codes are small integers
        order: np.ndarray | None = None
        if len(codes) == 1:  # one group: already in order
            gs, offs, ends = g_all, off_all, end_all
        else:
            if len(codes) <= 8:  # one or a few devices: a pass per group beats a sort
                order = np.concatenate([np.flatnonzero(g_all == code) for code in codes])
            else:
                kind = np.uint16 if codes[-1] < 1 << 16 else np.int64
                order = np.argsort(g_all.astype(kind), kind="stable")
            gs, offs, ends = np.repeat(codes, counts[codes]), off_all[order], end_all[order]
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
        starts = np.r_[0, np.cumsum(counts[codes])[:-1]]
        edge = np.unique((starts[:, None] + np.arange(lb)).ravel())
        edge = edge[edge < n]
        exact = np.zeros(len(edge), bool)
        for k in range(1, lb + 1):
            j = edge - k
            ok = j >= 0
            e, jj = edge[ok], j[ok]
            exact[ok] |= match(offs[e], ends[jj]) & (gs[e] == gs[jj])
        hit[edge] = exact
        if order is None:
            flags = hit
        else:
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
        first = si[starts]  # distinct steps (issue times are sorted): a plain update, not ufunc.at
        self.oio_max[first] = np.maximum(self.oio_max[first], np.maximum.reduceat(level, starts))
        # The level at each step start also counts (IOs carried over from the previous
        # step), for every step up to this chunk's last, idle ones included.
        ks = np.arange(self.next_bound, int(si[-1]) + 1)
        bounds = ks * self.step_ns
        at_b = (
            self.issued
            + np.searchsorted(ti, bounds, side="left")
            - (self.completed + np.searchsorted(done, bounds, side="right"))
        )
        self.oio_max[ks] = np.maximum(self.oio_max[ks], at_b)
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

    def _closed_steps(self, n_steps: int) -> tuple[np.ndarray, np.ndarray]:
        """Per step: the in-flight time (ns) and the maximum outstanding IO, with anything
        counted past the last step folded into it."""
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
        return inflight, oio_max


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
        return _group_in_duckdb(step, seq, w, size, lat, con)
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
        out.append(
            (
                (st, sq, ww, sz),
                [int(n[k]), int(n[k]) * sz, has, float(ls[k]) if has else 0.0, float(lm[k]) if has else None],
            )
        )
    return out
