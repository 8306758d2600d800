"""What `iolab plan` refuses: every refusal `iolab run` makes before it measures, made by the
very functions the run calls, so a plan is never described (exit 0) for a run that would be
refused, and a refused plan says the run's exit code and paragraph. Plan described runs on the
system disk ("purge auto: blkdiscard"), on a device holding a filesystem, through a wildcard or
an uncheckable host address, and with --stall-timeout 0s.

The run makes these checks at its own points, each where it belongs: the engine's options when
the engine is made (engines.engine_for), a split round's legs when the split engine is made
(hostcheck.check_split_legs, claiming this machine's paths), and the purge method, the target's
claim and its safety checks as the run starts (runstart.admit: the claim first, so a second run
on a busy target is told which run holds it), then a simulated drive's memory and saved state
(load=) when its engine prepares the drive (sim.check_drive). The plan calls the same functions in that order
with nothing claimed, written, purged or started: the only refusal it cannot make is the claim's
(another run holding the target), which needs the lock it must not take.
"""

from __future__ import annotations

from iolab.engines import check_engine_options
from iolab.engines.sim import check_drive
from iolab.run.runstart import RunOptions, admit
from iolab.targets import Target


def refuse_as_run_would(
    target: Target,
    split: tuple[list, str] | None,
    options: RunOptions,
    stall_s: float | None,
    ioengine: str | None,
    listen_any: bool,
) -> None:
    """Raise the error `iolab run` would for these arguments (IolabError, RefusedError: exit 2
    or 3), reading the target and the hosts but claiming, writing and starting nothing.
    `split`: scaleout.legs_for_run's legs and option (None: no split)."""
    check_engine_options(target, stall_s, ioengine)
    legs = split[0] if split is not None and target.kind != "sim" else None  # a simulator's ports: its own
    hosts, purged = False, True
    if legs is not None:
        # the hosts' modules (threads, fio's servers, sockets) only for a run split over legs
        from iolab.engines.hostcheck import check_split_legs
        from iolab.engines.hosttargets import purged_here

        check_split_legs(target, legs, options.allow_unsafe, options.allow_system_disk, listen_any, claim=False)
        hosts = legs[0].host is not None  # each host's target was checked where it is written
        purged = not hosts or purged_here([leg.host for leg in legs if leg.host is not None])
    admit(target, options, lambda: hosts, claim=False, purged=lambda: purged)
    if target.kind == "sim":  # what the simulator's prepare refuses: its maps' memory, a load= state
        check_drive(target)
