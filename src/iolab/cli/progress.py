"""Progress of `iolab run`: on a terminal, a Rich live panel (test, phase, round, cell, live IOPS,
ETA) with a line per finished round printed above it; anywhere else (a CI log, a pipe) plain
timestamped lines, folded to about one a second, with a heartbeat while a long step runs."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from rich.console import Console
from rich.live import Live
from rich.markup import escape as esc
from rich.table import Table

from iolab.cli.budgeteta import Ahead, Estimate, Measured, PhaseWrites, ahead, budget_estimate, plans_ahead
from iolab.core.plan import Phase, TestPlan, step_seconds
from iolab.core.results import RoundResult
from iolab.core.steady import SteadyVerdict
from iolab.core.units import counted, num

LINE_EVERY_S = 1.0  # plain lines: the sustained rate of round lines and notes; more are folded
BURST = 5  # plain lines: how many may come at once before folding starts
HEARTBEAT_S = 45.0  # plain lines: a step running this long without a line still gets one


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _span(a: float, b: float, sep: str = "–") -> str:
    """Seconds `a` to `b` as clock times, one when they read the same: seconds apart that print
    alike ("ETA 0:06 to 0:06") are no range to a reader."""
    return _clock(a) if _clock(a) == _clock(b) else f"{_clock(a)}{sep}{_clock(b)}"


def sequence_eta(plans: list[TestPlan], pace: Pace | None = None, measured: Measured | None = None) -> str:
    """What a sequence will take, for `iolab run SEQ`: each test's timed steps from the earliest
    stop (steady state at the first window) to the latest (every round limit); once `pace` has
    measured this run's speed, that in wall time too. A write-budgeted phase (Write Saturation)
    counts as its own ETA does before its write rate is measured: its first round in the
    expected end, its time budget only as the sequence's "at most" (`Ahead`), unless this run
    measured its stimulus before it (`measured`: the IOPS test's RND 4 KiB W): then at that rate."""
    parts = []
    for p in plans:
        a, b = p.timed_seconds()
        this = ahead(p, measured=measured)
        if this.unknown:
            parts.append(f"{p.title} {_clock(a)} + its write budget, at most {_clock(b)}")
        elif this.measured:
            span = _span(this.early, this.late)
            parts.append(f"{p.title} {span} (its write budget at a rate measured before it), at most {_clock(b)}")
        else:
            parts.append(f"{p.title} {_span(a, b)}")
    rest = plans_ahead(plans, measured)
    text = (
        f"{counted(len(plans), 'test')}, ETA {_span(rest.early, rest.late, ' to ')} ({', '.join(parts)}), "
        "plus fills at the drive's speed, all in the drive's own time (on a simulated drive virtual time, "
        "far less wall time"
        + ("" if pace is not None and pace.ratio() is not None else ": the wall-clock ETA follows its first step")
        + ")"
    )
    if rest.measured:
        text += f"; {'; '.join(rest.measured)}"
    if rest.unknown or rest.measured:
        then = f", plus {rest.then}, not yet estimated" if rest.unknown else ""
        text += f"{then}; at most {_clock(rest.most)} ({rest.limit})"
    if pace is not None and pace.ratio() is not None:
        later = _later(rest)  # the rates a write budget is estimated at are said once, above
        budget = replace(later, how="") if later is not None and later.how else later
        text += f"; in wall time at this run's pace so far: {eta_text(rest.early, rest.late, pace, budget=budget)}"
    return text


def _later(rest: Ahead, late_s: float = 0.0) -> Estimate | None:
    """The estimate of a span with write budgets to come (None without: the plan's span is it);
    `late_s`: the latest seconds of the steps before them (the phase under way)."""
    if not (rest.unknown or rest.measured):
        return None
    return Estimate(0.0, 0.0, late_s + rest.most, rest.limit, "; ".join(rest.measured), rest.then)


def round_text(phase, rnd: int, window: int) -> str:
    """The round under way and what ends the phase: a phase that stops at steady state checks
    it from its window's last round; one that tracks without stopping runs its limit; one
    without tracking runs its rounds."""
    limit = phase.max_rounds
    if phase.tracking and phase.stop_on_steady:
        if limit < window:
            return f"{rnd} of at most {limit} (steady state needs {counted(window, 'round')}: not checked)"
        return f"{rnd} (steady state checked from round {window}; at most {limit})"
    if phase.tracking:
        return f"{rnd} of at most {limit} (steady state reported, not a stop)"
    return f"{rnd} of {limit}"


class Pace:
    """This run's measured speed: wall seconds per second of the engine's clock. A simulated drive
    counts virtual seconds (fills included); a real one, the planned seconds of its timed steps
    (a fill has none: its time is the drive's speed)."""

    def __init__(self) -> None:
        self.virtual_s = self.virtual_wall = 0.0
        self.planned_s = self.planned_wall = 0.0

    def add(self, planned_s: float, wall_s: float, virtual_s: float) -> None:
        if virtual_s:
            self.virtual_s, self.virtual_wall = self.virtual_s + virtual_s, self.virtual_wall + wall_s
        elif planned_s:
            self.planned_s, self.planned_wall = self.planned_s + planned_s, self.planned_wall + wall_s

    def ratio(self) -> tuple[float, str] | None:
        """(wall seconds per planned second, how that was measured); None before any step."""
        if self.virtual_s:
            r = self.virtual_wall / self.virtual_s
            return r, f"simulated time × {r:.3g}, the wall/virtual ratio measured so far"
        if self.planned_s:
            r = self.planned_wall / self.planned_s
            return r, f"planned time × {r:.2f}, the wall/planned ratio measured so far"
        return None


def eta_text(
    early_s: float, late_s: float, pace: Pace, now: float | None = None, budget: Estimate | None = None
) -> str:
    """The wall time left when `early_s` to `late_s` planned seconds are left, at this run's pace.
    `budget`: a write-budgeted phase runs now or is still to come, and `late_s` is an estimate
    (from its write rate, or before a budget not yet estimated), not a latest end; its `most_s`
    (with the same seconds after it added) is."""
    got = pace.ratio()
    if got is None:
        return "estimating… (no step measured yet)"
    r, basis = got
    t = time.time() if now is None else now
    a, b = early_s * r, late_s * r
    end = time.strftime("%H:%M:%S", time.localtime(t + b))
    span = _span(a, b)
    if budget is None:
        return f"{span} (done by {end} at the latest; wall clock: {basis})"
    most = budget.most_s * r
    at_most = f"at most {_clock(most)} (by {time.strftime('%H:%M:%S', time.localtime(t + most))}: {budget.limit})"
    then = f", plus {budget.then}, not yet estimated" if budget.then else ""
    if budget.how is None:
        return f"{at_most}, the write budget's end not yet estimated{then}; wall clock: {basis}"
    why = f": {budget.how}" if budget.how else ""
    return f"{span} (done by {end}{why}){then}; {at_most}; wall clock: {basis}"


def round_summary(
    phase: Phase, rnd: int, history: dict[str, list[tuple[int, float]]], verdict: SteadyVerdict | None, window: int
) -> str:
    """A finished round: each tracking variable's value, and once a window of rounds exists its
    range and slope excursion against what steady state allows."""
    values = [f"{name} {num(pts[-1][1])}" for name, pts in history.items() if pts and pts[-1][0] == rnd]
    text = f"{phase.name}: round {rnd} done"
    if values:
        text += ": " + ", ".join(values)
    if verdict is None:
        if phase.tracking:
            text += f" (steady state needs a window of {counted(window, 'round')})"
        return text
    parts = []
    for v in verdict.variables:
        pct = 100 / v.average if v.average > 0 else 0.0
        parts.append(
            f"{v.name} range {v.range_measured * pct:.1f}% (allowed {v.range_allowed * pct:.0f}%), "
            f"slope {v.fit_excursion * pct:.1f}% (allowed {v.fit_allowed * pct:.0f}%)"
        )
    state = "steady" if verdict.steady else "not steady"
    return f"{text}; window rounds {verdict.window[0]}–{verdict.window[-1]}: " + "; ".join(parts) + f" → {state}"


class RichProgress:
    """The runner's progress hooks, shown as a live panel on a terminal and as timestamped lines
    elsewhere, or nothing at all (`quiet`). `sequence` = (this test's number, the number of tests,
    the planned seconds of the tests after this one): the ETA then covers the rest of the
    sequence too (`in_sequence`)."""

    def __init__(
        self,
        console: Console,
        sequence: tuple[int, int, Ahead] | None = None,
        quiet: bool = False,
        report: bool = True,
    ):
        self.console = console
        self.quiet = quiet  # --quiet: no panel and no lines; the pace and ETA are still kept
        self.report = report  # a report follows the run (not under --no-report): what the heartbeat says at the end
        self.lines = quiet or not console.is_terminal  # a CI log or a pipe: a live panel would print nothing
        self._display = None if self.lines else Live(console=console, refresh_per_second=4, transient=True)
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
        self.phase_index, self.phase_done_s = 0, 0.0  # the phase under way; planned seconds of its steps done
        self.writes = PhaseWrites()  # what its intervals wrote: a write-budgeted phase's ETA
        self.measured = Measured()  # every round's write rate by stimulus: a later write budget's ETA
        self.pace = Pace()
        self.doing, self.since = "starting", time.monotonic()  # what the heartbeat says
        self._lock = threading.Lock()
        self._tokens, self._last_line, self._refill = float(BURST), time.monotonic(), time.monotonic()
        self._held: dict[str, str] = {}  # folded lines, the newest of each kind
        self._folded = 0
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self):
        if self._display is not None:
            self._display.__enter__()
        else:
            self._ticker = threading.Thread(target=self._tick, name="progress-lines", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc):
        if self._display is not None:
            self._display.__exit__(*exc)
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            self._flush()

    def in_sequence(self, plans: list[TestPlan], index: int) -> None:
        """The sequence's test `index` starts: its live ETA covers the tests after it too."""
        self.sequence = (index + 1, len(plans), plans_ahead(plans[index + 1 :], self.measured))
        self.phase_index, self.phase_done_s, self.writes, self.cell_wall = 0, 0.0, PhaseWrites(), None

    def test_starts(self, plan: TestPlan) -> None:
        """The plan the runner is given next (the command tells; the runner names only phases)."""
        self.plan = plan

    # -- runner hooks -----------------------------------------------------------------------
    def phase(self, phase: Phase, index: int) -> None:
        self.phase_ = phase
        self.phase_index, self.phase_done_s, self.writes = index, 0.0, PhaseWrites()
        self._doing(f"{phase.name}: starting")
        title, of = (self.plan.title, f"/{len(self.plan.phases)}") if self.plan is not None else ("", "")
        if self.lines:
            self._print(f"{title} · phase {index + 1}{of}: {phase.name} starts; ETA {self._eta()}")
        else:
            self.console.print(f"[bold]{esc(title)}[/] · phase {index + 1}{of}: {esc(phase.name)}")
        self._refresh()

    def resumed(self, rounds: int, written: int) -> None:
        """The phase under way continues a stopped run's: its preconditioning and `rounds` rounds
        are done and wrote `written` bytes, which its write budget's rest and time left count."""
        if self.phase_ is None:
            return
        self.writes.written += written
        self.phase_done_s += (
            sum(step_seconds(w) for w in self.phase_.precondition) + rounds * self.phase_.round_seconds()
        )

    def step(self, what: str, round_: int, index: int, count: int, label: str, seconds: float) -> None:
        self.what, self.round, self.index, self.count = what, round_, index, count
        self.label = label
        self.step_s = seconds
        self.live_iops = None
        name = self.phase_.name if self.phase_ is not None else ""
        self._doing(
            f"{name}: preconditioning {index + 1}/{count} ({self.label})"
            if what == "precondition"
            else f"{name}: round {round_}, cell {index + 1}/{count} ({self.label})"
        )
        self._refresh()

    def live(self, elapsed_s: float, iops: float) -> None:
        self.live_iops = iops
        self._refresh()

    def done(self, result: RoundResult, wall_s: float) -> None:
        self.last_iops = result.iops
        virtual = result.counters.get("virtual_seconds", 0.0)
        self.phase_done_s += self.step_s
        if self.what == "round":
            self.writes.add(result)
            if self.plan is not None and self.phase_ is not None and self.index < len(self.phase_.cells):
                self.measured.add(self.plan.title, self.phase_.cells[self.index].workload, result)
        self.pace.add(self.step_s, wall_s, virtual)
        self.virtual_s += virtual
        if self.what == "round":
            self.cell_wall = wall_s if self.cell_wall is None else 0.8 * self.cell_wall + 0.2 * wall_s
        self._refresh()

    def round_done(
        self, phase: Phase, rnd: int, history: dict[str, list[tuple[int, float]]], verdict: SteadyVerdict | None
    ) -> None:
        window = self.plan.rule.window if self.plan is not None else 0
        text = round_summary(phase, rnd, history, verdict, window)
        if self.lines:
            self._fold("round", f"{text}; ETA {self._eta()}")
        else:
            self.console.print(esc(text), soft_wrap=True, highlight=False)

    def phase_done(self, phase: Phase, steady: bool | None, rounds: int, reason: str) -> None:
        state = "" if steady is None else (", steady" if steady else ", not steady")
        if state and not phase.stop_on_steady:  # run to its budget (WSAT): its verdict is for information
            state = f", for information:{state[1:]}"
        last = self.plan is not None and phase.name == self.plan.phases[-1].name
        end = "writing its report" if self.report else "summarising its results"
        self._doing(f"the run is measured; {end}" if last else f"{phase.name}: done")
        if self.lines:
            self._print(f"{phase.name}: phase done after {counted(rounds, 'round')}{state}: {reason}")

    def note(self, text: str) -> None:
        if self.lines:
            self._fold("note", text)
        else:
            self.console.print(esc(text), soft_wrap=True)

    def result(self, text: str) -> None:
        """A line a reader takes the run's outcome from (a report's path): never folded, as notes
        are in a log (only the newest of a kind is kept), and after any line held before it."""
        if self.lines:
            self._print(text)
        else:
            self.console.print(esc(text), soft_wrap=True)

    # -- plain lines ------------------------------------------------------------------------
    def _doing(self, what: str) -> None:
        self.doing, self.since = what, time.monotonic()

    def _print(self, text: str) -> None:
        """A line that always prints (a phase starts or ends), after any line folded before it."""
        self._flush()
        self._emit(text)

    def _emit(self, text: str) -> None:
        if self.quiet:
            return
        with self._lock:
            self.console.print(f"{time.strftime('%H:%M:%S')} {esc(text)}", soft_wrap=True, highlight=False)
            self._last_line = time.monotonic()

    def _fold(self, kind: str, text: str) -> None:
        """A line that may come often: printed while the rate allows, else held (the newest of its
        kind) for the ticker to print once it does."""
        with self._lock:
            if self._held or self._take(1) < 0:
                self._tokens += not self._held  # nothing printed: nothing spent
                self._folded += kind in self._held
                self._held[kind] = text
                return
        self._emit(text)

    def _take(self, n: int) -> float:
        """Spend `n` of the lines the rate allows (with the lock held); what is left after."""
        now = time.monotonic()
        self._tokens = min(BURST, self._tokens + (now - self._refill) / LINE_EVERY_S) - n
        self._refill = now
        return self._tokens

    def _flush(self) -> None:
        with self._lock:
            held, folded = list(self._held.values()), self._folded
            self._held.clear()
            self._folded = 0
            self._take(len(held))
        if held and folded:
            held[0] = f"({counted(folded, 'earlier line')} folded, to keep about one line a second) {held[0]}"
        for text in held:
            self._emit(text)

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            now = time.monotonic()
            with self._lock:
                ready = bool(self._held) and self._take(0) >= len(self._held)
            if ready:
                self._flush()
            elif now - self._last_line >= HEARTBEAT_S:
                live = f", live {self.live_iops:,.0f} IOPS" if self.live_iops is not None else ""
                self._emit(f"still running: {self.doing} for {_clock(now - self.since)}{live}; ETA {self._eta()}")

    # -- the live panel ---------------------------------------------------------------------
    def _eta(self, now: float | None = None) -> str:
        """The rest of this test (and of the sequence) in wall time, from this run's measured pace:
        the rest of the phase under way, then the phases after it (and the tests after this one)."""
        if self.plan is None:
            return "estimating…"
        i = min(self.phase_index, len(self.plan.phases) - 1)
        first, last = self.plan.phase_seconds(self.plan.phases[i])
        later = ahead(self.plan, self.plan.phases[i + 1 :], self.measured) + (
            self.sequence[2] if self.sequence else Ahead()
        )
        got = (
            budget_estimate(self.plan, self.phase_, self.phase_done_s, self.writes, self.measured)
            if self.phase_
            else None
        )
        if got is None:
            early, late = max(0.0, first - self.phase_done_s), max(0.0, last - self.phase_done_s)
            budget = _later(later, late)
        else:
            early, late = got.early_s, got.late_s
            more = ", then what follows it at its latest" if later.most else ""
            how = got.how if got.how is None else "; ".join(filter(None, (got.how, *later.measured)))
            budget = Estimate(0.0, 0.0, got.most_s + later.most, f"{got.limit}{more}", how, later.then)
        text = eta_text(early + later.early, late + later.late, self.pace, now, budget)
        if self.sequence is None:
            return text
        number, count, _ = self.sequence
        return f"test {number}/{count}; to the end of the sequence: {text}"

    def _round_eta(self) -> str:
        if self.what != "round" or self.cell_wall is None or self.phase_ is None or self.plan is None:
            return "estimating…"
        per_round = self.cell_wall * self.count
        this_round = self.cell_wall * (self.count - self.index)
        window = self.plan.rule.window
        earliest = this_round + max(0, window - self.round) * per_round
        latest = this_round + max(0, self.phase_.max_rounds - self.round) * per_round
        # a phase that does not stop at steady state runs to its round limit: its end is `latest`
        if not self.phase_.stop_on_steady or _clock(earliest) == _clock(latest):
            return f"round {_clock(this_round)} · phase {_clock(latest)}"
        return f"round {_clock(this_round)} · phase earliest {_clock(earliest)}, latest {_clock(latest)}"

    def _refresh(self) -> None:
        if self._display is None:
            return
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
        t.add_row("ETA", f"{self._round_eta()} · run {esc(self._eta())}")
        self._display.update(t)
