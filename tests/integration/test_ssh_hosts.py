"""The ssh mode of --hosts end to end: iolab starts `fio --server` over SSH on the host's
loopback, tunnels its port, runs a quick test through the tunnel, and stops the server and
the tunnel after the run. The host is an sshd the test starts on 127.0.0.1 (tests/integration/sshd.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from iolab.engines.hostholds import LOCKED
from iolab.engines.hosts import answers
from iolab.engines.merge import breakdown
from iolab.store.runstore import RunStore

from .conftest import iolab, small_loop
from .sshd import available, ssh_host

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not available(), reason="needs root, sshd and ssh")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _servers_on(port: int) -> list[str]:
    """Command lines of fio servers listening on 127.0.0.1:port (any process of this machine)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"--server=127.0.0.1,{port}" in cmd and cmd.startswith("fio"):
            found.append(cmd)
    return found


def _hosts_file(tmp: Path, dest: str, config: Path, port: int) -> Path:
    f = tmp / "hosts.toml"
    f.write_text(
        f'[[host]]\naddress = "127.0.0.1"\nport = {port}\nssh = "{dest}"\nssh_config = "{config}"\n'
        f'target = "{tmp}/remote.img"\n'
    )
    return f


def _one_round(scratch: Path, hosts_file: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """One round of a quick latency run, unpurged, over the hosts file's host (its own target)."""
    quick = ("--quick", "--cell-time", "200ms", "--max-rounds", "1", "--no-report", "--purge", "none")
    target = ("--target", f"file:{scratch}/local.img?size=16MiB", "--hosts-file", str(hosts_file))
    return iolab("run", "latency", *quick, *target, "--runs-dir", str(scratch / "runs"), timeout=300, env=env)


def test_ssh_mode_starts_the_server_over_ssh_runs_through_the_tunnel_and_stops_it(scratch):
    port = _free_port()
    with ssh_host() as host:
        f = _hosts_file(scratch, host.dest, host.config, port)
        r = _one_round(scratch, f)
        assert r.returncode == 0, r.stdout + r.stderr
        # the server ran on the "remote" host (no port of its own there), and is gone with its directory
        assert not _servers_on(port) and not answers("127.0.0.1", port)
        store = RunStore.open(next((scratch / "runs").iterdir()))
        notes = " ".join(store.manifest.notes)
        remote_dir = notes.split("pid file ")[1].split("/server.pid")[0]
        assert f"fio server on {host.dest} listening on its own Unix socket {remote_dir}/fio.sock" in notes
        assert "SSH tunnel 127.0.0.1:" in notes and f"-> {host.dest}:{remote_dir}/fio.sock" in notes
        assert remote_dir.startswith("/tmp/iolab-fio-server-") and not Path(remote_dir).exists()
        cells = store.cells()
        assert cells and all([p.name for p in breakdown(c.counters)] == [f"127.0.0.1:{port}"] for c in cells)
        assert all(c.read_ios + c.write_ios > 0 for c in cells)
        assert not (scratch / "local.img").exists()  # the host's fio opened its own path
        # made over SSH, marked as iolab's there (so the next run's check there knows it)
        assert (
            scratch / "remote.img.iolab"
        ).read_text().strip() == f"iolab target file, inode {os.stat(scratch / 'remote.img').st_ino}"
        # the target's identity was read on the host, over SSH; nothing read here is shown as that drive's
        ident = store.manifest.target["identity"]["hosts"][f"127.0.0.1:{port}"]
        st = os.stat(scratch / "remote.img")
        assert (ident["read_on"], ident["kind"], ident["inode"]) == (host.dest, "file", st.st_ino)
        assert "read on each host over SSH: 127.0.0.1:" in notes and "nothing is read on this machine" in notes
        assert not any(store.manifest.target["facts"].get(k) for k in ("model", "serial"))


def test_a_key_the_host_refuses_fails_clearly_before_any_io(scratch):
    port = _free_port()
    with ssh_host() as host:
        f = _hosts_file(scratch, host.dest, host.wrong_key_config, port)
        r = iolab(
            "run",
            "iops",
            "--quick",
            "--cell-time",
            "200ms",
            "--max-rounds",
            "1",
            "--no-report",
            "--target",
            f"file:{scratch}/local.img?size=16MiB",
            "--hosts-file",
            str(f),
            "--runs-dir",
            str(scratch / "runs"),
            timeout=120,
        )
    assert r.returncode != 0
    err = " ".join(r.stderr.split())
    assert f"host 127.0.0.1:{port}: checking its target over SSH as {host.dest} failed" in err, r.stderr
    assert "Permission denied (publickey)" in err and "BatchMode=yes" in err and "Traceback" not in r.stderr
    assert not _servers_on(port) and not (scratch / "remote.img").exists()


def test_an_sshd_that_forbids_unix_socket_forwarding_is_named_with_the_setting_to_change(scratch):
    """Before: with `AllowStreamLocalForwarding no` on the host the tunnel came up, every probe
    connection through it was dropped, and the run failed only when the probe budget ran out
    (145 s on a loaded machine) with 'fio server 127.0.0.1:PORT did not report its version (last
    attempt exit 1: ... disconnected)'. ssh's own error on the forward now names the setting."""
    port = _free_port()
    with ssh_host(config="AllowStreamLocalForwarding no\n") as host:
        f = _hosts_file(scratch, host.dest, host.config, port)
        r = _one_round(scratch, f, {"IOLAB_FIO_PROBE_TIMEOUT": "120"})  # before, it ended when this was spent
    err = " ".join(r.stderr.split())
    assert r.returncode == 4 and "Traceback" not in r.stderr, r.stderr
    assert f"host 127.0.0.1:{port}: the sshd of {host.dest} refuses the SSH tunnel" in err, err
    assert "open failed" in err and "`AllowStreamLocalForwarding yes`" in err and "sshd_config" in err, err
    assert "did not report its version" not in err and "\n\n" not in r.stderr.strip()
    socket_dir = re.search(r"socket (/tmp/iolab-fio-server-\w+)/fio.sock is there", err)
    assert socket_dir and not Path(socket_dir.group(1)).exists()  # the server was stopped


def test_a_device_on_an_ssh_host_is_identified_and_its_counters_read_there(scratch, loop_device):
    port = _free_port()
    with ssh_host() as host:
        f = scratch / "hosts.toml"
        f.write_text(
            f'[[host]]\naddress = "127.0.0.1"\nport = {port}\nssh = "{host.dest}"\nssh_config = "{host.config}"\n'
        )
        r = iolab(
            "run",
            "latency",
            "--quick",
            "--cell-time",
            "200ms",
            "--max-rounds",
            "1",
            "--no-report",
            "--purge",
            "none",
            "--allow-unsafe-target",
            "--target",
            loop_device,
            "--hosts-file",
            str(f),
            "--runs-dir",
            str(scratch / "runs"),
            timeout=300,
        )
    assert r.returncode == 0, r.stdout + r.stderr
    store = RunStore.open(next((scratch / "runs").iterdir()))
    ident = store.manifest.target["identity"]["hosts"][f"127.0.0.1:{port}"]
    size = int(Path(f"/sys/block/{Path(loop_device).name}/size").read_text()) * 512
    assert (ident["read_on"], ident["kind"], ident["capacity"]) == (host.dest, "block", size)
    # a loop device keeps no write counters: said per phase, never replaced by a local reading
    notes = store.manifest.notes
    assert (
        f"main: 127.0.0.1:{port}'s drive {loop_device}, counters read on that host over SSH: no write counters reported"
        in notes
    )
    assert store.manifest.endurance == {}


def test_a_file_on_an_ssh_host_is_sized_there(scratch):
    # a host's file: path is that host's: its size is asked there with stat over SSH (here the
    # "host" is this machine's sshd, so the file is at hand to compare), never read here

    f = scratch / "on-the-host.img"
    f.write_bytes(b"\0" * (8 << 20))
    with ssh_host() as host:
        hosts = scratch / "ssh-hosts.toml"
        hosts.write_text(
            f'[[host]]\naddress = "127.0.0.1"\nport = {_free_port()}\nssh = "{host.dest}"\nssh_config = "{host.config}"\n'
        )
        args = ("plan", "latency", "--quick", "--hosts-file", str(hosts), "--allow-unsafe-target", "--json")
        p = iolab(*args, "-t", f"file:{f}")
        assert p.returncode == 0, p.stdout + p.stderr
        assert json.loads(p.stdout)["plan"]["tests"][0]["target_capacity_bytes"] == 8 << 20
        p = iolab(*args, "-t", f"file:{scratch}/not-there.img")
        said = " ".join((p.stdout + p.stderr).split())
        assert p.returncode == 2 and "could not read the file's size on host" in said and "?size=8GiB" in said, said


def _capacity(p: subprocess.CompletedProcess, field: str = "target_capacity_bytes") -> int:
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)["plan"]["tests"][0][field]


def test_a_device_on_an_ssh_host_is_sized_there_not_here(scratch, loop_device):
    # A host's /dev/NAME is that host's device: its size was read here, from this machine's
    # /dev/NAME. The "host" is an sshd in a mount namespace of its own where the node of a small
    # loop device of this machine is the 256 MiB loop device (a bind mount), so the two differ.
    with small_loop(scratch) as node, ssh_host(binds=((loop_device, node),)) as host:
        hosts = scratch / "ssh-hosts.toml"
        hosts.write_text(
            f'[[host]]\naddress = "127.0.0.1"\nport = {_free_port()}\nssh = "{host.dest}"\n'
            f'ssh_config = "{host.config}"\n'
        )
        args = ("plan", "latency", "--quick", "--hosts-file", str(hosts), "--allow-unsafe-target", "--json")
        assert _capacity(iolab(*args, "-t", node)) == 256 << 20
        # its first 16 MiB tested, of the host's 256 MiB device (the plan gives the drive's size)
        part = iolab(*args, "-t", f"{node}?size=16MiB")
        assert (_capacity(part), _capacity(part, "tested_capacity_bytes")) == (256 << 20, 16 << 20)
        p = iolab(*args, "-t", f"{node}?size=1GiB")
        said = " ".join((p.stdout + p.stderr).split())
        assert p.returncode == 2 and f"is larger than {node} on host 127.0.0.1:" in said, said
        assert f"which holds {256 << 20:,} bytes" in said, said
        p = iolab(*args, "-t", "/dev/iolab-not-on-the-host")
        said = " ".join((p.stdout + p.stderr).split())
        assert p.returncode == 2 and "could not read the size of /dev/iolab-not-on-the-host on host" in said, said


def test_a_mounted_device_on_an_ssh_host_is_refused_under_any_node_name(scratch, loop_device):
    # The host's check looked the device up in sysfs by its node's name: a node of another name
    # (mknod, a bind mount) found no mounts, partitions or holders, so a mounted filesystem was
    # written once --allow-unsafe-target passed its signature. Here the host's node of a small
    # loop device's name is the 256 MiB one, which holds a mounted ext4.
    subprocess.run(["mkfs.ext4", "-q", "-F", loop_device], check=True, capture_output=True)
    mnt = scratch / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", loop_device, str(mnt)], check=True, capture_output=True)
    try:
        with small_loop(scratch) as node, ssh_host(binds=((loop_device, node),)) as host:
            hosts = scratch / "ssh-hosts.toml"
            hosts.write_text(
                f'[[host]]\naddress = "127.0.0.1"\nport = {_free_port()}\nssh = "{host.dest}"\n'
                f'ssh_config = "{host.config}"\n'
            )
            args = ("plan", "latency", "--quick", "--hosts-file", str(hosts), "--allow-unsafe-target")
            p = iolab(*args, "-t", node)
            said = " ".join((p.stdout + p.stderr).split())
            assert p.returncode == 3 and f"Refusing to write to {node} on host 127.0.0.1:" in said, said
            assert f"mounted: {node} or a partition of it is in use on the host: {mnt}" in said, said
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_a_device_held_by_a_run_on_an_ssh_host_is_held_under_every_node_name(scratch, loop_device):
    # a run's flock on its host's target was on the node it named, so a run through another node of
    # the device (mknod) found no lock there and both wrote it; the lock is on the kernel's node now
    st = os.stat(loop_device)
    alias = f"/dev/iolab-test-alias-{os.getpid()}"
    os.mknod(alias, 0o600 | stat.S_IFBLK, st.st_rdev)
    try:
        with ssh_host() as host:
            hosts = scratch / "ssh-hosts.toml"
            hosts.write_text(
                f'[[host]]\naddress = "127.0.0.1"\nport = {_free_port()}\nssh = "{host.dest}"\n'
                f'ssh_config = "{host.config}"\n'
            )
            args = ("plan", "latency", "--quick", "--hosts-file", str(hosts), "--allow-unsafe-target")
            for held, other in ((loop_device, alias), (alias, loop_device)):
                # a run's hold on `held`, as RemoteHold takes it (hostholds.LOCKED)
                hold = f'{LOCKED}exec flock -n -o -- "$(locked "$1")" sh -c "echo locked; exec cat >/dev/null"'
                holder = subprocess.Popen(["sh", "-c", hold, "sh", held], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                try:
                    assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
                    p = iolab(*args, "-t", other)
                    said = " ".join((p.stdout + p.stderr).split())
                    assert p.returncode == 3 and "is locked on the host by another iolab run (flock)" in said, said
                finally:
                    holder.communicate(b"")
            assert iolab(*args, "-t", alias).returncode == 0  # free once the holders ended
    finally:
        os.unlink(alias)


def test_a_hosts_own_device_path_is_the_one_sized_there(scratch, loop_device):
    # a host's own path (a hosts file's `target`) is what its fio opens, but the spec's path was
    # sized there instead: another device of the host, or none (refused)
    with small_loop(scratch) as node, ssh_host() as host:

        def entry(target: str) -> str:
            return (
                f'[[host]]\naddress = "127.0.0.1"\nport = {_free_port()}\nssh = "{host.dest}"\n'
                f'ssh_config = "{host.config}"\ntarget = "{target}"\n'
            )

        hosts = scratch / "ssh-hosts.toml"
        hosts.write_text(entry(loop_device))
        args = ("plan", "latency", "--quick", "--hosts-file", str(hosts), "--allow-unsafe-target", "--json")
        assert _capacity(iolab(*args, "-t", "/dev/iolab-not-on-the-host")) == 256 << 20
        assert _capacity(iolab(*args, "-t", node)) == 256 << 20  # not the spec's node's 32 MiB
        hosts.write_text(entry(loop_device) + entry(node))
        p = iolab(*args, "-t", "/dev/iolab-not-on-the-host")
        said = " ".join((p.stdout + p.stderr).split())
        assert p.returncode == 2 and "the hosts' targets differ in size" in said, said
        assert f"({loop_device}): {256 << 20:,} bytes" in said and f"({node}): {32 << 20:,} bytes" in said, said
        part = iolab(*args, "-t", "/dev/iolab-not-on-the-host?size=16MiB")
        assert _capacity(part, "tested_capacity_bytes") == 16 << 20  # the first 16 MiB of each host's device


@pytest.mark.skipif(not (shutil.which("nbdkit") and shutil.which("nbdinfo")), reason="needs nbdkit and nbdinfo")
def test_an_nbd_export_on_an_ssh_host_is_checked_as_an_export_there(scratch):
    # the host's check script took the URI for a missing file (a directory nbd:/127.0.0.1:P that is
    # not there) and refused it as read-only, so no NBD target could run on an SSH host
    from .conftest import free_port, wait_listening

    servers, ports = [], {}
    try:
        for mode in ("rw", "ro"):
            ports[mode] = free_port()
            servers.append(
                subprocess.Popen(
                    ["nbdkit", "-f", *(["-r"] if mode == "ro" else []), "-i", "127.0.0.1", "-p", str(ports[mode])]
                    + ["memory", "64M"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            wait_listening(servers[-1], ports[mode], "nbdkit")
        with ssh_host() as host:
            f = _hosts_file(scratch, host.dest, host.config, _free_port())
            f.write_text(f.read_text().replace(f'target = "{scratch}/remote.img"\n', ""))
            runs = scratch / "runs"
            args = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report", "--purge", "none")
            r = iolab("run", "latency", *args, "-t", f"nbd://127.0.0.1:{ports['rw']}/", "--hosts-file", str(f),
                      "--runs-dir", str(runs), timeout=300)  # fmt: skip
            assert r.returncode == 0, r.stdout + r.stderr
            notes = " ".join(RunStore.open(next(runs.iterdir())).manifest.notes)
            assert "was asked of its NBD server from iolab-test-host over SSH (nbdinfo --can write)" in notes, notes
            # a read-only export is refused as a local run refuses it, asked from the host
            ro = f"nbd://127.0.0.1:{ports['ro']}/"
            r = iolab("plan", "latency", "--quick", "-t", ro, "--hosts-file", str(f), "--allow-unsafe-target")
            said = " ".join(r.stderr.split())
            assert r.returncode == 3 and f"Refusing to write to {ro} on host 127.0.0.1:" in said, said
            assert "asked there over SSH: read-only: the NBD server exports" in said and "Nothing overrides" in said
    finally:
        for s in servers:
            s.terminate()
            s.wait()


# The first run's hold on an export through an SSH host, as `iolab run` takes it (hostholds.NbdHold),
# kept until this process's input ends.
HOLD_THROUGH = (
    "import sys; from iolab import targets; from iolab.engines.hostholds import NbdHold; "
    "from iolab.engines.hostlist import Host; "
    "NbdHold(Host('127.0.0.1', int(sys.argv[2]), ssh=sys.argv[3], ssh_config=sys.argv[4]), "
    "targets.parse_target(sys.argv[1])); print('held', flush=True); sys.stdin.read()"
)
HOLD_HERE = (
    "import sys; from iolab import targets; targets.claim(targets.parse_target(sys.argv[1])); "
    "print('held', flush=True); sys.stdin.read()"
)


@pytest.mark.skipif(not (shutil.which("nbdkit") and shutil.which("nbdinfo")), reason="needs nbdkit and nbdinfo")
def test_an_nbd_export_through_an_ssh_host_is_locked_there_as_a_local_run_locks_it(scratch):
    # nothing was locked for an export reached through an SSH host: a second run on it through that
    # host (or a local run on the host) wrote it beside the first. The lock files are a local run's
    # on that host (here the host is this machine's sshd, so a local run here is one on the host)
    import sys

    from .conftest import free_port, wait_listening

    port = free_port()
    server = subprocess.Popen(
        ["nbdkit", "-f", "-i", "127.0.0.1", "-p", str(port), "memory", "64M"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    spec = f"nbd://127.0.0.1:{port}/"
    args = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report", "--purge", "none")
    try:
        wait_listening(server, port, "nbdkit")
        # the host's sessions lock where this test's runs do (conftest: IOLAB_LOCK_DIR of its own)
        with ssh_host(env={"IOLAB_LOCK_DIR": os.environ["IOLAB_LOCK_DIR"]}) as host:
            fio_port = _free_port()
            f = _hosts_file(scratch, host.dest, host.config, fio_port)
            f.write_text(f.read_text().replace(f'target = "{scratch}/remote.img"\n', ""))
            through = ("run", "latency", *args, "-t", spec, "--hosts-file", str(f), "--runs-dir", str(scratch / "r"))
            here = ("run", "latency", *args, "-t", spec, "--runs-dir", str(scratch / "r"))
            holders = (
                [HOLD_THROUGH, spec, str(fio_port), host.dest, str(host.config)],  # a run through the host
                [HOLD_HERE, spec],  # a local run on the host
            )
            for holder_args in holders:
                holder = subprocess.Popen(
                    [sys.executable, "-c", *holder_args], stdin=subprocess.PIPE, stdout=subprocess.PIPE
                )
                try:
                    assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
                    said = {}
                    for name, cmd in (("through", through), ("here", here)):
                        p = iolab(*cmd, timeout=300)
                        said[name] = " ".join(p.stderr.split())
                        assert p.returncode == 3, (name, p.stdout + p.stderr)
                    paragraph = (
                        f"Refusing to write to target '{spec}' (nbd://127.0.0.1:{port}/): another iolab process "
                        f"(pid {holder.pid}) is starting a run on it. Two runs on one target destroy each other's "
                        f"data and measurements; wait for that run to end, or stop it (kill {holder.pid})."
                    )
                    assert said["through"] == said["here"] and paragraph in said["here"], said
                finally:
                    holder.communicate(b"")
            assert not (scratch / "r").exists()
            # free once its holders ended: the run through the host takes the lock itself
            r = iolab(*through, timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
            notes = " ".join(RunStore.open(next((scratch / "r").iterdir())).manifest.notes)
            assert (
                "(nbdinfo --can write) and is locked there (flock on the lock files a local run there takes)" in notes
            )
    finally:
        server.terminate()
        server.wait()


def test_several_targets_on_an_ssh_host_are_told_apart_where_it_opens_them(scratch, loop_device):
    # With several --target and a host's fio opening them, which were one drive was read on this
    # machine, whose nodes of those names are other drives (or none): two drives of the host were
    # refused as one, and one drive of the host given by two nodes went ahead as two. Here `alias`
    # is another node of the 256 MiB loop device, and on the host (its own mount namespace) the
    # small loop device: there `alias` and `small` are one drive, `alias` and the big one two.
    alias = f"/dev/iolab-test-alias-{os.getpid()}"
    os.mknod(alias, 0o600 | stat.S_IFBLK, os.stat(loop_device).st_rdev)
    try:
        with small_loop(scratch) as small, ssh_host(binds=((small, alias),)) as host:
            port = _free_port()
            hosts = scratch / "ssh-hosts.toml"
            hosts.write_text(
                f'[[host]]\naddress = "127.0.0.1"\nport = {port}\nssh = "{host.dest}"\nssh_config = "{host.config}"\n'
            )
            args = ("run", "latency", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report")
            args += ("--purge", "none", "--hosts-file", str(hosts), "--runs-dir", str(scratch / "runs"))
            r = iolab(*args, "-t", small, "-t", alias, timeout=300)
            said = " ".join(r.stderr.split())
            assert r.returncode == 2 and f"--target {small} and --target {alias} are one drive" in said, said
            on = f"on {host.dest} over SSH with {host.config}"  # the machine, not the address label
            assert f"(major:minor) {on}, where host 127.0.0.1:{port} opens it" in said, said
            assert not (scratch / "runs").exists()
            # Two drives there: each run starts and is checked on the host, where each drive's
            # partition table refuses it (two runs through one host's fio port are not what is tested)
            for dev in (loop_device, small):
                with open(dev, "r+b") as f:
                    f.seek(446)
                    f.write(bytes([0, 0, 0, 0, 0x83, 0, 0, 0, 0, 8, 0, 0, 0, 0, 1, 0]) + bytes(48) + b"\x55\xaa")
            r = iolab(*args, "-t", loop_device, "-t", alias, timeout=300)
            said = " ".join(r.stderr.split())
            assert r.returncode == 3 and "are one drive" not in said, said
            for spec, dev in ((loop_device, loop_device), (alias, alias)):
                assert f"[{spec}] iolab: Refusing to write to {dev} on host 127.0.0.1:{port}" in said, said
    finally:
        os.unlink(alias)


def test_two_ssh_hosts_of_one_address_are_two_machines_for_a_fleet(scratch, loop_device):
    """Two SSH hosts given one address (127.0.0.1, as two port forwards to two machines would be)
    and one device path: before, the fleet refused them as 'the same drive (… on 127.0.0.1:PORT)',
    since a drive's key named the host by its address, which for an SSH host is only a label.
    Here one host's `node` is another device than the other's (a bind mount in its sshd)."""
    with small_loop(scratch) as node, ssh_host(binds=((loop_device, node),)) as one, ssh_host() as two:
        f = scratch / "fleet.toml"
        f.write_text(
            "".join(
                f'[[host]]\naddress = "127.0.0.1"\nport = {_free_port()}\nssh = "{h.dest}"\nssh_config = "{h.config}"\n'
                f'[[host.drive]]\ntarget = "{node}"\nname = "{name}"\n'
                for name, h in (("a", one), ("b", two))
            )
        )
        args = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report", "--purge", "none")
        r = iolab("run", "latency", *args, "--fleet", str(f), "--runs-dir", str(scratch / "runs"), timeout=600)
    said = " ".join((r.stdout + r.stderr).split())
    assert "same drive" not in said and "one drive" not in said, said
    assert r.returncode in (0, 7) and "Traceback" not in said, said
    d = Path(next(ln for ln in r.stdout.splitlines() if ln.startswith("fleet directory: ")).split(": ", 1)[1])
    rows = json.loads((d / "report.json").read_text())["drives"]
    assert sorted((row["name"], row["state"]) for row in rows) == [("a", "complete"), ("b", "complete")], rows


def test_plan_of_an_ssh_host_says_what_the_run_records_and_refuses_a_file_without_room(scratch):
    """Before: plan listed no 'purge failed (none)', which the run records for another machine's
    target it does not purge; and a file target larger than the host's free space passed plan and
    run alike (the host made it sparse, and fio would have met a full disk mid-run)."""
    port = _free_port()
    with ssh_host() as host:
        f = _hosts_file(scratch, host.dest, host.config, port)
        common = ("latency", "--quick", "--cell-time", "200ms", "--max-rounds", "1", "--hosts-file", str(f))
        big = iolab("plan", *common, "-t", f"file:{scratch}/local.img?size=10TiB")
        said = " ".join(big.stderr.split())
        assert big.returncode == 2 and "Traceback" not in said, said
        assert f"not enough space for {scratch}/remote.img on host 127.0.0.1:{port} ({host.dest}, its df)" in said
        small = ("-t", f"file:{scratch}/local.img?size=16MiB")
        p = iolab("plan", *common, *small, "--json")
        assert p.returncode == 0, p.stderr
        planned = json.loads(p.stdout)["plan"]["tests"][0]["noncompliance"]
        r = iolab("run", *common, *small, "--no-report", "--runs-dir", str(scratch / "runs"), timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
    [m] = (scratch / "runs").glob("*/manifest.json")
    assert "purge failed (none): not from FOB" in planned and json.loads(m.read_text())["noncompliance"] == planned
