"""A fleet's rows (fleet.json's members) checked against the runs they name, before any figure of
them counts. fleet.json is a plain file a user can edit (or a tool damage): a row that names
another row's run would count one drive's figures twice, as two drives that agree; a row that
names a run of another test, or of another drive, would put figures that are not the fleet's
into its distributions. Each is refused, as one paragraph naming the row and its field
(IolabError, exit 2), and nothing is reported.

A run is its uid from its manifest, as `iolab check` and `compare` tell runs apart
(store/manifest.run_key): a copy of a run's directory is the same run, whatever its path."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from iolab.core.errors import IolabError
from iolab.store.manifest import run_key

_NOTHING = (
    "Nothing was reported: put back the fleet directory's fleet.json as the fleet wrote it (or the runs where "
    "it recorded them)."
)


class Row(Protocol):
    """What this check reads of a member (api/fleet.Member)."""

    name: str
    target: str
    run_dir: str | None


def check_rows(fleet_json: Path, test: str, rows: Sequence[Row], recs: Mapping[str, dict | None]) -> None:
    """IolabError when a row's run (its record in `recs`; None: not read, so not counted) is
    another row's run, is of another test than the fleet's, or tested another target than the
    row's."""
    read = [(i, m, rec) for i, m in enumerate(rows) if (rec := recs.get(m.name)) is not None]
    seen: dict[str, tuple[int, Row]] = {}
    for i, m, rec in read:  # one run twice first: then each row's own fields are about its own run
        key = run_key(str(rec.get("run_id")), rec.get("uid"))
        if key in seen:
            j, first = seen[key]
            raise IolabError(
                f"{fleet_json}: members[{j}] ({first.name!r}) and members[{i}] ({m.name!r}): field 'run_dir' of both "
                f"names run {rec.get('run_id')} ({first.run_dir}; {m.run_dir}): one run ({key}; a copy of a run's "
                f"directory is the same run). One run counted as two drives looks like two drives that agree. "
                f"{_NOTHING}"
            )
        seen[key] = (i, m)
    for i, m, rec in read:
        if rec.get("test") != test:
            raise IolabError(
                f"{_where(fleet_json, i, m)}: field 'run_dir' names {_run(m, rec)}, a run of test "
                f"{rec.get('test')!r}; the fleet ran {test!r}, so its figures are not this fleet's. {_NOTHING}"
            )
        target = rec.get("target")
        spec = target.get("spec") if isinstance(target, dict) else None
        # a --quick run of a simulated drive tests a smaller copy of it: the row names the drive
        if m.target not in (spec, target.get("copy_of") if isinstance(target, dict) else None):
            raise IolabError(
                f"{_where(fleet_json, i, m)}: field 'target' is {m.target!r}, but its {_run(m, rec)} tested "
                f"{spec!r}: the row and its run are not one drive. {_NOTHING}"
            )


def _where(fleet_json: Path, i: int, m: Row) -> str:
    return f"{fleet_json}: members[{i}] ({m.name!r})"


def _run(m: Row, rec: dict) -> str:
    return f"run {rec.get('run_id')} ({m.run_dir})"
