"""`iolab compare runs/*`, as the README shows it: the shell's list names the folders iolab
writes into a runs directory beside the runs (compare/ of an earlier comparison, sequences/,
fleets/); they are passed over with a note, not refused as no run."""

from __future__ import annotations

import pytest

from .conftest import SMALL_SIM, iolab, quick_sim_run

pytestmark = pytest.mark.integration


def test_compare_of_a_runs_directory_glob_passes_over_its_comparisons_folder(tmp_path):
    runs = tmp_path / "runs"
    quick_sim_run(runs)
    quick_sim_run(runs, f"{SMALL_SIM}&t_read_us=60")
    first = iolab("compare", *map(str, sorted(runs.iterdir())), "--runs-dir", str(runs))
    assert first.returncode == 0, first.stdout + first.stderr
    assert (runs / "compare").is_dir()  # a comparison without --out goes into the runs directory
    # runs/* as the shell expands it: was exit 2, "'runs/compare' is a directory but not a run"
    every = sorted(runs.iterdir())
    again = iolab("compare", *map(str, every), "--out", str(tmp_path / "c"))
    said = " ".join(again.stderr.split())
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"note: {runs / 'compare'} holds the runs directory's comparisons, not a run: passed over" in said, said
    assert "comparison: " in again.stdout and len(list((tmp_path / "c").glob("*.html"))) == 1
    # named alone, it is still no run
    alone = iolab("compare", str(runs / "compare"))
    assert alone.returncode == 2 and "is a directory but not a run" in " ".join(alone.stderr.split()), alone.stderr
