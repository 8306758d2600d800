"""A disk that fills while a run's report, export or stored audit is written: exit 5 with "results
disk full at RUN" and the command that writes it once there is room, as a run that fills mid-cell
says (README, docs/automation.md), and no half-written file left behind. Before: exit 2 and the
bare "iolab: No space left on device", and an export left a 0-byte cells.csv."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.integration.conftest import IOLAB, SMALL_SIM, default_signals, fill, iolab, mounted_tmpfs, quick_sim_run
from tests.schema_lite import errors


def one_paragraph(p: subprocess.CompletedProcess, code: int = 5) -> str:
    text = p.stdout + p.stderr
    assert p.returncode == code, text
    assert "Traceback" not in text and "\n\n" not in p.stderr.strip(), text
    return " ".join(p.stderr.split())  # Rich wraps long lines


def left(d: Path) -> list[Path]:
    """What is in directory d (none when it was not made)."""
    return sorted(d.iterdir()) if d.exists() else []


@pytest.fixture(scope="module")
def a_run(tmp_path_factory) -> Path:
    return quick_sim_run(tmp_path_factory.mktemp("full-runs"))


@pytest.fixture(scope="module")
def another_run(a_run: Path) -> Path:
    """a_run's drive run again with another seed, beside it: what compare, check and history take."""
    return quick_sim_run(a_run.parent, SMALL_SIM + "&seed=2")


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("compare {a} {b} --out {fs}/C", "no room for their comparison"),
        ("check {b} --baseline {a} --junit {fs}/j.xml", "no room for the JUnit file"),
        ("history 'ART RND 4KiB R/W 65/35' --runs-dir {runs} --html {fs}/h.html", "no room for the history chart"),
    ],
)
def test_a_comparison_junit_or_history_chart_on_a_full_disk_exits_5_and_leaves_no_file(
    a_run, another_run, small_fs, line, what
):
    """Before: exit 2 and the bare system message; the JUnit file and the chart were truncated."""
    filler = fill(small_fs)
    args = shlex.split(line.format(a=a_run, b=another_run, fs=small_fs, runs=a_run.parent))
    said = one_paragraph(iolab(*args, timeout=300))
    assert said.startswith(f"iolab: disk full at {small_fs}/") and what in said and "run the same" in said, said
    assert [p for p in small_fs.rglob("*") if p.is_file()] == [filler]


@pytest.fixture
def full_run(a_run: Path, small_fs: Path) -> Path:
    """A copy of a_run on a tmpfs with no byte left."""
    run = small_fs / a_run.name
    shutil.copytree(a_run, run)
    fill(small_fs)
    return run


def test_report_on_a_full_results_disk_exits_5_naming_the_run_and_leaves_no_file(full_run: Path):
    said = one_paragraph(iolab("report", str(full_run), timeout=300))
    assert said.startswith(f"iolab: results disk full at {full_run}: no room for its report"), said
    assert f"`iolab report {full_run}`" in said
    assert not (full_run / "report").exists()  # no .partial, no HTML without its PDF, no folder it made
    assert not (full_run / "writer.lock").exists()  # the claim that failed is not left behind
    out = full_run.parent / "R"
    said = one_paragraph(iolab("report", str(full_run), "--out", str(out), timeout=300))
    assert f"results disk full at {full_run}" in said and f"`iolab report {full_run} --out {out}`" in said
    assert not out.exists()  # before: an empty R


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_on_a_full_disk_exits_5_and_keeps_no_partial_table(full_run: Path, fmt: str):
    """Parquet before: a traceback (DuckDB's IOException) and exit 1. The directories the export
    made (-o new/exp) are removed again (before: both were left, empty); one the user had stays."""
    out = full_run.parent / "new" / "exp"
    said = one_paragraph(iolab("export", str(full_run), "-f", fmt, "-o", str(out), timeout=300))
    assert said.startswith(f"iolab: results disk full at {full_run}: no room for its export in {out}"), said
    assert f"`iolab export {full_run} --format {fmt} -o {out}`" in said
    assert not (full_run.parent / "new").exists()  # before: new/exp, empty (and a 0-byte cells.csv before that)
    had = full_run.parent / "had"
    had.mkdir()
    one_paragraph(iolab("export", str(full_run), "-f", fmt, "-o", str(had / "exp"), timeout=300))
    assert left(had) == []


def test_an_export_that_finds_no_room_leaves_an_earlier_export_whole(a_run: Path, small_fs: Path):
    run = small_fs / a_run.name
    shutil.copytree(a_run, run)
    out = small_fs / "exp"
    assert iolab("export", str(run), "-o", str(out), timeout=300).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    fill(small_fs)
    one_paragraph(iolab("export", str(run), "-o", str(out), timeout=300))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("-o", "-"), "--out -: a csv export is one file per table and cannot go to standard output"),
        (("-o", "-", "--format", "json"), "standard output could not be written (No space left on device)"),
    ],
)
def test_an_export_to_standard_output_on_a_full_disk_exits_2_with_one_paragraph(a_run: Path, args, says):
    """`export RUN -o - >/dev/full`: standard output is no file of the run's, so not exit 5 (the
    results disk) but a document not delivered, exit 2 (docs/automation.md); a CSV export is refused
    before anything is written, the JSON document said lost. No export directory is made."""
    with open("/dev/full", "w") as full:
        p = subprocess.run([*IOLAB, "export", str(a_run), *args], stdout=full, stderr=subprocess.PIPE, text=True)
    said = one_paragraph(subprocess.CompletedProcess(p.args, p.returncode, "", p.stderr), 2)
    assert said.startswith("iolab: ") and says in said, said
    if "json" in args:
        assert "not delivered" in said
    assert not (a_run / "export").exists()


def test_audit_store_on_a_full_disk_exits_5_and_keeps_the_stored_audit(full_run: Path):
    stored = (full_run / "manifest.json").read_bytes()
    said = one_paragraph(iolab("audit", str(full_run), "--store", timeout=300))
    assert said.startswith(f"iolab: results disk full at {full_run}: no room for its audit"), said
    assert f"`iolab audit {full_run} --store`" in said
    assert (full_run / "manifest.json").read_bytes() == stored
    assert sorted(p.name for p in full_run.iterdir()) == sorted(
        p.name for p in full_run.iterdir() if ".tmp" not in p.name and not p.name.endswith(".partial")
    )
    assert iolab("audit", str(full_run), timeout=300).returncode == 0  # only --store writes


def test_a_run_whose_report_finds_the_disk_full_is_complete_and_exits_5(tmp_path: Path):
    """The disk is filled once the run's report directory appears (the process held meanwhile),
    so the run's results fit and its report does not, however fast the machine is."""
    with mounted_tmpfs("16M") as fs:
        for attempt in range(3):  # a report written whole before the test held the process: again
            runs = fs / f"runs{attempt}"
            proc = subprocess.Popen(
                [*IOLAB, "run", "latency", "--quick", "-t", SMALL_SIM, "--runs-dir", str(runs), "--json"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=dict(os.environ, COLUMNS="100"),
                preexec_fn=default_signals,
            )
            try:
                deadline = time.monotonic() + 600
                while not list(runs.glob("*/report")) and proc.poll() is None:
                    assert time.monotonic() < deadline, "the report was never started"
                    time.sleep(0.002)
                proc.send_signal(signal.SIGSTOP)
                filler = fill(fs)
                proc.send_signal(signal.SIGCONT)
                out, err = proc.communicate(timeout=600)
            finally:
                proc.kill()
            [run] = list(runs.iterdir())
            if proc.returncode == 0 and list((run / "report").glob("*.html")):
                filler.unlink()
                continue
            assert proc.returncode == 5, err
            said = " ".join(err.split())
            assert "Traceback" not in said and said.count("results disk full at") == 1, said
            assert f"results disk full at {run}: no room for its report" in said
            assert f"`iolab report {run}`" in said and f"(the run is complete and stored in {run})" in said
            doc = json.loads(out)
            assert (
                errors(doc, json.loads((Path(__file__).parents[2] / "docs/schema/outcome.schema.json").read_text()))
                == []
            )
            assert doc["exit_code"] == 5 and "results disk full at" in doc["error"]
            assert [r["state"] for r in doc["runs"]] == ["complete"] and doc["runs"][0]["reports"] == []
            assert left(run / "report") == []
            listed = json.loads(iolab("runs", "--runs-dir", str(runs), "--json").stdout)["listed"]
            assert [r["state"] for r in listed] == ["complete"]
            filler.unlink()  # room again: what the message says writes the report
            p = iolab("report", str(run), timeout=300)
            assert p.returncode == 0 and len(list((run / "report").glob("*.*"))) == 2, p.stderr
            return
        pytest.fail("the report was written whole before the test could fill the disk, three times")


def test_a_sim_state_save_on_a_full_disk_exits_5_naming_the_state_file(tmp_path: Path, small_fs: Path):
    """Before: exit 2 ("bad input") blaming the target for the state file's write failure."""
    fill(small_fs)
    state = small_fs / "state.bin"
    target = f"{SMALL_SIM}&save={state}"
    p = iolab("run", "latency", "--quick", "-q", "--no-report", "-t", target, "--runs-dir", str(tmp_path), timeout=300)
    said = one_paragraph(p)
    # said as every other error ("iolab: ..."), then the run it leaves (before: no prefix)
    assert said.startswith(f"iolab: disk full at {state}: no room for the simulator state (save=)"), said
    assert "the run is stored" in said and "bad input" not in said
    assert not state.exists() and not list(small_fs.glob(".state.bin*"))


@pytest.fixture(scope="module")
def a_trace(tmp_path_factory) -> Path:
    """An SPC trace (6,000 IOs over 30 s) and its IO table, beside it."""
    d = tmp_path_factory.mktemp("trace")
    lines = [f"0,{(i * 7919) % 100000},4096,{'r' if i % 3 else 'w'},{i * 0.005:.6f}" for i in range(6000)]
    (d / "t.spc").write_text("\n".join(lines) + "\n")
    assert iolab("trace", "import", str(d / "t.spc"), "-f", "spc", "-o", str(d / "t.parquet")).returncode == 0
    return d


@pytest.mark.parametrize(
    ("line", "out", "what"),
    [
        ("trace export {d}/t.parquet -f msr -o {fs}/a.msr", "a.msr", "the exported trace"),
        ("trace import {d}/t.spc -f spc -o {fs}/a.parquet", "a.parquet", "the IO table"),
        ("trace analyze {d}/t.parquet --qd 4 --step 1s -o {fs}/wl", "wl", "the analysis"),
    ],
)
def test_a_trace_command_on_a_full_disk_exits_5_naming_its_output_and_leaves_nothing(
    a_trace: Path, small_fs: Path, line: str, out: str, what: str
):
    """Before: export a traceback (DuckDB's IOException, exit 1); import "t.spc: cannot read as
    spc" (exit 2, blaming the input); analyze the bare "No space left on device" (exit 2) and a
    0-byte analysis.json."""
    filler = fill(small_fs)
    said = one_paragraph(iolab(*shlex.split(line.format(d=a_trace, fs=small_fs)), timeout=300))
    assert said.startswith(f"iolab: disk full at {small_fs / out}: no room for {what}"), said
    assert "cannot read" not in said and "run the same `iolab trace" in said, said
    assert list(small_fs.iterdir()) == [filler]


@pytest.mark.parametrize("line", ["show {run}", "plan latency --quick", "trace analyze {d}/t.parquet --qd 4 -o {d}/w"])
def test_a_full_standard_output_is_named_for_every_command(a_run: Path, a_trace: Path, line: str):
    """`> /dev/full`: before, the bare "iolab: No space left on device" (the --json path already
    named standard output), as if a file iolab writes had no room."""
    args = shlex.split(line.format(run=a_run, d=a_trace))
    with open("/dev/full", "w") as full:
        p = subprocess.run([*IOLAB, *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    said = one_paragraph(subprocess.CompletedProcess(p.args, p.returncode, "", p.stderr), 2)
    assert said.startswith("iolab: standard output could not be written (No space left on device)"), said
    assert not (a_trace / "w").exists()  # it says files it had yet to write were not written
