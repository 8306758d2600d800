"""Write safety: refuse a target that holds or may hold someone's data, or cannot be written.

Checks on a block device, each named in the refusal: read-only, mounted (the device or a
partition, or active swap), partitions, signature (blkid -p, else wipefs -n), holders (dm/md),
open (by another process, from /proc/*/fd), exclusive (the kernel or a program holds it
O_EXCL), backing file in use (a loop device over another run's file target), backing file open
(by another process: a VM's disk image), mounted (another loop device over the same file is),
system disk (/, /boot, /boot/efi, /usr, /var or swap live on it, through partitions and dm/md
layers).

Checks on a file: not a regular file, pseudo filesystem (/proc, /sys, ...: writepolicy.py),
system location (/etc, /usr, /var but its local data places, ...: writepolicy.SYSTEM_RULE),
run directory (in a stored run's directory, whose files are its record: writepolicy.py), iolab
output (a report, export, trace table or simulator state: it carries iolab's output mark), read-only (also a file without any write permission bit, which root could write), mounted (it
is active swap, or backs a mounted loop device), loop backing (it backs a loop device), not
created by iolab (non-empty without iolab's mark), signature (a filesystem or other signature
inside it, even in a file iolab once made), open.

A simulated drive's save= file passes the write policy of every output path (writepolicy.py).

Overrides: mounted and system disk yield only to --allow-system-disk, which no refusal names;
read-only, not a regular file, pseudo filesystem, system location, run directory and save= yield to
nothing; everything else yields to --allow-unsafe-target.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat

from iolab.core.errors import RefusedError
from iolab.core.units import human_bytes
from iolab.targets import host, lock
from iolab.targets.facts import BlockDev, block_dev, file_type
from iolab.targets.files import MARK_XATTR, created_by_iolab, iolab_mark, sidecar
from iolab.targets.kinds import kind_of
from iolab.targets.model import ALLOW_SYSTEM_DISK, ALLOW_UNSAFE, Problem, Target
from iolab.targets.usage import (
    device_in,
    devnums,
    loop_backing,
    loop_devices_backed_by,
    mounted,
    mounts,
    open_by_others,
    pseudo_filesystem,
    same_file,
    swap_file,
    system_use,
)
from iolab.targets.writepolicy import (
    SIM_STATE,
    SYSTEM_RULE,
    directory_problem,
    foreign_run,
    no_write_bits,
    system_location,
)
from iolab.targets.writepolicy import file_problems as output_problems


def check_safe_to_write(target: Target, allow_unsafe: bool = False, allow_system_disk: bool = False) -> list[str]:
    """Refuse (RefusedError) to write to a target that holds or may hold someone's data, or
    that cannot be written at all, or whose kind has no registered safety checks.

    Returns the checks that failed but were overridden, each naming its override, for the
    manifest and the console; [] when every check passed.
    """
    kind = kind_of(target)
    return judge(
        kind.problems(target),
        allow_unsafe,
        allow_system_disk,
        f"Refusing to write to target {target.spec!r} ({target.path})",
        kind.victim(target),
    )


def judge(
    problems: list[Problem], allow_unsafe: bool, allow_system_disk: bool, head: str, victim: str, where: str = ""
) -> list[str]:
    """The one override policy, for a target checked here or on another host (`where`: " on
    that host"): RefusedError (`head`: what was refused) unless every problem is overridden by
    the option given for it. Returns the overridden checks, each naming its override."""
    allowed = {ALLOW_UNSAFE: allow_unsafe, ALLOW_SYSTEM_DISK: allow_system_disk}
    refused = [p for p in problems if not allowed.get(p.override or "", False)]
    if not refused:
        return [f"{p} (overridden by {p.override})" for p in problems]
    head = f"{head}: {'; '.join(map(str, refused))}."
    final = [p for p in refused if p.override is None]
    if final:
        # making it writable is the way out of a read-only target alone (not a pseudo filesystem, a run's record)
        fix = (
            "make the target writable or choose another"
            if all(p.check == "read-only" for p in final)
            else "choose another target"
        )
        raise RefusedError(f"{head} Nothing overrides this: {fix}.")
    if any(p.override == ALLOW_SYSTEM_DISK for p in refused):
        raise RefusedError(
            head + " iolab does not write where a mounted filesystem, active swap or the running system "
            f"lives: unmount it (swapoff){where} first, or choose another target."
        )
    raise RefusedError(
        head + f" These checks protect data that may be in use. Pass {ALLOW_UNSAFE} to override (this "
        f"destroys data {victim})."
    )


# --- block devices ---------------------------------------------------------------------------


def block_problems(target: Target) -> list[Problem]:
    dev = block_dev(target.path)
    nums = devnums(dev)
    numset = set(nums.values())
    problems: list[Problem] = []

    if host.read(dev.sysdir / "ro") == "1":
        problems.append(
            Problem(
                "read-only",
                f"{dev.node} is read-only (the kernel says ro=1; a loop device "
                "attached with losetup -r, a write-protected medium)",
                None,
            )
        )
    mount_list = mounts()
    on_it = mounted(numset, mount_list)
    if on_it:
        problems.append(Problem("mounted", ", ".join(on_it), ALLOW_SYSTEM_DISK))

    parts = dev.partitions()
    if parts:
        problems.append(Problem("partitions", f"{dev.node} holds partitions {', '.join(parts)}"))

    sig = signature(dev.node)
    if sig:
        problems.append(Problem("signature", sig))

    holders = []
    for name in [dev.name, *parts]:
        h = (dev.sysdir if name == dev.name else dev.sysdir / name) / "holders"
        if h.is_dir():
            holders += [f"{p.name} (on {name})" for p in sorted(h.iterdir())]
    if holders:
        problems.append(Problem("holders", f"in use by the kernel through {', '.join(holders)} (device-mapper/RAID)"))

    users = open_by_others(device_in(numset))
    if users:
        problems.append(Problem("open", "open by " + ", ".join(users)))

    if not on_it and not holders and _held_exclusively(target):
        problems.append(
            Problem(
                "exclusive",
                f"the kernel or another program holds {dev.node} exclusively "
                "(O_EXCL: mkfs, a filesystem or RAID member being set up, another "
                "benchmark)",
            )
        )

    backing = loop_backing(dev)
    if backing:
        problems += _backing_problems(target, dev, backing)

    system = system_use(dev, mount_list)
    if system:
        problems.append(Problem("system disk", "; ".join(system), ALLOW_SYSTEM_DISK))
    return problems


def _backing_problems(target: Target, dev: BlockDev, backing: str) -> list[Problem]:
    """A loop device writes its backing file: the file rules that hold for a file target hold
    for it too (iolab's mark excepted: attaching the file as a device says it is one)."""
    # a resumed run over two paths to one drive claims the first path, and with it the backing
    # file, before it checks the second: that lock is this run's, not another's
    if not lock.holds_file(backing) and _locked_by_another_run(backing):
        return [
            Problem(
                "backing file in use", f"{dev.node} is backed by {backing}, which another iolab run holds as its target"
            )
        ]
    st = host.stat_or_none(backing)
    if st is None:  # deleted since it was attached: only the loop device reaches it now
        return []
    problems = []
    pseudo = pseudo_filesystem(backing)
    if pseudo:
        problems.append(Problem("pseudo filesystem", f"{dev.node} is backed by {backing} on {pseudo}", None))
    users = open_by_others(same_file(st))
    if users:
        problems.append(
            Problem("backing file open", f"{dev.node} is backed by {backing}, which is open by " + ", ".join(users))
        )
    mount_list = mounts()
    for other in loop_devices_backed_by(st):
        on_it = mounted(set(devnums(other).values()), mount_list) if other.disk != dev.disk else []
        if on_it:
            problems.append(
                Problem(
                    "mounted",
                    f"{dev.node} is backed by {backing}, which also backs {other.node}: {', '.join(on_it)}",
                    ALLOW_SYSTEM_DISK,
                )
            )
    return problems


def _locked_by_another_run(path: str) -> bool:
    """Does another process hold this file under flock (as a run holds its file target)?"""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing drops the probe's own lock
    return False


def _held_exclusively(target: Target) -> bool:
    claim = lock.held(target)
    if claim is not None:  # ours: what our own exclusive open found
        return not claim.exclusive
    try:
        fd = host.open_exclusive(target.path)
    except OSError as e:
        return e.errno == errno.EBUSY
    os.close(fd)
    return False


def signature(node: str) -> str | None:
    """What blkid (or wipefs) finds on a device or in a file: a filesystem, RAID/LVM member,
    partition table."""
    r = host.run_command(["blkid", "-p", "-o", "export", node], timeout=30)
    if r.returncode == 2:  # blkid: nothing found
        return None
    if r.ok:
        kv = dict(line.split("=", 1) for line in r.text.splitlines() if "=" in line)
        found = []
        if "TYPE" in kv:
            found.append(f"{kv['TYPE']} ({kv.get('USAGE', 'unknown use')})")
        if "PTTYPE" in kv:
            found.append(f"{kv['PTTYPE']} (partition table)")
        return f"{node} carries {', '.join(found) or 'an unnamed signature'} (found by blkid -p)"
    if r.returncode == 8:  # ambivalent: several signatures at once
        return f"{node} carries several conflicting signatures (blkid -p: {r.stderr.strip() or 'ambivalent'})"
    if r.missing:
        w = host.run_command(["wipefs", "--no-act", "--json", node], timeout=30)
        if w.ok:
            data = host.json_object(w.text) or {}
            types = [s.get("type", "?") for s in data.get("signatures", [])]
            return f"{node} carries {', '.join(types)} (found by wipefs -n)" if types else None
        if w.missing:
            return "cannot probe for signatures: neither blkid nor wipefs (util-linux) is installed"
        return f"cannot probe for signatures ({w.summary()})"
    return f"cannot probe for signatures ({r.summary()})"


# --- files -----------------------------------------------------------------------------------


def _place_problem(path: str) -> Problem | None:
    """Where a file target may never be, whatever it holds: on a pseudo filesystem, in the
    system's own trees (the output rule, writepolicy.py), or in a stored run's directory."""
    pseudo = pseudo_filesystem(path)
    if pseudo:
        return Problem("pseudo filesystem", f"{path} is on {pseudo}, where writes change the kernel, not a file", None)
    real = os.path.realpath(path)
    system = system_location(real)
    if system is not None:  # the system's files are no scratch file
        via = f" (through a symlink to {real})" if real != os.path.abspath(path) else ""
        return Problem(
            "system location",
            f"{path} is {system}{via}, where the operating system keeps its own files ({SYSTEM_RULE})",
            None,
        )
    run = foreign_run(real)
    if run is not None:  # a stored run's files are its record, and a new file there is not the run's
        why = f"{path} is in the run directory {run}, whose files are that run's record, not a place to test"
        return Problem("run directory", why, None)
    return None


def file_problems(target: Target) -> list[Problem]:
    path = target.path
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        # a device is tested as itself (/dev/...), under the block device checks
        return [Problem("not a regular file", f"{path} is {file_type(st.st_mode)}", None)]
    place = _place_problem(path)
    if place is not None:
        return [place]
    if st is None:  # iolab will create it, if it can
        parent = os.path.dirname(path)
        if not os.access(parent, os.W_OK | os.X_OK):
            return [
                Problem(
                    "read-only",
                    f"{path} cannot be created: {parent} is not writable ({_why_not_writable(parent)})",
                    None,
                )
            ]
        return []
    problems: list[Problem] = []
    if no_write_bits(st):
        problems.append(
            Problem("read-only", f"{path} has mode {stat.S_IMODE(st.st_mode):04o}: no one may write it", None)
        )
    elif not os.access(path, os.W_OK):
        problems.append(Problem("read-only", f"{path} cannot be written ({_why_not_writable(path)})", None))

    swap = swap_file(st)
    if swap:
        problems.append(Problem("mounted", f"{path} is active swap", ALLOW_SYSTEM_DISK))
    loops = loop_devices_backed_by(st)
    if loops:
        problems.append(Problem("loop backing", f"{path} backs {', '.join(d.node for d in loops)}"))
        mount_list = mounts()
        for d in loops:
            on_it = mounted(set(devnums(d).values()), mount_list)
            if on_it:
                problems.append(Problem("mounted", f"{path} backs {d.node}: {', '.join(on_it)}", ALLOW_SYSTEM_DISK))

    if st.st_size > 0 and iolab_mark(path) == "output":
        problems.append(
            Problem(
                "iolab output",
                f"{path} holds {human_bytes(st.st_size)} that iolab wrote as a result (a report, export, trace "
                "table or simulator state: its mark says so), not a scratch file it made to test on",
            )
        )
    elif st.st_size > 0 and not created_by_iolab(path):
        problems.append(
            Problem(
                "not created by iolab",
                f"{path} holds {human_bytes(st.st_size)} and carries no iolab mark (xattr {MARK_XATTR} or "
                f"sidecar {os.path.basename(sidecar(path))}), so it may be someone's data",
            )
        )
    # Even a file iolab made may since have become someone's filesystem image.
    sig = signature(path) if st.st_size > 0 else None
    if sig:
        problems.append(Problem("signature", sig))

    users = open_by_others(same_file(st))
    if users:
        problems.append(Problem("open", "open by " + ", ".join(users)))
    return problems


def _why_not_writable(path: str) -> str:
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return "a read-only filesystem"
    except OSError as e:
        return e.strerror or "cannot stat it"
    return "no write permission, or the file is immutable"


# --- NBD exports and simulated drives --------------------------------------------------------


def nbd_problems(target: Target, run=None) -> list[Problem]:
    """What the export holds is its owner's business; only a read-only export is refused here
    (when the server does not answer, fio says so in the first cell). `run`: run_command's
    signature, where the export is asked from (a hosts run's SSH host; None: this machine)."""
    r = (run or host.run_command)(["nbdinfo", "--can", "write", target.path], timeout=30)
    if r.returncode == 2:  # nbdinfo --can: 0 yes, 2 no, 1 could not ask
        return [Problem("read-only", f"the NBD server exports {target.path} read-only (nbdinfo --can write)", None)]
    return []


def sim_problems(target: Target) -> list[Problem]:
    """A simulated drive holds no one's data; the file it saves its state to (save=) passes
    the write policy of every file iolab writes."""
    save = target.option("save")
    if not save:
        return []
    # the state is written at the run's end, into no directory it makes: a missing one is said
    # before the run measures anything, not once it has (the run was stored, then failed to save)
    missing = directory_problem(save)
    return [
        Problem("save=", p, None) for p in ([f"{save}: {missing}"] if missing else output_problems(save, SIM_STATE))
    ]
