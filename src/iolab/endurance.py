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

The basis is printed next to the figure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .cellschema import CellRow
from .manifest import Manifest
from .summary import PhaseSummary
from .targets import wear


@dataclass(frozen=True)
class Waf:
    value: float
    host_bytes: int
    basis: str  # what the figure is measured over, for the reader
    short: str  # the basis in a few words, next to TBW and DWPD


@dataclass(frozen=True)
class Endurance:
    waf: Waf | None
    physical: float | None  # flash capacity, bytes
    pe: tuple[float | None, str]  # rated P/E cycles and where the rating came from
    years: tuple[float | None, str]  # warranty
    tbw: float | None  # bytes
    dwpd: float | None


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


def _window_text(rounds: tuple[int, ...]) -> str:
    return f"round {rounds[0]}" if len(rounds) == 1 else f"rounds {rounds[0]}–{rounds[-1]}"


def steady_random_write(phases: list[PhaseSummary]) -> Waf | None:
    for ph in reversed(phases):
        window = [r for r in ph.rows if r.round in ph.window]
        w = written(window) if window and all(_random_write(r) for r in window) else None
        if w is None:
            continue
        state = {True: "at steady state", False: "steady state NOT reached", None: "steady state not evaluated"}[
            ph.steady
        ]
        what = "steady random write" if ph.steady else "random write"
        return Waf(
            w[0],
            w[1],
            f"{what}: the measurement window of phase {ph.phase.name!r} ({_window_text(ph.window)}, {state})",
            what,
        )
    return None


def _drive(manifest: Manifest) -> Waf | None:
    both = [
        (h, m) for h, m, _ in filter(None, map(wear.phase_writes, manifest.endurance.values())) if h and m is not None
    ]
    host = sum(h for h, _ in both)
    if not host:
        return None
    return Waf(
        sum(m for _, m in both) / host,
        host,
        "the drive's own counters over its phases, purge and preconditioning included "
        "(no random-write measurement window counted flash writes)",
        "drive counters, whole run",
    )


def endurance_waf(manifest: Manifest, phases: list[PhaseSummary], preconditioning: list[CellRow]) -> Waf | None:
    w = steady_random_write(phases) or _drive(manifest)
    if w is not None:
        return w
    whole = written([*preconditioning, *(r for ph in phases for r in ph.rows)])
    return (
        Waf(
            whole[0],
            whole[1],
            "the whole run, preconditioning included (the run has no random-write measurement window)",
            "whole run",
        )
        if whole
        else None
    )


def _rating(manifest: Manifest, name: str, rated: str, option: str) -> tuple[float | None, str]:
    """The user's --set/option, else the drive's own (a simulated preset's rating), else none."""
    v = manifest.plan.get("values", {}).get(name, 0)
    if v and v > 0:
        return float(v), option
    own = manifest.target.get("facts", {}).get(rated)
    return (float(own), "preset") if own else (None, "")


def endurance(manifest: Manifest, phases: list[PhaseSummary], preconditioning: list[CellRow]) -> Endurance:
    waf = endurance_waf(manifest, phases, preconditioning)
    ops = [r.counters["op"] for ph in phases for r in ph.rows if "op" in r.counters]
    user = manifest.target.get("capacity")
    physical = user * (1 + ops[-1]) if ops and user else None
    pe = _rating(manifest, "pe_cycles", "rated_pe_cycles", "--pe-cycles")
    years = _rating(manifest, "warranty_years", "warranty_years", "--warranty-years")
    tbw = physical * pe[0] / waf.value if waf and physical and pe[0] and waf.value > 0 else None
    dwpd = tbw / (user * 365 * years[0]) if tbw and user and years[0] else None
    return Endurance(waf, physical, pe, years, tbw, dwpd)


__all__ = ["Endurance", "Waf", "endurance", "endurance_waf", "steady_random_write", "written"]
