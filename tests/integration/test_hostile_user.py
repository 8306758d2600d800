"""A hostile user's inputs, through the installed `iolab` command: each refused in one paragraph
with the CLI's exit code, nothing written where it should not be, and no traceback or false
figure (docs/automation.md, Exit codes)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from .conftest import fake_fio, iolab, quick_sim_run


def refused(p, code: int) -> str:
    text = p.stdout + p.stderr
    assert p.returncode == code and "Traceback" not in text and "Warning" not in text, text
    assert p.stderr.startswith("iolab: "), p.stderr
    return " ".join(p.stderr.split())


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_output_iolab_wrote_is_not_a_test_target(scratch):
    """Outputs and scratch files carried one mark, so `iolab run -t file:trace.parquet` took an
    imported trace for a scratch file of its own and overwrote it with fio's data, exit 0."""
    src = scratch / "t.txt"
    src.write_text("".join(f"{i * 100} 1 {i * 8} 8 1\n" for i in range(50)))
    table = scratch / "trace.parquet"
    p = iolab("trace", "import", str(src), "-f", "disksim", "--time-unit", "us", "-o", str(table))
    assert p.returncode == 0, p.stderr
    before = digest(table)
    runs = scratch / "runs"
    p = iolab("run", "throughput", "--quick", "-q", "-t", f"file:{table}?size=16MiB", "--runs-dir", str(runs))
    text = refused(p, 3)
    assert f"iolab output: {table} holds" in text and "that iolab wrote as a result" in text, text
    assert "--allow-unsafe-target" in text, text
    assert digest(table) == before and not runs.exists()
    # the policy still lets iolab replace its own output
    p = iolab("trace", "import", str(src), "-f", "disksim", "--time-unit", "us", "-o", str(table))
    assert p.returncode == 0, p.stderr


def test_a_file_target_in_a_stored_run_is_refused(scratch):
    """A file target inside another run's directory (its report/ folder, or a new image beside
    its results.db) was accepted: the run wrote 16 MiB of fio data into that run's record."""
    runs = scratch / "runs"
    run = quick_sim_run(runs)
    kept = sorted(p.name for p in run.rglob("*"))
    for path in (run / "scratch.img", run / "raw" / "x.img"):
        p = iolab("run", "latency", "--quick", "-q", "-t", f"file:{path}?size=16MiB", "--runs-dir", str(runs))
        text = refused(p, 3)
        assert f"run directory: {path} is in the run directory {run}, whose files are that run's record" in text
        assert text.endswith("Nothing overrides this: choose another target."), text
    assert sorted(p.name for p in run.rglob("*")) == kept
    assert [d.name for d in runs.iterdir()] == [run.name]


@pytest.fixture(scope="module")
def file_run(tmp_path_factory) -> Path:
    """A quick throughput run with real fio on a scratch file (a run `iolab power` takes)."""
    d = tmp_path_factory.mktemp("hostile-file-run")
    runs = d / "runs"
    p = iolab(
        "run", "throughput", "-t", f"file:{d}/drive.img?size=16MiB", "--quick", "--cell-time", "200ms",
        "--max-rounds", "1", "--no-report", "-q", "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode in (0, 6), p.stdout + p.stderr
    [run] = list(runs.iterdir())
    return run


def meter_log(run: Path, watts: str, at: float | None = None) -> str:
    """Readings every 0.1 s over the run's cells, each `watts`; the first one's time `at`."""
    db = sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True)
    first, last = db.execute("SELECT min(started), max(ended) FROM cells").fetchone()
    times = [first - 1 + 0.1 * i for i in range(int((last - first + 2) / 0.1))]
    if at is not None:
        times[0] = at
    return "time,watts\n" + "".join(f"{t!r},{watts}\n" for t in times)


@pytest.mark.parametrize(
    ("watts", "at", "says"),
    [
        # exit 0 and "1,000,000,000,000,000,152,432,... mW average" in power.json and the report
        ("1e300", None, "line 2: power '1e300' is 1e+297 kW, more than the 10 kW a meter of drives reads"),
        # a mW log under a "watts" header: 8,000 W per drive
        ("8000000", None, "line 2: power '8000000' is 8,000 kW, more than the 10 kW"),
        # OverflowError: timestamp out of range for platform time_t (a traceback, exit 1)
        ("5", 1e300, "line 2: the time '1e+300' is more than 10,000,000,000 s (about 317 years) from 1970"),
        # exit 0: "readings every 5.000e+299 s (median)"
        ("5", -1e300, "line 2: the time '-1e+300' is more than 10,000,000,000 s"),
    ],
)
def test_a_meter_reading_no_meter_gives_is_refused(file_run, tmp_path, watts, at, says):
    log = tmp_path / "meter.csv"
    log.write_text(meter_log(file_run, watts, at))
    stored = file_run / "power.json"
    before = stored.read_bytes() if stored.exists() else None
    p = iolab("power", str(file_run), str(log))
    text = refused(p, 2)
    assert text.startswith(f"iolab: {log}, {says}"), text
    assert (stored.read_bytes() if stored.exists() else None) == before


def test_a_meter_reading_of_minus_zero_is_zero(file_run, tmp_path):
    """'run: 0 mW average, -0 mW maximum' from a log whose readings were -0."""
    log = tmp_path / "meter.csv"
    log.write_text(meter_log(file_run, "-0"))
    p = iolab("power", str(file_run), str(log))
    assert p.returncode == 0, p.stderr
    assert "run: 0 mW average, 0 mW maximum" in p.stdout and "-0 mW" not in p.stdout, p.stdout


def test_a_meter_log_that_opens_with_a_byte_order_mark_is_read(file_run, tmp_path):
    """A meter's CSV saved as "CSV UTF-8" was refused: "line 1 names the columns
    ['\\ufefftime', 'watts']; a meter log needs a time column"."""
    log = tmp_path / "meter.csv"
    log.write_bytes(b"\xef\xbb\xbf" + meter_log(file_run, "5").encode())
    p = iolab("power", str(file_run), str(log))
    assert p.returncode == 0, p.stderr
    assert "run: 5,000 mW average, 5,000 mW maximum" in p.stdout, p.stdout


def test_a_corrupt_time_does_not_decide_the_time_unit(tmp_path):
    """One DiskSim line at 1e308 (dropped by --skip-bad-lines) made the unit guess call every
    unit 'impossible, times past 126 years' and fall back to ns: the kept trace of IOs 1,000
    apart was read at 1,333,333 IOPS over 3 µs; numpy's overflow warnings printed first."""
    trace = tmp_path / "t.txt"
    trace.write_text("1e308 1 0 8 1\n0 1 8 8 0\n1000 1 8 8 0\n2000 1 8 8 0\n3000 1 16 8 0\n")
    out = tmp_path / "t.parquet"
    p = iolab("trace", "import", str(trace), "-f", "disksim", "-o", str(out), "--skip-bad-lines")
    assert p.returncode == 0 and "Warning" not in p.stderr, p.stdout + p.stderr
    text = " ".join(p.stdout.split())
    assert "4 IOs from disksim" in text and "span: 3 ms from the first IO to the last (1,333 IOPS" in text, text
    assert "skipped 1 bad line, e.g." in text and "time unit: us (guessed, likely" in text, text
    assert "impossible" not in text, text
    p = iolab("trace", "import", str(trace), "-f", "disksim", "-o", str(out))
    text = refused(p, 2)
    assert "t.txt:1: field 1 (time): out of range (more than 126 years from 0 once in ns)" in text, text


def test_one_io_is_one(tmp_path):
    """'1 IOs from disksim', 'skipped 1 bad lines'."""
    trace = tmp_path / "t.txt"
    trace.write_text("x\n0 1 8 8 0\n")
    p = iolab("trace", "import", str(trace), "-f", "disksim", "-o", str(tmp_path / "t.parquet"), "--skip-bad-lines")
    assert p.returncode == 0, p.stderr
    assert f": 1 IO from disksim ({trace})" in p.stdout and "skipped 1 bad line, e.g." in p.stdout, p.stdout


def test_a_file_target_in_proc_is_refused_not_asked_for_a_size(tmp_path):
    """`-t file:/proc/self/mem` said "is empty, so its size must be given, e.g.
    file:/proc/self/mem?size=8GiB" (exit 2): advice that only led to the pseudo-filesystem
    refusal."""
    runs = tmp_path / "runs"
    for args in (("run", "latency", "--quick", "--runs-dir", str(runs), "-t"), ("info",)):
        p = iolab(*args, "file:/proc/self/mem")
        text = refused(p, 3)
        assert "/proc/self/mem is on proc at /proc, where writes change the kernel, not a file" in text, text
        assert "size" not in text, text
    assert not runs.exists()


@pytest.fixture(scope="module")
def huge_io_table(tmp_path_factory) -> Path:
    """An MSR trace with an 8 GiB write (MSR sizes are bytes; the reader takes up to 1 EiB)."""
    d = tmp_path_factory.mktemp("huge-io")
    src = d / "t.csv"
    src.write_text("128166372003061629,hm,0,Write,0,8589934592,1331\n128166372003071629,hm,0,Read,4096,4096,10\n")
    p = iolab("trace", "import", str(src), "-f", "msr", "-o", str(d / "t.parquet"))
    assert p.returncode == 0, p.stderr
    return d / "t.parquet"


@pytest.mark.parametrize(("fmt", "field"), [("vscsi", "4,294,967,295"), ("blktrace", "4,294,966,784")])
def test_an_io_longer_than_a_binary_length_field_is_refused(huge_io_table, tmp_path, fmt, field):
    """blktrace's and vSCSI's length fields are 32-bit: the 8 GiB write was written as 0 bytes
    (numpy wrapped it), exit 0, and read back as a 0-byte write."""
    out = tmp_path / f"t.{fmt}"
    p = iolab("trace", "export", str(huge_io_table), "-f", fmt, "-o", str(out))
    text = refused(p, 2)
    assert f"1 IO is longer than {fmt}'s length field holds ({field} B): the longest is 8,589,934,592 B" in text
    assert "Nothing was written; export to a format that writes sizes as text (msr, " in text, text
    assert not out.exists()
    p = iolab("trace", "export", str(huge_io_table), "-f", "blkparse", "-o", str(tmp_path / "t.txt"))
    assert p.returncode == 0, p.stderr


def test_a_trace_without_response_times_stays_without_them_through_vscsi(tmp_path):
    """vSCSI was always written as version 2 records, whose rt of a table without response
    times was 0: read back, 'response times: yes', every IO 0 µs."""
    src = tmp_path / "t.txt"
    src.write_text("".join(f"{i * 1000} 1 {i * 8} 8 1\n" for i in range(20)))
    table, out = tmp_path / "t.parquet", tmp_path / "t.vscsi"
    assert iolab("trace", "import", str(src), "-f", "disksim", "--time-unit", "us", "-o", str(table)).returncode == 0
    p = iolab("trace", "export", str(table), "-f", "vscsi", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert out.stat().st_size == 20 * 32  # version 1 records
    p = iolab("trace", "import", str(out), "-f", "vscsi", "--time-unit", "us", "-o", str(tmp_path / "back.parquet"))
    assert p.returncode == 0 and "response times: not in this trace" in p.stdout, p.stdout + p.stderr


def test_a_span_that_rounds_up_to_the_next_unit_is_said_in_it(tmp_path):
    """999,999 ns printed as 'span: 1e+03 µs': three digits were chosen before the rounding."""
    src = tmp_path / "t.txt"
    src.write_text("0 1 0 8 1\n999999 1 8 8 0\n")
    p = iolab("trace", "import", str(src), "-f", "disksim", "--time-unit", "ns", "-o", str(tmp_path / "t.parquet"))
    assert p.returncode == 0, p.stderr
    assert "span: 1 ms from the first IO to the last (2,000 IOPS on average)" in p.stdout, p.stdout
    p = iolab("trace", "import", str(src), "-f", "disksim", "-o", str(tmp_path / "guessed.parquet"))
    assert p.returncode == 0 and "e+0" not in p.stdout, p.stdout


@pytest.mark.parametrize("value", ["35,5", "12,34,567", "３５", "1,000_000"])
def test_a_spec_sheet_number_is_read_as_written_or_refused(tmp_path, value):
    """A CSV spec sheet dropped every comma and underscore before float(): a decimal comma,
    '35,5', became a bound of ≥ 355 on the report's front page; full-width digits read as 35."""
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(f'figure,min,unit\n"RND 4KiB R/W 0/100 IOPS","{value}",kIOPS\n')
    p = iolab("report", "nothing-here", "--runs-dir", str(tmp_path), "--spec-sheet", str(sheet))
    text = refused(p, 2)
    assert f"line 2: field 'min' is '{value}'; give a number (ASCII digits 0-9" in text, text
    assert "a decimal comma is a point, 35.5" in text, text


@pytest.mark.parametrize("value", ["35,000", "1,000,000.5", "35_000", "3.5e4"])
def test_a_spec_sheet_number_in_thousands_is_read(tmp_path, value):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(f'figure,min\n"RND 4KiB R/W 0/100 IOPS","{value}"\n')
    p = iolab("report", "nothing-here", "--runs-dir", str(tmp_path), "--spec-sheet", str(sheet))
    assert p.returncode == 2 and "no such run directory" in p.stderr and "field 'min'" not in p.stderr, p.stderr


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        # a list given to a one-value parameter ran QoS at QD 132
        ("qd=1,32", "give a whole number (a comma or underscore only between groups of three digits"),
        (
            "rounds=1,2",
            "give a whole number (a comma or underscore only between groups of three digits, as in 35,000; one value, not a list)",
        ),
        # int() and float() read other scripts' digits: Arabic-Indic 3, full-width 5
        ("qd=٣", "give a whole number"),
        ("warranty_years=５", "give 0 (not given) or a number of years greater than 0"),
        ("queue_depths=1,٢,4", "give distinct queue depths from 1 to 65,536"),
    ],
)
def test_a_set_value_is_read_as_written_or_refused(setting, says):
    test = "max-iops" if setting.startswith("queue_depths") else "qos"
    p = iolab("plan", test, "--quick", "--set", setting)
    text = refused(p, 2)
    name, value = setting.split("=")
    assert (
        f"--set {name}='{value}') (test {test}): {says}" in text
        or f"--set {name}='{value}' (test {test}): {says}" in text
    ), text


def test_a_set_value_in_thousands_is_read():
    p = iolab("plan", "qos", "--quick", "--set", "rounds=1,000", "--set", "qd=1_024")
    assert p.returncode == 0, p.stderr
    assert "qd: 1024 (set with --set)" in p.stdout and "rounds: 1000 (set with --set)" in p.stdout, p.stdout


def test_a_trace_command_never_writes_over_its_own_input(tmp_path):
    """Outputs are files the policy lets iolab replace, so `trace export T.parquet -o T.parquet`
    replaced the IO table with its MSR export (exit 0: the table was gone), and importing an
    exported trace with -o onto itself replaced the trace with a table."""
    src = tmp_path / "t.txt"
    src.write_text("".join(f"{i * 1000} 1 {i * 8} 8 1\n" for i in range(20)))
    table, exported = tmp_path / "t.parquet", tmp_path / "t.msr"
    assert iolab("trace", "import", str(src), "-f", "disksim", "--time-unit", "us", "-o", str(table)).returncode == 0
    assert iolab("trace", "export", str(table), "-f", "msr", "-o", str(exported)).returncode == 0
    (tmp_path / "link.parquet").symlink_to(table)
    kept = {p: digest(p) for p in (table, exported)}
    link = tmp_path / "link.parquet"
    for args, what, read in [
        (("export", str(table), "-f", "msr", "-o", str(table)), "trace file", table),
        (("export", str(table), "-f", "msr", "-o", str(link)), "trace file", table),
        (("import", str(exported), "-f", "msr", "-o", str(exported)), "IO table", exported),
    ]:
        p = iolab("trace", *args)
        text = refused(p, 3)
        assert f"Refusing to write the {what} '{args[-1]}': it is {read}, which this command reads" in text, text
    assert {p: digest(p) for p in kept} == kept


def qos_with_a_fio_that_then_runs(scratch: Path, runs: Path, target: Path, after: str):
    """`iolab run qos` on a 16 MiB file with a fio that runs the first step (the preconditioning)
    and then the shell command `after`, once."""
    body = (
        f'{shutil.which("fio")} "$@"; rc=$?\n[ -e {scratch}/acted ] || {{ touch {scratch}/acted; {after}; }}\nexit $rc'
    )
    fake = fake_fio(scratch, body)
    return iolab(
        *("run", "qos", "--quick", "--cell-time", "200ms", "--set", "rounds=1", "-q", "--no-report"),
        *("-t", f"file:{target}?size=16MiB", "--runs-dir", str(runs)),
        env={"PATH": f"{fake.parent}:{os.environ['PATH']}"},
    )


def test_a_target_replaced_during_a_run_is_not_written(scratch, tmp_path):
    """fio and the purge open a file target by its path for each cell: a file replaced under its
    name during the run by a symbolic link to someone's data had that data overwritten by the
    rest of the run, which ended exit 0. Now each cell and purge checks the target is the one the
    run's safety checks passed (the identity it stored), and the run stops, exit 3."""
    target, victim = scratch / "swapped.img", scratch / "someones.dat"
    victim.write_bytes(b"not a test's data\n" * 100_000)
    before = digest(victim)
    runs = tmp_path / "runs"
    p = qos_with_a_fio_that_then_runs(scratch, runs, target, f"rm {target}; ln -s {victim} {target}")
    text = refused(p, 3)
    assert digest(victim) == before
    assert f"the target file:{target}?size=16MiB changed during the run (inode was " in text, text
    assert f"path was '{target}', now '{victim}'" in text and "stopped before cell write_rounds-r01-" in text, text
    (run,) = runs.iterdir()
    shown = json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]
    assert shown["state"] == "failed", shown


def test_a_target_truncated_during_a_run_is_not_measured(scratch, tmp_path):
    """A file target truncated during the run was grown again by fio's next step, which then read
    holes, not the data the preconditioning wrote: the run stored their figures, exit 0."""
    target = scratch / "truncated.img"
    p = qos_with_a_fio_that_then_runs(scratch, tmp_path / "runs", target, f"truncate -s 1M {target}")
    text = refused(p, 3)
    assert "changed during the run (size was 16777216, now 1048576)" in text, text
