"""Comparing drives: which runs may be compared, what a key figure is (`KeyMetric`; each test
declares its own in its module in suites/), the summary table (one row per drive) and the ordinal
ranking of the drives per column. compare/ holds only figures computed from runs, below report/
(which may use them); the comparison report's pages are in compare_pages/, above report/.

Each key figure knows its direction (higher IOPS and MB/s are better, lower response times
are better). Ranks are standard competition ranks: tied drives share a rank and the next rank
skips (1, 2, 2, 4). Drives tie when their figures are equal *as printed* (units.num), so a
reader never sees two equal numbers ranked differently. A drive without a
figure (not measured, e.g. an interrupted run) is not ranked in that column.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from iolab.core.errors import IolabError
from iolab.core.plan import PROFILE_FLAGS, option_text
from iolab.core.results import Histogram
from iolab.core.testparams import Param, settings_meaning
from iolab.core.units import TAIL_IOS, duration, num, pct_text, printed_value
from iolab.figures.points import DV_PHASE, DemandPoint, parse_point
from iolab.figures.summary import CellAverage, PhaseSummary

# Profile settings that change what a test measures; runs that differ in any of them measure
# different things and are not compared unless forced (an option a run recorded as ignored by
# its test counts at the value its plan is the same at: profile_differences).
COMPARED_PROFILE_KEYS = (
    "name",
    "spec",
    "active_range",
    "threads",
    "queue_depth",
    "write_cache",
    "cell_seconds",
    "precondition_factor",
    "capacity_limit",
    "quick",
    "max_rounds",
    "strict_steady",
    "wsat_capacity_multiple",
    "wsat_max_seconds",
    "settings",
)


# each compared profile field as the user sets it: its option, or what the profile fixes
COMPARED_FLAGS = {
    **PROFILE_FLAGS,
    "name": "--profile",
    "spec": "--spec",
    "quick": "--quick",
    "threads": "threads (TC)",
    "queue_depth": "queue depth (QD)",
}


# what KeyMetric.text's "n/m" means, for a table's caption
NOT_MEASURED = f" n/m (N IOs): a percentile its N IOs are too few to measure ({TAIL_IOS} IOs must lie beyond it)."

# What a key figure reads of one drive: its phases (a test), or its phases per test (a sequence).
Drive = TypeVar("Drive")


@dataclass(frozen=True)
class KeyMetric(Generic[Drive]):
    """One column of the summary table."""

    name: str
    unit: str
    higher_is_better: bool
    get: Callable[[Drive], float | None]
    # value (an average, a rate, a search result), percentile, or extreme (one observation: a
    # maximum latency, a minimum interval); `iolab check` judges each kind by its own rule
    kind: str = "value"
    # the workload whose achieved rate the figure is ("4 KiB random read IOPS"): one rate's
    # figures from two tests of a sequence on one device are held against each other
    # (figures/crosscheck.py); "" for a figure that is no such rate
    rate_of: str = ""
    # for a figure that claims the most of `rate_of` the device gives (a search's result): how its
    # search may have stopped short, said where another test of the device measured more
    maximum: str = ""

    def unmeasured(self, drive: Drive) -> str:
        """Why the figure has no value for `drive`, "its 40,000 IOs are too few for a 99.999 % …";
        "" when its getter cannot say (only a percentile's knows: too few IOs)."""
        why = getattr(self.get, "unmeasured", None)
        return why(drive) if callable(why) else ""

    def note(self, drive: Drive) -> str:
        """What the figure's value is of, where its name alone may claim more (a consistency
        run's "steady-part" figures: whether that part was steady by the rule); "" when none."""
        said = getattr(self.get, "note", None)
        return said(drive) if callable(said) else ""

    def caveat(self, drive: Drive) -> str:
        """The note when it says the figure is not what its name claims (a steady part that
        was not steady); "" otherwise. Carried beside the value as an audit failure is."""
        said = getattr(self.get, "caveat", None)
        return said(drive) if callable(said) else ""

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"

    @property
    def heading(self) -> str:
        """A table column's or row's name: 'IOPS (IOPS; ↑)'."""
        return f"{self.name} ({self.unit}; {'↑' if self.higher_is_better else '↓'})"

    @property
    def short(self) -> str:
        """The name with its unit (left out when the name says it) and direction: 'ART (µs) ↓'."""
        unit = "" if self.unit in self.name else f" ({self.unit})"
        return f"{self.name}{unit} {'↑' if self.higher_is_better else '↓'}"

    def fmt(self, v: float | None) -> str:
        return num(v)

    def text(self, v: float | None, drive: Drive) -> str:
        """The value as a table prints it: a percentile its IOs could not measure is
        "n/m (42,398 IOs)", as in the run's own tables, not a bare "—" read as "measured none"."""
        ios = getattr(self.get, "unmeasured_ios", None)
        n = ios(drive) if v is None and callable(ios) else None
        return pct_text(None, n) if n else self.fmt(v)


@dataclass(frozen=True)
class DurationMetric(KeyMetric[Drive]):
    """A key figure that is a time, in seconds (its unit, one for every run, so that check,
    history and --json compare like with like), printed from 2 minutes on with its reading in
    minutes or hours beside it: "1,800 (30.0 min)". In minutes alone, an XSR recovery of
    2.6 s was "0.04322 min"."""

    def fmt(self, v: float | None) -> str:
        return num(v) if v is None or abs(v) < 120 else f"{num(v)} ({duration(v)})"


def competition_ranks(values: Sequence[float | None], higher_is_better: bool) -> list[int | None]:
    """Rank = 1 + the number of drives strictly better; ties share a rank; None is unranked.
    Values are compared as printed (units.num). A figure only one drive has is ranked for none:
    "#1" of one value (a forced comparison of two tests, each figure of one run) claimed a win
    over drives that have no such figure."""
    keyed = [printed_value(v) for v in values]
    if sum(v is not None for v in keyed) < 2:
        return [None] * len(keyed)
    ranks: list[int | None] = []
    for v in keyed:
        if v is None:
            ranks.append(None)
            continue
        better = sum(1 for w in keyed if w is not None and (w > v if higher_is_better else w < v))
        ranks.append(1 + better)
    return ranks


@dataclass(frozen=True)
class SummaryTable:
    drives: tuple[str, ...]
    metrics: tuple[KeyMetric, ...]
    values: tuple[tuple[float | None, ...], ...]  # [drive][metric]
    ranks: tuple[tuple[int | None, ...], ...]  # [drive][metric]
    # [drive][metric]: the caveat a figure carries from its run (not at steady state, an audit
    # invariant that failed for it; "" none), for the ranking's reader (() when none is known)
    marks: tuple[tuple[str, ...], ...] = ()
    # what figures are of where their names may claim more (KeyMetric.note: a DIRTH Mid figure read
    # from Min's cells), each once with the drives it is of: "NAME (D1, D2): note"
    notes: tuple[str, ...] = ()
    # [drive][metric]: that note of each drive's figure ("" none), for the --json ranking
    figure_notes: tuple[tuple[str, ...], ...] = ()

    def note_of(self, drive: int, metric: int) -> str | None:
        """The note on drive's figure (figure_notes), None when it has none."""
        return (self.figure_notes[drive][metric] or None) if self.figure_notes else None

    def mark_keys(self) -> dict[str, str]:
        """Each caveat the figures carry with its key ("a", "b" … in the order the table meets
        them): the terminal's ranking tags its figures [a], the --json ranking names the same keys."""
        found = dict.fromkeys(mk for row in self.marks for mk in row if mk)
        return {mk: chr(ord("a") + i) for i, mk in enumerate(found)}

    def mark_of(self, drive: int, metric: int) -> str | None:
        """The key of the caveat drive's figure carries (mark_keys), None when it carries none."""
        return self.mark_keys().get(self.marks[drive][metric]) if self.marks else None


@dataclass(frozen=True)
class Comparison:
    """What `iolab compare` wrote, and its ranking for the terminal (None for a sequence's
    summary comparison, whose tables are per test)."""

    paths: list[Path]
    summary: SummaryTable | None = None
    caveats: tuple[str, ...] = ()  # what every page's banners say of the runs, in full


def summary_table(drives: Sequence[str], phases: Sequence[Drive], metrics: Sequence[KeyMetric[Drive]]) -> SummaryTable:
    values = [[m.get(ph) for m in metrics] for ph in phases]
    per_metric = [competition_ranks([row[j] for row in values], m.higher_is_better) for j, m in enumerate(metrics)]
    ranks = [[per_metric[j][i] for j in range(len(metrics))] for i in range(len(drives))]
    said: dict[tuple[str, str], list[str]] = {}
    noted = tuple(
        tuple(m.note(ph) if v is not None else "" for m, v in zip(metrics, row)) for ph, row in zip(phases, values)
    )
    for d, row in zip(drives, noted):
        for m, note in zip(metrics, row):
            if note:
                said.setdefault((m.name, note), []).append(d.split()[0])
    notes = tuple(f"{name} ({', '.join(ds)}): {note}" for (name, note), ds in said.items())
    return SummaryTable(
        tuple(drives),
        tuple(metrics),
        tuple(tuple(r) for r in values),
        tuple(tuple(r) for r in ranks),
        notes=notes,
        figure_notes=noted,
    )


# -- the RWSW tests -----------------------------------------------------------------------------

DIRTH_SUMMARY_OIO = 32
REPLAY_PHASE = "replay"


@dataclass(frozen=True)
class ReplayTotals:
    """A whole replay as one figure set (the catalogue's "24-hour averages"): IOPS and MB/s are
    all IOs and bytes over all step runtimes; ART is IO-weighted; percentiles come from the
    steps' histograms merged (exact, never averaged)."""

    steps: int
    ios: float
    seconds: float
    iops: float
    mbps: float
    art_us: float | None
    mrt_us: float | None
    histogram: Histogram | None

    def percentile(self, pct: float) -> float | None:
        return self.histogram.measured(pct) if self.histogram is not None else None


def replay_totals(phases: list[PhaseSummary]) -> ReplayTotals | None:
    ph = next((p for p in phases if p.phase.name == REPLAY_PHASE), None)
    if ph is None:
        return None
    rows = [r for r in ph.rows if r.round in ph.window]
    if not rows:
        return None
    # fio and the sim give IOPS as IOs / runtime, so IOPS × runtime is each step's IO count.
    ios = [r.iops * r.runtime_s for r in rows]
    seconds = sum(r.runtime_s for r in rows)
    lat = [(n, r.lat_mean_us) for n, r in zip(ios, rows) if r.lat_mean_us is not None and n > 0]
    mx = [r.lat_max_us for r in rows if r.lat_max_us is not None]
    hists = [c.histogram for c in ph.cells if c.histogram is not None]
    return ReplayTotals(
        steps=len(rows),
        ios=sum(ios),
        seconds=seconds,
        iops=sum(ios) / seconds if seconds else 0.0,
        mbps=sum(r.io_bytes for r in rows) / seconds / 1e6 if seconds else 0.0,
        art_us=sum(n * v for n, v in lat) / sum(n for n, _ in lat) if lat else None,
        mrt_us=max(mx) if mx else None,
        histogram=Histogram.merge(hists) if hists else None,
    )


def demand_cells(phases: Sequence[PhaseSummary]) -> list[tuple[DemandPoint, CellAverage]]:
    """A DIRTH run's demand points over their measurement window, in the order run, each with
    its cell (MB/s, percentiles)."""
    ph = next((p for p in phases if p.phase.name == DV_PHASE), None)
    tagged = [(parse_point(c.key), c) for c in (ph.cells if ph else ())]
    return [(DemandPoint(*tq, c.iops, c.lat_mean_us), c) for tq, c in tagged if tq is not None]


def dirth_levels(phases: Sequence[PhaseSummary]) -> list[tuple[int, CellAverage]]:
    """The demand points by total outstanding IO, ascending (the RWSW sweep has one per level)."""
    return sorted(((p.oio, c) for p, c in demand_cells(phases)), key=lambda x: x[0])


def dirth_level(phases: list[PhaseSummary], oio: int) -> CellAverage | None:
    return next((c for n, c in dirth_levels(phases) if n == oio), None)


def cell_percentile(c: CellAverage | None, pct: float) -> float | None:
    return c.histogram.measured(pct) if c is not None and c.histogram is not None else None


# -- which runs may be compared --------------------------------------------------------------


@dataclass(frozen=True)
class RunFacts:
    """What decides whether two runs are comparable (read from each manifest)."""

    label: str
    test: str
    profile: dict
    cells: tuple[tuple[str, tuple[str, ...]], ...]  # per phase: name, cell keys
    workload: str = ""  # RWSW: digest of the workload run (streams, shares, outstanding IO)
    ignored: Mapping[str, Any] = field(default_factory=dict)  # the manifest's ignored_options
    params: tuple[Param, ...] = ()  # the test's declared parameters: its settings compared by meaning


def _profile_value(profile: Mapping[str, Any], key: str) -> Any:
    if key == "settings":  # runs made before tests had parameters ran every test with its defaults
        return [list(kv) for kv in profile.get(key) or ()]
    return profile.get(key)


def _counted(profile: Mapping[str, Any], ignored: Mapping[str, Any], key: str) -> Any:
    """A setting as the run's conditions hold it: an option the run recorded as ignored counts
    at the value its plan is the same at (the run's own evidence, api/unused.py)."""
    return _profile_value(ignored if key in ignored else profile, key)


def profile_differences(
    a: Mapping[str, Any],
    a_ignored: Mapping[str, Any],
    b: Mapping[str, Any],
    b_ignored: Mapping[str, Any],
    params: Sequence[Param] = (),
) -> list[tuple[str, Any, Any]]:
    """The compared settings two runs (profiles with their recorded ignored options) differ in,
    each with the two values as text: a profile option's as stored (repr), a test's setting (--set)
    one row each, "setting NAME", by what it means to the test's `params` and printed as the test
    shows it, so both sides are in one unit. A run stored before the record counts every option as
    given; two runs given the same value never differ in it (an old run and a new one that recorded
    the option as ignored count it at different values, but ran under the same one). A run stored
    before the share rule holds 20 % as '0.2', one since as '20%': one setting, not two."""

    def meant(profile: Mapping[str, Any], k: str) -> Any:
        value = _profile_value(profile, k)
        return settings_meaning(params, value) if k == "settings" else value

    out: list[tuple[str, str, str]] = []
    for k in COMPARED_PROFILE_KEYS:
        if meant(a, k) == meant(b, k) or _counted(a, a_ignored, k) == _counted(b, b_ignored, k):
            continue
        if k == "settings":
            out += setting_differences(dict(meant(a, k)), dict(meant(b, k)), params)
        else:
            # named as a user sets it (the option and its value as the option takes it), not by
            # the stored field: "cell_seconds: A 0.1 vs B 5.0; capacity_limit: A 536870912 vs B None"
            flag = COMPARED_FLAGS.get(k, k)
            out.append((flag, option_text(flag, _profile_value(a, k)), option_text(flag, _profile_value(b, k))))
    return out


def setting_differences(
    a: Mapping[str, Any], b: Mapping[str, Any], params: Sequence[Param]
) -> list[tuple[str, str, str]]:
    """("setting NAME", a's, b's) for each test setting whose meaning differs (settings_meaning's),
    each printed as its parameter shows values; one a run left at its default says so."""
    declared = {p.name: p for p in params}

    def text(values: Mapping[str, Any], name: str) -> str:
        p = declared.get(name)
        if name not in values:
            return f"{p.show(p.default)} (default)" if p else "not set"
        v = values[name]
        # text where the parameter reads another type is a value that no longer reads: its text
        return p.show(v) if p and (isinstance(p.default, str) or not isinstance(v, str)) else repr(v)

    return [
        (f"setting {name}", text(a, name), text(b, name))
        for name in sorted(set(a) | set(b))
        if a.get(name, _UNSET) != b.get(name, _UNSET)
    ]


_UNSET = object()  # a setting one run does not hold


def differences(runs: Sequence[RunFacts]) -> list[str]:
    """Why these runs do not measure the same thing; empty when they are comparable."""
    if not runs:
        return []
    first, out = runs[0], []
    for r in runs[1:]:
        if r.test != first.test:
            out.append(f"{r.label} ran test {r.test!r}, {first.label} ran {first.test!r}")
            continue
        for k, a, b in profile_differences(first.profile, first.ignored, r.profile, r.ignored, first.params):
            out.append(f"{k}: {first.label} {a} vs {r.label} {b}")
        if r.workload != first.workload:
            out.append(
                f"workload: {first.label} ran workload {first.workload or '?'}, {r.label} ran {r.workload or '?'} "
                "(different composite/replay files)"
            )
        if r.cells != first.cells:
            mine = {f"{p}: {c}" for p, cs in first.cells for c in cs}
            theirs = {f"{p}: {c}" for p, cs in r.cells for c in cs}
            only_a, only_b = sorted(mine - theirs), sorted(theirs - mine)
            what = []
            if only_a:
                what.append(f"only {first.label} has {', '.join(only_a[:4])}{' …' if len(only_a) > 4 else ''}")
            if only_b:
                what.append(f"only {r.label} has {', '.join(only_b[:4])}{' …' if len(only_b) > 4 else ''}")
            out.append("test cells differ: " + ("; ".join(what) or "different order or phases"))
    return out


def check_comparable(runs: Sequence[RunFacts], force: bool) -> list[str]:
    """Raise unless the runs are comparable or `force`; returns the differences (for a banner)."""
    if len(runs) < 2:
        raise IolabError("compare needs at least two runs (give two or more run ids or directories).")
    diffs = differences(runs)
    if diffs and not force:
        listed = "; ".join(diffs[:8]) + (f"; and {len(diffs) - 8} more" if len(diffs) > 8 else "")
        raise IolabError(
            f"these runs do not measure the same thing, so their figures are not comparable: {listed}. "
            "Compare runs of the same test with the same profile and parameters, or pass --force to compare "
            "anyway (every page then lists these differences)."
        )
    return diffs


def comparison_stem(tests: Sequence[str], run_ids: Sequence[str], counted: str) -> str:
    """A stable file name: the same runs compared again overwrite the same report. Runs of
    different tests (--force) make a "mixed" comparison named for its tests, not for the first
    run's (a Throughput and a latency-bound run made "compare-throughput-…"). `counted`: what the
    runs are, "drives" or "runs" (of fewer drives), as the report's title counts them."""
    digest = hashlib.sha1("\n".join(run_ids).encode()).hexdigest()[:8]
    names = list(dict.fromkeys(tests))
    what = names[0] if len(names) == 1 else "mixed-" + ("-".join(names) if len(names) <= 3 else f"{len(names)}tests")
    return f"compare-{what}-{len(run_ids)}{counted}-{digest}"


def open_runs(run_refs: Sequence[str | Path]) -> list[Path]:
    """The run directories named, each checked readable (read-only); a run named twice is refused."""
    from iolab.store.manifest import manifest_of, manifest_run_key
    from iolab.store.runstore import RunStore

    seen: dict[str, str] = {}
    paths = []
    for ref in run_refs:
        store = RunStore.open(ref)
        try:
            m = manifest_of(store)
            run_id = m.run_id
            key = manifest_run_key(m) if run_id else str(store.dir)
            if key in seen:
                raise IolabError(
                    f"{seen.get(key, ref)!s} and {ref!s} are the same run ({run_id}, "
                    f"{store.dir}): a run compared with itself says nothing. Give each run once."
                )
            seen[key] = str(ref)
            paths.append(store.dir)
        finally:
            store.close()
    return paths
