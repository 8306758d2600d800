"""Reports a reviewer could publish: per run, one self-contained HTML file and a PDF of the
same pages (SNIA PTS layout: page header, four header columns, the test's tables and plots).

    model.py    the page model (Document, Page, Table, Figure, Text)
    rundata.py  a stored run as the pages read it (manifest, summaries, links to raw files)
    header.py   page header fields, the four header columns, banners
    vector.py   a plot as vector shapes (a Drawing), shown as inline SVG
    vticks.py, vaxes.py, vtext.py, vfigure.py  the plots iolab draws itself: ticks (a colour bar's
                too), axes, text, layout; vlabels.py labels beside points, clear of the series;
                vlegend.py the legend beside the axes
    vgrid.py, v3d.py, vbars.py, vscatter.py  heat maps, 3D columns, bars, one-per-second dots
    plot_style.py     the plots' palette and `Series`
    stream_plots.py   a trace's stream-analysis plots (the RWSW Self-Test pages, `iolab trace analyze`)
    plots.py          convergence, windows, lines over categories, time series, bars, 3D columns, heat maps
    latency_plots.py  the latency histogram and its tail
    difference_plots.py  a comparison's series and their difference from the group mean
    progress.py the "writing report … page n of N" lines while a report is written
    sections.py page builders shared by the tests, and the Run Details pages
    pts.py      the PTS tests' pages, and the generic pages of any other test
    rwsw.py     the RWSW tests' pages (rwsw_replay.py: Replay-Native; rwsw_selftest.py: the
                Self-Test pages after each of them)
    html.py     Document -> self-contained HTML
    pdf.py      the same pages -> PDF: pdflayout.py places them (pdfbox.py: its boxes;
                pdftable.py: tables), pdfdoc.py writes the file (ttf.py: the fonts; pdfvector.py:
                vector plots)
    sequence.py one report of a sequence's runs: a summary page, then each run's pages

Reports read only run directories. Which pages a test has is its declaration (suites/, via
the registry); `iolab.api.reports.write_report` asks the registry and calls `build_document` here, so
nothing in report/ names a test or imports the registry. The comparison figures (compare/)
are below report/ and may be used here; the comparison pages (compare_pages/) are above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from iolab import __version__
from iolab.core.errors import IolabError
from iolab.core.streams import note_line
from iolab.core.usertext import name_problem
from iolab.pages.report.model import Document, Page

if TYPE_CHECKING:
    from iolab.pages.report.rundata import RunData

# header (the run's audit, summaries, store), the PDF writer and the write policy are imported
# where a document is built or written, not by a command that only reads a plot module or the
# header (a suite's declaration, `iolab show`, a run without a report).


def build_document(run: RunData, pages: list[Page], heading: str | None = None) -> Document:
    """`pages`: every page (the test's own, then Run Details: sections.details_pages);
    `heading`: the test's declared page-header line (None: from the run's spec)."""
    from iolab.pages.report import header

    m = run.manifest
    return Document(
        title=f"{m.title} — {run.label} — {m.run_id}",
        spec=header.spec_line(run, heading),
        test_name=m.title,
        started=m.started,
        ended=m.ended or ("in progress" if m.state == "running" else f"not finished ({m.state})"),
        device=header.device_line(run),
        tested_by=m.platform.get("tested_by") or "not given (--tested-by)",
        columns=header.header_columns(run),
        banners=header.banners(run),
        pages=tuple(pages),
        footer=f"run {m.run_id} · results from {run.dir.name}/results.db · report by iolab {__version__}",
    )


def write_document(
    doc: Document | Sequence[Document], out_dir: Path, stem: str, title: str | None = None
) -> list[Path]:
    """Write `stem`.html and `stem`.pdf into out_dir (several documents: one file of all their
    pages in order, a sequence's report); returns both paths."""
    from iolab.pages.report.html import render  # jinja2: only where a report is written, not for every command
    from iolab.pages.report.pdf import write_pdf
    from iolab.pages.report.progress import Progress
    from iolab.targets.writepolicy import made_for, output_files

    if (why := name_problem(stem)) is not None:  # a stem from what a run stores (its id, its test)
        raise IolabError(f"report name {stem!r} is not a plain file name ({why}); nothing was written in {out_dir}.")
    docs = [doc] if isinstance(doc, Document) else list(doc)
    n = sum(len(d.pages) for d in docs)
    html_path, pdf_path = out_dir / f"{stem}.html", out_dir / f"{stem}.pdf"
    # Both are written aside, then put in place whole under one deferred stop (output_files): the
    # PDF first, then the HTML, the report's index (what a run's output and `iolab watch` link).
    # Two renames are never one, so the order is what a reader can rely on: whoever finds the HTML
    # finds its PDF. A kill -9 between them leaves the PDF alone, which a run's stop message names
    # (cli/runview.kept_report). A failed report leaves no folder it made (made_for).
    with (
        made_for(out_dir, "report directory"),
        output_files([pdf_path, html_path], "report file") as (pdf_part, html_part),
    ):
        html_part.write_text(render(docs, title=title), encoding="utf-8")
        pages, missing = write_pdf(docs, pdf_part, title or docs[0].title, Progress(f"writing report {stem}"))
    if pages != n:
        note_line(
            f"iolab: note: {pdf_path.name} has {pages} sheets for {n} report pages "
            "(a page overflowed); sheet numbers are printed instead of page numbers."
        )
    if missing:
        note_line(unprintable(pdf_path.name, missing))
    return [html_path, pdf_path]


def unprintable(pdf_name: str, missing: str) -> str:
    """The warning for characters the PDF could not print (a --tested-by name in a script no
    installed font has): which, and what to install where the fallback font is not there."""
    from iolab.pages.report import ttf

    which = ", ".join(f"{c} (U+{ord(c):04X})" for c in missing[:12]) + (", …" if len(missing) > 12 else "")
    install = (
        f" {ttf.FALLBACK} (Debian's {ttf.FALLBACK_PACKAGE}, which scripts/setup installs) prints Chinese, "
        "Japanese and Korean and is not installed here."
        if ttf.fallback() is None
        else ""
    )
    return (
        f"iolab: warning: {pdf_name} cannot print {which}: no font it embeds has them, so it prints "
        f"{ttf.MISSING} in their place (the HTML holds them as written).{install}"
    )


__all__ = ["build_document", "write_document"]
