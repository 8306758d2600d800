"""What a name on the command line names, a fleet or a run, found one way (store/manifest.named_among):
by its path, its directory's name under the runs directory, its own name (a run's id, the fleet
file's `name`), else a part of a directory's or own name that one alone contains; a name that
several match is refused, naming them. `iolab fleet NAME` looks among the fleets; `iolab show`,
`report` and `resume`, which take a run or a fleet, among both."""

from __future__ import annotations

from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.runfiles import FLEET_FILE
from iolab.store.manifest import ambiguous, fleet_dir, named_among, stored_runs


def find_fleet(ref: str, root: Path) -> Path:
    """`iolab fleet NAME`: the fleet `ref` names under the runs directory `root`."""
    found = fleet_dir(ref, root)
    if found is None and ref and "/" not in ref:
        matches = named_among(ref, _fleets(root))
        if len(matches) > 1:
            raise ambiguous(
                "fleet", ref, matches, root / "fleets", "by directory name or fleet name", "`iolab fleet` lists them"
            )
        found = matches[0] if matches else None
    if found is None:
        raise IolabError(
            f"fleet {ref!r}: no fleet directory of that name under {root / 'fleets'} and no directory of that path "
            f"holding {FLEET_FILE}; `iolab runs` lists the fleets."
        )
    return found


def fleet_or_run(ref: str, root: Path) -> Path | None:
    """`iolab show`, `report`, `resume`: the fleet `ref` names; None when it names a run or
    nothing (store/manifest.resolve_run then finds the run, or says why there is none). A path or
    a directory's whole name comes first, then an own name (run id, fleet name), then a part."""
    if (found := fleet_dir(ref, root)) is not None:
        return found
    if not ref or "/" in ref or (Path(ref) / "manifest.json").exists() or (root / ref / "manifest.json").exists():
        return None
    fleets = _fleets(root)
    if not fleets:  # no fleet to name: the run's own lookup, as it was
        return None
    matches = named_among(ref, stored_runs(root) + fleets)
    found_fleets = {d for d, _ in fleets}.intersection(matches)
    if not found_fleets:
        return None
    if len(matches) > 1:
        what = "fleet" if len(found_fleets) == len(matches) else "run or fleet"
        how = "by directory name or fleet name" if what == "fleet" else "by directory name, run id or fleet name"
        if what == "fleet":
            raise ambiguous(what, ref, matches, root / "fleets", how, "`iolab fleet` lists them")
        raise ambiguous(what, ref, matches, root, how, "`iolab runs` lists the runs, then the fleets")
    return matches[0]


def _fleets(root: Path) -> list[tuple[Path, str | None]]:
    """The fleets under `root`/fleets with their names; the fleet library (its threads, fleet
    files, fio hosts) is imported only when that folder is there."""
    if not (root / "fleets").is_dir():
        return []
    from iolab.api.fleet import list_fleets

    return [(s.dir, s.name) for s in list_fleets(root)]
