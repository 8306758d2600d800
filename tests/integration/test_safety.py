"""Safety checks and device facts on real loop devices (root, util-linux, e2fsprogs), and the
refusal matrix through the `iolab` command: concurrent runs on one target, loop-backed and
filesystem-bearing files, read-only and mounted devices, an unknown target kind."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iolab import suites, targets
from iolab.api import registry
from iolab.api.runlist import list_runs
from iolab.core.errors import IolabError, RefusedError
from iolab.run.runstart import RunOptions, start
from iolab.store.runstore import RunStore
from iolab.targets import Target, parse_target

from .conftest import IOLAB, default_signals, iolab, read_direct

pytestmark = [
    pytest.mark.integration,
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"), reason="needs root and losetup"),
]


@contextlib.contextmanager
def attached_loop(backing: Path, size: int | None = 64 << 20, sector_size: int | None = None, read_only: bool = False):
    """A loop device over a fresh sparse file (size=None: over the file as it is), always
    detached afterwards (partitions too). conftest's loop_device has one fixed size and sector
    size; these tests vary both."""
    if size is not None:
        with open(backing, "wb") as f:
            f.truncate(size)
    argv = ["losetup", "-f", "--show", "--direct-io=on"] + (["--read-only"] if read_only else [])
    if sector_size:
        argv += ["--sector-size", str(sector_size)]
    dev = subprocess.run(argv + [str(backing)], check=True, capture_output=True, text=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["partx", "-d", dev], capture_output=True)
        subprocess.run(["losetup", "-d", dev], capture_output=True)


@pytest.fixture
def loop(scratch):
    with attached_loop(scratch / "backing.img") as dev:
        yield dev


def _refusal(dev: str, named: bool = True) -> str:
    """The refusal of `dev`; `named`: whether it names --allow-unsafe-target (never the
    system-disk override)."""
    with pytest.raises(RefusedError) as e:
        targets.check_safe_to_write(parse_target(dev), False)
    msg = str(e.value)
    assert (f"Pass --allow-unsafe-target to override (this destroys data on {dev})" in msg) is named
    assert "--allow-system-disk" not in msg
    assert "\n" not in msg
    return msg


def test_clean_loop_device_is_accepted(loop):
    assert targets.check_safe_to_write(parse_target(loop), False) == []


def test_mounted_device_is_refused_naming_the_mount_point(loop, scratch):
    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True, capture_output=True)
    mnt = scratch / "mnt point"  # a space: mountinfo escapes it, the message must not
    mnt.mkdir()
    subprocess.run(["mount", loop, str(mnt)], check=True, capture_output=True)
    try:
        msg = _refusal(loop, named=False)
        assert f"mounted: {loop} is mounted at {mnt}" in msg
        assert "signature" in msg and "ext4" in msg
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_unmounted_filesystem_signature_is_refused(loop):
    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True, capture_output=True)
    msg = _refusal(loop)
    assert f"signature: {loop} carries ext4 (filesystem) (found by blkid -p)" in msg
    assert "mounted" not in msg


def test_plan_refuses_a_device_holding_a_filesystem_as_run_does_and_writes_nothing(loop, scratch):
    """`iolab plan` described a run (exit 0, "purge auto") on a device that `iolab run` refuses."""
    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True, capture_output=True)
    before = hashlib.sha256(Path(loop).read_bytes()).hexdigest()
    runs = scratch / "runs"
    p = iolab("plan", "iops", "--quick", "-t", loop, "--runs-dir", str(runs))
    r = iolab("run", "iops", "--quick", "-t", loop, "--runs-dir", str(runs), "--no-report")
    assert p.returncode == r.returncode == 3, p.stdout + p.stderr + r.stderr
    assert f"signature: {loop} carries ext4" in " ".join(p.stderr.split()) and p.stderr == r.stderr
    assert hashlib.sha256(Path(loop).read_bytes()).hexdigest() == before and not runs.exists()
    # with the override the plan is described, still without writing or claiming anything
    p = iolab("plan", "iops", "--quick", "-t", loop, "--runs-dir", str(runs), "--allow-unsafe-target")
    assert p.returncode == 0 and "purge" in p.stdout, p.stderr
    assert hashlib.sha256(Path(loop).read_bytes()).hexdigest() == before and not runs.exists()
    targets.claim(parse_target(loop)).release()  # plan left no claim behind


def test_partition_table_is_refused(loop):
    # One-partition MBR, written by hand so the test needs no fdisk. The test kernel may parse
    # no partition tables at all, so the partition is also registered with partx.
    mbr = bytearray(512)
    mbr[446:462] = struct.pack("<B3sB3sII", 0, bytes(3), 0x83, bytes(3), 2048, 65536)
    mbr[510:512] = b"\x55\xaa"
    with open(loop, "r+b") as f:
        f.write(mbr)
    name = os.path.basename(loop)
    if not Path(f"/sys/class/block/{name}p1").exists():
        subprocess.run(["partx", "-a", loop], check=True, capture_output=True)
    msg = _refusal(loop)
    assert f"partitions: {loop} holds partitions {name}p1" in msg
    assert "dos (partition table)" in msg


def test_device_held_open_by_another_process_is_refused_naming_it(loop):
    with open(loop, "rb") as dev:
        holder = subprocess.Popen(["sleep", "300"], stdin=dev)
    try:
        msg = _refusal(loop)
        assert f"open: open by pid {holder.pid} (sleep)" in msg
    finally:
        holder.kill()
        holder.wait()
    # Our own open file descriptors are not a reason to refuse.
    with open(loop, "rb"):
        assert targets.check_safe_to_write(parse_target(loop), False) == []


def test_active_swap_is_refused(loop):
    subprocess.run(["mkswap", loop], check=True, capture_output=True)
    if subprocess.run(["swapon", loop], capture_output=True).returncode != 0:
        pytest.skip("swapon not permitted here")
    try:
        msg = _refusal(loop, named=False)
        assert f"{loop} is active swap" in msg
    finally:
        subprocess.run(["swapoff", loop], check=True)


def test_override_accepts_and_lists_the_failed_checks(loop):
    subprocess.run(["mkfs.ext4", "-q", "-F", loop], check=True, capture_output=True)
    with open(loop, "rb") as dev:
        holder = subprocess.Popen(["sleep", "300"], stdin=dev)
    try:
        overridden = targets.check_safe_to_write(parse_target(loop), True)
    finally:
        holder.kill()
        holder.wait()
    assert [o.split(":")[0] for o in overridden] == ["signature", "open"]
    assert all(o.endswith("(overridden by --allow-unsafe-target)") for o in overridden)
    assert f"pid {holder.pid} (sleep)" in overridden[1]


def test_system_disk_is_refused():
    st = os.stat("/")
    link = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if not link.exists():
        pytest.skip("/ is not on a block device here (overlay, tmpfs)")
    dev = f"/dev/{link.resolve().name}"
    if not os.path.exists(dev):
        pytest.skip(f"{dev} has no device node here")
    msg = _refusal(dev, named=False)  # read-only: the check only inspects
    assert "system disk: / lives on" in msg
    with pytest.raises(RefusedError, match="system disk: / lives on"):  # the other override does not reach it
        targets.check_safe_to_write(parse_target(dev), allow_unsafe=True)


@pytest.mark.parametrize("sector_size", [512, 4096])
def test_loop_device_facts(scratch, sector_size):
    with attached_loop(scratch / "b.img", 48 << 20, sector_size) as dev:
        t = parse_target(dev)
        f = t.facts
        name = os.path.basename(dev)
        assert t.kind == "block" and t.path == dev
        assert t.capacity == f.capacity_bytes == 48 << 20
        assert f.interface == "loop"
        assert f.logical_sector == sector_size
        assert f.physical_sector == int(Path(f"/sys/block/{name}/queue/physical_block_size").read_text())
        assert f.physical_sector >= f.logical_sector
        # the kernel flags a loop device rotational whatever backs it: the flag says nothing of the media
        assert f.rotational is None
        assert f.sources == ("sysfs",)


def test_zero_size_device_is_refused_with_a_clear_error(scratch):
    # A loop device over an empty file reports 0 bytes, as an unattached one does; attaching
    # our own keeps other users of loop devices on this machine out of the test.
    with (
        attached_loop(scratch / "empty.img", size=0) as dev,
        pytest.raises(IolabError, match=f"{dev} reports a size of 0 bytes"),
    ):
        parse_target(dev)


@pytest.mark.skipif(not (shutil.which("nbdkit") and shutil.which("nbdinfo")), reason="needs nbdkit and nbdinfo")
def test_nbd_export_size_is_asked_from_the_server(tmp_path):
    with nbd_export(tmp_path, "memory", "48M") as spec:
        t = parse_target(spec)
        assert (t.kind, t.capacity, t.facts.sources) == ("nbd", 48 << 20, ("nbdinfo",))
        assert targets.check_safe_to_write(t, False) == []  # the export's owner decides what it serves


@contextlib.contextmanager
def nbd_export(where: Path, *plugin: str):
    """An nbdkit export on a Unix socket (its spec), stopped afterwards."""
    if not shutil.which("nbdkit"):
        pytest.skip("needs nbdkit")
    sock = where / "nbd.sock"
    server = subprocess.Popen(["nbdkit", "--foreground", "--unix", str(sock), *plugin])
    try:
        for _ in range(200):
            if sock.exists():
                break
            time.sleep(0.05)
        yield f"nbd+unix:///?socket={sock}"
    finally:
        server.terminate()
        server.wait()


# --- the refusal matrix, through the command -----------------------------------------------------

QUICK = ["--quick", "--cell-time", "200ms", "--max-rounds", "1", "--no-report", "--capacity-limit", "32MiB"]
MiB = 1 << 20
PATTERN = bytes(range(256)) * (MiB // 256)


def _said(p: subprocess.CompletedProcess) -> str:
    """What the command printed, with Rich's line wrapping undone."""
    return " ".join((p.stdout + p.stderr).split())


def _digest(path: str | None) -> str | None:
    if path is None:
        return None
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MiB), b""):
            h.update(block)
    return h.hexdigest()


def _iolab_file(path: Path, size: int = 64 * MiB) -> str:
    """A file iolab made (marked as its own), as a finished run leaves it."""
    t = parse_target(f"file:{path}?size={size}")
    targets.prepare_file(t)
    return str(path)


@contextlib.contextmanager
def _mounted(dev: str, scratch: Path):
    subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
    mnt = scratch / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", dev, str(mnt)], check=True, capture_output=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


@contextlib.contextmanager
def _case(name: str, scratch: Path):
    """(target spec, file whose bytes must not change or None, words the refusal says, whether
    it names --allow-unsafe-target)."""
    if name == "read-only loop":
        with attached_loop(scratch / "backing.img", read_only=True) as dev:
            yield dev, str(scratch / "backing.img"), ["read-only:", "Nothing overrides this"], False
    elif name == "file on a read-only filesystem":
        f = _iolab_file(scratch / "drive.img")
        ro = scratch / "ro"
        ro.mkdir()
        subprocess.run(["mount", "--bind", "-o", "ro", str(scratch), str(ro)], check=True, capture_output=True)
        try:
            words = [f"read-only: {ro}/drive.img cannot be written (a read-only filesystem)"]
            yield f"file:{ro}/drive.img", f, words, False
        finally:
            subprocess.run(["umount", str(ro)], check=True)
    elif name == "mounted loop":
        with attached_loop(scratch / "backing.img") as dev, _mounted(dev, scratch) as mnt:
            yield dev, None, [f"mounted: {dev} is mounted at {mnt}", "unmount it"], False
    elif name == "loop-backed file":
        f = _iolab_file(scratch / "drive.img")
        with attached_loop(Path(f), size=None) as dev:
            yield f"file:{f}", f, [f"loop backing: {f} backs {dev}"], True
    elif name == "filesystem in a file iolab made":
        f = _iolab_file(scratch / "drive.img")
        subprocess.run(["mkfs.ext4", "-q", "-F", f], check=True, capture_output=True)
        yield f"file:{f}", f, [f"signature: {f} carries ext4 (filesystem)"], True
    elif name == "loop-mounted file iolab made":  # the reported case: it was overwritten
        f = _iolab_file(scratch / "drive.img")
        with attached_loop(Path(f), size=None) as dev, _mounted(dev, scratch) as mnt:
            yield (
                f"file:{f}",
                None,
                [
                    f"loop backing: {f} backs {dev}",
                    f"mounted: {f} backs {dev}: {dev} is mounted at {mnt}",
                    "signature:",
                ],
                False,
            )
    elif name == "read-only NBD export":
        with nbd_export(scratch, "-r", "memory", "64M") as spec:
            yield spec, None, ["read-only: the NBD server exports", "read-only (nbdinfo --can write)"], False
    else:
        raise AssertionError(name)


@pytest.mark.parametrize(
    "name",
    [
        "read-only loop",
        "file on a read-only filesystem",
        "mounted loop",
        "loop-backed file",
        "filesystem in a file iolab made",
        "loop-mounted file iolab made",
        "read-only NBD export",
    ],
)
def test_refusal_matrix(scratch, name):
    runs = scratch / "runs"
    with _case(name, scratch) as (spec, data, words, named):
        before = _digest(data)
        p = iolab("run", "iops", "--target", spec, *QUICK, "--runs-dir", str(runs))
        said = _said(p)
        assert p.returncode == 3, said
        for w in words:
            assert w in said
        # The system-disk override is never suggested; the other only where it would do.
        assert ("--allow-unsafe-target" in said) is named
        assert "--allow-system-disk" not in said and "Traceback" not in said
        assert not runs.exists(), "a refused run must leave no run directory behind"
        assert _digest(data) == before


def test_mounted_device_is_not_reached_by_the_unsafe_override(scratch):
    with attached_loop(scratch / "backing.img") as dev, _mounted(dev, scratch):
        p = iolab("run", "iops", "--target", dev, *QUICK, "--allow-unsafe-target", "--runs-dir", str(scratch / "runs"))
        said = _said(p)
        assert p.returncode == 3 and "mounted:" in said and "--allow" not in said, said
        assert not (scratch / "runs").exists()


def test_overrides_are_printed_and_stored(scratch):
    # Our own loop device with its filesystem mounted read-only: both overrides let iolab go
    # on, and it says so on the console and in the manifest. (fio itself then still refuses
    # to write to a mounted device; that is fio's own check, see the report.)
    with attached_loop(scratch / "backing.img") as dev, contextlib.ExitStack() as stack:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
        mnt = scratch / "mnt"
        mnt.mkdir()
        subprocess.run(["mount", "-o", "ro", dev, str(mnt)], check=True, capture_output=True)
        stack.callback(subprocess.run, ["umount", str(mnt)], check=True)
        p = iolab(
            "run",
            "iops",
            "--target",
            dev,
            *QUICK,
            "--purge",
            "none",
            "--allow-unsafe-target",
            "--allow-system-disk",
            "--runs-dir",
            str(scratch / "runs"),
        )
    said = _said(p)
    assert f"safety check overridden: mounted: {dev} is mounted at {mnt} (overridden by --allow-system-disk)" in said
    assert f"safety check overridden: signature: {dev} carries ext4" in said
    [r] = list_runs(scratch / "runs")
    stored = RunStore.open(r.path).manifest.safety_overrides
    assert [o.split(":")[0] for o in stored] == ["mounted", "signature"]
    assert stored[0].endswith("(overridden by --allow-system-disk)")
    assert stored[1].endswith("(overridden by --allow-unsafe-target)")


def test_unknown_target_kind_is_refused_before_the_run_directory_exists(scratch):
    tape = Target("tape", "tape:/dev/st0", "/dev/st0", 1 << 30)
    plan = registry.build_plan("iops", suites.make_profile("enterprise", quick=True), tape)

    class NoEngine:
        def version(self):
            return "none"

    with pytest.raises(RefusedError, match="its kind 'tape' is not a registered target kind"):
        start(plan, tape, NoEngine(), RunOptions(allow_unsafe=True, allow_system_disk=True), scratch / "runs")
    assert not (scratch / "runs").exists()


# --- two runs on one target -----------------------------------------------------------------------


def _write(path: str, offset: int, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY)  # a plain open: the run's O_EXCL does not stop it, as it does not stop fio
    try:
        os.pwrite(fd, data, offset)
        os.fsync(fd)
    finally:
        os.close(fd)


def _stopped(proc: subprocess.Popen) -> int:
    """The exit status of a run stopped by SIGINT, its stderr pipe read meanwhile (a full pipe
    would block its last words and hold it up), with stderr shown if it outlives 120 s."""
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        raise AssertionError(f"the run did not stop within 120 s of SIGINT; it said: {err[-2000:]}") from None
    return proc.returncode


def _running(spec: str, runs: Path, *extra: str, stdout=subprocess.DEVNULL) -> tuple[subprocess.Popen, Path, str]:
    """Start a quick IOPS run in the background and wait until it has stored a cell."""
    proc = subprocess.Popen(
        [*IOLAB, "run", "iops", "--target", spec, *QUICK, *extra, "--runs-dir", str(runs)],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=dict(os.environ, COLUMNS="200"),
        preexec_fn=default_signals,  # stopped with SIGINT below
    )
    try:
        deadline = time.time() + 300
        while time.time() < deadline:
            assert proc.poll() is None, proc.stderr.read()
            rs = list_runs(runs) if runs.exists() else []
            try:
                if rs and RunStore.open(rs[0].path).cells(complete_only=False):
                    return proc, rs[0].path, rs[0].run_id
            except IolabError:
                pass  # the run directory is still being set up
            time.sleep(0.2)
        raise AssertionError("the first run stored no cell in 300 s")
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)  # never leave a run behind
        proc.wait()
        raise


@contextlib.contextmanager
def _shared_target(kind: str, scratch: Path):
    """(spec, path whose bytes a second run's purge would erase or None)."""
    if kind == "loop device":
        with attached_loop(scratch / "backing.img", size=128 * MiB) as dev:
            yield dev, dev
    elif kind == "file":
        yield f"file:{scratch}/drive.img?size=128MiB", str(scratch / "drive.img")
    else:
        with nbd_export(scratch, "memory", "128M") as spec:
            yield spec, None


@pytest.mark.parametrize("kind", ["loop device", "file", "nbd export"])
def test_a_second_run_on_a_busy_target_is_refused_naming_the_first(scratch, kind):
    with _shared_target(kind, scratch) as (spec, data):
        proc, first_dir, first_id = _running(spec, scratch / "runs1", "--max-rounds", "10")  # outlasts the test
        try:
            if data is not None:
                # Outside the first run's 32 MiB and written after its purge: only a second
                # run's purge (blkdiscard, hole punching) would erase it.
                _write(data, 100 * MiB, PATTERN)
            for _ in range(3):  # whether fio is running or between cells
                p = iolab("run", "iops", "--target", spec, *QUICK, "--runs-dir", str(scratch / "runs2"))
                said = _said(p)
                assert p.returncode == 3, said
                assert f"iolab run {first_id} (pid {proc.pid}" in said and "Traceback" not in said
                time.sleep(0.5)
            assert not (scratch / "runs2").exists()
            if data is not None:
                assert read_direct(data, 100 * MiB, MiB) == PATTERN
            if kind == "loop device":  # the kernel keeps mkfs (and mount) out meanwhile too
                mkfs = subprocess.run(["mkfs.ext4", "-q", "-F", spec], capture_output=True, text=True)
                assert mkfs.returncode != 0 and "in use" in mkfs.stderr
            assert proc.poll() is None  # the first run is still going
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            assert _stopped(proc) == 130
        first = RunStore.open(first_dir).manifest
        assert first.state == "interrupted" and len(first.purges) == 1  # its own purge only
        # ... which worked under its own claim (blkdiscard -f opens without O_EXCL); NBD has none.
        assert first.purges[0]["ok"] is (kind != "nbd export"), first.purges[0]["detail"]
        targets.claim(parse_target(spec)).release()  # an interrupted run gives the target back


def test_a_loop_device_over_a_busy_file_target_is_refused(scratch):
    spec, path = f"file:{scratch}/drive.img?size=128MiB", scratch / "drive.img"
    proc, _, first_id = _running(spec, scratch / "runs1", "--max-rounds", "10")
    try:
        with attached_loop(path, size=None) as dev:
            p = iolab("run", "iops", "--target", dev, *QUICK, "--runs-dir", str(scratch / "runs2"))
            said = _said(p)
            assert p.returncode == 3, said
            # the loop device claims its backing file as the file target's run did
            assert f"'{dev} (backing file {path})'" in said and f"iolab run {first_id} (pid {proc.pid}" in said
            assert not (scratch / "runs2").exists()
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        assert _stopped(proc) == 130


def test_fio_writes_to_a_device_the_run_holds_exclusively(scratch):
    """The claim's O_EXCL open keeps other exclusive openers out but not fio's plain open."""
    if not shutil.which("fio"):
        pytest.skip("needs fio")
    with attached_loop(scratch / "backing.img") as dev:
        t = parse_target(dev)
        claim = targets.claim(t)
        try:
            assert claim.exclusive
            fio = subprocess.run(
                [
                    "fio",
                    "--name=w",
                    f"--filename={dev}",
                    "--rw=randwrite",
                    "--bs=4k",
                    "--size=4M",
                    "--direct=1",
                    "--ioengine=psync",
                    "--output-format=json",
                ],
                capture_output=True,
                text=True,
            )
            assert fio.returncode == 0, fio.stderr
            assert '"error" : 0' in fio.stdout
            other = subprocess.run(
                [sys.executable, "-c", f"import os; os.open({dev!r}, os.O_RDONLY | os.O_EXCL)"],
                capture_output=True,
                text=True,
            )
            assert other.returncode != 0 and "Device or resource busy" in other.stderr
        finally:
            claim.release()
        assert (
            subprocess.run([sys.executable, "-c", f"import os; os.open({dev!r}, os.O_RDONLY | os.O_EXCL)"]).returncode
            == 0
        )
