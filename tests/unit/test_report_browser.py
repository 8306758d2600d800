"""The report as a reader gets it: the HTML opened in a real headless Chromium (Selenium driving
Debian's chromium + chromedriver, installed by scripts/setup) and the PDF read page by page.
The run is recorded with the scripted engine (no fio)."""

from __future__ import annotations

import shutil
import struct

import pytest

from iolab.api.reports import write_report
from tests.unit.test_report import DriveEngine, IdlingDriveEngine, pdf_pages, record

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


# The PTS 2.0 tests with pages of their own ride along: XSR (three groups, recovery table),
# DIRTH on a small grid (DV, DI, OIO pages), WSAT with an optional workload (latency page) and
# HIR (bursts after idles, shaded).
REPORTS = {
    "throughput": (),
    "xsr": (),
    "dirth": (("threads", "1,2,4"), ("depths", "1,2,4")),
    "wsat": (("workload", "oltp"),),
    "hir": (("pc_round_intervals", "1"), ("bursts", "2"), ("wait_states", "1,2"), ("baseline_time", "2s")),
}


@pytest.fixture(scope="module", params=list(REPORTS))
def report(request, tmp_path_factory):
    engine = IdlingDriveEngine() if request.param == "hir" else DriveEngine()
    run = record(
        tmp_path_factory.mktemp("runs"),
        request.param,
        engine,
        settings=REPORTS[request.param],
        # WSAT: 20 intervals to its time budget, far from its write budget (its window and all its plots)
        **({"wsat_max_seconds": 20.0, "wsat_capacity_multiple": 1000.0} if request.param == "wsat" else {}),
    )
    html, pdf = write_report([run], tmp_path_factory.mktemp("report"))
    return html, pdf


def page_errors(browser) -> list:
    """What the page logged as errors since the last call. Chromium fails a request in flight
    with ERR_NETWORK_CHANGED whenever any interface of the machine changes (other tests make
    network namespaces and veth pairs): the machine's event, not the page's; the next poll
    fetches again."""
    return [
        e
        for e in browser.get_log("browser")
        if e["level"] in ("SEVERE", "ERROR") and "net::ERR_NETWORK_CHANGED" not in e.get("message", "")
    ]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.fail(
            f"{CHROMIUM} and {CHROMEDRIVER} are needed (Debian: apt-get install chromium chromium-driver; "
            "scripts/setup installs them)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    # root, no GPU, small /dev/shm, no network: the flags a CI container needs
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,1800",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])  # IHDR width, height


def test_html_report_renders_in_a_browser_with_every_plot(report, browser, tmp_path):
    html, _ = report
    browser.get(html.as_uri())
    errors = page_errors(browser)
    assert not errors, errors

    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth, i.naturalHeight,"
        " i.getBoundingClientRect().width, i.getBoundingClientRect().height])"
    )
    for alt, complete, nw, nh, w, h in images:
        assert complete and nw > 0 and nh > 0, alt  # the PNG decoded
        assert w > 0 and h > 0, alt  # and is laid out, not hidden or collapsed
    # the plots iolab draws itself, inline SVG: laid out, and their texts drawn by the browser
    vectors = browser.execute_script(
        "return Array.from(document.querySelectorAll('svg.plot')).map(s => [s.getAttribute('aria-label'),"
        " s.getBoundingClientRect().width, s.getBoundingClientRect().height, s.querySelectorAll('text').length,"
        " s.querySelector('text') ? s.querySelector('text').getBBox().width : 0])"
    )
    assert len(images) + len(vectors) >= 4  # convergence and window plots for both block sizes, the 2D plot
    for alt, w, h, texts, text_w in vectors:
        assert w > 0 and h > 0 and texts > 0 and text_w > 0, alt

    heads = browser.execute_script(
        "return Array.from(document.querySelectorAll('section.page')).map(s => s.querySelector('.head').innerText)"
    )
    assert heads and all(f"Page {n} of {len(heads)}" in h for n, h in enumerate(heads, 1))

    first = browser.find_element("css selector", "section.page")
    shot = tmp_path / "report-page-1.png"
    assert first.screenshot(str(shot))
    w, h = png_size(shot)
    assert w > 300 and h > 300 and shot.stat().st_size > 10_000  # a rendered page, not a blank sliver


def test_pdf_pages_match_the_html_pages_one_by_one(report, browser):
    html, pdf = report
    browser.get(html.as_uri())
    titles = browser.execute_script(
        "return Array.from(document.querySelectorAll('section.page .head .test')).map(e => e.innerText)"
    )
    pages = pdf_pages(pdf)
    assert len(pages) == len(titles) > 3
    for n, (text, title) in enumerate(zip(pages, titles), 1):
        flat = " ".join(text.split())
        assert f"Page {n} of {len(pages)}" in flat, n
        assert " ".join(title.split()) in flat, (n, title)  # the header's test and page title
        assert "Device: Acme FastDisk 9000" in flat and "Tested by: QA lab" in flat, n
        assert "non-compliant (quick profile)" in flat, n


# The characterisation tests' own pages (rounds, histograms, matrices, per-second series,
# endurance), each recorded on a small simulated drive with the cheapest settings that still
# draw every plot.
CHARACTERISATION = {
    "qos": (("rounds", "2"), ("measured", "200ms")),
    "rw-matrix": (("qds", "1,4"), ("sizes", "4k")),
    "mixed-matrix": (("qds", "1,4"), ("write_pcts", "0,50")),
    "entropy": (("qds", "1,4"), ("entropies", "0,100"), ("cell_time", "200ms")),
    "consistency": (("duration", "4s"),),
}


@pytest.mark.parametrize("test", CHARACTERISATION)
def test_characterisation_pages_render_in_a_browser(test, browser, tmp_path):
    from iolab.engines.sim import SimEngine
    from iolab.targets import parse_target

    tgt = parse_target("sim:entry-sata-compress?user_gb=0.125")
    run = record(
        tmp_path / "runs", test, SimEngine(), tgt, settings=CHARACTERISATION[test] + (("precondition_time", "200ms"),)
    )
    html, _ = write_report([run], tmp_path / "report")
    browser.get(html.as_uri())
    errors = page_errors(browser)
    assert not errors, errors
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth, i.naturalHeight])"
    )
    for alt, complete, nw, nh in images:
        assert complete and nw > 0 and nh > 0, alt
    # the plots iolab draws itself are inline SVG, laid out like the PNGs
    vectors = browser.execute_script(
        "return Array.from(document.querySelectorAll('svg.plot')).map(s => s.getBoundingClientRect().height)"
    )
    assert len(images) + len(vectors) >= 2 and all(h > 0 for h in vectors), test
    heads = browser.execute_script(
        "return Array.from(document.querySelectorAll('section.page .head')).map(h => h.innerText)"
    )
    assert any("Endurance" in h for h in heads), test
