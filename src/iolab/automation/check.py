"""`iolab check`: is a candidate worse than a baseline beyond noise? Per key figure, aware of
its direction and of its kind, on run records (outcome.run_record, or the `runs` of a saved
--json document).

Noise is run-to-run variation, never the spread of one run's window rounds: rounds of one run
follow each other on one warmed-up target, so they share its state and say nothing of how a
second run would come out (four identical quick runs on a file differed by 15 % to 10x while
their rounds' spread claimed ±35 %). It comes from
  - a declared spread: the tolerances file's [spread] table gives a figure's run-to-run standard
    deviation (in % of its value), measured once by the user; taken as known (normal quantile);
  - else repeats (`run --repeat N`, several runs on a side): Welch's t interval of the
    difference of the two means; with one side a single run, the other side's spread stands for
    it too (a prediction interval: t(n-1) × s × √(1/n + 1)). A magnitude whose runs are all
    above 0 (tstat.on_log_scale: every key figure iolab has) takes both on its runs' logarithms
    and compares the geometric means, as `run --repeat` gives its interval: the interval of the
    ratio, asymmetric and never reaching 0 (Noise.edges);
  - else none: single runs on both sides are judged against the tolerance alone, and say so.

Kinds of figure (KeyMetric.kind, in each figure record):
  value       an average, a rate, a search result: judged as above
  percentile  judged as above on each run's percentile (never a mean of round percentiles); the
              run gives it only where its IOs support it (else not-measured)
  extreme     one observation (a maximum latency, a minimum interval): no standard error, a
              heavy-tailed spread: `info` (reported, not judged) unless the tolerances file gives
              it its own tolerance, then the candidate's worst run against the baseline's worst

Verdict per figure, with `worse` the change in the figure's bad direction and `noise` the
interval's half-width (both in % of the baseline):
  regression        worse > tolerance and worse > noise (the interval lies on the worse side)
  within-noise      |change| > tolerance, but the interval includes no change
  improvement       better by more than the tolerance and than the noise
  within-tolerance  |change| <= tolerance
  info              an extreme without a tolerance of its own: reported, never failing
  missing           the baseline has the figure, the candidate does not (counts as failing)
  not-measured      the baseline has no value for it (nothing to hold the candidate to)
`detectable_pct` is the smallest worsening the check would call a regression: the larger of the
tolerance and the noise.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from iolab.automation.tstat import geometric_mean, on_log_scale, t_quantile
from iolab.core.errors import IolabError
from iolab.core.safefile import loads_toml, read_text
from iolab.core.steady import STEADY_NOT_EVALUATED, STEADY_NOT_REACHED
from iolab.core.units import counted, num, percent
from iolab.figures.compare import profile_differences
from iolab.pages.outcome import steady_shortfall
from iolab.store.manifest import run_key

FAILING = ("regression", "missing")
TABLES = ("tolerances", "spread")


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
    """The largest regression allowed, in the figure's bad direction (fractions), and the
    declared run-to-run spreads (standard deviation of one run's figure, fraction of its value)."""

    default: float
    per_figure: dict[str, float] = field(default_factory=dict)
    source: str = ""  # the TOML file the overrides came from
    spread: dict[str, float] = field(default_factory=dict)

    def of(self, name: str) -> float:
        return self.per_figure.get(name, self.default)

    def named(self) -> set[str]:
        return set(self.per_figure) | set(self.spread)


def load_tolerances(default: float, path: Path | None) -> Tolerances:
    """A TOML file: `[tolerances]` with one `"FIGURE NAME" = "10%"` line per figure, and
    `[spread]` with a figure's run-to-run standard deviation, `"FIGURE NAME" = "4%"`."""
    if path is None:
        return Tolerances(default)
    try:
        data = loads_toml(read_text(path, "tolerances file", "config"), str(path))
    except OSError as e:
        raise IolabError(f"{path}: cannot read the tolerances file ({e.strerror}).") from None
    unknown = sorted(set(data) - set(TABLES))
    if unknown or not data or not all(isinstance(data.get(t, {}), dict) for t in TABLES):
        raise IolabError(
            f'{path}: expected a [tolerances] table of "FIGURE NAME" = "N%" lines (and optionally a [spread] '
            f"table of the same form); found {', '.join(unknown) or 'no table, or a value instead of a table'}."
        )
    tables = {t: {str(k): parse_pct(v, f"{path}: [{t}] {k!r}") for k, v in data.get(t, {}).items()} for t in TABLES}
    return Tolerances(default, tables["tolerances"], str(path), tables["spread"])


# -- the comparison -------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    runs: tuple[str, ...]
    samples: tuple[float, ...]  # one value per run that has the figure
    value: float | None  # what is compared: the runs' mean (geometric for a magnitude), or an extreme's worst run

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.samples) if self.samples else None

    @property
    def source(self) -> str:
        return "repeats" if len(self.samples) >= 2 else "none"

    def geometric(self) -> Side:
        """The side compared by its runs' geometric mean (a magnitude's, on the log scale)."""
        return replace(self, value=geometric_mean(self.samples)) if self.samples else self

    def record(self) -> dict:
        return {
            "runs": list(self.runs),
            "mean": self.mean,
            "value": self.value,
            "samples": list(self.samples),
            "noise_source": self.source,
        }


def side(records: Sequence[dict], name: str, kind: str, higher: bool) -> Side:
    figs = [next((f for f in r["figures"] if f["name"] == name), None) for r in records]
    values = tuple(f["value"] for f in figs if f is not None and f["value"] is not None)
    if not values:
        value = None
    elif kind == "extreme":  # the worst run's: one bad maximum is what the figure is about
        value = min(values) if higher else max(values)
    else:
        value = statistics.fmean(values)
    return Side(tuple(r["run_id"] for r in records), values, value)


@dataclass(frozen=True)
class Noise:
    half: float  # the interval's half-width, in the figure's unit, or of the logarithms (`log`) (0: none)
    method: str
    log: bool = False

    def edges(self, base: float, higher: bool) -> tuple[float, float]:
        """How far the candidate must move from `base`, in the figure's unit, to leave the interval
        on the worse side and on the better side: the half-width, or for an interval of the
        logarithms the asymmetric edges of base ×/÷ exp(half)."""
        if not self.log:
            return self.half, self.half
        down, up = abs(base) * -math.expm1(-self.half), abs(base) * math.expm1(self.half)
        return (down, up) if higher else (up, down)


def noise(base: Side, cand: Side, spread: float | None, confidence: float, log: bool = False) -> Noise:
    """The half-width of the interval of the difference of the two sides' means, or (`log`, a
    magnitude whose runs are all above 0: tstat.py) of the means of their logarithms."""
    nb, nc = len(base.samples), len(cand.samples)
    p = 0.5 + confidence / 2
    if spread is not None:
        half = t_quantile(p, 1e9) * spread * abs(base.value or 0) * math.sqrt(1 / nb + 1 / nc)
        return Noise(
            half,
            f"normal interval, {confidence:.0%}, from the declared run-to-run spread ({100 * spread:g} % of the "
            f"value per run; {nb} baseline and {counted(nc, 'candidate run')})",
        )
    xb, xc = ([math.log(v) for v in s.samples] if log else s.samples for s in (base, cand))
    vb = statistics.variance(xb) if nb >= 2 else None
    vc = statistics.variance(xc) if nc >= 2 else None
    # a magnitude's interval is of its logarithms: of the ratio of the geometric means, never below 0
    logs = " of the logarithms (the ratio of the geometric means)" if log else ""
    if vb is not None and vc is not None and vb + vc > 0:
        terms = [(vb / nb, nb - 1), (vc / nc, nc - 1)]
        df = sum(v for v, _ in terms) ** 2 / sum(v * v / d for v, d in terms if v > 0)
        half = t_quantile(p, df) * math.sqrt(vb / nb + vc / nc)
        how = f"Welch t interval{logs}, {confidence:.0%}, {df:.1f} degrees of freedom, from the repeated runs' spread"
        return Noise(half, f"{how} ({nb} baseline and {nc} candidate runs)", log)
    one = vb if vb is not None else vc
    if one:  # one side a single run: the other side's per-run spread stands for it
        n = nb if vb is not None else nc
        half = t_quantile(p, n - 1) * math.sqrt(one * (1 / n + 1))
        which = "baseline" if vb is not None else "candidate"
        return Noise(
            half,
            f"t prediction interval{logs}, {confidence:.0%}, {n - 1} degrees of freedom, from the spread of the "
            f"{which}'s {n} repeated runs (the single run on the other side taken to vary as much)",
            log,
        )
    if nb >= 2 or nc >= 2:
        return Noise(0.0, "the repeats agree exactly: no spread to take as noise; judged against the tolerance alone")
    return Noise(
        0.0,
        "single runs on both sides: no run-to-run noise estimate (a run's window rounds are not repeats); "
        "judged against the tolerance alone. Run the baseline with --repeat N or declare the figure's spread "
        "in the tolerances file",
    )


def _pct(x: float | None, base: float) -> float | None:
    return None if x is None or base == 0 else 100 * x / abs(base)


EXTREME_INFO = (
    "an extreme (one observation per run): no standard error and a heavy-tailed run-to-run spread, so it is "
    "reported, not judged; give it its own tolerance in the tolerances file to judge the candidate's worst run "
    "against the baseline's worst"
)
EXTREME_JUDGED = "an extreme: the candidate's worst run against the baseline's worst, with its own tolerance; no noise"


def verdict(name: str, meta: dict, base: Side, cand: Side, tolerances: Tolerances, confidence: float) -> dict:
    higher = meta["direction"] == "higher-is-better"
    kind = meta["kind"]
    tolerance = tolerances.of(name)
    out = {
        "name": name,
        "unit": meta["unit"],
        "direction": meta["direction"],
        "kind": kind,
        "baseline": base.record(),
        "candidate": cand.record(),
        "change_pct": None,
        "worse_pct": None,
        "noise_pct": None,
        "detectable_pct": None,
        "tolerance_pct": 100 * tolerance,
        "method": "",
    }
    log = kind != "extreme" and on_log_scale(meta["unit"], base.samples + cand.samples)
    if log:
        base, cand = base.geometric(), cand.geometric()  # the centre of the log-scale interval
        out |= {"baseline": base.record(), "candidate": cand.record()}
    if base.value is None:
        return {**out, "verdict": "not-measured", "method": "the baseline has no value for this figure"}
    if cand.value is None:
        return {**out, "verdict": "missing", "method": "the candidate has no value for this figure"}
    change = cand.value - base.value
    worse = -change if higher else change
    pcts = {"change_pct": _pct(change, base.value), "worse_pct": _pct(worse, base.value)}
    if kind == "extreme" and name not in tolerances.per_figure:
        return {**out, **pcts, "verdict": "info", "method": EXTREME_INFO}
    if kind == "extreme":
        nz = Noise(0.0, EXTREME_JUDGED)
        method = nz.method
    else:
        nz = noise(base, cand, tolerances.spread.get(name), confidence, log)
        method = ("percentile, each run's own: " if kind == "percentile" else "") + nz.method
    half, better_half = nz.edges(base.value, higher)  # the interval's edge on the worse side, the better side
    tol_abs = tolerance * abs(base.value)
    if worse > tol_abs and worse > half:
        v = "regression"
    elif -worse > tol_abs and -worse > better_half:
        v = "improvement"
    elif abs(change) > tol_abs:
        v = "within-noise"
    else:
        v = "within-tolerance"
    noise_pct = _pct(half, base.value) if half > 0 else None
    return {
        **out,
        **pcts,
        "verdict": v,
        "noise_pct": noise_pct,
        "noise_scale": "log" if nz.log else "linear",
        # the tolerance as given, not through the baseline and back (5 % stays 5.0, not 4.999…)
        "detectable_pct": None if base.value == 0 else max(100 * tolerance, noise_pct or 0.0),
        "method": method,
    }


def not_steady(records: Sequence[dict]) -> list[tuple[str, str]]:
    """The runs that did not show steady state, and how (outcome.steady_shortfall: the rule
    `show --require-steady` applies, so the two never disagree about a run)."""
    return [(r["run_id"], why) for r in records if (why := steady_shortfall(r)) is not None]


# how each shortfall reads in the warning: a SteadyState word, or the run's state
SHORTFALL_WORDS: dict[str, str] = {
    STEADY_NOT_REACHED: "not reached",
    STEADY_NOT_EVALUATED: "not evaluated (its rounds never filled a window)",
}


def steady_warning(unsteady: Sequence[tuple[str, str]], require_steady: bool) -> str:
    """'steady state not reached in A; never evaluated (too few rounds) in B: ...'."""
    by_why: dict[str, list[str]] = {}
    for run_id, why in unsteady:
        by_why.setdefault(SHORTFALL_WORDS.get(why, f"not shown (the run is {why})"), []).append(run_id)
    return (
        "steady state "
        + "; ".join(f"{why} in {', '.join(ids)}" for why, ids in by_why.items())
        + ": its figures may still be drifting, so a change (or its absence) can be the drift"
        + (" (--require-steady: failing)" if require_steady else "")
    )


def differences(baseline: Sequence[dict], candidate: Sequence[dict]) -> list[str]:
    """What the runs differ in besides the drive (profile settings that change what is measured)."""
    first, out = baseline[0], []
    for r in [*baseline[1:], *candidate]:
        pairs = (first["profile"], first.get("ignored_options") or {}, r["profile"], r.get("ignored_options") or {})
        for k, a, b in profile_differences(*pairs):
            out.append(f"{k}: {first['run_id']} {a!r} vs {r['run_id']} {b!r}")
    return out


def _meta(baseline: Sequence[dict], candidate: Sequence[dict]) -> dict[str, dict]:
    """Each figure's unit, direction and kind, which every run that has the figure must agree on
    (a saved document's are held to the test's definition when read, automation/saved.py; a
    figure named after what was run, a stream's, is held here to the other runs'). A baseline
    saved before figures had a kind takes the others' (a figure without one anywhere is a value)."""
    seen: dict[str, dict[str, tuple[str, str]]] = {}  # name -> field -> (value, the run that gave it)
    for r in [*candidate, *baseline]:
        for f in r["figures"]:
            fields = seen.setdefault(f["name"], {})
            for k in ("unit", "direction", "kind"):
                if k not in f:
                    continue
                first = fields.setdefault(k, (f[k], r["run_id"]))
                if first[0] != f[k]:
                    raise IolabError(
                        f"the runs disagree on {f['name']!r}'s {k}: {first[0]!r} in run {first[1]}, {f[k]!r} in "
                        f"run {r['run_id']}; one figure is judged in one {k}. Nothing was checked."
                    )
    names = dict.fromkeys(f["name"] for r in baseline for f in r["figures"])
    return {
        n: {
            "unit": seen[n]["unit"][0],
            "direction": seen[n]["direction"][0],
            "kind": seen[n].get("kind", ("value",))[0],
        }
        for n in names
    }


def _distinct_runs(baseline: Sequence[dict], candidate: Sequence[dict]) -> None:
    """Refuses a run on both sides, and a run given twice on one side (its directory named
    twice, a copy of it, a saved document listing it again): the same figures counted twice look
    like repeats that agree, and the noise shrinks with every copy (two runs given three times
    claimed 5 degrees of freedom and ±0.2 % where they have ±1.7 %). A run is its uid, as
    `compare` tells runs apart (a run stored before uids, its id)."""
    sides = {}
    for what, recs in (("candidate", candidate), ("baseline", baseline)):
        keys: dict[str, dict] = {}
        for r in recs:
            key = run_key(r["run_id"], r.get("uid"))
            if key in keys:
                where = (
                    "given twice"
                    if keys[key].get("path") == r.get("path")
                    else f"{keys[key].get('path')} and {r.get('path')}"
                )
                raise IolabError(
                    f"the {what} holds run {r['run_id']} twice ({where}: one run, {key}). Repeats are separate runs; "
                    "the same run counted twice makes its figures look like repeats that agree and shrinks the "
                    "noise. Give each run once (a copy of a run's directory is the same run). Nothing was checked."
                )
            keys[key] = r
        sides[what] = keys
    # one run's key on both sides; run ids alone are shared by runs started in one second
    both = sorted(r["run_id"] for k, r in sides["candidate"].items() if k in sides["baseline"])
    if both:
        # a run held against itself passes whatever it measured: a CI script that picked the
        # wrong directory would never fail
        raise IolabError(
            f"run {', '.join(both)} is both a candidate and the baseline; a run checked against itself "
            "passes whatever it measured. Give the baseline as other runs (or their saved --json document)."
        )


def check(
    baseline: Sequence[dict],
    candidate: Sequence[dict],
    tolerances: Tolerances,
    confidence: float = 0.95,
    force: bool = False,
    require_steady: bool = False,
) -> dict:
    """The `check` part of the document; `passed` is False when any figure regressed or is
    missing, or (require_steady) a run on either side did not show steady state. Runs of
    different tests are refused; runs with different settings unless forced."""
    if not baseline or not candidate:
        raise IolabError("iolab check needs at least one candidate run and one baseline run.")
    _distinct_runs(baseline, candidate)
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
    meta = _meta(baseline, candidate)
    names = list(meta)
    if not names:
        raise IolabError(f"test {tests[0]!r}: the baseline has no key figures to check.")
    unknown = sorted(tolerances.named() - set(names))
    if unknown:
        raise IolabError(
            f"{tolerances.source}: no figure named {', '.join(map(repr, unknown))} in test {tests[0]!r}; "
            f"its figures are: {', '.join(map(repr, names))}."
        )
    extremes = sorted(n for n in tolerances.spread if meta[n]["kind"] == "extreme")
    if extremes:
        raise IolabError(
            f"{tolerances.source}: [spread] {', '.join(map(repr, extremes))}: an extreme has no run-to-run "
            "standard deviation to declare; give it a tolerance in [tolerances] instead."
        )
    figures = []
    for n in names:
        higher = meta[n]["direction"] == "higher-is-better"
        b, c = (side(recs, n, meta[n]["kind"], higher) for recs in (baseline, candidate))
        figures.append(verdict(n, meta[n], b, c, tolerances, confidence))
    bad = [f["name"] for f in figures if f["verdict"] in FAILING]
    unsteady = not_steady(baseline) + not_steady(candidate)
    warnings = [steady_warning(unsteady, require_steady)] if unsteady else []
    return {
        "passed": not bad and not (require_steady and unsteady),
        "confidence": confidence,
        "max_regression_pct": 100 * tolerances.default,
        "test": tests[0],
        "differences": diffs,
        "figures": figures,
        "regressions": bad,
        "not_steady": [run_id for run_id, _ in unsteady],
        "require_steady": require_steady,
        "warnings": warnings,
        "junit": None,
    }


def junit_xml(result: dict, suite: str = "iolab check") -> str:
    """One test case per figure; a regression or a missing figure is a failure. Runs without
    steady state add a "steady state" case: a failure under --require-steady, else its warning."""
    cases, failures = [], 0
    for f in result["figures"]:
        body = ""
        if f["verdict"] in FAILING:
            msg = summary_line(f)
            body = f"<failure message={quoteattr(msg)} type={quoteattr(f['verdict'])}>{escape(f['method'])}</failure>"
            failures += 1
        elif f["verdict"] == "not-measured":
            body = f"<skipped message={quoteattr(f['method'])}/>"
        cases.append(
            f"    <testcase classname={quoteattr(result['test'])} name={quoteattr(f['name'])}>"
            f"{body}<system-out>{escape(summary_line(f))}</system-out></testcase>"
        )
    for w in result["warnings"]:
        body = f'<failure message={quoteattr(w)} type="not-steady"/>' if result["require_steady"] else ""
        failures += bool(body)
        cases.append(
            f'    <testcase classname={quoteattr(result["test"])} name="steady state">'
            f"{body}<system-out>{escape(w)}</system-out></testcase>"
        )
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
    """As `iolab show` and the check table print the figure (units.num)."""
    return num(v)


def summary_line(f: dict) -> str:
    """'ART RND 4KiB R/W 65/35: regression, 103.7 -> 117.9 µs (+13.7 %, noise ±0.8 %, tolerance 5 %,
    detects ≥5 %)'."""
    b, c = f["baseline"]["value"], f["candidate"]["value"]
    pct = "" if f["change_pct"] is None else f"{percent(f['change_pct'], '+')}, "
    noise = "" if f["noise_pct"] is None else f"noise ±{percent(f['noise_pct'])}, "
    detect = "" if f["detectable_pct"] is None else f", detects ≥{percent(f['detectable_pct'])}"
    return (
        f"{f['name']}: {f['verdict']}, {_num(b)} -> {_num(c)} {f['unit']} "
        f"({pct}{noise}tolerance {f['tolerance_pct']:g} %{detect})"
    )
