"""What a stream analysis is (the method is in streams.py): the SEQ rule, each stream over the
whole trace, each capture step, and the whole analysis with its text summary and its JSON
file (`StreamAnalysis.save(path)` / `StreamAnalysis.load(path)`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.safefile import read_text
from iolab.core.units import counted, human_span, kib_label
from iolab.core.workload import Stream


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
    partial: bool = False  # shorter than a step: the trace ends inside it (only the last step)


# A final partial step shorter than this share of a step is left out of the per-step average
# and maximum and of the replay: its rates are IOs over its true length, but over a few µs one
# or two IOs read as hundreds of thousands of IOPS, which would become the trace's "max" and
# its replay's last step. A longer partial step counts, over its true length.
MIN_PARTIAL_SHARE = 0.5


NO_DATA = "not available: the trace holds no data"


@dataclass(frozen=True)
class DataSample:
    """What the data of the blocks a capture saw written is like (RWSW Fig. 10): read back
    from the device after the capture, a bounded sample of the whole 4 KiB blocks inside the
    written ranges (datasample.py). Each block is compressed alone (zstd, as a drive that
    compresses per logical block would) and hashed: a duplicate is a block whose content an
    earlier block of the sample had, so in a partial sample the share counts only the pairs
    both sampled."""

    block_size: int  # bytes (4096)
    written_bytes: int  # distinct bytes the trace wrote (ranges merged)
    written_blocks: int  # whole aligned blocks inside those ranges: what can be sampled
    blocks: int  # blocks read (distinct, chosen at random when not all fit the bound)
    zstd_level: int
    compressed_bytes: int  # the sampled blocks, each compressed alone
    duplicate_blocks: int  # sampled blocks whose content an earlier sampled block had
    zero_blocks: int  # sampled blocks of zeros only (duplicates of each other too)

    @property
    def compression_ratio(self) -> float | None:
        return self.blocks * self.block_size / self.compressed_bytes if self.blocks else None

    @property
    def duplicate_share(self) -> float | None:
        return self.duplicate_blocks / self.blocks if self.blocks else None

    def text(self) -> str:
        if not self.blocks:
            return (
                "written data: no whole 4 KiB block was written during the capture"
                + (f" ({self.written_bytes:,} B in smaller pieces)" if self.written_bytes else "")
                + "; nothing to sample"
            )
        every = self.blocks == self.written_blocks
        return (
            f"written data: {self.blocks:,} blocks of {kib_label(self.block_size)} read back"
            + (
                " (every whole block written)"
                if every
                else f" ({100 * self.blocks / self.written_blocks:.2g} % of the {self.written_blocks:,} written, at random)"
            )
            + f": zstd -{self.zstd_level} compresses them {self.compression_ratio:.2f}:1 (each block alone); "
            f"{100 * (self.duplicate_share or 0):.1f} % of the blocks duplicate an earlier one"
            + ("" if every else " in the sample")
            + f"; {100 * self.zero_blocks / self.blocks:.1f} % are zeros"
        )


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
    data: DataSample | None = None  # the capture's sample of the written data (None: none)

    @property
    def dominant(self) -> tuple[StreamStat, ...]:
        return tuple(s for s in self.streams if s.dominant)

    @property
    def dominant_pct(self) -> float:
        """% of all analysed IOs that belong to a dominant stream."""
        return sum(s.pct for s in self.dominant)

    def short_step(self) -> StepStat | None:
        """The final partial step when it is shorter than MIN_PARTIAL_SHARE of a step and not
        the trace's only step (a trace shorter than a step is that one step): left out of the
        per-step average and maximum and of the replay."""
        last = self.steps[-1] if len(self.steps) > 1 else None
        if last is None or not last.partial or last.duration_s >= MIN_PARTIAL_SHARE * self.step_s:
            return None
        return last

    def rated_steps(self) -> tuple[StepStat, ...]:
        """The steps the per-step average and maximum are taken over (all but short_step)."""
        return self.steps[:-1] if self.short_step() is not None else self.steps

    def partial_note(self) -> str | None:
        """What the analysis did with a final partial step, for its summary and analysis.json."""
        last = self.steps[-1] if self.steps else None
        if last is None or not last.partial:
            return None
        length = f"{human_span(last.duration_s)} of a {human_span(self.step_s)} step: the trace ends inside it"
        if len(self.steps) == 1:
            return (
                f"the only step is partial ({length}); its figures are over its true length, "
                "the whole trace, and it is replayed for that length."
            )
        if self.short_step() is None:
            return f"step {last.index} is partial ({length}); its figures are over its true length."
        return (
            f"step {last.index} is partial ({length}), shorter than {MIN_PARTIAL_SHARE:.0%} of a step: "
            "its figures (over its true length) are left out of the per-step average and maximum "
            "and of the replay."
        )

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
            f"{self.source} ({self.fmt}): {counted(self.total_ios, 'read or write', 'reads and writes')}, {counted(len(self.steps), 'step')} of "
            f"{self.step_s:g} s ({human_span(self.duration_s)})"
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
        head += [
            "",
            f"dominant streams (≥ {self.threshold * 100:g} %): {len(self.dominant)}, "
            f"{self.dominant_pct:.1f} % of the IOs; read {self.read_pct():.1f} %",
        ]

        def rng(name: str, vals: list, fmt: str) -> str:
            vals = [v for v in vals if v is not None]
            if not vals:
                return f"{name}: not in this trace"
            if len(self.steps) == 1:  # one step: an average or a maximum over steps would say more than it is
                return f"{name}: {format(vals[0], fmt)} (the only step, {human_span(self.steps[0].duration_s)})"
            return f"{name}: average over steps {format(sum(vals) / len(vals), fmt)}, max {format(max(vals), fmt)}"

        rated = self.rated_steps()  # a short final step's rates are not the trace's maximum
        head += [
            "per step " + rng("IOPS", [x.iops for x in rated], ",.0f"),
            "per step " + rng("MB/s", [x.mbps for x in rated], ",.1f"),
            "per step "
            + rng("average outstanding IO", [x.oio_avg for x in rated], ",.2f")
            + ("" if not self.has_latency else f"; peak {max((x.oio_max or 0) for x in self.steps)}"),
            "per step "
            + rng("average response time µs", [x.rt_avg_us for x in rated], ",.1f")
            + ("" if not self.has_latency else f"; max {max((x.rt_max_us or 0) for x in self.steps):,.1f} µs"),
        ]
        head.append(self.data.text() if self.data else f"written data (compressibility, duplicates): {NO_DATA}")
        head += [f"note: {n}" for n in self.notes]
        return "\n".join(head)

    # -- persistence ----------------------------------------------------------------------
    def to_json(self) -> dict:
        d = asdict(self)
        if self.data is None:  # files of traces without data stay as they were
            del d["data"]
        return d

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return p

    @classmethod
    def load(cls, path: str | Path) -> StreamAnalysis:
        p = Path(path)
        try:
            text = read_text(p, "stream analysis file", "document")
        except FileNotFoundError:
            raise IolabError(f"{p}: no such stream analysis file.") from None
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise IolabError(f"{p}:{e.lineno}: not valid JSON ({e.msg}).") from None
        except RecursionError:
            raise IolabError(f"{p}: nested too deeply to be a stream analysis iolab wrote.") from None
        try:
            d["seq"] = SeqRule(**d["seq"])
            d["streams"] = tuple(StreamStat(**s) for s in d["streams"])
            d["steps"] = tuple(
                StepStat(**{**s, "streams": tuple((int(i), int(n)) for i, n in s["streams"])}) for s in d["steps"]
            )
            d["devices"] = tuple(d["devices"])
            d["notes"] = tuple(d.get("notes", ()))
            d["data"] = DataSample(**d["data"]) if d.get("data") is not None else None
            return cls(**d)
        except (KeyError, TypeError, ValueError) as e:
            raise IolabError(
                f"{p}: not a stream analysis written by iolab ({type(e).__name__}: {e}); "
                "re-run the analysis to rebuild it."
            ) from None
