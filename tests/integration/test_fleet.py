"""`iolab run TEST --fleet FILE` and `iolab fleet` as users run them: a simulated fleet with one
drive made slower on purpose, a drive that fails among ones that do not, bad fleet files, and a
fleet of file drives on fio-server hosts (network namespaces)."""

from __future__ import annotations

import html
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pypdf import PdfReader

from iolab.core.units import num
from iolab.targets.files import mark_created

from ..schema_lite import errors
from .conftest import IOLAB, default_signals, iolab
from .netns import fio_hosts, kill_host

QUICK = ("--quick", "--cell-time", "100ms", "--max-rounds", "2", "--no-report")
# for a test of where a drive ran and what its run stored of it, not of its figures: a round is
# 9 to 56 fio starts per drive, and one stores all of that
ONE_ROUND = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report")
SIM = "sim:enterprise-sas?user_gb=0.1"
SCHEMA = json.loads((Path(__file__).parents[2] / "docs/schema/outcome.schema.json").read_text())


def sim_fleet(tmp: Path, n: int = 5, extra: str = "") -> Path:
    f = tmp / "fleet.toml"
    f.write_text(
        '[fleet]\nname = "demo"\n'
        f'[[drive]]\ntarget = "{SIM}&seed={{i}}"\ncount = {n}\nname = "sim{{i}}"\nlabels = {{ firmware = "A" }}\n'
        # t_prog_us 1150 -> 1500 (+30 %): a slower drive of the same model
        f'[[drive]]\ntarget = "{SIM}&seed=99&t_prog_us=1500"\nname = "slow"\nlabels = {{ firmware = "A" }}\n' + extra
    )
    return f


def watch_api(runs: Path) -> dict:
    """`iolab watch RUNS` as a user starts it, asked for its run list (/api/runs)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [*IOLAB, "watch", str(runs), "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=10) as r:
                    return json.loads(r.read())
            except OSError:
                assert time.monotonic() < deadline, "iolab watch did not answer"
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def fleet_dir(out: str) -> Path:
    return Path(next(ln for ln in out.splitlines() if ln.startswith("fleet directory: ")).split(": ", 1)[1])


def test_a_simulated_fleet_flags_its_slow_drive_and_no_other(tmp_path):
    runs = tmp_path / "runs"
    r = iolab(
        "run", "iops", *QUICK, "--fleet", str(sim_fleet(tmp_path)), "--runs-dir", str(runs), "--tested-by", "QA lab",
        timeout=600,
    )  # fmt: skip
    assert r.returncode == 7, r.stdout + r.stderr  # an outlier: the fleet's verdict, as check's regression
    d = fleet_dir(r.stdout)
    doc = json.loads((d / "report.json").read_text())
    assert doc["summary"]["complete"] == 6 and doc["summary"]["outlier_drives"] == ["slow"]
    write = next(f for f in doc["figures"] if f["name"] == "RND 4KiB R/W 0/100 IOPS")
    assert [o["drive"] for o in write["outliers"]] == ["slow"] and write["outliers"][0]["worse"]
    assert write["values"]["slow"] < 0.85 * write["median"]
    # each drive is its own stored run, which `iolab show` reads as any other
    for row in doc["drives"]:
        assert (Path(row["run_dir"]) / "manifest.json").is_file() and row["labels"] == {"firmware": "A"}
        assert json.loads((Path(row["run_dir"]) / "manifest.json").read_text())["platform"]["tested_by"] == "QA lab"
    show = iolab("show", doc["drives"][0]["run_dir"], "--json")
    assert json.loads(show.stdout)["runs"][0]["state"] == "complete"
    assert "slow" in r.stdout and "k = 3.5" in r.stdout
    # quick runs of 2 rounds: every figure is a scaled-down one, and none from a steady-state window
    assert {(row["compliant"], row["steady_state"]) for row in doc["drives"]} == {(False, "not-evaluated")}
    assert doc["caveats"][0].startswith("NON-COMPLIANT: every drive's run") and "quick profile" in doc["caveats"][0]
    assert doc["caveats"][1].startswith("STEADY STATE NOT EVALUATED on 6 of 6 drives")
    assert "caveat: NON-COMPLIANT: every drive's run" in r.stdout and "not evaluated, non-compliant" in r.stdout
    suite = ET.parse(d / "junit.xml").getroot().find("testsuite")
    failed = {c.get("classname") for c in suite.iter("testcase") if c.find("failure") is not None}
    assert failed == {"fleet.slow"}

    # the report again, judged against a spec sheet, as JSON; and the fleets listed
    sheet = tmp_path / "sheet.toml"
    sheet.write_text('[[criterion]]\nfigure = "RND 4KiB R/W 0/100 IOPS"\nmin = 0.9\nunit = "kIOPS"\nname = "write"\n')
    again = iolab("fleet", d.name, "--runs-dir", str(runs), "--spec-sheet", str(sheet), "--json")
    assert again.returncode == 7, again.stderr
    doc2 = json.loads(again.stdout)
    # quick runs: each figure was measured, but not as the drive's, so it neither passes nor fails
    verdicts = [v for row in doc2["drives"] for v in row["verdicts"]]
    assert {v["verdict"] for v in verdicts} == {"not-judged"} and all("quick run" in v["why"] for v in verdicts)
    # a typo in a figure's name is not a pass; a unit the figure cannot be in is the sheet's error
    sheet.write_text('[[criterion]]\nfigure = "RND 4K R/W 0/100 IOPS"\nmin = 99999999\n')
    typo = iolab("fleet", d.name, "--runs-dir", str(runs), "--spec-sheet", str(sheet))
    assert "0 pass, 1 not measured" in typo.stdout and "pass (0/1)" not in typo.stdout, typo.stdout
    sheet.write_text('[[criterion]]\nfigure = "RND 4KiB R/W 0/100 IOPS"\nmax = 5\nunit = "ms"\n')
    unit = iolab("fleet", d.name, "--runs-dir", str(runs), "--spec-sheet", str(sheet))
    assert unit.returncode == 2 and "is in IOPS" in unit.stderr and "Traceback" not in unit.stderr, unit.stderr
    listed = iolab("fleet", "--runs-dir", str(runs))
    assert d.name in listed.stdout and "6/6 drives complete" in listed.stdout
    assert d.name in iolab("runs", "--runs-dir", str(runs)).stdout  # the drives' runs, then the fleets
    shown = iolab("show", str(d), "--json")  # a fleet directory shows as its report, in show's document
    assert shown.returncode == 7 and json.loads(shown.stdout)["fleet_report"]["summary"]["outlier_drives"] == ["slow"]

    # the live page knows the fleet: its line, and each drive's run names its fleet and drive
    listed_by_watch = watch_api(runs)
    assert listed_by_watch["fleets"] == [
        {"name": "demo", "test": "iops", "state": "complete", "drives": 6, "complete": 6}
    ]
    fleet_of = {r["id"]: r.get("fleet") for r in listed_by_watch["runs"]}
    assert (
        fleet_of[Path(next(r for r in doc["drives"] if r["name"] == "slow")["run_dir"]).name]
        == "fleet demo: drive slow"
    )

    # the report as pages: the figures over the drives, the slow drive named, a strip per figure
    rep = iolab("report", str(d), "--out", str(tmp_path / "fleet-report"))
    assert rep.returncode == 0 and "fleet report:" in rep.stdout, rep.stderr
    [pdf] = (tmp_path / "fleet-report").glob("*.pdf")
    reader = PdfReader(pdf)
    text = "\n".join(pg.extract_text() for pg in reader.pages)
    assert "Key figures over the drives" in text and "RND 4KiB R/W 0/100 IOPS" in text
    assert "Fleet — Distributions" in text and "% of the fleet median" in text
    summary = next(pg.extract_text() for pg in reader.pages if "Key figures over the drives" in pg.extract_text())
    assert "Outliers: slow" in summary
    # the strips are vector drawings: the slow drive's dots named on them, as text
    strips = next(pg.extract_text() for pg in reader.pages if "Fleet — Distributions" in pg.extract_text())
    assert "slow" in strips.split("(figures", 1)[1] and "RND 4KiB R/W 0/100 IOPS (IOPS)" in strips
    pages = [" ".join(pg.extract_text().split()) for pg in reader.pages]  # every page carries the caveats
    assert all("NON-COMPLIANT: every drive's run" in t and "STEADY STATE NOT EVALUATED" in t for t in pages)
    assert all("Tested by: QA lab" in t for t in pages), pages[0]  # the name each drive's run was given


def test_a_drive_that_fails_fails_its_own_row_and_the_fleet_goes_on(tmp_path):
    small = tmp_path / "tiny.img"
    small.write_bytes(b"x" * 4096)  # too small for the test: refused before any IO
    extra = f'[[drive]]\ntarget = "file:{small}"\nname = "tiny"\n'
    f = sim_fleet(tmp_path, n=1, extra=extra)
    r = iolab("run", "iops", *QUICK, "--fleet", str(f), "--runs-dir", str(tmp_path / "runs"), timeout=600)
    assert r.returncode == 2, r.stdout + r.stderr  # the failed drive's own status
    doc = json.loads((fleet_dir(r.stdout) / "report.json").read_text())
    states = {row["name"]: row["state"] for row in doc["drives"]}
    assert states == {"sim1": "complete", "slow": "complete", "tiny": "refused"}
    tiny = next(row for row in doc["drives"] if row["name"] == "tiny")
    assert "capacity" in tiny["error"] and "Traceback" not in r.stdout + r.stderr
    # a refused drive could not be judged: a JUnit <error>, never a <failure> (judged and found wanting)
    suite = ET.parse(fleet_dir(r.stdout) / "junit.xml").getroot().find("testsuite")
    run_case = next(c for c in suite.iter("testcase") if (c.get("classname"), c.get("name")) == ("fleet.tiny", "run"))
    assert run_case.find("error") is not None and run_case.find("failure") is None
    assert "capacity" in run_case.find("error").get("message") and suite.get("errors") == "1"
    # every page of the fleet's report names the drive that did not complete, in words that count
    # it ("on 1 drives" was printed)
    out = tmp_path / "report"
    rep = iolab("report", str(fleet_dir(r.stdout)), "--out", str(out))
    assert rep.returncode == 0, rep.stdout + rep.stderr
    page = html.unescape(next(out.glob("*.html")).read_text())
    assert "NOT COMPLETE on 1 drive: tiny" in page and "1 drives" not in page
    # `runs --json` lists the fleet beside its drives' runs (it listed the runs only)
    listed = json.loads(iolab("runs", "--runs-dir", str(tmp_path / "runs"), "--json").stdout)
    assert errors(listed, SCHEMA) == [] and len(listed["listed"]) == 2
    [fleet] = listed["fleets"]
    assert (fleet["path"], fleet["test"], fleet["drives"], fleet["complete"]) == (
        str(fleet_dir(r.stdout)),
        "iops",
        3,
        2,
    )


@pytest.mark.parametrize(
    "text, says",
    [
        ('[[drive]]\ntarget = "sim:enterprise-sas"\ncount = 2\n', "needs {i}"),
        ("[[drive]\n", "fleet file"),
        ('[[host]]\naddress = "10.0.0.2"\n', "[[host.drive]]"),
        # one simulated drive, its options in another order
        (
            f'[[drive]]\ntarget = "{SIM}&seed=1"\nname = "a"\n[[drive]]\ntarget = "sim:enterprise-sas?seed=1&user_gb=0.1"\n',
            "same drive",
        ),
        # a parameter at the preset's default (enterprise-sas reads pages in 50 µs) is the preset's own
        (
            f'[[drive]]\ntarget = "{SIM}"\nname = "a"\n[[drive]]\ntarget = "{SIM}&t_read_us=50"\nname = "b"\n',
            "same drive",
        ),
        (f'[[drive]]\ntarget = "{SIM}&seed=4294967297"\n', "seed=4294967297"),
        # "ü" is a letter: the rule is ASCII's, and says so
        (f'[fleet]\nname = "ent-ü"\n[[drive]]\ntarget = "{SIM}"\n', "64 ASCII letters (a-z, A-Z), digits"),
        # a label without a name or a value: no --group-by or --baseline could name it (it ran)
        (f'[[drive]]\ntarget = "{SIM}"\nlabels = {{ "" = "A" }}\n', "a label needs a name and a value"),
        (f'[[drive]]\ntarget = "{SIM}"\nlabels = {{ firmware = " " }}\n', "label 'firmware' = ' '"),
        # a name of 5,000 characters is said by its start and length, not echoed whole
        (
            f'[[drive]]\ntarget = "{SIM}"\nname = "{"x" * 5000}"\n',
            "'" + "x" * 40 + "'…",
        ),
    ],
)
def test_a_bad_fleet_file_is_one_paragraph_and_exit_2(tmp_path, text, says):
    f = tmp_path / "fleet.toml"
    f.write_text(text)
    runs = tmp_path / "runs"
    r = iolab("run", "iops", "--quick", "--fleet", str(f), "--runs-dir", str(runs))
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (runs / "fleets").exists()  # nothing started


def test_a_spec_sheet_bound_in_a_unit_its_figure_is_never_in_is_refused_before_any_drive_runs(tmp_path):
    (tmp_path / "sheet.toml").write_text('[[criterion]]\nfigure = "RND 4KiB R/W 0/100 IOPS"\nmax = 5\nunit = "ms"\n')
    f = sim_fleet(tmp_path, 1)
    f.write_text(f.read_text().replace('name = "demo"\n', 'name = "demo"\nspec_sheet = "sheet.toml"\n'))
    runs = tmp_path / "runs"
    r = iolab("run", "iops", "--quick", "--fleet", str(f), "--runs-dir", str(runs))
    said = " ".join(r.stderr.split())
    assert r.returncode == 2 and "is in IOPS, and the unit given, 'ms'" in said and "Traceback" not in said, said
    assert "Nothing was run" in said and not (runs / "fleets").exists()


def test_fleet_with_a_target_is_refused(tmp_path):
    r = iolab("run", "iops", "--fleet", str(sim_fleet(tmp_path)), "--target", SIM, "--runs-dir", str(tmp_path / "r"))
    assert r.returncode == 2 and "leave out --target" in r.stderr, r.stderr
    repeat = iolab("run", "iops", "--fleet", str(sim_fleet(tmp_path)), "--repeat", "2", "--runs-dir", str(tmp_path))
    said = " ".join(repeat.stderr.split())
    assert (
        repeat.returncode == 2 and "leave out --repeat (a fleet runs each drive once" in said and "[[host]]" not in said
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces")
def test_a_fleet_of_file_drives_on_two_fio_server_hosts(scratch):
    with fio_hosts(2) as hosts:
        f = scratch / "fleet.toml"
        f.write_text(
            '[fleet]\nname = "hosts"\n'
            + "".join(
                f'[[host]]\naddress = "{addr}"\nlabels = {{ rack = "r{i}" }}\n'
                + "".join(f'[[host.drive]]\ntarget = "file:{scratch}/h{i}d{j}.img?size=16MiB"\n' for j in range(2))
                for i, (_, addr) in enumerate(hosts)
            )
        )
        r = iolab(
            "run",
            "latency",
            *ONE_ROUND,
            "--purge",
            "none",
            "--allow-unsafe-target",  # servers reached through fio alone (tests/integration/test_scaleout.py)
            "--fleet",
            str(f),
            "--runs-dir",
            str(scratch / "runs"),
            timeout=600,
        )
    assert r.returncode in (0, 7), r.stdout + r.stderr  # 4 drives: too few to judge outliers, no sheet
    doc = json.loads((fleet_dir(r.stdout) / "report.json").read_text())
    assert [row["state"] for row in doc["drives"]] == ["complete"] * 4
    for row in doc["drives"]:
        m = json.loads((Path(row["run_dir"]) / "manifest.json").read_text())
        (leg,) = m["split"]
        assert leg["host"]["address"] == row["where"].rsplit(":", 1)[0]  # ran through that host's fio server
        assert leg["path"] == row["target"].split("?")[0].removeprefix("file:")
    assert {row["labels"]["rack"] for row in doc["drives"]} == {"r0", "r1"}


def test_a_latency_bound_fleet_reports_the_pool_with_merged_percentiles(tmp_path):
    from iolab.store.runstore import RunStore

    f = tmp_path / "fleet.toml"
    f.write_text(
        f'[[drive]]\ntarget = "{SIM}&seed={{i}}"\ncount = 2\nname = "s{{i}}"\n'
        f'[[drive]]\ntarget = "{SIM}&seed=9&t_prog_us=2300"\nname = "slow"\n'
    )
    r = iolab(
        "run", "latency-bound", "--quick", "--no-report", "--set", "bound=700us", "--fleet", str(f),
        "--runs-dir", str(tmp_path / "runs"), timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((fleet_dir(r.stdout) / "report.json").read_text())
    pool = doc["pool"]
    assert pool["bound_us"] == 700 and pool["drives"] == ["s1", "s2", "slow"] and "pool at the bound" in r.stdout
    stores = [RunStore(Path(row["run_dir"]), writable=False) for row in doc["drives"]]
    for step in pool["steps"]:
        cells = [
            next(c for c in s.cells("demand ramp") if c.workload["rate_iops"] == step["demand_per_drive"])
            for s in stores
        ]
        assert step["iops"] == pytest.approx(sum(c.iops for c in cells))  # added, not averaged
        # the pool's percentile is that of a mixture: between the drives' own
        if step["percentile_us"] is not None and all(c.p99 for c in cells):
            assert min(c.p99 for c in cells) <= step["percentile_us"] <= max(c.p99 for c in cells)
    assert pool["best"] is not None and pool["best"]["percentile_us"] <= 700
    su = pool["sustain"]
    assert su["iops"] == pytest.approx(sum(s.cells("sustain")[0].iops for s in stores))


def test_two_firmware_groups_compared_from_the_fleet_file(tmp_path):
    f = tmp_path / "fleet.toml"
    f.write_text(
        '[fleet]\nname = "ab"\ngroup_by = "firmware"\nbaseline = "A"\n'
        f'[[drive]]\ntarget = "{SIM}&seed={{i}}"\ncount = 3\nname = "a{{i}}"\nlabels = {{ firmware = "A" }}\n'
        # firmware B programs 30 % slower on every drive: the group, not one drive, is worse
        f'[[drive]]\ntarget = "{SIM}&seed=1{{i}}&t_prog_us=1500"\ncount = 3\nname = "b{{i}}"\nlabels = {{ firmware = "B" }}\n'
    )
    runs = tmp_path / "runs"
    r = iolab("run", "iops", *QUICK, "--fleet", str(f), "--runs-dir", str(runs), timeout=600)
    assert r.returncode == 7, r.stdout + r.stderr
    doc = json.loads((fleet_dir(r.stdout) / "report.json").read_text())
    (c,) = doc["groups"]["comparisons"]
    assert (c["group"], c["baseline"], c["drives"]) == ("B", "A", ["b1", "b2", "b3"])
    write = next(x for x in c["figures"] if x["name"] == "RND 4KiB R/W 0/100 IOPS")
    assert write["verdict"] == "regression" and write["change_pct"] < -10 and "Welch" in write["method"]
    assert "RND 4KiB R/W 0/100 IOPS" in c["regressions"] and "firmware = B" in r.stdout
    suite = ET.parse(fleet_dir(r.stdout) / "junit.xml").getroot().find("testsuite")
    failed = {(x.get("classname"), x.get("name")) for x in suite.iter("testcase") if x.find("failure") is not None}
    assert ("fleet.group.B", "RND 4KiB R/W 0/100 IOPS") in failed
    assert doc["warnings"] == []  # one model and firmware in each group
    # the summary line, report.json's summary and the pages say the group's regression, which
    # is what exit 7 is for: they said "0 failed ... criteria failed: none", and the pages had no groups
    assert (
        "groups regressed: B vs A (" in " ".join(r.stdout.split())
        and write["name"] in doc["summary"]["regressed_groups"]["B"]
    )
    pages = iolab("report", str(fleet_dir(r.stdout)), "--out", str(tmp_path / "pages"))
    assert pages.returncode == 0, pages.stdout + pages.stderr
    html = next((tmp_path / "pages").glob("*.html")).read_text()
    assert "Groups Compared" in html and "firmware = B (3 drives) vs firmware = A (3 drives)" in html
    assert "groups regressed: B vs A (" in html and "regression" in html
    # the other way round on the command line: B as the baseline, A improves
    again = iolab("fleet", fleet_dir(r.stdout).name, "--runs-dir", str(runs), "--baseline", "B", "--json")
    (c2,) = json.loads(again.stdout)["groups"]["comparisons"]
    assert (
        c2["group"] == "A" and next(x for x in c2["figures"] if x["name"] == write["name"])["verdict"] == "improvement"
    )


def _rows(d: Path) -> dict:
    try:
        return {m["name"]: m for m in json.loads((d / "fleet.json").read_text())["members"]}
    except (OSError, ValueError):
        return {}


def _latency_fleet(fleet: Path, runs: Path, *more: str) -> subprocess.Popen:
    """`iolab run latency --quick` on the fleet with 1 s cells, started to be stopped or broken
    mid-run (its Ctrl-C and SIGTERM handling its own); stdout and stderr as one text."""
    args = ["run", "latency", "--quick", "--cell-time", "1s", "--no-report", "--purge", "none", *more]
    return subprocess.Popen(
        [*IOLAB, *args, "--fleet", str(fleet), "--runs-dir", str(runs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=default_signals,
    )


def _measuring(runs: Path) -> int:
    """The drives' runs that have stored a measured cell's fio output."""
    return len({p.parent.parent for p in runs.glob("2*/raw/*.json")})


def _until(cond, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_fleet_resumes_after_its_drive_was_stopped_and_its_coordinator_killed(tmp_path):
    f = tmp_path / "fleet.toml"
    f.write_text(
        f'[fleet]\nname = "k"\nparallel = 1\n[[drive]]\ntarget = "{SIM}&seed={{i}}"\ncount = 3\nname = "s{{i}}"\n'
    )
    runs = tmp_path / "runs"
    args = ["run", "iops", "--quick", "--cell-time", "100ms", "--max-rounds", "5", "--no-report"]
    proc = subprocess.Popen(
        [*IOLAB, *args, "--fleet", str(f), "--runs-dir", str(runs)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=default_signals,
    )
    try:
        _until(lambda: any((runs / "fleets").glob("*/fleet.json")), "the fleet directory")
        d = next((runs / "fleets").glob("*"))
        _until(lambda: _rows(d).get("s1", {}).get("pid") and list(runs.glob("2*/results.db")), "s1's run")
        # at once, not after a fixed wait: on a fast, idle machine s1's whole run took under a second
        pid = _rows(d)["s1"]["pid"]
        assert pid, "s1 ended before it could be stopped"
        os.kill(pid, signal.SIGTERM)  # one drive stopped mid-run: it stores what it has
        _until(lambda: _rows(d)["s2"].get("pid"), "s2 to start")
        proc.kill()  # kill -9 of the coordinator while s2 runs
    finally:
        proc.wait()
    rows = _rows(d)
    assert rows["s1"]["state"] == "interrupted" and rows["s1"]["run_dir"], rows["s1"]
    assert rows["s2"]["state"] == "running" and rows["s3"]["state"] == "pending"
    r = iolab("resume", str(d), "--runs-dir", str(runs), "--json", timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)["fleet_report"]
    assert [row["state"] for row in doc["drives"]] == ["complete"] * 3
    after = {row["name"]: row for row in doc["drives"]}
    assert after["s1"]["run_dir"] == rows["s1"]["run_dir"]  # its own run, resumed, not a new one
    assert len(list(runs.glob("2*/manifest.json"))) == 3  # s2 ran once, to its end, after the coordinator died
    earlier = json.loads((d / "drives" / "s1" / "out.attempt1.json").read_text())  # how s1 stopped, kept
    assert earlier["runs"][0]["state"] == "interrupted" and (d / "drives" / "s1" / "log.attempt1.txt").is_file()


def test_one_file_reached_by_two_names_is_refused_before_anything_runs(tmp_path):
    img = tmp_path / "a.img"
    img.write_bytes(b"")
    (tmp_path / "link.img").symlink_to(img)
    os.link(img, tmp_path / "hard.img")
    for other in ("link.img", "hard.img"):
        f = tmp_path / "fleet.toml"
        f.write_text(
            f'[[drive]]\ntarget = "file:{img}?size=8MiB"\nname = "a"\n'
            f'[[drive]]\ntarget = "file:{tmp_path / other}?size=8MiB"\nname = "b"\n'
        )
        r = iolab("run", "iops", "--quick", "--fleet", str(f), "--runs-dir", str(tmp_path / "runs"))
        assert r.returncode == 2 and "are one drive" in r.stderr and "inode" in r.stderr, r.stderr
        assert not (tmp_path / "runs" / "fleets").exists()


def test_a_drive_behind_a_fio_server_of_this_machine_is_read_as_a_local_drive(scratch, fio_server_here):
    """It said "identity not read (a host reached through fio only ...)": its path is this machine's,
    which its run checks, claims and reads as a local run's. A hard link to it beside it is one drive."""
    img = scratch / "h.img"
    host = f'[[host]]\naddress = "127.0.0.1"\nport = {fio_server_here}\n'
    f = scratch / "fleet.toml"
    f.write_text(host + f'[[host.drive]]\ntarget = "file:{img}?size=16MiB"\nname = "h"\n')
    r = iolab("run", "latency", *ONE_ROUND, "--fleet", str(f), "--runs-dir", str(scratch / "runs"))
    assert r.returncode in (0, 7) and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert "identity not read" not in r.stdout, r.stdout
    (row,) = json.loads((fleet_dir(r.stdout) / "report.json").read_text())["drives"]
    assert row["state"] == "complete", row
    m = json.loads((Path(row["run_dir"]) / "manifest.json").read_text())
    assert m["target"]["identity"]["inode"] == img.stat().st_ino  # stored as a local run's
    os.link(img, scratch / "link.img")
    f.write_text(f'[[drive]]\ntarget = "file:{scratch}/link.img"\nname = "here"\n' + f.read_text())
    r = iolab("run", "latency", *QUICK, "--fleet", str(f), "--runs-dir", str(scratch / "again"))
    said = " ".join(r.stderr.split())
    assert r.returncode == 2 and "drives 'here' and 'h' are one drive (file on this machine" in said, said
    assert f"inode {img.stat().st_ino})" in said and not (scratch / "again").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces")
def test_a_host_that_dies_mid_run_fails_its_own_drive_and_the_fleet_goes_on(scratch):
    runs = scratch / "runs"
    with fio_hosts(2) as hosts:
        f = scratch / "fleet.toml"
        f.write_text(
            "".join(
                f'[[host]]\naddress = "{addr}"\n[[host.drive]]\ntarget = "file:{scratch}/h{i}.img?size=16MiB"\nname = "h{i}"\n'
                for i, (_, addr) in enumerate(hosts)
            )
        )
        proc = _latency_fleet(f, runs, "--max-rounds", "3", "--allow-unsafe-target")
        try:
            # once both drives measure (each run's first cell is stored: two cells of one drive
            # are not both, and host 1 then died before its drive's run began), host 1 dies
            _until(lambda: _measuring(runs) >= 2, "both drives measuring")
            kill_host(hosts[1][0])
            out, _ = proc.communicate(timeout=600)
        finally:
            proc.kill()
            proc.wait()
    assert proc.returncode == 4, out  # the failed drive's own status: an engine failure
    doc = json.loads((fleet_dir(out) / "report.json").read_text())
    rows = {row["name"]: row for row in doc["drives"]}
    assert rows["h0"]["state"] == "complete", rows["h0"]
    # the error is the scale-out engine's own and names the host, whether fio's client saw it drop
    # in a job or could not reach it between jobs (e.g. in the precondition)
    assert rows["h1"]["state"] == "failed" and hosts[1][1] in rows["h1"]["error"], rows["h1"]
    assert rows["h1"]["run_dir"]  # its run so far is kept
    # JUnit: the dead host's drive could not be judged (an <error>), the other drive's run passed
    suite = ET.parse(fleet_dir(out) / "junit.xml").getroot().find("testsuite")
    runs_cases = {c.get("classname"): c for c in suite.iter("testcase") if c.get("name") == "run"}
    assert runs_cases["fleet.h1"].find("error") is not None and runs_cases["fleet.h1"].find("failure") is None
    assert runs_cases["fleet.h0"].find("error") is None and runs_cases["fleet.h0"].find("failure") is None
    assert suite.get("errors") == "1" and not any(c.find("failure") is not None for c in runs_cases.values())


def test_a_non_compliance_of_some_drives_names_those_drives_and_no_fence_is_keyed_where_none_is_drawn(tmp_path):
    # a file's write cache is not settable, a simulated drive's is: the caveat listed both drives
    # as "every drive's run (s, f)" and ended the file's reason in "(1 drives)", unnamed
    f = tmp_path / "fleet.toml"
    f.write_text(
        f'[[drive]]\ntarget = "{SIM}"\nname = "s"\n[[drive]]\ntarget = "file:{tmp_path}/f.img?size=16MiB"\nname = "f"\n'
    )
    r = iolab("run", "throughput", *ONE_ROUND, "--fleet", str(f), "--runs-dir", str(tmp_path / "r"))
    said = " ".join(r.stdout.split())
    assert r.returncode == 0 and "(1 drives)" not in said, r.stdout + r.stderr
    assert (
        "caveat: NON-COMPLIANT: every drive's run (s, f): quick profile; 0.1 s per cell instead of 60 s; write cache"
        in said
    )
    assert "fio uses direct IO) (on f)" in said, said
    # two drives are too few for the outlier rule: the strips' key said "dashed: the fences" of
    # strips that have none
    rep = iolab("report", str(fleet_dir(r.stdout)), "--runs-dir", str(tmp_path / "r"))
    assert rep.returncode == 0, rep.stderr
    page = " ".join(html.unescape(next((fleet_dir(r.stdout) / "report").glob("*.html")).read_text()).split())
    assert "dashed: the fences" not in page
    assert "no fences and no outliers: the rule judged none of these figures (< 5 drives)" in page


def test_require_steady_reaches_every_drive_and_fails_the_fleet_on_the_drives_not_steady(tmp_path):
    # two rounds cannot fill the 5-round window: no drive's figures come from a steady state
    fleet = sim_fleet(tmp_path, n=1)
    r = iolab("run", "iops", *QUICK, "--require-steady", "--fleet", str(fleet), "--runs-dir", str(tmp_path / "r"))
    assert r.returncode == 6, r.stdout + r.stderr  # NOT_STEADY, as a single run asked the same
    assert "caveat: STEADY STATE NOT EVALUATED on 2 of 2 drives (sim1, slow)" in " ".join(r.stdout.split())
    suite = ET.parse(fleet_dir(r.stdout) / "junit.xml").getroot().find("testsuite")
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    for drive in ("fleet.sim1", "fleet.slow"):
        failure = cases[(drive, "steady state")].find("failure")
        assert failure is not None and "not evaluated (--require-steady)" in failure.get("message")


def test_sigterm_to_the_coordinator_alone_stops_its_drives_and_marks_the_fleet(tmp_path):
    # a CI job's timeout signals the coordinator only: its drives must stop too, store what they
    # measured, and the fleet must not say "running" afterwards
    f = tmp_path / "fleet.toml"
    f.write_text(
        f'[fleet]\nname = "t"\n[[drive]]\ntarget = "file:{tmp_path}/d{{i}}.img?size=32MiB"\ncount = 2\nname = "f{{i}}"\n'
    )
    runs = tmp_path / "runs"
    proc = _latency_fleet(f, runs, "--max-rounds", "5")
    try:
        _until(lambda: _measuring(runs) >= 2, "a cell of each drive")
        d = next((runs / "fleets").glob("*"))
        pids = [r["pid"] for r in _rows(d).values()]
        # the live page names each running drive's run with its fleet and drive (its row has no run yet)
        named = {r.get("fleet") for r in watch_api(runs)["runs"] if r["state"] == "running"}
        assert named == {"fleet t: drive f1", "fleet t: drive f2"}, named
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, out
    state = json.loads((d / "fleet.json").read_text())
    assert state["state"] == "interrupted" and state["stopped_by"] == "SIGTERM" and state["ended"]
    assert {r["state"] for r in state["members"]} == {"interrupted"} and all(r["run_dir"] for r in state["members"])
    assert not any(pid and Path(f"/proc/{pid}").exists() for pid in pids), "a drive's run is still running"


def test_a_fleet_whose_runs_were_moved_is_not_a_pass_and_show_writes_nothing(tmp_path):
    fleet = str(sim_fleet(tmp_path, n=1))
    r = iolab("run", "iops", *ONE_ROUND, "--fleet", fleet, "--runs-dir", str(tmp_path / "runs"), "--json")
    d = fleet_dir(r.stderr)
    # run --json is the outcome document whatever the run (it printed an iolab-fleet-report)
    doc = json.loads(r.stdout)
    assert errors(doc, SCHEMA) == [] and doc["command"] == "run" and doc["exit_code"] == r.returncode == 0
    assert [x["path"] for x in doc["runs"]] == [row["run_dir"] for row in doc["fleet_report"]["drives"]]
    assert doc["fleet_report"] == json.loads((d / "report.json").read_text())
    stored = (d / "report.json").read_bytes()
    shown = iolab("show", str(d), "--json")
    assert shown.returncode == 0 and (d / "report.json").read_bytes() == stored
    what_if = iolab("fleet", str(d), "--outlier-min-pct", "0.001", "--json")
    assert what_if.returncode == 0 and (d / "report.json").read_bytes() == stored  # printed, not stored
    # by its name, as `iolab fleet NAME` takes it; and a command that takes runs says what a fleet is
    named = iolab("show", d.name, "--runs-dir", str(tmp_path / "runs"), "--json")
    assert named.returncode == 0 and json.loads(named.stdout)["fleet_report"]["fleet"]["name"] == "demo"
    pages = iolab("report", d.name, "--runs-dir", str(tmp_path / "runs"), "--out", str(tmp_path / "pages"))
    assert pages.returncode == 0 and len(list((tmp_path / "pages").glob("*.pdf"))) == 1, pages.stderr
    compared = iolab("compare", str(d), str(d))
    assert compared.returncode == 2 and "is a fleet, not a run" in " ".join(compared.stderr.split())
    moved = tmp_path / "moved"
    (tmp_path / "runs").rename(moved)
    again = iolab("fleet", str(moved / "fleets" / d.name), "--json")
    assert again.returncode == 2, again.stdout + again.stderr
    rows = json.loads(again.stdout)["drives"]
    assert {r["state"] for r in rows} == {"unreadable"} and "cannot be read" in rows[0]["error"]


ART_READ = '[[criterion]]\nfigure = "ART RND 4KiB R/W 100/0"\nmax = {}\nunit = "us"\nname = "read latency"\n'


def test_the_fleet_keeps_its_spec_sheet_so_its_verdicts_do_not_move_with_the_original(tmp_path):
    """A full (not quick) latency run on a small simulated drive reaches steady state, so the
    sheet judges it: a pass, which the sheet's later edit does not turn into a fail."""
    sheet = tmp_path / "sheet.toml"
    sheet.write_text(ART_READ.format(500))
    f = tmp_path / "fleet.toml"
    f.write_text(f'[fleet]\nname = "s"\nspec_sheet = "sheet.toml"\n[[drive]]\ntarget = "{SIM}"\nname = "a"\n')
    r = iolab("run", "latency", "--no-report", "--fleet", str(f), "--runs-dir", str(tmp_path / "runs"))
    assert r.returncode == 0 and "pass (1/1)" in r.stdout, r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    sheet.write_text(ART_READ.format(1))
    again = iolab("fleet", str(d), "--json")  # the sheet edited since: the fleet's verdicts are its own
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert doc["drives"][0]["steady_state"] == "reached"
    assert Path(doc["spec_sheet"]["path"]).parent == d and doc["drives"][0]["verdicts"][0]["verdict"] == "pass"
    suite = ET.parse(d / "junit.xml").getroot().find("testsuite")
    (case,) = [c for c in suite.iter("testcase") if c.get("name") == "criterion: read latency"]
    assert case.find("failure") is None and case.find("skipped") is None
    edited = iolab("fleet", str(d), "--spec-sheet", str(sheet), "--json")  # the edited sheet, asked for: a fail
    assert edited.returncode == 7 and json.loads(edited.stdout)["drives"][0]["verdicts"][0]["verdict"] == "fail"
    sheet.unlink()
    assert iolab("show", str(d)).returncode == 0


def test_a_quick_fleet_is_not_judged_by_its_spec_sheet_as_its_runs_front_pages_are_not(tmp_path):
    """A quick run's figures are not the drive's: the fleet's table, report.json and JUnit say
    "not judged" (skipped), as the same run's own report, which opens with the fleet file's sheet
    (it had none: only --spec-sheet on the command line reached the drives' runs), does; never pass."""
    sheet = tmp_path / "sheet.toml"
    sheet.write_text(ART_READ.format(500))
    f = tmp_path / "fleet.toml"
    f.write_text(f'[fleet]\nname = "q"\nspec_sheet = "sheet.toml"\n[[drive]]\ntarget = "{SIM}"\nname = "a"\n')
    with_report = [a for a in QUICK if a != "--no-report"]  # each drive's run writes its own report
    r = iolab("run", "latency", *with_report, "--fleet", str(f), "--runs-dir", str(tmp_path / "runs"))
    assert r.returncode == 0 and "0 pass, 1 not judged" in r.stdout and "pass (1/1)" not in r.stdout, r.stdout
    d = fleet_dir(r.stdout)
    doc = json.loads((d / "report.json").read_text())
    ((v,),) = [row["verdicts"] for row in doc["drives"]]
    assert v["verdict"] == "not-judged" and v["why"].startswith("not judged: quick run") and v["value"] > 0, v
    suite = ET.parse(d / "junit.xml").getroot().find("testsuite")
    (case,) = [c for c in suite.iter("testcase") if c.get("name") == "criterion: read latency"]
    assert case.find("skipped") is not None and case.find("failure") is None
    (html,) = (Path(doc["drives"][0]["run_dir"]) / "report").glob("*.html")
    assert "read latency: not judged: quick run" in " ".join(html.read_text().split())


def test_a_spec_sheet_given_on_the_command_line_is_the_fleets_as_the_fleet_files_is(tmp_path):
    """`iolab run --fleet F --spec-sheet S`: before, only each drive's run took the sheet; the
    fleet recorded none, so its table had no verdicts and its pages no acceptance page."""
    sheet = tmp_path / "sheet.toml"
    sheet.write_text(ART_READ.format(500))
    f = tmp_path / "fleet.toml"
    f.write_text(f'[fleet]\nname = "c"\n[[drive]]\ntarget = "{SIM}"\nname = "a"\n')
    r = iolab("run", "latency", *ONE_ROUND, "--fleet", str(f), "--spec-sheet", str(sheet), "--runs-dir", str(tmp_path))
    assert r.returncode == 0 and "0 pass, 1 not judged" in r.stdout, r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    sheet.unlink()  # the fleet's copy is what it is judged by from now on
    again = iolab("fleet", str(d), "--json")
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert Path(doc["spec_sheet"]["path"]).parent == d and doc["drives"][0]["verdicts"][0]["verdict"] == "not-judged"
    pages = iolab("report", str(d), "--out", str(tmp_path / "pages"))
    assert pages.returncode == 0, pages.stderr
    (page,) = (tmp_path / "pages").glob("*.html")
    assert "Spec-Sheet Acceptance" in page.read_text()


def test_a_quick_fleet_of_drives_too_big_to_test_whole_is_reported(tmp_path):
    """--quick tests a smaller copy of a simulated drive above its limit: each run's target is the
    copy, and the fleet's row names the drive. Before, the row check called them two drives and the
    fleet, run to the end, could never be reported (exit 2, no table, no report.json)."""
    f = tmp_path / "fleet.toml"
    f.write_text('[fleet]\nname = "big"\n[[drive]]\ntarget = "sim:enterprise-sas?seed={i}"\ncount = 2\nname = "s{i}"\n')
    r = iolab("run", "latency", *QUICK, "--fleet", str(f), "--runs-dir", str(tmp_path / "runs"))
    assert r.returncode == 0, r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    doc = json.loads((d / "report.json").read_text())
    assert [row["state"] for row in doc["drives"]] == ["complete", "complete"]
    again = iolab("fleet", str(d), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["drives"][0]["figures"], again.stderr
    for row in doc["drives"]:  # each run tested a copy of its row's drive, and says so
        rec = json.loads(iolab("show", row["run_dir"], "--json").stdout)["runs"][0]
        assert rec["target"]["copy_of"] == row["target"] != rec["target"]["spec"], rec["target"]


def test_resume_tries_a_refused_drive_again_once_its_cause_is_fixed(tmp_path):
    small = tmp_path / "tiny.img"
    small.write_bytes(b"x" * 4096)  # too small: refused before any IO
    f = tmp_path / "fleet.toml"
    f.write_text(
        f'[fleet]\nname = "r"\n[[drive]]\ntarget = "{SIM}"\nname = "sim"\n'
        f'[[drive]]\ntarget = "file:{small}"\nname = "tiny"\n'
    )
    runs = tmp_path / "runs"
    args = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report", "--purge", "none")
    r = iolab("run", "latency", *args, "--fleet", str(f), "--runs-dir", str(runs))
    assert r.returncode == 2, r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    before = {m["name"]: m for m in json.loads((d / "fleet.json").read_text())["members"]}
    assert (before["sim"]["state"], before["tiny"]["state"]) == ("complete", "refused")
    small.write_bytes(b"x" * (16 << 20))
    mark_created(str(small))  # a scratch file iolab may write, as one it made itself
    again = iolab("resume", str(d), "--runs-dir", str(runs), "--json")
    assert again.returncode == 0, again.stdout + again.stderr
    rows = {row["name"]: row for row in json.loads(again.stdout)["fleet_report"]["drives"]}
    assert {n: row["state"] for n, row in rows.items()} == {"sim": "complete", "tiny": "complete"}
    assert rows["sim"]["run_dir"] == before["sim"]["run_dir"]  # a complete drive is not run again
    assert "capacity" in json.loads((d / "drives" / "tiny" / "out.attempt1.json").read_text())["error"]


def test_the_fleet_table_prints_a_figure_as_show_does(tmp_path):
    """One number rule (units.num): the fleet table printed seed 7's 96.00 µs, as show prints it,
    as "96" (4 significant digits without their trailing zeros). The simulator is deterministic
    in virtual time: seed 7's ART 65/35 is 96.0001 µs."""
    runs = tmp_path / "runs"
    f = tmp_path / "fleet.toml"
    f.write_text(
        '[fleet]\nname = "lat"\n' + "".join(f'[[drive]]\ntarget = "{SIM}&seed={s}"\nname = "s{s}"\n' for s in (1, 2, 7))
    )
    r = iolab("run", "latency", "--quick", "--no-report", "--fleet", str(f), "--runs-dir", str(runs), timeout=600)
    assert r.returncode in (0, 7), r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    doc = json.loads((d / "report.json").read_text())
    printed = [fig[k] for fig in doc["figures"] for k in ("median", "min", "max") if fig[k] is not None]
    assert any(f"{v:,.4g}" != num(v) for v in printed), printed  # where the two rules differ
    table = iolab("fleet", d.name, "--runs-dir", str(runs))
    for v in printed:
        assert num(v) in table.stdout, (num(v), table.stdout)
    seven = next(row for row in doc["drives"] if row["name"] == "s7")
    shown = iolab("show", seven["run_dir"])
    for fig in doc["figures"]:
        v = fig["values"].get("s7")
        if v is not None:
            assert num(v) in shown.stdout, (fig["name"], num(v), shown.stdout)


def test_a_fleet_run_with_a_relative_runs_dir_is_read_from_any_directory(tmp_path):
    """Before: fleet.json named each drive's run by the relative path it printed (--runs-dir fr),
    so `iolab fleet` from another directory found no run and rewrote every row "unreadable"."""
    f = tmp_path / "fleet.toml"
    f.write_text(
        '[fleet]\nname = "rel"\n' + "".join(f'[[drive]]\ntarget = "{SIM}&seed={s}"\nname = "s{s}"\n' for s in (1, 2))
    )
    args = [*IOLAB, "run", "latency", "--quick", "--no-report", "--fleet", str(f), "--runs-dir", "fr"]
    r = subprocess.run(
        args, capture_output=True, text=True, timeout=600, cwd=tmp_path, env=dict(os.environ, COLUMNS="200")
    )
    assert r.returncode in (0, 7), r.stdout + r.stderr
    d = tmp_path / fleet_dir(r.stdout)
    rows = json.loads((d / "fleet.json").read_text())["members"]
    assert all(Path(m["run_dir"]).is_absolute() for m in rows), rows
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = subprocess.run([*IOLAB, "fleet", str(d)], capture_output=True, text=True, timeout=300, cwd=elsewhere)
    assert p.returncode in (0, 7) and "unreadable" not in p.stdout + p.stderr, p.stdout + p.stderr


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ("min_gain=0.002", "--set min_gain='0.002' (test max-iops): 0.002 without its unit reads as 0.002 %"),
        ("no_such=1", "--set no_such"),
    ],
)
def test_a_bad_set_value_refuses_the_fleet_once_before_any_drive_starts(tmp_path, setting, says):
    """Each drive's own `iolab run` refused a bad --set value: a 12-drive fleet showed 12 ERROR rows
    with the same paragraph, and made its fleet directory. Now the fleet refuses it once, exit 2,
    before it starts a drive or writes anything."""
    fleet = tmp_path / "f.toml"
    drive = "sim:enterprise-sas?user_gb=0.1"
    fleet.write_text(f'[[drive]]\ntarget = "{drive}"\nname = "a"\n[[drive]]\ntarget = "{drive}&seed=2"\nname = "b"\n')
    runs = tmp_path / "runs"
    p = iolab("run", "max-iops", "--quick", "--no-report", "--fleet", str(fleet), "--set", setting,
              "--runs-dir", str(runs))  # fmt: skip
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "Traceback" not in said, said
    assert said.count(says) == 1 and "ERROR" not in said, said
    assert not runs.exists()
