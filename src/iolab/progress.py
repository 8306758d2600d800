"""Live progress for `iolab run`: test, phase, round, cell, live IOPS and an ETA (Rich)."""

from __future__ import annotations

import time

from rich.console import Console
from rich.live import Live
from rich.markup import escape as esc
from rich.table import Table

from .plan import Phase, TestPlan, step_seconds
from .results import RoundResult
from .workload import Workload


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def sequence_eta(plans: list[TestPlan]) -> str:
    """What a sequence will take, for `iolab run SEQ`: each test's timed steps from the earliest
    stop (steady state at the first window) to the latest (every round limit)."""
    spans = [p.timed_seconds() for p in plans]
    parts = ", ".join(f"{p.title} {_clock(a)}–{_clock(b)}" if a != b else f"{p.title} {_clock(a)}"
                      for p, (a, b) in zip(plans, spans))
    early, late = sum(a for a, _ in spans), sum(b for _, b in spans)
    return (f"{len(plans)} tests, ETA {_clock(early)} to {_clock(late)} ({parts}), plus fills "
            "at the drive's speed (on a simulated drive: virtual time, far less wall time)")


def round_text(phase, rnd: int, window: int) -> str:
    """The round under way and what ends the phase: a phase that stops at steady state checks
    it from its window's last round; one that tracks without stopping runs its limit; one
    without tracking runs its rounds."""
    limit = phase.max_rounds
    if phase.tracking and phase.stop_on_steady:
        if limit < window:
            return f"{rnd} of at most {limit} (steady state needs {window} rounds: not checked)"
        return f"{rnd} (steady state checked from round {window}; at most {limit})"
    if phase.tracking:
        return f"{rnd} of at most {limit} (steady state reported, not a stop)"
    return f"{rnd} of {limit}"


class RichProgress:
    """`sequence` = (this test's number, the number of tests, the latest timed seconds of the tests
    after this one): the ETA then covers the rest of the sequence too (`in_sequence` sets it)."""

    def __init__(self, console: Console, sequence: tuple[int, int, float] | None = None):
        self.console = console
        self._display = Live(console=console, refresh_per_second=4, transient=True)
        self.t0 = time.monotonic()
        self.plan: TestPlan | None = None
        self.phase_: Phase | None = None
        self.what, self.round, self.index, self.count = "", 0, 0, 0
        self.label = ""
        self.live_iops: float | None = None
        self.last_iops: float | None = None
        self.cell_wall: float | None = None  # running mean wall time per measurement cell
        self.virtual_s = 0.0
        self.sequence = sequence
        self.step_s = 0.0  # planned seconds of the step running
        self.done_s, self.done_wall = 0.0, 0.0  # planned and wall seconds of the steps done

    def __enter__(self):
        self._display.__enter__()
        return self

    def __exit__(self, *exc):
        self._display.__exit__(*exc)

    def in_sequence(self, plans: list[TestPlan], index: int) -> None:
        """The sequence's test `index` starts: its live ETA covers the tests after it too."""
        self.sequence = (index + 1, len(plans), sum(p.timed_seconds()[1] for p in plans[index + 1:]))
        self.done_s, self.done_wall, self.cell_wall = 0.0, 0.0, None

    # -- runner hooks -----------------------------------------------------------------------
    def phase(self, plan: TestPlan, phase: Phase, index: int) -> None:
        self.plan, self.phase_ = plan, phase
        self.console.print(f"[bold]{esc(plan.title)}[/] · phase {index + 1}/{len(plan.phases)}: {esc(phase.name)}")
        self._refresh()

    def step(self, what: str, round_: int, index: int, count: int, workload: Workload) -> None:
        self.what, self.round, self.index, self.count = what, round_, index, count
        self.label = workload.label()
        self.step_s = step_seconds(workload)
        self.live_iops = None
        self._refresh()

    def live(self, elapsed_s: float, iops: float) -> None:
        self.live_iops = iops
        self._refresh()

    def done(self, result: RoundResult, wall_s: float) -> None:
        self.last_iops = result.iops
        self.done_s += self.step_s
        self.done_wall += wall_s
        self.virtual_s += result.counters.get("virtual_seconds", 0.0)
        if self.what == "round":
            self.cell_wall = wall_s if self.cell_wall is None else 0.8 * self.cell_wall + 0.2 * wall_s
        self._refresh()

    def note(self, text: str) -> None:
        self.console.print(esc(text))

    # -- rendering --------------------------------------------------------------------------
    def _eta(self) -> str:
        text = self._round_eta()
        if self.sequence is None or self.plan is None:
            return text
        number, count, after = self.sequence
        if not self.done_s:
            return f"{text} · sequence: test {number}/{count}, estimating…"
        # the wall time per planned second so far (the simulator runs faster than real time)
        rest = (max(0.0, self.plan.timed_seconds()[1] - self.done_s) + after) * self.done_wall / self.done_s
        return f"{text} · sequence: test {number}/{count}, at most ≈ {_clock(rest)} to the end"

    def _round_eta(self) -> str:
        if self.what != "round" or self.cell_wall is None or self.phase_ is None or self.plan is None:
            return "estimating…"
        per_round = self.cell_wall * self.count
        this_round = self.cell_wall * (self.count - self.index)
        window = self.plan.rule.window
        earliest = this_round + max(0, window - self.round) * per_round
        latest = this_round + max(0, self.phase_.max_rounds - self.round) * per_round
        text = f"round {_clock(this_round)} · phase earliest {_clock(earliest)}"
        if self.phase_.stop_on_steady:
            text += f", latest {_clock(latest)}"
        return text

    def _refresh(self) -> None:
        t = Table.grid(padding=(0, 2))
        t.add_column(style="bold cyan")
        t.add_column()
        if self.phase_ is not None and self.plan is not None:
            if self.what == "precondition":
                t.add_row("step", f"preconditioning {self.index + 1}/{self.count}: {esc(self.label)}")
            else:
                t.add_row("round", round_text(self.phase_, self.round, self.plan.rule.window))
                t.add_row("cell", f"{self.index + 1}/{self.count}: {esc(self.label)}")
        iops = []
        if self.live_iops is not None:
            iops.append(f"live {self.live_iops:,.0f}")
        if self.last_iops is not None:
            iops.append(f"last cell {self.last_iops:,.0f}")
        t.add_row("IOPS", " · ".join(iops) or "…")
        wall = f"wall {_clock(time.monotonic() - self.t0)}"
        if self.virtual_s:
            wall += f" · virtual {_clock(self.virtual_s)}"
        t.add_row("time", wall)
        t.add_row("ETA", self._eta())
        self._display.update(t)
