"""The RWSW tests as a user runs them: a trace imported (`iolab import`), analysed (`iolab
analyse`), the four RWSW tests on a file with real fio and on the simulated drive (`iolab
run rwsw --quick`), and the RWSW comparison of the two with its rankings (`iolab compare`).
Also `iolab capture` on a loop device while fio runs a known mix."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import threading
import time
import urllib.request
from html import unescape
from pathlib import Path

import pytest

from iolab.api.runlist import list_runs
from iolab.figures.summary import summarise
from iolab.pages.report.layoutcheck import check_report
from iolab.store.runstore import RunStore
from iolab.traces.analysis.workloads import load_composite, load_replay

from .conftest import iolab

pytestmark = pytest.mark.integration

FILETIME_1970 = 116444736000000000  # 100 ns ticks from 1601 to 1970
SIM = "sim:enterprise-sas?user_gb=1"


def msr_trace(path, bad_line: bool = False) -> None:
    """Three 1 s capture steps with different mixes (MSR Cambridge CSV): RND 8 KiB reads and
    writes 60/40, then SEQ 64 KiB reads, then the first mix again; 0.5 ms response times."""
    rng_offsets = iter(range(7919, 10**9, 104729))
    lines, _t = [], 0
    for step in range(3):
        for i in range(300):
            ts = FILETIME_1970 + (step * 10**9 + i * 3_000_000) // 100
            if step == 1:
                op, off, size = "Read", 2**30 + i * 65536, 65536
            else:
                op, off, size = ("Read" if i % 5 < 3 else "Write"), (next(rng_offsets) % 2**17) * 8192, 8192
            lines.append(f"{ts},web,0,{op},{off},{size},5000")
    if bad_line:
        lines.insert(10, "128166372003061629,web,0,Wrte,0,4096,10")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    d = tmp_path_factory.mktemp("rwsw")
    msr_trace(d / "web.csv")
    p = iolab("trace", "import", str(d / "web.csv"), "--format", "msr", "--out", str(d / "web.parquet"))
    assert p.returncode == 0, p.stderr + p.stdout
    assert "900 IOs" in p.stdout
    p = iolab(
        "trace",
        "analyze",
        str(d / "web.parquet"),
        "--step",
        "1s",
        "--threshold",
        "3%",
        "--qd",
        "4",
        "--out",
        str(d / "wl"),
    )
    assert p.returncode == 0, p.stderr + p.stdout
    assert "dominant streams (≥ 3 %): 3" in p.stdout
    assert "written data (compressibility, duplicates): not available: the trace holds no data" in p.stdout
    for name in ("analysis.json", "composite.toml", "replay.toml", "plots/stream_map.svg"):
        assert (d / "wl" / name).is_file(), name
    return d


def test_analyse_writes_the_composite_and_the_replay_of_the_trace(workload):
    w = load_composite(workload / "wl" / "composite.toml")
    # 360 RND 8K R, 240 RND 8K W, 300 SEQ 64K R of 900 IOs
    assert {s.label(): round(s.share, 3) for s in w.streams} == {
        "RND 8KiB R": 0.4,
        "SEQ 64KiB R": 0.333,
        "RND 8KiB W": 0.267,
    }
    assert w.outstanding == 4
    r = load_replay(workload / "wl" / "replay.toml")
    assert [s.index for s in r.steps] == [0, 1, 2]
    assert [s.label() for s in r.steps[1].streams] == ["SEQ 64KiB R"]
    assert {s.label() for s in r.steps[0].streams} == {"RND 8KiB R", "RND 8KiB W"}


@pytest.mark.parametrize(
    "given,says",
    [
        ("150%", "from above 0% to below 100%, got 150%"),
        ("0%", "from above 0% to below 100%, got 0%"),
        ("-0.5", "from above 0% to below 100%, got -0.5%"),  # a bare number is a percentage
    ],
)
def test_a_threshold_out_of_range_is_refused_in_the_form_it_was_given(workload, tmp_path, given, says):
    # said in fractions ("must be in (0, 1), got 1.5") to a user who gave a percentage
    out = tmp_path / "wl"
    p = iolab("trace", "analyze", str(workload / "web.parquet"), "--threshold", given, "--out", str(out))
    assert p.returncode == 2, p.stdout + p.stderr
    said = " ".join(p.stderr.split())
    assert said.startswith("iolab: --threshold: ") and says in said and "(0, 1)" not in said, said
    assert "Traceback" not in p.stderr and "\n\n" not in p.stderr.strip() and not out.exists()


def test_import_stops_at_a_bad_line_unless_told_to_skip(tmp_path):
    msr_trace(tmp_path / "bad.csv", bad_line=True)
    p = iolab("trace", "import", str(tmp_path / "bad.csv"), "--format", "msr", "--out", str(tmp_path / "t.parquet"))
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert re.search(r"bad\.csv:11: .*Type", p.stderr), p.stderr
    p = iolab(
        "trace",
        "import",
        str(tmp_path / "bad.csv"),
        "--format",
        "msr",
        "--out",
        str(tmp_path / "t.parquet"),
        "--skip-bad-lines",
    )
    assert p.returncode == 0, p.stderr
    assert "skipped 1 bad line," in p.stdout


def test_an_rwsw_test_without_a_workload_fails_cleanly(tmp_path):
    p = iolab("run", "multi-wsat", "--target", SIM, "--runs-dir", str(tmp_path))
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "needs --workload" in p.stderr
    assert not list_runs(tmp_path)  # nothing was started


def run_rwsw(workload, runs, target, *extra) -> list[RunStore]:
    # DIRTH at three levels only (its default 1 … 1,024 sweep is a unit test): the flow runs rounds of them.
    # 200 ms cells: what is checked (every phase and level measured, the ranking of two drives) does
    # not depend on how long a cell measures, and a file's 1,024 outstanding IOs cost fio a core the
    # while: 500 ms cells made the file's runs 42 CPU-s, these 27.
    # At most 5 rounds (quick's limit is 10): on the file DIRTH's preconditioning and demand variation
    # each ran 10 rounds without reaching steady state, 50 of the file's 104 cells; 5 rounds still
    # fill the window each phase is judged over, and the round limit ends them as it did (the test 27 -> 20 CPU-s)
    p = iolab(
        "run",
        "rwsw",
        "--workload",
        str(workload / "wl"),
        "--target",
        target,
        "--quick",
        "--cell-time",
        "200ms",
        "--no-report",
        "--runs-dir",
        str(runs),
        "--set",
        "oio=1,32,1024",
        "--max-rounds",
        "5",
        *extra,
    )
    assert p.returncode == 0, p.stderr + p.stdout[-3000:]
    stores = [RunStore.open(r.path) for r in list_runs(runs)]
    assert sorted(s.manifest.test for s in stores) == sorted(["multi-wsat", "streams-wsat", "replay", "dirth-rwsw"])
    return stores


def check_runs(stores: list[RunStore]) -> None:
    for s in stores:
        m = s.manifest
        assert m.state == "complete", (m.test, m.error)
        assert (s.dir / "inputs" / "analysis.json").is_file() and (s.dir / "inputs" / "composite.toml").is_file()
        phases = {ph.phase.name: ph for ph in summarise(s)}
        for ph in phases.values():
            assert ph.rows and all(r.iops > 0 for r in ph.rows), (m.test, ph.phase.name)
            assert all(r.raw_files and all((s.dir / f).exists() for f in r.raw_files) for r in ph.rows)
        if m.test == "streams-wsat":
            assert list(phases) == ["RND 8KiB R", "SEQ 64KiB R", "RND 8KiB W"]
        if m.test == "replay":
            rep = phases["replay"]
            assert [c.key for c in rep.cells] == ["step 0", "step 1", "step 2"]
            assert rep.rows[1].read_iops > 0 and rep.rows[1].write_iops == 0  # the SEQ 64K read step
            assert phases["steady state (composite)"].rows
        if m.test == "dirth-rwsw":
            levels = [r for r in phases["demand variation"].rows if r.round == 1 and r.cell_key != "pre-write"]
            assert [r.workload["threads"] * r.workload["queue_depth"] for r in levels] == [1, 32, 1024]
            assert phases["operating points"].rows


def test_rwsw_on_a_file_and_on_the_simulated_drive_compared_with_rankings(workload, scratch):
    file_runs, sim_runs = scratch / "file-runs", scratch / "sim-runs"
    target = f"file:{scratch / 'drive.img'}?size=64MiB"
    # the WSATs' time budget: 10 intervals, as 5 s of 500 ms cells were
    fio_stores = run_rwsw(workload, file_runs, target, "--wsat-max-time", "2s")
    check_runs(fio_stores)
    assert all(s.manifest.versions["engine"].startswith("fio") for s in fio_stores)
    # the fio job of the deepest level really keeps 1,024 IOs in flight: 32 jobs × QD 32 per access pattern
    dirth = next(s for s in fio_stores if s.manifest.test == "dirth-rwsw")
    job = next(dirth.raw_dir.glob("demand_variation-r01-c*-TC32_QD32.fio")).read_text()
    assert re.findall(r"numjobs=(\d+)", job) == ["32", "32"] and sum(map(int, re.findall(r"iodepth=(\d+)", job))) == 32
    sim_stores = run_rwsw(workload, sim_runs, SIM, "--wsat-max-time", "2s")  # the same profile, or no comparison
    check_runs(sim_stores)

    out = scratch / "cmp"
    p = iolab("compare", *(str(s.dir) for s in fio_stores + sim_stores), "--out", str(out))
    assert p.returncode == 0, p.stderr + p.stdout
    [html] = out.glob("compare-rwsw-2drives-*.html")
    assert list(out.glob("compare-rwsw-2drives-*.pdf"))
    text = html.read_text()
    table = text.split("Ordinal ranking of the drives per key figure")[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]
    # Multi-WSAT 3, Replay-Native 3, DIRTH 2, one per stream 3: every column ranks both drives
    assert len(rows) == 11
    for row in rows:
        ranks = sorted(re.findall(r"([12]) of 2", row))
        # a tail percentile short cells cannot measure is shown as not measured, unranked
        assert ranks in (["1", "2"], ["1", "1"]) or (re.search(r"99\.9+ % RT", row) and row.count("—") == 2), row
    assert "Self-Test — IO Streams" in text
    # every page keeps the geometry rules (test_report_geometry.py), the RWSW reports' too: the
    # Self-Test's plots carried no record, DIRTH's ART axis crowded 40,000 over 50,000, and an
    # empty 99.999 % panel had 0-1 ticks on a "log scale" axis
    found = [str(v) for v in check_report(html)]
    assert not found, "\n".join(found)
    seq = iolab("report", "--sequence", *(str(s.dir) for s in sim_stores), "--out", str(scratch / "seq"))
    # nothing from the plotting library either ("No artists with labels found to put in legend")
    assert seq.returncode == 0 and "Warning" not in seq.stderr and "findfont" not in seq.stderr, seq.stderr
    [seq_html] = (scratch / "seq").glob("*.html")
    found = [str(v) for v in check_report(seq_html)]
    assert not found, "\n".join(found)


def test_a_sequence_comparison_lists_every_runs_caveats_of_each_drive(workload, tmp_path):
    """Its Drives side by side page names every run of each drive: its Run, State and Run directory
    rows showed only the drive's first run (its Multi-WSAT). The banners name each drive's
    Replay-Native as not evaluated "in full on the Drives Compared page"; that page's Caveats row
    printed only the drive's first run's (its Multi-WSAT's)."""
    stores = []
    for seed in (1, 2):
        runs = tmp_path / f"runs{seed}"
        # replay's composite steady-state phase stopped at 2 rounds: never judged, a caveat of its own
        for test, extra in (("multi-wsat", ()), ("replay", ("--max-rounds", "2"))):
            p = iolab(
                "run", test, "--workload", str(workload / "wl"), "--target", f"{SIM}&seed={seed}",
                "--quick", "--cell-time", "200ms", "--no-report", "--runs-dir", str(runs), *extra,
            )  # fmt: skip
            assert p.returncode == 0, p.stderr + p.stdout[-3000:]
        stores.append({s.manifest.test: s.dir for s in (RunStore.open(r.path) for r in list_runs(runs))})
    out = tmp_path / "cmp"
    # each drive's Multi-WSAT first: the run that stands for the drive in its header columns
    refs = [str(d[t]) for t in ("multi-wsat", "replay") for d in stores]
    p = iolab("compare", *refs, "--out", str(out))
    assert p.returncode == 0, p.stderr + p.stdout
    [html] = out.glob("compare-rwsw-2drives-*.html")
    text = html.read_text()
    assert "STEADY STATE NOT EVALUATED: D1 Replay-Native, D2 Replay-Native" in text
    side = text.split("Drives side by side")[1]
    row = re.search(r'<td class="h">Caveats</td>(.*?)</tr>', side, re.S)
    assert row, side[:2000]
    cells = re.findall(r"<td>(.*?)</td>", row.group(1), re.S)
    assert len(cells) == 2 and all(
        "Replay-Native: STEADY STATE NOT EVALUATED (steady state (composite): 2 rounds" in c for c in cells
    ), cells

    # the Run, State and Run directory rows named each drive's Multi-WSAT run alone
    def row_of(item: str) -> list[str]:
        found = re.search(rf'<td class="h">{item}</td>(.*?)</tr>', side, re.S)
        assert found, side[:2000]
        return re.findall(r"<td>(.*?)</td>", found.group(1), re.S)

    def each(d: dict, fact) -> str:
        return f"Multi-WSAT: {fact(d['multi-wsat'])}; Replay-Native: {fact(d['replay'])}"

    # two drives' runs that started in one second share an id: the page adds the runs directory
    twin = lambda run: [r.name for d in stores for r in d.values()].count(run.name) > 1  # noqa: E731
    assert row_of("Run") == [each(d, lambda run: f"{run.parent.name}/" * twin(run) + run.name) for d in stores]
    assert row_of("State") == [each(d, lambda run: "complete") for d in stores]
    assert row_of("Run directory") == [each(d, lambda run: f"../{run.parent.name}/{run.name}") for d in stores]
    assert not [str(v) for v in check_report(html)]
    # each Multi-WSAT stopped at its round limit, its window not accepted: the summary's caption
    # called its figures the "mean over the steady-state window" all the same
    main = [next(iter(summarise(RunStore.open(d["multi-wsat"])))) for d in stores]
    assert [ph.steady_state for ph in main] == ["not-reached"] * 2, [ph.phase.stop_reason for ph in main]
    said = " ".join(unescape(re.sub(r"<[^>]+>", " ", text)).split())
    caption = said[said.index("Source: each run's results.db — Multi-WSAT") :][:400]
    assert "mean over the steady-state window" not in said, caption
    assert (
        "Multi-WSAT and Individual Streams: mean over the measurement window, no steady state "
        "(D1 Multi-WSAT main (window passes, NOT accepted), D2 Multi-WSAT main (window passes, NOT accepted));"
    ) in caption, caption


# A 400 MiB copy of the default drive (same dies and timings, 28 % over-provisioning).
# (without the periodic GC pass, whose walk copies from the first interval on: FOB is WAF 1.0 here)
SMALL_SIM = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28&gc_pass_period_ms=0"


def test_multi_wsat_saturates_the_drive_before_steady_state(workload, tmp_path):
    runs = tmp_path / "runs"
    for test in ("multi-wsat", "replay"):
        p = iolab(
            "run",
            test,
            "--workload",
            str(workload / "wl"),
            "--target",
            SMALL_SIM,
            "--cell-time",
            "1s",
            "--no-report",
            "--runs-dir",
            str(runs),
        )
        assert p.returncode == 0, p.stderr + p.stdout[-3000:]
    stores = {s.manifest.test: s for s in (RunStore.open(r.path) for r in list_runs(runs))}
    mw = stores["multi-wsat"]
    capacity = mw.manifest.target["capacity"]
    # the composite reads: the range is filled first (WIPC) so no read hits a never-written LBA
    [pc] = mw.cells(kind="precondition")
    assert pc.read_ios == 0 and pc.write_bytes >= 2 * capacity
    [ph] = summarise(mw)
    cells = mw.cells()
    written = sum(c.write_bytes for c in cells)
    assert ph.steady is True and written >= capacity, (written / capacity, ph.phase.stop_reason)
    # the drive is past its fresh state: garbage collection copies pages in every window interval
    window = [c for c in cells if c.round in ph.window]
    assert window and all(c.counters["waf"] > 1.5 and c.counters["gc_copied_pages"] > 0 for c in window)
    # FOB was faster. By how much depends on the mix (this composite also reads) and on
    # how well the drive spreads GC over its dies: 1.17× with per-die write points.
    assert cells[0].counters["waf"] == 1.0 and cells[0].iops > 1.1 * ph.cells[0].iops
    assert "1× capacity of workload writes" in mw.manifest.parameters["Steady state after: workload writes"]
    # a saturated drive is no faster on the composite than the replay of the same capture
    from iolab.api.comparisons import key_metrics
    from iolab.figures.compare import replay_totals

    multi = key_metrics("multi-wsat")[0].get([ph])
    replay = replay_totals(summarise(stores["replay"]))
    assert multi < replay.iops, (multi, replay.iops)


@pytest.mark.root
def test_capture_then_analyse_a_fio_mix_on_a_loop_device(loop_device, scratch):
    if os.geteuid() != 0:
        pytest.skip("capture needs root")
    out = scratch / "cap.parquet"
    result = {}

    def work():
        # Start the IO once the capture is armed (its tracefs instance traces): `iolab` takes a
        # couple of seconds to start, so a fixed head start raced it on a slow machine.
        on = Path("/sys/kernel/tracing/instances/iolab/tracing_on")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (on.exists() and on.read_text().strip() == "1"):
            time.sleep(0.05)
        time.sleep(0.2)
        result["fio"] = subprocess.run(
            [
                "fio",
                "--name=app",
                f"--filename={loop_device}",
                "--rw=randrw",
                "--rwmixread=70",
                "--bs=4k",
                "--direct=1",
                "--ioengine=libaio",
                "--iodepth=4",
                "--runtime=2",
                "--time_based",
                "--output-format=json",
            ],
            capture_output=True,
            text=True,
            check=True,
        )

    t = threading.Thread(target=work)
    t.start()
    p = iolab("capture", loop_device, "--duration", "6s", "--out", str(out), timeout=120)
    t.join()
    assert p.returncode == 0, p.stderr + p.stdout
    assert out.is_file() and "response times: yes" in p.stdout
    job = json.loads(result["fio"].stdout)["jobs"][0]
    p = iolab("trace", "analyze", str(out), "--step", "1s", "--out", str(scratch / "wl"))
    assert p.returncode == 0, p.stderr + p.stdout
    w = load_composite(scratch / "wl" / "composite.toml")
    shares = {s.label(): s.share for s in w.streams}
    assert shares["RND 4KiB R"] == pytest.approx(0.7, abs=0.03) and shares["RND 4KiB W"] == pytest.approx(0.3, abs=0.03)
    assert 1 <= w.queue_depth <= 4  # fio kept 4 in flight; the average is at most that
    assert job["read"]["total_ios"] > 0


def test_a_multi_wsat_phase_too_short_to_judge_labels_its_shade_as_what_it_is(workload, tmp_path):
    # a time budget of 4 one-second intervals: fewer than the rule's window, so nothing is judged;
    # the shade and the results table said "last five intervals" of the three averaged
    from iolab.api import registry
    from iolab.pages.report.model import Figure
    from iolab.pages.report.rundata import RunData

    runs = tmp_path / "runs"
    p = iolab(
        "run", "multi-wsat", "--workload", str(workload / "wl"), "-t", "sim:enterprise-sas?user_gb=0.25",
        "--quick", "--wsat-max-time", "4s", "--no-report", "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr + p.stdout[-3000:]
    (run_dir,) = runs.iterdir()
    run = RunData.load(run_dir, tmp_path / "out")
    [ph] = run.phases
    assert ph.steady is None and 0 < len(ph.window) < 5, (ph.window, ph.phase.stop_reason)
    pages = registry.get("multi-wsat").pages(run)
    legends = {
        " ".join(entry.split())
        for page in pages
        for b in page.blocks
        if isinstance(b, Figure)
        for ax in b.drawing.record["axes"]
        for entry in ax["legend"]
    }
    n = len(ph.window)
    assert f"last {n} intervals averaged (not evaluated)" in legends, legends
    assert not [e for e in legends if "five" in e or "measurement window" in e], legends
    text = " ".join(str(cell) for page in pages for b in page.blocks for row in getattr(b, "rows", ()) for cell in row)
    assert f"not evaluated (too few complete intervals to judge; the last {n} intervals are averaged)" in text
    assert "five" not in text


def test_a_run_started_from_python_keeps_its_input_and_has_its_self_test_page(workload, tmp_path):
    """api.run_test does what `iolab run` does, input copy included: the report's Self-Test
    pages read inputs/analysis.json from the run directory."""
    from iolab import suites
    from iolab.api import runs as api

    profile = suites.make_profile("enterprise", quick=True, cell_seconds=0.5)
    [run] = api.run_test("replay", SMALL_SIM, profile, workload=workload / "wl", runs_dir=tmp_path / "runs")
    assert run.state == "complete" and run.test == "replay"
    assert (run.dir / "inputs" / "analysis.json").is_file()
    html = next(p for p in run.reports if p.suffix == ".html").read_text()
    assert "Self-Test (in-situ): what the captured application asked" in html and "No Self-Test page" not in html


def test_an_analysis_that_fails_leaves_no_directory_and_its_next_command_can_be_pasted(tmp_path):
    """`iolab trace analyze` made its --out directory before reading the trace: a file that is
    not an IO table, or a --step of 0, was refused (exit 2) with an empty directory left
    behind. And the command it suggests named an odd directory unquoted, so pasting it ran
    something else."""
    bad = tmp_path / "not-a-table.parquet"
    bad.write_text("Timestamp,Hostname\n")
    for args in ((str(bad),), ("--step", "0s", str(bad))):
        p = iolab("trace", "analyze", *args, "--out", str(tmp_path / "wl"))
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert not (tmp_path / "wl").exists()
    trace = tmp_path / "t.csv"
    msr_trace(trace)
    assert iolab("trace", "import", str(trace), "--out", str(tmp_path / "t.parquet")).returncode == 0
    out = tmp_path / "w l;$x"
    p = iolab("trace", "analyze", str(tmp_path / "t.parquet"), "--step", "1s", "--out", str(out))
    assert p.returncode == 0, p.stderr
    [line] = [ln for ln in p.stdout.splitlines() if ln.startswith("next:")]
    assert shlex.split(line)[5] == str(out), line


def edited_composite(workload, tmp_path, field: str, value: str):
    """A workload directory whose composite.toml is the analysis's with the first `field` set to
    `value` (TOML text), as a hand edits it."""
    wl = tmp_path / "wl"
    wl.mkdir()
    text = (workload / "wl" / "composite.toml").read_text()
    first = re.search(rf"^{field} = .*$", text, re.M)
    assert first, text
    (wl / "composite.toml").write_text(text[: first.start()] + f"{field} = {value}" + text[first.end() :])
    return wl


@pytest.mark.parametrize("size", ["4097", '"4000B"', "0"])
def test_a_workload_block_size_no_target_can_take_is_refused_before_the_run_starts(workload, tmp_path, size):
    """A composite.toml edited to a block size that is no whole number of 512 B sectors was
    accepted: the run purged and preconditioned the drive and failed at its first cell (exit 4,
    'block size 4097 B must be a positive multiple of 512 B'), a failed run left behind. It is
    now refused when the file is read, with its line, and nothing is written."""
    wl = edited_composite(workload, tmp_path, "block_size", size)
    runs = tmp_path / "runs"
    p = iolab("run", "multi-wsat", "-w", str(wl), "-t", "sim:enterprise-sas", "--quick", "--runs-dir", str(runs))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "field 'block_size': expected a positive multiple of 512 B" in " ".join(p.stderr.split())
    assert not runs.exists() or not any(runs.iterdir())


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("share_pct", "nan", "field 'share_pct': expected a finite number, got nan"),
        ("duration_s", "inf", "field 'duration_s': expected a finite number, got inf"),
        # the CLI's one wording (usertext.check_text); format characters: test_invisible_names.py
        ("name", '"web\\u001b[2J"', "field 'name' 'web\\x1b[2J': holds a control character ('\\x1b' at position 4)"),
    ],
)
def test_a_workload_value_that_is_no_number_or_holds_a_control_character_is_refused(
    workload, tmp_path, field, value, says
):
    """TOML reads nan and inf as numbers: a share of nan passed the check that the shares add up
    to 100 and `iolab fio-job` and `iolab run` ended in a traceback (ValueError: cannot convert
    float NaN to integer), an infinite duration was planned; a name's escape sequence reached
    the terminal. Each is refused with the file's line, exit 2, before anything is written."""
    wl = edited_composite(workload, tmp_path, field, value)
    runs = tmp_path / "runs"
    for line in (
        ["fio-job", "multi-wsat", "-w", str(wl), "--quick", "-t", f"file:{tmp_path}/t.img?size=64MiB"],
        ["run", "multi-wsat", "-w", str(wl), "-t", "sim:enterprise-sas", "--quick", "--runs-dir", str(runs)],
    ):
        p = iolab(*line)
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "Traceback" not in p.stderr, (line, p.stderr)
        assert f"{wl / 'composite.toml'}:" in said and says in said, (line, said)
        assert "\x1b" not in p.stdout + p.stderr
    assert not runs.exists() or not any(runs.iterdir())
    assert not (tmp_path / "t.img").exists()


@pytest.fixture(scope="module")
def unjudged_replay(workload, tmp_path_factory):
    """A quick replay whose composite ran 2 rounds: too few to judge steady state (not evaluated)."""
    runs = tmp_path_factory.mktemp("unjudged") / "runs"
    p = iolab(
        "run", "replay", "--workload", str(workload / "wl"), "-t", SMALL_SIM,
        "--quick", "--cell-time", "0.5s", "--max-rounds", "2", "--no-report", "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr + p.stdout[-3000:]
    (run_dir,) = runs.iterdir()
    return run_dir


def test_a_replay_after_a_composite_that_never_reached_steady_state_does_not_say_it_did(unjudged_replay, tmp_path):
    """The Replay-Native summary said every step ran "after the composite brought the drive to
    steady state" whatever the composite's verdict: a composite stopped at its round limit, or
    too soon to judge, was published as steady beside the banner saying it was not. And that
    each ran "for its duration", where a quick run's cell time had cut every step short."""
    from iolab.api import registry
    from iolab.pages.report.model import Text
    from iolab.pages.report.rundata import RunData

    run = RunData.load(unjudged_replay, tmp_path / "out")
    pages = registry.get("replay").pages(run)
    summary = next(page for page in pages if page.title == "Replay-Native Summary")
    text = " ".join(line for b in summary.blocks if isinstance(b, Text) for line in b.paragraphs)
    assert "brought the drive to steady state" not in text, text
    assert "whose steady state was not evaluated (rounds 1–2: too few to judge)" in text, text
    # --cell-time 0.5s cut the workload's 1 s steps to 0.5 s: they did not run "for its duration"
    assert "for its duration" not in text, text
    assert "for at most 0.500 s (a scaled-down run: the replay file's steps last up to 1.00 s)" in text, text


def test_the_watch_page_gives_a_finished_runs_steady_state_not_its_last_phases(unjudged_replay):
    """`iolab watch` showed a finished replay's steady state as its last phase's, which tracks
    nothing: "not evaluated yet; ran its single round", for a complete run whose composite was
    never judged (or failed), where `iolab show` says not-evaluated (or not-reached)."""
    from .test_watch_cli import free_port, watching

    shown = json.loads(iolab("show", str(unjudged_replay), "--json").stdout)["runs"][0]["steady_state"]
    assert shown == "not-evaluated", shown
    port = free_port()
    with watching(unjudged_replay.parent, port):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=20) as r:
            [row] = json.loads(r.read())["runs"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=20) as r:
            page = r.read().decode()
    assert row["state"] == "complete" and row["steady"]["run"] == shown, row
    assert '"not-evaluated": "not evaluated (no window of rounds was filled)"' in page
