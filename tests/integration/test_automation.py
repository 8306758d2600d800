"""iolab for scripts, through the `iolab` command on the simulated drive: the --json documents
(checked against docs/schema/outcome.schema.json), the exit codes, `iolab check` and the CI
gate script in docs/."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ..schema_lite import errors
from .conftest import IOLAB, iolab

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs/schema/outcome.schema.json").read_text())
QUICK = ("--quick", "--cell-time", "1s", "--max-rounds", "5", "--no-report")
# 2300 µs programs: twice the preset's; the quick latency run then never reaches steady state
SLOW = "sim:enterprise-sas?t_prog_us=2300&seed=1"


def doc(p: subprocess.CompletedProcess) -> dict:
    d = json.loads(p.stdout)
    assert errors(d, SCHEMA) == [], errors(d, SCHEMA)
    assert d["exit_code"] == p.returncode
    return d


def run_json(
    runs: Path, test: str, target: str, *extra: str, quick: tuple[str, ...] = QUICK
) -> tuple[subprocess.CompletedProcess, dict]:
    p = iolab("run", test, "-t", target, *quick, "--runs-dir", str(runs), "--json", *extra)
    assert "Traceback" not in p.stderr
    return p, doc(p)


@pytest.fixture(scope="module")
def latency_runs(tmp_path_factory) -> tuple[Path, dict[str, tuple[subprocess.CompletedProcess, dict]]]:
    """Quick latency runs on the simulated drive, each made once and read by several tests, none
    of which writes into their runs directories: seeds 1 and 2 in one (the one the listing test
    lists), SLOW in another. (its first runs directory, {name: (the finished command, its document)})"""
    d = tmp_path_factory.mktemp("latency")
    made = {
        name: run_json(d / where, "latency", spec)
        for name, spec, where in (
            ("seed1", "sim:enterprise-sas?seed=1", "pair"),
            ("seed2", "sim:enterprise-sas?seed=2", "pair"),
            ("slow", SLOW, "slow"),
        )
    }
    return d / "pair", made


def test_run_show_runs_and_compare_print_one_documented_json_document(tmp_path, latency_runs):
    runs, made = latency_runs
    p, d = made["seed1"]
    assert p.returncode == 0, p.stderr
    assert d["command"] == "run"
    [r] = d["runs"]
    assert r["state"] == "complete" and r["steady_state"] == "reached"
    assert r["target"]["spec"].startswith("sim:enterprise-sas?seed=1") and r["target"]["model"].startswith("sim SSD")
    [ph] = r["phases"]
    assert ph["steady"] is True and ph["window"] == [1, 2, 3, 4, 5]
    assert [t["variable"] for t in ph["tracking"]] == ["ART 0/100 4KiB"] and len(ph["tracking"][0]["values"]) == 5
    art = next(f for f in r["figures"] if f["name"] == "ART RND 4KiB R/W 65/35")
    assert art["unit"] == "µs" and art["direction"] == "lower-is-better" and len(art["round_values"]) == 5
    assert min(art["round_values"]) <= art["value"] <= max(art["round_values"])
    # the terminal output went to stderr, unchanged
    assert "key figures" in p.stderr and "run directory:" in p.stderr

    s = iolab("show", r["run_id"], "--json", env={"IOLAB_RUNS": str(runs)})
    shown = doc(s)
    assert s.returncode == 0 and s.stderr == ""
    assert shown["command"] == "show" and shown["runs"][0]["figures"] == r["figures"]
    plain = iolab("show", r["run_id"], env={"IOLAB_RUNS": str(runs)})
    assert plain.returncode == 0 and "key figures" in plain.stdout and not plain.stdout.lstrip().startswith("{")

    _, d2 = made["seed2"]
    listed = doc(iolab("runs", "--runs-dir", str(runs), "--json"))["listed"]
    assert sorted(x["run_id"] for x in listed) == sorted([r["run_id"], d2["runs"][0]["run_id"]])

    c = iolab("compare", r["path"], d2["runs"][0]["path"], "--out", str(tmp_path / "cmp"), "--json")
    cd = doc(c)
    assert c.returncode == 0, c.stderr
    assert len(cd["runs"]) == 2 and cd["reports"] and all(Path(x).exists() for x in cd["reports"])
    assert [f["name"] for f in cd["ranking"]["figures"]] == [f["name"] for f in r["figures"]]
    # a figure neither run's IOs can measure (a 99.999 % from short cells) is not ranked
    assert all(f["ranks"] == [None, None] or sorted(f["ranks"]) in ([1, 2], [1, 1]) for f in cd["ranking"]["figures"])


def test_compare_json_ranking_carries_the_caveats_the_terminal_marks(tmp_path, latency_runs):
    """A figure of a run that never reached steady state is marked [a] in the terminal's ranking;
    the --json ranking names the same key beside it, the key's text, and the report's caveats."""
    slow, steady = (latency_runs[1][name][1]["runs"][0]["path"] for name in ("slow", "seed2"))
    c = iolab("compare", slow, steady, "--out", str(tmp_path / "cmp"), "--json")
    assert c.returncode == 0, c.stderr
    rank = doc(c)["ranking"]
    assert "[a] STEADY STATE NOT ACHIEVED" in c.stderr
    assert rank["caveats"][0] == {"key": "a", "text": "STEADY STATE NOT ACHIEVED"}
    # every measured figure of the unsteady run (D1) carries it, none of the steady run's; a figure
    # not measured ("—") carries only why (too few IOs for its percentile), whichever run it is of
    whys = {c["key"]: c["text"] for c in rank["caveats"][1:]}
    assert all(t.startswith("not measured: its ") and "IOs are too few" in t for t in whys.values()), whys
    for f in rank["figures"]:
        for i, (key, v) in enumerate(zip(f["caveats"], f["values"])):
            assert key in whys if v is None else key == ("a" if i == 0 else None), f
    assert any(v is None for f in rank["figures"] for v in f["values"]) and rank["figures"]
    said = rank["comparison_caveats"]
    assert any(x.startswith("STEADY STATE NOT ACHIEVED (D1 main: rounds") for x in said), said
    assert any(x.startswith("non-compliant (quick profile): D1, D2") for x in said), said
    # ranked beside a published drive, the runs' figures keep their marks (and the terminal its caveats)
    csv_file = tmp_path / "datasheet.csv"
    csv_file.write_text("drive,figure,value,unit\nVendor X1,ART RND 4KiB R/W 65/35,90,µs\n")
    pub = iolab("compare", slow, steady, str(csv_file), "--out", str(tmp_path / "cmp2"), "--json")
    assert pub.returncode == 0, pub.stderr
    with_pub = doc(pub)["ranking"]
    assert with_pub["caveats"] == rank["caveats"] and with_pub["comparison_caveats"] == said
    assert [f["caveats"] for f in with_pub["figures"]] == [[*f["caveats"], None] for f in rank["figures"]]
    assert "[a] STEADY STATE NOT ACHIEVED" in pub.stderr and "STEADY STATE NOT ACHIEVED (D1 main" in pub.stderr
    # one measured run beside the published drive: its figures keep the same marks and caveats
    # (they were ranked bare: "70.11 (#1)" beside the datasheet, caveats [] in --json)
    one = iolab("compare", slow, str(csv_file), "--json")
    assert one.returncode == 0, one.stderr
    alone = doc(one)["ranking"]
    text, alone_text = ({c["key"]: c["text"] for c in r["caveats"]} for r in (rank, alone))
    assert alone["caveats"][0] == rank["caveats"][0] and len(alone["figures"]) == len(rank["figures"])
    for a, f in zip(alone["figures"], rank["figures"]):  # D1's own marks, by their text
        assert [alone_text.get(a["caveats"][0]), a["caveats"][1]] == [text.get(f["caveats"][0]), None], (a, f)
    assert alone["comparison_caveats"] == [
        "non-compliant (quick profile): D1 — quick profile; 1 s per cell instead of 60 s",
        next(x for x in said if x.startswith("STEADY STATE NOT ACHIEVED (D1 main: rounds")),
    ]
    terminal = " ".join(iolab("compare", slow, str(csv_file)).stdout.split())
    assert "[a] STEADY STATE NOT ACHIEVED" in terminal and "STEADY STATE NOT ACHIEVED (D1 main: rounds" in terminal
    assert re.search(r"ART RND 4KiB R/W 65/35 \(µs; ↓\) │ [\d.,]+ \(#\d\) \[a\] │ 90\.00 \(#\d\)", terminal), terminal


def test_a_run_without_steady_state_exits_0_or_with_require_steady_6(tmp_path, latency_runs):
    runs = tmp_path / "runs"
    p, d = latency_runs[1]["slow"]
    assert p.returncode == 0, p.stderr
    [r] = d["runs"]
    assert r["state"] == "complete" and r["steady_state"] == "not-reached" and r["phases"][0]["steady"] is False
    p5, d5 = run_json(runs, "latency", SLOW, "--require-steady")
    assert p5.returncode == 6 and d5["exit_code"] == 6 and d5["runs"][0]["steady_state"] == "not-reached"
    # the same for a stored run, without --json too
    assert iolab("show", r["path"], "--require-steady").returncode == 6
    assert iolab("show", r["path"]).returncode == 0
    ok, okd = run_json(runs, "latency", "sim:enterprise-sas", "--require-steady")
    assert ok.returncode == 0
    # iolab check warns when a side did not reach steady state; --require-steady makes it exit 6
    xml = tmp_path / "check.xml"
    c = iolab("check", okd["runs"][0]["path"], "--baseline", r["path"], "--junit", str(xml))
    assert "steady state not reached in " + r["run_id"] in c.stdout.replace("\n", " ")
    # without --require-steady its JUnit case is skipped, as a fleet's is: a case with neither a
    # failure nor a skip is one a CI system counts as passed, and steady state was not reached
    [case] = [x for x in ET.parse(xml).iter("testcase") if x.get("name") == "steady state"]
    assert case.find("skipped") is not None and "not reached" in case.find("skipped").get("message")
    cs = doc(iolab("check", okd["runs"][0]["path"], "--baseline", r["path"], "--require-steady", "--json"))
    assert cs["exit_code"] == 6 and not cs["check"]["passed"] and cs["check"]["not_steady"] == [r["run_id"]]
    _, again = run_json(runs, "latency", "sim:enterprise-sas", "--require-steady")
    steady_both = iolab("check", again["runs"][0]["path"], "--baseline", okd["runs"][0]["path"], "--require-steady")
    assert steady_both.returncode == 0, steady_both.stdout + steady_both.stderr


def test_a_phase_that_tracks_steady_state_but_never_fills_a_window_is_not_evaluated(tmp_path):
    """--max-rounds below the 5-round window: the phase tracks steady state but is never judged;
    that is not 'no phase tracks it', and --require-steady does not pass it."""
    args = ("run", "latency", "-t", "sim:enterprise-sas?seed=1", "--quick", "--cell-time", "1s", "--no-report")
    p = iolab(*args, "--max-rounds", "3", "--runs-dir", str(tmp_path), "--json", "--require-steady")
    d = doc(p)
    [r] = d["runs"]
    assert r["state"] == "complete" and len(r["phases"][0]["window"]) == 3 and r["phases"][0]["steady"] is None
    assert r["steady_state"] == "not-evaluated" and p.returncode == 6 and d["exit_code"] == 6
    assert "no phase tracks" not in r["steady_rule"]
    assert "not evaluated in main: at most 3 rounds, fewer than the 5-round window" in r["steady_rule"]
    assert iolab("show", r["path"]).returncode == 0 and iolab("show", r["path"], "--require-steady").returncode == 6
    # check --require-steady holds the runs to the rule show does: two such runs are not steady (exit 6)
    other = doc(
        iolab(
            *args[:3],
            "sim:enterprise-sas?seed=2",
            *args[4:],
            "--max-rounds",
            "3",
            "--runs-dir",
            str(tmp_path),
            "--json",
        )
    )
    c = doc(iolab("check", other["runs"][0]["path"], "--baseline", r["path"], "--require-steady", "--json"))
    assert c["exit_code"] == 6 and c["check"]["not_steady"] == [r["run_id"], other["runs"][0]["run_id"]]
    assert "not evaluated (its rounds never filled a window)" in c["check"]["warnings"][0]


def test_an_error_with_json_is_a_document_with_its_exit_code(tmp_path):
    p = iolab("run", "latency", "-t", "sim:no-such-drive", *QUICK, "--runs-dir", str(tmp_path), "--json")
    d = doc(p)
    assert p.returncode == 2 and "no-such-drive" in d["error"] and "Traceback" not in p.stderr
    p = iolab("run", "latency", "-t", "sim:enterprise-sas?seed=x", *QUICK, "--runs-dir", str(tmp_path))
    assert p.returncode == 2 and "seed='x' is not a seed" in p.stderr


@pytest.mark.parametrize(
    "line, said",
    [
        ("run iops --json --no-such-option", "No such option: --no-such-option"),
        ("show --json", "Missing argument 'RUN'"),
        ("run iops --max-rounds many --json", "--max-rounds"),
        ("runs --json --runs-dir {d}/missing", "does not exist"),
        ("runs --json --runs-dir {d}/afile", "it is a regular file, not a directory"),
    ],
)
def test_a_usage_error_or_a_runs_directory_that_is_not_one_gives_a_document_too(line, said, tmp_path):
    # a usage error printed no document; `runs` said "no runs" (exit 0) of a mistyped path or a file
    (tmp_path / "afile").write_text("")
    p = iolab(*line.format(d=tmp_path).split())
    d = doc(p)
    assert p.returncode == 2 and said in d["error"] and said in " ".join(p.stderr.split())
    assert d["command"] == line.split()[0] and "Traceback" not in p.stderr


def test_check_tells_a_slower_nand_program_from_a_different_seed(tmp_path):
    """The regression/noise pair: the quick IOPS test on the default drive, seeds 1 and 2, and
    seed 1 with 1500 µs programs instead of 1150 µs. 200 ms cells (56 a round, simulated): the
    seeds differed by under 1 % in every figure and the slower programs by about 19 % in two
    (measured at 200 and 500 ms), against the 5 % tolerance, as simulated on any machine."""
    runs = tmp_path / "runs"
    paths = {}
    short = ("--quick", "--cell-time", "200ms", "--max-rounds", "5", "--no-report")
    for name, spec in (
        ("base", "sim:enterprise-sas?seed=1"),
        ("seed2", "sim:enterprise-sas?seed=2"),
        ("slow", "sim:enterprise-sas?t_prog_us=1500&seed=1"),
    ):
        p, d = run_json(runs, "iops", spec, quick=short)
        assert p.returncode == 0, p.stderr
        paths[name] = d["runs"][0]["path"]
    noise = iolab("check", paths["seed2"], "--baseline", paths["base"], "--json")
    nd = doc(noise)
    assert noise.returncode == 0, noise.stdout
    assert nd["check"]["passed"] and {f["verdict"] for f in nd["check"]["figures"]} <= {
        "within-tolerance",
        "within-noise",
    }
    # one run a side: no noise claimed from a run's window rounds, the tolerance alone decides
    assert all(f["noise_pct"] is None and f["detectable_pct"] == pytest.approx(5) for f in nd["check"]["figures"][:4])
    assert all("single runs on both sides" in f["method"] for f in nd["check"]["figures"][:4])
    # the seeds did change the measurement: the figures are not identical
    assert any(f["change_pct"] != 0 for f in nd["check"]["figures"])

    xml = tmp_path / "check.xml"
    slow = iolab("check", paths["slow"], "--baseline", paths["base"], "--json", "--junit", str(xml))
    sd = doc(slow)
    assert slow.returncode == 7
    verdicts = {f["name"]: f for f in sd["check"]["figures"]}
    w = verdicts["RND 4KiB R/W 0/100 IOPS"]
    assert w["verdict"] == "regression" and w["worse_pct"] > w["detectable_pct"] == pytest.approx(5)
    assert "RND 4KiB R/W 0/100 IOPS" in sd["check"]["regressions"]
    suite = ET.parse(xml).getroot().find("testsuite")
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == sd["check"]["regressions"] and suite.get("failures") == str(len(failed))

    # a tolerance file that allows the slower write lets it pass; the terminal table says so
    tol = tmp_path / "tol.toml"
    tol.write_text("[tolerances]\n" + "".join(f'"{n}" = "40%"\n' for n in sd["check"]["regressions"]))
    ok = iolab("check", paths["slow"], "--baseline", paths["base"], "--tolerances", str(tol))
    assert ok.returncode == 0, ok.stdout
    assert "within-tolerance" in ok.stdout and "passed" in ok.stdout
    # several runs on a side: the noise is the repeats' spread
    two = ("--baseline", paths["base"], "--baseline", paths["seed2"], "--json")
    rep = doc(iolab("check", paths["slow"], *two))
    assert rep["check"]["figures"][0]["baseline"]["noise_source"] == "repeats"
    assert len(rep["check"]["figures"][0]["baseline"]["samples"]) == 2
    assert all(f["detectable_pct"] >= max(5, f["noise_pct"] or 0) for f in rep["check"]["figures"])
    lower = doc(iolab("check", paths["slow"], *two, "--confidence", "80%"))
    assert lower["check"]["confidence"] == 0.8
    assert lower["check"]["figures"][0]["noise_pct"] < rep["check"]["figures"][0]["noise_pct"]


def test_check_prints_each_tolerance_as_the_user_gave_it(tmp_path, latency_runs):
    """The allowed regression in the terminal table, its 'allowed' column and the JUnit cases, with
    every digit given (`:g` printed 2.34567891 % as "2.34568 %", a tolerance no one set)."""
    paths = [latency_runs[1][name][1]["runs"][0]["path"] for name in ("seed1", "seed2")]
    xml = tmp_path / "check.xml"
    p = iolab("check", paths[1], "--baseline", paths[0], "--max-regression", "2.34567891%", "--junit", str(xml))
    assert p.returncode in (0, 7), p.stdout + p.stderr
    assert "allowed regression: 2.34567891 % in every figure" in p.stdout, p.stdout
    said = [c.findtext("system-out") or "" for c in ET.parse(xml).getroot().iter("testcase")]
    assert said and all("tolerance 2.34567891 %" in s for s in said if "tolerance" in s), said
    # a figure of its own tolerance: the table's column says each as given
    tol = tmp_path / "tol.toml"
    tol.write_text('[tolerances]\n"ART RND 4KiB R/W 65/35" = "12.3456789%"\n')
    own = iolab("check", paths[1], "--baseline", paths[0], "--max-regression", "2.34567891%", "--tolerances", str(tol))
    assert own.returncode in (0, 7), own.stdout + own.stderr
    assert "12.3456789 %" in own.stdout and "2.34567891 %" in own.stdout, own.stdout
    # the page's example file is one a latency check takes (it named an IOPS figure beside latency
    # ones, and a file naming a figure the test does not have is refused)
    page = (ROOT / "docs/automation.md").read_text()
    tol.write_text(re.search(r"```toml\n(.*?)```", page.split("**Allowed regression.**")[1], re.S).group(1))  # type: ignore[union-attr]
    documented = iolab("check", paths[1], "--baseline", paths[0], "--tolerances", str(tol))
    assert documented.returncode in (0, 7), documented.stdout + documented.stderr
    assert "MRT RND 4KiB R/W 0/100" in documented.stdout and "3 %" in documented.stdout, documented.stdout


def test_check_refuses_what_it_cannot_compare(tmp_path):
    runs = tmp_path / "runs"
    # what check refuses is read, not what the runs measured: 200 ms cells simulate a fifth of 1 s ones
    short = ("--quick", "--cell-time", "200ms", "--max-rounds", "5", "--no-report")
    _, lat = run_json(runs, "latency", "sim:enterprise-sas", quick=short)
    path = lat["runs"][0]["path"]
    saved = tmp_path / "base.json"
    saved.write_text(json.dumps(lat))
    p = iolab("check", path, "--baseline", str(saved))  # the run itself, as its saved document
    assert p.returncode == 2 and "is both a candidate and the baseline" in " ".join(p.stderr.split())
    _, again = run_json(runs, "latency", "sim:enterprise-sas", quick=short)
    path = again["runs"][0]["path"]
    assert iolab("check", path, "--baseline", str(saved)).returncode == 0  # a saved document as the baseline
    p = iolab("check", path, "--baseline", path)
    assert p.returncode == 2 and "passes whatever it measured" in " ".join(p.stderr.split()), p.stderr
    bad = tmp_path / "tol.toml"
    bad.write_text('[tolerances]\n"No such figure" = "10%"\n')
    p = iolab("check", path, "--baseline", str(saved), "--tolerances", str(bad), "--json")
    # the figure names are checked in the document: the terminal wraps the message at its width
    assert p.returncode == 2 and "No such figure" in doc(p)["error"] and "ART RND 4KiB R/W 65/35" in doc(p)["error"]
    bad.write_text('[tolerances]\n"ART RND 4KiB R/W 65/35" = "lots"\n')
    p = iolab("check", path, "--baseline", str(saved), "--tolerances", str(bad))
    assert p.returncode == 2 and "lots" in p.stderr and str(bad) in p.stderr and "Traceback" not in p.stderr
    p = iolab("check", path, "--baseline", str(saved), "--confidence", "150%")
    assert p.returncode == 2 and "--confidence" in p.stderr
    # a run that did not finish is no baseline unless forced (another run: a copy keeps the uid)
    cut = tmp_path / "cut"
    shutil.copytree(path, cut)
    m = json.loads((cut / "manifest.json").read_text())
    (cut / "manifest.json").write_text(json.dumps({**m, "state": "interrupted", "run_id": "cut", "uid": "cut"}))
    with sqlite3.connect(cut / "results.db") as db:  # whose results.db names it (store/dbidentity.py)
        db.execute("UPDATE run_identity SET uid='cut'")
    db.close()
    p = iolab("check", path, "--baseline", str(cut))
    assert p.returncode == 2 and "cut is interrupted, not complete" in p.stderr
    assert iolab("check", path, "--baseline", str(cut), "--force").returncode == 0
    # a saved baseline with a value no run measures is refused (the rule compare applies to
    # published figures): Infinity and NaN passed "within tolerance", -1e308 and 0 made verdicts
    edited = tmp_path / "edited.json"
    for value, said in (
        ("Infinity", "inf is not a finite number"),
        ("NaN", "nan is not a finite number"),
        ("-1e308", "-1.000e+308 µs is negative"),
        ("0", "0 µs is no drive's"),
    ):
        copy = json.loads(json.dumps(lat))
        copy["runs"][0]["figures"][0]["value"] = float(value)
        edited.write_text(json.dumps(copy))  # Python writes Infinity and NaN as JavaScript does
        p = iolab("check", path, "--baseline", str(edited))
        message = " ".join(p.stderr.split())
        assert p.returncode == 2 and f"(runs[0].figures[0].value): {said}" in message, (value, p.stdout, p.stderr)
    other = tmp_path / "other.json"
    other.write_text('{"schema": "something else"}')
    p = iolab("check", path, "--baseline", str(other))
    assert p.returncode == 2 and "not an iolab --json document" in p.stderr
    q = iolab(
        "run",
        "latency",
        "-t",
        "sim:enterprise-sas",
        "--quick",
        "--cell-time",
        "100ms",  # any cell time but the baseline's 200 ms: the shorter, the less it simulates
        "--max-rounds",
        "5",
        "--no-report",
        "--runs-dir",
        str(runs),
        "--json",
    )
    p = iolab("check", json.loads(q.stdout)["runs"][0]["path"], "--baseline", path)
    assert p.returncode == 2 and "--cell-time: " in p.stderr and "--force" in p.stderr


def test_the_ci_gate_script_in_docs_passes_a_rerun_and_fails_a_slower_drive(tmp_path):
    script = ROOT / "docs/ci-gate.sh"
    env = dict(os.environ, IOLAB=IOLAB[0], RUNS=str(tmp_path / "runs"), COLUMNS="200")
    same = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "gate: passed" in same.stdout
    assert ET.parse(tmp_path / "runs/check.xml").getroot().get("failures") == "0"
    slow = subprocess.run(
        ["sh", str(script)],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(env, RUNS=str(tmp_path / "runs2"), CANDIDATE_TARGET=SLOW),
    )
    assert slow.returncode == 1, slow.stdout + slow.stderr
    assert "gate: FAILED" in slow.stdout and "ART RND 4KiB R/W 65/35" in slow.stdout


def test_resume_prints_the_finished_run_as_a_document(scratch):
    from .test_resume import run_and_kill

    run = run_and_kill(scratch, scratch / "runs", "main-r02-c03")
    killed = doc(iolab("show", str(run), "--json"))["runs"][0]
    assert killed["state"] == "interrupted"  # killed -9: the manifest still says running, its writer is gone
    p = iolab("resume", str(run), "--no-report", "--json", "--require-steady", timeout=900)
    d = doc(p)
    [r] = d["runs"]
    assert d["command"] == "resume" and r["path"] == str(run) and r["state"] == "complete"
    assert "continues at round 2" in p.stderr  # the notes went to stderr
    # a file need not settle in a quick run: the exit code follows the verdict the document gives
    assert p.returncode == (6 if r["steady_state"] == "not-reached" else 0)
    assert r["steady_state"] in ("reached", "not-reached") and r["phases"][0]["window"]
