"""A percentage a user writes for a test's parameter (`--set NAME=VALUE`): the parsers of the
percentage-valued parameters and the one rule every one of them follows.

The rule: a number is a percentage, written with its '%' or without ('5' and '5%' are 5 %), as
every iolab option and fio's rwmixread=70 take it. A number from above 0 to 1 written without
'%' is refused (refuse_fraction_like says why): a user who thinks in fractions writes
min_gain=0.002 for 0.2 % and got 0.002 %, a stop rule 100 times finer than meant, with no word.
0 is 0 either way, and a bare number above 1 is no fraction of the whole, so both stand.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from iolab.core.errors import IolabError
from iolab.core.units import ascii_number

# how a percentage is written, as `iolab tests TEST` and the refusal say it
PERCENT_NOTE = "a percentage: 5 or 5%; from above 0 to 1 only with its %, e.g. 0.5%"


def number(text: str) -> float:
    """A number in ASCII (ascii_number): float() also read ٥ or ５ as 5 and 1_0 as 10."""
    v = ascii_number(text)
    if v is None:
        raise ValueError(text)
    return v


def _fraction_value(text: str) -> float:
    t = text.strip()
    try:
        return number(t[:-1] if t.endswith("%") else t) / 100
    except ValueError:
        raise ValueError("give a percentage (2 or 2%)") from None


# A share (a tolerance, a gain, a cliff): a percentage, held as the fraction it is. Runs stored
# before the rule kept the text given, where a bare number was a fraction: testparams.legacy_shares
# reads those.


def fraction(text: str) -> float:
    """'2%' or '2' -> 0.02."""
    v = _fraction_value(text)
    if not math.isfinite(v) or not 0 <= v <= 1:
        raise ValueError("give a percentage from 0% to 100%")
    return v


def fraction_below_one(text: str) -> float:
    """A share short of the whole, as a stop rule's share takes it (core/decide.py refuses 100 %):
    its range said for every value out of it, not fraction's 0 % to 100 % first and this one after."""
    v = _fraction_value(text)
    if not math.isfinite(v) or not 0 <= v < 1:
        raise ValueError("give a percentage from 0% to below 100%")
    return v


def share_within(text: str) -> float:
    """A share strictly between none and the whole ('75%' or '75'), as a cliff's rate after it
    against the rate in it is: at 0 % no drive's rate falls below it, at 100 % every dip is a cliff."""
    v = _fraction_value(text)
    if not math.isfinite(v) or not 0 < v < 1:
        raise ValueError("give a share above 0% and below 100%")
    return v


SHARES: tuple[Callable[[str], float], ...] = (fraction, fraction_below_one, share_within)


def read_percent(text: str) -> int:
    """A read share: a whole percentage from 0 to 100 ('70' or '70%')."""
    # in ASCII digits, as every parameter: int() read '٥٠' as 50, and said of 'abc' "invalid
    # literal for int() with base 10"
    s = text.strip().removesuffix("%").strip()
    if not re.fullmatch(r"[0-9]{1,3}", s) or not 0 <= int(s) <= 100:
        raise ValueError("give a read percentage from 0 to 100")
    return int(s)


def reads_as_fraction(text: str) -> float | None:
    """The value of a percentage (or list of them) written so that it reads as a fraction as well
    ('0.002', '1', '0,0.5,1': no '%', every number at most 1 and one above 0), for the refusal to
    name; None when it reads one way only, or does not parse (its parser then says why)."""
    if "%" in text:
        return None
    values = [ascii_number(x.strip()) for x in re.split(r"[,:]", text)]
    if not values or any(v is None for v in values):
        return None
    numbers = [v for v in values if v is not None]
    return next((v for v in numbers if v > 0), None) if min(numbers) >= 0 and max(numbers) <= 1 else None


def _ambiguous_text(setting: str, text: str, value: float) -> str:
    """The refusal of a percentage that reads as a fraction as well (reads_as_fraction)."""
    v, whole = f"{value:.12g}", f"{value * 100:.12g}"
    return (
        f"{setting}: {v} without its unit reads as {v} %, but as a fraction it is {whole} %, 100 times more; "
        f"which is meant cannot be told. A percentage is written 5 or 5%, and from above 0 to 1 only with "
        f"its %: write {v}% for {v} %, or {whole}% for the fraction {v}."
    )


def refuse_fraction_like(option: str, text: str, named: str = "", more: str = "") -> None:
    """The one refusal of a percentage that reads as a fraction as well, for a command-line
    option's (--active-range, --max-regression, --threshold, --outlier-min-pct) as for a --set
    parameter's (testparams.check_known): `--max-regression 0.05` was 0.05 % where a user thinking
    in fractions meant 5 %, a check 100 times stricter, said nowhere. `named`: how the refusal
    names the setting where 'OPTION TEXT' does not (a parameter's "--set NAME='TEXT' (test T)");
    `more`: what it says of the setting before its last words (the parameter's help)."""
    if (v := reads_as_fraction(str(text))) is not None:
        said = named or f"{option} {str(text).strip()}"
        raise IolabError(
            f"{_ambiguous_text(said, str(text), v)} {more + ' ' if more else ''}Nothing was run or written."
        )
