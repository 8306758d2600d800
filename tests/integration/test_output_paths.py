"""Paths and sizes that are not what an option needs, through the installed `iolab` command:
refused before the work, naming the option given and what the path is (or is not), with nothing
written."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab, quick_sim_run


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, Path]:
    runs = tmp_path_factory.mktemp("output-paths") / "runs"
    return quick_sim_run(runs), quick_sim_run(runs)


def said(p, code: int = 2) -> str:
    text = p.stdout + p.stderr
    assert p.returncode == code and "Traceback" not in text, text
    assert p.stderr.startswith("iolab: ") and "\n\n" not in p.stderr.strip(), p.stderr
    return " ".join(p.stderr.split())


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("{d}/nodir/out", "the directory {d}/nodir does not exist"),
        ("/etc/passwd/out", "/etc/passwd is not a directory"),
    ],
)
def test_a_file_option_into_no_directory_is_refused_before_the_work(two_runs, tmp_path, where, says):
    """`check --junit /nodir/j.xml` and `history --html /nodir/h.html` printed their whole table,
    then "No such file or directory: /nodir/j.xml.tmp" (an internal file, no option named)."""
    first, second = two_runs
    path, says = where.format(d=tmp_path), says.format(d=tmp_path)
    p = iolab("check", str(second), "--baseline", str(first), "--junit", f"{path}.xml")
    text = said(p)
    assert text.startswith(f"iolab: --junit {path}.xml: {says}, so the JUnit file cannot be written there"), text
    assert not p.stdout.strip(), "the check's table was printed before the refusal"
    figure = "ART RND 4KiB R/W 0/100"
    p = iolab("history", figure, "--runs-dir", str(first.parent), "--html", f"{path}.html")
    text = said(p)
    assert text.startswith(f"iolab: --html {path}.html: {says}, so the history chart cannot be written"), text
    assert not p.stdout.strip()
    assert not (tmp_path / "nodir").exists()


def test_a_symlink_at_the_old_fixed_aside_name_is_not_followed(two_runs, tmp_path):
    """`check --junit j.xml` and `history --html h.html` wrote their file to the fixed name
    j.xml.tmp through open(), which followed a symlink planted there: the file it named got the
    JUnit XML, and the link itself was renamed over j.xml. Each is now written under a fresh
    name made with O_EXCL, and whatever holds the old name is left as it was."""
    first, second = two_runs
    victim = tmp_path / "victim.txt"
    victim.write_text("someone's data\n")
    junit, chart = tmp_path / "j.xml", tmp_path / "h.html"
    for out in (junit, chart):
        out.with_name(out.name + ".tmp").symlink_to(victim)
    p = iolab("check", str(second), "--baseline", str(first), "--junit", str(junit))
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stdout + p.stderr
    figure = "ART RND 4KiB R/W 0/100"
    p = iolab("history", figure, "--runs-dir", str(first.parent), "--html", str(chart))
    assert p.returncode == 0, p.stdout + p.stderr
    assert victim.read_text() == "someone's data\n"
    assert not junit.is_symlink() and "<testsuite" in junit.read_text()
    assert not chart.is_symlink() and "<html" in chart.read_text().lower()
    assert all(out.with_name(out.name + ".tmp").is_symlink() for out in (junit, chart))


def test_a_simulator_state_into_no_directory_is_refused_before_the_run(tmp_path):
    """The run measured everything, was stored complete, then failed to save its state ("sim
    state file /nodir/.s.state.123.tmp: cannot create it"), exit 2."""
    runs = tmp_path / "runs"
    state = tmp_path / "nodir" / "s.state"
    p = iolab("run", "latency", "--quick", "-q", "-t", f"{SMALL_SIM}&save={state}", "--runs-dir", str(runs))
    text = said(p, 3)
    assert f"save=: {state}: the directory {state.parent} does not exist" in text, text
    assert not runs.exists() and not state.parent.exists()


def test_a_refused_run_saves_no_simulator_state(tmp_path):
    """`--purge nvme-format` on a simulated drive said "Nothing was run or written" and wrote the
    drive's state to save= all the same (the engine saved every drive it had built as it closed)."""
    state = tmp_path / "s.state"
    runs = tmp_path / "runs"
    p = iolab(
        "run",
        "latency",
        "--quick",
        "-q",
        "--purge",
        "nvme-format",
        "-t",
        f"{SMALL_SIM}&save={state}",
        "--runs-dir",
        str(runs),
    )
    assert "Nothing was run or written." in said(p)
    assert not state.exists() and not runs.exists()


@pytest.mark.parametrize("runs_dir", ["/etc/passwd", "/dev/null"])
def test_watch_on_a_file_says_it_is_not_a_directory(runs_dir):
    """`iolab watch /etc/passwd` said "runs directory /etc/passwd does not exist"."""
    p = iolab("watch", runs_dir, "--port", "0", timeout=30)
    assert said(p).startswith(f"iolab: runs directory {runs_dir} is not a directory; give the directory"), p.stderr


@pytest.mark.parametrize(("path", "kind"), [("/etc/shadow", "a file"), ("/dev/null", "a character device")])
def test_a_run_named_by_a_file_says_what_it_is(two_runs, path, kind):
    """`iolab check X --baseline /etc/shadow` said "no such run directory" of a file that exists."""
    first, _ = two_runs
    for args in (("check", str(first), "--baseline", path), ("show", path)):
        text = said(iolab(*args))
        assert f"run '{path}': {path} is {kind}, not a run directory" in text, text
        assert "no such run directory" not in text


@pytest.mark.parametrize(("capacity", "shown"), [("100TiB", "100 TiB"), ("1B", "1 B")])
def test_a_calibration_copy_the_simulator_cannot_build_blames_capacity(two_runs, capacity, shown):
    """It blamed the preset: "--base enterprise-sas: … give a smaller user_gb"."""
    first, _ = two_runs
    text = said(iolab("sim", "calibrate", str(first), "--capacity", capacity, "--budget", "1"))
    assert text.startswith(f"iolab: --capacity {shown}: the simulator cannot build a copy of enterprise-sas"), text
    assert "--base" not in text, text


# every command that takes --runs-dir, with what else it needs to get as far as reading it
TAKE_RUNS_DIR = [
    ("run", "latency", "--quick", "-t", SMALL_SIM, "--no-report"),
    ("resume", "x"),
    ("runs",),
    ("show", "x"),
    ("report", "x"),
    ("compare", "x", "y"),
    ("export", "x"),
    ("check", "x", "--baseline", "y"),
    ("history", "IOPS"),
    ("watch", "--port", "0"),
    ("fleet",),
    ("plan", "latency", "--quick", "-t", SMALL_SIM),
    ("audit", "x"),
    ("power", "x"),
]


@pytest.mark.parametrize("args", TAKE_RUNS_DIR, ids=lambda a: a[0])
def test_a_runs_dir_that_is_a_file_is_said_to_be_one(tmp_path, args):
    """`--runs-dir FILE` said "no such runs directory" (history), "no such run directory" (show,
    report, compare, ...) or refused to write it (run), each its own way."""
    notes = tmp_path / "notes.txt"
    notes.write_text("someone's notes\n")
    text = said(iolab(*args, "--runs-dir", str(notes), timeout=60))
    assert text.startswith(f"iolab: --runs-dir {notes}: it is a regular file, not a directory."), text
    assert "no such" not in text and notes.read_text() == "someone's notes\n"


@pytest.mark.parametrize("args", TAKE_RUNS_DIR, ids=lambda a: a[0])
def test_an_iolab_runs_that_is_a_file_is_said_to_be_one(tmp_path, args):
    """$IOLAB_RUNS naming a file got each command's own message, as --runs-dir FILE did: "no such
    runs directory" (history), "no such run directory" (show, ...), a refusal to write it (run),
    and `fleet` said "no fleets under FILE/fleets", exit 0."""
    notes = tmp_path / "notes.txt"
    notes.write_text("someone's notes\n")
    text = said(iolab(*args, timeout=60, env={"IOLAB_RUNS": str(notes)}))
    assert text.startswith(f"iolab: $IOLAB_RUNS {notes}: it is a regular file, not a directory."), text


def test_a_runs_dir_given_stands_before_an_iolab_runs_that_is_a_file(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("someone's notes\n")
    p = iolab("runs", "--runs-dir", str(tmp_path), env={"IOLAB_RUNS": str(notes)})
    assert p.returncode == 0 and "IOLAB_RUNS" not in p.stderr, p.stderr
    p = iolab("tests", env={"IOLAB_RUNS": str(notes)})  # a command that finds no runs is not concerned
    assert p.returncode == 0, p.stderr


def test_an_output_named_dash_is_refused_where_no_standard_output_is_written(two_runs, tmp_path):
    """`-o -` means standard output to `iolab export --format json`; `compare -o -`, `report -o -`
    and `history --html -` made a directory or file named '-' in the current directory and
    printed it as written, exit 0, where a user meant standard output."""
    first, second = two_runs
    dash = str(tmp_path / "-")  # a '-' beside the test's files, never in the suite's own directory
    for args in (
        ("compare", str(first), str(second), "--out", dash),
        ("report", str(first), "--out", dash),
        ("history", "ART RND 4KiB R/W 0/100", "--runs-dir", str(first.parent), "--html", dash),
    ):
        text = said(iolab(*args), 3)
        assert "'-' names standard output only where a command writes one document there" in text, (args, text)
        assert not (tmp_path / "-").exists(), args
    p = iolab("export", str(first), "--format", "json", "--out", "-")
    assert p.returncode == 0 and p.stdout.startswith("{"), p.stderr  # where it is standard output, it still is
