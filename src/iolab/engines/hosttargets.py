"""A hosts run's target spec, read as the hosts reach it. Each host's fio opens the spec on that
host: an NBD URI's 127.0.0.1 is the host's own loopback, so its export's size is asked there
(over SSH, as the host's target is checked: hostcheck.py), never on this machine, where a server
of the same address would be another export. A host reached through fio's server alone cannot
be asked anything (its size must be given); a host of this machine's address reads it here."""

from __future__ import annotations

from iolab import targets
from iolab.core.errors import IolabError
from iolab.engines.hostlist import Host
from iolab.engines.hosts import is_local_address, ssh_runner
from iolab.targets import Elsewhere, Target


def target_place(h: Host) -> Elsewhere | None:
    """Where the host's target spec is read: None on this machine (a host of this machine's address
    without SSH: its fio server opens this machine's paths and URIs), else on the host."""
    if h.ssh:
        config = f", ssh_config {h.ssh_config}" if h.ssh_config else ""
        return Elsewhere(f"host {h.name} (over SSH as {h.ssh}{config})", ssh_runner(h))
    if is_local_address(h.address):
        return None
    return Elsewhere(f"host {h.name}", None)


def parse_on_hosts(spec: str, hosts: list[Host]) -> Target:
    """The target every host's fio opens, read where each host is (each machine once). One size
    for all: exports of different sizes on the hosts need a ?size= all of them hold."""
    places = {(p.name if p else ""): p for p in map(target_place, hosts)}
    read = {where or "this machine": targets.parse_target(spec, p) for where, p in places.items()}
    sizes = {t.capacity for t in read.values()}
    if len(sizes) > 1:
        said = "; ".join(f"{where}: {t.capacity:,} bytes" for where, t in read.items())
        raise IolabError(
            f"target {spec!r}: the hosts' exports differ in size ({said}), and every host tests one range. "
            f"Give ?size= of at most {min(sizes):,} bytes, the smallest."
        )
    return next(iter(read.values()))


def stored_target(spec: str, split: list[dict] | None) -> Target:
    """A stored run's target as its run read it: a hosts run's (its stored split names the hosts) as
    those hosts reach it. A split this iolab cannot read is read as a local target here; the legs'
    own rebuild (fio_hosts.legs_from_manifest) says what is wrong with it."""
    try:
        hosts = [Host(**s["host"]) for s in split or () if s.get("host")]
    except (KeyError, TypeError, AttributeError):
        hosts = []
    return parse_on_hosts(spec, hosts) if hosts and len(hosts) == len(split or ()) else targets.parse_target(spec)
