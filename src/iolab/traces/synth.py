"""Synthetic traces with known streams: the ground truth for importers, the analyser and
the analysis benchmark.

`generate(spec, out)` writes a normalised IO table whose stream mix is known exactly: each
chunk of IOs holds round(share × chunk) IOs of every stream, in random order, so the true
count of every stream is returned alongside the table. Arrivals are Poisson at `iops`;
response times are exponential with mean `latency_us` (so the average outstanding IO is
iops × latency by Little's law). Sequential streams walk their own region of the device,
one block after the other; random streams pick block-aligned offsets over the whole device.

Generation runs in numpy chunks written as Parquet parts, so a 50-million-IO trace needs
memory for one chunk only.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iolab.core.errors import IolabError
from iolab.core.workload import Stream
from iolab.traces.table import IMPORT_MEMORY, TraceTable, connect, sql_str, write_table


@dataclass(frozen=True)
class SynthSpec:
    streams: tuple[Stream, ...]
    ios: int
    iops: float = 10_000.0
    latency_us: float | None = 200.0  # mean; None writes a trace without response times
    capacity: int = 1 << 40  # bytes addressed (1 TiB)
    device: str = "synth0"
    process: str = "synth"
    seed: int = 1
    chunk: int = 2_000_000  # IOs generated per numpy batch


@dataclass(frozen=True)
class SynthTruth:
    """What the generator put in: the exact IO count of every stream."""

    counts: dict[Stream, int]  # keys carry share = the spec's share

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def share(self, access: str, op: str, block_size: int) -> float:
        for s, n in self.counts.items():
            if (s.access, s.op, s.block_size) == (access, op, block_size):
                return n / self.total
        return 0.0


def generate(spec: SynthSpec, out: str | Path) -> tuple[TraceTable, SynthTruth]:
    """Write the synthetic trace to `out` (Parquet) and return it with its ground truth."""
    _check_spec(spec)
    ios = _IOs(spec)
    tmpdir = Path(tempfile.mkdtemp(prefix="iolab-synth-"))
    parts: list[str] = []
    con = connect(memory_limit=IMPORT_MEMORY)
    try:
        done = 0
        while done < spec.ios:
            n = min(spec.chunk, spec.ios - done)
            part = tmpdir / f"part{len(parts):05d}.parquet"
            _write_part(con, spec, ios.chunk(n), part)
            parts.append(str(part))
            done += n
        files = "[" + ", ".join(sql_str(p) for p in parts) + "]"
        table = write_table(
            con,
            f"SELECT * FROM read_parquet({files})",
            out,
            fmt="synthetic",
            sources=(f"synthetic seed={spec.seed}",),
            origin_ns=0,
            presorted=True,
        )
    finally:
        con.close()
        shutil.rmtree(tmpdir, ignore_errors=True)
    truth = SynthTruth({s: int(c) for s, c in zip(spec.streams, ios.counts)})
    return table, truth


def _check_spec(spec: SynthSpec) -> None:
    if spec.ios <= 0:
        raise IolabError("synthetic trace: ios must be > 0")
    if abs(sum(s.share for s in spec.streams) - 1) > 1e-6:
        raise IolabError("synthetic trace: stream shares must add up to 1")
    keys = {(s.access, s.op, s.block_size) for s in spec.streams}
    if len(keys) != len(spec.streams):
        raise IolabError("synthetic trace: each (access, op, block size) may appear once")


class _IOs:
    """The trace's IOs, one chunk at a time: the clock, each sequential stream's position
    and every stream's count carry over from chunk to chunk."""

    def __init__(self, spec: SynthSpec):
        self.spec = spec
        self.rng = np.random.default_rng(spec.seed)
        self.n_streams = len(spec.streams)
        self.shares = np.array([s.share for s in spec.streams])
        self.bs = np.array([s.block_size for s in spec.streams], dtype=np.int64)
        self.is_seq = np.array([s.access == "seq" for s in spec.streams])
        self.ops = np.array([0 if s.op == "read" else 1 for s in spec.streams], dtype=np.int8)
        # Each sequential stream gets its own slice of the device so two streams never abut.
        self.region = spec.capacity // max(1, self.n_streams)
        self.seq_pos = np.zeros(self.n_streams, dtype=np.int64)  # blocks already written per seq stream
        self.counts = np.zeros(self.n_streams, dtype=np.int64)
        self.t_ns = 0.0

    def chunk(self, n: int) -> dict:
        """The next `n` IOs as columns (latency_us only when the spec has response times)."""
        spec, rng, bs = self.spec, self.rng, self.bs
        per = np.floor(self.shares * n).astype(np.int64)
        # Hand the rounding remainder to the largest fractional parts: exact total n.
        rest = n - per.sum()
        if rest:
            per[np.argsort(-(self.shares * n - per))[:rest]] += 1
        label = rng.permutation(np.repeat(np.arange(self.n_streams), per))
        self.counts += per

        gaps = rng.exponential(1e9 / spec.iops, n)
        times = self.t_ns + np.cumsum(gaps)
        self.t_ns = float(times[-1])
        size = bs[label]
        # Random: a block-aligned offset anywhere on the device.
        offset = (rng.integers(0, spec.capacity // size, n) * size).astype(np.int64)
        for s in np.flatnonzero(self.is_seq):
            idx = np.flatnonzero(label == s)
            k = self.seq_pos[s] + np.arange(len(idx), dtype=np.int64)
            blocks_in_region = self.region // bs[s]
            offset[idx] = s * self.region + (k % blocks_in_region) * bs[s]
            self.seq_pos[s] += len(idx)
        lat = rng.exponential(spec.latency_us, n) if spec.latency_us is not None else None
        return {
            "time_ns": times.astype(np.int64),
            "opi": self.ops[label],
            "offset_bytes": offset,
            "size_bytes": size,
            **({"latency_us": lat} if lat is not None else {}),
        }


def _write_part(con, spec: SynthSpec, chunk: dict, part: Path) -> None:
    """One chunk of IOs as a Parquet part of the table."""
    con.register("chunk", chunk)
    lat_sql = "latency_us" if "latency_us" in chunk else "CAST(NULL AS DOUBLE)"
    con.execute(
        f"COPY (SELECT time_ns, {sql_str(spec.device)} AS device,"
        " CASE opi WHEN 0 THEN 'read' ELSE 'write' END AS op, offset_bytes, size_bytes,"
        f" {sql_str(spec.process)} AS process, {lat_sql} AS latency_us FROM chunk)"
        f" TO {sql_str(str(part))} (FORMAT parquet)"
    )
    con.unregister("chunk")
