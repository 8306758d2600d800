"""`iolab watch` in a real headless Chromium: the page loads, follows a run while its rounds
are committed (a scripted engine released cell by cell), shows no console errors, and the
server never creates or changes a file in a run directory."""

from __future__ import annotations

import dataclasses
import json
import shutil
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from iolab import suites
from iolab.api import registry
from iolab.api.watch import run_snapshot, serve, snapshot
from iolab.engines.merge import PART_PREFIX, PART_SEP
from iolab.run.live import MIN_INTERVAL_S
from iolab.run.runner import Runner
from iolab.run.runstart import RunOptions, start
from tests.unit.test_report import DriveEngine, record, target
from tests.unit.test_report_browser import browser, page_errors  # noqa: F401  (browser: a fixture)

WAIT_S = 30.0


class GatedEngine(DriveEngine):
    """Runs a cell only when the test releases one."""

    def __init__(self):
        super().__init__()
        self.gate = threading.Semaphore(0)

    def run(self, *a, **kw):
        if not self.gate.acquire(timeout=WAIT_S):
            raise KeyboardInterrupt  # the test gave up: end the run instead of hanging
        return super().run(*a, **kw)


@pytest.fixture
def server(tmp_path):
    srv = serve(tmp_path, port=0)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    t.start()
    yield srv, tmp_path
    srv.shutdown()
    srv.server_close()


def wait_for(fn, what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def files(d: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(d)): (p.stat().st_mtime_ns, p.stat().st_size) for p in d.rglob("*")}


def run_in_thread(engine, root: Path) -> tuple[threading.Thread, list[str]]:
    """A quick throughput run on `engine` in a thread; its id is appended to the list once started."""
    tgt = target()
    plan = registry.build_plan("throughput", suites.make_profile("enterprise", quick=True, cell_seconds=1.0), tgt)
    ids: list[str] = []

    def run():  # the store's SQLite connection belongs to the thread that opens it
        store = start(plan, tgt, engine, RunOptions(), root)
        ids.append(store.manifest.run_id)
        Runner(plan, tgt, engine, store, RunOptions()).run()

    runner = threading.Thread(target=run)
    runner.start()
    return runner, ids


def open_page(browser, url: str) -> None:
    browser.get("about:blank")
    browser.get_log("browser")  # drops what an earlier test's page logged once its server had gone
    browser.get(url)


def run_row(browser, srv, ids: list[str]):
    """Open the page; returns a function giving the run's row text as shown."""
    open_page(browser, f"http://127.0.0.1:{srv.server_address[1]}/")
    row = f"tr[data-run='{wait_for(lambda: ids, 'the run to start')[0]}']"
    return lambda: browser.execute_script(f'const r = document.querySelector("{row}"); return r && r.innerText;')


def test_page_follows_a_running_run_round_by_round(server, browser):  # noqa: F811
    srv, root = server
    engine = GatedEngine()
    runner, ids = run_in_thread(engine, root)
    try:
        engine.gate.release(2)  # the preconditioning cell and the first measurement cell
        shown = run_row(browser, srv, ids)

        first = wait_for(lambda: (t := shown()) and "round 1 of" in t and t, "round 1 on the page")
        assert "running" in first and "throughput" in first and "SEQ 1024KiB" in first
        engine.gate.release(3)  # finish rounds 1 and 2
        later = wait_for(lambda: (t := shown()) and "round 2 of" in t and t, "round 2 on the page")
        assert "variables pass" in later or "not evaluated yet" in later
        errors = page_errors(browser)
        assert not errors, errors
    finally:
        engine.gate.release(1000)
        runner.join(timeout=WAIT_S)
    assert not runner.is_alive()


class SplitProgressEngine(DriveEngine):
    """Reports two legs' live IOPS mid-cell, one step each time the test releases it, as the
    split engine does over --paths: in wall time, as fio does (a simulated drive reports at once,
    so live.json waits for its first report; one in wall time names the cell as it starts)."""

    capabilities = dataclasses.replace(DriveEngine.capabilities, virtual_time=False)

    def __init__(self):
        super().__init__()
        self.gate = threading.Semaphore(0)

    def run(self, target, workload, raw_dir, tag, progress=None):
        for step in (1, 2):
            if not self.gate.acquire(timeout=WAIT_S):
                raise KeyboardInterrupt
            progress(float(step), 1000.0 * step, 50.0 * step, {"/dev/loop8": 600.0 * step, "/dev/loop9": 400.0 * step})
        if not self.gate.acquire(timeout=WAIT_S):  # the cell ends when the test has seen it
            raise KeyboardInterrupt
        return super().run(target, workload, raw_dir, tag, progress)


def test_page_shows_each_paths_live_iops_during_a_cell(server, browser):  # noqa: F811
    srv, root = server
    engine = SplitProgressEngine()
    runner, ids = run_in_thread(engine, root)
    try:
        engine.gate.release(1)
        shown = run_row(browser, srv, ids)

        first = wait_for(lambda: (t := shown()) and "/dev/loop8: 600" in t and t, "the first live report")
        assert "1,000 IOPS, mean 50 µs" in first and "/dev/loop9: 400" in first and "at 1.0 s" in first
        time.sleep(MIN_INTERVAL_S)  # live.json is rewritten at most this often
        engine.gate.release(1)  # the same cell, a second later: no round was committed in between
        later = wait_for(lambda: (t := shown()) and "/dev/loop8: 1,200" in t and t, "the second live report")
        assert "2,000 IOPS, mean 100 µs" in later and "/dev/loop9: 800" in later and "at 2.0 s" in later
        errors = page_errors(browser)
        assert not errors, errors
    finally:
        engine.gate.release(10000)
        runner.join(timeout=WAIT_S * 4)
    assert not runner.is_alive()


def test_watching_changes_no_file_in_a_run_directory(server):
    srv, root = server
    run = record(root, "throughput", DriveEngine())
    before = files(run)
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    for _ in range(3):
        data = json.loads(urllib.request.urlopen(f"{url}/api/runs", timeout=10).read())
    assert [r["state"] for r in data["runs"]] == ["complete"]
    assert urllib.request.urlopen(f"{url}/", timeout=10).status == 200
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(f"{url}/runs/{run.name}/report/..%2fmanifest.json", timeout=10)
    assert files(run) == before


def test_page_shows_a_copy_beside_its_original_as_its_own_row(server, browser):  # noqa: F811
    # one id in two run directories: each row says its directory, and its link opens that run
    srv, root = server
    run = record(root, "throughput", DriveEngine())
    copy = shutil.copytree(run, root / "archived-copy")
    open_page(browser, f"http://127.0.0.1:{srv.server_address[1]}/")
    script = "return [...document.querySelectorAll('#runs tr')].map(r => [r.dataset.run, r.innerText]);"
    # both rows: a first poll on a loaded machine (1 failure in a unit run at load 13) had fewer
    rows = wait_for(lambda: (r := browser.execute_script(script)) and len(r) >= 2 and r, "the rows")
    shown = dict(rows)
    # the original is its id, as `iolab show ID` opens it; the copy is ID@DIRECTORY
    assert sorted(shown) == sorted([run.name, f"{run.name}@archived-copy"]), rows
    assert "directory archived-copy (another run directory holds this id too)" in shown[f"{run.name}@archived-copy"]
    browser.find_element("css selector", f"tr[data-run='{run.name}@{copy.name}'] a").click()
    wait_for(lambda: browser.find_element("id", "title").text == f"{run.name}@{copy.name}", "the copy's page")
    wait_for(lambda: browser.find_element("id", "polls").text not in ("", "0"), "the copy's data on its page")
    errors = page_errors(browser)
    browser.get("about:blank")  # its page stops polling before this test's server goes
    assert not errors, errors


def test_snapshot_shows_each_hosts_iops_of_the_last_cell(tmp_path):
    run = record(tmp_path, "throughput", DriveEngine())
    (entry,) = snapshot(tmp_path)["runs"]
    assert entry["parts"] == [] and entry["iops"] > 0 and entry["steady"]["evaluated"]
    assert entry["eta_s"] is None  # finished: nothing left
    assert run.name == entry["id"]


def test_snapshot_shows_the_cell_under_way_before_its_first_report(tmp_path):
    engine = SplitProgressEngine()  # blocked before its first report, as a host run is until its cell ends
    runner, ids = run_in_thread(engine, tmp_path)
    try:
        live = wait_for(lambda: [r.get("live") for r in snapshot(tmp_path)["runs"] if r.get("live")], "the live cell")[
            0
        ]
        assert (
            live["cell"] == "WIPC SEQ 1024KiB W (preconditioning 1 of 1)"
            and live["iops"] is None
            and live["parts"] == {}
        )
        assert live["running_s"] >= 0
    finally:
        engine.gate.release(10000)
        runner.join(timeout=WAIT_S * 4)
    assert not runner.is_alive()
    (entry,) = snapshot(tmp_path)["runs"]
    assert entry["state"] == "complete" and entry["live"] is None  # a finished run shows no cell under way


def test_run_snapshot_keeps_the_cells_live_reports_for_its_chart(tmp_path):
    engine = SplitProgressEngine()
    runner, ids = run_in_thread(engine, tmp_path)
    try:
        engine.gate.release(1)
        run_id = wait_for(lambda: ids, "the run to start")[0]

        def samples():
            live = (run_snapshot(tmp_path, run_id) or {}).get("detail", {}) or {}
            return (live.get("live") or {}).get("samples")

        assert wait_for(samples, "the first live report") == [
            [1.0, 1000.0, {"/dev/loop8": 600.0, "/dev/loop9": 400.0}, 50.0]
        ]
        time.sleep(MIN_INTERVAL_S)  # live.json is rewritten at most this often
        engine.gate.release(1)
        later = wait_for(lambda: (s := samples()) and len(s) == 2 and s, "the second live report")
        assert later[1] == [2.0, 2000.0, {"/dev/loop8": 1200.0, "/dev/loop9": 800.0}, 100.0]  # both kept, in order
    finally:
        engine.gate.release(10000)
        runner.join(timeout=WAIT_S * 4)
    assert not runner.is_alive()
    data = run_snapshot(tmp_path, run_id)
    assert data["summary"]["state"] == "complete" and data["detail"]["live"] is None
    tracking = [t for ph in data["detail"]["phases"] for t in ph["tracking"]]
    assert tracking and all(t["points"] and t["band"] for t in tracking)
    for t in tracking:  # the band is the stored window average ± half the allowed range
        b = t["band"]
        assert b["low"] < b["average"] < b["high"] and b["rounds"][0] < b["rounds"][1]
    assert run_snapshot(tmp_path, "no-such-run") is None


class TwoPathEngine(DriveEngine):
    """Each cell's result carries two paths' shares, as the split engine stores them."""

    def run(self, *a, **kw):
        r = super().run(*a, **kw)
        parts = {
            f"{PART_PREFIX}/dev/loop8{PART_SEP}iops": r.iops * 0.6,
            f"{PART_PREFIX}/dev/loop9{PART_SEP}iops": r.iops * 0.4,
        }
        return dataclasses.replace(r, counters={**r.counters, **parts})


def test_run_page_charts_each_paths_iops_cell_by_cell(server, browser):  # noqa: F811
    srv, root = server
    run = record(root, "throughput", TwoPathEngine())
    data = run_snapshot(root, run.name)
    split = [x for ph in data["detail"]["phases"] for x in ph["split"]]
    assert split and all(set(x["parts"]) == {"/dev/loop8", "/dev/loop9"} for x in split)
    open_page(browser, f"http://127.0.0.1:{srv.server_address[1]}/runs/{run.name}")
    shown = wait_for(
        lambda: browser.execute_script(
            "const s = document.querySelector('#split svg.chart');"
            " return s && !document.getElementById('splitbox').hidden && s.querySelectorAll('circle').length"
        ),
        "the split chart",
    )
    assert shown == 2 * len(split)  # a point per path and cell
    assert "/dev/loop8" in browser.find_element("id", "split").text
    errors = page_errors(browser)
    assert not errors, errors


def test_live_json_is_not_written_through_a_symlink_at_its_old_fixed_aside_name(tmp_path):
    """live.json was written to the fixed name .live.json.tmp with write_text, which followed a
    symlink planted there (the file it named got the progress document, and the link was renamed
    over live.json); it is now written aside under a fresh name made with O_EXCL."""
    from iolab.run.live import LIVE_NAME, LiveFile

    victim = tmp_path / "victim.txt"
    victim.write_text("someone's data\n")
    (tmp_path / f".{LIVE_NAME}.tmp").symlink_to(victim)
    live = LiveFile(tmp_path, "cell 1", lambda elapsed_s, iops: None)
    live(1.0, 1000.0)
    assert victim.read_text() == "someone's data\n"
    assert (
        not (tmp_path / LIVE_NAME).is_symlink() and json.loads((tmp_path / LIVE_NAME).read_text())["cell"] == "cell 1"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".{LIVE_NAME}.tmp", LIVE_NAME, "victim.txt"]
