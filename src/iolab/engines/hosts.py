"""The load-generating hosts of a scale-out run (their list is hostlist.py's): fio servers
started or reused on them, and the fio version check.

fio's server runs any job file it is sent, as the user it runs as (it can write any device
that user can). So a server iolab starts is bound to the address the user names, never to a
wildcard (0.0.0.0, ::) unless --listen-any says so, and the ssh mode has it listen on a Unix
socket of its own on the remote host (one per run, in a directory only its user can open) and
reaches it through an SSH tunnel. Every server iolab starts dies with the
iolab process that started it, however that ends: a local one by the kernel's parent-death
signal, an ssh-mode one when the SSH session watching it closes. Each local server is also
recorded in a pid file (beside the target locks), so a server left by an iolab that could not
stop it is found, listed by `iolab runs` and stopped by the next hosts run."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from iolab.core.errors import EngineError, IolabError
from iolab.core.procs import die_with_parent
from iolab.core.units import counted
from iolab.engines.fioprobe import Budget, Probe, budget, probe
from iolab.engines.hostlist import Host
from iolab.engines.serverpids import record, stop_leftovers, stop_pid
from iolab.targets.host import binds_here

CONNECT_TIMEOUT_S = 2.0
START_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 20.0
# Made by the remote start command; checked before iolab sends it back in a stop command.
_REMOTE_DIR_RE = re.compile(r"^/tmp/iolab-fio-server-[A-Za-z0-9]{6,}$")
# ssh's words for a connection through a forward that the far end did not open
_OPEN_FAILED_RE = re.compile(r"channel \d+: open failed: [^\r\n]*")


# ---------------------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------------------


def answers(address: str, port: int, timeout: float = CONNECT_TIMEOUT_S) -> bool:
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def is_local_address(address: str) -> bool:
    """True when this machine owns `address` (a server may then be started here, bound to it)."""
    try:
        infos = socket.getaddrinfo(address, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    return any(binds_here(str(sockaddr[0])) for *_, sockaddr in infos)


def _addresses(address: str) -> set[str]:
    """The addresses `address` resolves to, without an IPv6 zone (none: it does not resolve)."""
    try:
        infos = socket.getaddrinfo(address, None, type=socket.SOCK_STREAM)
    except OSError:
        return set()  # not resolved: reaching it fails later, naming the host
    return {str(sockaddr[0]).split("%")[0] for *_, sockaddr in infos}


def is_wildcard(address: str) -> bool:
    """True for an address that means every interface (0.0.0.0, ::, or a name for one)."""
    return any(ipaddress.ip_address(a).is_unspecified for a in _addresses(address))


def refuse_wildcards(hosts: list[Host], listen_any: bool) -> None:
    """A fio server bound to every interface runs any job anyone who reaches it sends (it
    can write every device its user can): only --listen-any asks for that."""
    wild = [h.name for h in hosts if not h.ssh and is_wildcard(h.address)]
    if wild and not listen_any:
        raise IolabError(
            f"host {', '.join(wild)}: that address means every interface of this machine, and a fio server there "
            "runs any job whoever reaches it sends. Name the address to serve on (127.0.0.1 for this machine alone, "
            "or one of its interfaces' addresses), or pass --listen-any if the server is meant to listen on every "
            "interface. Nothing was started or written."
        )


def refuse_one_server_twice(hosts: list[Host]) -> None:
    """Two names for one fio server (localhost and 127.0.0.1, a host name and its address) are
    one load generator: the split would send it both shares and report two hosts. Hosts reached
    over SSH each have their own tunnel and are told apart by their SSH address."""
    seen: dict[tuple[str, int], str] = {}
    for h in hosts:
        if h.ssh:
            continue
        for addr in sorted(_addresses(h.address)):
            first = seen.setdefault((addr, h.port), h.name)
            if first != h.name:
                raise IolabError(
                    f"hosts {first} and {h.name} are one fio server ({addr} port {h.port}); give each fio server "
                    "once (use `share` in a hosts file to weight one). Nothing was started or written."
                )


def server_arg(address: str, port: int) -> str:
    """fio's --server/--client argument: 'ip,port', and 'ip6:ADDR,port' for an IPv6 address
    (fio 3.33 takes a bare '::1,8765' for a port it cannot parse and exits)."""
    return f"ip6:{address},{port}" if ":" in address else f"{address},{port}"


def ssh_command(h: Host, *command: str, options: tuple[str, ...] = ()) -> list[str]:
    """ssh to the host with BatchMode (no password or host-key prompt can hang a run): ssh's
    `options`, then the host's SSH address, then the `command` run there."""
    assert h.ssh
    return [
        "ssh",
        "-o",
        "BatchMode=yes",
        "-o",
        f"ConnectTimeout={int(CONNECT_TIMEOUT_S * 5)}",
        *(["-F", h.ssh_config] if h.ssh_config else []),
        *options,
        h.ssh,
        *command,
    ]


SOCKET = "fio.sock"  # the ssh-mode server's Unix socket, in its pid file's directory on the host


def ssh_start_command(h: Host) -> list[str]:
    """Start the server on the host, listening on a Unix socket in a fresh directory there, and
    print that directory once the socket is there. Not a loopback port: fio binds its port with
    SO_REUSEPORT, so a second run's server on the host's port bound beside the first and the
    host's kernel handed each run's connections to either server. A socket of its own per run
    needs nothing on the host but sh, fio and coreutils (no free port to find), and a directory
    only its user can open keeps the host's other users from sending it jobs."""
    # A fresh directory per server: fio's --daemonize will not write a pid file that exists. The
    # daemon makes its socket after the command returns: wait for it (10 s), or say the server died.
    return ssh_command(
        h,
        "d=$(mktemp -d /tmp/iolab-fio-server-XXXXXX) || exit 1; "
        f'fio --server="sock:$d/{SOCKET}" --daemonize="$d/server.pid" || {{ rmdir "$d"; exit 1; }}; '
        f'i=0; while [ ! -S "$d/{SOCKET}" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; '
        f'if [ ! -S "$d/{SOCKET}" ]; then echo "fio --server made no socket at $d/{SOCKET} within 10 s" >&2; '
        f'kill "$(cat "$d/server.pid")" 2>/dev/null; rm -f "$d/server.pid"; rmdir "$d"; exit 1; fi; echo "$d"',
    )


def ssh_tunnel_command(h: Host, local_port: int, remote_dir: str) -> list[str]:
    """Tunnel local_port to the server's socket in remote_dir (ssh_start_command's); the caller
    appends the remote command that watches the server (ssh_watch_command)."""
    forward = f"127.0.0.1:{local_port}:{remote_dir}/{SOCKET}"
    return ssh_command(h, options=("-o", "ExitOnForwardFailure=yes", "-L", forward))


def ssh_watch_command(remote_dir: str) -> str:
    """The tunnel's remote command: wait until the session's input ends (iolab stopped the
    tunnel, or died and the kernel killed its ssh), then stop the server as ssh_stop_command does."""
    return f'cat >/dev/null; p="$(cat {remote_dir}/server.pid 2>/dev/null)" || exit 0; kill "$p"; ' + _STOP_WAIT.format(
        dir=remote_dir
    )


_STOP_WAIT = (
    'i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; '
    f'kill -9 "$p" 2>/dev/null; rm -f {{dir}}/server.pid {{dir}}/{SOCKET}; rmdir {{dir}}'
)


def ssh_stop_command(h: Host, remote_dir: str) -> list[str]:
    # fio's server exits some time after SIGTERM: wait for it (5 s), then kill it, so no
    # server that runs whatever job it is sent outlives the run.
    return ssh_command(h, f'p="$(cat {remote_dir}/server.pid)"; kill "$p"; ' + _STOP_WAIT.format(dir=remote_dir))


@dataclass
class Servers:
    """The fio servers of a run: where the client connects to each host (the tunnel's local
    end in ssh mode) and what iolab started (stopped by `close`)."""

    endpoints: dict[str, tuple[str, int]] = field(default_factory=dict)  # host name -> (address, port)
    started: list[str] = field(default_factory=list)  # what close() stops, for the manifest
    _local: list[tuple[subprocess.Popen, Path]] = field(default_factory=list)  # (server, its pid file)
    _tunnels: list[subprocess.Popen] = field(default_factory=list)
    _remote: list[tuple[Host, str]] = field(default_factory=list)  # (host, pid file directory there)
    _tunnel_of: dict[str, subprocess.Popen] = field(default_factory=dict)  # host name -> its tunnel's ssh
    _heard: dict[str, bytes] = field(default_factory=dict)  # what each tunnel's ssh said so far
    _asked: set[str] = field(default_factory=set)  # hosts whose socket forward_refused looked for

    def forward_refused(self, h: Host) -> str | None:
        """Why the host's sshd refuses the tunnel's forward, or None. sshd takes the tunnel's session
        and refuses only each connection through it, so the tunnel seems up and every probe of the
        server is dropped as it connects: before, the run waited for the whole probe budget and
        blamed the server. ssh says 'channel N: open failed: connect failed: open failed' on its
        standard error both for a forward sshd does not allow and for a socket that is not there,
        so the socket is looked for on the host once: there, the forward is what sshd refused."""
        proc = self._tunnel_of.get(h.name)
        if proc is None or proc.stderr is None or h.name in self._asked:
            return None
        os.set_blocking(proc.stderr.fileno(), False)  # what ssh said so far, never a wait for more
        try:
            got = proc.stderr.read()
        except OSError:
            got = None
        heard = self._heard[h.name] = self._heard.get(h.name, b"") + (got or b"")
        failed = _OPEN_FAILED_RE.search(heard.decode(errors="replace"))
        remote_dir = next((d for host, d in self._remote if host.name == h.name), None)
        if failed is None or remote_dir is None:
            return None
        self._asked.add(h.name)
        there = subprocess.run(
            ssh_command(h, f"test -S {remote_dir}/{SOCKET}"),
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        if there.returncode != 0:
            return None  # not there (the server ended): the probe says what it found
        return (
            f"host {h.name}: the sshd of {h.ssh} refuses the SSH tunnel to the fio server iolab started there: "
            f"ssh said '{failed.group(0).strip()}' for the probe's connection through it, though the server's socket "
            f"{remote_dir}/{SOCKET} is there. iolab reaches that server through a forward of its Unix socket (ssh -L "
            "PORT:SOCKET), which sshd allows only with `AllowStreamLocalForwarding yes` (its default) or `local` or "
            "`all`, and not under `DisableForwarding yes`: set that in the host's sshd_config (or in the Match block "
            "that applies to this user), reload sshd, and run again. The server was stopped; nothing was measured."
        )

    def note_run(self, run_dir: Path) -> None:
        """Name the run in each local server's pid file (what `iolab runs` shows of a leftover)."""
        for _, pf in self._local:
            try:
                rec = json.loads(pf.read_text())
                if rec.get("run_dir") is None:
                    rec["run_dir"] = str(run_dir)
                    pf.write_text(json.dumps(rec))
            except (OSError, ValueError):
                pass

    def close(self) -> None:
        for h, remote_dir in self._remote:
            try:  # best effort: a host that is gone has no server left to stop
                subprocess.run(
                    ssh_stop_command(h, remote_dir),
                    capture_output=True,
                    timeout=PROBE_TIMEOUT_S,
                    stdin=subprocess.DEVNULL,
                )
            except subprocess.TimeoutExpired:
                pass
        for t in self._tunnels:
            t.terminate()
            try:
                t.wait(timeout=5)
            except subprocess.TimeoutExpired:
                t.kill()
        for proc, pf in self._local:
            stop_pid(proc.pid)
            proc.wait()
            pf.unlink(missing_ok=True)
        self._tunnels.clear()
        self._local.clear()
        self._remote.clear()


def start_servers(hosts: list[Host], fio: str = "fio") -> Servers:
    """Reuse the fio server each host already runs, or start one: locally bound to the host's
    own address when this machine owns it, or over SSH. A host with neither is refused. A
    server an earlier iolab left behind is stopped first, not reused."""
    servers = Servers()
    servers.started.extend(stop_leftovers())
    try:
        for h in hosts:
            if h.ssh:
                _start_ssh(h, servers)
            elif answers(h.address, h.port):
                servers.endpoints[h.name] = (h.address, h.port)
            elif is_local_address(h.address):
                _start_local(h, servers, fio)
            else:
                raise IolabError(
                    f"host {h.name}: no fio server answers there, and iolab can start one only on an address of "
                    f"this machine or over SSH. Start it on that host with `fio --server={server_arg(h.address, h.port)}`, "
                    'or give the host an `ssh = "user@host"` field in a hosts file.'
                )
    except BaseException:
        servers.close()
        raise
    return servers


def _wait_answer(
    address: str,
    port: int,
    what: str,
    servers: Servers,
    proc: subprocess.Popen | None = None,
    failed: str = "ssh exited ({code}) before the tunnel was up; ssh said: {said}",
    output=None,
) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if answers(address, port, timeout=0.5):
            return
        if proc is not None and proc.poll() is not None:
            said = _said(output or proc.stderr) or "(nothing)"
            raise EngineError(f"{what}: " + failed.format(code=proc.returncode, said=said) + ".")
        time.sleep(0.1)
    raise EngineError(f"{what}: started, but nothing answered on {address}:{port} within {START_TIMEOUT_S:g} s.")


def _said(out) -> str:
    if out is None:
        return ""
    if hasattr(out, "seek"):  # a file (a long-lived server's output must not fill a pipe)
        out.seek(0)
    return " ".join(out.read().decode(errors="replace").split())[-300:]


def _start_local(h: Host, servers: Servers, fio: str) -> None:
    # Not --daemonize: a daemon is no child of iolab, and could not die with it.
    said = tempfile.TemporaryFile()  # fio says why it cannot serve on stdout; a file cannot fill up like a pipe
    proc = subprocess.Popen(
        [fio, f"--server={server_arg(h.address, h.port)}"],
        stdin=subprocess.DEVNULL,
        stdout=said,
        stderr=said,
        start_new_session=True,
        preexec_fn=die_with_parent(),
    )
    pf = record(proc.pid, h.address, h.port)
    servers._local.append((proc, pf))
    servers.started.append(f"fio server on {h.name} (pid {proc.pid}, pid file {pf})")
    try:
        _wait_answer(
            h.address, h.port, f"host {h.name}", servers, proc, "`fio --server` failed (exit {code}): {said}", said
        )
    finally:
        said.close()
    servers.endpoints[h.name] = (h.address, h.port)


def ssh_how(h: Host) -> str:
    """What to try by hand when ssh to the host fails."""
    return (
        f"iolab runs ssh with BatchMode=yes (key or agent authentication, no password or host-key prompt): check that "
        f"`{' '.join(ssh_command(h, 'fio --version'))}` works from this machine without a prompt"
    )


def _start_ssh(h: Host, servers: Servers) -> None:
    with socket.socket() as s:  # a free local port for the tunnel
        s.bind(("127.0.0.1", 0))
        local_port = s.getsockname()[1]
    start = ssh_start_command(h)
    how = ssh_how(h)
    try:
        out = subprocess.run(start, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise EngineError(
            f"host {h.name}: the ssh client is not installed on this machine (needed by `ssh = {h.ssh!r}`)."
        ) from None
    except subprocess.TimeoutExpired:
        raise EngineError(
            f"host {h.name}: starting fio over SSH ({h.ssh}) did not finish within {PROBE_TIMEOUT_S:g} s; {how}."
        ) from None
    remote_dir = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    if out.returncode != 0 or not _REMOTE_DIR_RE.match(remote_dir):
        said = " ".join(out.stderr.split())[-300:] or "(nothing)"
        raise EngineError(
            f"host {h.name}: starting `fio --server` over SSH as {h.ssh} failed (ssh exit {out.returncode}); "
            f"ssh said: {said}. {how}, and that fio is on that host's PATH."
        )
    servers._remote.append((h, remote_dir))
    servers.started.append(
        f"fio server on {h.ssh} listening on its own Unix socket {remote_dir}/{SOCKET} (pid file {remote_dir}/server.pid)"
    )
    # The tunnel's session watches the server: it ends when iolab stops it or dies (the
    # kernel then kills ssh), and the remote command stops the server when its input ends.
    proc = subprocess.Popen(
        [*ssh_tunnel_command(h, local_port, remote_dir), ssh_watch_command(remote_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=die_with_parent(),
    )
    servers._tunnels.append(proc)
    servers._tunnel_of[h.name] = proc
    servers.started.append(f"SSH tunnel 127.0.0.1:{local_port} -> {h.ssh}:{remote_dir}/{SOCKET}")
    _wait_answer("127.0.0.1", local_port, f"SSH tunnel to {h.ssh}", servers, proc)
    servers.endpoints[h.name] = ("127.0.0.1", local_port)


def remote_version(endpoint: tuple[str, int], fio: str = "fio", b: Budget | None = None, refused=lambda: None) -> Probe:
    """The fio version a server reports when a client connects (a 4 KiB null job), tried
    again until the probe budget is spent, or until `refused()` says why it cannot pass (fioprobe.py)."""
    return probe(endpoint, fio, b or budget(), refused=refused)


def check_versions(
    hosts: list[Host], servers: Servers, local: str, fio: str = "fio"
) -> tuple[list[str], dict[str, str | None]]:
    """fio's client and servers exchange binary structures: every server must run the
    client's version. The servers are probed at once (a run's start does not wait for one
    after another); returns what the probes took, for the run's notes, and the clock each
    host's server chose itself (host name -> 'cpu' or None; fioprobe.server_clock)."""
    b = budget(concurrent=len(hosts))
    with ThreadPoolExecutor(max_workers=max(1, len(hosts))) as pool:
        futures = [
            pool.submit(remote_version, servers.endpoints[h.name], fio, b, refused=partial(servers.forward_refused, h))
            for h in hosts
        ]
        probes = [f.result() for f in futures]  # the first host's error first, as when probed in turn
    for h, p in zip(hosts, probes):
        if p.version != local:
            raise IolabError(
                f"host {h.name} runs {p.version}, this machine runs {local}; fio's client/server protocol "
                "needs the same version everywhere. Install the same fio on every host."
            )
    clocks = {h.name: p.clock for h, p in zip(hosts, probes)}
    return [
        f"fio server probe (a 4 KiB null job reporting the server's fio version): each host may take {b.seconds:g} s "
        f"({b.why}); "
        + "; ".join(
            f"{h.name} answered in {p.seconds:.1f} s ({counted(p.attempts, 'attempt')})"
            + (f", its server chose clocksource={p.clock} itself, which its jobs then name" if p.clock else "")
            for h, p in zip(hosts, probes)
        )
    ], clocks


# ---------------------------------------------------------------------------------------
# The host's own view of its target (ssh mode only: fio's server runs jobs, nothing else)
# ---------------------------------------------------------------------------------------


def ssh_runner(h: Host):
    """run_command's signature, running argv on the host over SSH."""
    from iolab.targets.host import run_command

    return lambda argv, timeout=60.0: run_command(ssh_command(h, shlex.join(argv)), timeout=timeout)


def read_identity_over_ssh(h: Host, path: str) -> dict:
    """The target as the host sees it: a file by device, inode and size; a block device by
    model, serial, WWN and size (lsblk). {"not_read": why} when the host did not say."""
    run = ssh_runner(h)
    st = run(["stat", "-L", "-c", "%d %i %s %F", path], timeout=PROBE_TIMEOUT_S)
    if not st.ok:  # e.g. a file the host's fio has not laid out yet: nothing to compare on resume
        return {"read_on": h.ssh, "path": path, "not_read": st.summary(200)}
    dev, inode, size, kind = st.text.strip().split(" ", 3)
    if kind != "block special file":
        return {"read_on": h.ssh, "kind": "file", "path": path, "dev": int(dev), "inode": int(inode), "size": int(size)}
    r = run(["lsblk", "-J", "-d", "-b", "-o", "MODEL,SERIAL,WWN,SIZE", path], timeout=PROBE_TIMEOUT_S)
    try:
        dev_info = json.loads(r.text)["blockdevices"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return {"read_on": h.ssh, "kind": "block", "path": path, "not_read": r.summary(200)}
    return {
        "read_on": h.ssh,
        "kind": "block",
        "path": path,
        "model": dev_info.get("model"),
        "serial": dev_info.get("serial"),
        "wwid": dev_info.get("wwn"),
        "capacity": dev_info.get("size"),
    }
