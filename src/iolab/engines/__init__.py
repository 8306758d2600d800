"""IO engines. Each engine is one module implementing `Engine`; the runner picks one by the
target's kind and never looks inside it (in the spirit of fio's `ioengine_ops`)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol

from ..results import RoundResult
from ..targets import PurgeOutcome, Target
from ..workload import Workload
from .fio_supervise import check_stall_timeout


class Engine(Protocol):
    name: str

    def version(self) -> str:
        """Engine name and version as recorded in the manifest (e.g. 'fio-3.33')."""

    def prepare(self, target: Target) -> None:
        """Make the target usable (create/size a file, start a simulator). Idempotent."""

    def purge(self, target: Target, method: str) -> PurgeOutcome:
        """Return the target to fresh-out-of-box with `method` ('auto' picks the best)."""

    def set_write_cache(self, target: Target, enabled: bool) -> str:
        """Switch the target's volatile write cache; returns what was done (or why nothing
        was) for the manifest. Never raises for 'not supported'."""

    def run(
        self, target: Target, workload: Workload, raw_dir: Path, tag: str,
        progress: Callable[[float, float], None] | None = None,
    ) -> RoundResult:
        """Run one measurement period. Raw output goes to raw_dir/<tag>.*; raises EngineError.

        `progress(elapsed_s, iops)` is called with live figures when the engine has them. A
        workload with both a duration and a byte budget stops at whichever comes first."""

    def job_text(self, target: Target, workload: Workload, tag: str) -> str:
        """The exact engine input a user could run by hand (fio job file, sim command)."""

    def close(self) -> None:
        """Release resources (stop servers, save simulator state)."""


def engine_for(target: Target, stall_timeout: float | None = None) -> Engine:
    """The engine that drives this kind of target. `stall_timeout` (seconds without a
    completed IO before a round is stopped and failed) applies to fio; the simulator runs
    in-process in virtual time and cannot stall on a device."""
    check_stall_timeout(stall_timeout)
    if target.kind == "sim":
        from .sim import SimEngine

        return SimEngine()
    from .fio import FioEngine

    return FioEngine(stall_timeout=stall_timeout)


def purge_methods(target: Target) -> tuple[str, ...]:
    """The --purge values that make sense for this target, so a wrong one is refused before a
    run directory exists rather than at the first purge."""
    if target.kind == "sim":
        from .sim import PURGE_METHODS as SIM_METHODS

        return (*SIM_METHODS, "none")
    from ..targets import PURGE_METHODS

    if target.kind == "file":
        return ("auto", "file", "none")
    if target.kind == "nbd":
        return ("auto", "none")  # iolab cannot purge what is behind an NBD server
    return tuple(m for m in PURGE_METHODS if m != "file")
