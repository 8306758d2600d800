"""`iolab watch` as laid out in a real headless Chromium 1,280 px wide: the run list fits the
window with every column visible (a running split run's live text and a long report name
included), each chart's legend names exactly the series it draws, and every time of day shown
is HH:MM:SS on a 24-hour clock even in a locale whose own clock has AM and PM."""

from __future__ import annotations

import dataclasses
import re

from iolab.core.results import SecondSample
from tests.unit.test_report import DriveEngine, record
from tests.unit.test_report_browser import browser, page_errors  # noqa: F401  (browser: a fixture)
from tests.unit.test_watch import SplitProgressEngine, run_in_thread, server, wait_for  # noqa: F401  (server: a fixture)

WIDTH = 1280
CLOCK = re.compile(r"^\d{2}:\d{2}(:\d{2})?$")


class SeriesEngine(DriveEngine):
    """Stores a per-second series with each cell: mean latency always, the maximum only when
    `with_max` (fio logs the maximum only when asked to)."""

    def __init__(self, with_max: bool):
        super().__init__()
        self.with_max = with_max

    def run(self, *a, **kw):
        r = super().run(*a, **kw)
        mean = r.write.lat_mean_us or r.read.lat_mean_us
        series = tuple(
            SecondSample(
                float(t), r.read.iops, r.write.iops, 1.0, mean * (1 + t / 10), mean * 3 if self.with_max else None
            )
            for t in (1, 2, 3)
        )
        return dataclasses.replace(r, series=series)


def open_at(browser, url: str) -> None:  # noqa: F811
    """The page at 1,280 px in a 12-hour locale (en-US), so a time left to the locale shows AM/PM."""
    browser.get("about:blank")
    browser.get_log("browser")  # drops what an earlier test's page logged once its server had gone
    browser.set_window_size(WIDTH, 800)
    browser.execute_cdp_cmd("Emulation.setLocaleOverride", {"locale": "en-US"})
    browser.get(url)


def test_run_list_fits_1280_px_with_every_column(server, browser):  # noqa: F811
    srv, root = server
    done = record(root, "throughput", DriveEngine())
    (done / "report").mkdir()
    for ext in ("html", "pdf"):  # the names `iolab report` gives: the run id again
        (done / "report" / f"{done.name}.{ext}").write_text("<p>the report</p>")
    engine = SplitProgressEngine()
    runner, ids = run_in_thread(engine, root)
    try:
        engine.gate.release(1)  # a live report with each path's IOPS: the list's longest text
        open_at(browser, f"http://127.0.0.1:{srv.server_address[1]}/")
        row = f"tr[data-run='{wait_for(lambda: ids, 'the run to start')[0]}']"
        wait_for(
            lambda: (
                "/dev/loop9: 400"
                in (browser.execute_script(f'return document.querySelector("{row}")?.innerText') or "")
            ),
            "the live report on the list",
        )
        wait_for(lambda: browser.execute_script("return document.querySelectorAll('#runs a').length") >= 4, "both rows")
        box = browser.execute_script(
            "const de = document.documentElement, ths = Array.from(document.querySelectorAll('th'));"
            "return {width: de.clientWidth, scroll: de.scrollWidth, table: document.querySelector('table').scrollWidth,"
            " tableBox: document.querySelector('table').clientWidth, inner: window.innerWidth,"
            " heads: ths.map(t => [t.textContent, t.getBoundingClientRect().left, t.getBoundingClientRect().right]),"
            " cells: Array.from(document.querySelectorAll('#runs td')).map(td => td.getBoundingClientRect().right)}"
        )
        assert box["inner"] == WIDTH, box["inner"]
        assert box["scroll"] <= box["width"], f"the page scrolls sideways: {box['scroll']} px in {box['width']} px"
        heads = [h[0] for h in box["heads"]]
        assert "time left" in heads and "reports" in heads, heads
        for name, left, right in box["heads"]:  # every column within the window, none squeezed to nothing
            assert left >= 0 and right <= box["width"] and right - left >= 40, (name, left, right, box["width"])
        assert max(box["cells"]) <= box["width"]
        errors = page_errors(browser)
        assert not errors, errors
    finally:
        engine.gate.release(10000)
        runner.join(timeout=120)
    assert not runner.is_alive()


LEGENDS = """
const ctx = document.createElement('canvas').getContext('2d');
function norm(c) { ctx.fillStyle = '#000'; ctx.fillStyle = c; return ctx.fillStyle; }
return Array.from(document.querySelectorAll('figure')).filter(f => f.querySelector('.legend')).map(f => {
  const svg = f.querySelector('svg.chart'), drawn = new Set();
  svg.querySelectorAll('circle').forEach(e => drawn.add(norm(e.getAttribute('fill'))));
  svg.querySelectorAll('polyline').forEach(e => drawn.add(norm(e.getAttribute('stroke'))));
  const spans = Array.from(f.querySelectorAll('.legend span'));
  return {title: f.querySelector('figcaption').textContent, names: spans.map(s => s.textContent.replace('● ', '')),
          legend: spans.map(s => norm(s.style.color)), drawn: Array.from(drawn)};
});
"""


def legends(browser, url: str) -> list[dict]:  # noqa: F811
    open_at(browser, url)
    wait_for(
        lambda: browser.execute_script("return document.querySelector('#last svg.chart circle') !== null"), "charts"
    )
    return browser.execute_script(LEGENDS)


def test_each_legend_names_the_series_drawn_and_no_other(server, browser):  # noqa: F811
    srv, root = server
    base = f"http://127.0.0.1:{srv.server_address[1]}/runs/"
    no_max = record(root, "throughput", SeriesEngine(with_max=False))
    with_max = record(root, "throughput", SeriesEngine(with_max=True))
    for run, latency_names in ((no_max, ["mean"]), (with_max, ["mean", "max"])):
        shown = legends(browser, base + run.name)
        # the steady-state charts (a variable and its fit line) and the last cell's latency chart
        assert len(shown) >= 3, shown
        for fig in shown:  # a colour per drawn series, each named once
            assert sorted(fig["legend"]) == sorted(fig["drawn"]), fig
            assert len(set(fig["names"])) == len(fig["names"]), fig
        (latency,) = [f for f in shown if f["title"] == "latency per second (µs)"]
        assert latency["names"] == latency_names, latency
        errors = page_errors(browser)
        assert not errors, errors


def test_times_are_24_hour_whatever_the_locale(server, browser):  # noqa: F811
    srv, root = server
    run = record(root, "throughput", DriveEngine())
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    for page in ("/", f"/runs/{run.name}"):
        open_at(browser, url + page)
        # the locale override holds: left to the locale, 22:01 would read "10:01:02 PM"
        assert "PM" in browser.execute_script("return new Date(2020, 0, 1, 22, 1, 2).toLocaleTimeString()")
        shown = wait_for(lambda: (t := browser.find_element("id", "updated").text) != "never" and t, "an update")
        assert CLOCK.match(shown), shown
        text = browser.find_element("tag name", "body").text
        assert not re.search(r"\b[AP]M\b", text), text
        for t in re.findall(r"(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?![\d:])", text):  # every time of day on the page
            assert CLOCK.match(t), t
        # and the page's own clock writes an evening time as the terminal does
        assert browser.execute_script("return clock(new Date(2020, 0, 1, 22, 1, 2))") == "22:01:02"
