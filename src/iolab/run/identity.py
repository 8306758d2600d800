"""Which target a run wrote to, recorded so `iolab resume` can tell it is the same one.

A device is known by its serial, model and capacity (a loop device by its backing file); a
file by its path, inode and size; an NBD export by its URI and size; a simulated drive by its
preset and parameters (its state lives only in the process that ran it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from iolab.targets import Target


def _file_id(path: str) -> dict:
    try:
        st = os.stat(path)
    except OSError:
        return {"path": path, "missing": True}
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
