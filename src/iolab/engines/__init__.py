"""Layer 8 of 12. May import: traces, targets, core (the store, figures and pages never: an
engine measures one workload and hands the result back). Imported by run and above.

IO engines. Each engine is one module implementing `Engine` and declaring its
`Capabilities` (in the spirit of fio's `ioengine_ops` flags); `ENGINES` lists them. The
runner gets one with `engine_for`, which asks each registered engine whether it drives the
target's kind, and asks its capabilities, never its name."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Protocol, runtime_checkable

from iolab.core.errors import IolabError
from iolab.core.results import RoundResult
from iolab.core.workload import Workload
from iolab.engines.capabilities import Capabilities
from iolab.engines.fio_supervise import check_stall_timeout
from iolab.targets import PurgeOutcome, Target, kind_of

# module:class of each engine, imported when first asked for (the simulator's Rust core is
# not loaded for a run on a file). The first that drives a kind is used.
ENGINES = ("iolab.engines.sim:SimEngine", "iolab.engines.fio:FioEngine")


class Engine(Protocol):
    name: str

    @property
    def capabilities(self) -> Capabilities:
        """What the engine can do (a class attribute, or worked out from its legs)."""

    def version(self) -> str:
        """Engine name and version as recorded in the manifest (e.g. 'fio-3.33')."""

    def prepare(self, target: Target) -> None:
        """Make the target usable (create/size a file, start a simulator). Idempotent."""

    def purge(self, target: Target, method: str) -> PurgeOutcome:
        """Return the target to fresh-out-of-box with `method` ('auto' picks the best)."""

    def set_write_cache(self, target: Target, enabled: bool) -> str:
        """Switch the target's volatile write cache; returns what was done (or why nothing
        was) for the manifest. Never raises for 'not supported'."""

    def idle(self, target: Target, seconds: float) -> None:
        """No host IO for `seconds` (of the engine's time: virtual on the simulator, where the
        drive's background work runs; wall time otherwise, interruptible). Only called when
        `capabilities.idle`."""

    def run(
        self,
        target: Target,
        workload: Workload,
        raw_dir: Path,
        tag: str,
        progress: Callable[..., None] | None = None,
    ) -> RoundResult:
        """Run one measurement period. Raw output goes to raw_dir/<tag>.*; raises EngineError.

        `progress(elapsed_s, iops, lat_mean_us)` is called with live figures when the engine has
        them (latency None where it has none). A
        workload with both a duration and a byte budget stops at whichever comes first."""

    def job_text(self, target: Target, workload: Workload, tag: str) -> str:
        """The exact engine input a user could run by hand (fio job file, sim command)."""

    def close(self) -> None:
        """Release resources (stop servers, save simulator state)."""


@runtime_checkable
class HostsEngine(Engine, Protocol):
    """An engine whose targets are on other machines (capabilities.remote_targets): it reads them there."""

    def target_identity(self) -> dict:
        """Each host's target as that host sees it, for the manifest (what `iolab resume` checks)."""

    def wear_snapshot(self, record: dict, phase: str, when: str) -> list[str]:
        """Store each host's drive write counters in record[host][phase][when]; notes for the report."""

    def here_legs(self) -> dict[str, Target]:
        """Each host's target by host name when every host is this machine's (its targets are read
        here, as a local run's); empty when some host is another machine."""

    def unheld_write_cache(self, enabled: bool, read_back: bool) -> str | None:
        """How the hosts' drives fail the profile's write cache (`enabled`), by a local run's rule
        (targets.cache_unmet), read at the run's end (`read_back`); None: every drive met it, or
        none could be asked, as for a target no run can set (said before the run)."""


class EngineClass(Protocol):
    """A registered engine's class: its capabilities are known before one is made."""

    capabilities: Capabilities

    def __call__(self, **options: float | str | None) -> Engine: ...


def engine_class(target: Target) -> EngineClass:
    """The registered engine that drives this target's kind."""
    for ref in ENGINES:
        module, name = ref.split(":")
        cls: EngineClass = getattr(import_module(module), name)
        why = cls.capabilities.inconsistency()
        if why is not None:  # a developer's mistake, said before any run trusts the flags
            raise IolabError(f"engine {ref} declares inconsistent capabilities, so it is not used: {why}.")
        if target.kind in cls.capabilities.drives:
            return cls
    raise IolabError(f"target {target.spec}: no engine drives targets of kind {target.kind!r}.")


def engine_for(target: Target, stall_timeout: float | None = None, ioengine: str | None = None) -> Engine:
    """The engine that drives this kind of target. `stall_timeout` (seconds without a
    completed IO before a round is stopped and failed) applies to engines on real devices;
    one in virtual time runs in-process and cannot stall on a device. `ioengine` (fio's IO
    engine, `--ioengine`; None: the engine's default) only to an engine that takes one."""
    cls = check_engine_options(target, stall_timeout, ioengine)
    if cls.capabilities.virtual_time:
        return cls()
    return cls(stall_timeout=stall_timeout, **({"ioengine": ioengine} if ioengine is not None else {}))


def check_engine_options(target: Target, stall_timeout: float | None, ioengine: str | None) -> EngineClass:
    """Refuse a stall timeout or `--ioengine` the target's engine cannot take, before anything is
    started; returns that engine's class (`iolab plan` asks as `iolab run` does)."""
    check_stall_timeout(stall_timeout)
    cls = engine_class(target)
    if cls.capabilities.virtual_time and ioengine is not None:
        raise IolabError(
            f"--ioengine {ioengine}: it chooses fio's IO engine; {target.spec} runs on the simulator, not fio."
        )
    return cls


def purge_methods(target: Target, caps: Capabilities | None = None) -> tuple[str, ...]:
    """The --purge values that make sense for this target: those its kind allows that its
    engine carries out, and 'none'. A wrong one is refused before a run directory exists
    rather than at the first purge."""
    kind = kind_of(target)  # an unregistered kind is refused as such, before any engine is looked for
    caps = caps or engine_class(target).capabilities
    return (*(m for m in kind.purge_methods if m in caps.purge_methods), "none")
