"""Units used everywhere: sizes in bytes, rates in decimal MB/s, latency in µs.

Block sizes are written in KiB (binary) as the PTS does; capacities and throughput in decimal
GB and MB/s as drives are sold. Parsing accepts both families and says which it used.
"""

from __future__ import annotations

import re

from .errors import IolabError

KiB = 1024
MiB = 1024**2
GiB = 1024**3
TiB = 1024**4
KB = 1000
MB = 1000**2
GB = 1000**3
TB = 1000**4

_SUFFIX = {
    "": 1, "b": 1,
    "k": KiB, "kib": KiB, "m": MiB, "mib": MiB, "g": GiB, "gib": GiB, "t": TiB, "tib": TiB,
    "kb": KB, "mb": MB, "gb": GB, "tb": TB,
}
_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str | int, what: str = "size") -> int:
    """'8GiB' -> bytes. Bare K/M/G are binary (as in fio); KB/MB/GB are decimal."""
    if isinstance(text, int):
        return text
    m = _SIZE_RE.match(str(text))
    if not m or m.group(2).lower() not in _SUFFIX:
        raise IolabError(
            f"{what}: cannot read {text!r} as a size. Use a number with an optional unit: "
            "B, KiB, MiB, GiB, TiB (binary; K/M/G/T mean the same) or KB, MB, GB, TB (decimal)."
        )
    value = float(m.group(1)) * _SUFFIX[m.group(2).lower()]
    if value <= 0:
        raise IolabError(f"{what}: {text!r} must be greater than zero.")
    return int(value)


def parse_duration(text: str | float, what: str = "duration") -> float:
    """'90s', '1m', '24h', '250ms' -> seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|min|h|d)?\s*$", str(text))
    if not m:
        raise IolabError(f"{what}: cannot read {text!r} as a duration (e.g. 250ms, 60s, 5m, 24h).")
    scale = {"ms": 1e-3, "s": 1, None: 1, "m": 60, "min": 60, "h": 3600, "d": 86400}[m.group(2)]
    return float(m.group(1)) * scale


def kib_label(block_size: int) -> str:
    """4096 -> '4KiB', 512 -> '0.5KiB' (the PTS writes block sizes in KiB)."""
    k = block_size / KiB
    return f"{k:g}KiB"


def human_bytes(n: float) -> str:
    for unit, scale in (("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"
