"""A hosts run's target spec, read as the hosts reach it. Each host's fio opens the spec on that
host: an NBD URI's 127.0.0.1 is the host's own loopback, so its export's size is asked there
(over SSH, as the host's target is checked: hostcheck.py), never on this machine, where a server
of the same address would be another export. A host reached through fio's server alone cannot
be asked anything (its size must be given); a host of this machine's address reads it here.
A host with a path or export of its own (a hosts file's `target`) has that one read where it is,
this machine's address included: its fio opens that one, not the spec's."""

from __future__ import annotations

import os
import stat
import urllib.parse
from dataclasses import replace

from iolab import targets
from iolab.core.errors import IolabError
from iolab.engines.hostlist import Host
from iolab.engines.hosts import is_local_address, ssh_runner
from iolab.targets import Elsewhere, Target
from iolab.targets.cache import cache_unmet, reported_write_cache, unsettable_here, write_cache_state
from iolab.targets.spec import nbd_uri


def target_place(h: Host) -> Elsewhere | None:
    """Where the host's target spec is read: None on this machine (a host of this machine's address
    without SSH: its fio server opens this machine's paths and URIs), else on the host."""
    if h.ssh:
        config = f", ssh_config {h.ssh_config}" if h.ssh_config else ""
        return Elsewhere(f"host {h.name} (over SSH as {h.ssh}{config})", ssh_runner(h))
    if is_local_address(h.address):
        return None
    return Elsewhere(f"host {h.name}", None)


def purged_here(hosts: list[Host]) -> bool:
    """Whether a hosts run purges its target: only when every host is of this machine (its fio
    server writes this machine's paths); a host of another machine, or reached over SSH, has its
    target left as it is (fio_hosts.NOT_PURGED), so nothing of a purge is checked here for it."""
    return all(target_place(h) is None for h in hosts)


def parse_on_hosts(spec: str, hosts: list[Host]) -> Target:
    """The target every host's fio opens, read where each host is (each machine and path once): a
    host of another machine with a path of its own (a hosts file's `target`) has that path read
    there, since its fio opens that one and not the spec's. One size for all: targets of different
    sizes on the hosts need a ?size= all of them hold."""
    read: dict[tuple[str, str], tuple[str, Target]] = {}
    for h in hosts:
        place = target_place(h)
        own = _own_spec(spec, h)
        key = (place.name if place else "", own)
        if key not in read:
            where = (place.name if place else "this machine") + (f" ({h.target})" if own != spec else "")
            read[key] = (where, targets.parse_target(own, place))
    sizes = {t.capacity for _, t in read.values()}
    if len(sizes) > 1:
        said = "; ".join(f"{where}: {t.capacity:,} bytes" for where, t in read.values())
        raise IolabError(
            f"target {spec!r}: the hosts' targets differ in size ({said}), and every host tests one range. "
            f"Give ?size= of at most {min(sizes):,} bytes, the smallest."
        )
    main = next((t for (_, own), (_, t) in read.items() if own == spec), None)
    if main is None:  # every host opens a path of its own: the spec's path is the run's name for them
        first = next(iter(read.values()))[1]
        text = spec.strip()
        path = nbd_uri(text) if first.kind == "nbd" else os.path.normpath(text.removeprefix("file:").partition("?")[0])
        main = replace(first, spec=spec, path=path)
    return main


def host_target(spec: str, h: Host) -> Target:
    """The target host h's fio opens (its own path or export, else the spec's), read where it is."""
    return targets.parse_target(_own_spec(spec, h), target_place(h))


def _own_spec(spec: str, h: Host) -> str:
    """The run's spec with the host's own path (its `target`) and the spec's options: what the host's
    fio opens, on another machine or this one (a host of this machine's address opens its own path
    here). A path of another kind than the spec's (a device for a file: spec) is not read: the spec
    is, as before hosts had paths of their own read. An export's own URI keeps its own options (a
    socket) and takes the spec's ?size= when it gives none."""
    text = spec.strip()
    if not h.target:
        return spec
    if text.startswith("nbd") and h.target.startswith("nbd"):
        size = dict(urllib.parse.parse_qsl(text.partition("?")[2])).get("size")
        if size is None or "size=" in h.target.partition("?")[2]:
            return h.target
        return h.target + ("&" if "?" in h.target else "?") + urllib.parse.urlencode({"size": size})
    if not text.startswith(("file:", "/dev/")):
        return spec
    query = text.partition("?")[2]
    device = _is_device(h.target) if target_place(h) is None else h.target.startswith("/dev/")
    if device != text.startswith("/dev/"):
        return spec
    return ("" if device else "file:") + h.target + (f"?{query}" if query else "")


def _is_device(path: str) -> bool:
    """A path of this machine names a block device, however it is spelt (`//dev/sdb`, a symlink
    outside /dev): what it is, not its name (a missing path is a file the run makes)."""
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return path.startswith("/dev/")


def stored_target(spec: str, split: list[dict] | None) -> Target:
    """A stored run's target as its run read it: a hosts run's (its stored split names the hosts) as
    those hosts reach it. A split this iolab cannot read is read as a local target here; the legs'
    own rebuild (fio_hosts.legs_from_manifest) says what is wrong with it."""
    try:
        hosts = [Host(**s["host"]) for s in split or () if s.get("host")]
    except (KeyError, TypeError, AttributeError):
        hosts = []
    return parse_on_hosts(spec, hosts) if hosts and len(hosts) == len(split or ()) else targets.parse_target(spec)


def leg_write_cache(h: Host | None, t: Target) -> str:
    """A hosts run's target's write cache where its host has it (targets.write_cache_state): asked
    on this machine for a host of its own, over SSH for an SSH host; a host reached through fio's
    server alone cannot be asked."""
    place = target_place(h) if h is not None else None
    if place is not None and place.run is None and t.kind == "block":
        return f"not known: {place.name} is reached through fio's server alone, where nothing can be asked"
    return write_cache_state(t, place.run if place is not None else None)


def legs_unheld_cache(legs: list[tuple[str, Host | None, Target]], wanted: bool) -> str | None:
    """A hosts run's drives (name, host, target) judged by a local run's rule (targets.cache_unmet):
    each, asked where its host has it, must report the profile's setting. A target no run can set
    (a file, an NBD export) is left to the rule that says so before the run (runstart)."""
    how = "left as it was: a hosts run does not set it"
    said = []
    for name, h, t in legs:
        if unsettable_here(t):
            continue
        place = target_place(h) if h is not None else None
        if place is not None and place.run is None:
            why = cache_unmet(wanted, None, how, f" on {name}", f"{place.name} is reached through fio's server alone")
        else:
            why = cache_unmet(wanted, reported_write_cache(t, place.run if place else None), how, f" on {name}")
        said += [why] if why else []
    return "; ".join(said) or None
