"""Which target a run wrote to, recorded so `iolab resume` can tell it is the same one (the checks
it makes are at the end), and which drive a target is, so that a fleet or `iolab run -t A -t B`
never tests one drive twice at once.
The one place that reads a target's identity on this machine (a host's is read there over SSH,
engines/hosts.read_identity_over_ssh, as the same record).

A device is known by its serial, model and capacity (a loop device by its backing file); a
file by its path, inode and size; an NBD export by its URI and size; a simulated drive by its
preset and parameters (its state lives only in the process that ran it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from iolab.core.errors import IolabError, RefusedError
from iolab.store.manifest import Manifest
from iolab.targets import Target


def _file_id(path: str) -> dict:
    try:
        st = os.stat(path)
    except FileNotFoundError:  # a file not made yet: every name of it leads to one real path
        return {"path": os.path.realpath(path), "missing": True}
    except OSError as e:  # there, but not readable (a symlink loop, a directory it may not search, EIO)
        return {"path": os.path.realpath(path), "not_read": f"could not be read: {e.strerror or e}"}
    return {"path": os.path.realpath(path), "dev": st.st_dev, "inode": st.st_ino, "size": st.st_size}


def _loop_backing(node: str) -> str | None:
    name = os.path.basename(os.path.realpath(node))
    try:
        return Path(f"/sys/block/{name}/loop/backing_file").read_text().strip() or None
    except OSError:
        return None


def target_identity(target: Target) -> dict:
    f = target.facts
    if target.kind == "file":
        return {"kind": "file", **_file_id(target.path)}
    if target.kind == "sim":
        return {
            "kind": "sim",
            "preset": target.path,
            "options": [list(o) for o in target.options],
            "capacity": target.capacity,
        }
    if target.kind == "nbd":
        return {"kind": "nbd", "uri": target.path, "capacity": target.capacity}
    ident: dict[str, Any] = {
        "kind": target.kind,
        "serial": f.serial,
        "model": f.model,
        "wwid": f.wwid,
        "capacity": target.capacity,
    }
    backing = _loop_backing(target.path)
    if backing is not None:
        ident["backing_file"] = _file_id(backing)
    return ident


def drive_key(target: Target) -> str | None:
    """What drive a target of this machine is, in words that are one answer for every name of it (a
    symbolic or hard link, a second device node, a multipath device's other path); None: nothing
    can be read. Built on target_identity; a device with neither WWID nor serial (a loop device) is
    its device number here, which the run does not store (it may change at the next boot)."""
    key = identity_key(target_identity(target), "this machine")
    if key is not None or target.kind != "block":
        return key
    try:
        rdev = os.stat(target.path).st_rdev
    except OSError:
        return None
    return f"block device {os.major(rdev)}:{os.minor(rdev)} (major:minor)"


def identity_key(ident: dict, where: str) -> str | None:
    """The drive an identity record names (target_identity's, or read on a host over SSH), as
    drive_key says it; None when the record cannot tell (not read, or a device without WWID or serial)."""
    kind = ident.get("kind")
    if ident.get("not_read") is not None:
        return None
    if kind == "sim":  # one preset, parameters and seed, however the spec writes them
        from iolab.targets.sim_facts import drive_key as sim_drive  # lazy: the simulator's native module

        return f"simulated {sim_drive(ident['preset'], dict(ident['options']))!r}"
    if kind == "nbd":  # only the server knows its exports: one endpoint (address, port, name) is one export
        from iolab.targets.spec import nbd_endpoints

        return f"NBD export {' or '.join(nbd_endpoints(ident['uri']))}"
    if kind == "file":
        if ident.get("missing"):
            return f"file to be made on {where} at {ident['path']}"
        return f"file on {where}, filesystem device {ident['dev']} inode {ident['inode']}"
    if ident.get("wwid"):
        return f"wwid {ident['wwid']}"
    if ident.get("serial"):
        return f"model {ident.get('model') or '?'} serial {ident['serial']}"
    return None


def differences(stored: dict, now: dict) -> list[str]:
    """Why `now` is not the target described by `stored` (empty: the same one)."""
    out = []
    for key in sorted(set(stored) | set(now)):
        a, b = stored.get(key), now.get(key)
        if isinstance(a, dict) or isinstance(b, dict):
            out += [f"backing file {d}" for d in differences(a or {}, b or {})]
        elif a != b:
            out.append(f"{key} was {a!r}, now {b!r}")
    return out


def last_modified(identity: dict) -> float | None:
    """When the file behind a file or loop target was last written (None for devices)."""
    path = identity.get("path") or (identity.get("backing_file") or {}).get("path")
    try:
        return os.stat(path).st_mtime if path else None
    except OSError:
        return None


def measured_spec(m: Manifest) -> str:
    """The stored target spec with a file's path as the run resolved it when it started: a
    relative path (file:d.img) or ~ names another file from another directory or user, and
    `iolab resume` must go on with the file the run measured (from / it was refused, as
    '/d.img', 'missing'). The spec as given stays the run's name for its target."""
    spec, path = str(m.target.get("spec")), m.target.get("path")
    if m.split or m.target.get("kind") != "file" or not path or not spec.startswith("file:"):
        return spec
    raw, sep, query = spec[len("file:") :].partition("?")
    return spec if os.path.isabs(raw) else f"file:{path}{sep}{query}"


def check_unchanged(m: Manifest, target: Target, legs: dict[str, Target], before: str) -> None:
    """Refuse to write on when a target of this machine is no longer the one the run's safety checks
    passed and whose identity it stored at its start: fio and the purge open the target by its path
    for each cell, so a file replaced under its name (by a symbolic link to someone's data, say), a
    loop device attached to another file, or a file truncated, would be written or measured in its
    place. A hosts run's targets are read on their hosts: each one of this machine's is checked."""
    stored = m.target.get("identity")
    pairs = [("", stored, target)] if stored and stored.get("kind") != "hosts" else []
    pairs += [
        (f"{name}: ", ident, legs[name]) for name, ident in m.target.get("leg_identities", {}).items() if name in legs
    ]
    diff = [f"{who}{d}" for who, ident, t in pairs for d in differences(ident, _as_now(ident, t))]
    if diff:
        raise RefusedError(
            f"run {m.run_id}: the target {target.spec} changed during the run ({'; '.join(diff)}): stopped before "
            f"{before}, so nothing but the target the run's safety checks passed is written. The rounds before are "
            "kept; nothing overrides this check. Start a new run on the target."
        )


def _as_now(stored: dict, target: Target) -> dict:
    """The target's identity now, a file's size as stored while it still holds the tested range: a
    file purge without hole punching empties the file and allocates the tested capacity again."""
    now = target_identity(target)
    if now.get("kind") == "file" and now.get("size", -1) >= target.capacity and "size" in stored:
        now["size"] = stored["size"]
    return now


# -- what `iolab resume` refuses --------------------------------------------------------------


def check_identity(m: Manifest, stored: dict | None, target: Target, again: str) -> None:
    """`again`: the command that starts the run anew (runstart.start_again, built by the caller)."""
    diff = differences(stored, target_identity(target)) if stored else []
    if diff:
        raise IolabError(
            f"run {m.run_id}: the target is not the one the run wrote ({'; '.join(diff)}), so it cannot continue "
            f"there: a run measures one drive. Start a new run: {again}"
        )


def check_legs(m: Manifest, legs: dict[str, Target], again: str) -> None:
    """Refuse to go on when a host of this machine's path is not the target the run wrote there
    (or the hosts are not the run's). Runs stored before each leg's identity was: -t's alone."""
    stored = m.target.get("leg_identities")
    if stored is None:
        return
    if set(stored) != set(legs):
        raise IolabError(
            f"run {m.run_id}: its hosts were {', '.join(sorted(stored))}, now {', '.join(sorted(legs)) or 'none'}; "
            f"give the run's hosts to continue it, or start a new run: {again}"
        )
    diff = [f"{name}: {d}" for name in sorted(stored) for d in differences(stored[name], target_identity(legs[name]))]
    if diff:
        raise IolabError(
            f"run {m.run_id}: a host's target is not the one the run wrote ({'; '.join(diff)}), so it cannot "
            f"continue there: a run measures its drives. Start a new run: {again}"
        )


def host_differences(stored: dict, now: dict) -> list[str]:
    """Differences of the hosts' targets that were read both times (ssh hosts whose target existed)."""
    a, b = stored.get("hosts", {}), now.get("hosts", {})
    return [
        f"{name}: {d}"
        for name in sorted(a)
        if "not_read" not in a[name] and "not_read" not in b.get(name, {"not_read": 1})
        for d in differences(a[name], b[name])
    ]
