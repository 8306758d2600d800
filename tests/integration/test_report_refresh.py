"""`iolab power RUN LOG` and `iolab audit RUN --store` change what a run's report shows (its
Power Consumption pages, its audit banner): the report already written in the run's report/
(what `iolab run` printed and `iolab watch` links) is rewritten, a run without one is told how
to write it, and a report that cannot be written keeps what was stored and says so (exit 5)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from pypdf import PdfReader

from .conftest import fill, iolab, mounted_tmpfs
from .test_power import designed_log

pytestmark = pytest.mark.integration


def pdf_text(run: Path) -> str:
    [pdf] = (run / "report").glob("*.pdf")
    return "\n".join(pg.extract_text() for pg in PdfReader(pdf).pages)


def file_run(scratch: Path, *extra: str) -> Path:
    runs = scratch / "runs"
    p = iolab(
        "run", "latency", "-t", f"file:{scratch}/drive.img?size=64MiB", "--quick", "--cell-time", "200ms",
        "--max-rounds", "1", "--runs-dir", str(runs), *extra,
    )  # fmt: skip
    assert p.returncode in (0, 6), p.stdout + p.stderr
    [run] = list(runs.iterdir())
    return run


def test_power_rewrites_the_runs_report_with_its_power_pages(scratch):
    run = file_run(scratch)
    assert "Power Consumption" not in pdf_text(run)
    meter = scratch / "meter.csv"
    meter.write_text(designed_log(run, shift=0.0)[0])
    p = iolab("power", str(run), str(meter))
    assert p.returncode == 0, p.stdout + p.stderr
    said = " ".join(p.stdout.split())
    assert f"report: {run / 'report' / run.name}.pdf" in said and f"report: {run / 'report' / run.name}.html" in said
    assert "Power Consumption" in pdf_text(run)
    assert "Power Consumption" in (run / "report" / f"{run.name}.html").read_text()


def test_power_on_a_run_without_a_report_says_how_to_write_one(scratch):
    run = file_run(scratch, "--no-report")
    meter = scratch / "meter.csv"
    meter.write_text(designed_log(run, shift=0.0)[0])
    p = iolab("power", str(run), str(meter))
    assert p.returncode == 0, p.stdout + p.stderr
    said = " ".join(p.stdout.split())
    assert f"`iolab report {run}` writes one with the Power Consumption pages" in said, said
    assert not (run / "report").exists()


def test_a_report_with_no_room_keeps_the_power_figures_and_says_so(scratch):
    run = file_run(scratch)
    text, _ = designed_log(run, shift=0.0)
    meter = scratch / "meter.csv"
    meter.write_text(text)
    with mounted_tmpfs("64M") as fs:
        copy = fs / run.name
        shutil.copytree(run, copy)
        spacer = fs / "spacer"
        # room for the log's copy and power.json (test_power.py), not for a report's PDF and HTML
        spacer.write_bytes(b"\0" * (-(-len(text.encode()) // 4096) + 16) * 4096)
        filler = fill(fs)
        spacer.unlink()
        p = iolab("power", str(copy), str(meter))
        filler.unlink()
        said = " ".join(p.stderr.split())
        assert p.returncode == 5, p.stdout + p.stderr
        assert f"run {run.name}: its power figures are stored, but its report in {copy / 'report'}" in said, said
        assert "shows the run as it was before" in said and "Traceback" not in said
        assert json.loads((copy / "power.json").read_text())["source_copy"] == "power-meter.csv"
        assert "Power Consumption" not in pdf_text(copy)


def test_audit_store_rewrites_the_runs_report_with_the_failed_audit(tmp_path):
    runs = tmp_path / "runs"
    # 300 % spare: the run never leaves fresh-out-of-box (test_audit_cli.py); stored as steady below
    p = iolab(
        "run", "wsat", "--quick", "-t", "sim:enterprise-sas?op=3", "--wsat-capacity-multiple", "2.5",
        "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = list(runs.iterdir())
    assert "AUDIT FAILED" not in pdf_text(run)
    db = sqlite3.connect(run / "results.db")
    db.execute("UPDATE phases SET steady = 1")
    db.commit()
    db.close()
    p = iolab("audit", str(run), "--store")
    assert p.returncode == 8, p.stdout + p.stderr
    assert f"report: {run / 'report' / run.name}.pdf" in " ".join(p.stdout.split()), p.stdout
    assert "AUDIT FAILED" in pdf_text(run)
    assert "AUDIT FAILED" in (run / "report" / f"{run.name}.html").read_text()
