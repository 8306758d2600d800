"""Reports a reviewer could publish: per run, one self-contained HTML file and a PDF of the
same pages (SNIA PTS layout: page header, four header columns, the test's tables and plots).

    model.py    the page model (Document, Page, Table, Figure, Text)
    rundata.py  a stored run as the pages read it (manifest, summaries, links to raw files)
    header.py   page header fields, the four header columns, banners
    plots.py    matplotlib plots as PNG bytes
    sections.py page builders shared by the tests
    pts.py      which pages each PTS test has
    html.py     Document -> self-contained HTML
    pdf.py      the same HTML -> PDF (WeasyPrint)

Reports read only run directories.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .. import __version__
from . import header
from .html import render
from .model import Document
from .pdf import write_pdf
from .pts import pages_for
from .rundata import RunData


def build_document(run: RunData) -> Document:
    m = run.manifest
    return Document(
        title=f"{m.title} — {run.label} — {m.run_id}",
        spec=header.spec_line(run),
        test_name=m.title,
        started=m.started,
        ended=m.ended or ("in progress" if m.state == "running" else f"not finished ({m.state})"),
        device=header.device_line(run),
        tested_by=m.platform.get("tested_by") or "not given (--tested-by)",
        columns=header.header_columns(run),
        banners=header.banners(run),
        pages=tuple(pages_for(run)),
        footer=f"run {m.run_id} · results from {run.dir.name}/results.db · report by iolab {__version__}",
    )


def write_document(doc: Document, out_dir: Path, stem: str) -> list[Path]:
    """Write `stem`.html and `stem`.pdf into out_dir; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    html = render(doc)
    html_path = out_dir / f"{stem}.html"
    html_path.write_text(html, encoding="utf-8")
    pdf_path = out_dir / f"{stem}.pdf"
    pages = write_pdf(render(doc, for_print=True), pdf_path, len(doc.pages), out_dir)
    if pages != len(doc.pages):
        print(f"iolab: note: {pdf_path.name} has {pages} sheets for {len(doc.pages)} report pages "
              "(a page overflowed); sheet numbers are printed instead of page numbers.", file=sys.stderr)
    return [html_path, pdf_path]


def write_report(run_dirs: list[Path], out_dir: Path) -> list[Path]:
    """One HTML and one PDF per run, in out_dir; returns the paths written."""
    out_dir = Path(out_dir).resolve()
    written = []
    for ref in run_dirs:
        run = RunData.load(ref, out_dir)
        written += write_document(build_document(run), out_dir, run.manifest.run_id)
    return written


__all__ = ["write_report", "build_document", "write_document"]
