"""`iolab fio-job` prints job files to reproduce a cell by hand: each says how to run it, and
doing what it says runs fio (it said "run by hand from this directory: fio ... X.fio" of a file
fio-job never writes)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess

from tests.integration.conftest import iolab


def test_a_printed_job_run_as_its_head_says_measures_the_cell(tmp_path):
    target = tmp_path / "drive.img"
    p = iolab("fio-job", "latency", "--quick", "--cell-time", "200ms", "-t", f"file:{target}?size=64MiB")
    assert p.returncode == 0, p.stderr
    cell = next(b for b in p.stdout.split("# ---- ") if b and "cell 1/" in b.splitlines()[0])
    [(name, command)] = re.findall(r"^; run by hand, this text saved as (\S+\.fio): (fio .*)$", cell, re.M)
    (tmp_path / name).write_text(cell.split("\n", 1)[1])
    assert not target.exists()  # fio-job wrote nothing
    run = subprocess.run(shlex.split(command), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads((tmp_path / name.replace(".fio", ".json")).read_text())
    assert out["jobs"][0]["read"]["total_ios"] > 0
