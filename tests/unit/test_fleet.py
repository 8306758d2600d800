"""The fleet's pure parts: the fleet file, the outlier rule, spec-sheet verdicts and the report
document with its JUnit XML."""

from __future__ import annotations

import json
import os
import random
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from iolab.api import fleetfile
from iolab.api.fleetfile import load_fleet
from iolab.core.errors import IolabError
from iolab.figures.fleet import DriveFigures, conditions_of, distribution, distributions, drive_figures
from iolab.figures.specsheet import SpecSheet, judge, load_spec_sheet
from iolab.pages.fleet import _verdict, caveats, conditions_text, document, spec_cell
from iolab.pages.fleet_junit import junit_xml
from iolab.pages.fleet_terminal import strip
from iolab.targets import CommandResult, Target, host, parse_target

W = "RND 4KiB R/W 0/100 IOPS"
IOPS_META = {"unit": "IOPS", "direction": "higher-is-better", "kind": "value"}
META = {W: IOPS_META}


def drives(values: dict[str, float]) -> list[DriveFigures]:
    return [DriveFigures(n, {}, "complete", {W: v}, META) for n, v in values.items()]


def fleet_file(tmp: Path, text: str) -> Path:
    p = tmp / "fleet.toml"
    p.write_text(text)
    return p


# --- the outlier rule ---------------------------------------------------------------------


def test_a_drive_30_percent_slower_among_64_is_the_only_outlier():
    rng = random.Random(7)
    values = {f"d{i:02}": rng.gauss(40_000, 40_000 * 0.01) for i in range(63)}  # 1 % drive-to-drive spread
    values["slow"] = 40_000 / 1.3
    d = distribution(W, drives(values))
    assert d is not None and d.judged
    assert [o.drive for o in d.outliers] == ["slow"]
    assert d.outliers[0].worse and d.outliers[0].z < -3.5


def test_the_rule_is_robust_where_mean_and_sd_are_not():
    # Two bad drives among 8: a mean ± 2 sd rule flags neither of them; median ± 3.5 MAD-sigma flags both.
    values = {f"d{i}": 100.0 + i * 0.1 for i in range(6)} | {"bad1": 60.0, "bad2": 61.0}
    xs = list(values.values())
    mean = sum(xs) / len(xs)
    sd = (sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5
    assert all(abs(x - mean) <= 2 * sd for x in xs)
    d = distribution(W, drives(values))
    assert sorted(o.drive for o in d.outliers) == ["bad1", "bad2"]


def test_normal_drives_are_not_flagged_and_k_is_used():
    rng = random.Random(3)
    values = {f"d{i}": rng.gauss(1000, 10) for i in range(64)}
    assert distribution(W, drives(values)).outliers == ()
    # k small enough flags the tails: the rule really reads k (the 5 % floor set aside)
    assert len(distribution(W, drives(values), k=1.0, min_pct=0).outliers) > 5


def test_the_planted_drive_of_a_recorded_64_drive_fleet_is_its_only_outlier():
    """bench/fleet.py's 64 simulated drives (recorded): drives that differ only in their
    workload's seed lie up to 4.1 % from the median, which the 1 % floor called strays; the
    default (5 %, check's tolerance) flags the planted drive alone."""
    recorded = json.loads((Path(__file__).parent.parent / "fixtures/fleet/sim64_iops_quick.json").read_text())
    fleet = [DriveFigures(n, {}, "complete", f, dict.fromkeys(f, IOPS_META)) for n, f in recorded["drives"].items()]
    flagged = {o.drive for d in distributions(fleet) for o in d.outliers}
    assert flagged == {"slow"}
    # flagged where its writes are 22 % slow; the reads do not program, and its 4 KiB 65/35 IOPS
    # lie 1.2 % below the median: a stray by the MAD (z -4.3), not by 5 %
    assert {d.figure for d in distributions(fleet) if d.outliers} == {
        "RND 4KiB R/W 0/100 IOPS",
        "RND 64KiB R/W 65/35 IOPS",
    }
    strays = {o.drive for d in distributions(fleet, min_pct=1.0) for o in d.outliers}
    assert strays == {"slow", "d54", "d58"}  # what the old floor said


def test_few_drives_are_not_judged_and_equal_values_are_not_outliers():
    d = distribution(W, drives({"a": 1.0, "b": 2.0, "c": 100.0}))
    assert not d.judged and d.outliers == ()
    same = {f"d{i}": 524.5 + i * 1e-12 for i in range(8)}  # the same figure, summed in another order
    assert distribution(W, drives(same)).outliers == ()
    zero_mad = {f"d{i}": 500.0 for i in range(7)} | {"odd": 450.0}
    assert [o.drive for o in distribution(W, drives(zero_mad)).outliers] == ["odd"]


def test_direction_says_which_side_is_worse():
    meta = {"lat": {"unit": "µs", "direction": "lower-is-better", "kind": "value"}}
    ds = [DriveFigures(f"d{i}", {}, "complete", {"lat": 100.0 + i}, meta) for i in range(8)]
    ds.append(DriveFigures("slow", {}, "complete", {"lat": 300.0}, meta))
    (o,) = distribution("lat", ds).outliers
    assert o.drive == "slow" and o.worse


# --- spec sheets --------------------------------------------------------------------------


def test_spec_sheet_toml_and_csv_judge_alike(tmp_path):
    (tmp_path / "s.toml").write_text(
        '[sheet]\nmodel = "X"\n[[criterion]]\nfigure = "RND 4KiB R/W 0/100 IOPS"\nmin = 35\nunit = "kIOPS"\n'
        '[[criterion]]\nfigure = "ART"\nmax = 0.2\nunit = "ms"\n[[criterion]]\nfigure = "DWPD"\nmin = 3\n'
    )
    (tmp_path / "s.csv").write_text("figure,min,max,unit\nRND 4KiB R/W 0/100 IOPS,35,,kIOPS\nART,,0.2,ms\nDWPD,3,,\n")
    figs, units = {W: 34_000.0, "ART": 150.0}, {W: "IOPS", "ART": "µs"}
    for name in ("s.toml", "s.csv"):
        sheet = load_spec_sheet(tmp_path / name)
        got = [(v.criterion.figure, v.verdict) for v in judge("d1", figs, units, sheet)]
        assert got == [(W, "fail"), ("ART", "pass"), ("DWPD", "not-measured")], name
    sheet = load_spec_sheet(tmp_path / "s.toml")
    assert judge("d1", {W: 35_000.0}, units, sheet)[0].verdict == "pass"  # the bound itself passes
    # a run whose figures are not the drive's: measured, shown, neither passed nor failed
    held = judge("d1", figs, units, sheet, reasons=["quick run", "steady state not evaluated"])
    assert [v.verdict for v in held] == ["not-judged", "not-judged", "not-measured"]
    assert held[0].why == (
        f"not judged: quick run; steady state not evaluated ({W} = 34.00 kIOPS; needs ≥ 35 kIOPS)"
    ), held[0].why
    assert spec_cell([_verdict(v) for v in held]) == "0 pass, 1 not measured, 2 not judged"
    # a figure's own steady-state caveat (specmatch.figures_steady) holds back that figure alone
    held = judge("d1", figs, units, sheet, steady={"ART": ("steady state not achieved",)})
    assert [v.verdict for v in held] == ["fail", "not-judged", "not-measured"]
    assert held[1].why.startswith("not judged: steady state not achieved (ART = "), held[1].why


@pytest.mark.parametrize(
    "text, says",
    [
        ('[[criterion]]\nfigure = "x"\n', "give 'min' or 'max'"),
        ('[[criterion]]\nfigure = "x"\nmin = 3\nmax = 1\n', "no drive could pass"),
        ('[[criterion]]\nfigure = "x"\nmin = 3\nunit = "furlongs"\n', "field 'unit'"),
        ('[[criterion]]\nfigure = "x"\nmin = "fast"\n', "give a number"),
        ('[[criterion]]\nfigure = "x"\nmin = 1\nspeed = 2\n', "unknown field 'speed'"),
        ("[drive]\n", "expected [[criterion]]"),
    ],
)
def test_bad_spec_sheets_say_what_is_wrong(tmp_path, text, says):
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(IolabError, match=says.replace("[", r"\[").replace("(", r"\(")):
        load_spec_sheet(tmp_path / "s.toml")


# --- the fleet file -----------------------------------------------------------------------


def test_fleet_file_expands_counts_and_merges_labels(tmp_path):
    f = load_fleet(
        fleet_file(
            tmp_path,
            '[fleet]\nname = "f1"\nparallel = 2\n'
            '[[drive]]\ntarget = "sim:enterprise-sas?user_gb=0.1&seed={i}"\ncount = 3\nname = "s{i}"\n'
            'labels = { firmware = "A" }\n'
            f'[[host]]\naddress = "10.1.2.3"\nlabels = {{ rack = "r1" }}\n[[host.drive]]\ntarget = "file:{tmp_path}/a.img?size=8MiB"\n'
            'labels = { firmware = "B" }\n',
        )
    )
    assert [d.name for d in f.drives][:3] == ["s1", "s2", "s3"]
    assert f.drives[1].target.endswith("seed=2") and f.parallel == 2
    host_drive = f.drives[3]
    assert host_drive.where == "10.1.2.3:8765" and host_drive.labels == {"rack": "r1", "firmware": "B"}


@pytest.mark.parametrize(
    "text, says",
    [
        ("", "no drive in it"),
        ('[[drive]]\nname = "x"\n', "field 'target' is missing"),
        ('[[drive]]\ntarget = "sim:enterprise-sas"\ncount = 3\n', "needs {i}"),
        (
            '[[drive]]\ntarget = "sim:enterprise-sas"\n[[drive]]\ntarget = "sim:enterprise-sas"\n',
            "two drives are named",
        ),
        (
            '[[drive]]\ntarget = "sim:enterprise-sas"\nname = "a"\n[[drive]]\ntarget = "sim:enterprise-sas"\nname = "b"\n',
            "are the same drive",
        ),
        ('[[drive]]\ntarget = "sim:no-such-preset"\n', "drive"),
        ('[[host]]\naddress = "10.0.0.2"\n', "host's drives"),
        ('[[host]]\naddress = "10.0.0.2"\n[[host.drive]]\ntarget = "sim:enterprise-sas"\n', "a sim target"),
        ('[fleet]\nparallel = 0\n[[drive]]\ntarget = "sim:enterprise-sas"\n', "field 'parallel'"),
        ('[fleet]\nname = "a/b"\n[[drive]]\ntarget = "sim:enterprise-sas"\n', "field 'name'"),
        ('[[drive]]\ntarget = "sim:enterprise-sas"\nrack = 3\n', "unknown field 'rack'"),
        ("[[drive]\n", "fleet file"),
        ('[[drive]]\ntarget = "sim:enterprise-sas"\nname = ".."\n', "not '.' or '..'"),
        ('[[drive]]\ntarget = "sim:enterprise-sas"\nname = "."\n', "not '.' or '..'"),
    ],
)
def test_bad_fleet_files_say_what_is_wrong(tmp_path, text, says):
    with pytest.raises(IolabError, match=says.replace("[", r"\[").replace("{", r"\{")):
        load_fleet(fleet_file(tmp_path, text))


@pytest.mark.parametrize(
    "a, b",
    [
        ("user_gb=0.25&seed=1", "seed=1&user_gb=0.25"),  # the options' order
        ("user_gb=0.25", "user_gb=0.25&seed=0"),  # no seed is seed 0
        ("user_gb=0.25&seed=3", "user_gb=.250&seed=03"),  # one number written two ways
    ],
)
def test_one_simulated_drive_listed_twice_is_refused_however_written(tmp_path, a, b):
    text = "".join(f'[[drive]]\ntarget = "sim:enterprise-sas?{q}"\nname = "{n}"\n' for n, q in (("a", a), ("b", b)))
    with pytest.raises(IolabError, match="drives 'a' and 'b' are the same drive"):
        load_fleet(fleet_file(tmp_path, text))
    other = text.replace(f"?{b}", "?user_gb=0.25&seed=7")
    assert len(load_fleet(fleet_file(tmp_path, other)).drives) == 2  # another seed: another drive


def _nbdinfo_here_and_over_ssh(monkeypatch) -> list[tuple[str, ...]]:
    """nbdinfo --size answering 64 MiB on this machine and 1 GiB over SSH: the size says which
    machine's server was asked. Returns the commands run."""
    calls: list[tuple[str, ...]] = []

    def fake(argv, timeout=60.0):
        calls.append(tuple(argv))
        return CommandResult(tuple(argv), 0, b"%d\n" % (1 << 30 if argv[0] == "ssh" else 64 << 20), "")

    monkeypatch.setattr(host, "run_command", fake)
    return calls


NBD_ON_HOST = '[[host]]\naddress = "198.51.100.7"\n{ssh}[[host.drive]]\ntarget = "nbd://127.0.0.1:10809/e{size}"\n'


def test_a_hosts_nbd_drive_is_sized_on_that_host_never_on_this_machine(tmp_path, monkeypatch):
    calls = _nbdinfo_here_and_over_ssh(monkeypatch)
    (d,) = load_fleet(fleet_file(tmp_path, NBD_ON_HOST.format(ssh='ssh = "u@h"\n', size=""))).drives
    assert calls and all(c[0] == "ssh" and c[-1] == "nbdinfo --size nbd://127.0.0.1:10809/e" for c in calls), calls
    assert fleetfile.drive_target(d.target, d.host).capacity == 1 << 30  # the host's export, asked there
    calls.clear()
    # reached through fio's server only: nothing can be asked there, and nothing is asked here
    with pytest.raises(
        IolabError, match=r"export's size is needed, and iolab cannot ask host 198\.51\.100\.7:8765.*Give the size"
    ):
        load_fleet(fleet_file(tmp_path, NBD_ON_HOST.format(ssh="", size="")))
    (d,) = load_fleet(fleet_file(tmp_path, NBD_ON_HOST.format(ssh="", size="?size=128MiB"))).drives
    assert fleetfile.drive_target(d.target, d.host).capacity == 128 << 20 and calls == []
    assert parse_target("nbd://127.0.0.1:10809/e").capacity == 64 << 20 and calls  # this machine's run: asked here


def test_a_seed_the_simulator_would_fold_is_refused(tmp_path):
    # the engine keeps a seed's low 32 bits: 4294967297 would be seed 1's drive again
    text = '[[drive]]\ntarget = "sim:enterprise-sas?user_gb=0.25&seed=4294967297"\n'
    with pytest.raises(IolabError, match="seed=4294967297 is above 4,294,967,295") as e:
        load_fleet(fleet_file(tmp_path, text))
    assert "\n" not in str(e.value)
    assert parse_target("sim:enterprise-sas?user_gb=0.25&seed=4294967295").option("seed") == "4294967295"
    with pytest.raises(IolabError, match="is not a seed; give a whole number from 0 to"):
        parse_target("sim:enterprise-sas?seed=\u00b2")  # a digit to str.isdigit, not to int()


def test_two_hosts_may_have_the_same_path_but_one_host_not_twice(tmp_path):
    img = f"file:{tmp_path}/a.img?size=8MiB"
    two = "".join(f'[[host]]\naddress = "10.0.0.{i}"\n[[host.drive]]\ntarget = "{img}"\n' for i in (2, 3))
    assert len(load_fleet(fleet_file(tmp_path, two)).drives) == 2
    twice = f'[[host]]\naddress = "10.0.0.2"\n[[host.drive]]\ntarget = "{img}"\nname = "a"\n[[host.drive]]\ntarget = "{img}"\nname = "b"\n'
    with pytest.raises(IolabError, match="same drive"):
        load_fleet(fleet_file(tmp_path, twice))


def test_a_hosts_drive_may_be_an_nbd_export_named_by_its_socket(tmp_path):
    """nbdkit disks a host's fio reaches (fio's nbd engine), e.g. a delayed disk standing for a
    drive whose time is spent waiting on the device; each gets its own default name."""
    text = '[[host]]\naddress = "10.0.0.2"\n' + "".join(
        f'[[host.drive]]\ntarget = "nbd+unix:///?socket=/run/h0d{j}.sock&size=64MiB"\n' for j in range(2)
    )
    drives = load_fleet(fleet_file(tmp_path, text)).drives
    assert [d.target for d in drives] == [f"nbd+unix:///?socket=/run/h0d{j}.sock&size=64MiB" for j in range(2)]
    assert len({d.name for d in drives}) == 2 and all(d.name.startswith("10.0.0.2_") for d in drives)
    assert "h0d1.sock" in drives[1].name


# --- the document and JUnit ---------------------------------------------------------------


def judged_fleet(tmp_path: Path, more_rows: tuple[dict, ...] = ()) -> tuple[dict, SpecSheet]:
    """A fleet document of 7 drives, one slow, judged against a spec sheet of one criterion
    (min 35,000 IOPS), and the sheet; `more_rows`: drives that did not complete."""
    values = {f"d{i}": 40_000.0 + 10 * i for i in range(6)} | {"slow": 30_000.0}
    ds = drives(values)
    rows = [
        {"name": n, "target": f"sim:x?seed={i}", "where": "local", "labels": {}, "state": "complete", "error": None}
        for i, n in enumerate(values)
    ] + list(more_rows)
    (tmp_path / "s.toml").write_text(f'[[criterion]]\nfigure = "{W}"\nmin = 35000\n')
    sheet = load_spec_sheet(tmp_path / "s.toml")
    verdicts = {d.name: judge(d.name, d.figures, {W: "IOPS"}, sheet) for d in ds}
    fleet = {"dir": "x", "name": "f", "test": "iops", "state": "complete", "started": "", "ended": ""}
    return document(fleet, rows, ds, distributions(ds), (3.5, 1.0), sheet, verdicts), sheet


def test_document_and_junit_fail_the_drive_that_fails(tmp_path):
    doc, sheet = judged_fleet(
        tmp_path,
        (
            {
                "name": "dead",
                "target": "sim:x",
                "where": "local",
                "labels": {},
                "state": "failed",
                "error": "boom",
                "exit_code": 4,
            },
        ),
    )
    assert doc["summary"]["outlier_drives"] == ["slow"] and doc["summary"]["failing_criteria"] == 1
    assert doc["exit_code"] == 4  # the dead drive's own status comes first
    suite = ET.fromstring(junit_xml(doc)).find("testsuite")
    failed = {(c.get("classname"), c.get("name")) for c in suite.iter("testcase") if c.find("failure") is not None}
    assert failed == {("fleet.slow", "outlier rule"), ("fleet.slow", f"criterion: {W}")}
    # the dead drive could not be judged: an <error>, which a CI system counts apart from failures
    erred = {(c.get("classname"), c.get("name")) for c in suite.iter("testcase") if c.find("error") is not None}
    assert erred == {("fleet.dead", "run")} and suite.get("failures") == "2" and suite.get("errors") == "1"
    # the dead drive has every check's case, skipped (it was not measured), the criterion's too
    dead = {c.get("name"): c for c in suite.iter("testcase") if c.get("classname") == "fleet.dead"}
    assert set(dead) == {"run", "outlier rule", "steady state", f"criterion: {sheet.criteria[0].name}"}
    assert all(dead[n].find("skipped") is not None for n in dead if n != "run")
    s = strip(doc["figures"][0])
    assert s[0] == "×" and "┃" in s and len(s) == 48


def test_a_few_parts_per_million_are_no_stray_drive():
    # a link-bound figure as six simulated drives measured it: the MAD rule alone flags two
    values = dict(zip("abcdef", (524.511825, 524.511641, 524.514926, 524.514291, 524.511646, 524.512133)))
    assert distribution(W, drives(values)).outliers == ()
    assert sorted(o.drive for o in distribution(W, drives(values), min_pct=0).outliers) == ["c", "d"]


def test_the_pool_percentile_is_that_of_all_ios_together_not_a_mean():
    # the merge figures/fleetpool.py pools the drives with
    from iolab.core.results import Histogram

    rng = random.Random(5)
    fast = [round(rng.expovariate(1 / 100)) + 1 for _ in range(20_000)]  # µs, on 1 µs bins
    slow = [round(rng.expovariate(1 / 400)) + 1 for _ in range(10_000)]

    def hist(xs):
        counts = Counter(xs)
        vals = sorted(counts)
        return Histogram(tuple(float(v) for v in vals), tuple(counts[v] for v in vals), float(max(xs)))

    merged = Histogram.merge([hist(fast), hist(slow)])
    pooled = sorted(fast + slow)
    exact = pooled[int(0.99 * len(pooled)) - 1]  # the smallest value with 99 % of the IOs at or below it
    assert merged.total == 30_000 and merged.percentile(99) == exact
    mean_of_p99 = (hist(fast).percentile(99) + hist(slow).percentile(99)) / 2
    assert abs(mean_of_p99 - exact) > 0.1 * exact  # averaging the drives' percentiles would be wrong


def _record(name: str, value: float, model: str = "M1", firmware: str = "F1") -> dict:
    fig = {"name": W, "unit": "IOPS", "direction": "higher-is-better", "kind": "value", "value": value}
    return {
        "run_id": name,
        "test": "iops",
        "profile": {},
        "state": "complete",  # a run record always says how the run ended (outcome_schema)
        "steady_state": "reached",
        "figures": [fig],
        "target": {"model": model, "firmware": firmware},
    }


def test_groups_are_compared_with_the_drive_to_drive_spread_as_noise():
    from iolab.automation.fleetgroups import compare_groups

    a = {f"a{i}": 40_000 + 200 * i for i in range(4)}
    labels = {n: {"firmware": "A"} for n in a}
    b_close = {f"b{i}": 39_900 + 200 * i for i in range(4)}  # 0.25 % lower: within the spread
    b_slow = {f"b{i}": 30_000 + 200 * i for i in range(4)}  # 25 % lower
    for b, want in ((b_close, "within-tolerance"), (b_slow, "regression")):
        recs = {n: _record(n, v) for n, v in {**a, **b}.items()}
        g = compare_groups(recs, {**labels, **{n: {"firmware": "B"} for n in b}}, "firmware")
        (c,) = g["comparisons"]
        (f,) = c["figures"]
        assert (c["group"], c["baseline"], f["verdict"]) == ("B", "A", want)
        assert "Welch" in f["method"]  # the drives as repeats
    # a change of 3 % within a 10 % drive-to-drive spread is noise, above the tolerance or not
    wide_a = {f"a{i}": v for i, v in enumerate((36_000, 44_000, 40_000, 38_000, 42_000))}
    wide_b = {f"b{i}": v * 0.97 for i, v in enumerate((36_000, 44_000, 40_000, 38_000, 42_000))}
    recs = {n: _record(n, v) for n, v in {**wide_a, **wide_b}.items()}
    lab = {n: {"firmware": n[0]} for n in recs}
    (c,) = compare_groups(recs, lab, "firmware", tolerance=0.01)["comparisons"]
    assert c["figures"][0]["verdict"] == "within-noise"
    with pytest.raises(IolabError, match="needs two groups"):
        compare_groups(recs, {n: {"firmware": "A"} for n in recs}, "firmware")


def test_a_group_that_mixes_models_or_firmware_is_named():
    from iolab.automation.fleetgroups import mixed_warnings

    recs = {"d1": _record("d1", 1), "d2": _record("d2", 1), "d3": _record("d3", 1, firmware="F2"), "x": None}
    labels = {n: {"g": "A"} for n in recs}
    (w,) = mixed_warnings(recs, labels, "g")
    assert "firmware" in w and "d3 (F2)" in w and "d1" not in w
    assert mixed_warnings({"d1": _record("d1", 1), "d2": _record("d2", 1)}, labels, None) == []


def test_one_drive_by_wwid_through_two_hosts_is_refused(tmp_path):
    from iolab.api.fleetident import refuse_duplicates

    f = load_fleet(
        fleet_file(
            tmp_path,
            "".join(
                f'[[host]]\naddress = "10.0.0.{i}"\n[[host.drive]]\ntarget = "file:{tmp_path}/a.img?size=8MiB"\n'
                for i in (2, 3)
            )
            + '[[drive]]\ntarget = "sim:enterprise-sas"\n',
        )
    )
    # what two ssh hosts' lsblk said: one multipath drive seen from both
    ids = {"10.0.0.2_a.img": "wwid eui.0025", "10.0.0.3_a.img": "wwid eui.0025"}
    with pytest.raises(IolabError, match="one drive \\(wwid eui.0025\\)"):
        refuse_duplicates(f, lambda d: ids.get(d.name))
    ids["10.0.0.3_a.img"] = "wwid eui.0026"
    assert refuse_duplicates(f, lambda d: ids.get(d.name)) == ["enterprise-sas"]


def test_a_file_to_be_made_reached_through_a_symlinked_directory_is_one_drive(tmp_path):
    from iolab.api.fleetident import refuse_duplicates

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    two = "".join(
        f'[[drive]]\ntarget = "file:{tmp_path}/{d}/a.img?size=8MiB"\nname = "{d}"\n' for d in ("real", "link")
    )
    with pytest.raises(IolabError, match="are one drive \\(file to be made on this machine at"):
        refuse_duplicates(load_fleet(fleet_file(tmp_path, two)))
    # a simulated drive has an identity too (its spec): the note on drives not checked leaves it out
    sims = '[[drive]]\ntarget = "sim:enterprise-sas?seed=1"\nname = "s1"\n[[drive]]\ntarget = "sim:enterprise-sas"\n'
    assert refuse_duplicates(load_fleet(fleet_file(tmp_path, sims))) == []


def test_a_drives_identity_in_the_fleet_is_the_one_resume_checks_said_in_one_line(tmp_path):
    """One reader (run/identity.py): the fleet's key is built on the record a run stores, so every
    name of one file (a hard link, a symlink) gives the dev and inode resume compares."""
    from iolab.api.fleetfile import sim_key
    from iolab.run.identity import drive_key, identity_key, target_identity

    img = tmp_path / "a.img"
    img.write_bytes(b"x")
    (tmp_path / "hard.img").hardlink_to(img)
    (tmp_path / "link.img").symlink_to(img)
    names = [parse_target(f"file:{tmp_path}/{n}?size=1MiB") for n in ("a.img", "hard.img", "link.img")]
    ident = target_identity(names[0])
    said = f"file on this machine, filesystem device {ident['dev']} inode {ident['inode']}"
    assert {drive_key(t) for t in names} == {said} and ident["inode"] == img.stat().st_ino
    # the same record read on a host over SSH (engines/hosts.read_identity_over_ssh) names the host
    assert identity_key({"read_on": "u@h", **ident}, "10.0.0.2") == said.replace("this machine", "10.0.0.2")
    assert identity_key({"kind": "block", "path": "/dev/sdb", "not_read": "lsblk: not found"}, "10.0.0.2") is None
    assert identity_key({"kind": "block", "wwid": "eui.0025", "serial": "S1"}, "10.0.0.2") == "wwid eui.0025"
    # a file not made yet, through a symlinked directory: its real path, as stored for resume
    (tmp_path / "real").mkdir()
    (tmp_path / "dir").symlink_to(tmp_path / "real")
    new = parse_target(f"file:{tmp_path}/dir/new.img?size=1MiB")
    assert target_identity(new) == {"kind": "file", "path": f"{tmp_path}/real/new.img", "missing": True}
    assert drive_key(new) == f"file to be made on this machine at {tmp_path}/real/new.img"
    nbd = parse_target("nbd://storage.example/disk1?size=1GiB")
    assert drive_key(nbd) == "NBD export nbd://storage.example:10809/disk1"
    sims = [parse_target(s) for s in ("sim:enterprise-sas?seed=0&user_gb=.250", "sim:enterprise-sas?user_gb=0.25")]
    assert drive_key(sims[0]) == drive_key(sims[1]) == f"simulated {sim_key(sims[1])}"


def test_a_file_whose_stat_fails_could_not_be_read_and_is_no_file_to_be_made(tmp_path):
    """A host's path of this machine (a hosts file's `target`, read as given) that stat refuses for
    another reason than its absence (here a symlink loop): its identity could not be read; it was
    'missing', keyed as a file to be made at its real path, as if the run would create it."""
    import errno

    from iolab.run.identity import drive_key, target_identity

    (tmp_path / "a.img").symlink_to(tmp_path / "b.img")
    (tmp_path / "b.img").symlink_to(tmp_path / "a.img")
    t = Target("file", f"file:{tmp_path}/a.img", f"{tmp_path}/a.img", 1 << 20)
    ident = target_identity(t)
    assert ident["not_read"] == f"could not be read: {os.strerror(errno.ELOOP)}" and "missing" not in ident
    assert drive_key(t) is None  # the fleet names it among the drives whose identity was not read


def test_an_extreme_is_shown_but_not_judged():
    meta = {"MRT": {"unit": "µs", "direction": "lower-is-better", "kind": "extreme"}}
    ds = [DriveFigures(f"d{i}", {}, "complete", {"MRT": 1000.0 + i}, meta) for i in range(8)]
    ds.append(DriveFigures("spike", {}, "complete", {"MRT": 50_000.0}, meta))
    d = distribution("MRT", ds)
    assert not d.judged and d.outliers == () and d.maximum == 50_000.0


def test_the_fleet_reads_each_drives_record_as_its_run_wrote_it_unless_the_run_changed_since(tmp_path):
    """A complete drive's record comes from its own --json document (out.json) while its run's
    manifest still says the same id, state and end, and the document is the one the coordinator
    read as the drive ended; else it is rebuilt from the run (here: no results.db, so nothing can
    be rebuilt and the drive has no record)."""
    import json

    from iolab.api.fleet import FleetState, Member, read_outcome
    from iolab.api.fleetreport import records

    def drive(name: str, ended_in_manifest: str) -> Member:
        run = tmp_path / "runs" / name
        run.mkdir(parents=True)
        ident = {"run_id": name, "state": "complete", "ended": "2026-11-29T06:54:31+00:00"}
        (run / "manifest.json").write_text(json.dumps({**ident, "ended": ended_in_manifest}))
        (tmp_path / "fleet" / "drives" / name).mkdir(parents=True)
        rec = {**ident, "path": str(run), "figures": {"IOPS": 1.0}, "reports": ["/x/report.html"]}
        out = tmp_path / "fleet" / "drives" / name / "out.json"
        out.write_text(json.dumps({"runs": [rec]}))
        m = Member(name, "sim:x", "local", state="running")
        read_outcome(m, out, 0)  # as the coordinator reads it when the drive ends
        assert m.state == "complete" and m.run_dir == str(run) and m.out_sha256
        return m

    same = drive("a", "2026-11-29T06:54:31+00:00")
    resumed = drive("b", "2026-11-29T07:10:00+00:00")  # the run ended again after its document
    edited = drive("c", "2026-11-29T06:54:31+00:00")
    out_c = tmp_path / "fleet" / "drives" / "c" / "out.json"
    out_c.write_text(out_c.read_text().replace('"IOPS": 1.0', '"IOPS": 1e300'))  # a hand's edit since
    state = FleetState(tmp_path / "fleet", "iops", "f", [], [same, resumed, edited])
    got = records(state)
    assert got["a"] is not None and got["a"]["figures"] == {"IOPS": 1.0} and got["a"]["reports"] == []
    assert got["b"] is None and got["c"] is None


def _run_record(steady: str, compliant: bool = True, failed: tuple[str, ...] = ()) -> dict:
    return {
        "figures": [{"name": W, "unit": "IOPS", "direction": "higher-is-better", "value": 1000.0}],
        "compliant": compliant,
        "noncompliance": [] if compliant else ["quick profile", "1 s per cell instead of 60 s"],
        "steady_state": steady,
        "audit": {"passed": not failed, "failed": list(failed)},
    }


def test_each_drives_conditions_come_from_its_own_run_and_every_caveat_names_its_drives():
    recs = {
        "a": _run_record("reached"),
        "b": _run_record("not-reached"),
        "c": _run_record("not-evaluated", compliant=False),
        "d": _run_record("reached", failed=("steady-evidence",)),
    }
    drives = [drive_figures(n, {}, "complete", r) for n, r in recs.items()]
    drives.append(drive_figures("e", {}, "failed", None))
    assert conditions_of(recs["d"]).audit_failed == ("steady-evidence",) and conditions_of(None).compliant is None
    rows = [{"name": d.name, "state": d.state, "where": "local", "labels": {}} for d in drives]
    doc = document({"name": "f"}, rows, drives, distributions(drives[:4]), (3.5, 5.0), None, {})
    by = {r["name"]: r for r in doc["drives"]}
    assert [conditions_text(by[n]) for n in "abcde"] == [
        "reached",
        "NOT reached",
        "not evaluated, non-compliant",
        "reached, audit failed",
        "—",
    ]
    assert doc["caveats"] == [
        "NON-COMPLIANT: 1 of 4 drives' runs (c): quick profile; 1 s per cell instead of 60 s",
        "STEADY STATE NOT ACHIEVED on 1 of 4 drives (b): their figures are from their last rounds, "
        "not from a steady-state window",
        "STEADY STATE NOT EVALUATED on 1 of 4 drives (c): their figures are from their last rounds, "
        "not from a steady-state window",
        "AUDIT FAILED on 1 drive: d (steady-evidence)",
    ]
    # a fleet of steady, compliant drives has nothing to say, and many names are counted, not listed
    assert caveats([by["a"]]) == []
    many = [{**by["b"], "name": f"n{i}"} for i in range(12)]
    assert caveats(many) == [
        "STEADY STATE NOT ACHIEVED on 12 of 12 drives (n0, n1, n2, n3, n4, n5, n6, n7 and 4 more): "
        "their figures are from their last rounds, not from a steady-state window"
    ]


@pytest.mark.parametrize("code", [130, 143, None])
def test_a_drive_stopped_while_writing_its_report_after_its_run_was_complete_is_complete(tmp_path, code):
    """Ctrl-C (130) or SIGTERM (143) that reaches a drive after its run was complete, while it wrote
    its report, leaves every measurement stored (the run's own state says complete): the drive's row
    is complete and its figures count, not 'failed' (and `iolab resume FLEET` must not try to resume
    it, which is refused as 'nothing to resume'). None: the coordinator died and resume reads the
    document's own exit status."""
    from iolab.api.fleet import Member, read_outcome

    out = tmp_path / "out.json"
    run = {"path": str(tmp_path / "run"), "state": "complete", "error": None}
    out.write_text(json.dumps({"schema": "iolab-outcome", "exit_code": 143 if code is None else code, "runs": [run]}))
    m = Member("d1", "sim:enterprise-sas?seed=1", "local", state="running")
    read_outcome(m, out, code)
    assert m.state == "complete" and m.run_dir == run["path"]
    failed = tmp_path / "failed.json"
    failed.write_text(json.dumps({"exit_code": 4, "runs": [{**run, "state": "failed", "error": "fio died"}]}))
    read_outcome(m, failed, 4)
    assert m.state == "failed" and m.error == "fio died"


def test_the_fleets_exit_status_gives_each_drive_its_own_or_its_signals_code_never_a_bug():
    from iolab.pages.fleet_junit import exit_code

    def doc(*rows: tuple[str, object]) -> dict:
        drives = [{"name": f"d{i}", "state": s, "exit_code": c} for i, (s, c) in enumerate(rows)]
        return {"drives": drives, "summary": {"failing_criteria": 0, "outlier_drives": []}}

    assert exit_code(doc(("complete", 0), ("running", None), ("pending", None))) == 0  # shown while it runs
    assert exit_code(doc(("complete", 0), ("failed", -9))) == 137  # kill -9 of a drive's run
    assert exit_code(doc(("failed", 4))) == 4
    assert exit_code(doc(("unreadable", None))) == 2  # a run iolab cannot read, as `show` gives
    assert exit_code(doc(("complete", 6), ("complete", 0))) == 6


def test_a_fleet_whose_state_cannot_be_read_is_said_not_silently_left_out(tmp_path):
    from iolab.api.fleet import list_fleets

    (tmp_path / "fleets" / "20261129-000000-iops-x").mkdir(parents=True)
    (tmp_path / "fleets" / "20261129-000000-iops-x" / "fleet.json").write_text("{bad")
    said: list[str] = []
    assert list_fleets(tmp_path, said) == [] and len(said) == 1 and "not valid JSON" in said[0]


def test_the_fleet_document_knows_none_of_its_views():
    """pages/fleet.py builds the document alone; its terminal view (rich) and its JUnit XML and
    exit status are drawn from it in modules of their own (fleet_terminal.py, fleet_junit.py),
    which the document module never imports back but for the exit status it records."""
    import ast
    import inspect

    import iolab.pages.fleet as doc_module

    imported = set()
    for node in ast.walk(ast.parse(inspect.getsource(doc_module))):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert not {m for m in imported if m.startswith(("rich", "xml", "iolab.pages.fleet_terminal"))}, imported


def test_junit_names_each_steady_state_in_words():
    # a fleet of a test that tracks no steady state (QoS) read "steady state not-applicable"
    from iolab.pages.fleet_junit import _steady_case

    body, msg = _steady_case({"steady_state": "not-applicable", "exit_code": 0})
    assert msg == "steady state not applicable (the test tracks none)" and "<skipped" in body
    assert _steady_case({"steady_state": "reached", "exit_code": 0}) == ("", "steady state reached")
    assert "NOT reached" in _steady_case({"steady_state": "not-reached", "exit_code": 0})[1]


def test_an_ssh_hosts_devices_are_named_by_the_model_and_serial_they_report_there(tmp_path, monkeypatch):
    """Two hosts' /dev/nvme0n1 were '10.0.0.2_nvme0n1' and '10.0.0.3_nvme0n1', names that stay with
    the slot: a drive moved to another host took its neighbour's name and history. A device that
    reports a serial (read there, as the fleet reads its identity) is named by model and serial;
    one that does not keeps its node's name, and a name the file gives is kept."""
    from iolab.api.fleetident import serial_named
    from iolab.targets.model import DeviceFacts

    # each host's device as its run reads it (its size over SSH): no host answers here
    monkeypatch.setattr(
        fleetfile,
        "drive_target",
        lambda s, h: Target(kind="block", spec=s, path=s, capacity=1 << 30, facts=DeviceFacts()),
    )
    text = "".join(
        f'[[host]]\naddress = "10.0.0.{i}"\nssh = "root@10.0.0.{i}"\n[[host.drive]]\ntarget = "/dev/nvme0n1"\n'
        f'[[host.drive]]\ntarget = "/dev/nvme1n1"\n{extra}'
        for i, extra in ((2, ""), (3, '[[host.drive]]\ntarget = "/dev/sdb"\nname = "kept"\n'))
    )
    fleet = load_fleet(fleet_file(tmp_path, text))
    assert [d.name for d in fleet.drives] == [
        "10.0.0.2_nvme0n1", "10.0.0.2_nvme1n1", "10.0.0.3_nvme0n1", "10.0.0.3_nvme1n1", "kept"
    ]  # fmt: skip
    told = {
        ("10.0.0.2", "/dev/nvme0n1"): {"model": "Example NVMe 3.84TB", "serial": "S5XNA0R123"},
        ("10.0.0.3", "/dev/nvme0n1"): {"model": "Example NVMe 3.84TB", "serial": "S5XNA0R124"},
        ("10.0.0.3", "/dev/nvme1n1"): {"model": "Example NVMe 3.84TB", "serial": None},  # says none
        ("10.0.0.3", "/dev/sdb"): {"model": "M", "serial": "never-read"},
    }
    named = serial_named(fleet, lambda d: told.get((d.host.address, d.target)))
    assert [d.name for d in named.drives] == [
        "Example_NVMe_3.84TB_S5XNA0R123",
        "10.0.0.2_nvme1n1",  # no serial read (not answered): its node's name, after its host's (both hosts have one)
        "Example_NVMe_3.84TB_S5XNA0R124",
        "10.0.0.3_nvme1n1",
        "kept",
    ]
    # a long model is cut, never the serial: the name stays within the 64 characters a name may hold
    assert fleetfile.serial_name("M" * 80, "SN-1 ") == "M" * 59 + "_SN-1" and fleetfile.serial_name("X", "") is None
