"""A small copy of a simulated drive (`iolab run --quick`, --capacity-limit): the copy's
spec, and the smallest copy the simulator takes when the size asked for is too small."""

from __future__ import annotations

import math

from iolab import _sim
from iolab.core.errors import IolabError
from iolab.core.units import human_bytes
from iolab.targets import Target
from iolab.targets.sim_facts import describe, drive_params


def scaled_spec(target: Target, capacity: int, keep_cache: bool = False) -> str:
    """The spec of a small copy of a simulated drive: `capacity` bytes of user space, the
    same geometry ratios and over-provisioning (the simulator sizes the flash for the OP), so
    a scaled-down test still shows the write cliff and steady state, sooner. `keep_cache`:
    the copy's SLC cache stays the drive's size, its flash beside the drive's own spare."""
    opts = _copy_options(target, capacity, keep_cache)
    return f"sim:{target.path}?{'&'.join(f'{k}={v}' for k, v in opts.items())}"


def smallest_copy(target: Target, capacity: int, keep_cache: bool = False) -> tuple[int, str] | None:
    """The bytes of the smallest copy of `target` the simulator takes, when a `capacity`-byte
    one is too small (the simulator's own search, so the size named is one it takes), and why a
    smaller one is refused; None when the copy's size is not what it refuses, or no size would do."""
    opts = _copy_options(target, capacity, keep_cache)
    gb = _sim.smallest_size_gb(preset=target.path, params=drive_params(opts))
    if gb is None:
        return None
    at = human_bytes(capacity)
    why = (
        f"a simulated disk holds whole 4 KiB blocks, and {at} is less than one"
        if "capacity_gb" in opts
        else f"the simulator scales the drive's flash down with the copy, and at {at} garbage collection "
        "would have too few spare blocks"
    )
    return math.ceil(gb * 1e9), why


def _copy_options(target: Target, capacity: int, keep_cache: bool) -> dict[str, str]:
    opts = dict(target.options)
    if "load" in opts:
        raise IolabError(
            f"target {target.spec}: --quick simulates a smaller copy of the drive, which cannot start "
            "from a saved state (load=); run without --quick or without load=."
        )
    info = describe(target.path, opts)
    gb = f"{capacity / 1e9:.9g}"
    if info["kind"] == "hdd":
        opts["capacity_gb"] = gb
    else:
        user = int(info["capacity_bytes"])
        for k in ("user_gb", "op", "blocks_per_plane", "pages_per_block"):
            opts.pop(k, None)
        op = float(info["op"])
        slc_raw = int(info.get("slc_blocks", 0)) * int(info.get("ftl_block_bytes", 0))
        if keep_cache and slc_raw:
            # The SLC blocks take the same flash in the copy, the rest keeps the drive's spare share.
            opts["slc_gb"] = dict(info["params"])["slc_gb"]
            op = (int(info["physical_bytes"]) - slc_raw - user) / user + slc_raw / capacity
        elif "slc_gb" in opts:  # the user's own SLC size scales with the drive (a preset's scales in the simulator)
            opts["slc_gb"] = f"{float(opts['slc_gb']) * capacity / user:.9g}"
        opts["user_gb"], opts["op"] = gb, f"{op:.9g}"
    return opts
