"""Groups in a fleet (firmware A vs B, two vendors): each group compared with a baseline group as
`iolab check` compares a candidate with a baseline, the drives of a group standing for its
repeats, so the noise is the drive-to-drive spread (Welch's t interval of the difference of the
two groups' means), never one drive's rounds. And the drives of one group that are not all of one
model and firmware, named in a warning: a comparison of firmware A with B means little when a
group mixes in another model.

Works on run records (pages/outcome.run_record) keyed by drive name; pure."""

from __future__ import annotations

from collections.abc import Mapping

from iolab.automation.check import check
from iolab.automation.tolerances import Tolerances
from iolab.automation.verdict import FAILING
from iolab.core.errors import IolabError
from iolab.core.units import counted

DEFAULT_TOLERANCE = 0.05  # as `iolab check`'s default --max-regression


def group_drives(labels: Mapping[str, Mapping[str, str]], key: str, complete: set[str]) -> dict[str, list[str]]:
    """Label value -> its complete drives, in fleet order (a drive without the label: in none)."""
    out: dict[str, list[str]] = {}
    for name, lab in labels.items():
        if name in complete and key in lab:
            out.setdefault(lab[key], []).append(name)
    return out


def compare_groups(
    records: Mapping[str, dict | None],
    labels: Mapping[str, Mapping[str, str]],
    key: str,
    baseline: str | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    confidence: float = 0.95,
) -> dict:
    """Every other group of label `key` against the baseline group (default: the first group in
    fleet order)."""
    complete = {n for n, r in records.items() if r is not None}
    groups = group_drives(labels, key, complete)
    if len(groups) < 2:
        raise IolabError(
            f"--group-by {key}: the fleet's complete drives have {counted(len(groups), 'value')} of label {key!r} "
            f"({', '.join(groups) or 'none'}); a comparison needs two groups."
        )
    base = baseline if baseline is not None else next(iter(groups))
    if base not in groups:
        raise IolabError(
            f"--baseline {base}: no complete drive has {key} = {base!r}; the groups are {', '.join(groups)}."
        )
    comparisons = []
    for g, drives in groups.items():
        if g == base:
            continue
        result = check(
            [records[d] for d in groups[base]],  # type: ignore[misc]
            [records[d] for d in drives],  # type: ignore[misc]
            Tolerances(tolerance),
            confidence,
            force=True,  # the fleet ran every drive with the same arguments
        )
        comparisons.append(
            {
                "group": g,
                "baseline": base,
                "drives": drives,
                "baseline_drives": groups[base],
                "figures": result["figures"],
                "regressions": [f["name"] for f in result["figures"] if f["verdict"] in FAILING],
            }
        )
    unlabelled = sorted(complete - {d for ds in groups.values() for d in ds})
    return {
        "key": key,
        "baseline": base,
        "tolerance_pct": 100 * tolerance,
        "confidence": confidence,
        "noise": (
            "drive-to-drive spread within each group (the drives as repeats; Welch t interval, of the "
            "logarithms for a magnitude)"
        ),
        "comparisons": comparisons,
        "unlabelled": unlabelled,
    }


def mixed_warnings(
    records: Mapping[str, dict | None], labels: Mapping[str, Mapping[str, str]], key: str | None
) -> list[str]:
    """A warning per group (the whole fleet without `key`) whose drives differ in model or firmware."""
    complete = {n for n, r in records.items() if r is not None}
    groups = group_drives(labels, key, complete) if key else {"": [n for n in records if n in complete]}
    out = []
    for g, drives in groups.items():
        for field in ("model", "firmware"):
            seen: dict[str, list[str]] = {}
            for d in drives:
                v = ((records[d] or {}).get("target") or {}).get(field) or "unknown"
                seen.setdefault(v, []).append(d)
            if len(seen) > 1:
                common = max(seen, key=lambda v: len(seen[v]))
                odd = ", ".join(f"{d} ({v})" for v, ds in seen.items() if v != common for d in ds)
                where = f"group {key} = {g}" if key else "the fleet"
                out.append(f"{where} mixes drives of another {field} than {common!r}: {odd}")
    return out
