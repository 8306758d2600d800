"""Bad command lines: each ends with a non-zero exit and a one-paragraph error, never a
traceback, and leaves no run directory behind (nothing was purged or written).

Most run in-process through `iolab.cli.main.main` (the console script's entry point) to keep the
suite fast; a few go through the installed `iolab` command as a user types them.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from iolab.cli import main as cli

from .conftest import iolab

# Each used to crash (a Rich MarkupError on text holding [...], a raw Python exception) or
# to run and store something before failing, or to "complete" with nonsense: bad input must
# be refused before anything is written.
BAD = [
    "run iops -t /dev/null",
    "run iops -t {d}/adir",
    "run iops -t file:x?sise=1",
    "run iops -t sim:",
    "run iops -t nbd://",
    "run iops -t nbd://h:99999/x",
    "run iops -t nbd://[::1",
    "run iops -t nbd://[x]/y",
    "run iops -t /dev/sda[1]",
    "run iops -t sim:[x]",
    "run iops -t sim:enterprise-sas?port=99",  # ran to completion on a port the drive does not have
    "run iops -t sim:entry-sata-compress?port=1",  # SATA: one port
    "run iops -t ''",
    "info ''",
    "info {d}/adir",
    "info [x]",
    "info /dev/null",
    "run iops --precondition-factor nan",
    "run iops --precondition-factor inf",
    "run iops --precondition-factor -1",
    "run iops --wsat-capacity-multiple nan",
    "run iops --runs-dir {d}/afile",
    "run iops --runs-dir /proc",
    "run iops --max-rounds 0",
    "run iops --max-rounds -3",
    "run iops --cell-time 100000000h",
    "run iops --cell-time 0",
    "run iops --cell-time 0ms",
    "run iops --cell-time 25h",
    "run iops --cell-time [x]",
    "run iops --capacity-limit 1B",
    "run pts --capacity-limit 200KiB",
    "run iops --capacity-limit 0",
    "run iops --purge foo",
    "run iops --purge blkdiscard",
    "run iops -t file:{d}/f.img?size=64MiB --purge nvme-format",
    # a block of part of a sector was taken, the file made and purged, and every fio job failed
    "run latency-bound -t file:{d}/f.img?size=16MiB --set block_size=3000",
    "run dirth -t file:{d}/f.img?size=16MiB --set block_size=3000",
    "run rw-matrix -t file:{d}/f.img?size=16MiB --set sizes=3000",
    "run wsat --wsat-max-time 0",
    "run wsat --wsat-capacity-multiple -1",
    "run iops --stall-timeout 0",
    "run iops --stall-timeout abc",
    "run iops --profile [x]",
    "run [x]",
    "run iops --workload [x]",
    "run multi-wsat",
    "run multi-wsat --workload {d}/afile",
    "show [bold]x",
    "report {d}/afile",
    "export [x]",
    "fio-job iops -t sim:",
    "fio-job iops -t [x]",
    "fio-job iops -t file:{d}/f.img?size=1MiB --capacity-limit 1B",
    "trace import {d}/[x] -o {d}/o.parquet",
    "capture /dev/[x] -d 1s -o {d}/c.parquet",
]


@pytest.fixture
def place(scratch: Path, monkeypatch) -> Path:
    (scratch / "afile").write_text("")
    (scratch / "adir").mkdir()
    (scratch / "runs").mkdir()
    monkeypatch.setenv("IOLAB_RUNS", str(scratch / "runs"))
    monkeypatch.chdir(scratch)
    return scratch


def _args(line: str, d: Path) -> list[str]:
    import shlex

    args = shlex.split(line.format(d=d))
    if args[0] == "run":
        args += ["--quick", "--no-report"]
    return args


def _check(code: int, out: str, err: str, d: Path) -> None:
    assert code not in (0, None), out + err
    assert "Traceback" not in out + err, err
    text = err.strip()
    assert text, "no error message"
    assert "\n\n" not in text, f"more than one paragraph:\n{text}"
    assert not any((d / "runs").iterdir()), "a run directory was left behind"
    assert not (d / "f.img").exists() and not (d / "x").exists(), "a target file was created"


@pytest.mark.parametrize("line", BAD)
def test_a_bad_command_line_gives_one_paragraph_and_no_run(line, place, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["iolab", *_args(line, place)])
    with pytest.raises(SystemExit) as e:
        cli.main()
    out, err = capsys.readouterr()
    _check(e.value.code, out, err, place)


@pytest.mark.parametrize("line", ["run iops -t nbd://", "run iops --max-rounds 0", "info ''"])
def test_the_installed_command_says_the_same(line, place):
    p = iolab(*_args(line, place), env={"IOLAB_RUNS": str(place / "runs")})
    _check(p.returncode, p.stdout, p.stderr, place)
    assert p.stderr.startswith("iolab: ")


@pytest.mark.parametrize("test", ["qos", "max-iops"])
def test_a_tests_own_rounds_are_bounded_as_max_rounds_is(test, place):
    # `iolab run qos --quick --set rounds=1000000` was accepted (and would have run for days)
    # (a refusal comes at once: the time-out only ends a run that was not refused)
    # and 0 is told the same range (it was "from 1 to 2,147,483,647")
    for rounds in ("1000000", "0"):
        p = iolab("run", test, "--quick", "--cell-time", "100ms", "--no-report", "--set", f"rounds={rounds}")
        _check(p.returncode, p.stdout, p.stderr, place)
        assert p.returncode == 2 and "give a whole number from 1 to 1,000." in " ".join(p.stderr.split())
    at_most = iolab("fio-job", test, "--quick", "--set", "rounds=1000", "-t", f"file:{place}/f.img?size=64MiB")
    assert at_most.returncode == 0, at_most.stderr


@pytest.mark.parametrize("state", ["afile", "missing.state"])
def test_a_saved_state_that_cannot_be_loaded_leaves_no_failed_run(state, place):
    # load= was read once the run had started: a failed run directory was left behind
    p = iolab("run", "iops", "-t", f"sim:enterprise-sas?load={place / state}", "--no-report")
    _check(p.returncode, p.stdout, p.stderr, place)
    # a missing file is refused as any file iolab reads is (safefile), a garbage one by the simulator
    assert p.stderr.startswith("iolab: target sim:enterprise-sas")
    assert "sim state file" in p.stderr or "the saved state (load=)" in p.stderr


def test_user_text_with_markup_is_printed_as_given(place, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["iolab", "info", "[red]x[/red]"])
    with pytest.raises(SystemExit):
        cli.main()
    err = " ".join(capsys.readouterr().err.split())
    assert "'[red]x[/red]'" in err and "nbd://HOST[:PORT][/EXPORT]" in err


def test_info_of_several_targets_shows_each_and_names_the_one_it_cannot_read(place):
    """`iolab info A B C` as a qualification engineer runs it on a shelf of drives: a drive that
    cannot be read is named with its reason, the others are still shown, and the exit says so."""
    p = iolab("info", "sim:enterprise-sas", f"{place}/adir", "sim:client-nvme-slc?seed=3")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and f"{place}/adir" in " ".join(p.stderr.split())
    heads = [line for line in p.stdout.splitlines() if not line.startswith(" ")]
    assert heads[0].startswith("sim:enterprise-sas (sim)") and heads[1].startswith("sim:client-nvme-slc?seed=3 (sim)")
    assert p.stdout.count("  model ") == 2
    good = iolab("info", "sim:enterprise-sas", "sim:client-nvme-slc")
    assert good.returncode == 0 and good.stdout.count("  capacity_bytes ") == 2


def test_one_target_given_twice_is_refused_before_anything_runs(scratch):
    # -t F -t F (or F and a symlink to it) ran the first to its end, then the second was refused
    # by the first's lock ("runs that did not finish: F (exit 3)")
    img = scratch / "d.img"
    (scratch / "link.img").symlink_to(img)
    runs = scratch / "runs"
    for second in (img, scratch / "link.img"):
        p = iolab(
            "run",
            "throughput",
            "-t",
            f"file:{img}?size=16MiB",
            "-t",
            f"file:{second}?size=16MiB",
            "--quick",
            "--runs-dir",
            str(runs),
            timeout=120,
        )
        said = " ".join((p.stdout + p.stderr).split())
        assert p.returncode == 2 and "Traceback" not in said, said
        assert f"are one drive: both reach the file to be made on this machine at {img} (a" in said, said
        assert "give each drive once. Nothing was run or written." in said, said
        assert not img.exists() and not runs.exists()


def _refused_as_one_drive(first: str, second: str, runs: Path) -> str:
    p = iolab("run", "throughput", "-t", first, "-t", second, "--quick", "--runs-dir", str(runs), timeout=300)
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "Traceback" not in said, said
    assert f"--target {first} and --target {second} are one drive: both reach the " in said, said
    assert "Nothing was run or written." in said and not runs.exists(), said
    return said


@pytest.mark.parametrize(
    "first, second",
    [
        ("sim:enterprise-sas", "sim:enterprise-sas"),
        ("sim:enterprise-sas?user_gb=0.25&seed=3", "sim:enterprise-sas?seed=3&user_gb=.250"),  # spelt apart
        # a choice in capitals is the simulator's same choice (both ran as two drives)
        ("sim:enterprise-sas?user_gb=0.25&gc=fifo", "sim:enterprise-sas?gc=FIFO&user_gb=0.25"),
        # the preset's own capacity written out (both ran, as two drives)
        ("sim:enterprise-sas", "sim:enterprise-sas?user_gb=400"),
    ],
)
def test_one_simulated_drive_given_twice_is_refused_as_a_fleet_refuses_it(scratch, first, second):
    """Before: both ran, their lines with one prefix, and a comparison of '2 drives' that were one."""
    runs = scratch / "runs"
    p = iolab("run", "latency", "-t", first, "-t", second, "--quick", "--runs-dir", str(runs), timeout=300)
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "Traceback" not in said and not runs.exists(), said
    assert f"--target {first} and --target {second} are one simulated drive" in said, said
    assert "its own seed (?seed=N). Nothing was run or written." in said, said
    seeded = "sim:enterprise-sas?user_gb=0.25&seed=4"  # another seed: another drive, both run
    # (one round of short cells: that both run is what is read, not what they measure; to steady
    # state, the four cases' runs took 1.6 CPU-s more)
    short = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report")
    other = iolab("run", "latency", "-t", second, "-t", seeded, *short, "--runs-dir", str(runs))
    assert other.returncode == 0, other.stdout + other.stderr


def test_a_hard_link_to_a_target_is_one_target_twice(scratch):
    # the realpath check saw two paths; the inode is one (the fleet's identity, api/fleetident.py)
    img = scratch / "a.img"
    img.write_bytes(b"someone's data")
    (scratch / "hardlink.img").hardlink_to(img)
    st = img.stat()
    said = _refused_as_one_drive(f"file:{img}", f"file:{scratch}/hardlink.img", scratch / "runs")
    assert f"the file on this machine, filesystem device {st.st_dev} inode {st.st_ino} (" in said, said
    assert img.read_bytes() == b"someone's data"


def test_a_second_device_node_of_a_drive_is_one_target_twice(scratch, loop_device):
    # mknod of the loop device's major:minor: another name of the one device, under /dev as
    # block targets are named
    rdev = os.stat(loop_device).st_rdev
    alias = f"/dev/iolab-test-alias-{os.getpid()}"
    os.mknod(alias, 0o600 | stat.S_IFBLK, rdev)
    try:
        marker = b"iolab-test " + alias.encode()
        with open(loop_device, "r+b") as f:
            f.write(marker)
        said = _refused_as_one_drive(loop_device, alias, scratch / "runs")
        # a loop device has no WWID or serial: its device number is what it is
        assert f"the block device {os.major(rdev)}:{os.minor(rdev)} (major:minor) (" in said, said
        with open(loop_device, "rb") as f:
            assert f.read(len(marker)) == marker  # nothing purged or written
    finally:
        os.unlink(alias)


@pytest.mark.parametrize("command", [("show",), ("report",), ("export",), ("audit",)])
def test_a_directory_that_is_not_a_run_is_called_so(command, tmp_path):
    plain = tmp_path / "photos"
    plain.mkdir()
    (plain / "a.jpg").write_bytes(b"x")
    p = iolab(*command, str(plain), "--runs-dir", str(tmp_path / "runs"))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in said, said
    assert "is a directory but not a run (it has no manifest.json" in said, said
    assert sorted(x.name for x in plain.iterdir()) == ["a.jpg"]  # nothing written into it


def test_a_directory_of_the_runs_root_that_is_not_a_run_is_called_so_by_its_name(tmp_path):
    # `iolab runs` lists a directory holding a results.db but no manifest as a broken run, and
    # `iolab show NAME` then said "no such run directory" of it
    runs = tmp_path / "runs"
    (runs / "broken").mkdir(parents=True)
    (runs / "broken" / "results.db").write_bytes(b"not a database")
    p = iolab("show", "broken", "--runs-dir", str(runs))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in said, said
    assert f"'broken' ({runs / 'broken'}) is a directory but not a run (it has no manifest.json" in said, said


def test_an_active_range_of_no_byte_names_the_option(place):
    # 1e-7 % passes the option's own check (above 0) and is 0 B of a 100 MB drive: the refusal
    # came from inside a workload, "workload '': active range must be in (0, 1]"
    p = iolab(
        "run", "iops", "--quick", "--no-report", "-t", "sim:enterprise-sas?user_gb=0.1", "--active-range", "0.0000001%"
    )
    _check(p.returncode, p.stdout, p.stderr, place)
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "workload ''" not in said, said
    assert (
        "active range (--active-range): 1e-07% of sim:enterprise-sas?user_gb=0.1 (99,999,744 B) is less than one byte"
        in said
    ), said
    # 999 B, less than a block: "Raise --capacity-limit" named the one option that was no cause
    p = iolab("plan", "iops", "--quick", "-t", "sim:enterprise-sas?user_gb=0.1", "--active-range", "0.001%")
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "the tested capacity of 999 B is smaller than one 131,072 B block" in said, said
    assert "Test more of the target (its ?size=, --active-range, --capacity-limit) or a larger target." in said, said


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        # float() and int() read other scripts' digits ('٩٩' as 99) and put their own words in
        # the refusal ("could not convert string to float: 'abc'")
        ("percentile=٩٩", "--set percentile='٩٩' (test latency-bound): choose one of 99, 99.9, 99.99, 99.999."),
        ("percentile=abc", "--set percentile='abc' (test latency-bound): choose one of 99, 99.9, 99.99, 99.999."),
        ("read_pct=٥٠", "--set read_pct='٥٠' (test latency-bound): give a read percentage from 0 to 100."),
        ("read_pct=abc", "--set read_pct='abc' (test latency-bound): give a read percentage from 0 to 100."),
    ],
)
def test_a_percentage_parameter_is_read_in_ascii_and_refused_in_iolabs_words(setting, says, place, capsys, monkeypatch):
    monkeypatch.setattr(
        sys,
        "argv",
        ["iolab", "plan", "latency-bound", "--quick", "-t", "sim:enterprise-sas?user_gb=0.1", "--set", setting],
    )
    with pytest.raises(SystemExit) as e:
        cli.main()
    out, err = capsys.readouterr()
    _check(e.value.code, out, err, place)
    said = " ".join(err.split())
    assert e.value.code == 2 and says in said and "convert" not in said and "literal" not in said, said


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        # the parser said 1 to 2,147,483,647 and qd=2147483647 then failed as "workload ''"
        ("qd=0", "--set qd='0' (test qos): give a whole number from 1 to 65,536."),
        ("qd=2147483647", "--set qd='2147483647' (test qos): give a whole number from 1 to 65,536."),
        # 0 means "not given" and is taken: the refusal said "from 1"
        ("pe_cycles=-5", "give a whole number from 0 (not given) to 1,000,000."),
        ("warranty_years=-1", "give 0 (not given) or a number of years greater than 0 and at most 100."),
    ],
)
def test_a_tests_own_parameter_is_refused_with_the_limit_it_has(setting, says, place):
    p = iolab("plan", "qos", "--quick", "-t", "sim:enterprise-sas?user_gb=0.25", "--set", setting)
    _check(p.returncode, p.stdout, p.stderr, place)
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and says in said and "Nothing was run or written." in said, said
    for taken in ("qd=65536", "pe_cycles=0"):
        ok = iolab("plan", "qos", "--quick", "-t", "sim:enterprise-sas?user_gb=0.25", "--set", taken)
        assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize(
    ("test", "setting", "says"),
    [
        ("qos", "qd=bad", "give a whole number. Parameter qd: queue depth (one thread) (default 1"),
        ("latency-demand", "tolerance=bad", "give a percentage (2 or 2%). Parameter tolerance: a step falls short"),
    ],
)
def test_a_refused_setting_names_the_parameter_its_help_describes(test, setting, says):
    """The help, written to follow a parameter's name, followed the parser's full stop in lower case:
    "give a whole number. queue depth of the one thread (default 1)"."""
    p = iolab("run", test, "--quick", "-t", "sim:enterprise-sas?user_gb=0.25", "--set", setting)
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and says in said and "Traceback" not in said, said


@pytest.mark.parametrize(
    ("params", "says", "not_said"),
    [
        ("op=1e9", "sim parameter op=1000000000: the user capacity", "user_gb"),
        ("user_gb=1e12", "sim parameter user_gb=1000000000000: with over-provisioning", "blocks_per_plane"),
        # a huge value is said in exponent form, not as its 301 digits (and the flash it needs as many)
        (
            "user_gb=1e300",
            "user_gb=1e300: with over-provisioning 0.2801015808 it needs 1.2801e300 GB of flash",
            "000000",
        ),
        ("gc_reserve=1e300", "sim parameter gc_reserve=1e300 must be a whole number of FTL blocks from 2 to", "000000"),
        # the reserve's least is 2, not the 1 every count has ("a whole number of at least 1")
        ("gc_reserve=1.5", "sim parameter gc_reserve=1.5 must be a whole number of FTL blocks from 2 to", "at least 1"),
        # an op given as a percentage is judged as given, not called missing
        ("op=25%", 'sim parameter op="25%" is not a number: op is the spare flash over the user capacity', "give"),
        ("op=", "sim parameters: give user_gb or op", "not a number"),
        # a drive too small for the preset's flash says the smallest it takes (0.0072 GB is
        # taken: test_sim_capacity_the_refusal_offers_is_taken), not "lower user_gb"
        ("user_gb=0.001", "user_gb=0.001: too small for preset enterprise-sas", "lower user_gb"),
        # a user_gb that is no number is said so, not wrapped in "the flash sized for it is refused"
        ("user_gb=abc", 'sim parameter user_gb="abc" is not a number', "the flash sized"),
        # a negative seed is out of the seeds' range, not "not a whole number"
        ("seed=-1", "seed='-1' is not a seed; give a whole number from 0 to 4294967295", "is not a whole number"),
    ],
)
def test_a_sim_capacity_out_of_range_names_the_parameter_given(params, says, not_said, place):
    p = iolab("plan", "latency", "-t", f"sim:enterprise-sas?{params}")
    _check(p.returncode, p.stdout, p.stderr, place)
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and says in said and not_said not in said, said


def test_sim_capacity_the_refusal_offers_is_taken():
    p = iolab("plan", "latency", "-t", "sim:enterprise-sas?user_gb=0.001")
    said = " ".join(p.stderr.split())
    smallest = said.split("the smallest user_gb it takes here is ")[1].rstrip(".")
    assert p.returncode == 2 and float(smallest) > 0.001, said
    assert iolab("plan", "latency", "-t", f"sim:enterprise-sas?user_gb={smallest}").returncode == 0


def test_a_quick_copy_too_small_names_capacity_limit_and_the_smallest_it_takes(place):
    # the copy --capacity-limit sizes was refused as "sim parameter user_gb=1e-09 with op=...",
    # parameters the user never gave
    p = iolab(
        "run",
        "iops",
        "-t",
        "sim:enterprise-sas",
        "--capacity-limit",
        "1B",
        "--quick",
        "--runs-dir",
        str(place / "runs"),
    )
    _check(p.returncode, p.stdout, p.stderr, place)
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and said.startswith("iolab: --capacity-limit 1B makes too small a copy"), said
    assert "user_gb" not in said and "op=" not in said, said
    smallest = said.split("give --capacity-limit ")[1].split()[0]
    assert iolab("plan", "iops", "-t", "sim:enterprise-sas", "--capacity-limit", smallest, "--quick").returncode == 0


def test_a_quick_copy_of_a_disk_too_small_names_the_smallest_it_takes():
    # a disk's copy below one block was refused in the simulator's "sim parameter capacity_gb",
    # a parameter the user never gave, and with no size that works (an SSD's copy had one)
    p = iolab("plan", "iops", "-t", "sim:sas-15k-hdd", "--capacity-limit", "1B", "--quick")
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and said.startswith("iolab: --capacity-limit 1B makes too small a copy"), said
    assert "capacity_gb" not in said and "whole 4 KiB blocks" in said, said
    smallest = said.split("give --capacity-limit ")[1].split()[0]
    taken = iolab("plan", "iops", "-t", "sim:sas-15k-hdd", "--capacity-limit", smallest, "--quick")
    # the simulator takes that copy: what refuses it now is the test's own largest block, said as such
    again = " ".join(taken.stderr.split())
    assert taken.returncode == 2 and "copy" not in again and "smaller than one 131,072 B block" in again, again


def test_a_results_db_that_is_a_fifo_is_called_so(tmp_path):
    runs = tmp_path / "runs"
    p = iolab(
        "run", "latency", "--quick", "--no-report", "-t", "sim:enterprise-sas?user_gb=0.25", "--runs-dir", str(runs)
    )
    assert p.returncode == 0, p.stderr
    (run,) = runs.iterdir()
    for f in run.glob("results.db*"):
        f.unlink()
    os.mkfifo(run / "results.db")
    p = iolab("show", str(run), timeout=60)  # a reader that opened the FIFO would wait for ever
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "results.db: is a FIFO (named pipe), not a regular file" in said, said
    assert "no results.db" not in said


@pytest.mark.parametrize(
    ("test", "setting", "says"),
    [
        ("hir", "bursts=99999999", "give a whole number from 1 to 3,600"),
        ("hir", "pc_round_intervals=99999999", "give a whole number from 1 to 3,600"),
        ("hir", "baseline_time=24h", "is 86,400 cells of one phase; at most 3,600"),  # 24 h: the longest it takes
        ("latency-demand", "demand=1:1:2000000000", "2,000,000,000 values; at most 1,000"),
        ("latency-bound", "steps=1:1:2000000000", "2,000,000,000 values; at most 1,000"),
    ],
)
def test_a_count_no_test_can_mean_is_refused_before_the_plan_is_built(test, setting, says):
    """Before: each was accepted and built cell by cell (17.8 GB after 10 minutes for bursts, a
    MemoryError traceback for the ranges under a memory limit)."""
    p = iolab("plan", test, "--quick", "--set", setting, timeout=60)
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and says in said and "Nothing was run or written." in said, said


def test_a_block_size_no_drive_takes_is_named_in_whole_kib():
    """It was named 'RND 1.07374e+09KiB R'."""
    p = iolab("plan", "rw-matrix", "--quick", "--set", "sizes=1TiB")
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "'RND 1073741824KiB R'" in said and "e+" not in said, said


@pytest.mark.parametrize("demand", ["-5", "0", "0,5000"])
def test_a_demand_below_one_iops_is_told_one_range(demand):
    """-5 was told "at least 0" and 0 "at least 1"."""
    p = iolab("plan", "latency-demand", "--quick", "--set", f"demand={demand}")
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "give ascending, distinct whole numbers of at least 1." in said, said


def test_an_endurance_rating_given_as_option_and_as_set_names_both(tmp_path):
    # parse_settings named the --set alone ("--set pe_cycles: given twice"), which the user gave once
    p = iolab("run", "qos", "--set", "pe_cycles=5", "--pe-cycles", "3", "--runs-dir", str(tmp_path / "runs"))
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "--pe-cycles 3 and --set pe_cycles=5: the same parameter given twice" in err, err
