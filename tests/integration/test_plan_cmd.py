"""`iolab plan`: what `iolab run` would do, from the command line, touching nothing: one test, a
sequence (characterise, pts --all), a real file target that stays as it was, bad input refused
with exit 2, and --json documents held to docs/schema/outcome.schema.json."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from iolab.api import registry

from ..schema_lite import errors
from .conftest import iolab

ROOT = Path(__file__).parents[2]
SCHEMA = json.loads((ROOT / "docs/schema/outcome.schema.json").read_text())


def plan_json(*args: str, runs: Path) -> dict:
    p = iolab("plan", *args, "--json", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    assert errors(doc, SCHEMA) == [], errors(doc, SCHEMA)
    assert doc["command"] == "plan" and doc["exit_code"] == 0
    assert not runs.exists(), "a plan makes no runs directory"
    return doc["plan"]


def test_one_test_is_printed_with_its_cells_purge_compliance_and_eta(scratch):
    runs = scratch / "runs"
    p = iolab("plan", "iops", "--quick", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    out = " ".join(p.stdout.split())
    assert "IOPS (iops; PTS 2.0.2 (enterprise))" in out
    # the quick copy the test would use is named, with the drive it stands for
    assert re.search(r"target sim:enterprise-sas\?user_gb=0\.53\d+&op=[\d.]+ \(a copy of sim:enterprise-sas", out)
    assert "purge auto: sim-purge" in out
    assert "8 block sizes × 7 R/W mixes, each TC4/QD32, 1.00 s" in out
    assert "stops at steady state or after 10 rounds, whichever comes first" in out
    assert "preconditioning 1: WIPC SEQ 128KiB W" in out
    assert "5-round window" in out
    assert "compliant no: quick profile; 1 s per cell instead of 60 s" in out
    # the ETA `iolab run` prints at its start (cli/progress.sequence_eta)
    assert "Time: 1 test, ETA 4:40 to 9:20 (IOPS 4:40–9:20)" in out
    assert "Traceback" not in p.stderr and not runs.exists()
    # a round limit below the 5-round window: the phase never stops at steady state, and says so
    out = " ".join(iolab("plan", "iops", "--quick", "--max-rounds", "3", "--runs-dir", str(runs)).stdout.split())
    assert "3 rounds: fewer than the 5-round window, so steady state is not evaluated" in out
    assert "stops at steady state" not in out


def test_the_json_document_is_the_plan_iolab_run_builds(scratch):
    plan = plan_json("iops", "--quick", "--cell-time", "2s", "--max-rounds", "7", runs=scratch / "runs")
    (t,) = plan["tests"]
    (ph,) = t["phases"]
    assert t["test"] == "iops" and t["copy_of"] == "sim:enterprise-sas"
    assert t["tested_capacity_bytes"] == t["target_capacity_bytes"] == 536870912
    assert len(ph["cells"]) == 56 and {c["workload"]["seconds"] for c in ph["cells"]} == {2.0}
    assert {(c["workload"]["threads"], c["workload"]["queue_depth"]) for c in ph["cells"]} == {(4, 32)}
    assert ph["max_rounds"] == 7 and ph["stop_on_steady"] and ph["round_seconds"] == 112.0
    assert ph["precondition"][0]["bytes"] == 2 * 536870912 and ph["precondition"][0]["seconds"] is None
    # a steady phase runs between one window of rounds and its round limit
    assert (ph["earliest_s"], ph["latest_s"]) == (5 * 112.0, 7 * 112.0)
    assert plan["eta"]["earliest_s"] == 560.0 and plan["eta"]["at_most_s"] == 784.0
    assert plan["ignored"] == [] and t["ignored_options"] == {}
    assert not t["compliant"] and "quick profile" in t["noncompliance"]


def test_a_quick_copys_note_gives_its_over_provisioning_as_its_pages_header_does(scratch):
    # the note said the copy keeps "the drive's over-provisioning": true of all its flash, but the
    # copy's smaller SLC cache leaves GC 9.4 % where the drive has 9.7 %, as the run's header says
    from iolab.targets import parse_target

    (t,) = plan_json("iops", "--quick", "--target", "sim:client-nvme-slc", runs=scratch / "runs")["tests"]
    (note,) = [n for n in t["notes"] if n.startswith("--quick simulated")]
    header = parse_target(t["target"]).facts.model  # every page's header shows the target's model line
    assert header.endswith(", OP 9.4% for GC (9.7% at full size), 14.8% with the SLC cache"), header
    assert f"the copy's {header.split(', ', 1)[1]}, and tested it whole" in note, note
    assert "over-provisioning" not in note, note
    # the client profile tests 75 % of the copy: "tested it whole" stood beside "tested 402.7 MB",
    # and its Active range row called the 0.403 GB tested the copy's size (it is 0.537 GB)
    (t,) = plan_json("iops", "--quick", "--profile", "client", "-t", "sim:client-nvme-slc", runs=scratch / "c")["tests"]
    (note,) = [n for n in t["notes"] if n.startswith("--quick simulated a 0.537 GB copy")]
    assert "tested it whole" not in note and "and tested its first 75 % (0.403 GB)" in note, note
    assert "--quick simulated a copy of the drive of 0.537 GB" in json.dumps(t), t


def test_a_sequence_lists_each_test_in_the_order_run_runs_them(scratch):
    plan = plan_json("characterise", "--quick", runs=scratch / "runs")
    assert [t["test"] for t in plan["tests"]] == [d.name for d in registry.sequence("characterise")]
    assert plan["eta"]["text"].startswith(f"{len(plan['tests'])} tests, ETA ")
    p = iolab("plan", "characterise", "--quick", "--runs-dir", str(scratch / "runs"))
    assert p.returncode == 0 and not (scratch / "runs").exists(), p.stderr
    assert f"Time (as `iolab run` prints it before the first test): {plan['eta']['text']}" in " ".join(p.stdout.split())
    n, last = len(plan["tests"]), plan["tests"][-1]["title"]
    assert " ".join(p.stdout.split()).count(f"test {n}/{n}: {last} (") == 1
    by = {t["test"]: t for t in plan["tests"]}
    # a test that needs a larger quick copy names its own (suites.quick_setup)
    assert "user_gb=4" in by["consistency"]["target"] and by["consistency"]["copy_of"] == "sim:enterprise-sas"
    # phases built during the run say from what
    assert any(ph["built_from"] for ph in by["max-iops"]["phases"])


def test_pts_all_says_write_budgets_and_the_options_a_test_ignores(scratch):
    plan = plan_json("pts", "--all", "--quick", "--max-rounds", "6", runs=scratch / "runs")
    assert [t["test"] for t in plan["tests"]] == [d.name for d in registry.sequence("pts", True)]
    wsat = next(t for t in plan["tests"] if t["test"] == "wsat")
    budgeted = [ph for ph in wsat["phases"] if ph["budget_write_bytes"]]
    assert budgeted and budgeted[0]["budget_write_bytes"] == 4 * wsat["tested_capacity_bytes"]
    assert budgeted[0]["budget_seconds"] == 24 * 3600.0
    assert plan["eta"]["not_estimated"] and plan["eta"]["at_most_s"] > plan["eta"]["expected_latest_s"]
    assert wsat["ignored_options"] == {"--max-rounds": 10}
    assert any("--max-rounds changes nothing in" in line and "wsat" in line for line in plan["ignored"])


def test_a_file_target_is_read_not_written(scratch):
    img = scratch / "d.img"
    img.write_bytes(hashlib.sha256(b"iolab").digest() * (64 * 2**20 // 32))
    before = (img.stat().st_mtime_ns, img.stat().st_size, hashlib.sha256(img.read_bytes()).hexdigest())
    target = f"file:{img}?size=64MiB"
    runs = scratch / "runs"
    # a file iolab did not make: refused as `iolab run` refuses it (exit 3), read and left as it was
    p = iolab("plan", "iops", "--quick", "-t", target, "--runs-dir", str(runs))
    assert p.returncode == 3 and "not created by iolab" in p.stderr, p.stdout + p.stderr
    p = iolab("plan", "iops", "--quick", "-t", target, "--runs-dir", str(runs), "--allow-unsafe-target")
    assert p.returncode == 0, p.stdout + p.stderr
    plan = plan_json("iops", "--quick", "-t", target, "--allow-unsafe-target", runs=runs)
    (t,) = plan["tests"]
    assert t["target"] == target and t["copy_of"] is None and t["tested_capacity_bytes"] == 64 * 2**20
    assert t["purge_does"].startswith("file (")
    # the cells are the fio jobs `iolab fio-job` prints for the same plan
    jobs = iolab("fio-job", "iops", "--quick", "-t", target)
    assert jobs.returncode == 0, jobs.stderr
    assert len(re.findall(r"^# ---- IOPS / main / cell ", jobs.stdout, re.M)) == len(t["phases"][0]["cells"])
    after = (img.stat().st_mtime_ns, img.stat().st_size, hashlib.sha256(img.read_bytes()).hexdigest())
    assert after == before and not runs.exists()
    assert sorted(os.listdir(scratch)) == ["d.img"]


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (("--stall-timeout", "0s"), 2, "stall timeout (--stall-timeout): '0s' is not allowed"),
        (("--hosts", "0.0.0.0"), 2, "that address means every interface of this machine"),
        (("--hosts", "10.254.254.254"), 3, "iolab cannot check a target on a host it reaches through fio's server"),
    ],
)
def test_what_run_refuses_plan_refuses_with_its_code_and_words(scratch, args, code, says):
    """plan exited 0 and described these runs; run refuses them before it starts anything."""
    target = f"file:{scratch}/f.img?size=16MiB"
    runs = scratch / "runs"
    common = ("iops", "--quick", "-t", target, *args, "--runs-dir", str(runs))
    p, r = iolab("plan", *common), iolab("run", *common, "--no-report")
    assert p.returncode == r.returncode == code, p.stdout + p.stderr + r.stdout + r.stderr
    assert says in " ".join(p.stderr.split()) and p.stderr == r.stderr  # one paragraph, the run's
    assert sorted(os.listdir(scratch)) == []  # nothing written: no file, no runs directory


def test_a_sim_state_run_would_refuse_is_refused_by_plan(scratch):
    """plan exited 0 for a load= file that is no state, or the state of another drive; run refused it."""
    state = scratch / "small.state"
    saved = iolab(
        "run", "latency", "--quick", "--no-report", "--runs-dir", str(scratch / "saved"),
        "-t", f"sim:enterprise-sas?user_gb=0.25&save={state}",
    )  # fmt: skip
    assert saved.returncode == 0 and state.is_file(), saved.stderr
    not_state = scratch / "not.state"
    not_state.write_text("root:x:0:0:root:/root:/bin/sh\n")
    runs = scratch / "runs"
    for spec, says in (
        (f"sim:enterprise-sas?load={not_state}", "not an iolab sim state file (bad magic)"),
        (f"sim:enterprise-sas?load={state}", "drive of 249999360 B, not the enterprise-sas drive of 400000000000 B"),
    ):
        common = ("latency", "--quick", "-t", spec, "--runs-dir", str(runs))
        p, r = iolab("plan", *common), iolab("run", *common, "--no-report")
        assert p.returncode == r.returncode == 2, p.stdout + p.stderr + r.stdout + r.stderr
        assert says in " ".join(p.stderr.split()) and p.stderr == r.stderr  # one paragraph, the run's
    p = iolab(
        "plan", "latency", "--quick", "-t", f"sim:enterprise-sas?user_gb=0.25&load={state}", "--runs-dir", str(runs)
    )
    assert p.returncode == 0, p.stderr
    assert not runs.exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("nosuch",), "test 'nosuch': unknown"),
        (("iops", "--cell-time", "abc"), "cannot read 'abc' as a duration"),
        (("iops", "--active-range", "150"), "150% is out of range"),
        (("iops", "--repeat", "3"), "--repeat runs the same plan N times"),
        (("iops", "--fleet", "f.toml"), "`iolab plan` describes one target"),
        (("iops", "-t", "sim:enterprise-sas", "-t", "sim:enterprise-sas"), "give one --target"),
        (("iops", "--purge", "nvme-format", "-t", "file:{d}/f.img?size=16MiB"), "purge method 'nvme-format'"),
        (("iops", "--no-such-option"), "No such option"),
    ],
)
def test_bad_input_is_refused_with_exit_2(scratch, args, says):
    runs = scratch / "runs"
    p = iolab("plan", *(a.format(d=scratch) for a in args), "--runs-dir", str(runs))
    assert p.returncode == 2, p.stdout + p.stderr
    assert says in " ".join(p.stderr.split()) and "Traceback" not in p.stderr
    assert not runs.exists() and not (scratch / "f.img").exists()


def test_an_error_with_json_is_a_document_too(scratch):
    p = iolab("plan", "nosuch", "--json", "--runs-dir", str(scratch / "runs"))
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    assert errors(doc, SCHEMA) == [] and doc["command"] == "plan" and "unknown" in doc["error"]


@pytest.mark.parametrize("test", ["max-iops", "latency-demand"])
def test_a_test_whose_phases_never_stop_at_steady_state_says_the_rule_does_not_apply(scratch, test):
    """max-iops searches and runs its rounds at the optimum, latency-demand ramps and bisects: no
    phase tracks steady state, so neither the plan nor the run's stored rule (`iolab show`, the
    report) may promise 'at most 10 rounds' or the profile's round limit, which no phase uses."""
    runs = scratch / "runs"
    p = iolab("plan", test, "--quick", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    out = " ".join(p.stdout.split())
    assert "steady state not applicable: no phase tracks steady state" in out, out
    assert "round limit 10 (profile)" not in out and "at most 10 rounds" not in out, out
    assert "the profile's round limit is not used (each phase's own, below)" in out
    r = iolab("run", test, "--quick", "--runs-dir", str(runs))
    assert r.returncode == 0, r.stdout + r.stderr
    [run] = list(runs.iterdir())
    rule = json.loads((run / "manifest.json").read_text())["steady_rule"]
    assert rule.startswith("not applicable: no phase tracks steady state"), rule
    shown = " ".join(iolab("show", str(run), "--runs-dir", str(runs)).stdout.split())
    assert "steady-state rule: not applicable: no phase tracks steady state" in shown, shown
    assert "at most 10 rounds" not in shown


def _grid(p) -> str:
    return next(ln for ln in p.stdout.splitlines() if "Demand points:" in ln).split("Demand points:", 1)[1]


def test_dirths_grid_takes_its_default_as_printed_and_says_one_range_for_every_bad_value(scratch):
    """`iolab tests dirth` prints the grid's default high → low (32, 16, …, 1); typed back, it was
    refused as not ascending, and 0 and -1 were refused with two minimums (1 and 0)."""
    runs = scratch / "runs"
    shown = iolab("tests", "dirth")
    default = re.search(r"--set threads=.*?\(default ([0-9, ]+);", " ".join(shown.stdout.split()))
    assert shown.returncode == 0 and default, shown.stdout
    as_printed = default.group(1).replace(" ", "")
    assert as_printed == "32,16,8,6,4,2,1"
    plans = {v: iolab("plan", "dirth", "--quick", "--set", v, "--runs-dir", str(runs)) for v in (
        f"threads={as_printed}", "threads=1,2,4,6,8,16,32", f"depths={as_printed}", "depths=2,1",
    )}  # fmt: skip
    assert all(p.returncode == 0 for p in plans.values()), [p.stderr for p in plans.values()]
    grids = {v: _grid(p) for v, p in plans.items()}
    full = " TC 32, 16, 8, 6, 4, 2, 1 × QD 32, 16, 8, 6, 4, 2, 1 (high → low): 49 points"
    assert grids[f"threads={as_printed}"].startswith(full) and grids[f"depths={as_printed}"].startswith(full)
    assert grids["threads=1,2,4,6,8,16,32"] == grids[f"threads={as_printed}"]  # either order: run high → low
    assert grids["depths=2,1"].startswith(" TC 32, 16, 8, 6, 4, 2, 1 × QD 2, 1 (high → low): 14 points")
    for v, says in (
        ("threads=0,1", "give thread counts from 1 to 4,096"),
        ("threads=-1,1", "give distinct thread counts from 1 to 4,096"),
        ("threads=5000,1", "give thread counts from 1 to 4,096"),
        ("threads=4,1,2", "give distinct thread counts from 1 to 4,096"),
        ("threads=2,2", "give distinct thread counts from 1 to 4,096"),
        ("depths=0", "give queue depths from 1 to 65,536"),
        ("depths=70000,1", "give queue depths from 1 to 65,536"),
        ("depths=-4,-2", "give distinct queue depths from 1 to 65,536"),
    ):
        p = iolab("plan", "dirth", "--quick", "--set", v, "--runs-dir", str(runs))
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and says in said and "at least 0" not in said, (v, said)
    assert not runs.exists()


@pytest.mark.parametrize(("test", "name"), [("max-iops", "min_gain"), ("latency-demand", "tolerance")])
def test_a_share_a_stop_rule_takes_below_one_says_that_range_for_every_value_out_of_it(scratch, test, name):
    """min_gain=150% was refused with fraction's "from 0 to 1 (or 0% to 100%)", and min_gain=1 then
    with the stop rule's "from 0 to below 1": two ranges for one parameter. A bare number is a
    percentage (100 is the whole)."""
    runs = scratch / "runs"
    for v in ("150%", "100", "100%", "-5%"):
        p = iolab("plan", test, "--quick", "--set", f"{name}={v}", "--runs-dir", str(runs))
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "give a percentage from 0% to below 100%" in said, (v, said)
        assert "from 0 to 1 " not in said and "Traceback" not in said
    assert iolab("plan", test, "--quick", "--set", f"{name}=99%", "--runs-dir", str(runs)).returncode == 0
    assert not runs.exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("iops", "--max-rounds", "7"), "round limit 7 (--max-rounds)"),
        (("iops",), "round limit 25 (profile)"),
        (("wsat", "--quick", "--max-rounds", "3"), "round limit: each phase's own, below"),
        (("xsr", "--quick", "--max-rounds", "3"), "round limit: each phase's own, below"),
        (("wsat", "--quick"), "the profile's round limit is not used (each phase's own, below)"),
    ],
)
def test_the_round_limit_names_its_source_and_is_not_shown_where_no_phase_uses_it(scratch, args, said):
    """`iolab plan iops --max-rounds 7` said "round limit 7 (profile)", and WSAT and XSR, whose
    phases run to their own budgets, showed a round limit beside phases of up to 86,400 rounds."""
    runs = scratch / "runs"
    p = iolab("plan", *args, "-t", "sim:enterprise-sas?user_gb=0.25", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    out = " ".join(p.stdout.split())
    assert said in out, out
    assert not re.search(r"round limit \d+ \(profile\)", out) or said == "round limit 25 (profile)", out
    doc = plan_json(*args, "-t", "sim:enterprise-sas?user_gb=0.25", runs=runs)
    wanted = {"(--max-rounds)": "--max-rounds", "(profile)": "profile"}
    assert {t["max_rounds_from"] for t in doc["tests"]} == {
        next((v for k, v in wanted.items() if said.endswith(k)), "not used")
    }


def test_a_hosts_run_s_file_target_is_given_its_room_or_said_unchecked(scratch):
    """Before: a hosts run's file target got no free-space check (a local run's gets one as it
    starts), so plan described, and run started, a 10 TiB file on a smaller filesystem; and plan of
    a host reached through fio's server only said nothing of it, nor of the 'purge failed (none)'
    the run records for another machine's target."""
    big = f"file:{scratch}/h.img?size=10TiB"
    p = iolab("plan", "latency", "--quick", "-t", big, "--hosts", "127.0.0.1")  # this machine's fio server
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and f"not enough space for {scratch}/h.img: it needs " in said, said
    assert not (scratch / "h.img").exists()
    args = ("plan", "latency", "--quick", "-t", f"file:{scratch}/h.img?size=16MiB", "--hosts", "192.0.2.1")
    p = iolab(*args, "--allow-unsafe-target", "--json")  # another machine, reached through fio's server only
    assert p.returncode == 0, p.stderr
    planned = json.loads(p.stdout)["plan"]
    assert f"the free space for {scratch}/h.img on 192.0.2.1:8765 is not checked before the run" in planned["split"]
    assert "purge failed (none): not from FOB" in planned["tests"][0]["noncompliance"]


def test_dirths_operating_points_eta_spans_one_to_three_points(scratch):
    """Before DIRTH's operating-points phase is built its ETA counted three points' pre-write and
    histogram (3.50 h at full length), earliest and latest alike; a point Max, Mid and Min share is
    measured once, so it takes one point's time (70 min) to three."""
    runs = scratch / "runs"
    p = iolab("plan", "dirth", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    out = " ".join(p.stdout.split())
    assert "(1 to 3 points: a point two of them share is measured once); 70.0 min to 3.50 h" in out, out
    [test] = plan_json("dirth", runs=runs)["tests"]
    [ops] = [ph for ph in test["phases"] if ph["name"] == "operating points"]
    assert (ops["earliest_s"], ops["latest_s"]) == (70 * 60, 3 * 70 * 60)
