"""`iolab run TEST --repeat N`: the test run N times, one after the other, each a whole run of
its own (its own purge, preconditioning and steady state, as the test prescribes), then each
key figure's mean with a confidence interval over the N runs: of the geometric mean for a
magnitude (tstat.py: the t interval of the logarithms, never below 0), else Student t.

Each repeat is the same `iolab run` as a child process (as scaleout.run_many runs one per
target), so a repeat is exactly what a single run is and is stored as one. A simulated drive
without `seed=` gets seed=k in repeat k: the simulator repeats its random stream exactly
otherwise, where a real drive's second run would not. The runs are what `iolab check` takes as
repeats: their figures' spread is the noise (automation/noise.side).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iolab.api.scaleout import ChildStop, _without_targets
from iolab.automation.tstat import geometric_mean, magnitude, on_log_scale, t_quantile
from iolab.core.errors import Exit, IolabError
from iolab.core.stopdefer import CHILD_MAIN
from iolab.core.streams import OUTCOME_FILE_ENV, note_line
from iolab.run.stopsignals import stop_on_signals

CONFIDENCE = 0.95
METHOD = (
    "95 %; for a magnitude (IOPS, MB/s, a time, a size, a share) whose runs are all above 0, the t interval "
    "of the logarithms (geometric): geometric mean ×/÷ exp(t(0.975, n−1) × s_ln / √n), with s_ln the sample "
    "standard deviation of the n runs' natural logarithms, asymmetric and above 0; else Student t: mean ± "
    "t(0.975, n−1) × s / √n, with s the sample standard deviation of the n runs' figures, its lower end "
    "clipped at 0 for a magnitude; none for an extreme (one observation per run, such as a maximum response "
    "time: no standard error and a heavy-tailed spread, as iolab check holds)"
)


NO_INTERVAL = {
    "interval": "none",
    "half_width": None,
    "low": None,
    "high": None,
    "geometric_mean": None,
    "factor": None,
}


def _without(argv: Sequence[str], flag: str, takes_value: bool) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == flag:
            skip = takes_value
        elif not a.startswith(flag + "="):
            out.append(a)
    return out


def repeat_target(spec: str, k: int) -> str:
    """The target of repeat k (1-based): a simulated drive without a seed gets seed=k."""
    if not spec.startswith("sim:"):
        return spec
    query = spec.split("?", 1)[1] if "?" in spec else ""
    if any(p.split("=", 1)[0] == "seed" for p in query.split("&") if p):
        return spec
    return f"{spec}{'&' if query else '?'}seed={k}"


def interval(values: Sequence[float], unit: str = "") -> dict:
    """Mean, sample standard deviation and the confidence interval of the centre (n >= 2): of the
    geometric mean for a magnitude whose values are all above 0 (tstat.on_log_scale), else of
    the mean (clipped at 0 for a magnitude). `interval` names which; `half_width` is the t
    interval's, `factor` the geometric one's (×/÷)."""
    n = len(values)
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if n >= 2 else 0.0
    t = t_quantile(0.5 + CONFIDENCE / 2, n - 1) if n >= 2 else None
    out: dict[str, Any] = {"n": n, "mean": mean, "stdev": sd, "half_width": None, "low": None, "high": None}
    if on_log_scale(unit, values):
        centre = geometric_mean(values)
        out |= {"interval": "geometric", "geometric_mean": centre, "factor": None}
        if t is not None:
            factor = math.exp(t * statistics.stdev([math.log(v) for v in values]) / math.sqrt(n))
            out |= {"factor": factor, "low": centre / factor, "high": centre * factor}
        return out
    out["interval"] = "t"
    if t is not None:
        half = t * sd / math.sqrt(n)
        out |= {"half_width": half, "low": mean - half, "high": mean + half}
        if magnitude(unit) and mean - half < 0:  # no magnitude lies below 0
            out |= {"interval": "t, clipped at 0", "low": 0.0}
    return out


def summary(records: Sequence[dict]) -> dict:
    """The `repeat` part of the document: per key figure of the complete runs, its values,
    mean and confidence interval. A figure is its test's: a sequence's tests may name figures
    alike, and one test's values never join another's."""
    done = [r for r in records if r["state"] == "complete"]
    per_test = Counter(r["test"] for r in done)
    figures = []
    for test, name in dict.fromkeys((r["test"], f["name"]) for r in done for f in r["figures"]):
        mine = [f for r in done if r["test"] == test for f in r["figures"] if f["name"] == name]
        values = [f["value"] for f in mine if f["value"] is not None]
        why = list(dict.fromkeys(f["unmeasured"] for f in mine if f["value"] is None and f.get("unmeasured")))
        kind = mine[0].get("kind", "value")
        spread = interval(values, mine[0]["unit"]) if values else {"n": 0, "mean": None, "stdev": None}
        if kind == "extreme":
            # one maximum per run is no mean of samples: a t interval of 3 runs' maximum
            # latencies (163,495, 8,831, 24,034 µs) went from -146,310 to 277,216 µs
            spread = {k: spread[k] for k in ("n", "mean", "stdev")}  # NO_INTERVAL below: "none"
        figures.append(
            {
                "test": test,
                "name": name,
                "unit": mine[0]["unit"],
                "direction": mine[0]["direction"],
                "kind": kind,
                "values": values,
                **(NO_INTERVAL | spread),
                **({"unmeasured": why} if why else {}),
            }
        )
    return {
        "runs": len(done),
        # a repeat of a sequence is one run per test: it is complete when every test's run is
        "repeats": min(per_test.values(), default=0),
        "confidence": CONFIDENCE,
        "method": METHOD,
        "figures": figures,
        "caveats": caveats(done),
    }


def caveats(done: Sequence[dict]) -> list[str]:
    """What the means are of, where the runs do not hold what a reader takes them for: runs that
    did not show steady state (their figures may still drift, so the interval is no spread of
    repeats of one state) and non-compliant (scaled-down) runs, each said with its runs' count,
    as a run's own page and a comparison carry them."""
    out = []
    unsteady = Counter(r["steady_state"] for r in done if r.get("steady_state") in ("not-reached", "not-evaluated"))
    if unsteady:
        how = ", ".join(f"{state.replace('-', ' ')} in {n}" for state, n in unsteady.items())
        out.append(
            f"steady state not shown in {sum(unsteady.values())} of {len(done)} runs ({how}): "
            "their figures may still be drifting, and the interval spans that drift"
        )
    odd = [r for r in done if r.get("compliant") is False]
    if odd:
        why = "; ".join(dict.fromkeys(w for r in odd for w in r.get("noncompliance") or ()))
        out.append(f"NON-COMPLIANT: {len(odd)} of {len(done)} runs: {why}")
    return out


def run_repeated(
    n: int, argv: list[str], target: list[str] | None, default_target: str, json_out: bool = False
) -> tuple[list[dict], int, str]:
    """Run `iolab run` (argv, without --repeat) n times; returns the runs' records, the exit
    code (that of the first repeat that did not complete: no further repeat starts after it;
    else the largest, e.g. 6 with --require-steady) and the error it printed. Each repeat's
    results go where a single run's do: standard output, or standard error under `json_out`
    (the repeat's own document is then standard output's only content)."""
    if n < 1 or n > 1000:
        raise IolabError(f"--repeat {n}: give a number of runs from 1 to 1,000.")
    if target and len(target) > 1:
        raise IolabError("--repeat repeats a run on one target; with several --target, run each with --repeat.")
    base = _without(_without(_without_targets(argv), "--repeat", True), "--json", False)
    spec = target[0] if target else default_target
    records: list[dict] = []
    code = Exit.OK
    procs: list[tuple[str, subprocess.Popen]] = []
    stop = ChildStop(procs)
    # SIGTERM, SIGHUP and Ctrl-C stop the repeat under way rather than this process alone (its
    # run went on writing the target unattended): it is told once, in its own process group,
    # and this process waits for it to record its interruption, then starts no other
    with stop_on_signals(), tempfile.TemporaryDirectory(prefix="iolab-repeat-") as told:
        for k in range(1, n + 1):
            note_line(f"repeat {k} of {n}: {repeat_target(spec, k)}")
            doc = _one_repeat(base, repeat_target(spec, k), procs, stop, (Path(told) / f"{k}.json", json_out))
            records += doc.get("runs", [])
            if stop.code is not None:  # first: a stop that came before the repeat started started none
                return records, stop.code, doc.get("error", "")
            proc = procs[-1][1]
            if proc.returncode not in (Exit.OK, Exit.NOT_STEADY):
                return records, proc.returncode, doc.get("error", "")
            code = max(code, proc.returncode)
    return records, code, ""


def _one_repeat(
    base: list[str], spec: str, procs: list[tuple[str, subprocess.Popen]], stop: ChildStop, out: tuple[Path, bool]
) -> dict:
    """Run one repeat (`iolab run` on `spec`, --json into out[0]) to its end, whatever stop
    signals arrive (passed on once by `stop`); its document ({} when it wrote none: refused
    before it began). Its standard output is this process's, or its standard error when this
    one prints --json (out[1])."""
    told, json_out = out

    def start() -> list:
        # main(), not app(): a child's error comes out as its one paragraph and exit code; its
        # stops blocked until it can take them (ChildStop.start_and_wait)
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD_MAIN, *base, "--target", spec, "--json"],
            stdout=sys.stderr if json_out else None,
            env=dict(os.environ, **{OUTCOME_FILE_ENV: str(told)}),
            process_group=0,
        )
        procs.append((spec, proc))
        return []  # its output is this process's own: no reader to wait for

    stop.start_and_wait([start])
    try:
        return json.loads(told.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
