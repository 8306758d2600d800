"""A figure's label is true of the run it came from: each column of a terminal table says how
it was reduced over the window, a percentile is printed only where its IOs measure it, every
report page of a run not judged steady says so, --require-steady holds runs that never showed
steady state, and a sequence summary names the device each figure came from. Real `iolab`
runs on the simulated drive, quick, 100 ms cells, a few rounds."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import fake_fio, iolab, killed_at

pytestmark = pytest.mark.integration

QUICK = ("--quick", "--cell-time", "100ms")
SIM = ("-t", "sim:enterprise-sas?seed=1")


def flat(text: str) -> str:
    """Rich wraps a table's title to the table's width: the words, one space apart."""
    return " ".join(text.split())


def test_the_latency_table_says_each_columns_reduction_not_mean_for_all(tmp_path):
    p = iolab("run", "latency", *SIM, *QUICK, "--max-rounds", "3", "--no-report", "--runs-dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    said = "ART (mean) / MRT (maximum) / 99.999 % (of the merged histogram) over the measurement window, µs"
    shown = iolab("show", next(tmp_path.iterdir()).as_posix())
    for out in (p.stdout, shown.stdout):
        assert said in flat(out)
        assert "99.999 % (µs), mean over" not in flat(out)  # a maximum and a percentile are no means


def test_the_qos_summary_prints_no_9999_percentile_its_ios_cannot_measure(tmp_path):
    """100 ms rounds hold a few thousand IOs, far below what a 99.99 % needs: the summary line
    says n/m with the count, as the key-figure table's '—' and the report's n/m."""
    p = iolab("run", "qos", *SIM, *QUICK, "--set", "rounds=2", "--no-report", "--runs-dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    shown = iolab("show", next(tmp_path.iterdir()).as_posix())
    for out in (flat(p.stdout), flat(shown.stdout)):
        said = re.findall(r"µs in round \d+, last round 99\.99 % (\S+)", out)
        assert said == ["n/m", "n/m"], out  # write and read rounds
        assert len(re.findall(r"last round 99\.99 % n/m \([\d,]+ IOs\)", out)) == 2
        # its phases track no steady state: not applicable, never "not evaluated" (too few rounds)
        assert "rounds; steady state not applicable (the phase tracks none)" in out
        assert "not evaluated" not in out and "no steady state tracked" in out  # the endurance basis


def failing_fio(scratch: Path, *args: str) -> subprocess.CompletedProcess:
    """`iolab ARGS[:-1] --runs-dir ARGS[-1]` with a fio that fails its first step: a run that fails
    before it stores a round (a file too large for its filesystem is refused before the run
    exists, so it no longer makes one)."""
    fake = fake_fio(scratch, "echo 'fio: injected failure' >&2\nexit 1")
    env = {"PATH": f"{fake.parent}:{os.environ['PATH']}"}
    return iolab(*args[:-1], *QUICK, "--runs-dir", args[-1], env=env)


def _steady(path: Path) -> tuple[str, str]:
    r = json.loads(iolab("show", str(path), "--json").stdout)["runs"][0]
    return r["state"], r["steady_state"]


def test_require_steady_holds_an_interrupted_or_failed_run_and_says_not_evaluated_from_the_plan(scratch):
    """A run that never completed did not show steady state: --require-steady exits 6 (as for
    one not evaluated), and a failed run that stored no phase is 'not-evaluated' from its plan,
    not 'not-applicable' (that is for tests whose phases track none)."""
    killed = scratch / "killed"
    args = ["run", "latency", *QUICK, "--max-rounds", "3", "--no-report", "--runs-dir", str(killed)]
    killed_at([*args, "-t", f"file:{scratch}/k.img?size=16MiB"], killed, "*/raw/main-r02-*")
    [cut] = killed.iterdir()
    assert _steady(cut) == ("interrupted", "not-evaluated")
    failed = scratch / "failed"
    p = failing_fio(scratch, "run", "latency", "-t", f"file:{scratch}/f.img?size=16MiB", "--no-report", str(failed))
    assert p.returncode != 0 and "fio said: fio: injected failure" in flat(p.stdout + p.stderr)
    [bad] = failed.iterdir()
    assert _steady(bad) == ("failed", "not-evaluated")
    qos = scratch / "qos"  # a test whose phases track no steady state
    p = failing_fio(scratch, "run", "qos", "-t", f"file:{scratch}/g.img?size=16MiB", "--no-report", str(qos))
    [bad_qos] = qos.iterdir()
    assert _steady(bad_qos) == ("failed", "not-applicable")
    for run in (cut, bad, bad_qos):
        assert iolab("show", str(run)).returncode == 0
        assert iolab("show", str(run), "--require-steady").returncode == 6


def _page_texts(report: Path) -> list[str]:
    pages = re.split(r'<section class="page', report.read_text())[1:]
    return [flat(html.unescape(re.sub(r"<[^>]+>", " ", p))) for p in pages]


def test_every_page_of_a_run_whose_steady_state_was_not_evaluated_says_so(scratch):
    """--max-rounds 3 under the 5-round window: the run tracks steady state but never judged it.
    Every page carries the caveat as a failed one carries STEADY STATE NOT ACHIEVED, and the
    tables' source line says its window was not judged; so does a run that failed before its
    first round (a file that cannot be allocated)."""
    runs = scratch / "runs"
    p = iolab("run", "latency", *SIM, *QUICK, "--max-rounds", "3", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    [run] = runs.iterdir()
    pages = _page_texts(next((run / "report").glob("*.html")))
    banner = "STEADY STATE NOT EVALUATED (main: 3 rounds, fewer than the 5-round window)"
    assert len(pages) > 2 and all(banner in t for t in pages), [i for i, t in enumerate(pages) if banner not in t]
    assert "measurement window (rounds 1–3; steady state not evaluated: too few rounds to judge)" in " ".join(pages)
    assert "measurement window (rounds 1–3)" not in " ".join(t.split("Source:", 1)[-1] for t in pages)
    # the convergence plots' shaded window says it in its legend, read apart from the banner
    assert "measurement window (rounds 1–3, steady state not evaluated)" in " ".join(pages)
    assert "measurement window (rounds 1–3)" not in " ".join(pages)

    failed = scratch / "failed"
    p = failing_fio(scratch, "run", "latency", "-t", f"file:{scratch}/f.img?size=16MiB", str(failed))
    assert p.returncode != 0
    [bad] = failed.iterdir()
    pages = _page_texts(next((bad / "report").glob("*.html")))
    # beside the incomplete-run and quick-profile banners it is short, and whole on Run Details
    assert pages and all("STEADY STATE NOT EVALUATED" in t for t in pages)
    assert "Steady state STEADY STATE NOT EVALUATED (main: no round stored)" in " ".join(pages)


def test_a_sequence_summary_names_the_device_each_key_figure_came_from(tmp_path):
    """A quick Consistency test runs on a 4 GB copy of the simulated drive, the others on a
    0.537 GB one: the summary said only the first run's (Capacity 536.9 MB, user_gb=0.536870912)
    over Consistency's figures too."""
    runs = tmp_path / "runs"
    for test, short in (("qos", "rounds=2"), ("consistency", "duration=2s")):
        p = iolab("run", test, *SIM, *QUICK, "--set", short, "--no-report", "--runs-dir", str(runs))
        assert p.returncode == 0, p.stderr
    # by test, not by name: a quick QoS run can end within the second, and run names order the
    # tests alphabetically within one second
    by_test = {json.loads((d / "manifest.json").read_text())["test"]: d for d in runs.iterdir()}
    qos, cons = by_test["qos"], by_test["consistency"]
    assert "user_gb=4" in json.loads((cons / "manifest.json").read_text())["target"]["spec"]
    p = iolab("report", "--sequence", str(qos), str(cons), "-o", str(tmp_path / "seq"))
    assert p.returncode == 0, p.stderr
    page1, page2 = _page_texts(next((tmp_path / "seq").glob("*.html")))[:2]
    summary = page1 + " " + page2
    assert "Device: 2 copies of sim:enterprise-sas?seed=1" in page1
    # each copy with the drive it stands for (the Devices table has each capacity in full)
    # (the drive's spec heads the page: "Device: 2 copies of sim:enterprise-sas?seed=1")
    assert summary.count("(a copy of a 400.0 GB drive)") >= 2, summary[:3000]  # the Devices table, the header
    assert "Device: 2 copies of sim:enterprise-sas?seed=1" in summary, summary[:3000]
    assert re.search(
        r"D1 sim:enterprise-sas\?seed=1&user_gb=0\.5\S+ \(sim\) .* 536\.9 MB \(a copy .*\) QoS D2 ", summary
    )
    assert re.search(
        r"D2 sim:enterprise-sas\?seed=1&user_gb=4\S* \(sim\) .* 4\.000 GB \(a copy .*\) Consistency", summary
    )
    # each key figure with its device
    assert re.search(r"QoS write: median round IOPS ↑ [\d,.]+ D1", summary)
    assert re.search(r"Consistency IOPS over the whole period ↑ [\d,.]+ D2", summary)


def test_a_sequence_summary_words_a_budget_run_s_steady_state_for_information(tmp_path):
    """WSAT runs to its budget: its own header says "for information: steady"; the sequence's
    Runs table said a plain "(steady)" beside it, as for a test that stops at steady state."""
    runs = tmp_path / "runs"
    for test in ("wsat", "latency"):
        p = iolab("run", test, *SIM, *QUICK, "--no-report", "--runs-dir", str(runs))
        assert p.returncode == 0, p.stderr
        if test == "wsat":  # and so does its progress line
            assert re.search(r"main: phase done after \d+ rounds, for information: steady: ", p.stdout), p.stdout
    by_test = {json.loads((d / "manifest.json").read_text())["test"]: d for d in runs.iterdir()}
    wsat = json.loads(iolab("show", str(by_test["wsat"]), "--json").stdout)["runs"][0]
    assert wsat["steady_state"] == "reached", wsat["steady_state"]  # else the words below are not the point
    p = iolab("report", "--sequence", str(by_test["wsat"]), str(by_test["latency"]), "-o", str(tmp_path / "seq"))
    assert p.returncode == 0, p.stderr
    pages = _page_texts(next((tmp_path / "seq").glob("*.html")))
    summary = " ".join(pages[:2])
    assert re.search(r"main: rounds \d+–\d+ \(for information: steady\)", summary), summary
    assert re.search(r"main: rounds \d+–\d+ \(steady state reached\)", summary), summary  # latency's
    assert "(steady)" not in summary


def test_a_sequence_of_one_test_run_twice_says_two_runs_of_one_test_and_tells_them_apart(tmp_path):
    """`iolab report --sequence LAT1 LAT2`, two runs in two runs directories: it was titled "pts
    sequence (2 tests)" listing "Latency, Latency", its pages and figures told neither run from
    the other, and its Run directory was the first run's alone."""
    dirs = []
    for n in (1, 2):
        runs = tmp_path / f"runs{n}"
        p = iolab("run", "latency", *SIM, *QUICK, "--max-rounds", "3", "--no-report", "--runs-dir", str(runs))
        assert p.returncode == 0, p.stderr
        dirs += [str(d) for d in runs.iterdir()]
    # Two runs started in one second in two runs directories share their id (it is made of the
    # second, the test and the drive); they are two runs all the same. Give run 2 run 1's id,
    # as such a start does, so the case is tested whatever the machine's speed.
    m2 = Path(dirs[1]) / "manifest.json"
    manifest = json.loads(m2.read_text())
    manifest["run_id"] = Path(dirs[0]).name
    m2.write_text(json.dumps(manifest))
    p = iolab("report", "--sequence", *dirs, "-o", str(tmp_path / "seq"))
    assert p.returncode == 0, p.stderr
    [report] = (tmp_path / "seq").glob("*.html")
    assert report.name.startswith("sequence-pts-2runs-1test-")
    pages = _page_texts(report)
    assert "pts sequence (2 runs of 1 test) — Sequence Summary" in pages[0] and "(2 tests)" not in pages[0]
    assert "Tests in this report Latency (run 1) complete, non-compliant Latency (run 2) complete" in pages[0]
    # the summary's key figures are of 3 rounds, no steady-state window: its page says so, as the
    # runs' own pages do (it carried only the non-compliance); shortened beside it, to fit
    said = "STEADY STATE NOT EVALUATED: Latency (run 1), Latency (run 2) — in full on the Run Details and Notes page"
    assert said in pages[0], pages[0][:1500]
    assert f"Run directory {tmp_path}/runs1; {tmp_path}/runs2" in pages[0].replace("_ ", "_")
    same_id = Path(dirs[0]).name
    assert f"Latency (run 1) {same_id} complete" in pages[0] and f"Latency (run 2) {same_id} complete" in pages[0]
    # each run's own pages say which run they are
    assert "Latency (run 1) — Tabular Results" in " ".join(pages) and "Latency (run 2) — Tabular Results" in " ".join(
        pages
    )
    # a copy of a run's directory is that run: refused, both places named
    copy = tmp_path / "copy"
    shutil.copytree(dirs[0], copy)
    p = iolab("report", "--sequence", dirs[0], str(copy), "-o", str(tmp_path / "seq2"))
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert f"given twice: {same_id} ({dirs[0]} and {copy})" in " ".join(p.stderr.split())
    assert not (tmp_path / "seq2").exists()
