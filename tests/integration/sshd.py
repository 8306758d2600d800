"""An SSH "host" on this machine for the ssh mode of --hosts: an sshd on 127.0.0.1 at a free
port, with a host key, a client key and its authorized_keys all generated in a temp dir, run
in the foreground (`sshd -f CONFIG -D`) and killed on exit. The client side is an ssh_config
file in the same dir (port, key, known hosts). Neither /root/.ssh nor the system sshd's
configuration is read or changed."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
WAIT_S = 10.0


@dataclass(frozen=True)
class SshHost:
    dest: str  # what `ssh = ...` names: an alias of `config`
    config: Path  # ssh_config with the key the sshd accepts
    wrong_key_config: Path  # the same with a key the sshd does not know
    dir: Path

    def hosts_file(self, path: Path, target: str | Path) -> Path:
        """A hosts file at `path` of this host (127.0.0.1, a free port of its own, over SSH)
        whose fio opens `target`."""
        path.write_text(
            f'[[host]]\naddress = "127.0.0.1"\nport = {_free_port()}\nssh = "{self.dest}"\n'
            f'ssh_config = "{self.config}"\ntarget = "{target}"\n'
        )
        return path


def available() -> bool:
    return os.path.exists(SSHD) and shutil.which("ssh") is not None and shutil.which("ssh-keygen") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "iolab-test", "-f", str(path)],
        check=True,
        capture_output=True,
        timeout=30,
    )


def _start(cmd: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "wb"))


@contextmanager
def ssh_host(binds: tuple[tuple[str, str], ...] = (), env: dict[str, str] | None = None, config: str = ""):
    """`binds`: (source, node) pairs bind-mounted in a mount namespace of the sshd's own, so the
    host's sessions see `source` at `node` where this machine has its own `node`: a host whose
    /dev/NAME is another device than this machine's /dev/NAME. `env`: variables every session
    on the host has (sshd's SetEnv), such as the lock directory a local run there uses. `config`:
    more sshd_config lines (a host configured against what iolab needs)."""
    d = Path(tempfile.mkdtemp(prefix="iolab-sshd-"))
    proc = None
    try:
        port = _free_port()
        for name in ("host_key", "id", "wrong_id"):
            _keygen(d / name)
        (d / "authorized_keys").write_text((d / "id.pub").read_text())
        host_pub = (d / "host_key.pub").read_text().split()
        (d / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
        (d / "sshd_config").write_text(
            f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n"
            f"AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nUsePAM no\n"
            + "".join(f'SetEnv {k}="{v}"\n' for k, v in (env or {}).items())
            + config
        )
        for name, key in (("ssh_config", "id"), ("wrong_ssh_config", "wrong_id")):
            (d / name).write_text(
                f"Host iolab-test-host\n  HostName 127.0.0.1\n  Port {port}\n  User {pwd.getpwuid(os.getuid()).pw_name}\n"
                f"  IdentityFile {d}/{key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {d}/known_hosts\n"
                "  StrictHostKeyChecking yes\n"
            )
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
        conf = ["-f", str(d / "sshd_config"), "-D", "-e"]
        if binds:  # in a private mount namespace: mount --bind each pair, then exec sshd
            mounts = "".join(f'mount --bind "${i * 2 + 1}" "${i * 2 + 2}" && ' for i in range(len(binds)))
            pairs = [x for pair in binds for x in pair]
            script = mounts + 'shift "$0" && exec "$@"'
            ns = ["-m", "--propagation", "private", "sh", "-c", script, str(len(pairs)), *pairs]
            proc = _start(["unshare", *ns, SSHD, *conf], d / "sshd.log")
        else:
            proc = _start([SSHD, *conf], d / "sshd.log")
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"sshd did not start: {(d / 'sshd.log').read_text()[-500:]}") from None
                time.sleep(0.1)
        yield SshHost("iolab-test-host", d / "ssh_config", d / "wrong_ssh_config", d)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(d, ignore_errors=True)
