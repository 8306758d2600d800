"""A run's endurance figures: the write amplification they rest on, TBW and DWPD, for the
report's Endurance page and the terminal alike.

TBW = flash capacity × rated P/E cycles ÷ WAF, DWPD = TBW ÷ (user capacity × 365 × warranty
years). Reviewers rate endurance on the steady random-write WAF, the worst case a drive settles
into; a whole run's WAF mixes in fresh-out-of-box and sequential writes (WAF near 1) and so
flatters both. The basis, the first that the run has:

1. the measurement window of the run's last random-write phase (the drive's most written
   state), from the engine's flash and host write counters; whether that phase reached
   steady state is said;
2. the drive's own counters over its phases (SMART; purge and preconditioning included);
3. every cell of the run, preconditioning included.

Each basis counts incompressible writes only (a workload's entropy 1.0, random data): a
compressing drive stores a fraction of compressible data, and the WAF below 1 it measures
there would rate the drive for data a user's random writes do not have (the entropy test's
QD 32 cell at 0 % entropy: WAF 0.67). Cells, or with the drive's counters whole phases, that wrote
compressible data are left out, and the basis names the cells it rests on and those left out.

The basis is printed next to the figure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from iolab.core.cellschema import CellRow
from iolab.core.steady import (
    STEADY_NOT_APPLICABLE,
    STEADY_NOT_EVALUATED,
    STEADY_NOT_REACHED,
    STEADY_REACHED,
    SteadyState,
)
from iolab.figures.phaseend import range_share
from iolab.figures.summary import PhaseSummary
from iolab.store.manifest import Manifest
from iolab.targets import wear
from iolab.targets.model import recorded_drive_bytes


@dataclass(frozen=True)
class Waf:
    value: float
    host_bytes: int
    basis: str  # what the figure is measured over, for the reader
    short: str  # the basis in a few words, next to TBW and DWPD
    cells: tuple[str, ...] = ()  # the cells (or phases) the figure rests on
    left_out: tuple[str, ...] = ()  # those of the basis left out: they wrote compressible data


@dataclass(frozen=True)
class Endurance:
    waf: Waf | None
    physical: float | None  # flash capacity, bytes
    pe: tuple[float | None, str]  # rated P/E cycles and where the rating came from
    years: tuple[float | None, str]  # warranty
    tbw: float | None  # bytes
    dwpd: float | None
    of: str = ""  # what TBW is of when not the drive named (a simulated copy), for the reader


def _copy_scope(manifest: Manifest) -> str:
    """Where the run simulated a smaller copy of the drive (--quick, --capacity-limit), its TBW
    is the copy's flash × P/E ÷ WAF: a 0.537 GB copy of the 400 GB enterprise-sas gave
    "TBW 8.1 TB" beside the drive's name, 750 times short of the drive's. DWPD, a ratio to the
    capacity, holds at either size by the same WAF."""
    t = manifest.target
    of = t.get("copy_of")
    if not of:
        return ""
    size = int(t.get("capacity") or 0)
    return f"of the {size / 1e9:.3f} GB copy of {of} the run simulated, not of the drive itself"


def written(rows: Iterable[CellRow]) -> tuple[float, int] | None:
    """(flash ÷ host writes, host bytes) over these cells from the engine's counters; None where
    the engine does not count flash writes (fio on a real drive) or nothing was written."""
    host = flash = 0
    for r in rows:
        c = r.counters or {}
        if "flash_write_bytes" not in c or "host_write_bytes" not in c:
            continue
        host += int(c["host_write_bytes"])
        flash += int(c["flash_write_bytes"])
    return (flash / host, host) if host > 0 else None


def _random_write(r: CellRow) -> bool:
    streams = (r.workload or {}).get("streams") or ()
    return bool(streams) and all(s.get("access") == "rnd" and s.get("op") == "write" for s in streams)


def _incompressible(r: CellRow) -> bool:
    """The cell writes random data (entropy 1.0; a cell stored before entropy was recorded did)."""
    return float((r.workload or {}).get("entropy", 1.0)) >= 1.0


def _compressible_writes(r: CellRow) -> bool:
    streams = (r.workload or {}).get("streams") or ()
    return not _incompressible(r) and any(s.get("op") == "write" for s in streams)


def _window_text(rounds: tuple[int, ...]) -> str:
    return f"round {rounds[0]}" if len(rounds) == 1 else f"rounds {rounds[0]}–{rounds[-1]}"


def _names(keys: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(keys))


def names_text(names: tuple[str, ...], most: int = 6) -> str:
    """Cell or phase names in a sentence, the first `most` of them and how many more."""
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _left_text(left: tuple[str, ...]) -> str:
    return f"; left out, compressible data: {names_text(left)}" if left else ""


# how the WAF basis names its window's phase state (PhaseSummary.steady_state)
BASIS_STEADY_WORDS: dict[SteadyState, str] = {
    STEADY_REACHED: "at steady state",
    STEADY_NOT_REACHED: "steady state NOT reached",
    STEADY_NOT_EVALUATED: "steady state not evaluated",
    STEADY_NOT_APPLICABLE: "no steady state tracked",
}


def steady_random_write(phases: list[PhaseSummary]) -> Waf | None:
    for ph in reversed(phases):
        window = [r for r in ph.rows if r.round in ph.window]
        if not window or not all(_random_write(r) for r in window):
            continue
        kept = [r for r in window if _incompressible(r)]
        w = written(kept)
        if w is None:
            continue
        state = BASIS_STEADY_WORDS[ph.steady_state]
        if ph.reports_only:  # it runs to its budget (WSAT): its verdict is for information, not a goal missed
            state = f"for information: {state.lower()}"
        what = "steady random write" if ph.steady else "random write"
        cells = _names(r.cell_key for r in kept)
        left = _names(r.cell_key for r in window if not _incompressible(r))
        return Waf(
            w[0],
            w[1],
            f"incompressible {what}: the measurement window of phase {ph.phase.name!r} ({_window_text(ph.window)}, "
            f"{state}), cells {names_text(cells)}{_left_text(left)}",
            f"incompressible {what}",
            cells,
            left,
        )
    return None


def _drive(manifest: Manifest, rows: list[CellRow]) -> Waf | None:
    """The drive's counters over the phases that wrote incompressible data only (a phase's
    counters cannot be split by cell)."""
    mixed = {r.phase for r in rows if _compressible_writes(r)}
    both: dict[str, tuple[int, int]] = {}
    for name, rec in manifest.endurance.items():
        c = wear.phase_writes(rec)
        if c and c[0] and c[1] is not None:
            both[name] = (c[0], c[1])
    kept = [name for name in both if name not in mixed]
    host = sum(both[name][0] for name in kept)
    if not host:
        return None
    left = _names(name for name in both if name in mixed)
    return Waf(
        sum(both[name][1] for name in kept) / host,
        host,
        "the drive's own counters over its phases that wrote incompressible data, purge and preconditioning "
        f"included (no random-write measurement window counted flash writes): phases {names_text(tuple(kept))}"
        f"{_left_text(left)}",
        "drive counters, incompressible phases",
        tuple(kept),
        left,
    )


def endurance_waf(manifest: Manifest, phases: list[PhaseSummary], preconditioning: list[CellRow]) -> Waf | None:
    rows = [*preconditioning, *(r for ph in phases for r in ph.rows)]
    w = steady_random_write(phases) or _drive(manifest, rows)
    if w is not None:
        return w
    kept = [r for r in rows if _incompressible(r)]
    whole = written(kept)
    if whole is None:
        return None
    left = _names(f"{r.phase} {r.cell_key}" for r in rows if _compressible_writes(r))
    return Waf(
        whole[0],
        whole[1],
        "every cell of the run that wrote incompressible data, preconditioning included (the run has no "
        f"random-write measurement window){_left_text(left)}",
        "whole run, incompressible writes",
        _names(f"{r.phase} {r.cell_key}" for r in kept),
        left,
    )


def _rating(manifest: Manifest, name: str, rated: str, option: str) -> tuple[float | None, str]:
    """The user's --set/option, else the drive's own (a simulated preset's rating), else none."""
    v = manifest.plan.get("values", {}).get(name, 0)
    if v and v > 0:
        return float(v), option
    own = manifest.target.get("facts", {}).get(rated)
    return (float(own), "preset") if own else (None, "")


def measures_endurance(manifest: Manifest) -> bool:
    """Whether the run's test measures endurance: it declares the endurance parameters (rated
    P/E cycles, warranty) and its report has an Endurance page. Only such a run has TBW and DWPD,
    on the basis that page states; any other run's counters (a latency run's, its WIPC
    preconditioning counted) are no endurance figure of the drive (specsheet.py: a criterion on
    DWPD is "not measured" by it), on every page alike."""
    return "pe_cycles" in manifest.plan.get("values", {})


def endurance_record(manifest: Manifest, phases: list[PhaseSummary], preconditioning: list[CellRow]) -> dict | None:
    """The run's endurance figures as its run record (`--json`) holds them, read by the front
    page and the fleet's spec-sheet verdicts alike; None for a run that does not measure
    endurance (measures_endurance) or has no WAF to rest them on."""
    if not measures_endurance(manifest) or not phases:
        return None
    e = endurance(manifest, phases, preconditioning)
    if e.waf is None:
        return None
    return {
        "waf": e.waf.value,
        "basis": e.waf.basis + (f"; TBW is {e.of}" if e.of else ""),
        "short": e.waf.short,
        "tbw_bytes": e.tbw,
        "dwpd": e.dwpd,
        "warranty_years": e.years[0],
    }


def _confined(manifest: Manifest, waf: Waf | None) -> Waf | None:
    """The WAF, saying so where the run's writes were confined to part of the drive (a capacity
    limit or a device's ?size=: phaseend.range_share): the rest of its flash stayed free, so
    garbage collection found blocks all but empty (a QoS run on 1 GiB of a 400 GB drive: WAF
    1.00, "TBW 15,361 TB"), and TBW and DWPD rest on that range's WAF, not the drive's."""
    t = manifest.target
    tested = int(t.get("tested_capacity") or t.get("capacity") or 0)
    share = range_share(tested, recorded_drive_bytes(t), float(manifest.profile.get("active_range", 1.0)))
    if waf is None or share is None:
        return waf
    part = f"{share * 100:.2g} % of the drive's range"
    said = f"; the writes were confined to {part} (the rest of its flash free): not the drive's full-span WAF"
    return replace(waf, basis=waf.basis + said, short=f"{waf.short}, {part}")


def endurance(manifest: Manifest, phases: list[PhaseSummary], preconditioning: list[CellRow]) -> Endurance:
    waf = _confined(manifest, endurance_waf(manifest, phases, preconditioning))
    ops = [r.counters["op"] for ph in phases for r in ph.rows if "op" in r.counters]
    user = manifest.target.get("capacity")
    physical = user * (1 + ops[-1]) if ops and user else None
    pe = _rating(manifest, "pe_cycles", "rated_pe_cycles", "--pe-cycles")
    years = _rating(manifest, "warranty_years", "warranty_years", "--warranty-years")
    tbw = physical * pe[0] / waf.value if waf and physical and pe[0] and waf.value > 0 else None
    dwpd = tbw / (user * 365 * years[0]) if tbw and user and years[0] else None
    return Endurance(waf, physical, pe, years, tbw, dwpd, _copy_scope(manifest) if tbw else "")


__all__ = [
    "Endurance",
    "Waf",
    "endurance",
    "endurance_record",
    "endurance_waf",
    "measures_endurance",
    "names_text",
    "steady_random_write",
    "written",
]
