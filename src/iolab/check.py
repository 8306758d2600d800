"""`iolab check`: is a candidate worse than a baseline beyond noise? Per key figure, aware of
its direction, on run records (outcome.run_record, or the `runs` of a saved --json document).

Noise. Each side is a mean with its standard error: with several runs on a side (repeats),
their figures' mean and spread; with one run, its figure and the spread of the same figure
computed from each steady-state window round alone (`round_values`). The difference of the
two means gets a Welch t confidence interval (95 % unless asked otherwise; Welch-Satterthwaite
degrees of freedom). A side without any spread (one round, identical repeats) adds no noise.

Verdict per figure, with `worse` the change in the figure's bad direction and `noise` the
interval's half-width (both in % of the baseline):
  regression        worse > tolerance and worse > noise (the interval lies on the worse side)
  within-noise      |change| > tolerance, but the interval includes no change
  improvement       better by more than the tolerance and than the noise
  within-tolerance  |change| <= tolerance
  missing           the baseline has the figure, the candidate does not (counts as failing)
  not-measured      the baseline has no value for it (nothing to hold the candidate to)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from .compare import COMPARED_PROFILE_KEYS
from .errors import IolabError
from .safefile import loads_toml, read_text

FAILING = ("regression", "missing")


def parse_pct(text: str | float | int, where: str) -> float:
    """'5%', '5 %' or 5 (percent) -> 0.05."""
    s = str(text).strip().removesuffix("%").strip()
    try:
        v = float(s)
    except ValueError:
        raise IolabError(f"{where}: {text!r} is not a percentage (e.g. 5%).") from None
    if not 0 <= v < 1000 or v != v:
        raise IolabError(f"{where}: {text!r} is out of range (0% to 999%).")
    return v / 100


@dataclass(frozen=True)
class Tolerances:
    """The largest regression allowed, in the figure's bad direction (fractions)."""

    default: float
    per_figure: dict[str, float] = field(default_factory=dict)
    source: str = ""  # the TOML file the overrides came from

    def of(self, name: str) -> float:
        return self.per_figure.get(name, self.default)


def load_tolerances(default: float, path: Path | None) -> Tolerances:
    """A TOML file: `[tolerances]` with one `"FIGURE NAME" = "10%"` line per figure."""
    if path is None:
        return Tolerances(default)
    try:
        data = loads_toml(read_text(path, "tolerances file", "config"), str(path))
    except OSError as e:
        raise IolabError(f"{path}: cannot read the tolerances file ({e.strerror}).") from None
    unknown = sorted(set(data) - {"tolerances"})
    if unknown or not isinstance(data.get("tolerances", {}), dict):
        raise IolabError(
            f'{path}: expected one [tolerances] table of "FIGURE NAME" = "N%" lines; '
            f"found {', '.join(unknown) or 'tolerances as a value'}."
        )
    per = {str(k): parse_pct(v, f"{path}: [tolerances] {k!r}") for k, v in data.get("tolerances", {}).items()}
    return Tolerances(default, per, str(path))


# -- Student's t ----------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (Lentz's method)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-14:
            break
    return h


def _t_cdf(t: float, df: float) -> float:
    x = df / (df + t * t)
    lbeta = math.lgamma(df / 2) + math.lgamma(0.5) - math.lgamma(df / 2 + 0.5)
    front = math.exp(math.log(x) * df / 2 + math.log(1 - x) * 0.5 - lbeta)
    if x < (df / 2 + 1) / (df / 2 + 2.5):
        tail = front * _betacf(df / 2, 0.5, x) / (df / 2)
    else:
        tail = 1 - front * _betacf(0.5, df / 2, 1 - x) / 0.5
    return 1 - tail / 2 if t >= 0 else tail / 2


def t_quantile(p: float, df: float) -> float:
    """The p quantile (p > 0.5) of Student's t with df degrees of freedom."""
    lo, hi = 0.0, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


# -- the comparison -------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    runs: tuple[str, ...]
    mean: float | None
    samples: tuple[float, ...]
    source: str  # repeats | window-rounds | none

    @property
    def var_mean(self) -> float:
        n = len(self.samples)
        return statistics.variance(self.samples) / n if n >= 2 else 0.0

    @property
    def df(self) -> int:
        return max(len(self.samples) - 1, 1)

    def record(self) -> dict:
        return {"runs": list(self.runs), "mean": self.mean, "samples": list(self.samples), "noise_source": self.source}


def side(records: Sequence[dict], name: str) -> Side:
    figs = [next((f for f in r["figures"] if f["name"] == name), None) for r in records]
    ids = tuple(r["run_id"] for r in records)
    values = [f["value"] for f in figs if f is not None and f["value"] is not None]
    if len(records) >= 2:
        return Side(
            ids, statistics.fmean(values) if values else None, tuple(values), "repeats" if len(values) >= 2 else "none"
        )
    if not values:
        return Side(ids, None, (), "none")
    rounds = tuple((figs[0] or {}).get("round_values") or ())  # one record, with the figure (values)
    # a figure that is no window average (WSAT's first interval) is the same in every round: no noise estimate
    return Side(ids, values[0], rounds, "window-rounds" if len(set(rounds)) >= 2 else "none")


def _pct(x: float | None, base: float) -> float | None:
    return None if x is None or base == 0 else 100 * x / abs(base)


def verdict(name: str, unit: str, direction: str, base: Side, cand: Side, tolerance: float, confidence: float) -> dict:
    higher = direction == "higher-is-better"
    out = {
        "name": name,
        "unit": unit,
        "direction": direction,
        "baseline": base.record(),
        "candidate": cand.record(),
        "change_pct": None,
        "worse_pct": None,
        "noise_pct": None,
        "tolerance_pct": 100 * tolerance,
        "method": "",
    }
    if base.mean is None:
        return {**out, "verdict": "not-measured", "method": "the baseline has no value for this figure"}
    if cand.mean is None:
        return {**out, "verdict": "missing", "method": "the candidate has no value for this figure"}
    change = cand.mean - base.mean
    worse = -change if higher else change
    vb, vc = base.var_mean, cand.var_mean
    se = math.sqrt(vb + vc)
    if se > 0:
        df = (vb + vc) ** 2 / sum(v * v / d for v, d in ((vb, base.df), (vc, cand.df)) if v > 0)
        half = t_quantile(0.5 + confidence / 2, df) * se
        sources = sorted({s.source for s in (base, cand) if s.source != "none"})
        method = f"Welch t interval, {confidence:.0%}, {df:.1f} degrees of freedom; noise from " + " and ".join(
            {"repeats": "repeated runs", "window-rounds": "the steady-state window's rounds"}[s] for s in sources
        )
    else:
        half, method = (
            0.0,
            "no noise estimate (no spread on either side): the change is compared with the tolerance only",
        )
    tol_abs = tolerance * abs(base.mean)
    if worse > tol_abs and worse > half:
        v = "regression"
    elif -worse > tol_abs and -worse > half:
        v = "improvement"
    elif abs(change) > tol_abs:
        v = "within-noise"
    else:
        v = "within-tolerance"
    return {
        **out,
        "verdict": v,
        "change_pct": _pct(change, base.mean),
        "worse_pct": _pct(worse, base.mean),
        "noise_pct": _pct(half, base.mean),
        "method": method,
    }


def differences(baseline: Sequence[dict], candidate: Sequence[dict]) -> list[str]:
    """What the runs differ in besides the drive (profile settings that change what is measured)."""
    first, out = baseline[0], []
    for r in [*baseline[1:], *candidate]:
        for k in COMPARED_PROFILE_KEYS:
            a, b = first["profile"].get(k), r["profile"].get(k)
            if a != b:
                out.append(f"{k}: {first['run_id']} {a!r} vs {r['run_id']} {b!r}")
    return out


def check(
    baseline: Sequence[dict],
    candidate: Sequence[dict],
    tolerances: Tolerances,
    confidence: float = 0.95,
    force: bool = False,
) -> dict:
    """The `check` part of the document; `passed` is False when any figure regressed or is
    missing. Runs of different tests are refused; runs with different settings unless forced."""
    if not baseline or not candidate:
        raise IolabError("iolab check needs at least one candidate run and one baseline run.")
    tests = sorted({r["test"] for r in [*baseline, *candidate]})
    if len(tests) > 1:
        raise IolabError(f"check compares runs of one test; these ran {', '.join(tests)}.")
    diffs = differences(baseline, candidate)
    if diffs and not force:
        raise IolabError(
            "the runs measure different things, so their figures are not comparable: "
            + "; ".join(diffs)
            + ". Run both sides with the same settings, or pass --force."
        )
    names = list(dict.fromkeys(f["name"] for r in baseline for f in r["figures"]))
    if not names:
        raise IolabError(f"test {tests[0]!r}: the baseline has no key figures to check.")
    unknown = sorted(set(tolerances.per_figure) - set(names))
    if unknown:
        raise IolabError(
            f"{tolerances.source}: no figure named {', '.join(map(repr, unknown))} in test {tests[0]!r}; "
            f"its figures are: {', '.join(map(repr, names))}."
        )
    meta = {f["name"]: f for r in baseline for f in r["figures"]}
    figures = [
        verdict(
            n,
            meta[n]["unit"],
            meta[n]["direction"],
            side(baseline, n),
            side(candidate, n),
            tolerances.of(n),
            confidence,
        )
        for n in names
    ]
    bad = [f["name"] for f in figures if f["verdict"] in FAILING]
    return {
        "passed": not bad,
        "confidence": confidence,
        "max_regression_pct": 100 * tolerances.default,
        "test": tests[0],
        "differences": diffs,
        "figures": figures,
        "regressions": bad,
        "junit": None,
    }


def junit_xml(result: dict, suite: str = "iolab check") -> str:
    """One test case per figure; a regression or a missing figure is a failure."""
    cases = []
    for f in result["figures"]:
        body = ""
        if f["verdict"] in FAILING:
            msg = summary_line(f)
            body = f"<failure message={quoteattr(msg)} type={quoteattr(f['verdict'])}>{escape(f['method'])}</failure>"
        elif f["verdict"] == "not-measured":
            body = f"<skipped message={quoteattr(f['method'])}/>"
        cases.append(
            f"    <testcase classname={quoteattr(result['test'])} name={quoteattr(f['name'])}>"
            f"{body}<system-out>{escape(summary_line(f))}</system-out></testcase>"
        )
    failures = sum(f["verdict"] in FAILING for f in result["figures"])
    skipped = sum(f["verdict"] == "not-measured" for f in result["figures"])
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites name={quoteattr(suite)} tests="{len(cases)}" failures="{failures}">\n'
        f'  <testsuite name={quoteattr(suite + ": " + result["test"])} tests="{len(cases)}" '
        f'failures="{failures}" skipped="{skipped}" errors="0">\n'
        + "\n".join(cases)
        + "\n  </testsuite>\n</testsuites>\n"
    )


def _num(v: float | None) -> str:
    return "—" if v is None else f"{v:,.4g}"


def summary_line(f: dict) -> str:
    """'ART RND 4KiB R/W 65/35: regression, 103.7 -> 117.9 µs (+13.7 %, noise ±0.8 %, tolerance 5 %)'."""
    b, c = f["baseline"]["mean"], f["candidate"]["mean"]
    pct = "" if f["change_pct"] is None else f"{f['change_pct']:+.1f} %, "
    noise = "" if f["noise_pct"] is None else f"noise ±{f['noise_pct']:.1f} %, "
    return (
        f"{f['name']}: {f['verdict']}, {_num(b)} -> {_num(c)} {f['unit']} "
        f"({pct}{noise}tolerance {f['tolerance_pct']:g} %)"
    )
