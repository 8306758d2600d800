"""One run against a spec sheet: each criterion beside the measured figure it is judged
against, with a verdict in words, for a drive's front page.

The pass/fail arithmetic is specsheet.judge's (the fleet report's); this module adds what a
single run's page needs on top of it:

- whether the run's figures may stand for the drive at all. A run that is not PTS-compliant
  for any reason (quick, shortened cells, no purge, a limited active range ...), a run whose
  steady state was not reached or not evaluated, an incomplete run or one whose self-audit
  failed (or whose audit marks the figure) measured
  something, but not the drive's sustained performance: its figures are shown, and each
  verdict is "not judged: <why>", never "meets";
- the verdict as a sentence: by how much a figure falls short of a minimum or goes over a
  maximum (a latency is a maximum: lower is better), so a reader needs no table to see it.

Pure: inputs are the run record (`pages/outcome.run_record`: state, profile, steady state,
non-compliance, audit, key figures) and any further figures the caller measured (endurance)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iolab.core.steady import STEADY_NOT_SHOWN
from iolab.core.units import given, num
from iolab.figures.specsheet import Criterion, SpecSheet, judge, not_measured_hint

VERDICTS = ("meets", "short", "over", "not-judged", "not-measured", "no-unit")


@dataclass(frozen=True)
class Measured:
    """A figure the run measured, as the front page shows it."""

    name: str
    value: float
    unit: str
    audit: tuple[str, ...] = ()  # failed audit invariants that touch this figure
    basis: str = ""  # what a derived figure rests on, shown beside it
    # the steady-state caveats the figure carries, in words (figure_steady): a steady SEQ 1024KiB
    # phase's figures are judged though the SEQ 128KiB phase after it was not steady
    steady: tuple[str, ...] = ()


@dataclass(frozen=True)
class SpecLine:
    criterion: Criterion
    measured: Measured | None  # None: the run did not measure the criterion's figure
    value: float | None  # the measured figure in the criterion's unit
    verdict: str  # one of VERDICTS
    text: str  # the verdict in words
    # not measured: why, in a few words, for the table that names the figure beside its verdict
    missing: str = ""


def run_reasons(record: dict) -> list[str]:
    """Why none of this run's figures may be presented as the drive's (empty: they may). Steady
    state is judged per figure (figure_steady): a figure of a steady phase stands."""
    why = []
    if record.get("state") != "complete":
        why.append(f"{record.get('state')} run")
    if (record.get("profile") or {}).get("quick"):
        why.append("quick run")
    for entry in record.get("noncompliance") or ():
        # every reason the run is not PTS-compliant (1 s cells, no purge, a write cache other
        # than the profile's ...) keeps its figures from standing for the drive, as --quick
        # does: a verdict on them would be one on conditions the spec does not describe
        if entry == "quick profile":
            continue  # said above as "quick run"
        if entry.startswith("active range"):
            # "active range 12 %: not the drive's steady state (tested capacity limited ...)" or a
            # user's --active-range below the profile's: figures of part of the drive
            why.append(f"limited range ({entry.split(':')[0].split(' (')[0]})")
        else:
            why.append(entry)
    failed = (record.get("audit") or {}).get("failed") or []
    if failed:
        why.append(f"audit failed ({', '.join(failed)})")
    return why


def figure_steady(record: dict, name: str) -> tuple[str, ...]:
    """Why figure `name` is not at steady state, in words ("steady state not achieved"): the
    caveats its record entry carries (outcome's --json `caveats`, header.figure_caveats: a figure
    that names its phase carries that phase's alone, as `show` marks it [a]). A figure the record
    does not list (a DWPD worked out from the run) carries the whole run's steady state."""
    for f in record.get("figures") or ():
        if f.get("name") == name:
            return tuple(str(c).lower() for c in f.get("caveats") or ())
    steady = record.get("steady_state")
    return (f"steady state {steady.replace('-', ' ')}",) if steady in STEADY_NOT_SHOWN else ()


def figures_steady(record: dict) -> dict[str, tuple[str, ...]]:
    """figure_steady of each key figure the record lists with a caveat."""
    return {f["name"]: s for f in record.get("figures") or () if (s := figure_steady(record, f["name"]))}


def unmeasured_figures(record: dict) -> dict[str, str]:
    """The key figures the run has without a value, each with why where the record says
    (`unmeasured`: "its 86,400 IOs are too few for a 99.999 % ..."), else ''."""
    return {
        f["name"]: str(f.get("unmeasured") or "")
        for f in record.get("figures") or ()
        if not isinstance(f.get("value"), (int, float)) or isinstance(f.get("value"), bool)
    }


def record_figures(record: dict) -> list[Measured]:
    """The key figures a run record holds with a value (a figure the run could not compute is
    not measured)."""
    out = []
    for f in record.get("figures") or ():
        v = f.get("value")
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf"):
            steady = figure_steady(record, f["name"])
            out.append(Measured(f["name"], float(v), f["unit"], tuple(f.get("audit") or ()), steady=steady))
    return out


# The measured figure is printed as `iolab show` prints it (units.num), the sheet's bounds and
# claim as the sheet wrote them (units.given): one rule each, the fleet's and the front page's.


def _claim(c: Criterion) -> str:
    return f"; the data sheet claims {given(c.claim)}" if c.claim is not None else ""


def _judged(c: Criterion, m: Measured, v: float) -> tuple[str, str]:
    unit = c.unit or m.unit
    u = f" {unit}" if unit else ""
    if c.min is not None and v < c.min:
        pct = 100 * (c.min - v) / c.min if c.min else 0.0
        return "short", f"{c.name}: {pct:.0f} % short ({num(v)} of {given(c.min)}{u}){_claim(c)}"
    if c.max is not None and v > c.max:
        pct = 100 * (v - c.max) / c.max if c.max else 0.0
        return "over", f"{c.name}: {pct:.0f} % over the maximum ({num(v)}, at most {given(c.max)}{u}){_claim(c)}"
    return "meets", f"{c.name}: meets the {c.bounds_text(unit) or '-'} spec ({num(v)}{u}){_claim(c)}"


def match(
    sheet: SpecSheet, figures: Sequence[Measured], reasons: Sequence[str], unmeasured: Mapping[str, str] | None = None
) -> list[SpecLine]:
    """Each criterion of `sheet` against the run's `figures`; `reasons` (run_reasons) make every
    measured figure "not judged", as do failed audit invariants that touch the figure.
    `unmeasured` (unmeasured_figures): figures of the run's test it has no value for, and why."""
    unmeasured = unmeasured or {}
    by_name = {m.name: m for m in figures}
    # a unit that does not apply is shown "not judged" here rather than refused: this page is
    # written as a run ends, and refusing would leave the run without any report
    verdicts = judge(
        "run", {m.name: m.value for m in figures}, {m.name: m.unit for m in figures}, sheet, strict_units=False
    )
    out = []
    for c, v in zip(sheet.criteria, verdicts):
        m = by_name.get(c.figure)
        if m is None:
            hint = not_measured_hint(c.figure, list(by_name), unmeasured)
            text = f"{c.name}: not measured by this run{hint}"
            out.append(SpecLine(c, None, None, "not-measured", text, _missing(c.figure, unmeasured)))
            continue
        if v.value is None:  # judge could not convert the figure to the criterion's unit
            out.append(SpecLine(c, m, None, "no-unit", f"{c.name}: not judged: {v.why}"))
            continue
        why = list(reasons) + list(m.steady)
        why += [f"audit marks it ({', '.join(m.audit)})"] if m.audit and not why else []
        if why:
            unit = f" {c.unit or m.unit}" if c.unit or m.unit else ""
            text = f"{c.name}: not judged: {'; '.join(why)} (measured {num(v.value)}{unit})"
            out.append(SpecLine(c, m, v.value, "not-judged", text))
            continue
        verdict, text = _judged(c, m, v.value)
        out.append(SpecLine(c, m, v.value, verdict, text))
    return out


def _missing(figure: str, unmeasured: Mapping[str, str]) -> str:
    """Why the run has no value for `figure`, short: its own test's figure it could not compute
    (and why, as the key-figure table says), or no figure of the run's by that name."""
    if figure in unmeasured:
        return f"not measured: {unmeasured[figure] or 'the run could not compute it'}"
    return "not measured: no figure of this run has this name (the verdict above says which it has)"


def tally(lines: Sequence[SpecLine]) -> str:
    """'2 meet, 1 short, 3 not judged, 1 not measured' (the kinds present, in VERDICTS order)."""
    words = {"meets": "meet", "short": "short", "over": "over", "not-judged": "not judged"}
    words |= {"not-measured": "not measured", "no-unit": "in another unit"}
    counts = [(k, sum(1 for ln in lines if ln.verdict == k)) for k in VERDICTS]
    return ", ".join(f"{n} {words[k]}" for k, n in counts if n)


__all__ = [
    "Measured",
    "SpecLine",
    "figure_steady",
    "figures_steady",
    "match",
    "record_figures",
    "run_reasons",
    "tally",
    "unmeasured_figures",
]
