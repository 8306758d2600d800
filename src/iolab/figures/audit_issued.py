"""Cells stored by the IO-count rule before today's: until the IO count became the samples of a
cell's latencies (core/results.fio_completed_ios), a fio cell's count was fio's `total_ios`, the
IOs *issued* after the warm-up, so an IO in flight when the warm-up ended is in its histogram
and bytes but not its count ("holds 1,001 IOs, the cell 1,000").

No run records which rule stored it: manifest.json's versions (iolab 0.1.0) and fields, and
results.db's tables, are the same before and after the change. The cell's own raw output
tells: a cell stored by the rule before holds as its counts the issued IOs its raw JSON gives,
and its histogram the IOs its latencies count. Such a cell is judged by the rule it was stored
under (its counts against its raw output's issued ones, by raw-figures), and the checks that
weigh its IOs (percentile-samples, iops-bytes, rw-shares) take its counts by today's rule from
the same raw output. A count neither rule gives still fails. Only a cell whose count is not its
histogram's is read: a sound run stored today reads no raw output here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from iolab.core.cellschema import CellRow
from iolab.core.errors import IolabError
from iolab.figures.audit_raw import json_outputs

# What a check says of the cells it judged by that rule.
ISSUED_WORDS = (
    "stored with fio's issued IO count (total_ios, as runs stored before the latencies' count), "
    "which their raw output gives"
)


def issued_cells(
    run_dir: Path, engine: str, cells: Sequence[CellRow], hist_totals: Mapping[int, int]
) -> dict[int, CellRow]:
    """Each cell stored by the rule before (by id), with its read and write IOs as today's rule
    counts them from its raw output. `hist_totals`: each cell's IOs in its stored histogram."""
    odd = [c for c in cells if c.id in hist_totals and hist_totals[c.id] != c.ios and json_outputs(c)]
    if not odd:
        return {}
    # here: only a run with such a cell imports the engines' parsers
    from iolab.engines.reread import reads, reread

    if not reads(engine):
        return {}
    out = {}
    for c in odd:
        try:
            got = reread(run_dir, json_outputs(c))
        except IolabError:
            continue  # raw-output or raw-figures says what is wrong with it
        if got.counted_as_issued(c.read_ios, c.write_ios) and got.result.ios == hist_totals[c.id]:
            out[c.id] = replace(c, read_ios=got.result.read.ios, write_ios=got.result.write.ios)
    return out
