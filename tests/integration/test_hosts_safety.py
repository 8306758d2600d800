"""Safety of hosts runs (--hosts, --hosts-file) as users run them: a host of this machine gets
a local run's checks and lock, an ssh host's target is checked there, a host reached through
fio alone is refused unless the user answers for it; the fio servers iolab starts bind where
told and die with it, and a server an earlier iolab left behind is listed and stopped."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from iolab.engines.hosts import answers
from iolab.store.runstore import RunStore

from .conftest import IOLAB, iolab
from .sshd import available, ssh_host

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (loop devices, sshd)")
QUICK = ("--quick", "--cell-time", "200ms", "--max-rounds", "1", "--no-report", "--purge", "none")


def _port() -> int:
    """A port nothing on this machine listens on: a fixed one is taken when this file runs from
    two checkouts at once, and a refused run would look as if it had started a server there."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sha(path: Path, n: int = 1 << 20) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read(n)).hexdigest()


def _fio_servers_on(port: int) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(a.startswith(b"--server=") and a.endswith(b",%d" % port) for a in cmd):
            found.append(int(pid))
    return found


def _gone(port: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _fio_servers_on(port) and not answers("127.0.0.1", port, timeout=0.2):
            return True
        time.sleep(0.1)
    return False


def _pid_gone(pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def _foreign(path: Path) -> str:
    path.write_bytes(os.urandom(1 << 20))  # someone's data: no iolab mark
    return _sha(path)


def test_a_host_of_this_machine_gets_the_local_checks(scratch):
    port = _port()
    before = _foreign(scratch / "photos.img")
    for address in ("127.0.0.1", "127.0.0.2", "localhost"):  # any address of this machine, not a spelling
        r = iolab(
            "run",
            "latency",
            *QUICK,
            "--target",
            f"file:{scratch}/photos.img?size=1MiB",
            "--hosts",
            f"{address}:{port}",
            "--runs-dir",
            str(scratch / "runs"),
            timeout=120,
        )
        assert r.returncode != 0, r.stdout
        err = " ".join(r.stderr.split())
        assert "not created by iolab" in err and "--allow-unsafe-target" in err and "Traceback" not in err, err
    assert _sha(scratch / "photos.img") == before
    assert not (scratch / "runs").exists() and _gone(port, 1)  # refused before any server or run directory


def test_a_host_of_this_machine_gets_the_local_lock(scratch):
    from iolab import targets

    port = _port()
    spec = f"file:{scratch}/t.img?size=16MiB"
    held = targets.claim(targets.parse_target(spec))  # another run holds the file
    try:
        r = iolab(
            "run",
            "latency",
            *QUICK,
            "--target",
            spec,
            "--hosts",
            f"127.0.0.1:{port}",
            "--runs-dir",
            str(scratch / "runs"),
            timeout=120,
        )
    finally:
        held.release()
    assert r.returncode != 0 and "Two runs on one target destroy each other's data" in " ".join(r.stderr.split()), (
        r.stderr
    )
    assert not (scratch / "t.img").exists()
    # and once free, the host run creates it marked as iolab's, so the next run may use it again
    for _ in range(2):
        r = iolab(
            "run",
            "latency",
            *QUICK,
            "--target",
            spec,
            "--hosts",
            f"127.0.0.1:{port}",
            "--runs-dir",
            str(scratch / "runs"),
            timeout=180,
        )
        assert r.returncode == 0, r.stdout + r.stderr
    assert _gone(port)


@pytest.fixture
def partitioned(loop_device):
    """The loop device with a DOS partition table (one Linux partition): someone's disk."""
    entry = bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + (2048).to_bytes(4, "little") + (65536).to_bytes(4, "little")
    with open(loop_device, "r+b") as f:
        f.seek(446)
        f.write(entry + bytes(48) + b"\x55\xaa")
    return loop_device


def _odd_spellings(scratch: Path, dev: str) -> list[str]:
    link = scratch / "disk-link"
    link.symlink_to(dev)
    return ["/" + dev, str(link)]  # "//dev/loopN" and a symlink outside /dev


def test_a_device_spelt_oddly_on_this_machine_is_checked_as_the_device(scratch, partitioned):
    port = _port()
    before = _sha(Path(partitioned))
    for spelt in _odd_spellings(scratch, partitioned):
        f = scratch / "hosts.toml"
        f.write_text(f'[[host]]\naddress = "127.0.0.1"\nport = {port}\ntarget = "{spelt}"\n')
        r = iolab(
            "run",
            "latency",
            *QUICK,
            "--target",
            f"file:{scratch}/x.img?size=16MiB",
            "--hosts-file",
            str(f),
            "--runs-dir",
            str(scratch / "runs"),
            timeout=120,
        )
        assert r.returncode != 0, r.stdout
        err = " ".join(r.stderr.split())
        assert f"Refusing to write to target '{partitioned}'" in err and "(partition table)" in err, err
    assert _sha(Path(partitioned)) == before


def _refused_hosts_run(scratch: Path, hosts: str) -> str:
    """A quick run over `hosts`, which must be refused: what it said, on one line."""
    r = iolab(
        "run",
        "latency",
        *QUICK,
        "--target",
        f"file:{scratch}/x.img?size=16MiB",
        "--hosts",
        hosts,
        "--runs-dir",
        str(scratch / "runs"),
        timeout=120,
    )
    err = " ".join(r.stderr.split())
    assert r.returncode != 0 and "Traceback" not in err, err
    return err


def test_a_host_reached_through_fio_alone_is_refused_unless_the_user_answers_for_it(scratch):
    err = _refused_hosts_run(scratch, "198.51.100.7:19399")
    assert "iolab cannot check a target on a host it reaches through fio's server only" in err, err
    assert '`ssh = "user@host"`' in err and "--allow-unsafe-target" in err


def test_a_wildcard_address_is_refused_without_listen_any(scratch):
    port = _port()
    for wild in ("0.0.0.0", "[::]"):
        err = _refused_hosts_run(scratch, f"{wild}:{port}")
        assert "means every interface" in err and "--listen-any" in err, err
        assert _gone(port, 1) and not (scratch / "x.img").exists()


def test_two_names_for_one_fio_server_are_refused(scratch):
    # --hosts 127.0.0.1,localhost ran, "split over 2 hosts", both shares sent to the one server
    # iolab started on 127.0.0.1, and the per-host page showed two hosts
    port = _port()
    err = _refused_hosts_run(scratch, f"127.0.0.1:{port},localhost:{port}")
    assert f"hosts 127.0.0.1:{port} and localhost:{port} are one fio server (127.0.0.1 port {port})" in err, err
    assert _gone(port, 1) and not (scratch / "x.img").exists() and not (scratch / "runs").exists()


def _kill_when_measuring(proc: subprocess.Popen, runs: Path, meanwhile=lambda: None) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None and not any(runs.glob("*/raw/*-r01-c01-*.p0.fio")):
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before the kill point"
    meanwhile()
    assert proc.poll() is None, "the run ended before the kill point"
    proc.kill()
    proc.wait()


def test_kill_9_of_a_hosts_run_takes_its_server_down_and_resume_leaves_none(scratch):
    port = _port()
    runs = scratch / "runs"
    proc = subprocess.Popen(
        [
            *IOLAB,
            "run",
            "throughput",
            "--quick",
            "--cell-time",
            "1s",
            "--max-rounds",
            "2",
            "--no-report",
            "--purge",
            "none",
            "--target",
            f"file:{scratch}/t.img?size=16MiB",
            "--hosts",
            f"127.0.0.1:{port}",
            "--runs-dir",
            str(runs),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _kill_when_measuring(proc, runs)
    assert _gone(port), f"fio server still up after kill -9 of iolab: {_fio_servers_on(port)}"
    [run] = list(runs.iterdir())
    r = iolab("resume", str(run), "--no-report", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert RunStore.open(run).manifest.state == "complete" and _gone(port)


def test_a_server_an_earlier_iolab_left_is_listed_and_stopped_by_the_next_run(scratch, monkeypatch):
    from iolab.engines.serverpids import servers_dir

    # pid files of its own: any iolab hosts run of this machine stops every leftover server it finds
    monkeypatch.setenv("IOLAB_LOCK_DIR", str(scratch / "locks"))
    port = _port()
    pidfile = scratch / "left.pid"
    subprocess.run(["fio", f"--server=127.0.0.1,{port}", f"--daemonize={pidfile}"], check=True, timeout=30)
    deadline = time.monotonic() + 10
    while not answers("127.0.0.1", port, timeout=0.2) and time.monotonic() < deadline:
        time.sleep(0.1)
    pid = int(pidfile.read_text())
    owner = subprocess.Popen(["true"])
    owner.wait()  # an iolab that died without stopping its server
    start = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    record = servers_dir() / f"fio-server-{pid}.json"
    record.write_text(
        json.dumps(
            {
                "pid": pid,
                "start": start,
                "boot": boot,
                "address": "127.0.0.1",
                "port": port,
                "owner": owner.pid,
                "owner_start": None,
                "run_dir": str(scratch / "runs" / "old"),
            }
        )
    )
    try:
        (scratch / "runs").mkdir(exist_ok=True)  # a missing runs directory is an error of its own
        listed = iolab("runs", "--runs-dir", str(scratch / "runs"), timeout=60)
        assert listed.returncode == 0
        said = " ".join(listed.stderr.split())
        assert f"leftover fio server: pid {pid} listening on 127.0.0.1:{port}" in said and "old" in said, said
        assert record.exists() and answers("127.0.0.1", port)  # `iolab runs` only reads
        r = iolab(
            "run",
            "latency",
            *QUICK,
            "--target",
            f"file:{scratch}/t.img?size=16MiB",
            "--hosts",
            f"127.0.0.1:{port}",
            "--runs-dir",
            str(scratch / "runs"),
            timeout=180,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        notes = " ".join(RunStore.open(next(p for p in (scratch / "runs").iterdir())).manifest.notes)
        assert f"stopped a fio server left running by an earlier iolab (pid {pid}" in notes, notes
        assert not record.exists() and _gone(port)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        record.unlink(missing_ok=True)


@pytest.mark.skipif(not available(), reason="needs sshd and ssh")
def test_an_ssh_hosts_target_is_checked_there(scratch, partitioned):
    port = _port()
    before = _foreign(scratch / "photos.img")
    dev_before = _sha(Path(partitioned))
    with ssh_host() as host:
        for target, said in (
            (scratch / "photos.img", "not created by iolab"),
            *((t, "partition table dos") for t in _odd_spellings(scratch, partitioned)),
        ):
            f = scratch / "hosts.toml"
            f.write_text(
                f'[[host]]\naddress = "127.0.0.1"\nport = {port}\nssh = "{host.dest}"\n'
                f'ssh_config = "{host.config}"\ntarget = "{target}"\n'
            )
            r = iolab(
                "run",
                "latency",
                *QUICK,
                "--target",
                f"file:{scratch}/local.img?size=16MiB",
                "--hosts-file",
                str(f),
                "--runs-dir",
                str(scratch / "runs"),
                timeout=180,
            )
            err = " ".join(r.stderr.split())
            assert r.returncode != 0 and f"on host 127.0.0.1:{port} ({host.dest}), checked there over SSH" in err, err
            assert said in err and "--allow-unsafe-target" in err
    assert _sha(scratch / "photos.img") == before and _sha(Path(partitioned)) == dev_before


@pytest.mark.skipif(not available(), reason="needs sshd and ssh")
def test_kill_9_of_an_ssh_hosts_run_takes_the_remote_server_down(scratch):
    port = _port()
    runs = scratch / "runs"
    with ssh_host() as host:
        f = scratch / "hosts.toml"
        f.write_text(
            f'[[host]]\naddress = "127.0.0.1"\nport = {port}\nssh = "{host.dest}"\n'
            f'ssh_config = "{host.config}"\ntarget = "{scratch}/remote.img"\n'
        )
        proc = subprocess.Popen(
            [
                *IOLAB,
                "run",
                "throughput",
                "--quick",
                "--cell-time",
                "1s",
                "--max-rounds",
                "2",
                "--no-report",
                "--purge",
                "none",
                "--target",
                f"file:{scratch}/local.img?size=16MiB",
                "--hosts-file",
                str(f),
                "--runs-dir",
                str(runs),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def second_run() -> None:  # the same target on the same host, while the first run holds it
            g = scratch / "hosts2.toml"
            g.write_text(f.read_text().replace(f"port = {port}", f"port = {_port()}"))
            r = iolab(*second, "--hosts-file", str(g), "--runs-dir", str(scratch / "runs2"), timeout=180)
            err = " ".join(r.stderr.split())
            assert r.returncode != 0 and "is locked on the host by another iolab run (flock)" in err, r.stdout + err
            assert "Nothing overrides this" in err

        server: list[int] = []

        def meanwhile() -> None:  # the run's server on the host: its pid file names it (no port there)
            notes = " ".join(json.loads(next(runs.glob("*/manifest.json")).read_text())["notes"])
            server.append(int(Path(notes.split("pid file ")[1].split(" ")[0].rstrip(")")).read_text()))
            second_run()

        second = ("run", "latency", *QUICK, "--target", f"file:{scratch}/local.img?size=16MiB")
        _kill_when_measuring(proc, runs, meanwhile)
        assert _pid_gone(server[0]), f"fio server {server[0]} still up after kill -9 of iolab"
        # the host's lock went with the run's SSH session
        deadline = time.monotonic() + 15
        while subprocess.run(["flock", "-n", "-E", "75", str(scratch / "remote.img"), "true"]).returncode == 75:
            assert time.monotonic() < deadline, "the remote target is still locked after kill -9 of iolab"
            time.sleep(0.1)


@pytest.mark.skipif(not available(), reason="needs sshd and ssh")
def test_an_ssh_host_never_writes_its_mark_over_a_file_of_that_name(scratch):
    theirs = scratch / "remote.img.iolab"
    before = _foreign(theirs)
    with ssh_host() as host:
        f = scratch / "hosts.toml"
        f.write_text(
            f'[[host]]\naddress = "127.0.0.1"\nport = {_port()}\nssh = "{host.dest}"\n'
            f'ssh_config = "{host.config}"\ntarget = "{scratch}/remote.img"\n'
        )
        r = iolab(
            "run", "latency", *QUICK, "--allow-unsafe-target", "--target", f"file:{scratch}/local.img?size=16MiB",
            "--hosts-file", str(f), "--runs-dir", str(scratch / "runs"), timeout=180,
        )  # fmt: skip
    err = " ".join(r.stderr.split())
    assert r.returncode != 0 and f"{theirs} exists and is not an iolab mark" in err, r.stdout + err
    assert _sha(theirs) == before and not (scratch / "remote.img").exists()
