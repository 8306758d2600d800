"""The self-audit: physical invariants every stored run must hold, checked from the run
directory alone (never the runner's own verdicts), so a figure that no drive can produce is
caught and marked wherever it is shown.

`INVARIANTS` is the registry (the checks themselves are in audit_checks.py): each invariant has
a name, what it checks, which figures it touches (`TOUCHES`) and a function over the stored run
returning pass, fail or n/a with a one-line reason and the numbers behind it. `audit(store)` runs
them all; the runner's caller stores the result in the manifest (`Manifest.audit`) at the end of
every run, `iolab show`, `--json` and the report show it, and `iolab audit RUN` runs it again on
a stored run. Below report/ and the CLI; reads only the store and the manifest, writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from iolab.figures.audit_checks import INVARIANTS
from iolab.figures.audit_raw import outputs_changed
from iolab.figures.audit_view import FAIL, NA, PASS, Outcome, RunView
from iolab.store import bulk as storebulk
from iolab.store.manifest import manifest_of, now_iso
from iolab.store.resultsdb import plain_stat
from iolab.store.runstore import RunStore

STATUSES = (PASS, FAIL, NA)

# The kinds of figure an invariant can touch, and what each means where figures are shown.
# "window" is every figure measured over a steady-state window (all key figures, the
# steady-state verdicts); the others are found by a key figure's unit and name (`kinds_of`).
TOUCHES = {
    "steady-state": "the steady-state verdicts and every figure read from a steady-state window",
    "IOPS": "IOPS figures",
    "MB/s": "throughput figures",
    "latency": "response times (mean, maximum)",
    "percentile": "latency percentiles",
    "per-second": "the per-second series and their plots",
    "WAF": "write amplification",
    "endurance": "TBW and DWPD",
}


@dataclass(frozen=True)
class Result:
    name: str
    checks: str
    touches: tuple[str, ...]
    status: str
    reason: str
    numbers: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status == FAIL


@dataclass(frozen=True)
class Audit:
    """Every invariant's result for one run, and when it was made."""

    results: tuple[Result, ...]
    audited: str = ""  # ISO time
    stored: bool = False  # read from the manifest (True) or made now from the stored run (False)
    # A stored audit read back (stored_audit): the invariants made again from the run as it is now
    remade: tuple[str, ...] = ()

    @property
    def failed(self) -> tuple[Result, ...]:
        return tuple(r for r in self.results if r.failed)

    @property
    def passed(self) -> bool:
        return not self.failed

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for r in self.results if r.status == s) for s in STATUSES}

    def summary(self) -> str:
        c = self.counts()
        head = f"audit: {c[PASS]} passed, {c[FAIL]} failed, {c[NA]} not applicable"
        return head + (f" — FAILED: {', '.join(r.name for r in self.failed)}" if self.failed else "")

    def touched(self) -> dict[str, tuple[str, ...]]:
        """Each figure kind a failed invariant touches, with the invariants that failed."""
        out: dict[str, list[str]] = {}
        for r in self.failed:
            for k in r.touches:
                out.setdefault(k, []).append(r.name)
        return {k: tuple(v) for k, v in out.items()}

    def marks(self, kinds: Sequence[str]) -> tuple[str, ...]:
        """The failed invariants that touch a figure of these kinds (a window figure is always
        touched by a failed steady-state invariant)."""
        touched = self.touched()
        names: list[str] = []
        for k in ("steady-state", *kinds):
            names += [n for n in touched.get(k, ()) if n not in names]
        return tuple(names)

    def remade_text(self) -> str:
        """What a stored audit read back holds that was made now ("" for an audit made now)."""
        if not self.stored:
            return ""
        again = ", ".join(self.remade) if len(self.remade) < len(self.results) else "every invariant"
        return f"stored when the run ended {self.audited}; made again now from the run as it is: {again or 'none'}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "audited": self.audited,
            "stored": self.stored,
            **({"remade": list(self.remade)} if self.stored else {}),
            "counts": self.counts(),
            "failed": [r.name for r in self.failed],
            "invariants": [{**asdict(r), "touches": list(r.touches)} for r in self.results],
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Audit:
        rows = tuple(
            Result(
                str(r["name"]),
                str(r.get("checks", "")),
                tuple(r.get("touches", ())),
                str(r["status"]),
                str(r.get("reason", "")),
                dict(r.get("numbers") or {}),
            )
            for r in d.get("invariants", ())
        )
        return Audit(rows, str(d.get("audited", "")), stored=True)


def marker(names: Sequence[str]) -> str:
    """The mark beside a figure an invariant failed for ("" when none did)."""
    return f"⚠ audit: {', '.join(names)} failed" if names else ""


# A percentile in a figure's name ("99.999 %", "p99"): the figure is a percentile.
_PCT = re.compile(r"\d+(\.\d+)?\s*%|\bp\d+")


def kinds_of(name: str, unit: str) -> tuple[str, ...]:
    """The figure kinds (TOUCHES) of a key figure, from its unit and name."""
    u = unit.strip()
    if u in ("IOPS", "IO/s"):
        return ("IOPS",)
    if u.endswith("B/s"):
        return ("MB/s",)
    if u in ("µs", "us", "ms", "s"):
        return ("latency", "percentile") if _PCT.search(name) else ("latency",)
    if "WAF" in name:
        return ("WAF",)
    if u in ("TB", "TBW", "DWPD") or "endurance" in name.lower():
        return ("endurance",)
    return ()


def audit(store: RunStore, only: Sequence[str] = ()) -> Audit:
    """Run every invariant (or those named in `only`) over the stored run. Read-only."""
    view = RunView(store)
    results = []
    for inv in INVARIANTS:
        if only and inv.name not in only:
            continue
        try:
            out = inv.run(view)
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
            # a run too old or too broken for this check says so rather than stop the audit
            out = Outcome(NA, f"could not be checked on this run ({type(e).__name__}: {e})")
        touches = inv.touches if out.touches is None else tuple(k for k in inv.touches if k in out.touches)
        results.append(Result(inv.name, inv.checks, touches, out.status, out.reason, out.numbers))
    return Audit(tuple(results), now_iso())


# Checked again whenever a stored audit is read: the stored steady-state verdict is read from
# results.db wherever it is shown, and this check of it against its own table and cells costs a
# few queries, so a verdict changed after the run's audit is marked where it is shown. The
# series-totals check reads every per-second row once (store/bulk.all_series): per-second rows
# edited after the run's audit are marked where they are shown too, not only by `iolab audit`.
# raw-output parses every cell's raw JSON once (a few ms per hundred cells): raw output cut short
# after the run (a copy stopped midway) is marked wherever the figures resting on it are shown.
# Every other invariant is made again only when results.db or a raw output changed since the run
# ended (what they compare cannot change otherwise; raw-figures parses every cell's raw output,
# about 0.7 ms of CPU a cell: too much for every `show`, report and `history` line), when the
# stored audit failed it (a rule since corrected no longer marks a sound run: percentile-samples
# on runs stored with fio's issued IO count) or when the stored audit predates it.
RECHECKED = ("steady-evidence", "series-totals", "raw-output")


def _changed_since_end(store: RunStore) -> bool:
    """Whether results.db or any cell's raw JSON output is not as the run's end left it."""
    m = manifest_of(store)
    if not m.results_db_stat or m.results_db_stat != plain_stat(store.dir):
        return True
    cells = store.cells() + store.cells(kind="precondition")
    return outputs_changed(store.dir, cells, storebulk.raw_stats(store))


def stored_audit(store: RunStore) -> Audit:
    """The audit the run stored at its end, or one made now for a run stored without it (older
    runs, a run still going). The invariants in RECHECKED are made again, the stored audit's
    failures and those it predates, and every invariant when results.db or a raw output changed
    since the run ended: where one's status is not the stored one, the one made now is shown;
    one the stored audit predates is added. `remade` names them all."""
    d = manifest_of(store).audit
    if not (d and "invariants" in d):
        return audit(store)
    stored = Audit.from_dict(d)
    had = {r.name for r in stored.results}
    if _changed_since_end(store):
        again = invariant_names()
    else:
        known = (*RECHECKED, *(r.name for r in stored.failed), *(n for n in invariant_names() if n not in had))
        again = tuple(n for n in invariant_names() if n in known)
    now = {r.name: r for r in audit(store, only=again).results}
    results = tuple(now[r.name] if r.name in now and now[r.name].status != r.status else r for r in stored.results)
    return replace(stored, results=results + tuple(r for n, r in now.items() if n not in had), remade=again)


def store_audit(store: RunStore) -> Audit:
    """Audit a run that just ended and keep the result in its manifest (the runner's caller does
    this once per run; `iolab audit` never writes unless asked)."""
    a = audit(store)
    manifest_of(store).audit = a.to_dict()
    store.write_manifest(final=True)
    return a


def invariant_names() -> tuple[str, ...]:
    return tuple(i.name for i in INVARIANTS)
