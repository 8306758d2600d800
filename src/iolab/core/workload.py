"""What to run: IO streams and workloads (the contract between tests and engines).

A `Workload` says everything an engine needs for one measurement period and nothing about
which test asked for it. Engines translate it (fio job file, simulator call); tests build it.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from iolab.core.errors import IolabError
from iolab.core.units import kib_label

# Far above what any drive needs; a larger number is a slip of the keyboard, and would
# exhaust memory or overflow the engines' integers rather than run.
MAX_THREADS = 4096
MAX_QUEUE_DEPTH = 65536

Access = Literal["rnd", "seq"]
Op = Literal["read", "write"]


@dataclass(frozen=True)
class Stream:
    """One IO stream: (RND|SEQ, block size, READ|WRITE) and its share of the IOs (0..1)."""

    access: Access
    op: Op
    block_size: int  # bytes
    share: float = 1.0

    def label(self) -> str:
        return f"{self.access.upper()} {kib_label(self.block_size)} {self.op[0].upper()}"


@dataclass(frozen=True)
class Workload:
    """A stream mix run at a fixed outstanding IO for a time or byte budget.

    `entropy` is the fraction of each block that is incompressible: 1.0 is random data (the
    PTS requirement), 0.0 is fully compressible. `active_range` is the fraction of the
    target's capacity addressed, from LBA 0 (PTS-E 1.0, PTS-C 0.75). `rate_iops` caps the
    total demand (open loop); None runs flat out at `threads` × `queue_depth`.
    """

    streams: tuple[Stream, ...]
    threads: int = 1
    queue_depth: int = 1
    active_range: float = 1.0
    entropy: float = 1.0
    rate_iops: int | None = None
    duration_s: float | None = None
    # Warm-up before `duration_s` (fio ramp_time): run, never measured (QoS rounds: 9 s + 51 s).
    ramp_s: float = 0.0
    bytes_budget: int | None = None
    # Each second's maximum latency too (fio: a histogram log of ~6 KB per job per second, so
    # only where a test reads it: IO consistency).
    max_per_second: bool = False
    name: str = ""
    # Free-form reproducibility tag: a seed for engines that randomise (sim, fio randseed).
    seed: int = 0x10AB
    extra: tuple[tuple[str, str], ...] = field(default=())
    # Skewed random offsets: (share of the random IOs, share of the active range) per zone,
    # laid out from the start of the range (the CBW's 50 % of IOs to the first 5 %, …). Empty:
    # uniform. Sequential streams ignore it.
    zones: tuple[tuple[float, float], ...] = ()
    # (index, count): this workload is leg `index` of the `count` legs of a split round (--paths,
    # --hosts) that open one target at once. Its sequential streams address only their leg's part
    # of the active range, so those legs stream it once between them (`leg_part`); a host with a target of its own is alone on it. A leg's, never a cell's: the
    # stored record of a cell's workload leaves it out (run/runner.py: workload_record).
    leg: tuple[int, int] = (0, 1)

    def __post_init__(self) -> None:
        if not self.streams:
            raise IolabError(f"workload {self.name!r}: needs at least one stream")
        total = sum(s.share for s in self.streams)
        if abs(total - 1.0) > 1e-6:
            raise IolabError(f"workload {self.name!r}: stream shares add up to {total:.4f}, not 1")
        if self.threads < 1 or self.queue_depth < 1:
            raise IolabError(f"workload {self.name!r}: threads and queue depth must be ≥ 1")
        if self.threads > MAX_THREADS or self.queue_depth > MAX_QUEUE_DEPTH:
            raise IolabError(
                f"workload {self.name!r}: {self.threads} threads × QD {self.queue_depth}; at most "
                f"{MAX_THREADS:,} threads and QD {MAX_QUEUE_DEPTH:,}"
            )
        if not 0 < self.active_range <= 1:
            raise IolabError(f"workload {self.name!r}: active range must be in (0, 1]")
        if not 0 <= self.entropy <= 1:
            raise IolabError(f"workload {self.name!r}: entropy must be in [0, 1]")
        if self.zones and (
            any(io < 0 or span <= 0 for io, span in self.zones)
            or abs(sum(io for io, _ in self.zones) - 1) > 1e-6
            or abs(sum(span for _, span in self.zones) - 1) > 1e-6
        ):
            raise IolabError(
                f"workload {self.name!r}: zones {self.zones}: the IO shares and the range shares must each add up to 1"
            )
        if not 0 <= self.leg[0] < self.leg[1]:
            raise IolabError(f"workload {self.name!r}: leg {self.leg[0]} of {self.leg[1]} is not one of its legs")
        if not 0 <= self.ramp_s <= 24 * 3600:
            raise IolabError(f"workload {self.name!r}: warm-up must be 0 to 24 h, not {self.ramp_s!r} s")
        if self.duration_s is None and self.bytes_budget is None:
            raise IolabError(f"workload {self.name!r}: give a duration or a byte budget")

    # -- convenient constructors used by the test definitions ---------------------------
    @classmethod
    def mix(cls, access: Access, read_pct: float, block_size: int, **kw: Any) -> Workload:
        """The PTS shape: one access pattern, one block size, a read percentage."""
        streams = []
        if read_pct > 0:
            streams.append(Stream(access, "read", block_size, read_pct / 100))
        if read_pct < 100:
            streams.append(Stream(access, "write", block_size, 1 - read_pct / 100))
        return cls(streams=tuple(streams), **kw)

    # -- derived facts ------------------------------------------------------------------
    @property
    def outstanding(self) -> int:
        return self.threads * self.queue_depth

    @property
    def read_pct(self) -> float:
        return 100.0 * sum(s.share for s in self.streams if s.op == "read")

    @property
    def accesses(self) -> set[str]:
        return {s.access for s in self.streams}

    def leg_part(self, size: int) -> tuple[int, int]:
        """(offset, bytes) of the `size`-byte active range this leg's sequential streams address:
        its own contiguous part, in whole largest blocks, instead of every leg re-reading block 0
        (the drive would serve the second stream from its cache, and a fill would write half the
        drive twice). A leg alone on its target (no split, a host's own target) has it all."""
        (leg, legs), max_bs = self.leg, max(s.block_size for s in self.streams if s.access == "seq")
        span = size // legs // max_bs * max_bs
        return (leg * span, span) if legs > 1 and span >= max_bs else (0, size)

    def leg_said(self, size: int) -> str:
        """The leg's part of the range where its sequential streams take one (`leg_part`), else ''."""
        start, span = self.leg_part(size) if "seq" in self.accesses else (0, size)
        return (
            ""
            if (start, span) == (0, size)
            else f"part {self.leg[0] + 1} of {self.leg[1]}: {span} B from offset {start}"
        )

    def seed_for(self, tag: str) -> int:
        """The random seed for one run of this workload, tagged by its round and cell.

        Every round would otherwise replay the same offsets in the same order (a short round
        on a large drive would rewrite the same LBAs each round, which is not the uniform
        random the PTS asks for). Mixing in the tag keeps each round different and every run
        reproducible: same plan, same tags, same offsets. All engines use this.
        """
        return (self.seed ^ zlib.crc32(tag.encode())) & 0xFFFF_FFFF

    def with_(self, **changes: Any) -> Workload:
        return replace(self, **changes)

    def label(self) -> str:
        if self.name:
            return self.name
        return " + ".join(s.label() for s in self.streams)
