"""One rule for a share, wherever a user writes one: a bare number is a percentage, as every
iolab option (`--max-regression 5`, `--active-range 75`), check's tolerances file and fio's
rwmixread=70 take it. `--set tolerance=0.05` was 5 % while `--max-regression 0.05` was 0.05 %:
a gate 100× stricter or looser than meant, with no word. A run stored before the rule is still
read as it ran."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import SMALL_SIM, iolab, killed_at, quick_sim_run

pytestmark = pytest.mark.integration


def planned_share(name: str, value: str, test: str = "xsr") -> str:
    p = iolab("plan", test, "--quick", "--set", f"{name}={value}")
    assert p.returncode == 0, p.stdout + p.stderr
    m = re.search(rf"{name}: (\S+ %) \(set with --set\)", " ".join(p.stdout.split()))
    assert m, p.stdout
    return m.group(1)


def test_plan_prints_a_bare_share_as_the_percentage_it_is():
    assert planned_share("recovery_tolerance", "20") == "20 %"
    assert planned_share("recovery_tolerance", "20%") == "20 %"
    assert planned_share("recovery_tolerance", "0.2%") == "0.2 %"  # from above 0 to 1: only with its %
    assert planned_share("tolerance", "1.5", "latency-demand") == "1.5 %"  # was refused: "give a fraction …"


def test_a_percentage_from_above_0_to_1_without_its_percent_sign_is_refused(tmp_path):
    """--set min_gain=0.002, written as a fraction for 0.2 %, was read as 0.002 % (a bare number is
    a percentage): a search stopped 100 times later than meant, with no word. One rule for every
    percentage of every test: from above 0 to 1 it is written with its %; 0 and a bare 2 stand."""
    runs = tmp_path / "runs"
    for test, given, says in (
        ("max-iops", "min_gain=0.002", "write 0.002% for 0.002 %, or 0.2% for the fraction 0.002"),
        ("latency-demand", "tolerance=1", "write 1% for 1 %, or 100% for the fraction 1"),
        ("entropy", "entropies=0,0.5,1", "write 0.5% for 0.5 %, or 50% for the fraction 0.5"),
    ):
        p = iolab("run", test, "--quick", "--no-report", "-t", SMALL_SIM, "--set", given, "--runs-dir", str(runs))
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "Traceback" not in said and says in said, said
        assert said.startswith(f"iolab: --set {given.replace('=', '=' + chr(39))}' (test {test}): "), said
        assert said.endswith("Nothing was run or written.") and said.count("iolab:") == 1, said
    assert not runs.exists()
    for given, shown in (("min_gain=0.2%", "0.2 %"), ("min_gain=2", "2 %"), ("min_gain=0", "0 %")):
        assert planned_share(*given.split("="), "max-iops") == shown
    listed = iolab("plan", "entropy", "--quick", "--set", "entropies=0%,50%,100%")  # a list, each with its %
    assert listed.returncode == 0 and "entropies: 0, 50, 100 (set with --set)" in " ".join(listed.stdout.split())
    listed = " ".join(iolab("tests", "max-iops").stdout.split())  # the unit, said where it is listed
    assert "less than this [a percentage: 5 or 5%; from above 0 to 1 only with its %, e.g. 0.5%]" in listed


def test_check_and_set_read_a_bare_5_alike(tmp_path):
    runs = tmp_path / "runs"
    old, new = quick_sim_run(runs), quick_sim_run(runs)
    p = iolab("check", str(new), "--baseline", str(old), "--max-regression", "5", "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    judged = [f for f in json.loads(p.stdout)["check"]["figures"] if f.get("tolerance_pct") is not None]
    assert judged and {f["tolerance_pct"] for f in judged} == {5.0}
    name = judged[0]["name"]
    tol = tmp_path / "tol.toml"
    tol.write_text(f'[tolerances]\n"{name}" = 5\n')
    p = iolab("check", str(new), "--baseline", str(old), "--tolerances", str(tol), "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    [f] = [f for f in json.loads(p.stdout)["check"]["figures"] if f["name"] == name]
    assert f["tolerance_pct"] == 5.0
    assert planned_share("tolerance", "5", "latency-demand") == "5 %"  # the same 5, the same 5 %


def test_a_share_is_stored_with_its_percent_and_an_old_bare_fraction_is_read_as_it_ran(tmp_path):
    runs = tmp_path / "runs"
    p = iolab("run", "xsr", "--quick", "-t", SMALL_SIM, "--set", "recovery_tolerance=20", "--no-report",
              "--runs-dir", str(runs))  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = list(runs.iterdir())
    m = json.loads((run / "manifest.json").read_text())
    assert (
        m["profile"]["settings"] == [["recovery_tolerance", "20%"]] and m["plan"]["values"]["recovery_tolerance"] == 0.2
    )
    # as a run stored before the rule, and before typed values, kept it: its 0.2 was 20 %
    m["profile"]["settings"] = [["recovery_tolerance", "0.2"]]
    del m["plan"]["values"]
    (run / "manifest.json").write_text(json.dumps(m))
    p = iolab("report", str(run), "--out", str(tmp_path / "report"))
    assert p.returncode == 0, p.stdout + p.stderr
    [html] = (tmp_path / "report").glob("*.html")
    text = " ".join(html.read_text().split())
    # its report's recovery time read its --set text again: a bare 0.2 now says 0.2 %
    assert "TP ≥ 80 % of group 1" in text and "TP ≥ 99.8 %" not in text, re.findall(r".{0,60}TP ≥.{0,60}", text)


def test_a_run_stopped_before_the_rule_resumes_with_the_share_it_began_with(tmp_path):
    """Resume builds the plan again from the stored --set text: an old run's bare 0.2 (20 %) read
    as 0.2 % is another plan, and the run could not be resumed ("a different plan")."""
    runs = tmp_path / "runs"
    args = ["run", "xsr", "--quick", "-t", SMALL_SIM, "--set", "recovery_tolerance=20", "--no-report"]
    killed_at([*args, "--runs-dir", str(runs)], runs, "*/raw/group_2-r02-*")
    [run] = list(runs.iterdir())
    m = json.loads((run / "manifest.json").read_text())
    assert m["state"] != "complete" and m["profile"]["settings"] == [["recovery_tolerance", "20%"]]
    m["profile"]["settings"] = [["recovery_tolerance", "0.2"]]  # as the run stored before the rule
    (run / "manifest.json").write_text(json.dumps(m))
    p = iolab("resume", str(run), "--no-report")
    assert p.returncode == 0, p.stdout + p.stderr
    m = json.loads((run / "manifest.json").read_text())
    assert m["state"] == "complete" and m["plan"]["values"]["recovery_tolerance"] == 0.2


def test_trace_analyze_reads_a_bare_threshold_as_a_percentage(tmp_path):
    """--threshold 0.5 was 50 % (bare numbers below 1 were fractions) and --threshold 1 was 1 %;
    a bare number from above 0 to 1 is now refused (test_an_options_percentage_up_to_1_…)."""
    from .test_trace_analyze_refusals import spc_trace

    spc_trace(tmp_path / "t.spc")
    p = iolab("trace", "import", str(tmp_path / "t.spc"), "--format", "spc", "--out", str(tmp_path / "t.parquet"))
    assert p.returncode == 0, p.stdout + p.stderr
    for given, says in (("0.5%", "0.5 %"), ("50", "50 %"), ("1%", "1 %")):
        out = tmp_path / f"wl{given}"
        p = iolab("trace", "analyze", str(tmp_path / "t.parquet"), "--step", "1s", "--qd", "4", "--threshold", given,
                  "--out", str(out))  # fmt: skip
        assert p.returncode == 0, p.stdout + p.stderr
        assert f"dominant streams (≥ {says})" in " ".join(p.stdout.split()), p.stdout


def test_a_share_is_printed_with_the_digits_given_never_in_exponent_form(tmp_path):
    """Tolerances, gains and an outlier's distance were printed with Python's :g: a 0.00001 %
    tolerance as "1e-05 %", and XSR's 99.99999 % recovery level rounded to "100 %"."""

    def said(p) -> str:
        assert "Traceback" not in p.stderr, p.stderr
        return " ".join((p.stdout + p.stderr).split())

    demand = said(iolab("plan", "latency-demand", "--quick", "-t", SMALL_SIM, "--set", "tolerance=0.00001%"))
    assert "tolerance: 0.00001 % (set with --set)" in demand and "more than 0.00001 % below the demanded" in demand
    gain = said(iolab("plan", "max-iops", "--quick", "-t", SMALL_SIM, "--set", "min_gain=0.00001%"))
    assert "gaining less than 0.00001 % IOPS" in gain and "gained at least 0.00001 %" in gain
    for text in (demand, gain):
        assert "e-05" not in text, text

    runs = tmp_path / "runs"
    p = iolab("run", "xsr", "--quick", "-t", SMALL_SIM, "--set", "recovery_tolerance=0.00001%", "--no-report",
              "--runs-dir", str(runs))  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = list(runs.iterdir())
    figures = json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]["figures"]
    assert "Group 3 recovery to 99.99999 % of group 1 mean TP" in [f["name"] for f in figures], figures

    fleet = tmp_path / "fleet.toml"
    fleet.write_text(f'[fleet]\nname = "demo"\n[[drive]]\ntarget = "{SMALL_SIM}"\nname = "one"\n')
    p = iolab("run", "iops", "--quick", "--cell-time", "100ms", "--max-rounds", "2", "--no-report",
              "--fleet", str(fleet), "--runs-dir", str(tmp_path / "fleet-runs"))  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    [d] = list((tmp_path / "fleet-runs" / "fleets").iterdir())
    rule = said(iolab("fleet", str(d), "--outlier-k", "2.50", "--outlier-min-pct", "0.00001"))
    assert "with k = 2.5, and > 0.00001 % of the median" in rule, rule
    refused = said(iolab("fleet", str(d), "--outlier-min-pct", "-0.00001"))
    assert "--outlier-min-pct -0.00001: give a percentage from 0 to below 100." in refused, refused


def test_a_run_stored_before_the_rule_compares_with_one_since_by_the_share_it_ran(tmp_path):
    """compare and check refused an old run's recovery_tolerance '0.2' against a new run's '20%'
    as "settings differ", though both ran at 20 %; a share that differs is still refused."""
    runs = tmp_path / "runs"
    for _ in range(2):
        p = iolab("run", "xsr", "--quick", "-t", SMALL_SIM, "--set", "recovery_tolerance=20", "--no-report",
                  "--runs-dir", str(runs))  # fmt: skip
        assert p.returncode == 0, p.stdout + p.stderr
    old, new = sorted(runs.iterdir())

    def stored_as(text: str) -> None:  # as a run stored before the rule, and before typed values, kept it
        m = json.loads((old / "manifest.json").read_text())
        m["profile"]["settings"] = [["recovery_tolerance", text]]
        m["plan"].pop("values", None)
        (old / "manifest.json").write_text(json.dumps(m))

    stored_as("0.2")
    compared = iolab("compare", str(old), str(new), "--out", str(tmp_path / "cmp"))
    assert compared.returncode == 0, compared.stdout + compared.stderr
    checked = iolab("check", str(new), "--baseline", str(old), "--json")
    assert json.loads(checked.stdout)["check"]["differences"] == [], checked.stdout + checked.stderr
    stored_as("0.05")  # 5 %: another tolerance, another test
    for p in (
        iolab("compare", str(old), str(new), "--out", str(tmp_path / "cmp2")),
        iolab("check", str(new), "--baseline", str(old)),
    ):
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "Traceback" not in said, said
        assert re.search(r"setting recovery_tolerance: .* 5 % vs .* 20 %", said), said  # in one unit


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["plan", "iops", "--quick", "-t", SMALL_SIM, "--active-range", "0.5"], "--active-range 0.5"),
        (["check", "{d}/cand", "-b", "{d}/base", "--max-regression", "0.05"], "--max-regression 0.05"),
        (["trace", "analyze", "{d}/t.parquet", "-o", "{d}/out", "--threshold", "1"], "--threshold 1"),
    ],
)
def test_an_options_percentage_up_to_1_without_its_sign_is_refused_as_a_set_ones_is(tmp_path, args, option):
    """`--max-regression 0.05` was 0.05 % where a user thinking in fractions meant 5 % (a check 100
    times stricter), `--active-range 0.5` half a percent of the drive, `--threshold 1` 1 %: the rule
    of --set's percentages, one paragraph naming both readings, before anything is read or written."""
    p = iolab(*(a.format(d=tmp_path) for a in args))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in said, said
    value = option.split()[1]
    assert f"{option}: {value} without its unit reads as {value} %, but as a fraction it is" in said, said
    assert "Nothing was run or written." in said and list(tmp_path.iterdir()) == []


def test_a_tolerances_file_percentage_up_to_1_without_its_sign_is_refused(tmp_path):
    """A tolerances file's `ART = 0.05` was 0.05 %: refused as the option is; "0.5%" is read."""
    tol = tmp_path / "tol.toml"
    tol.write_text('[tolerances]\n"ART 0/100 4KiB" = 0.05\n')
    p = iolab("check", str(tmp_path / "cand"), "-b", str(tmp_path / "base"), "--tolerances", str(tol))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and f"{tol}: [tolerances] 'ART 0/100 4KiB' 0.05: 0.05 without its unit" in said, said
