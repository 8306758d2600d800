"""A replay whose steps mix random and sequential streams at QD 1, as a user runs it: fio runs
each access pattern as a job of its own, so it cannot keep one IO in flight; the run must say
what it ran at (`iolab show`, its --json), not only the plan's "TC 1 × the step's QD (1–1)"."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from iolab.api.runlist import list_runs

from ..schema_lite import errors
from .conftest import iolab

pytestmark = pytest.mark.integration

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/schema/outcome.schema.json").read_text())
FILETIME_1970 = 116444736000000000  # 100 ns ticks from 1601 to 1970


def mixed_trace(path) -> None:
    """One 1 s step: SEQ 4 KiB writes and RND 64 KiB reads, one IO at a time (MSR CSV)."""
    lines = []
    for i in range(100):
        ts = FILETIME_1970 + i * 10_000_000 // 100  # every 10 ms
        if i % 2:
            lines.append(f"{ts},web,0,Read,{(i * 7919 % 4096) * 65536},65536,1000")
        else:
            lines.append(f"{ts},web,0,Write,{i * 2048},4096,1000")
    path.write_text("\n".join(lines) + "\n")


def test_a_replay_fio_ran_at_more_outstanding_io_than_planned_says_so(scratch, tmp_path):
    mixed_trace(tmp_path / "t.csv")
    p = iolab("trace", "import", str(tmp_path / "t.csv"), "--out", str(tmp_path / "t.parquet"))
    assert p.returncode == 0, p.stderr
    p = iolab(
        "trace", "analyze", str(tmp_path / "t.parquet"), "--step", "1s", "--qd", "1", "--out", str(tmp_path / "wl")
    )
    assert p.returncode == 0, p.stderr
    runs = tmp_path / "runs"
    target = f"file:{scratch}/replay.img?size=64MiB"
    p = iolab(
        *f"run replay -w {tmp_path / 'wl'} -t {target} --quick --cell-time 200ms --no-report".split(),
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr + p.stdout[-2000:]
    (run,) = list_runs(runs)
    # what fio ran: the step's two access patterns as two jobs of QD 1 each
    job = (run.path / "raw" / "replay-r01-c00-step_0.fio").read_text()
    assert job.count("iodepth=1") == 2 and "[rnd]" in job and "[seq]" in job
    shown = iolab("show", str(run.path), "--runs-dir", str(runs))
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "TC 1 × the step's QD (1–1)" in json.dumps(
        json.loads((run.path / "manifest.json").read_text()), ensure_ascii=False
    )
    assert "replay, step 0: outstanding IO raised from 1 to 2" in text
    assert "steady state (composite), composite: outstanding IO raised from 1 to 2" in text
    doc = json.loads(iolab("show", str(run.path), "--runs-dir", str(runs), "--json").stdout)
    assert not errors(doc, SCHEMA)
    noted = [n for n in doc["runs"][0]["notes"] if "outstanding IO raised from 1 to 2" in n]
    assert [n.split(":")[0] for n in noted] == ["steady state (composite), composite", "replay, step 0"], noted
    # the report's rows say what ran, not only the plan's QD: the Test Parameters' outstanding IO,
    # the step's QD in the every-step table and the composite's outstanding IO (each said 1)
    report = iolab("report", str(run.path), "--runs-dir", str(runs))
    assert report.returncode == 0, report.stderr
    [page] = (run.path / "report").glob("*.html")
    said = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())).split())
    assert (
        "Outstanding IO per step: TC 1 × the step's QD (1–1); as run: steady state (composite), composite at 2 "
        "(planned 1); replay, step 0 at 2 (planned 1)"
    ) in said, said
    assert re.search(r"step 0 0 [\d.]+ 1 \(ran at 2 outstanding\) [\d,.]+", said), said
    assert "Outstanding IO TC 1 × QD 1 = 1 planned; ran at 2" in said, said
    # the run passes its own audit: fio timed the composite's reads and writes apart (two jobs), and
    # iops-bytes weighed their summed rates by the cell's mean size ("574.28 IOPS × 35,062 B mean")
    audited = iolab("audit", str(run.path), "--runs-dir", str(runs))
    assert audited.returncode == 0 and "iops-bytes" in audited.stdout, audited.stdout + audited.stderr
