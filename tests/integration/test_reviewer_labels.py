"""What a reviewer would publish says what its figures are: a figure of a scaled-down simulated
copy is never printed as the drive's (--quick runs a 0.537 GB copy of the 400 GB drive, and
what depends on the size, TBW, says it is the copy's), and a comparison's source line says
what each figure is over."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from .conftest import iolab
from .test_rwsw import workload  # noqa: F401  (the module-scoped capture analysed into wl/)

pytestmark = pytest.mark.integration


def flat(text: str) -> str:
    return " ".join(text.split())


def test_tbw_of_a_quick_copy_says_it_is_the_copys_wherever_it_is_printed(tmp_path):
    # the QoS run on sim:enterprise-sas --quick printed "TBW 8.1 TB at 30,000 P/E cycles
    # (preset)" for a 400 GB drive rated 30,000 cycles: the TBW of its 0.537 GB copy
    runs = tmp_path / "runs"
    small = ("--set", "rounds=2", "--cell-time", "100ms")
    p = iolab("run", "qos", "--quick", *small, "-t", "sim:enterprise-sas", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    of = "of the 0.537 GB copy of sim:enterprise-sas the run simulated, not of the drive itself"
    assert re.search(r"TBW [\d,.]+ TB at 30,000 P/E cycles \(preset\), " + re.escape(of), flat(p.stdout)), p.stdout
    [run] = list(runs.iterdir())
    record = json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]["endurance"]
    assert record["basis"].endswith(f"; TBW is {of}"), record
    page = flat(unescape(re.sub(r"<[^>]+>", " ", (run / "report" / f"{run.name}.html").read_text())))
    assert re.search(r"TBW = flash capacity × P/E ÷ WAF [\d,.]+ TB " + re.escape(of), page), page
    # the Test Parameters say what pe_cycles 0 means beside the Endurance page's 30,000 (preset)
    assert re.search(r"pe_ ?cycles 0: the drive's own, where it states one \(default\)", page), page
    assert "rated P/E cycles 30,000 (source: preset)" in page, page


def test_tbw_of_the_drive_itself_names_no_copy(tmp_path):
    # a simulated drive sized by its own target is the drive: its TBW is its own
    runs = tmp_path / "runs"
    small = ("--set", "rounds=2", "--set", "precondition_time=5s", "--set", "measured=200ms", "--set", "warmup=100ms")
    p = iolab("run", "qos", *small, "-t", "sim:enterprise-sas?user_gb=0.25", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"TBW [\d,.]+ TB at 30,000 P/E cycles \(preset\);", flat(p.stdout)), p.stdout
    assert "copy" not in flat(p.stdout).split("endurance:")[1], p.stdout


def test_compare_of_characterisation_runs_does_not_call_every_figure_a_window_mean(tmp_path):
    # compare of two QoS runs said "Source: each run's results.db (cells, mean over its own
    # measurement window)" under "write: median round IOPS" (the median of all 10 rounds, not the
    # 5-round window's mean) and "worst round maximum latency"
    runs = tmp_path / "runs"
    small = ("--set", "rounds=6", "--cell-time", "100ms", "--no-report", "--runs-dir", str(runs))
    for target in ("sim:enterprise-sas", "sim:client-nvme-slc"):
        p = iolab("run", "qos", "--quick", *small, "-t", target)
        assert p.returncode == 0, p.stdout + p.stderr
    out = tmp_path / "cmp"
    p = iolab("compare", *sorted(str(r) for r in runs.iterdir()), "--out", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    [html] = list(out.glob("*.html"))
    page = flat(unescape(re.sub(r"<[^>]+>", " ", html.read_text())))
    assert "write: median round IOPS" in page, page
    assert "mean over its own measurement window" not in page, page
    assert "each figure as that run's own `iolab show` gives it" in page, page


def test_fleet_strip_of_drives_that_print_the_same_shows_no_spread(tmp_path):
    # five simulated drives' 1 MiB read IOPS, bound by the host link, are 524.5 on every drive
    # (to 5 ppm): the strip spread them over its whole width, "·  ·  ┃  ·  ·", beside
    # "±0.00 %", min 524.5 and max 524.5, as if they differed as much as any other figure's
    f = tmp_path / "fleet.toml"
    f.write_text('[fleet]\nparallel = 2\n[[drive]]\ntarget = "sim:enterprise-sas?seed={i}"\ncount = 5\nname = "s{i}"\n')
    quick = ("--quick", "--cell-time", "100ms", "--max-rounds", "2", "--no-report")
    p = iolab("run", "iops", *quick, "--fleet", str(f), "--runs-dir", str(tmp_path / "runs"), timeout=600)
    assert p.returncode in (0, 7), p.stdout + p.stderr
    [row] = [line for line in p.stdout.splitlines() if line.startswith("│ RND 1024KiB R/W 100/0 IOPS")]
    cells = [c.strip() for c in row.split("│")]
    low, high, strip = cells[5], cells[6], row.split("│")[7]
    assert low == high == "524.5", row
    assert sum(c != " " for c in strip) == 1 and strip.strip() == "┃", row


def test_tests_help_says_what_pe_cycles_0_does_on_a_drive_that_states_its_rating():
    # "pe_cycles ... (0: not given, TBW is not computed)", yet every quick QoS run on the
    # default simulated drive left it at 0 and printed "TBW 8.1 TB at 30,000 P/E cycles (preset)"
    p = iolab("tests", "qos")
    assert p.returncode == 0, p.stderr
    text = flat(p.stdout)
    assert "(0: not given, TBW is not computed)" not in text, text
    for what, figure in (("rated P/E cycles of the flash", "TBW"), ("warranty period in years", "DWPD")):
        said = f"{what}, for {figure} (0: the drive's own, as a simulated preset states it; where neither gives one, "
        assert said + f"{figure} is not computed) (default 0: the drive's own, where it states one)" in text, text


def test_multi_wsat_figures_are_not_called_steady_state_on_a_run_that_did_not_reach_it(workload, tmp_path):
    # a quick Multi-WSAT stops at its 30-round limit, "steady state NOT reached", and its key
    # figures were printed as "IOPS (steady state) 15,061" in run, show, compare and the summary
    runs = tmp_path / "runs"
    target = "sim:enterprise-sas?user_gb=1"
    p = iolab("run", "multi-wsat", "-w", str(workload / "wl"), "--quick", "--cell-time", "200ms", "-t", target,
              "--runs-dir", str(runs))  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert "steady state NOT reached" in flat(p.stdout), p.stdout
    key = flat(p.stdout).split("key figures")[1]
    assert "(steady state)" not in key and re.search(r"IOPS \(composite\) │ [\d,]+ \[a\] │ IOPS", key), key
    [run] = list(runs.iterdir())
    names = [f["name"] for f in json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]["figures"]]
    assert names[:2] == ["IOPS (composite)", "MB/s (composite)"], names


def test_streams_wsat_page_does_not_title_a_stream_not_steady_as_at_steady_state(workload, tmp_path):
    # in 100 ms cells the write stream ends at its 30-round limit, "NOT ACHIEVED" in the page's
    # table, which was titled "IOPS per stream at steady state", its chart "(steady-state window)"
    runs = tmp_path / "runs"
    p = iolab("run", "streams-wsat", "-w", str(workload / "wl"), "--quick", "--cell-time", "100ms", "--runs-dir", str(runs))  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = list(runs.iterdir())
    page = flat(unescape(re.sub(r"<[^>]+>", " ", (run / "report" / f"{run.name}.html").read_text())))
    assert re.search(r"RND 8KiB W [\d,.]+ [\d,.]+ [\d,.]+ n/m \([\d,]+ IOs\) 30 NOT ACHIEVED", page), page
    assert "at steady state" not in page and "steady-state window)" not in page, page
    assert "IOPS per stream over its measurement window" in page, page


def test_latency_demand_pages_give_the_bisected_maximum_the_key_figure_gives(tmp_path):
    # the source under a ramp's plot and table quoted the ramp's own stop decision, "maximum
    # sustainable IOPS 64,000", while the bisection after it, the page's text and the key figure
    # said 83,300
    runs = tmp_path / "runs"
    p = iolab("run", "latency-demand", "--quick", "--cell-time", "100ms", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = list(runs.iterdir())
    figures = {
        f["name"]: f["value"] for f in json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]["figures"]
    }
    page = flat(unescape(re.sub(r"<[^>]+>", " ", (run / "report" / f"{run.name}.html").read_text())))
    for ramp, figure in (("read ramp", "max sustainable read IOPS"), ("write ramp", "max sustainable write IOPS")):
        assert re.search(rf"'{ramp}: bisection 1'", page), page  # the case: a ramp refined by a bisection
        sources = re.findall(
            rf"Source: results.db table cells, phases '{ramp}'.*?maximum sustainable IOPS ([\d,]+) \(delivered at a "
            r"demand of ([\d,]+)\)",
            page,
        )
        # the headline is what the chosen step delivered, its demand named as the demand (the
        # figure was the demand, 87,100, where the step delivered 85,549)
        demand = figures[figure.replace("IOPS", "").replace("max sustainable ", "") + "demand at max sustainable"]
        said = {(int(s.replace(",", "")), int(d.replace(",", ""))) for s, d in sources}
        assert said == {(round(figures[figure]), demand)}, (sources, figures)
    # show and the Run Details page quoted the ramp's own decision, "maximum sustainable IOPS
    # 63,993", above the key figure's 82,707: every maximum they name is a key figure's
    shown = flat(iolab("show", str(run)).stdout)
    named = {int(n.replace(",", "")) for n in re.findall(r"maximum sustainable IOPS ([\d,]+)", shown + page)}
    assert named <= {round(figures["max sustainable read IOPS"]), round(figures["max sustainable write IOPS"])}, named


def test_check_treats_qos_worst_maximum_as_an_extreme_and_its_99_99_as_a_percentile(tmp_path):
    # QoS's "worst round maximum latency" (one IO of all its rounds) was a plain value: check held
    # it to the 5 % tolerance as an average, and a fleet called a drive an outlier on it
    runs = tmp_path / "runs"
    for _ in range(2):
        p = iolab("run", "qos", "--quick", "--set", "rounds=2", "--cell-time", "100ms", "--no-report",
                  "--runs-dir", str(runs))  # fmt: skip
        assert p.returncode == 0, p.stdout + p.stderr
    base, cand = sorted(str(r) for r in runs.iterdir())
    p = iolab("check", cand, "-b", base, "--json", "--runs-dir", str(runs))
    assert p.returncode in (0, 7), p.stdout + p.stderr
    figures = {f["name"]: f for f in json.loads(p.stdout)["check"]["figures"]}
    for op in ("write", "read"):
        worst = figures[f"{op}: worst round maximum latency"]
        assert (worst["kind"], worst["verdict"]) == ("extreme", "info"), worst
        assert figures[f"{op}: last round 99.99 %"]["kind"] == "percentile"
        assert figures[f"{op}: median round IOPS"]["kind"] == "value"


def test_qos_fleet_heads_dwpd_without_an_empty_unit_and_judges_no_drive_on_its_worst_maximum(tmp_path):
    # the fleet's table and the report's strips headed the unitless figure "DWPD ()"; and the
    # worst round maximum latency (one IO of a drive's rounds) was put to the outlier rule
    f = tmp_path / "fleet.toml"
    f.write_text('[fleet]\nparallel = 2\n[[drive]]\ntarget = "sim:enterprise-sas?seed={i}"\ncount = 5\nname = "s{i}"\n')
    runs = tmp_path / "runs"
    quick = ("--quick", "--set", "rounds=2", "--cell-time", "100ms", "--no-report")
    p = iolab("run", "qos", *quick, "--fleet", str(f), "--runs-dir", str(runs), timeout=600)
    assert p.returncode in (0, 7), p.stdout + p.stderr
    assert "DWPD ()" not in p.stdout and re.search(r"│ DWPD +│ 5 │", p.stdout), p.stdout
    for op in ("write", "read"):
        [row] = [line for line in p.stdout.splitlines() if f"│ {op}: worst round maximum latency (µs)" in line]
        assert "not judged (an extreme" in row, row
    [fleet] = list((runs / "fleets").iterdir())
    r = iolab("report", str(fleet), "--out", str(tmp_path / "rep"))
    assert r.returncode == 0, r.stdout + r.stderr
    [html] = list((tmp_path / "rep").glob("*.html"))
    assert "DWPD ()" not in unescape(html.read_text())


def test_consistency_says_its_runtime_as_every_other_figure_is_printed(tmp_path):
    # "RND 4KiB W QD32: 36,243 IOPS over 60.0008 s": the engine's runtime to the 100 µs
    p = iolab("run", "consistency", "--quick", "--no-report", "--runs-dir", str(tmp_path / "runs"))
    assert p.returncode == 0, p.stdout + p.stderr
    said = re.search(r"RND 4KiB W QD32: [\d,]+ IOPS over ([\d.]+) s,", flat(p.stdout))
    assert said and re.fullmatch(r"\d\d\.\d\d", said[1]), p.stdout


def test_fleet_help_gives_the_fleet_files_own_rule_and_groups_as_the_defaults():
    # "--outlier-k K ... (default 3.5)": without the option a stored fleet is judged by its fleet
    # file's outlier_k (api/fleetreport.py), and its groups by the file's group_by and baseline
    p = iolab("fleet", "-h")
    assert p.returncode == 0, p.stderr
    text = flat(re.sub(r"[│╭╮╰╯─]", " ", p.stdout))
    assert "(default: the fleet file's outlier_k, else 3.5)" in text, text
    assert "(default: the fleet file's outlier_min_pct, else 5, as check's default tolerance)" in text, text
    assert "(default: the fleet file's group_by)" in text, text
    assert "(default: the fleet file's baseline, unless --group-by is given; else the first group)" in text, text
