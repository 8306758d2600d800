"""What iolab knows about one storage test, declared by the test's own module in suites/.

A test module builds its plan and names the functions that show it: key figures (compare),
report pages and comparison overlays (report/), the terminal view (textreport). Anything it
leaves out gets the generic view, the one a stored run of an unregistered test also gets.
This module imports no test, report or compare code (only types), so every layer may use it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from iolab.core.plan import Profile, TestPlan
    from iolab.core.testparams import Param
    from iolab.figures.compare import KeyMetric
    from iolab.figures.summary import PhaseSummary
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData
    from iolab.targets import Target

    # (profile, target, workload path or None) -> plan
    PlanBuilder = Callable[[Profile, Target, Path | None], TestPlan]
    # each drive's phases (for figures that depend on what was run) -> summary columns
    KeyFigures = Callable[[Sequence[list[PhaseSummary]]], tuple[KeyMetric[list[PhaseSummary]], ...]]
    PageBuilder = Callable[[RunData], list[Page]]
    OverlayBuilder = Callable[[list[RunData], list[str]], list[Page]]
    PhaseView = Callable[[PhaseSummary, Console], None]
    # (workload path as given, run directory) -> the files copied into the run
    InputKeeper = Callable[[Path, Path], list[Path]]


@dataclass(frozen=True)
class TestDef:
    """One storage test. `build` takes the workload path only when `needs_workload`."""

    __test__ = False  # not a pytest class

    name: str  # what `iolab run NAME` takes; stored as manifest.test
    title: str  # e.g. "IOPS"
    family: str  # e.g. "SNIA PTS", "SNIA RWSW", "characterisation"
    summary: str  # one line for `iolab tests` and the CLI help
    build: PlanBuilder
    needs_workload: bool = False
    # Copies the input into the run directory when a run starts (reports and resume read
    # only the run); required with needs_workload.
    keep_input: InputKeeper | None = None
    sequence: str | None = None  # `iolab run SEQUENCE` runs its tests in registry order
    optional: bool = False  # in its sequence, run only by `iolab run SEQUENCE --all`
    heading: str = ""  # the report's page-header line before the plan's spec; default: family
    key_figures: KeyFigures | None = None  # None: compare refuses (no figures to rank)
    # Some key figures are named after what each run measured or set (a stream, a wait state, its
    # own recovery tolerance): `key_figures(())` then names only the others, and a saved baseline's
    # figure outside them is held to the other runs' (automation/saved.py). False: it names them
    # all, and a saved figure it does not name, or one of them left out, is refused.
    figures_named_by_runs: bool = False
    # A key figure's earlier names, each with the name it has now: a saved baseline (`iolab
    # check`) and `iolab history FIGURE` key on names, and a rename left them a "missing" figure
    renamed_figures: tuple[tuple[str, str], ...] = ()
    pages: PageBuilder | None = None  # None: the generic per-cell pages
    overlays: OverlayBuilder | None = None  # comparison pages after the summary
    view: PhaseView | None = None  # None: grid when cells form mix × block size, else per cell
    short_title: str = ""  # in a sequence's cross-test summary; default: title
    # Runs of several tests of one sequence compare as one summary (the RWSW catalogue's
    # "Comparison") when each test names its columns there: () takes no part, None gives all
    # its key figures; `summary_order` orders the tests' columns.
    summary_figures: tuple[str, ...] | None = ()
    summary_order: int = 0
    # What `--set NAME=VALUE` may change for this test (iolab.core.testparams); the builder reads them.
    params: tuple[Param, ...] = ()
    # A --quick run tests a small copy of a simulated drive (suites.quick_setup). A test whose
    # effect needs a larger copy than the quick capacity limit gives its user capacity in GB
    # (GC bursts whose work grows with the drive); None: the limit.
    quick_sim_gb: float | None = None
    # The copy keeps the drive's SLC cache at its own size instead of scaling it with the drive
    # (a test that measures the cache; a scaled one would be crossed within a second).
    quick_keeps_cache: bool = False

    def __post_init__(self) -> None:
        if self.needs_workload and self.keep_input is None:
            raise ValueError(
                f"test {self.name!r}: needs a workload but declares no keep_input to copy it into its runs"
            )

    @property
    def report_heading(self) -> str:
        return self.heading or self.family

    @property
    def label(self) -> str:
        return self.short_title or self.title


# The contract of a TestDef's functions: each is called with these arguments, positionally (so
# their names are the declaring module's to choose), and returns the last item. The registry
# checks every declared function against it when the test is registered (api.registry), so a
# function that cannot take these arguments fails as iolab starts the test, not when a report
# or a comparison first calls it; what it returns is the type aliases' above (mypy checks them).
CONTRACT: dict[str, tuple[tuple[str, ...], str]] = {
    "build": (("profile", "target", "workload"), "TestPlan"),  # workload: a Path, or None
    "keep_input": (("workload", "run_dir"), "list[Path]"),
    "key_figures": (("runs",), "tuple[KeyMetric, ...]"),  # runs: each drive's list[PhaseSummary]
    "pages": (("run",), "list[Page]"),  # run: RunData
    "overlays": (("runs", "labels"), "list[Page]"),  # list[RunData], list[str]
    "view": (("phase", "console"), "None"),  # PhaseSummary, rich Console
}


def contract_problems(test: TestDef) -> list[str]:
    """How `test`'s declared functions break CONTRACT: one line each (none: it keeps it)."""
    out = []
    for name, (args, returns) in CONTRACT.items():
        fn = getattr(test, name)
        if fn is None:
            continue
        expected = f"{name}({', '.join(args)}) -> {returns}"
        if not callable(fn):
            out.append(f"{name} is a {type(fn).__name__}, not a function {expected}")
            continue
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):  # a callable inspect cannot read (a builtin) is taken on trust
            continue
        try:
            sig.bind(*args)
        except TypeError as e:
            out.append(f"{name} is {getattr(fn, '__qualname__', fn)}{sig}, which cannot be called as {expected} ({e})")
    return out
