"""`iolab check`: is a candidate worse than a baseline beyond noise? Per key figure, aware of
its direction and of its kind, on run records (outcome.run_record, or the `runs` of a saved
--json document). This module matches the two sides (one test, the same settings, no run
twice, the figures' units and directions agreed) and warns of runs without steady state; each
figure's verdict is automation/verdict.py's, against the run-to-run noise of automation/noise.py
and the tolerances of automation/tolerances.py; automation/check_junit.py writes the verdicts
as JUnit XML.
"""

from __future__ import annotations

from collections.abc import Sequence

from iolab.api import registry
from iolab.automation.noise import side
from iolab.automation.tolerances import Tolerances
from iolab.automation.verdict import FAILING, verdict
from iolab.core.errors import IolabError
from iolab.core.steady import STEADY_NOT_EVALUATED, STEADY_NOT_REACHED
from iolab.figures.compare import profile_differences
from iolab.figures.specmatch import figures_steady
from iolab.pages.outcome import steady_shortfall
from iolab.store.manifest import run_key


def not_steady(records: Sequence[dict]) -> list[tuple[str, str]]:
    """The runs that did not show steady state, and how (outcome.steady_shortfall: the rule
    `show --require-steady` applies, so the two never disagree about a run)."""
    return [(r["run_id"], why) for r in records if (why := steady_shortfall(r)) is not None]


def drifting(record: dict) -> list[str] | None:
    """The key figures of a run that did not show steady state which may still be drifting: those
    carrying a steady-state caveat (specmatch.figures_steady, the per-phase rule of show's [a] and
    a spec sheet's verdicts: a steady SEQ 1024KiB phase's figures are not held back by the SEQ
    128KiB phase after it); None for all of them (a run that did not complete)."""
    if record["state"] != "complete":
        return None
    return list(figures_steady(record))


STEADY_WARNING = "steady state "  # how the steady-state warning begins (check_junit finds it by it)

# how each shortfall reads in the warning: a SteadyState word, or the run's state
SHORTFALL_WORDS: dict[str, str] = {
    STEADY_NOT_REACHED: "not reached",
    STEADY_NOT_EVALUATED: "not evaluated (its rounds never filled a window)",
}


def _which(record: dict, figures: list[str] | None) -> str:
    """' (its A, B)' when a run holds back some of its measured figures, '' when all of them."""
    if figures is None or set(figures) >= {f["name"] for f in record["figures"] if f.get("value") is not None}:
        return ""
    return f" (its {', '.join(figures)})" if figures else " (none of its key figures: their phases were steady)"


def steady_warning(unsteady: Sequence[tuple[str, str]], records: Sequence[dict], require_steady: bool) -> str | None:
    """'steady state not reached in A; never evaluated (too few rounds) in B: ...', each run with
    the figures it holds back where not all of them (drifting); a run none of whose figures is
    held back is said only under --require-steady (which fails it, as show's does). None: nothing
    to say."""
    by_id = {r["run_id"]: r for r in records}
    by_why: dict[str, list[str]] = {}
    any_drifting = False
    for run_id, why in unsteady:
        figures = drifting(by_id[run_id])
        if figures == [] and not require_steady:
            continue  # every figure of a steady phase: none of them is drifting
        any_drifting |= figures != []
        by_why.setdefault(SHORTFALL_WORDS.get(why, f"not shown (the run is {why})"), []).append(
            run_id + _which(by_id[run_id], figures)
        )
    if not by_why:
        return None
    said = "; ".join(f"{why} in {', '.join(ids)}" for why, ids in by_why.items())
    drift = ": its figures may still be drifting, so a change (or its absence) can be the drift" if any_drifting else ""
    return STEADY_WARNING + said + drift + (" (--require-steady: failing)" if require_steady else "")


def differences(baseline: Sequence[dict], candidate: Sequence[dict]) -> list[str]:
    """What the runs differ in besides the drive (profile settings that change what is measured)."""
    first, out = baseline[0], []
    test = registry.find(first.get("test", ""))  # its settings are compared by what they mean to its parameters
    for r in [*baseline[1:], *candidate]:
        pairs = (first["profile"], first.get("ignored_options") or {}, r["profile"], r.get("ignored_options") or {})
        for k, a, b in profile_differences(*pairs, test.params if test else ()):
            out.append(f"{k}: {first['run_id']} {a} vs {r['run_id']} {b}")
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
    # the baseline's figures, then a candidate's no baseline run has (a stream's, named after what
    # was run): listed as not compared rather than left out unsaid
    names = dict.fromkeys(f["name"] for r in [*baseline, *candidate] for f in r["figures"])
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


def unmeasured(records: Sequence[dict], name: str) -> str:
    """Why one side's runs have no value for figure `name`, as each run's record says it
    ("its 1,698 IOs are too few for a 99.999 % (it needs 1,000,000, …)": the getter's text, which
    `iolab compare` prints too); each reason after the runs it is of when a side has several
    runs; "" when no record says (a figure whose getter cannot tell)."""
    whys: dict[str, list[str]] = {}
    for r in records:
        f = next((f for f in r["figures"] if f["name"] == name), None)
        if f is not None and f["value"] is None and f.get("unmeasured"):
            whys.setdefault(f["unmeasured"], []).append(r["run_id"])
    if len(records) == 1:
        return "".join(whys)
    return "; ".join(f"{', '.join(ids)}: {why}" for why, ids in whys.items())


def partly(records: Sequence[dict], judged: dict, which: str) -> str:
    """A side whose value is of some of its runs only (the others have none for the figure: a
    99.99 % one run's IOs were too few for), said with the runs left out and why; the mean of 2
    of 3 runs read as the 3 runs' did. "" when every run, or none, has a value."""
    name, side_of = judged["name"], judged[which]
    if not side_of["samples"] or len(side_of["samples"]) == len(records):
        return ""
    lacking = [r for r in records if next((f.get("value") for f in r["figures"] if f["name"] == name), None) is None]
    why = unmeasured(lacking, name)
    ids = ", ".join(r["run_id"] for r in lacking)
    return (
        f"{name}: the {which}'s value is of {len(side_of['samples'])} of its {len(records)} runs; "
        f"{ids} {'has' if len(lacking) == 1 else 'have'} none ({why or 'no reason recorded'})"
    )


def notes(baseline: Sequence[dict], candidate: Sequence[dict]) -> list[str]:
    """What figures are of where their names may claim more, as each run's record says it (a
    DIRTH MidIOPS figure read from the MaxIOPS cells: one point, measured once), each note once
    with the runs it is of."""
    said: dict[tuple[str, str], list[str]] = {}
    for r in [*baseline, *candidate]:
        for f in r["figures"]:
            if f.get("note"):
                said.setdefault((f["name"], f["note"]), []).append(r["run_id"])
    return [f"{name}: {note} ({', '.join(ids)})" for (name, note), ids in said.items()]


def noncompliant(baseline: Sequence[dict], candidate: Sequence[dict]) -> list[str]:
    """The scaled-down runs of each side, with why, as a run's own page and `compare` mark them:
    `check` printed its verdicts on two quick runs as if of the test itself."""
    sides = {
        w: [r for r in recs if r.get("compliant") is False]
        for w, recs in (("baseline", baseline), ("candidate", candidate))
    }
    if not any(sides.values()):
        return []
    why = "; ".join(dict.fromkeys(n for odd in sides.values() for r in odd for n in r.get("noncompliance") or ()))
    which = "; ".join(f"{w} {', '.join(r['run_id'] for r in odd)}" for w, odd in sides.items() if odd)
    return [
        f"NON-COMPLIANT (scaled down): {which}: {why or 'see each run'}; each verdict is of these runs, "
        "not of the test as its specification runs it"
    ]


def other_tests(baseline: Sequence[dict], candidate: Sequence[dict]) -> str:
    """The refusal of runs of different tests, each side's runs by test: "these ran iops,
    latency" left the user to find which run was which."""

    def by_test(recs: Sequence[dict]) -> str:
        tests: dict[str, list[str]] = {}
        for r in recs:
            tests.setdefault(r["test"], []).append(r["run_id"])
        return "; ".join(f"{t} ({', '.join(ids)})" for t, ids in tests.items())

    return (
        f"check compares runs of one test, and these are of different tests: the baseline ran "
        f"{by_test(baseline)}, the candidate {by_test(candidate)}. A test's figures are of its own "
        "stimulus, so no verdict between two tests' runs means anything (--force does not change "
        "that). Give runs of one test on both sides; `iolab compare --force` shows runs of "
        "different tests side by side. Nothing was checked."
    )


def _by_profile(recs: Sequence[dict]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in recs:
        out.setdefault((r.get("profile") or {}).get("name") or "unknown", []).append(r["run_id"])
    return out


def other_profiles(
    baseline: Sequence[dict], candidate: Sequence[dict], diffs: Sequence[str], force: bool
) -> str | None:
    """Runs of different profiles (enterprise: WCD, AR 100 %, TC4/QD32; client: WCE, AR 75 %,
    TC2/QD16): refused, or (forced) the note said with the verdicts; None when one profile. A
    qualification engineer compares a drive with itself under one profile: enterprise against
    client moves the write cache, the range and the load, so every figure moves with them, and
    the refusal was a list of five settings that did not say they were one choice."""
    b, c = _by_profile(baseline), _by_profile(candidate)
    if len({*b, *c}) < 2:
        return None

    def said(side: dict[str, list[str]]) -> str:
        return "; ".join(f"{name} ({', '.join(ids)})" for name, ids in side.items())

    keys = [k for k in dict.fromkeys(d.split(": ", 1)[0] for d in diffs) if k != "--profile"]
    if force:
        return (
            f"the runs are of different profiles (baseline: {', '.join(b)}; candidate: {', '.join(c)}): each "
            "verdict is of the profiles' difference, not of a change to the drive"
        )
    return (
        f"check compares runs of one profile, and these are of different profiles: the baseline ran "
        f"{said(b)}, the candidate {said(c)}. Figures measured under different profiles are not like for "
        f"like ({'with it the runs differ in ' + ', '.join(keys) if keys else 'each profile sets its own conditions'}), so a verdict would be of the profiles' difference, "
        "not of a change to the drive. Run both sides with one --profile; --force checks them anyway, "
        "judges every figure as it stands, and lists each difference under the verdicts. Nothing was checked."
    )


def drive_models(baseline: Sequence[dict], candidate: Sequence[dict]) -> dict:
    """Each side's drive models, as each run read its drive (null where it did not say), and
    whether they differ: a check across models tells how two drives differ, not whether one
    changed, and it said nothing of it. Unknown models are not called different."""

    def models(recs: Sequence[dict]) -> list[str | None]:
        return sorted({(r.get("target") or {}).get("model") for r in recs}, key=lambda m: m or "")

    b, c = models(baseline), models(candidate)
    known = [m for m in (*b, *c) if m]
    return {"baseline": b, "candidate": c, "differ": len(set(known)) > 1}


def models_note(models: dict) -> str | None:
    """The note `check` prints when the runs are of different drive models, else None."""
    if not models["differ"]:
        return None
    side = {k: ", ".join(m or "unknown" for m in models[k]) for k in ("baseline", "candidate")}
    return (
        f"note: the runs are of different drive models (baseline: {side['baseline']}; candidate: "
        f"{side['candidate']}): each verdict is of the drives' difference, not of a change to one drive"
    )


def mixed_targets(baseline: Sequence[dict], candidate: Sequence[dict]) -> list[str]:
    """A warning per side whose runs are of more than one target (by serial where the target
    gave one, else by its spec) or firmware: `check` took their spread as run-to-run noise and
    called them "repeated runs", so a 20x slower export beside the baseline's own drive widened
    the noise until a real regression read as within noise. (A fleet's groups pool their drives
    on purpose, and are checked without this.)"""
    out = []
    for which, recs in (("baseline", baseline), ("candidate", candidate)):
        by: dict[str, list[str]] = {}
        for r in recs:
            t = r.get("target") or {}
            by.setdefault(_target_key(t), []).append(r["run_id"])
        if len(by) > 1:
            each = "; ".join(f"{k}: {', '.join(ids)}" for k, ids in by.items())
            out.append(
                f"the {which}'s runs are of {len(by)} targets or firmware builds ({each}): their spread, taken as "
                "run-to-run noise, is also the difference between those targets; give repeats of one target on a side"
            )
    return out


def _target_key(t: dict) -> str:
    """A target as one side's repeats must share it: its serial where it gave one, else its spec
    (a simulated drive's without its seed: runs of other seeds are that drive's repeats), and
    its firmware."""
    spec = t.get("spec") or "unknown"
    if t.get("kind") == "sim" and "?" in spec:
        head, query = spec.split("?", 1)
        kept = "&".join(o for o in query.split("&") if not o.startswith("seed="))
        spec = head + (f"?{kept}" if kept else "")
    key = f"serial {t['serial']}" if t.get("serial") else spec
    return key + (f" (firmware {t['firmware']})" if t.get("firmware") else "")


NO_SUCH_FIGURE = "the baseline has no such figure (its runs measured other ones); give a baseline run that has it"


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
        raise IolabError(other_tests(baseline, candidate))
    diffs = differences(baseline, candidate)
    profiles = other_profiles(baseline, candidate, diffs, force)
    if profiles and not force:
        raise IolabError(profiles)
    if diffs and not force:
        raise IolabError(
            "the runs measure different things, so their figures are not comparable: "
            + "; ".join(diffs)
            + ". Run both sides with the same settings, or pass --force."
        )
    meta = _meta(baseline, candidate)
    names = list(meta)
    in_baseline = {f["name"] for r in baseline for f in r["figures"]}
    if not in_baseline:
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
        judged = verdict(n, meta[n], b, c, tolerances, confidence)
        if n not in in_baseline:
            judged |= {"verdict": "not-compared", "method": NO_SUCH_FIGURE}
        elif judged["verdict"] in ("not-measured", "missing"):  # the side with no value says why, where it can
            why = unmeasured(baseline if judged["verdict"] == "not-measured" else candidate, n)
            judged["method"] += f": {why}" if why else ""
        figures.append(judged)
    bad = [f["name"] for f in figures if f["verdict"] in FAILING]
    unsteady = not_steady(baseline) + not_steady(candidate)
    said = steady_warning(unsteady, [*baseline, *candidate], require_steady)
    warnings = [said] if said else []
    warnings += [w for f in figures for w in (partly(baseline, f, "baseline"), partly(candidate, f, "candidate")) if w]
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
        "notes": noncompliant(baseline, candidate) + notes(baseline, candidate) + ([profiles] if profiles else []),
        "drive_models": drive_models(baseline, candidate),
        "junit": None,
    }
