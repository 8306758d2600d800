"""The rw-matrix's 4 KiB random read and write peaks are held against Max IOPS's maximum in a
sequence's summary: a characterise summary printed Max IOPS's "max write IOPS (rounds) 38,675"
beside the matrix's "RND WRITE peak IOPS 43,318" unremarked, the matrix's peak being of every IO
size (figures/crosscheck.py compares one workload's rates only)."""

from __future__ import annotations

import json

import pytest

from .conftest import SMALL_SIM, iolab
from .test_review_labels import disagreement, flat, only_run, sequence_summary

pytestmark = pytest.mark.integration


def test_the_matrix_4k_peak_is_held_against_max_iops_on_the_sequence_summary(tmp_path):
    runs = tmp_path / "runs"
    quick = ("--quick", "--cell-time", "1s", "--no-report", "-t", SMALL_SIM)
    # a search of QD1 alone stops far below the matrix's 4 KiB cells at QD32
    most = only_run(runs, "max-iops", *quick, "--set", "queue_depths=1", "--set", "thread_counts=1")
    matrix = only_run(runs, "rw-matrix", *quick, "--set", "qds=1,32", "--set", "sizes=512,4KiB")
    # the figure is the highest of the measured 4 KiB cells, not of the 512 B ones
    doc = json.loads(iolab("show", str(matrix), "--json").stdout)
    figures = {f["name"]: f["value"] for f in doc["runs"][0]["figures"]}
    p = iolab("export", str(matrix), "--format", "json", "--out", str(tmp_path / "export"))
    assert p.returncode == 0, p.stdout + p.stderr
    cells = [c for c in json.loads((tmp_path / "export" / "cells.json").read_text()) if c["kind"] != "precondition"]
    for phase in ("RND READ", "RND WRITE"):
        four_k = [c["iops"] for c in cells if c["phase"] == phase and c["block_size"] == 4096]
        assert len(four_k) == 2 and figures[f"{phase} 4KiB peak IOPS"] == pytest.approx(max(four_k)), (phase, cells)
    text = sequence_summary(tmp_path / "seq", most, matrix)
    assert "TESTS DISAGREE: Max IOPS 4 KiB random write IOPS below Matrices's" in text, text[:3000]
    row = disagreement(text, r"Max IOPS: max write IOPS \(rounds\)", "Matrices: RND WRITE 4KiB peak IOPS", "")
    assert f"RND WRITE 4KiB peak IOPS │ {row.group(2)} │" in flat(iolab("show", str(matrix)).stdout)
    # the matrix's peak over every IO size is no rate of one workload: never held against it
    assert "Matrices: RND WRITE peak IOPS" not in text
