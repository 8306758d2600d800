"""What an engine can do, declared by each engine class (fio's `ioengine_ops` flags are the
model). The runner, resume and the suites ask these flags; none of them names an engine or
a target kind. Types only, so every engine module can import it without a cycle."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capabilities:
    drives: tuple[str, ...]  # target kinds (Target.kind) this engine runs workloads on
    idle: bool  # `idle(target, seconds)`: the device gets no host IO for a while (Host Idle Recovery)
    trim: bool  # can issue trims/discards
    purge_methods: tuple[str, ...]  # --purge values it carries out ('auto' picks one); the kind narrows them
    write_cache: bool  # switching the volatile write cache has an effect it can report
    replay_timestamps: bool  # replays IOs at their captured times (open loop)
    # The targets are on another machine: this machine's reading of the target's path (its facts,
    # identity, write counters) is not the drive written, so the engine reads them where they are
    # (engines.HostsEngine). False for a fio server of this machine: it writes a path of this one.
    remote_targets: bool
    # The engine checked and claimed every target it writes itself, where each is written (a hosts
    # run's paths, hostcheck.py), so the run's start neither claims nor checks the target's path.
    claims_targets: bool
    virtual_time: bool  # time is the model's, not the wall clock's (idle and budgets cost no wall time)
    keeps_state: bool  # the device's state outlives the process, so an interrupted phase can continue

    def inconsistency(self) -> str | None:
        """Why these flags cannot all hold (None: they can); the engine registry refuses such an engine."""
        if self.remote_targets and not self.claims_targets:
            return (
                "remote_targets=True needs claims_targets=True: its targets are on other machines, so the "
                "run's start cannot check or claim them (this machine's path of the same name is not the drive "
                "written); the engine must check and claim each where it is written, as engines/hostcheck.py does"
            )
        return None
