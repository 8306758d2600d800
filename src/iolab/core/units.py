"""Units used everywhere: sizes in bytes, rates in decimal MB/s, latency in µs.

Block sizes are written in KiB (binary) as the PTS does; capacities and throughput in decimal
GB and MB/s as drives are sold. Parsing accepts both families and says which it used.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from iolab.core.errors import IolabError

KiB = 1024
MiB = 1024**2
GiB = 1024**3
TiB = 1024**4
KB = 1000
MB = 1000**2
GB = 1000**3
TB = 1000**4

_SUFFIX = {
    "": 1,
    "b": 1,
    "k": KiB,
    "kib": KiB,
    "m": MiB,
    "mib": MiB,
    "g": GiB,
    "gib": GiB,
    "t": TiB,
    "tib": TiB,
    "kb": KB,
    "mb": MB,
    "gb": GB,
    "tb": TB,
}
# The largest file size the kernel takes (a signed 64-bit offset).
MAX_SIZE = 2**63 - 1
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
    if value > MAX_SIZE:
        raise IolabError(f"{what}: {text!r} is 8 EiB or more; no drive or file is that large.")
    return int(value)


def parse_duration(text: str | float, what: str = "duration") -> float:
    """'90s', '1m', '24h', '250ms' -> seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|min|h|d)?\s*$", str(text))
    if not m:
        raise IolabError(f"{what}: cannot read {text!r} as a duration (e.g. 250ms, 60s, 5m, 24h).")
    scale = {"ms": 1e-3, "s": 1, None: 1, "m": 60, "min": 60, "h": 3600, "d": 86400}[m.group(2)]
    value = float(m.group(1)) * scale
    if not math.isfinite(value):
        raise IolabError(f"{what}: {text!r} is too long to be a duration.")
    return value


# A number a person types in a file or an option: ASCII digits, an optional sign, point and
# exponent. Python's float() also reads 1_000, full-width or Arabic-Indic digits, "inf" and
# "nan", which a reader of the same file or command line would not take for the number read.
_ASCII_NUMBER_RE = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
ASCII_NUMBER = "ASCII digits 0-9 with an optional sign, decimal point and exponent"


def ascii_number(text: str) -> float | None:
    """The number `text` (surrounding spaces allowed) as ASCII writes it; None for anything
    else (1_000, ５, inf, nan, 1,000)."""
    s = text.strip()
    return float(s) if s.isascii() and _ASCII_NUMBER_RE.fullmatch(s) else None


# The same number with its thousands grouped as a data sheet or a person writes them: commas
# (or underscores) only between groups of three digits. Dropping every comma read a decimal
# comma ("35,5") as 355 and a list given to a one-value parameter (qd=1,32) as 132.
_GROUPED_RE = re.compile(r"[-+]?[0-9]{1,3}([,_])[0-9]{3}(?:\1[0-9]{3})*(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?")
GROUPED = "a comma or underscore only between groups of three digits, as in 35,000"


def grouped_number(text: str) -> float | None:
    """ascii_number, also with its thousands grouped (35,000 or 35_000); None for anything else
    (35,5, 1,32, 1,000_000, ３５)."""
    s = text.strip()
    grouped = _GROUPED_RE.fullmatch(s)
    return ascii_number(s.replace(grouped.group(1), "") if grouped else s)


def parse_percent(text: str, what: str = "percentage") -> float:
    """'50', '50%' or '50 %' -> 0.5 (the range is the caller's to check: '-5%' is read, -0.05,
    so that its refusal says it is out of range, not unreadable)."""
    m = re.match(r"^\s*([-+]?[0-9]+(?:\.[0-9]+)?)\s*%?\s*$", str(text))
    if not m:
        raise IolabError(f"{what}: cannot read {text!r} as a percentage; give a number such as 50 or 50%.")
    return float(m.group(1)) / 100


def size_option(n: int) -> str:
    """A size as --capacity-limit takes it, in the unit that writes it shortest and exactly:
    536870912 -> '512MiB', 4000000000 -> '4GB', 1023 -> '1023B' (a size stored without the text
    the user gave)."""
    units = (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB), ("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB))
    exact = [f"{n // u}{name}" for name, u in units if n >= u and n % u == 0]
    return min(exact, key=len) if exact else f"{n}B"


def kib_label(block_size: int) -> str:
    """4096 -> '4KiB', 512 -> '0.5KiB' (the PTS writes block sizes in KiB)."""
    k = block_size / KiB
    return f"{k:.12g}KiB"  # whole digits for any size a drive takes (1 TiB is 1073741824KiB, not 1.07374e+09KiB)


def human_bytes(n: float) -> str:
    for unit, scale in (("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"


# -- printing numbers ---------------------------------------------------------------------------
# One formatter for every number a person reads (report tables, plot ticks and colour bars, the
# terminal views): SIG significant digits, thousands separators, never exponent notation. An
# integer part longer than SIG digits is printed whole (134,567 IOPS, not 134,600), so no
# printed measurement is coarser than SIG digits and none is falsely rounded to zeros.
SIG = 4
# From here on num() prints a mantissa and exponent: whole digits grouped by thousands stop being
# readable (1,000,000,000,000,000), and no figure iolab measures comes near.
HUGE = 1e15
# below it, digits after the point: 1e-300 printed 303 of them
TINY = 1e-6
NONE = "—"


def num(v: float | None, sig: int = SIG, trim: bool = False) -> str:
    """12.46 / 0.08312 / 1,235 / 13,430 / 134,567; from 10^15 on 1.235e+15 (every digit of 1e300
    printed was 301 of them). `trim` drops trailing zeros (axis ticks: 0.5, 1, 1.5 rather than
    0.5000, 1.000, 1.500)."""
    if v is None or math.isnan(v):
        return NONE
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if v == 0:
        return "0"
    if abs(v) >= HUGE or abs(v) < TINY:
        return f"{v:.{sig - 1}e}"
    decimals = max(0, sig - 1 - math.floor(math.log10(abs(v))))
    r = round(v, decimals)
    if r != 0:  # rounding may carry into the next digit (9.9996 -> 10.00): one decimal fewer
        decimals = max(0, sig - 1 - math.floor(math.log10(abs(r))))
    text = f"{r:,.{decimals}f}"
    if trim and "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "0") else text


# A number a person gave (a spec sheet's bound or claim, a latency bound) keeps at most this many
# significant digits: more than anyone writes, fewer than the float noise a unit's factor leaves
# (0.57 ms is 569.9999999999999 µs).
GIVEN_SIG = 12


def given(v: float | None) -> str:
    """A number as the person who gave it wrote its significant digits: num's rule (thousands
    separators, an exponent outside TINY to HUGE) with the digits given rather than SIG, so 0.1 ms
    stays "0.1" (num's "0.1000" claims a precision no one gave), 35000 "35,000", 1234567
    "1,234,567" (not "1.23457e+06"), 0.57 ms in µs "570", 1e-17 "1e-17". A measured value is
    num's: its digits are the instrument's, these the person's."""
    text = num(v, GIVEN_SIG, trim=True)
    if "e" in text:  # num's mantissa keeps its zeros; these are no digits given
        mantissa, exponent = text.split("e")
        text = f"{mantissa.rstrip('0').rstrip('.')}e{exponent}"
    return text


class Given(float):
    """A float option's number (cli/conventions._Number) that keeps the text it was read from:
    float() reads 1e999 as inf, and a refusal that echoed "--outlier-min-pct inf" named a value
    no one wrote. as_given prints it back."""

    text: str

    def __new__(cls, text: str | float) -> Given:
        v = super().__new__(cls, text)
        v.text = str(text).strip()
        return v


def as_given(v: float) -> str:
    """A number in a refusal as the user wrote it: given's digits (1,000; 0.00001, not :g's
    1e-05); one float() could not hold (1e999) as a Given's own text, else as Python names it
    (nan, inf: not a table's missing value)."""
    if math.isfinite(v):
        return given(v)
    return v.text if isinstance(v, Given) else str(v)


def given_percent(pct: float) -> str:
    """A percentage someone gave or a rule holds (a tolerance, a share, an outlier's distance), with
    the digits given: "20 %", "0.00001 %", "99.99999 %". Python's :g printed 1e-05 % and rounded
    99.99999 to 100; 20.0 and 20 are one 20."""
    return f"{given(pct)} %"


def share_text(fraction: float) -> str:
    """A share (0.2) as the percentage a user writes it in (a bare number is a percentage): "20 %"."""
    return given_percent(fraction * 100)


def percent(v: float | None, sign: str = "") -> str:
    """A percentage with one decimal, '+4.5 %' (sign "+"), bounded like num: from 10^6 % on
    '+1.00e+302 %' (a change against a baseline near 0 printed every digit of 10^302)."""
    if v is None or math.isnan(v):
        return NONE
    if math.isinf(v) or abs(v) >= 1e6:
        return f"{v:{sign}.2e} %"
    return f"{v:{sign}.1f} %"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count and its noun in the number it takes: "1 step", "2 steps", "0 complete rounds",
    "1,024 cells". The last word takes the plural: `noun` + "s" unless `plural` is given. (The
    "N step(s)" it replaces printed "1 step(s)"; "{n} steps" printed "1 steps".)"""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def and_list(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def sentence(text: str) -> str:
    """`text` (a clause as a run stores it: "reached the round limit (5) without steady state")
    as a sentence of its own: capital first letter, full stop at its end."""
    text = text.strip()
    if not text:
        return ""
    return text[0].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def denoise(v: float, scale: float) -> float:
    """0 for a value that is floating-point noise next to `scale` (a flat series' fit slope of
    4.5e-15 is a zero slope, and prints as one)."""
    return 0.0 if abs(v) < 1e-9 * max(abs(scale), 1.0) else v


def printed_value(v: float | None, sig: int = SIG) -> float | None:
    """The value exactly as `num` prints it (ranks and ties are judged on what a reader sees)."""
    return None if v is None else float(num(v, sig).replace(",", "").replace("∞", "inf"))


# Engineering units: the prefix (or larger unit) that puts the value in [1, 1000).
_SCALES = {
    "µs": (("µs", 1.0), ("ms", 1e3), ("s", 1e6)),
    "MB/s": (("MB/s", 1.0), ("GB/s", 1e3)),
    "B": (("B", 1.0), ("KB", KB), ("MB", MB), ("GB", GB), ("TB", TB)),
    "GB": (("GB", 1.0), ("TB", 1e3)),
}


def eng(v: float | None, unit: str, sig: int = SIG) -> str:
    """A value with its unit scaled to a readable size: eng(13430, 'µs') -> '13.43 ms',
    eng(2.5e9, 'B') -> '2.500 GB'. Units without a scale chain print as num(v) + unit."""
    if v is None:
        return NONE
    name, div = unit, 1.0
    for n, d in _SCALES.get(unit, ()):
        if abs(v) >= d * 0.9995 or d == 1.0:
            name, div = n, d
    return f"{num(v / div, sig)} {name}"


def scale_for(values_us, unit: str = "µs") -> tuple[str, float]:
    """One unit for a whole table or axis (its values share a column header): the engineering
    unit of the median value. Returns (unit, divisor)."""
    vals = sorted(abs(v) for v in values_us if v is not None)
    chain = _SCALES.get(unit, ((unit, 1.0),))
    if not vals:
        return chain[0]
    mid = vals[len(vals) // 2]
    return next(((n, d) for n, d in reversed(chain) if mid >= d), chain[0])


def duration(seconds: float | None, sig: int = 3) -> str:
    """90 -> '90.0 s', 2000 -> '33.3 min', 86400 -> '24.0 h'."""
    if seconds is None:
        return NONE
    for name, d in (("h", 3600.0), ("min", 60.0)):
        if abs(seconds) >= 2 * d:
            return f"{num(seconds / d, sig)} {name}"
    return f"{num(seconds, sig)} s"


def duration_option(seconds: float) -> str:
    """A duration as --cell-time or --wsat-max-time takes it, in the largest unit that writes it
    whole (at least 2 of it, as one says 90s rather than 1.5min): 86400 -> '24h', 60 -> '60s',
    0.25 -> '250ms' (a duration stored as seconds, printed as a user gives it)."""
    for name, unit in (("h", 3600.0), ("min", 60.0), ("s", 1.0)):
        if seconds >= 2 * unit and float(seconds / unit).is_integer():
            return f"{seconds / unit:.0f}{name}"
    return f"{seconds:g}s" if seconds >= 1 else f"{seconds * 1000:g}ms"


def human_span(seconds: float) -> str:
    """A duration for people: '136 ms', '2.5 s', '37.9 h (1.6 days)'."""
    # rounded to the 3 digits shown before the unit is chosen: 999.9996 µs is '1 ms', not '1e+03 µs'
    seconds = float(f"{seconds:.3g}") if seconds < 120 else seconds
    if seconds < 1e-3:
        return f"{seconds * 1e6:,.3g} µs"
    if seconds < 1:
        return f"{seconds * 1e3:,.3g} ms"
    if seconds < 120:
        return f"{seconds:,.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:,.1f} min ({seconds:,.0f} s)"
    text = f"{seconds / 3600:,.1f} h ({seconds:,.0f} s)"
    return text if seconds < 172800 else f"{seconds / 86400:,.1f} days ({seconds:,.0f} s)"


# A p % latency is measured only when at least TAIL_IOS IOs lie beyond it, i.e. the sample has
# n ≥ TAIL_IOS / (1 − p/100) IOs: 99.999 % needs 1,000,000. With fewer it would be read off
# the few slowest IOs (below 100,000 IOs, the single slowest), which says nothing about the
# drive's tail. The choice of 10 is iolab's (no specification states one); tables print such a
# percentile as not measurable with the IO count, and exports leave it empty.
TAIL_IOS = 10


def percentile_min_ios(pct: float) -> int:
    """The fewest IOs a pct % latency is measured from (TAIL_IOS beyond it)."""
    return math.ceil(TAIL_IOS / (1 - pct / 100.0) - 1e-6)


def measurable(pct: float, ios: int | None) -> bool:
    return ios is not None and ios >= percentile_min_ios(pct)


def unmeasured_text(pcts: Sequence[float], ios: int, fewest: int | None = None) -> str:
    """Why a plot holds no mark for these percentiles (`measurable`): the IOs each needs and the
    IOs there were (`fewest`–`ios` for several samples); empty when every one is measured."""
    short = [p for p in pcts if not measurable(p, ios)]
    if not short:
        return ""
    names = " / ".join(f"{p:g}" for p in short)
    need = " / ".join(f"{percentile_min_ios(p):,}" for p in short)
    had = f"{fewest:,}–{ios:,}" if fewest is not None and fewest != ios else f"{ios:,}"
    return f"{names} %: not measured from {had} IOs (a percentile needs {TAIL_IOS} IOs beyond it: {need} IOs)"


def too_few_ios(pct: float, ios: int) -> str:
    """Why a pct % latency of `ios` IOs is not measured (`measurable`), in a clause."""
    return (
        f"its {ios:,} IOs are too few for a {pct:g} % (it needs {percentile_min_ios(pct):,}, "
        f"{TAIL_IOS} of them beyond it)"
    )


def pct_text(v: float | None, ios: int | float | None, pct: float | None = None) -> str:
    """A latency percentile in a table: the value, or "n/m" with the IO count when the IOs
    cannot measure it (`measurable`; a value read off too few IOs, as stored, is not shown)."""
    if ios and (v is None or (pct is not None and not measurable(pct, int(ios)))):
        return f"n/m ({int(ios):,} IOs)"
    return num(v)
