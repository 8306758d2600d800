"""What a hosts run holds on an SSH host for as long as it lasts, so that no second run writes the
host's target meanwhile: an flock kept by an SSH session, which waits for its input to end (when
iolab closes it, or dies and the kernel closes the pipe, the command exits and the host's kernel
drops the lock).

  a device or file     an flock on the target itself (a device's on its kernel node, LOCKED), which a
                       local iolab run on that host takes too (targets/lock.py)
  an NBD export        no path on the host: an flock on the lock files a local iolab run on that host
                       takes for the export (claim_nbd), one per server endpoint its URI reaches as
                       the host reaches it (the name resolved there, every address of the host as
                       `localhost`, a Unix socket by its real path there), in the lock directory a
                       local run there uses (IOLAB_LOCK_DIR when the host's shell sets it, else
                       /run/iolab/locks, else a private per-user directory under $TMPDIR or /tmp),
                       each holding the run's record as a local lock file does. A second run on the
                       export through that host, from this machine or another, and a local iolab run
                       on the host are refused with a local run's paragraph. Not excluded: runs that
                       reach one export through two hosts (a server both reach at an address of
                       neither), whose locks are each on its own host, nor a run through a host whose
                       non-interactive shell sets another IOLAB_LOCK_DIR than a local run there uses.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import socket
import subprocess
import time
import urllib.parse

from iolab.core.errors import EngineError, RefusedError
from iolab.engines.hostlist import Host
from iolab.engines.hosts import PROBE_TIMEOUT_S, ssh_command, ssh_runner
from iolab.targets import Target
from iolab.targets.lock import lock_name, taken
from iolab.targets.model import EndpointView
from iolab.targets.spec import nbd_endpoints

# A block node's device as the host's kernel knows it, found by its major:minor (as a local run finds
# it, facts.block_dev): a node of another name (made by mknod, a bind mount) is then the device it
# opens, whatever it is called. `kdev NODE` sets num (MAJOR:MINOR), sys (the device's sysfs directory,
# empty when the kernel lists none) and node (/dev/NAME when that node opens the device, else NODE).
# Both the run's flock (`locked`: every node of one device is one lock, held by RemoteHold and tested
# by the check; else the path resolved) and the check's block-device tests use it.
LOCKED = r"""
devnum() { printf '%d:%d' "0x$(stat -L -c %t "$1")" "0x$(stat -L -c %T "$1")"; }
kdev() {
  num=$(devnum "$1"); node=$1
  sys=$(readlink -f "/sys/dev/block/$num" 2>/dev/null); [ -n "$sys" ] && [ -d "$sys" ] || sys=
  [ -n "$sys" ] && [ -b "/dev/${sys##*/}" ] && [ "$(devnum "/dev/${sys##*/}")" = "$num" ] && node=/dev/${sys##*/}
  return 0
}
locked() {
  r=$(readlink -f -- "$1" 2>/dev/null); [ -n "$r" ] || r=$1
  if [ -b "$r" ]; then kdev "$r"; r=$node; fi
  printf '%s' "$r"
}
"""


class RemoteHold:
    """An flock on an ssh host's target, kept by an SSH session for as long as the run lasts.
    The remote command waits for its input to end: when iolab closes it, or dies and the kernel
    closes the pipe, the command exits and the host's kernel drops the lock."""

    def __init__(self, h: Host, t: Target):
        self.host, self.target = h, t
        self._code: int | None = None  # the remote command's exit, once it has ended
        self._err = ""
        cmd = ssh_command(h, shlex.join(self.argv()))
        try:
            self.proc: subprocess.Popen | None = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        except FileNotFoundError:
            raise EngineError("the ssh client is not installed on this machine") from None
        out = self.proc.stdout
        assert out is not None  # stdout=PIPE
        ready, _, _ = select.select([out], [], [], PROBE_TIMEOUT_S * 3)
        line = out.readline() if ready else ""
        if line.strip() == "locked":
            return
        self.release()
        said = " ".join(line.split() + (self._err or "").split())[-300:] or "(nothing)"
        if self._code == 75:
            raise RefusedError(self.refusal(line))
        raise EngineError(
            f"host {h.name}: cannot lock the target {t.path} on {h.ssh} for the run (exit {self._code}): {said}. "
            "iolab holds an flock on an SSH host's target (util-linux flock) so no second run writes it meanwhile."
        )

    def argv(self) -> list[str]:
        """The command the SSH session runs: it prints `locked` once it holds the lock, then waits
        for its input to end; exit 75 when another holds it."""
        hold = f'{LOCKED}exec flock -n -o -E 75 -- "$(locked "$1")" sh -c {shlex.quote(_HOLD)}'
        return ["sh", "-c", hold, "sh", self.target.path]

    def refusal(self, said: str) -> str:
        """The paragraph of a second run, refused because another holds the lock (`said`: the
        command's first line)."""
        t, h = self.target, self.host
        return (
            f"Refusing to write to {t.path} on host {h.name} ({h.ssh}): another iolab run holds it locked "
            "there (flock) until it ends. Wait for it, or choose another target. Nothing was run."
        )

    def release(self) -> None:
        p, self.proc = self.proc, None
        if p is None:
            return
        try:
            _, self._err = p.communicate(timeout=PROBE_TIMEOUT_S * 3)  # closes the input: the lock goes
        except subprocess.TimeoutExpired:
            p.kill()
            _, self._err = p.communicate()
        self._code = p.returncode


_HOLD = "echo locked; exec cat >/dev/null"


# ---------------------------------------------------------------------------------------
# NBD exports
# ---------------------------------------------------------------------------------------

# $1 the URI's host name (empty for a Unix socket), $2 its socket (empty for TCP). Prints the
# socket's real path, the name's addresses (getent: getaddrinfo, as a local run resolves it), the
# host's own interface addresses (ip, else hostname -I), then `done`.
_VIEW = r"""
[ -z "$2" ] || printf 'socket\t%s\n' "$(readlink -f -- "$2" 2>/dev/null || printf %s "$2")"
[ -z "$1" ] || getent ahosts "$1" 2>/dev/null | awk '{print "addr\t" $1}' | sort -u
if command -v ip >/dev/null 2>&1; then ip -o addr show 2>/dev/null | awk '{split($4, a, "/"); print "own\t" a[1]}'
else for a in $(hostname -I 2>/dev/null); do printf 'own\t%s\n' "$a"; done; fi
echo done
"""

# $1 check|hold, $2 the holder's record (JSON, hold), then the lock files' names. Picks the lock
# directory a local iolab run on the host uses (only one that this user or root alone can write, as
# lock.py requires); check prints `held<TAB>FILE<TAB>RECORD` for each lock another holds, then `done`;
# hold takes every lock (on held: the held line, exit 75), writes the record into each, prints
# `locked`, writes each line read as the new record, and at the end of its input removes the files
# while still holding them (as a local run's release does) and exits, which drops the locks.
_LOCKS = r"""
set -u
mode=$1; rec=$2; shift 2
safe() {
  [ -d "$1" ] && [ ! -L "$1" ] && [ -w "$1" ] || return 1
  o=$(stat -c %u "$1"); m=$(stat -c %a "$1")
  { [ "$o" = "$(id -u)" ] || [ "$o" = 0 ]; } && { [ $((0$m & 022)) = 0 ] || [ $((0$m & 01000)) != 0 ]; }
}
pick() { mkdir -p -m "$2" "$1" 2>/dev/null; safe "$1" && d=$1; }
d=
if [ -n "${IOLAB_LOCK_DIR:-}" ]; then pick "$IOLAB_LOCK_DIR" 700
else pick /run/iolab/locks 755 || pick "${TMPDIR:-/tmp}/iolab-locks-$(id -u)" 700; fi
[ -n "$d" ] || { echo "no lock directory that only $(id -un) or root can write on the host" >&2; exit 1; }
held() {
  for f in "$@"; do
    [ -f "$d/$f" ] || continue
    flock -n -E 75 "$d/$f" true 2>/dev/null
    [ $? = 75 ] && printf 'held\t%s\t%s\n' "$d/$f" "$(head -c 4000 "$d/$f" | tr '\t\n' '  ')"
  done
  return 0
}
if [ "$mode" = check ]; then held "$@"; echo done; exit 0; fi
command -v flock >/dev/null 2>&1 || { echo "flock (util-linux) is not installed on the host" >&2; exit 1; }
fd=3
for f in "$@"; do
  i=0
  while :; do
    if [ -L "$d/$f" ] || { [ -e "$d/$f" ] && { [ ! -f "$d/$f" ] || [ "$(stat -c %h "$d/$f")" != 1 ]; }; }; then
      echo "lock file $d/$f is not a file of its own (a link?); iolab will not write to it" >&2; exit 1
    fi
    eval "exec $fd>>\"\$d/\$f\""
    # waits a moment: another run's check probes the lock (flock -n), briefly taking it
    flock -w 2 -E 75 "$fd" || { held "$f"; exit 75; }
    # removed by the run before between the open and the lock: lock the file at the path now
    [ "$(stat -c %i "$d/$f" 2>/dev/null)" = "$(stat -L -c %i "/proc/$$/fd/$fd")" ] && break
    i=$((i + 1)); [ $i -lt 5 ] || { echo "lock file $d/$f keeps being replaced" >&2; exit 1; }
  done
  fd=$((fd + 1))
done
for f in "$@"; do printf '%s' "$rec" > "$d/$f"; done
echo locked
while IFS= read -r rec; do for f in "$@"; do printf '%s' "$rec" > "$d/$f"; done; done
for f in "$@"; do rm -f "$d/$f"; done
"""

# One shell's descriptors 3-9 hold the locks (a POSIX shell redirects single digits only).
_MAX_ENDPOINTS = 7


def endpoint_view(h: Host, uri: str) -> EndpointView:
    """How the host reaches the export's server (its name resolved there, its own addresses, the
    socket's real path there), asked over SSH."""
    parts = urllib.parse.urlsplit(uri)
    name = (parts.hostname or "") if parts.scheme == "nbd" else ""
    sock = uri.partition("?socket=")[2] if parts.scheme == "nbd+unix" else ""
    r = ssh_runner(h)(["sh", "-c", _VIEW, "sh", name, sock], timeout=PROBE_TIMEOUT_S)
    fields = [line.split("\t", 1) for line in r.text.splitlines()]
    if not r.ok or ["done"] not in fields:
        raise EngineError(
            f"host {h.name}: asking over SSH as {h.ssh} how it reaches {uri}, to lock the export there, failed "
            f"({r.summary(300)}). Nothing was run or written."
        )
    return EndpointView(
        addresses=tuple(f[1] for f in fields if f[0] == "addr" and len(f) == 2),
        own=frozenset(f[1] for f in fields if f[0] == "own" and len(f) == 2),
        socket=next((f[1] for f in fields if f[0] == "socket" and len(f) == 2), ""),
    )


def nbd_lock_names(h: Host, t: Target) -> list[str]:
    """The lock files (names in the host's lock directory) a local iolab run on the host takes for
    the export: one per endpoint its URI reaches as the host reaches it."""
    names = [lock_name(f"nbd-{e}") for e in nbd_endpoints(t.path, endpoint_view(h, t.path))]
    if len(names) > _MAX_ENDPOINTS:
        raise EngineError(
            f"host {h.name}: {t.path} reaches {len(names)} server addresses there; iolab locks at most "
            f"{_MAX_ENDPOINTS} on a host. Name the server by one address."
        )
    return names


def refuse_held_nbd(h: Host, t: Target) -> None:
    """RefusedError, with a local run's paragraph, when another run holds the export's lock on the
    host (a hosts run through it, or a local run there): the check before anything is started."""
    r = ssh_runner(h)(["sh", "-c", _LOCKS, "sh", "check", "", *nbd_lock_names(h, t)], timeout=PROBE_TIMEOUT_S)
    fields = [line.split("\t", 2) for line in r.text.splitlines()]
    if not r.ok or ["done"] not in fields:
        raise EngineError(
            f"host {h.name}: looking over SSH as {h.ssh} for another run's lock on {t.path} failed "
            f"({r.summary(300)}). Nothing was run or written."
        )
    for f in fields:
        if f[0] == "held" and len(f) == 3:
            raise RefusedError(_held(t, f[1], f[2]))


def _held(t: Target, path: str, record: str) -> str:
    try:
        holder = json.loads(record or "{}")
    except ValueError:
        holder = {}
    return taken(t, holder if isinstance(holder, dict) else {}, path)


class NbdHold(RemoteHold):
    """The export's locks on the host (see the module's docstring), held for the run."""

    def __init__(self, h: Host, t: Target):
        self.names = nbd_lock_names(h, t)
        self.record = {
            "pid": os.getpid(),
            "machine": socket.gethostname(),
            "target": t.spec,
            "path": t.path,
            "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        super().__init__(h, t)

    def argv(self) -> list[str]:
        return ["sh", "-c", _LOCKS, "sh", "hold", json.dumps(self.record), *self.names]

    def refusal(self, said: str) -> str:
        f = said.rstrip("\n").split("\t", 2)
        if f[0] == "held" and len(f) == 3:
            return _held(self.target, f[1], f[2])
        return taken(self.target, {}, f"{self.names[0]} on host {self.host.name}")

    def note_run(self, run_id: str, run_dir) -> None:
        """Name the run in the locks' record, as a local claim's note_run does."""
        self.record.update(run_id=run_id, run_dir=str(run_dir))
        p = self.proc
        if p is not None and p.stdin is not None:
            try:
                p.stdin.write(json.dumps(self.record) + "\n")
                p.stdin.flush()
            except OSError:
                pass  # the session ended: release() says nothing more, the run goes on under its check
