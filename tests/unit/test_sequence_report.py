"""One report for a sequence of runs (`iolab run characterise`, `iolab report --sequence`): a
summary page, then every run's own pages in the order they ran, quick-run banners on every
page, links to each run's own report and raw data. Opened in headless Chromium and read back
from the PDF; the runs are recorded with the scripted engine (no fio)."""

from __future__ import annotations

import time
from urllib.parse import unquote, urlparse

import pytest

from iolab.api.reports import write_report, write_sequence_report
from iolab.core.errors import IolabError
from tests.unit.test_report import DriveEngine, pdf_pages, record, target
from tests.unit.test_report_browser import browser, page_errors  # noqa: F401 - the shared headless Chromium


@pytest.fixture(scope="module")
def sequence(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    # a PTS test and a characterisation test: the report is the same code for any sequence
    qos = record(root, "qos", DriveEngine(), settings=(("rounds", "2"),))
    time.sleep(1.1)  # start times are stored to the second: the latency run starts after the QoS run
    latency = record(root, "latency", DriveEngine())
    write_report([qos], qos / "report")  # one run's own report exists, the other's not
    html, pdf = write_sequence_report([latency, qos])  # given out of order
    return root, qos, latency, html, pdf


def test_sequence_report_has_a_summary_then_each_runs_pages_in_run_order(sequence, browser):  # noqa: F811
    root, qos, latency, html, pdf = sequence
    assert html.parent == root / "sequences" and pdf.suffix == ".pdf"
    browser.get(html.as_uri())
    errors = page_errors(browser)
    assert not errors, errors
    heads = browser.execute_script(
        "return Array.from(document.querySelectorAll('section.page .head .test')).map(e => e.textContent)"
    )
    n = len(heads)
    assert heads[0].endswith("— Sequence Summary")
    # the run given first ran later: the QoS test's pages come first, then the latency test's
    first = next(i for i, h in enumerate(heads) if h.startswith("Latency"))
    assert all(h.startswith("QoS") for h in heads[1:first]) and all(h.startswith("Latency") for h in heads[first:]), (
        heads
    )
    assert heads[first - 1].startswith("QoS Rounds — Run Details") and first > 2
    numbers = browser.execute_script("return Array.from(document.querySelectorAll('.pageno')).map(e => e.textContent)")
    assert numbers == [f"Page {i} of {n}" for i in range(1, n + 1)]
    # the quick runs are marked on every page, the summary's included
    banners = browser.execute_script(
        "return Array.from(document.querySelectorAll('section.page')).map(s => s.querySelector('.banners').textContent)"
    )
    assert all("non-compliant (quick profile)" in b for b in banners)
    # every plot drawn: the vector ones (QoS per round, preconditioning, histograms) with a size
    images = browser.execute_script("return Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth])")
    assert all(ok and w > 0 for _, ok, w in images)
    plots = browser.execute_script(
        "return Array.from(document.querySelectorAll('svg.plot')).map(s => s.getBoundingClientRect().height)"
    )
    assert plots and all(h > 0 for h in plots)
    # links from the summary: the QoS run's own report (written), each run's raw data and store
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('#page-1 details.sources a')).map(a => [a.textContent, a.href])"
    )
    files = {(label, unquote(urlparse(href).path)) for label, href in links}
    assert ("own report", str(qos / "report" / f"{qos.name}.html")) in files
    assert not any(label == "own report" and latency.name in f for label, f in files)
    for run in (qos, latency):
        for rel, label in (("raw", "raw/"), ("results.db", "results.db"), ("manifest.json", "manifest.json")):
            assert (label, str(run / rel)) in files
    for _, f in files:
        assert (html.parent / f).exists(), f
    summary = browser.find_element("id", "page-1").text
    assert "QoS" in summary and "write: median round IOPS" in summary and "Latency" in summary
    sheets = pdf_pages(pdf)
    assert len(sheets) == n
    assert all("non-compliant (quick profile)" in s for s in sheets)
    assert "Sequence Summary" in sheets[0]


def test_a_sequence_report_is_of_one_target(tmp_path):
    a = record(tmp_path, "latency", DriveEngine())
    b = record(tmp_path, "latency", DriveEngine(), tgt=target(model="Other Disk"))
    with pytest.raises(IolabError, match="one target"):
        write_sequence_report([a, b])
    with pytest.raises(IolabError, match="given twice"):
        write_sequence_report([a, a])
