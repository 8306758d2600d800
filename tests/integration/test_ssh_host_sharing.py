"""One SSH host shared: runs through one host at once, a fleet's drives on one host told apart
where that host opens them, and a purge check made where the purge happens. The host is an sshd
the test starts on 127.0.0.1 (tests/integration/sshd.py), so its loopback is this machine's."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from iolab.engines.merge import breakdown
from iolab.store.runstore import RunStore

from .conftest import IOLAB, free_port, iolab, small_loop
from .sshd import available, ssh_host

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not available(), reason="needs root, sshd and ssh")

QUICK = ("--quick", "--cell-time", "200ms", "--max-rounds", "1", "--no-report", "--purge", "none")


def _host(dest: str, config: Path, port: int, extra: str = "") -> str:
    return f'[[host]]\naddress = "127.0.0.1"\nport = {port}\nssh = "{dest}"\nssh_config = "{config}"\n{extra}'


def _proc(pid: str, name: str) -> str:
    try:
        return Path(f"/proc/{pid}/{name}").read_text(errors="replace")
    except OSError:
        return ""


def _server_dir(pid: str) -> str | None:
    """The pid file directory of the iolab-started fio server that `pid` is or descends from."""
    for _ in range(8):
        cmd = _proc(pid, "cmdline").split("\0")
        server = [a for a in cmd if a.startswith("--daemonize=/tmp/iolab-fio-server-")]
        if cmd[0].endswith("fio") and server:
            return server[0].removeprefix("--daemonize=").rsplit("/", 1)[0]
        ppid = next((line.split()[1] for line in _proc(pid, "status").splitlines() if line.startswith("PPid:")), "0")
        if ppid in ("0", "1"):
            return None
        pid = ppid
    return None


@contextmanager
def _who_writes(files: list[Path]) -> Iterator[dict[str, set[str]]]:
    """While in the block: for each file, the fio servers (pid file directories) whose jobs had
    it open, from /proc (the host's processes are this machine's)."""
    seen: dict[str, set[str]] = {str(f): set() for f in files}
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.02):
            for pid in filter(str.isdigit, os.listdir("/proc")):
                if not _proc(pid, "cmdline").startswith("fio"):
                    continue
                try:
                    fds = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
                except OSError:
                    continue
                for f in set(fds) & set(seen):
                    if (server := _server_dir(pid)) is not None:
                        seen[f].add(server)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        yield seen
    finally:
        done.set()
        t.join()


def test_two_runs_through_one_ssh_host_at_once_each_have_their_own_server(scratch):
    # Each run started `fio --server=127.0.0.1,PORT` on the host at the host's port: fio binds with
    # SO_REUSEPORT, so the second server bound beside the first and the host's kernel handed each
    # tunnel's connections to either server: a run's cells ran on the other run's server, and died
    # with it when that run stopped its server (exit 4).
    port = free_port()
    scratch = Path(os.path.realpath(scratch))
    files = {name: scratch / f"{name}.img" for name in ("a", "b")}
    runs = {name: scratch / f"runs-{name}" for name in files}
    with ssh_host() as host:
        hosts = scratch / "hosts.toml"
        hosts.write_text(_host(host.dest, host.config, port))
        with _who_writes(list(files.values())) as seen:
            procs = {
                name: subprocess.Popen(
                    [*IOLAB, "run", "latency", *QUICK, "--target", f"file:{files[name]}?size=16MiB"]
                    + ["--hosts-file", str(hosts), "--runs-dir", str(runs[name])],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=dict(os.environ, COLUMNS="200"),
                )
                for name in files
            }
            said = {name: p.communicate(timeout=600) for name, p in procs.items()}
        for name, p in procs.items():
            assert p.returncode == 0, (name, said[name])
    for name, d in runs.items():
        store = RunStore.open(next(d.iterdir()))
        assert store.manifest.target["spec"] == f"file:{files[name]}?size=16MiB"
        cells = store.cells()
        assert cells and all(c.read_ios + c.write_ios > 0 for c in cells)
        assert all([p.name for p in breakdown(c.counters)] == [f"127.0.0.1:{port}"] for c in cells)
        # every job on this run's file ran on the server this run started, and that server is gone
        notes = " ".join(store.manifest.notes)
        remote_dir = notes.split("pid file ")[1].split("/server.pid")[0]
        assert remote_dir.startswith("/tmp/iolab-fio-server-") and not Path(remote_dir).exists()
        assert seen[str(files[name])] <= {remote_dir}, (name, remote_dir, seen)


@contextmanager
def _alias(device: str) -> Iterator[str]:
    """A second device node of `device` (mknod), removed after."""
    alias = f"/dev/iolab-test-alias-{os.getpid()}"
    os.mknod(alias, 0o600 | stat.S_IFBLK, os.stat(device).st_rdev)
    try:
        yield alias
    finally:
        os.unlink(alias)


def test_a_fleets_drives_on_ssh_hosts_are_told_apart_where_each_host_opens_them(scratch, loop_device):
    # The fleet read a host's drive with `stat` and `lsblk` there, but a device without WWID or
    # serial (a loop device, many virtual disks) was "not read": one drive of a host under two
    # nodes went ahead as two drives, two runs writing it at once. Now it is read as `run -t A -t B
    # --hosts-file` reads it (fleetident.on_host): by its major:minor on that host.
    with (
        _alias(loop_device) as alias,
        small_loop(scratch) as small,
        ssh_host() as a,
        ssh_host(binds=((small, alias),)) as b,  # b's node `alias` is the small loop device
    ):
        fleet = scratch / "fleet.toml"
        host_a = _host(a.dest, a.config, free_port())
        fleet.write_text(
            host_a + f'[[host.drive]]\ntarget = "{loop_device}"\nname = "dev"\n'
            f'[[host.drive]]\ntarget = "{alias}"\nname = "alias"\n'
        )
        args = ("run", "latency", *QUICK, "--allow-unsafe-target", "--fleet", str(fleet))
        r = iolab(*args, "--runs-dir", str(scratch / "runs"), timeout=300)
        said = " ".join(r.stderr.split())
        rdev = os.stat(loop_device).st_rdev
        assert r.returncode == 2 and "drives 'dev' and 'alias' are one drive" in said, r.stdout + r.stderr
        on = f"on {a.dest} over SSH with {a.config}"  # the machine its ssh reaches, not the address label
        assert f"(block device {os.major(rdev)}:{os.minor(rdev)} (major:minor) {on})" in said, said
        assert not (scratch / "runs").exists()
        # one node name on two hosts, two drives: host b's `alias` is the small loop device
        host_b = _host(b.dest, b.config, free_port()).replace('"127.0.0.1"', '"127.0.0.2"')
        fleet.write_text(
            host_a + f'[[host.drive]]\ntarget = "{alias}"\nname = "on-a"\n'
            f'{host_b}[[host.drive]]\ntarget = "{alias}?size=16MiB"\nname = "on-b"\n'
        )
        r = iolab(*args, "--runs-dir", str(scratch / "runs"), timeout=600)
        assert r.returncode in (0, 7) and "are one drive" not in r.stderr, r.stdout + r.stderr  # 7: a verdict
        assert "identity not read" not in r.stdout, r.stdout
        (report,) = (scratch / "runs" / "fleets").glob("*/report.json")
        rows = json.loads(report.read_text())["drives"]
        assert sorted((row["name"], row["state"]) for row in rows) == [("on-a", "complete"), ("on-b", "complete")]


def _with_granularity(fake: Path, device: str, *args: str) -> subprocess.CompletedProcess:
    """`iolab ARGS` in a mount namespace of its own where this machine's sysfs says `device` has
    the discard granularity written in `fake` (a device such as a thin-provisioned LUN's)."""
    sysfile = Path(f"/sys/class/block/{Path(device).name}/queue/discard_granularity").resolve()
    script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", str(fake), str(sysfile), *IOLAB, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, COLUMNS="200"),
    )


def test_an_ssh_hosts_device_is_not_refused_by_this_machines_discard_granularity(scratch, loop_device, fio_server_here):
    # A device tested in its first part (?size=) is purged by a discard of that part rounded down to
    # the device's discard granularity. The check read this machine's sysfs for the host's device
    # (a device of another machine, never purged: the run leaves it as it is), so a node of that name
    # here with a larger granularity refused the run. Here this machine's says 64 MiB.
    fake = scratch / "granularity"
    fake.write_text(f"{64 << 20}\n")
    spec = f"{loop_device}?size=16MiB"
    plan = ("plan", "latency", "--quick", "--allow-unsafe-target", "-t", spec)
    refused = f"is less than {loop_device}'s discard granularity (67,108,864 bytes), so no discard fits inside it"
    # this machine's own device, alone or behind a fio server of this machine, is purged here: refused
    here = scratch / "here.toml"
    here.write_text(f'[[host]]\naddress = "127.0.0.1"\nport = {fio_server_here}\n')
    for extra in ((), ("--hosts-file", str(here))):
        p = _with_granularity(fake, loop_device, *plan, *extra)
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and refused in said, (extra, p.stdout + p.stderr)
    with ssh_host() as host:
        hosts = scratch / "ssh.toml"
        hosts.write_text(_host(host.dest, host.config, free_port()))
        p = _with_granularity(fake, loop_device, *plan, "--hosts-file", str(hosts), "--json")
        assert p.returncode == 0, p.stdout + p.stderr
        assert json.loads(p.stdout)["plan"]["tests"][0]["purge_does"].startswith("not done: the targets are on other")
        args = ("run", "latency", *QUICK[:-2], "--allow-unsafe-target", "-t", spec, "--hosts-file", str(hosts))
        p = _with_granularity(fake, loop_device, *args, "--runs-dir", str(scratch / "runs"))
        assert p.returncode == 0, p.stdout + p.stderr
    purges = RunStore.open(next((scratch / "runs").iterdir())).manifest.purges
    assert purges and all(not x["ok"] and "iolab does not purge them" in x["detail"] for x in purges), purges
