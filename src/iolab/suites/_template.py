"""The template of a storage test: copy this file to `suites/<name>.py` to start a new test.

Everything a test declares about itself is here, in the one module the registry imports:
its parameters, its plan, its key figures, its report pages, its terminal view and the
declaration the registry reads (`TEST`). The example is small on purpose: random 4 KiB reads
and writes at one queue depth, rounds until the write IOPS are steady. To make it a real test:

1. rename the test (`NAME`, the title and summary in `TEST`) and write its plan in `build`;
2. name its key figures in `key_figures` (they are what `iolab compare` ranks and
   `iolab check` guards, so choose the few a reader decides on);
3. keep `pages` and `view`, or set them to None for the generic ones;
4. add one line to `MODULES` in `iolab/api/registry.py`.

This module is not in `MODULES`, so `iolab tests` does not list it. `tests/unit/test_templates.py`
registers it, runs it on a simulated drive and renders what it declares, so a change of the
registry's contract breaks the template's test before it misleads the next newcomer.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table as RichTable

from iolab.core import testparams as tp
from iolab.core.plan import Cell, Phase, Profile, TestPlan, Tracking
from iolab.core.units import KiB, num, pct_text
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.summary import PhaseSummary
from iolab.pages.report.model import Page, Table
from iolab.pages.report.rundata import RunData, window_rows
from iolab.pages.report.sections import measurement_window_pages, not_measured_page, table_pages, window_source
from iolab.suites import active_fraction, common_parameters, no_input, tested_capacity, wipc
from iolab.suites.figures import Getter, Metrics
from iolab.suites.testdef import TestDef
from iolab.targets import Target

NAME = "template"  # what `iolab run NAME` takes; the registry refuses a module whose TEST says otherwise
PHASE = "main"
MIXES = ("100/0", "0/100")  # R/W %: one cell each, every round
TRACKED = "0/100 4KiB"  # the cell whose IOPS must settle before the run ends

# The test's own knobs: `iolab run template --set qd=8` changes one; `iolab tests template`
# lists them. `quick` is the value a --quick run takes unless the user set one.
PARAMS = (
    tp.Param("qd", 32, "queue depth of the one thread", tp.queue_depth),
    tp.Param("rounds", 25, "most rounds before the run ends without steady state", tp.round_count, quick=5),
)


# -- the plan: what is run ---------------------------------------------------------------------


def build(profile: Profile, target: Target) -> TestPlan:
    """The plan as the runner executes it: purge, precondition, then rounds of cells until the
    tracked cell is steady. Reports read the plan stored in the run, never this function."""
    v = tp.values(PARAMS, profile, NAME)
    ar = active_fraction(profile, target)
    cells = tuple(
        Cell(
            f"{mix} 4KiB",
            Workload.mix(
                "rnd",
                int(mix.split("/")[0]),
                4 * KiB,
                threads=1,
                queue_depth=v["qd"],
                active_range=ar,
                duration_s=profile.cell_seconds,
            ),
            mix,
            4 * KiB,
        )
        for mix in MIXES
    )
    tracking = (Tracking(f"IOPS {TRACKED}", TRACKED, "iops"),)
    phase = Phase(PHASE, cells, tracking, purge=True, precondition=(wipc(profile, target),), max_rounds=v["rounds"])
    rows = (
        common_parameters(profile, target)
        + tp.parameter_rows(PARAMS, profile, NAME)
        + [
            ("Stimulus", f"RND 4 KiB, R/W {' and '.join(MIXES)}, TC 1 × QD {v['qd']}"),
            ("Tracking", tracking[0].name),
        ]
    )
    return TestPlan(
        NAME,
        "Template",
        f"iolab template ({profile.name})",
        profile,
        (phase,),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(rows),
        values=v,
    )


# -- key figures: what `iolab compare` ranks and `iolab check` guards -----------------------------


def _window_cell(mix: str, attr: str) -> Getter:
    """A getter: one drive's phases -> the figure, or None when that drive did not measure it
    (an interrupted run): a missing figure is left unranked, never made up."""

    def get(phases: list[PhaseSummary]) -> float | None:
        cell = next((c for ph in phases if ph.phase.name == PHASE for c in ph.cells if c.mix == mix), None)
        return getattr(cell, attr) if cell is not None else None

    return get


def key_figures(runs: Sequence[list[PhaseSummary]] = ()) -> Metrics:
    """`runs` holds each compared drive's phases, for figures that depend on what was run (one
    column per stream, say); these do not."""
    return (
        KeyMetric("RND 4KiB read IOPS", "IOPS", True, _window_cell("100/0", "iops")),
        KeyMetric("RND 4KiB write IOPS", "IOPS", True, _window_cell("0/100", "iops")),
        KeyMetric("ART RND 4KiB write", "µs", False, _window_cell("0/100", "lat_mean_us")),
    )


# -- report pages: what `iolab report` draws (Run Details follow them) ---------------------------


def pages(run: RunData) -> list[Page]:
    """Built from the run directory only (`run`: manifest, stored plan, results.db), so an old
    run's report never changes with this module."""
    ph = next((p for p in run.phases if p.phase.name == PHASE), None)
    if ph is None or not ph.cells:
        return [not_measured_page(run, ph, "Template")] if ph else []
    out = measurement_window_pages(run, ph, lambda v: "IOPS")
    rows = tuple((c.key, num(c.iops), num(c.mbps), num(c.lat_mean_us), pct_text(c.p99_999_us, c.ios)) for c in ph.cells)
    table = Table(
        "Template: results per cell over the measurement window",
        ("cell", "IOPS", "MB/s", "ART (µs)", "99.999 % (µs)"),
        rows,
        window_source(run, ph, "mean of each cell (99.999 %: its merged histogram)"),
        run.raw_links(window_rows(ph)) + run.store_links(),
    )
    return out + table_pages("Tabular Results — Template", [table])


# -- terminal view: what `iolab run` and `iolab show` print per phase ----------------------------


def view(ph: PhaseSummary, console: Console) -> None:
    t = RichTable(title="per cell, mean over the measurement window", title_justify="left")
    for col in ("cell", "IOPS", "ART µs"):
        t.add_column(col, justify="right")
    for c in ph.cells:
        t.add_row(c.key, num(c.iops), num(c.lat_mean_us))  # keys are the plan's own text, no user markup
    console.print(t)


# -- the declaration the registry reads: every field of TestDef, the defaults spelled out ---------

TEST = TestDef(
    NAME,
    "Template",
    "iolab template",
    "a template to copy: RND 4 KiB reads and writes to steady state",
    build=no_input(build),  # (profile, target, workload) -> plan; no_input drops the workload
    needs_workload=False,  # True: the test reads `--workload PATH` (build with rwsw_common.with_input) ...
    keep_input=None,  # ... and then names what copies that input into the run directory
    sequence=None,  # "pts" / "rwsw" / "characterise": `iolab run SEQUENCE` runs it in registry order
    optional=False,  # in its sequence, run only by `iolab run SEQUENCE --all`
    heading="",  # the report's page-header line; "": the family
    key_figures=key_figures,  # None: `iolab compare` refuses the test
    # True when some key figures are named after what each run did (a stream, a wait state):
    # a saved baseline's figure outside key_figures(()) is then held to the other runs' names
    figures_named_by_runs=False,
    # a key figure renamed: (its earlier name, its name now) for each, so a saved baseline,
    # a tolerances file and `iolab history OLD-NAME` still find it
    renamed_figures=(),
    pages=pages,  # None: report/pts.generic_pages
    overlays=None,  # (runs, labels) -> [Page] after the comparison's summary
    view=view,  # None: textreport.generic_view
    short_title="",  # in a sequence's cross-test summary; "": the title
    summary_figures=(),  # names of key figures in the sequence's summary comparison; (): none
    summary_order=0,  # where its columns go in that summary
    params=PARAMS,
    quick_sim_gb=None,  # --quick tests a copy of a simulated drive this large (GB; None: the 0.5 GB limit)
    quick_keeps_cache=False,  # ... keeping its SLC cache whole (a test that measures the cache)
)
