"""Write safety for the targets of a hosts run, checked where they are written.

A host whose address is this machine's (loopback or any local interface's, found by binding
to it) writes a path of this machine: that path gets exactly a local run's checks
(targets.check_safe_to_write, on the path resolved and a block device taken as one) and its
claim (targets.claim), held until the run ends. An ssh host's target is checked on that
host over SSH by a POSIX shell script (iolab need not be installed there; the tools are
util-linux's and the kernel's /proc and /sys): the path is resolved there first, so a
block device is recognised by what it is, never by how its name is spelt. A host reached
through fio's server alone cannot be checked at all (the server runs jobs and reports IO
statistics only), so its target is refused unless --allow-unsafe-target says the user
answers for it.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import urllib.parse
from dataclasses import replace

from iolab import targets
from iolab.core.errors import EngineError, IolabError, RefusedError
from iolab.engines.hostholds import LOCKED, refuse_held_nbd  # LOCKED: the check tests the lock a run holds
from iolab.engines.hostlist import Host
from iolab.engines.hosts import (
    PROBE_TIMEOUT_S,
    is_local_address,
    refuse_one_server_twice,
    refuse_wildcards,
    ssh_command,
    ssh_how,
    ssh_runner,
)
from iolab.targets import ALLOW_SYSTEM_DISK, ALLOW_UNSAFE, Problem, Target
from iolab.targets.files import check_space, no_space
from iolab.targets.lock import TargetClaim
from iolab.targets.safety import judge, nbd_problems

# $1 mode (check|create), $2 path, $3 size in bytes. Prints `real PATH`, `kind
# block|file|missing|other`, one `problem<TAB>CHECK<TAB>EVIDENCE` per failed check, for a file
# `space<TAB>BYTES IT STILL NEEDS<TAB>BYTES FREE ON ITS FILESYSTEM` (df), then `done`.
SCRIPT = (
    LOCKED
    + r"""
set -u
mode=$1; p=$2; size=${3:-}
real=$(readlink -f -- "$p" 2>/dev/null); [ -n "$real" ] || real=$p
printf 'real\t%s\n' "$real"
prob() { printf 'problem\t%s\t%s\n' "$1" "$2"; }
sig() {
  out=$(blkid -p -o export "$1" 2>&1); rc=$?
  case $rc in
    0) t=$(printf '%s\n' "$out" | sed -n 's/^TYPE=//p; s/^PTTYPE=/partition table /p' | tr '\n' ' ')
       prob signature "$1 carries ${t:-an unnamed signature}(found by blkid -p on the host)" ;;
    2) ;;
    8) prob signature "$1 carries several conflicting signatures (blkid -p on the host)" ;;
    *) prob signature "cannot probe $1 for signatures on the host (blkid: $(printf '%s' "$out" | tr '\n' ' '))" ;;
  esac
}
opened() {
  pids=$(find /proc/[0-9]*/fd -lname "$1" 2>/dev/null | cut -d/ -f3 | sort -u | tr '\n' ' ')
  [ -z "$pids" ] || prob open "$1 is open by processes $pids"
}
side=$real.iolab
foreign_side() { [ -L "$side" ] || { [ -e "$side" ] && ! grep -qs '^iolab target file, inode ' "$side"; }; }
room() {  # $1: the file, or its directory when it is to be made
  [ -n "$size" ] || return 0
  have=0; [ -f "$real" ] && have=$(( $(stat -c %b "$real") * $(stat -c %B "$real") ))
  free=$(df -P -k -- "$1" 2>/dev/null | awk 'NR==2 {print $4}')
  [ -n "$free" ] && printf 'space\t%s\t%s\n' "$((size - have))" "$((free * 1024))"
}
if [ "$mode" = create ]; then
  [ -e "$real" ] && { echo done; exit 0; }
  foreign_side && { echo "$side exists and is not an iolab mark" >&2; exit 1; }
  ( set -C; : > "$real" ) || exit 1
  fallocate -l "$3" "$real" 2>/dev/null || truncate -s "$3" "$real" || { rm -f "$real"; exit 1; }
  echo "iolab target file, inode $(stat -c %i "$real")" > "$side" || { rm -f "$real"; exit 1; }
  echo done; exit 0
fi
# Another iolab run holds the target (an flock on it, kept by that run's SSH session).
if [ -e "$real" ] && command -v flock >/dev/null 2>&1; then
  flock -n -E 75 -- "$(locked "$real")" true 2>/dev/null
  [ $? = 75 ] && prob held "$real is locked on the host by another iolab run (flock), which holds it until it ends"
fi
if [ -b "$real" ]; then
  echo 'kind	block'
  # Its mounts, partitions and holders are looked up under the kernel's name (kdev), never the node's:
  # a node of another name would have them looked up under a name the kernel does not know.
  kdev "$real"
  [ -n "$sys" ] || { sys=/sys/dev/block/$num  # not there: every sysfs lookup below finds nothing
    prob 'unknown device' "$real (device $num) is not a block device known to the host's kernel (nothing in /sys/dev/block)"; }
  name=${sys##*/}
  [ "$(cat "$sys/ro" 2>/dev/null)" = 1 ] && prob read-only "$real is read-only on the host (ro=1)"
  parts=$(for d in "$sys"/*/partition; do [ -e "$d" ] && basename "$(dirname "$d")"; done | tr '\n' ' ')
  [ -n "$parts" ] && prob partitions "$real holds partitions $parts"
  on=""
  for n in $name $parts; do
    d=$(cat "/sys/class/block/$n/dev" 2>/dev/null) || continue
    on="$on$(awk -v d="$d" '$3 == d {printf "%s ", $5}' /proc/self/mountinfo)"
    grep -q "^/dev/$n " /proc/swaps 2>/dev/null && on="$on(swap /dev/$n) "
  done
  [ -n "$on" ] && prob mounted "$real or a partition of it is in use on the host: $on"
  hold=$(ls "$sys/holders" "$sys"/*/holders 2>/dev/null | grep -v '^/' | grep -v '^$' | tr '\n' ' ')
  [ -n "$hold" ] && prob holders "in use by the host's kernel through $hold(device-mapper/RAID)"
  sig "$real"
  opened "$real"
  [ "$node" = "$real" ] || opened "$node"
elif [ -e "$real" ]; then
  if [ ! -f "$real" ]; then
    echo 'kind	other'; prob 'not a regular file' "$real is not a regular file or block device on the host"
  else
    echo 'kind	file'
    [ -w "$real" ] || prob read-only "$real cannot be written on the host"
    size=$(stat -c %s "$real"); ino=$(stat -c %i "$real")
    if [ "$size" -gt 0 ]; then
      mark=no
      [ "$(cat "$real.iolab" 2>/dev/null)" = "iolab target file, inode $ino" ] && mark=yes
      if [ $mark = no ] && command -v getfattr >/dev/null 2>&1; then
        [ "$(getfattr --only-values -n user.iolab "$real" 2>/dev/null)" = "created by iolab" ] && mark=yes
      fi
      if [ $mark = no ] && command -v python3 >/dev/null 2>&1; then
        python3 -c 'import os, sys; sys.exit(os.getxattr(sys.argv[1], "user.iolab") != b"created by iolab")' "$real" 2>/dev/null && mark=yes
      fi
      [ $mark = yes ] || prob 'not created by iolab' "$real holds $size bytes and carries no iolab mark (xattr user.iolab or sidecar $real.iolab), so it may be someone's data"
      sig "$real"
    fi
    loops=$(losetup -n -O NAME -j "$real" 2>/dev/null | tr '\n' ' ')
    [ -n "$loops" ] && prob 'loop backing' "$real backs $loops"
    grep -q "^$real " /proc/swaps 2>/dev/null && prob mounted "$real is active swap on the host"
    opened "$real"
    room "$real"
  fi
else
  echo 'kind	missing'
  [ -w "$(dirname "$real")" ] || prob read-only "$real cannot be created on the host: its directory is not writable"
  room "$(dirname "$real")"
  foreign_side && prob sidecar "$side exists and is not an iolab mark, and iolab records there that it made $real"
fi
echo done
"""
)

_OVERRIDE = {"read-only": None, "held": None, "sidecar": None, "mounted": ALLOW_SYSTEM_DISK}


def check_split_legs(
    target: Target, legs, allow_unsafe: bool, allow_system_disk: bool, listen_any: bool, claim: bool = True
) -> tuple[list[TargetClaim], dict, list[str], list[str]]:
    """The checks a split round's legs pass before anything is started: every extra path to the
    drive as the target itself (the run's start checks and claims the target's own path), or every
    host: no wildcard address without --listen-any, no fio server named twice, each host's target
    where it is written (check_host_legs). `claim`: False for `iolab plan`, which claims nothing."""
    if legs[0].host is None:
        for leg in legs:  # every path writes the drive: each must pass the checks the target passes
            if leg.target.path != target.path:
                targets.check_safe_to_write(leg.target, allow_unsafe, allow_system_disk)
        return [], {}, [], []
    refuse_wildcards([leg.host for leg in legs if leg.host], listen_any)
    refuse_one_server_twice([leg.host for leg in legs if leg.host])
    return check_host_legs(legs, allow_unsafe, allow_system_disk, claim)


def check_host_legs(
    legs, allow_unsafe: bool, allow_system_disk: bool, claim: bool = True
) -> tuple[list[TargetClaim], dict, list[str], list[str]]:
    """Check every host leg's target where it is written. Returns (the claims held on this
    machine's paths, none unless `claim`, {leg name: the Target to prepare on this machine}, the
    checks overridden, how each host was checked). RefusedError names the host and what failed
    there."""
    claims: list[TargetClaim] = []
    local: dict[str, Target] = {}
    overridden: list[str] = []
    how: list[str] = []
    unchecked = []
    try:
        for leg in legs:
            h: Host = leg.host
            if h.ssh and leg.target.kind == "nbd":
                overridden += [
                    f"{leg.name}: {o}" for o in check_nbd_over_ssh(h, leg.target, allow_unsafe, allow_system_disk)
                ]
                refuse_held_nbd(h, leg.target)
                how.append(
                    f"{leg.name}: its target {leg.target.path} was asked of its NBD server from {h.ssh} over SSH "
                    "(nbdinfo --can write) and is locked there (flock on the lock files a local run there takes)"
                )
            elif h.ssh:
                overridden += [
                    f"{leg.name}: {o}" for o in check_over_ssh(h, leg.target, allow_unsafe, allow_system_disk)
                ]
                how.append(
                    f"{leg.name}: its target {leg.target.path} was checked on {h.ssh} over SSH and is locked there (flock)"
                )
            elif is_local_address(h.address):
                t = local_target(leg.target)
                if claim and not any(c.target.path == t.path for c in claims):  # two servers may share a path
                    claims.append(targets.claim(t))
                overridden += [
                    f"{leg.name} (this machine): {o}"
                    for o in targets.check_safe_to_write(t, allow_unsafe, allow_system_disk)
                ]
                if t.kind == "file":  # room for it, as a local run's file target (runstart.admit)
                    check_space(t)
                local[leg.name] = t
                how.append(f"{leg.name}: an address of this machine; its target {t.path} was checked and locked here")
            else:
                unchecked.append(leg)
        if unchecked and not allow_unsafe:
            raise RefusedError(
                f"Refusing to write to {'; '.join(f'{leg.target.path} on {leg.name}' for leg in unchecked)}: "
                "iolab cannot check a target on a host it reaches through fio's server only (the server runs the "
                "jobs it is sent and reports IO statistics, nothing about files, devices, mounts or signatures). "
                'Give each such host an `ssh = "user@host"` field in a hosts file (iolab then checks its target '
                f"there), or, if every listed target holds nothing you need, pass {ALLOW_UNSAFE} (DESTROYS DATA "
                "there). Nothing was run or written."
            )
        for leg in unchecked:
            overridden.append(
                f"{leg.name}: its target {leg.target.path} was not checked (reached through fio's "
                f"server only) (overridden by {ALLOW_UNSAFE})"
            )
            # said here too: the report's "where each host's target was checked:" ended in nothing
            how.append(f"{leg.name}: nowhere (reached through fio's server only; written under {ALLOW_UNSAFE})")
    except BaseException:
        for c in claims:
            c.release()
        raise
    return claims, local, overridden, how


def local_target(t: Target) -> Target:
    """The leg's target on this machine, resolved: a block device is checked and claimed as a
    device whatever its path says (a symlink, `//dev/x`), a file by its real path. An NBD URI is
    no path of this machine: kept as it is (realpath made it CWD/nbd:/HOST:PORT/EXPORT)."""
    if t.kind not in ("block", "file"):
        return t
    real = os.path.realpath(t.path)
    try:
        if stat.S_ISBLK(os.stat(real).st_mode):
            # read with the spec's ?size=, which it tests (and which it may not exceed)
            query = "?" + urllib.parse.urlencode(t.options) if t.kind == "block" and t.options else ""
            return t if t.kind == "block" and t.path == real else targets.parse_target(real + query)
    except OSError:
        pass  # missing: a file the run creates
    return replace(t, path=real)


def check_over_ssh(h: Host, t: Target, allow_unsafe: bool, allow_system_disk: bool) -> list[str]:
    """Run the check script on the host; refuse as check_safe_to_write does. Returns the
    problems overridden."""
    out = _script(h, "check", t.path, str(t.capacity))
    lines = out.stdout.splitlines()
    said = " ".join((out.stdout + " " + out.stderr).split())[-300:] or "(nothing)"
    if out.returncode == 255:  # ssh's own failure: no host to check, and none to run on either
        raise EngineError(
            f"host {h.name}: checking its target over SSH as {h.ssh} failed (ssh exit 255); ssh said: "
            f"{said}. {ssh_how(h)}. Nothing was run or written."
        )
    if out.returncode != 0 or "done" not in lines:
        problems = [Problem("cannot check", f"the check on {h.ssh} did not finish (exit {out.returncode}): {said}")]
    else:
        fields = [ln.split("\t") for ln in lines]
        _refuse_no_room(h, t, fields)
        problems = [
            Problem(f[1], f[2], _OVERRIDE.get(f[1], ALLOW_UNSAFE)) for f in fields if f[0] == "problem" and len(f) == 3
        ]
    return judge(
        problems,
        allow_unsafe,
        allow_system_disk,
        f"Refusing to write to {t.path} on host {h.name} ({h.ssh}), checked there over SSH",
        f"on {t.path} on that host",
        " on that host",
    )


def _refuse_no_room(h: Host, t: Target, fields: list[list[str]]) -> None:
    """A file target the host's filesystem has no room for is refused there as a local run's is
    here (targets/files.check_space): before, it was made sparse (truncate, where fallocate
    failed) and the run found out only when fio met a full disk."""
    for f in fields:
        said = f[0] == "space" and len(f) == 3 and f[1].lstrip("-").isdigit() and f[2].isdigit()
        if said and int(f[1]) > int(f[2]):
            where = f"{t.path} on host {h.name} ({h.ssh}, its df)"
            raise IolabError(f"{no_space(t.spec, where, t.capacity, int(f[2]))} Nothing was run or written.")


def check_nbd_over_ssh(h: Host, t: Target, allow_unsafe: bool, allow_system_disk: bool) -> list[str]:
    """An NBD export the host's fio reaches, checked as a local run checks one (its server asked
    whether it may be written), but from the host: its URI names what the host reaches. The file
    script would take the URI for a missing file in a directory that is not there, and refuse it."""
    run = ssh_runner(h)

    def asked(argv, timeout=60.0):
        r = run(argv, timeout=timeout)
        if r.returncode == 255:  # ssh's own failure, as check_over_ssh says it
            raise EngineError(
                f"host {h.name}: asking its NBD server over SSH as {h.ssh} failed (ssh exit 255); ssh said: "
                f"{r.summary(300)}. {ssh_how(h)}. Nothing was run or written."
            )
        return r

    return judge(
        nbd_problems(t, asked),
        allow_unsafe,
        allow_system_disk,
        f"Refusing to write to {t.path} on host {h.name} ({h.ssh}), asked there over SSH",
        f"on {t.path} as that host reaches it",
        " on that host",
    )


def create_over_ssh(h: Host, t: Target) -> None:
    """Create a missing file target on the host, marked as iolab's (the sidecar mark), so the
    next run's check there knows it for iolab's own."""
    out = _script(h, "create", t.path, str(t.capacity))
    if out.returncode != 0 or "done" not in out.stdout.splitlines():
        said = " ".join((out.stdout + " " + out.stderr).split())[-300:] or "(nothing)"
        raise EngineError(
            f"host {h.name}: cannot create the target {t.path} on {h.ssh} (exit {out.returncode}): {said}"
        )


def _script(h: Host, *args: str) -> subprocess.CompletedProcess:
    if h.ssh is None:  # only hosts reached over SSH are checked there
        raise EngineError(f"host {h.name}: no SSH address to check its target on")
    cmd = ssh_command(h, "sh -s -- " + shlex.join(args))
    try:
        return subprocess.run(cmd, input=SCRIPT, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S * 3)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"no answer within {PROBE_TIMEOUT_S * 3:g} s")
    except FileNotFoundError:
        return subprocess.CompletedProcess(cmd, 127, "", "the ssh client is not installed on this machine")
