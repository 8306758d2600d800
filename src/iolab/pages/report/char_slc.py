"""Report pages and terminal view of the SLC cache test: the fill's MB/s against GB written, the
cliff found in it (analysis/slc.py) and its figures. Reads only the run directory."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape as esc

from iolab.core.units import num
from iolab.figures.slc import Cache, find_cache, written_gb
from iolab.figures.summary import PhaseSummary
from iolab.pages.report.model import Figure, Page, Table, Text
from iolab.pages.report.rundata import RunData, cell_series

PHASE = "fill"  # the suite names it; a report reads the run, not suite code
DEFAULT_CLIFF = 0.75  # a run stored without the parameter


def fill_series(ph: PhaseSummary | None) -> tuple[list[float], list[float]]:
    """Each interval's end (s) and MB/s of the phase's fill, as stored; a fill shorter than the
    engine's first interval is its own one interval."""
    if ph is None or not ph.rows or ph.run_dir is None:
        return [], []
    row = ph.rows[-1]
    pts = cell_series(ph.run_dir, row.id)
    if not pts:
        return [row.runtime_s], [row.mbps]
    return [p[0] for p in pts], [p[3] for p in pts]


def phase_cache(ph: PhaseSummary) -> Cache | None:
    """The cache the phase's fill crossed (or why none was found); None when nothing was measured."""
    t, mbps = fill_series(ph)
    share = ph.values.get("fill_of_drive") if ph else None
    return find_cache(t, mbps, _cliff(ph), None if share is None else float(share)) if t else None


def _cliff(ph: PhaseSummary) -> float:
    return float(ph.values.get("cliff", DEFAULT_CLIFF))


def _rows(c: Cache) -> tuple[tuple[str, str], ...]:
    rows = (("written", f"{c.written_gb:.3f} GB in {c.seconds:.1f} s"),)
    fast, slow = c.in_cache_mbps, c.post_cache_mbps
    if c.size_gb is None or fast is None or slow is None:
        median = f"{c.median_mbps:,.0f} MB/s" if c.median_mbps is not None else "—"
        after = f"{slow:,.0f} MB/s (no cache: the fill's median)" if slow is not None else f"— ({c.no_post})"
        return (
            *rows,
            ("SLC cache", f"no cache found: {c.reason}"),
            ("median rate", median),
            ("post-cache rate", after),
        )
    return (
        *rows,
        ("SLC cache size", f"{c.size_gb:.2f} GB"),
        ("in-cache rate", f"{fast:,.0f} MB/s"),
        ("cache ran out after", f"{c.cliff_s:.2f} s"),
        ("post-cache rate", f"{slow:,.0f} MB/s ({slow / fast:.0%} of in-cache)"),
    )


METHOD = (
    "The cache is found at the one change point of the fill's MB/s series: the split into a first and "
    "a second part with the least squared error around each part's mean. The in-cache rate is the first "
    "part's median, the post-cache rate the second's (each without the interval at the split, which "
    "holds both). A cliff needs two whole intervals before it and a rate after it that stays below the "
    "`cliff` share of the in-cache rate; the cache size is what was written at the in-cache rate, read "
    "from the bytes written up to the split and the two rates."
)


def slc_pages(run: RunData) -> list[Page]:
    # the plots only here: the test's declaration (suites/char_slc.py) imports this module's
    # phase name, figures and view, and `iolab tests` or a run loaded the plots through them
    from iolab.pages.report.char_plots import _rate_by_written
    from iolab.pages.report.sections import not_measured_page, table_pages

    ph = run.phase(PHASE)
    t, mbps = fill_series(ph)
    if ph is None or not t:
        return [not_measured_page(run, ph, "SLC Cache")] if ph else []
    c = phase_cache(ph)
    if c is None:
        return [not_measured_page(run, ph, "SLC Cache")]
    src = f"Source: results.db tables cells and series (one point per second), phase {PHASE!r}; run {run.manifest.run_id}."
    rates = (c.in_cache_mbps, c.post_cache_mbps) if c.found else (c.median_mbps,)
    plot = _rate_by_written(written_gb(t, mbps), mbps, c.size_gb, tuple(r for r in rates if r is not None))
    page = Page(
        "SLC Cache: MB/s against GB written",
        (Figure("each second's MB/s at the GB written by its end", plot, src), Text((c.text(), METHOD), 45)),
    )
    row = ph.rows[-1]
    table = Table("the fill's figures", ("figure", "value"), _rows(c), src, run.raw_links([row]) + run.store_links())
    return [page, *table_pages("SLC Cache: figures", [table])]


def slc_view(ph: PhaseSummary, console: Console) -> None:
    for r in ph.rows:
        console.print(
            # the digits every figure prints (num): "456 MB/s over 70.1944 s" stood above the key
            # figures' 455.9 MB/s
            esc(f"{r.cell_key}: {num(r.mbps)} MB/s over {num(r.runtime_s)} s (MB/s against GB written: `iolab report`)")
        )
    c = phase_cache(ph)
    if c:
        console.print(esc(c.text()))
