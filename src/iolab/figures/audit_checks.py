"""The invariants of the self-audit (audit.py), each a function over the stored run.

Every check recomputes its evidence from what the run directory holds (cells, their raw engine
counters, per-second rows, histograms, the manifest's target and plan); none reads the runner's
verdict as evidence of itself. Tolerances are named constants with the reason for their size.
"""

from __future__ import annotations

import math
import urllib.parse
from dataclasses import replace
from typing import Any

from iolab.core.cellschema import CellRow
from iolab.core.profilewords import limit_source
from iolab.core.steady import SteadyRule
from iolab.core.units import counted, measurable
from iolab.figures.audit_issued import ISSUED_WORDS
from iolab.figures.audit_rates import RATE_TOL, cell_bytes, cell_name, rate_text, rates_differ, sides
from iolab.figures.audit_raw import damaged_outputs, json_outputs
from iolab.figures.audit_series import Shape, findings
from iolab.figures.audit_steady import disagreements, recheck, verdict_contradictions
from iolab.figures.audit_view import FAIL, NA, PASS, Invariant, Outcome, RunView
from iolab.figures.endurance import measures_endurance, steady_random_write
from iolab.figures.phaseend import (
    range_label,
    range_share,
    since_words,
    turned_down,
    window_doubt,
    window_erases,
    write_minimum,
    written_since_purge,
)
from iolab.store import bulk as storebulk
from iolab.store.manifest import Manifest
from iolab.store.runstore import PhaseRow
from iolab.targets.model import recorded_drive_bytes

# A cell's flash writes lag its host writes by at most what the controller's write buffer holds
# at the cell's end (the simulator's buffer_bytes); this much of the host writes more covers the
# pages a cell ends with half-programmed.
WAF_SLACK = 0.01
# No IO counted in a cell can have waited longer than the cell ran (its ramp included): this
# much more covers clock reads at the cell's start and end.
LAT_SLACK = 0.01
LAT_SLACK_S = 0.010
# The realised read share against the plan's: fio's rwmixread is a whole percent (1 %), and
# fio's flow control keeps the sections' proportions within about 1 %; on top, the binomial
# spread of a random choice per IO (SHARE_SIGMAS standard deviations).
SHARE_TOL = 0.02
SHARE_SIGMAS = 4.0
SHARE_MIN_IOS = 100  # fewer IOs say nothing about a share
# HDD: the media rate (the outer zone's) may be exceeded by timer jitter in a logged second;
# beyond that only the drive's cache can deliver more, at most its size once in an interval.
HDD_TOL = 0.05


def _outcome(
    failures: list[str], checked: int, what: str, numbers: dict[str, Any], said: str = "", one: str | None = None
) -> Outcome:
    """`what` is the plural of the things checked, `one` its singular (the count takes it: units.counted)."""
    if not checked:
        return Outcome(NA, f"no {what} to check", numbers)
    numbers["checked"] = checked
    if failures:
        more = f" (and {len(failures) - 2} more)" if len(failures) > 2 else ""
        numbers["failures"] = len(failures)
        return Outcome(FAIL, "; ".join(failures[:2]) + more, numbers)
    return Outcome(PASS, f"{counted(checked, one or what, what)} checked" + (f": {said}" if said else ""), numbers)


def _streams(c: CellRow) -> list[dict[str, Any]]:
    return list((c.workload or {}).get("streams") or ())


# -- the invariants ----------------------------------------------------------------------------


def _runner_doubt(v: RunView, p: PhaseRow, window: tuple[int, ...], n: dict[str, Any]) -> tuple[str | None, str]:
    """Why the runner stores a passing window of phase `p` as not steady (None: steady), decided
    by its own functions (phaseend.settle's) over the stored run, and the evidence it rests on
    (for the pass line); `n` takes the numbers behind it."""
    planned = {q.get("name"): q for q in v.m.plan.get("phases", ())}
    names = list(planned)
    cells = [c for c in v.cells if c.phase == p.name]
    tracks_writes = bool(planned[p.name].get("tracking")) and any(
        s.get("op") == "write" for c in cells for s in _streams(c)
    )
    # a run stored before the steady-state minimum existed ran without one (as resume goes on)
    rule = SteadyRule.of_profile({"steady_min_write_multiple": 0.0} | v.m.profile)
    given = int(v.m.target.get("capacity") or 0)
    tested = int(v.m.target.get("tested_capacity") or given)
    # the share of the whole drive, as the runner judged it (Target.drive_capacity)
    cap = recorded_drive_bytes(v.m.target)
    cut = _cut_by(v.m, given, tested)
    minimum = write_minimum(rule, tested, tracks_writes)
    since = written_since_purge(v.store, names.index(p.name))
    erased = window_erases(v.store, p.name, window) if tracks_writes and since >= minimum else {}
    doubt = window_doubt(window, since, minimum, rule.minimum_text(), tracks_writes, erased)
    share = range_share(tested, cap, float(v.m.profile.get("active_range", 1.0)))
    written = sum(c.write_bytes or 0 for c in cells)
    n.update({"window": list(window), "written_since_purge_bytes": since, "minimum_bytes": minimum})
    n.update({"erases_per_round": [erased.get(r) for r in window]} if erased else {})
    evidence = f"{p.name}: {since / 1e9:.3f} GB written {since_words(v.store)} (≥ {minimum / 1e9:.3f} GB)"
    if erased:
        evidence += f", {min(erased.values()):,.0f}+ erases in every window round"
    why = turned_down(written, planned[p.name].get("min_write_bytes"), doubt, share)
    if share is not None and why == range_label(share):
        asked = cap * float(v.m.profile.get("active_range", 1.0))
        why = (
            f"steady on {tested / cap:.0%} of the drive's LBAs (tested {tested / 1e9:.3f} of {asked / 1e9:.3f} GB, "
            f"the range cut by {cut}): {why}"
        )
    return why, evidence


def _cut_by(m: Manifest, given: int, tested: int) -> str:
    """What cut a stored run's tested range below the drive's: its capacity limit, as runstart's
    non-compliance names it, or the target's own ?size= (a device's first part)."""
    source = limit_source(m.profile)
    if source and tested < int(given * float(m.profile.get("active_range", 1.0))):
        return "the quick limit" if source == "--quick" else source
    size = urllib.parse.parse_qs(str(m.target.get("spec")).partition("?")[2]).get("size", [""])[0]
    return f"the target's ?size={size}"


def steady_evidence(v: RunView) -> Outcome:
    phases = {p.name: p for p in v.store.phases()}
    tables = {name: v.store.steady_rows(name) for name in phases}
    judged = [p for p in phases.values() if p.steady or (p.steady is not None and tables[p.name])]
    if not judged:
        return Outcome(NA, "no phase is stored with a steady-state verdict")
    planned = {p.get("name"): p for p in v.m.plan.get("phases", ())}
    failures: list[str] = []
    said: list[str] = []
    numbers: dict[str, Any] = {}
    for p in judged:
        table = tables[p.name]
        window = table[0].rounds if table else ()
        if not window:
            failures.append(f"{p.name}: stored as steady without a steady-state window")
            continue
        n: dict[str, Any] = {"stored_steady": p.steady}
        why, evidence = _runner_doubt(v, p, window, n)
        if p.steady and why is not None:
            failures.append(f"{p.name}: stored as steady, but the runner turns its window down: {why}")
        elif p.steady:
            said.append(evidence)
        r = recheck(planned.get(p.name, {}), v.m.profile, table, [c for c in v.cells if c.phase == p.name])
        n["recomputed_steady"] = r.verdict.steady if r.verdict else None
        failures += disagreements(p.name, r)
        failures += verdict_contradictions(p, r, [why] if why else [])
        numbers[p.name] = n
    return _outcome(
        failures,
        len(judged),
        "phases with a steady-state verdict",
        numbers,
        "; ".join(said),
        "phase with a steady-state verdict",
    )


def waf_floor(v: RunView) -> Outcome:
    buffer = int((v.sim or {}).get("buffer_bytes") or 0)
    failures, checked, wafs = [], 0, []
    for c in v.cells:
        k = c.counters or {}
        host, flash = float(k.get("host_write_bytes", 0)), k.get("flash_write_bytes")
        writes = [s for s in _streams(c) if s.get("op") == "write"]
        incompressible = float((c.workload or {}).get("entropy", 1.0)) >= 1.0
        if flash is None or host <= 0 or not writes or not incompressible:
            continue
        if any(s.get("access") != "rnd" for s in writes):
            continue
        checked += 1
        wafs.append(float(flash) / host)
        if float(flash) < host - buffer - WAF_SLACK * host:
            failures.append(
                f"{cell_name(c)}: WAF {float(flash) / host:.3f} < 1 for incompressible random writes "
                f"({float(flash) / 1e6:.1f} MB flash for {host / 1e6:.1f} MB host writes)"
            )
    numbers: dict[str, Any] = {"buffer_bytes": buffer}
    if wafs:
        numbers["waf_min"], numbers["waf_max"] = min(wafs), max(wafs)
    return _outcome(
        failures,
        checked,
        "incompressible random-write cells with flash counters",
        numbers,
        one="incompressible random-write cell with flash counters",
    )


def series_totals(v: RunView) -> Outcome:
    """Every shown cell with per-second rows, measurements and preconditioning (a fill or WIPC
    cell stores its rows as a measurement does, and the pages plot them). The bound, and why it
    is what fio's logs can leave out, is audit_series.py's."""
    failures, checked, worst, short, measured = [], 0, 0.0, 0, 0
    for c in v.cells + v.store.cells(kind="precondition"):
        rows = v.series.get(c.id)
        if not rows or not c.runtime_s:
            continue
        checked += 1
        measured += c.kind == "measure"
        w = c.workload or {}
        largest = max((int(s.get("block_size", 0)) for s in _streams(c)), default=0)
        shape = Shape(
            c.ios, c.io_bytes or 0, c.runtime_s, int(w.get("threads", 1)), int(w.get("queue_depth", 1)), largest
        )
        found = findings(rows, shape)
        short += any(f.rows_sum < f.total for f in found)
        for f in found:
            worst = max(worst, abs(f.rows_sum - f.total) / f.total)
            if f.short or f.over:
                failures.append(f"{cell_name(c)}: {f.text()}")
    # store/rowcheck.py weighs the measurements with rows against latency-runtime's count of them
    numbers = {"worst_difference": worst, "rows_short_of_the_totals": short, "measurement_cells": measured}
    return _outcome(failures, checked, "cells with per-second rows", numbers, one="cell with per-second rows")


def latency_runtime(v: RunView) -> Outcome:
    failures, checked = [], 0
    for c in v.cells:
        if not c.runtime_s:
            continue
        ramp = float((c.workload or {}).get("ramp_s") or 0.0)
        limit_us = ((c.runtime_s + ramp) * (1 + LAT_SLACK) + LAT_SLACK_S) * 1e6
        lats = {
            "maximum": c.lat_max_us,
            "read maximum": c.read_lat_max_us,
            "write maximum": c.write_lat_max_us,
            "mean": c.lat_mean_us,
            "99.999 %": c.p99_999,
        }
        lats.update({f"per-second maximum at {row[0]:g} s": row[4] for row in v.series.get(c.id, ())})
        checked += 1
        for name, us in lats.items():
            if us is not None and us > limit_us:
                failures.append(
                    f"{cell_name(c)}: {name} latency {us / 1e6:.3f} s exceeds the cell's runtime "
                    f"{c.runtime_s:.3f} s (+ ramp {ramp:g} s)"
                )
                break
    return _outcome(failures, checked, "cells", {}, one="cell")


def percentile_samples(v: RunView) -> Outcome:
    failures, checked, issued = [], 0, 0
    for c in v.cells:
        total = v.histogram_totals.get(c.id)
        if total is None:
            continue
        checked += 1
        if total != c.ios and c.id in v.issued:
            issued += 1
        elif total != c.ios:
            failures.append(f"{cell_name(c)}: its latency histogram holds {total:,} IOs, the cell {c.ios:,}")
        for pct, val in ((99.0, c.p99), (99.9, c.p99_9), (99.99, c.p99_99), (99.999, c.p99_999)):
            if val is not None and c.lat_max_us is not None and val > c.lat_max_us * (1 + RATE_TOL):
                failures.append(f"{cell_name(c)}: {pct:g} % {val:,.1f} µs above its largest sample {c.lat_max_us:,.1f}")
    for ph in v.summaries:
        for a in ph.cells:
            if a.p99_999_us is not None and not measurable(99.999, a.ios):
                failures.append(
                    f"{ph.phase.name} window {a.key}: a 99.999 % shown from {a.ios or 0:,} IOs, "
                    "fewer than it needs to be measured"
                )
    said = f"{counted(issued, 'cell')} {ISSUED_WORDS}" if issued else ""
    numbers = {"issued_counts": issued}
    return _outcome(
        failures, checked, "cells with latency histograms", numbers, said, one="cell with latency histograms"
    )


def hdd_media(v: RunView) -> Outcome:
    if not v.m.target.get("facts", {}).get("rotational"):
        return Outcome(NA, "not a rotating drive")
    params = dict((v.sim or {}).get("params") or ())
    media = float(params.get("outer_mbps") or 0)
    cache_mb = float((v.sim or {}).get("cache_bytes") or 0) / 1e6
    if not media:
        return Outcome(NA, "the drive's media rate is not known (only a simulated HDD states it)")
    failures, checked, top = [], 0, 0.0
    for c in v.cells:
        t_prev = 0.0
        for t, _r, _w, mbps, _ in v.series.get(c.id, ()):
            dt, t_prev = max(t - t_prev, 1e-3), t
            checked += 1
            top = max(top, mbps)
            limit = media * (1 + HDD_TOL) + cache_mb / dt
            if mbps > limit:
                failures.append(
                    f"{cell_name(c)} at {t:g} s: {mbps:,.1f} MB/s beyond the media's {media:g} MB/s "
                    f"plus its {cache_mb:g} MB cache ({limit:,.1f} MB/s)"
                )
    return _outcome(
        failures,
        checked,
        "per-second rows",
        {"media_mbps": media, "cache_mb": cache_mb, "highest_mbps": top},
        one="per-second row",
    )


def iops_bytes(v: RunView) -> Outcome:
    failures, checked = [], 0
    for c in (v.issued.get(c.id, c) for c in v.cells):
        for side, ios, iops, mbps in sides(c):
            if not ios or iops is None or mbps is None:
                continue
            sizes = {int(s["block_size"]) for s in _streams(c) if s.get("op") == side}
            size = sizes.pop() if len(sizes) == 1 else None
            if size is None:  # per-direction bytes are not stored: a mix of sizes checks below, as a whole
                continue
            checked += 1
            want = iops * size / 1e6
            if rates_differ(want, mbps):
                failures.append(
                    f"{cell_name(c)} {side}: {rate_text(iops)} IOPS × {size:,} B = {rate_text(want)} MB/s, stored {rate_text(mbps)} MB/s"
                )
        if c.ios and c.io_bytes and c.iops and c.mbps:
            checked += 1
            failures += cell_bytes(c)
    return _outcome(failures, checked, "directions and cells", {})


def rw_shares(v: RunView) -> Outcome:
    failures, checked = [], 0
    for c in (v.issued.get(c.id, c) for c in v.cells):
        streams = _streams(c)
        total = sum(float(s.get("share", 1.0)) for s in streams)
        if not streams or c.ios < SHARE_MIN_IOS or total <= 0:
            continue
        planned = sum(float(s.get("share", 1.0)) for s in streams if s.get("op") == "read") / total
        got = (c.read_ios or 0) / c.ios
        allowed = (
            0.0 if planned in (0.0, 1.0) else SHARE_TOL + SHARE_SIGMAS * math.sqrt(planned * (1 - planned) / c.ios)
        )
        checked += 1
        if abs(got - planned) > allowed:
            failures.append(
                f"{cell_name(c)}: {got:.1%} of the IOs were reads, the mix plans {planned:.1%} (allowed ± {allowed:.1%})"
            )
    return _outcome(failures, checked, "cells", {}, one="cell")


def endurance_basis(v: RunView) -> Outcome:
    """The cells endurance.py says its TBW and DWPD rest on, looked up in the stored window
    they came from: every one must have written incompressible data (a compressing drive's
    WAF on compressible data flatters them)."""
    if not measures_endurance(v.m):
        return Outcome(NA, "the run states no endurance figures")
    w = steady_random_write(v.summaries)
    if w is None:
        return Outcome(NA, "no random-write window with flash counters: the endurance figures use the drive's counters")
    named = set(w.cells)
    basis = [r for ph in v.summaries for r in ph.rows if r.round in ph.window and r.cell_key in named]
    low = [c for c in basis if float((c.workload or {}).get("entropy", 1.0)) < 1.0]
    numbers = {"cells": len(basis), "compressible_cells": len(low), "left_out": list(w.left_out)}
    if low:
        e = min(float(c.workload.get("entropy", 1.0)) for c in low)
        return Outcome(
            FAIL,
            f"the endurance basis ({w.short}) holds {counted(len(low), 'cell')} of compressible data (entropy {e:g}): "
            "its WAF flatters TBW and DWPD",
            numbers,
        )
    left = f"; {counted(len(w.left_out), 'compressible cell')} left out" if w.left_out else ""
    return Outcome(
        PASS, f"the endurance basis ({counted(len(basis), 'cell')}) wrote incompressible data{left}", numbers
    )


def raw_output(v: RunView) -> Outcome:
    """Every shown cell's raw engine output (measurements and preconditioning) is whole."""
    cells = v.cells + v.store.cells(kind="precondition")
    checked, bad = damaged_outputs(v.store.dir, cells, storebulk.raw_stats(v.store))
    return _outcome(bad, checked, "cells with raw engine output", {}, one="cell with raw engine output")


def raw_figures(v: RunView) -> Outcome:
    """Every engine figure of every cell with raw output, and the steady-state tables made from
    them, as the engine's parser gives them from that output again (audit_rederive.py)."""
    # here, not at the top: `show` of a run unchanged since its end imports no engine (it never runs this)
    from iolab.engines.reread import reads
    from iolab.figures.audit_rederive import rederive, steady_tables

    engine = str(v.m.versions.get("engine") or "")
    if not reads(engine):
        return Outcome(
            NA, f"the run's engine ({engine or 'not recorded'}) writes raw output no parser of iolab's reads"
        )
    cells = v.cells + v.store.cells(kind="precondition")
    outputs = {c.id: json_outputs(c) for c in cells}
    got = rederive(v.store.dir, cells, outputs, v.histogram_rows, storebulk.series_rows(v.store))
    raw = [got.cells.get(c.id, c) for c in v.cells]
    tables, differ = steady_tables(v.store, v.m.plan, v.m.profile, v.cells, raw)
    numbers = {"steady_tables": tables, "steady_findings": len(differ), "issued_counts": got.issued}
    numbers["series_cells"] = got.series
    # the reason names the first two findings: a cell's and a table's, when both kinds differ
    failures = got.failures[:1] + differ[:1] + got.failures[1:] + differ[1:]
    said = f"per-second series of {counted(got.series, 'cell')} derived again from their raw output"
    said += f"; {counted(got.issued, 'cell')} {ISSUED_WORDS}" if got.issued else ""
    out = _outcome(
        failures, got.checked, "cells with raw engine output", numbers, said, one="cell with raw engine output"
    )
    if out.status == FAIL and got.kinds is not None:
        # only the figures of the kinds found to differ are marked (a steady-state table's: every window figure)
        return replace(out, touches=tuple(got.kinds | ({"steady-state"} if differ else set())))
    return out


INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        "steady-evidence",
        "a phase stored as steady has left fresh-out-of-box on the run's own evidence: on the whole LBA "
        "range, with erases in every window round (simulator) or the rule's minimum written since the purge",
        ("steady-state",),
        steady_evidence,
    ),
    Invariant("waf-floor", "WAF ≥ 1 for incompressible random writes", ("WAF", "endurance"), waf_floor),
    Invariant("series-totals", "the per-second rows add up to the cell totals", ("per-second",), series_totals),
    Invariant("latency-runtime", "no latency above the cell's runtime", ("latency", "percentile"), latency_runtime),
    Invariant(
        "percentile-samples",
        "no percentile beyond its sample count (histogram = IO count; a shown percentile has its IOs)",
        ("percentile",),
        percentile_samples,
    ),
    Invariant("hdd-media", "HDD per-second MB/s within media plus cache", ("MB/s", "per-second"), hdd_media),
    Invariant("iops-bytes", "IOPS × block size = MB/s", ("IOPS", "MB/s"), iops_bytes),
    Invariant("rw-shares", "read/write shares match the mix", ("IOPS", "MB/s"), rw_shares),
    Invariant("endurance-basis", "the endurance basis wrote incompressible data", ("endurance",), endurance_basis),
    Invariant(
        "raw-output",
        "every shown cell's raw engine output is whole (not cut short, not missing): its figures rest on it",
        # every figure of a cell rests on its output (audit.TOUCHES' kinds, all of them)
        ("steady-state", "IOPS", "MB/s", "latency", "percentile", "per-second", "WAF", "endurance"),
        raw_output,
    ),
    Invariant(
        "raw-figures",
        "every cell's stored figures (rates, IO counts, bytes, runtime, latencies, percentiles, histogram, "
        "counters, per-second series) and the steady-state tables made from them are what its raw engine "
        "output gives",
        ("steady-state", "IOPS", "MB/s", "latency", "percentile", "per-second", "WAF", "endurance"),
        raw_figures,
    ),
)
