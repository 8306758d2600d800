"""`iolab watch` followed in a real headless Chromium while a real `iolab run` (fio on a file,
1 s cells) goes on: the list links to the run's page, whose charts grow as rounds are stored
(two screenshots, saved as artefacts), with no console error; once the run has ended, the page
keeps polling and no file of the run directory changes."""

from __future__ import annotations

import http.client
import math
import os
import shutil
import socket
import subprocess
from pathlib import Path

from iolab.store.runstore import RunStore
from tests.integration.conftest import IOLAB
from tests.unit.test_report_browser import browser, page_errors  # noqa: F401  (browser: a fixture)
from tests.unit.test_watch import wait_for as wait_until

WAIT_S = 300.0  # a busy machine: conditions are waited for, never timed


def wait_for(fn, what: str, timeout: float = WAIT_S):
    return wait_until(fn, what, timeout)


def files(d: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(d)): (p.lstat().st_mtime_ns, p.lstat().st_size) for p in d.rglob("*")}


def start_watch(runs: Path) -> tuple[subprocess.Popen, int]:
    """`iolab watch` on any free port, read from the address it prints: a fixed port may be
    another test suite's on this machine (a fresh root beside a checkout shares its network)."""
    watch = subprocess.Popen(
        [*IOLAB, "watch", str(runs), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    line = watch.stdout.readline() if watch.stdout else ""
    assert line.startswith("iolab watch: http://127.0.0.1:"), line + (watch.stderr.read() if watch.stderr else "")
    return watch, int(line.split("127.0.0.1:")[1].split("/")[0])


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return True
    except OSError:
        return False


def points(browser, box: str) -> list[int]:  # noqa: F811
    return browser.execute_script(
        f"return Array.from(document.querySelectorAll('#{box} svg.chart')).map(s => s.querySelectorAll('circle').length)"
    )


def y_ticks(browser) -> list[list[str]]:
    """Each drawn chart's y-axis labels, bottom to top."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('svg.chart')).filter(s => s.querySelector('circle'))"
        ".map(s => Array.from(s.querySelectorAll('text[text-anchor=end]')).map(t => t.textContent))"
    )


def assert_round_ticks(labels: list[str]) -> None:
    """Ticks a reader takes in at a glance: from 0, 1, 2, 2.5 or 5 × 10^k apart, written alike."""
    scale = {"k": 1e3, "M": 1e6}
    values = [float(x[:-1]) * scale[x[-1]] if x[-1] in scale else float(x) for x in labels]
    steps = {round(b - a, 9) for a, b in zip(values, values[1:])}
    assert len(values) >= 3 and values[0] == 0 and len(steps) == 1, labels
    (step,) = steps
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in (1, 2, 2.5, 5), labels
    assert len({x[-1] for x in labels[1:] if not x[-1].isdigit()}) <= 1, labels  # one suffix for all


def console_errors(browser) -> list:  # noqa: F811
    return page_errors(browser)


def test_run_page_charts_a_running_run_and_changes_nothing(browser, scratch, tmp_path):  # noqa: F811
    runs = scratch / "runs"
    runs.mkdir()
    artefacts = tmp_path / "screenshots"
    artefacts.mkdir()
    print(f"screenshots in {artefacts}")
    watch, port = start_watch(runs)
    run = subprocess.Popen(
        [
            *IOLAB,
            "run",
            "throughput",
            "-t",
            f"file:{scratch}/t.img?size=64MiB",
            "--quick",
            "--cell-time",
            "1s",
            "--max-rounds",
            "6",
            "--no-report",
            "--runs-dir",
            str(runs),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: watch.poll() is not None or listening(port), "iolab watch to listen")
        assert watch.poll() is None, watch.stderr.read()
        base = f"http://127.0.0.1:{port}"
        (run_dir,) = wait_for(lambda: [p for p in runs.iterdir() if (p / "manifest.json").exists()], "the run to start")

        # the list links to the run's page, and its table has latency columns
        browser.get(base + "/")
        link = f"tr[data-run='{run_dir.name}'] a"
        wait_for(lambda: browser.execute_script(f'return document.querySelector("{link}") !== null'), "the run's row")
        headers = browser.execute_script("return Array.from(document.querySelectorAll('th')).map(t => t.textContent)")
        assert {"mean latency µs", "p99 µs", "max latency µs"} <= set(headers)
        browser.execute_script(f'document.querySelector("{link}").click()')
        wait_for(lambda: browser.current_url == f"{base}/runs/{run_dir.name}", "the run's page")

        # a first round of the first phase stored: its tracking chart has a point
        first = wait_for(lambda: (p := points(browser, "tracking")) and p[0] >= 1 and p, "a first round on the chart")
        svg_first = browser.execute_script("return document.getElementById('tracking').innerHTML")
        browser.save_screenshot(str(artefacts / "run-page-1.png"))
        # a later round stored: more points plotted
        later = wait_for(lambda: (p := points(browser, "tracking")) and sum(p) > sum(first) and p, "a later round")
        browser.save_screenshot(str(artefacts / "run-page-2.png"))
        assert browser.execute_script("return document.getElementById('tracking').innerHTML") != svg_first
        assert sum(later) > sum(first)
        assert not console_errors(browser)
        for labels in y_ticks(browser):
            assert_round_ticks(labels)

        assert run.wait(timeout=WAIT_S) == 0, run.stderr.read()
        # finished: every round of both phases charted, the band of the last window drawn, the
        # last cell's per-second IOPS and latency charted, and no cell under way
        store = RunStore.open(run_dir)
        try:
            stored = [len(store.complete_rounds(ph.name)) for ph in store.phases()]
            # fio's per-second log of a 1 s cell may hold no row on a busy machine: the charts
            # must show what is stored, however many that is
            series = store.series(store.cells(complete_only=False)[-1].id)
        finally:
            store.close()
        per_second = len(series) + sum(1 for row in series for v in row[4:6] if v is not None)
        assert len(stored) == 2 and min(stored) >= 5  # the window's rounds at least
        # a chart per tracking variable (throughput tracks write and read MB/s), each with its
        # phase's rounds
        per_phase = len(points(browser, "tracking")) // len(stored)
        charted = [n for n in stored for _ in range(per_phase)]
        assert per_phase >= 1
        wait_for(lambda: points(browser, "tracking") == charted, f"{charted} rounds on the charts")
        assert browser.execute_script("return document.querySelectorAll('#tracking rect.band').length") == len(charted)
        wait_for(lambda: sum(points(browser, "last")) == per_second, f"the last cell's {per_second} stored points")
        # the live panel reads the run's live file, the charts its results: a poll may show the
        # last cell's points before the panel's next refresh (a fresh clone at load 5)
        wait_for(lambda: "no cell under way" in browser.find_element("id", "live").text, "no cell under way")
        assert browser.find_element("id", "splitbox").get_attribute("hidden") is not None  # one path: no split chart

        # the page goes on polling a finished run: nothing in its directory changes
        before = files(run_dir)
        polls = int(browser.find_element("id", "polls").text)
        wait_for(lambda: int(browser.find_element("id", "polls").text) >= polls + 3, "three more updates")
        assert files(run_dir) == before
        assert not console_errors(browser)
    finally:
        for p in (run, watch):
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=60)
        if os.environ.get("IOLAB_TEST_ARTEFACTS"):
            dest = Path(os.environ["IOLAB_TEST_ARTEFACTS"]) / "watch-page"
            dest.mkdir(parents=True, exist_ok=True)
            for f in artefacts.glob("*.png"):
                shutil.copy(f, dest)
    assert (artefacts / "run-page-1.png").stat().st_size > 0 and (artefacts / "run-page-2.png").stat().st_size > 0


def test_run_page_of_an_unknown_run_is_not_found(tmp_path):
    (tmp_path / "runs").mkdir()
    watch, port = start_watch(tmp_path / "runs")
    try:

        def status(path: str) -> int | None:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                c.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
                return c.getresponse().status
            except OSError:
                return None

        wait_for(lambda: watch.poll() is not None or status("/") == 200, "iolab watch to answer", timeout=60)
        assert status("/runs/no-such-run") == 404 and status("/api/runs/no-such-run") == 404
    finally:
        watch.terminate()
        watch.wait(timeout=60)
