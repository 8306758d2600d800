"""The write policy through the `iolab` command: the simulator's save= file, exports, reports,
trace outputs and the runs directory never land on a device, a pseudo filesystem or someone's
file; file targets on /proc and /sys, and read-only files iolab made, are refused as root; a
loop device is refused when its backing file is open elsewhere or claimed by another run."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from iolab import targets
from iolab.core.errors import RefusedError
from iolab.targets import parse_target
from iolab.targets.files import iolab_mark

from .conftest import iolab, quick_sim_run
from .test_rwsw import msr_trace
from .test_safety import QUICK, _digest, _iolab_file, _running, _said, attached_loop

pytestmark = [
    pytest.mark.integration,
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"), reason="needs root and losetup"),
]

SIM = "sim:enterprise-sas?user_gb=4"
SIM_QUICK = ["--quick", "--max-rounds", "1", "--cell-time", "200ms", "--no-report"]


def _refused(p: subprocess.CompletedProcess, *words: str) -> str:
    said = _said(p)
    assert p.returncode == 3, said
    assert "Traceback" not in said
    for w in words:
        assert w in said, said
    return said


def _blkid(dev: str) -> str:
    return subprocess.run(
        ["blkid", "-p", "-o", "value", "-s", "TYPE", dev], capture_output=True, text=True
    ).stdout.strip()


def test_sim_save_to_a_loop_device_is_refused_and_its_filesystem_kept(scratch):
    runs = scratch / "runs"
    with attached_loop(scratch / "backing.img") as dev:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
        before = _digest(dev)
        p = iolab("run", "throughput", *SIM_QUICK, "-t", f"{SIM}&save={dev}", "--runs-dir", str(runs))
        # refused by the target's safety checks, before the drive's state is written anywhere (the
        # engine's save at its close said it before, after the refusal: a refused run saved its state)
        _refused(p, f"save=: {dev} is a block device", "not a regular file")
        assert _blkid(dev) == "ext4" and _digest(dev) == before
    assert not runs.exists()


def _fifo(scratch: Path) -> str:
    os.mkfifo(scratch / "fifo")
    return str(scratch / "fifo")


def _foreign(scratch: Path) -> str:
    (scratch / "notes.txt").write_text("someone's notes\n")
    return str(scratch / "notes.txt")


def _symlink_to_null(scratch: Path) -> str:
    (scratch / "state.bin").symlink_to("/dev/null")
    return str(scratch / "state.bin")


@pytest.mark.parametrize(
    "make, words",
    [
        (_foreign, "already exists and holds 16 B that iolab did not write"),
        (lambda s: "/proc/sys/vm/drop_caches", "is on a pseudo filesystem (proc at /proc)"),
        (lambda s: "/sys/kernel/iolab-state", "is on a pseudo filesystem (sysfs at /sys)"),
        (_fifo, "is a FIFO"),
        (_symlink_to_null, "(through a symlink to /dev/null)"),
    ],
)
def test_sim_save_refuses_paths_that_are_not_its_own(scratch, make, words):
    path = make(scratch)
    before = _digest(path) if os.path.isfile(path) and not path.startswith(("/proc", "/sys")) else None
    p = iolab("run", "iops", *SIM_QUICK, "-t", f"{SIM}&save={path}", "--runs-dir", str(scratch / "runs"))
    _refused(p, words)
    assert not (scratch / "runs").exists()
    if before is not None:
        assert _digest(path) == before


def test_sim_state_is_saved_and_saved_again_over_itself(scratch):
    state = scratch / "state.bin"
    for _ in range(2):  # the second run replaces the state the first one wrote
        p = iolab("run", "iops", *SIM_QUICK, "-t", f"{SIM}&save={state}", "--runs-dir", str(scratch / "runs"))
        assert p.returncode == 0, _said(p)
        assert state.read_bytes()[:8] == b"IOLABSIM"
    assert iolab_mark(str(state)) == "output"  # an output of iolab's, never a test's scratch file
    assert not list(scratch.glob(".state.bin.*"))  # no temporary file left beside it


@pytest.fixture
def sim_run(scratch) -> Path:
    runs = scratch / "runs"
    p = iolab("run", "iops", *SIM_QUICK, "-t", SIM, "--runs-dir", str(runs))
    assert p.returncode == 0, _said(p)
    [run] = list(runs.iterdir())
    return run


def test_export_and_report_write_only_their_own_files(scratch, sim_run):
    out = scratch / "out"
    out.mkdir()
    (out / "cells.csv").write_text("my spreadsheet\n")
    p = iolab("export", str(sim_run), "--out", str(out))
    _refused(p, f"{out}/cells.csv already exists and holds 15 B that iolab did not write", "Nothing was written")
    assert (out / "cells.csv").read_text() == "my spreadsheet\n" and sorted(os.listdir(out)) == ["cells.csv"]

    mine = scratch / "mine"
    for _ in range(2):  # iolab's own export is written again
        p = iolab("export", str(sim_run), "--out", str(mine))
        assert p.returncode == 0, _said(p)

    html = out / f"{sim_run.name}.html"
    html.write_text("<p>my page</p>")
    p = iolab("report", str(sim_run), "--out", str(out))
    _refused(p, f"report file '{html}'", "iolab did not write")
    assert html.read_text() == "<p>my page</p>"

    # a report an older iolab wrote into the run directory, without the mark, is the run's own
    older = sim_run / "report" / f"{sim_run.name}.html"
    older.parent.mkdir()
    older.write_text("<p>an older report</p>")
    p = iolab("report", str(sim_run))
    assert p.returncode == 0 and older.read_text() != "<p>an older report</p>", _said(p)

    p = iolab("export", str(sim_run), "--out", "/proc/iolab-export")
    _refused(p, "/proc/iolab-export is on a pseudo filesystem (proc at /proc)")


def test_an_export_leaves_a_file_under_the_name_it_once_wrote_aside_to(tmp_path):
    """An export wrote each table aside under a fixed name (.cells.csv.partial), removing first
    whatever held it: a file of the user's there was lost. It now writes aside under a fresh name
    nothing holds (writepolicy.output_files, as a report and a trace table do)."""
    run = quick_sim_run(tmp_path / "runs")
    out = tmp_path / "out"
    out.mkdir()
    theirs = out / ".cells.csv.partial"
    theirs.write_text("mine\n")
    p = iolab("export", str(run), "--out", str(out))
    assert p.returncode == 0, _said(p)
    assert theirs.read_text() == "mine\n"
    left = sorted(f.name for f in out.iterdir() if f.name.startswith("."))
    assert left == [".cells.csv.partial"], left  # nothing of the export's own is left aside


def test_an_export_into_a_run_directory_is_refused_and_the_run_kept(scratch, sim_run):
    # `iolab export RUN -f json -o RUN` replaced the run's power.json with the export's power
    # table (a list), and `iolab show RUN` then failed with a traceback; an export of another
    # run into it would replace its manifest.json with the other run's
    other = scratch / "other-run"
    shutil.copytree(sim_run, other)
    before = {f: (sim_run / f).read_bytes() for f in ("manifest.json", "power.json")}
    for src in (sim_run, other):
        p = iolab("export", str(src), "-f", "json", "--out", str(sim_run))
        _refused(p, f"{sim_run} is a run directory", "Nothing was written")
    assert {f: (sim_run / f).read_bytes() for f in before} == before
    assert not (sim_run / "cells.json").exists()
    shown = iolab("show", str(sim_run))
    assert shown.returncode == 0, _said(shown)
    # the export's own folder in the run is fine (any other folder in it is refused:
    # test_run_dir_writes.py)
    p = iolab("export", str(sim_run), "-f", "json", "--out", str(sim_run / "export"))
    assert p.returncode == 0 and (sim_run / "export" / "power.json").is_file(), _said(p)


def test_runs_dir_on_a_pseudo_filesystem_is_refused(scratch):
    p = iolab("run", "iops", *SIM_QUICK, "-t", SIM, "--runs-dir", "/sys/kernel/iolab-runs")
    _refused(p, "runs directory '/sys/kernel/iolab-runs'", "pseudo filesystem (sysfs at /sys)")
    assert not os.path.exists("/sys/kernel/iolab-runs")


def test_trace_outputs_are_refused_on_devices_and_foreign_files(scratch):
    msr_trace(scratch / "web.csv")
    foreign = _foreign(scratch)
    p = iolab("trace", "import", str(scratch / "web.csv"), "--format", "msr", "--out", foreign)
    _refused(p, f"IO table '{foreign}'", "iolab did not write")
    p = iolab("trace", "import", str(scratch / "web.csv"), "--format", "msr", "--out", str(scratch / "t.parquet"))
    assert p.returncode == 0, _said(p)
    with attached_loop(scratch / "backing.img") as dev:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
        before = _digest(dev)
        p = iolab("trace", "export", str(scratch / "t.parquet"), "--format", "msr", "--out", dev)
        _refused(p, f"trace file '{dev}'", "is a block device")
        assert _digest(dev) == before
    p = iolab("trace", "analyze", str(scratch / "t.parquet"), "--step", "1s", "--qd", "4", "--out", foreign)
    _refused(p, f"analysis directory '{foreign}'", "not a directory")
    assert Path(foreign).read_text() == "someone's notes\n"


def test_trace_import_and_export_refuse_a_missing_directory_as_every_file_output_does(scratch):
    """`trace import -o DIR/new/sub/t.parquet` made new/ and new/sub/ without a word (a typo in
    the path went unnoticed), where --junit and --html refuse a missing directory; `trace export`
    into one failed at the end naming its own temporary file (`No such file or directory:
    DIR/.x.csv.123-0.partial`)."""
    msr_trace(scratch / "web.csv")
    table = scratch / "new" / "sub" / "t.parquet"
    p = iolab("trace", "import", str(scratch / "web.csv"), "--format", "msr", "-o", str(table))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in said, said
    assert f"--out {table}: the directory {table.parent} does not exist, so the IO table cannot be written" in said
    assert not (scratch / "new").exists()
    table = scratch / "t.parquet"
    assert iolab("trace", "import", str(scratch / "web.csv"), "--format", "msr", "-o", str(table)).returncode == 0
    p = iolab("trace", "export", str(table), "--format", "disksim", "-o", str(scratch / "new" / "t.disksim"))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "the directory" in said and "so the trace file cannot be written" in said, said
    assert not (scratch / "new").exists()


# --- file targets -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/proc/sysrq-trigger", "/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/sys/kernel/profiling"],
)
def test_file_targets_on_pseudo_filesystems_fail_the_safety_check(path):
    # Checked without a run: on code that let them through, a run would write to the kernel.
    with pytest.raises(RefusedError, match="pseudo filesystem: .* is on (proc at /proc|sysfs at /sys)"):
        targets.check_safe_to_write(parse_target(f"file:{path}?size=1MiB"), allow_unsafe=True, allow_system_disk=True)


def test_a_run_on_a_proc_file_is_refused(scratch):
    p = iolab(
        "run",
        "iops",
        "-t",
        "file:/proc/self/comm?size=1MiB",
        *QUICK,
        "--allow-unsafe-target",
        "--runs-dir",
        str(scratch / "runs"),
    )
    _refused(p, "pseudo filesystem: /proc/self/comm is on proc at /proc", "Nothing overrides this")
    assert not (scratch / "runs").exists()


def test_a_read_only_file_iolab_made_is_refused_even_as_root(scratch):
    f = _iolab_file(scratch / "drive.img")
    os.chmod(f, 0o444)
    before = _digest(f)
    p = iolab("run", "iops", "-t", f"file:{f}", *QUICK, "--allow-unsafe-target", "--runs-dir", str(scratch / "runs"))
    _refused(p, f"read-only: {f} has mode 0444: no one may write it", "Nothing overrides this")
    assert _digest(f) == before and stat.S_IMODE(os.stat(f).st_mode) == 0o444
    assert not (scratch / "runs").exists()


# --- loop devices and their backing files -----------------------------------------------------


def test_a_loop_device_whose_backing_file_is_open_elsewhere_is_refused(scratch):
    image = scratch / "vm.img"
    with attached_loop(image) as dev:
        with open(image, "r+b") as rw:
            vm = subprocess.Popen(["sleep", "600"], stdout=rw)  # a VM holding its disk image read-write
        try:
            before = _digest(str(image))
            p = iolab("run", "iops", "-t", dev, *QUICK, "--runs-dir", str(scratch / "runs"))
            _refused(p, f"backing file open: {dev} is backed by {image}, which is open by pid {vm.pid} (sleep)")
            assert _digest(str(image)) == before and not (scratch / "runs").exists()
        finally:
            vm.kill()
            vm.wait()


def test_two_loop_devices_over_one_file_are_one_target(scratch):
    image = scratch / "shared.img"
    with attached_loop(image, size=128 << 20) as first, attached_loop(image, size=None) as second:
        proc, _, first_id = _running(first, scratch / "runs1", "--max-rounds", "10")
        try:
            p = iolab("run", "iops", "-t", second, *QUICK, "--runs-dir", str(scratch / "runs2"))
            _refused(p, f"backing file {image}", f"iolab run {first_id} (pid {proc.pid}")
            assert not (scratch / "runs2").exists()
            p = iolab(
                "run",
                "iops",
                "-t",
                f"file:{image}",
                *QUICK,
                "--allow-unsafe-target",
                "--runs-dir",
                str(scratch / "runs2"),
            )
            _refused(p, f"iolab run {first_id} (pid {proc.pid}")
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            assert proc.wait(timeout=60) == 130
