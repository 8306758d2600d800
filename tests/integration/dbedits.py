"""results.db edited after a run, as a tester edits it: a copy of a finished run whose stored
figures are no longer what its raw engine output says (the audit's raw-figures invariant must
catch each from the command line). The manifest, its stored audit among it, is left as the run
wrote it: only the database changed."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from iolab.figures.audit_rates import rate_text

from .conftest import iolab

# Every rate of every cell, and the steady-state tables made from them, scaled alike: IOPS × size
# is still MB/s, each table still its cells' (only the raw output tells the figures are not the
# engine's).
RATES = ("iops", "read_iops", "write_iops", "mbps", "read_mbps", "write_mbps")
TABLE = ("average", "range_measured", "range_allowed", "slope", "intercept", "fit_excursion", "fit_allowed")


def edited(run: Path, to: Path, *sql: str, params: tuple = ()) -> Path:
    """A copy of `run` under `to` with these statements run on its results.db."""
    copy = to / run.name
    shutil.copytree(run, copy)
    db = sqlite3.connect(copy / "results.db")
    for s in sql:
        db.execute(s, params if "?" in s else ())
    db.commit()
    db.close()
    return copy


def scaled(run: Path, to: Path, factor: float) -> Path:
    """Every cell's rates and every steady-state table scaled by `factor`."""
    cells = "UPDATE cells SET " + ", ".join(f"{c} = {c} * {factor!r}" for c in RATES)
    vals = f"vals = (SELECT json_group_array(value * {factor!r}) FROM json_each(steady.vals))"
    table = "UPDATE steady SET " + ", ".join([vals, *(f"{c} = {c} * {factor!r}" for c in TABLE)])
    return edited(run, to, cells, table)


def first_cell(run: Path, column: str) -> tuple[int, str, int, str, float]:
    """The first measured cell with a value of `column`: (id, phase, round, key, its value)."""
    db = sqlite3.connect(run / "results.db")
    try:
        return db.execute(
            f"SELECT id, phase, round, cell_key, {column} FROM cells WHERE kind = 'measure' AND {column} > 0"
            " ORDER BY phase, round, ordinal LIMIT 1"  # the audit's order: the first it names
        ).fetchone()
    finally:
        db.close()


def said(text: str) -> str:
    """Output with the console's line breaks undone."""
    return " ".join(text.split())


def audit_fails_only_raw_figures(copy: Path) -> str:
    """`iolab audit COPY` as a user runs it: exit 8, raw-figures the one invariant failed; its output."""
    p = iolab("audit", str(copy))
    out = said(p.stdout)
    assert p.returncode == 8, out + p.stderr
    assert "1 failed" in out and "FAILED: raw-figures" in out, out
    return out


def check_edits_fail_raw_figures(run: Path, tmp_path: Path) -> None:
    """Every rate raised by half, then lowered by 30 % (with the steady-state tables made from
    them), and one percentile of one cell lowered: each fails raw-figures, naming the cell, the
    stored value and the raw output's; `show` marks the figures of an edited copy whose stored
    audit (made when the run ended) passed."""
    cid, phase, rnd, key, iops = first_cell(run, "iops")
    for factor in (1.5, 0.7):
        copy = scaled(run, tmp_path / f"scaled{factor}", factor)
        out = audit_fails_only_raw_figures(copy)
        assert f"FAIL raw-figures: {phase} round {rnd} {key}: " in out, out
        assert f"iops stored {rate_text(iops * factor)} IOPS, its raw output {rate_text(iops)} IOPS" in out, out
        assert "the steady-state table's" in out and "as its raw output gives it" in out, out
    shown = said(iolab("show", str(copy)).stdout)
    assert "FAILED: raw-figures" in shown and "⚠ audit: raw-figures failed" in shown, shown

    cid, phase, rnd, key, p99 = first_cell(run, "p99")
    copy = edited(run, tmp_path / "p99", "UPDATE cells SET p99 = ? WHERE id = ?", params=(p99 * 0.9, cid))
    out = audit_fails_only_raw_figures(copy)
    said_p99 = f"FAIL raw-figures: {phase} round {rnd} {key}: p99 stored {rate_text(p99 * 0.9)} µs, its raw output {rate_text(p99)} µs"
    assert said_p99 in out and "(and" not in out.split("FAIL raw-figures:")[1], out  # that cell, that figure alone
