"""Every printed line is true of the run it came from: a scaled-down run names each option that
scaled it, as the user gave it (a --capacity-limit 512MiB beside --quick was credited to
--quick, being the same size)."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab

pytestmark = pytest.mark.integration


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def short_runs(tmp_path_factory) -> tuple[list[Path], list[str]]:
    """Two quick latency runs of 3 rounds, fewer than the steady-state window (a few seconds),
    and what each `iolab run` printed; read-only for the tests that share them."""
    runs, said = tmp_path_factory.mktemp("short") / "runs", []
    for _ in range(2):
        p = iolab(
            "run", "latency", "--quick", "--max-rounds", "3", "-t", SMALL_SIM, "--no-report", "--runs-dir", str(runs)
        )
        assert p.returncode == 0, p.stdout + p.stderr
        said.append(p.stdout)
    return sorted(runs.iterdir()), said


def test_a_quick_run_with_a_capacity_limit_names_both_on_screen_in_show_and_in_the_report(tmp_path):
    runs = tmp_path / "runs"
    args = ("-t", "sim:enterprise-sas", "--quick", "--capacity-limit", "256MiB")
    planned = iolab("plan", "latency", *args)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    said = flat(planned.stdout)
    assert "(a copy of sim:enterprise-sas, scaled down by --quick and --capacity-limit 256MiB)" in said, said
    assert "its size set by --capacity-limit 256MiB" in said and "chooses a larger copy" not in said, said
    ran = iolab("run", "latency", *args, "--runs-dir", str(runs))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "its size set by --capacity-limit 256MiB" in flat(ran.stdout), ran.stdout
    [run] = list(runs.iterdir())
    m = json.loads((run / "manifest.json").read_text())
    assert m["profile"]["capacity_limit_given"] == "256MiB"
    shown = flat(iolab("show", str(run)).stdout)
    assert re.search(r"NON-COMPLIANT: quick profile; .*its size set by --capacity-limit 256MiB", shown), shown
    html = flat((run / "report" / f"{run.name}.html").read_text())
    banners = re.findall(r'<div class="banner[^"]*">(.*?)</div>', html)
    assert banners and all("--capacity-limit 256MiB" in b for b in banners if "non-compliant" in b), banners
    # a sequence's summary said "Scaled down (--quick): yes"
    seq = iolab("report", "--sequence", str(run))
    assert seq.returncode == 0, seq.stdout + seq.stderr
    [page] = (runs / "sequences").glob("*.html")
    summary = flat(re.sub(r"<[^>]+>", " ", page.read_text()))
    assert "Scaled down yes, by --quick and --capacity-limit 256MiB: non-compliant" in summary, summary[:3000]


@pytest.mark.parametrize(
    ("given", "source"),
    [
        (("--quick", "--capacity-limit", "512MiB"), "--capacity-limit 512MiB"),  # --quick's size, but the user's
        (("--quick",), "--quick"),
        (("--capacity-limit", "0.5 GiB"), "--capacity-limit 0.5 GiB"),
    ],
)
def test_a_range_cut_by_a_limit_names_the_option_that_cut_it_as_given(given, source):
    p = iolab("plan", "iops", "-t", "file:/var/tmp/iolab-never-made.img?size=2GiB", *given)
    assert p.returncode == 0, p.stdout + p.stderr
    said = flat(p.stdout)
    assert f"limited to 0.537 GB ({source})" in said, said
    assert f"tested capacity limited to 0.537 GB of 2.147 GB by {source})" in said, said


def test_a_figure_not_measured_carries_only_why_not_a_caveat_on_a_value_it_does_not_have(tmp_path, short_runs):
    """Two quick latency runs cut below the steady-state window: the ranking marked their
    99.999 % "— [a]", [a] being STEADY STATE NOT EVALUATED, a caveat on a value neither has."""
    first, second = short_runs[0]
    c = iolab("compare", str(first), str(second), "--out", str(tmp_path / "cmp"))
    assert c.returncode == 0, c.stdout + c.stderr
    keys = dict(re.findall(r"^\[(\w)\] (.*)$", c.stdout, re.M))
    steady = [k for k, text in keys.items() if text == "STEADY STATE NOT EVALUATED"]
    assert steady and re.search(rf"\d \(#\d\) \[{steady[0]}\]", c.stdout), c.stdout
    dashes = re.findall(r"— \[(\w)\]", c.stdout)
    assert dashes and all(keys[k].startswith("not measured: its ") and "IOs are too few" in keys[k] for k in dashes)
    # a run whose percentiles fail the self-audit (a p99 above its largest sample, planted): show
    # marked the "—" of its unmeasured 99.999 % "⚠ audit: percentile-samples failed"
    from tests.unit.test_audit import planted

    sql = "UPDATE cells SET p99 = lat_max_us * 3 WHERE id = (SELECT MIN(id) FROM cells WHERE round = 1)"
    second = planted(second, tmp_path, sql, manifest=lambda m: None)
    shown = iolab("show", str(second))
    assert "FAILED: percentile-samples" in shown.stdout, shown.stdout
    rows = [line for line in shown.stdout.splitlines() if "│" in line and " — " in line]
    assert rows and not any("audit" in row for row in rows), shown.stdout
    assert "— 99.999 % RND 4KiB R/W 100/0: not measured, its " in flat(shown.stdout), shown.stdout
    c = iolab("compare", str(first), str(second), "--out", str(tmp_path / "cmp2"))
    keys = dict(re.findall(r"^\[(\w)\] (.*)$", c.stdout, re.M))
    dashes = re.findall(r"— \[(\w)\]", c.stdout)
    assert dashes and all(keys[k].startswith("not measured: its ") for k in dashes), c.stdout


def test_a_key_figure_of_a_run_not_at_steady_state_is_marked_as_compare_marks_it(short_runs):
    """`iolab show` and the end of `iolab run` printed "ART 0/100 428.5 µs" of a run whose steady
    state was not evaluated, unmarked (the caveat only on the phase line above), where `iolab
    compare` tagged the same figures [a] STEADY STATE NOT EVALUATED; --json listed no caveat by the
    figure. One rule (header.steady_caveats) marks them everywhere; a "—" carries no [a]."""
    (run, _), (ran, _) = short_runs
    shown = iolab("show", str(run))
    j = iolab("show", str(run), "--json")
    for out in (ran, shown.stdout):
        rows = [line for line in out.splitlines() if line.startswith("│ ART RND 4KiB")]
        assert len(rows) == 3 and all(re.search(r"\d \[a\] │", row) for row in rows), out
        assert not re.search(r"— \[a\]", out), out
        legend = "[a] STEADY STATE NOT EVALUATED (main: 3 rounds, fewer than the 5-round window)"
        assert legend in flat(out), out
    figures = json.loads(j.stdout)["runs"][0]["figures"]
    assert {f["name"]: f.get("caveats") for f in figures if f["name"].startswith("ART")} == dict.fromkeys(
        ("ART RND 4KiB R/W 100/0", "ART RND 4KiB R/W 65/35", "ART RND 4KiB R/W 0/100"), ["STEADY STATE NOT EVALUATED"]
    )
    assert all("caveats" not in f for f in figures if f["value"] is None), figures


def test_a_fleet_verdict_says_why_a_figure_of_its_test_was_not_measured_and_did_you_mean_only_for_a_typo(tmp_path):
    """A fleet's spec-sheet verdict on a 99.999 % its quick runs' IOs could not measure said "did
    you mean 'ART …'?", as for a misspelt name; the key figures say why it has no value."""
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(
        f'[fleet]\nname = "lat"\n[[drive]]\ntarget = "{SMALL_SIM}&seed={{i}}"\ncount = 2\nname = "d{{i}}"\n'
    )
    runs = tmp_path / "runs"
    quick = ("--quick", "--cell-time", "100ms", "--max-rounds", "2", "--no-report")
    r = iolab("run", "latency", *quick, "--fleet", str(fleet), "--runs-dir", str(runs))
    assert r.returncode == 0, r.stdout + r.stderr
    [name] = [p.name for p in (runs / "fleets").iterdir()]
    sheet = tmp_path / "sheet.toml"
    sheet.write_text(
        '[[criterion]]\nfigure = "99.999 % RND 4KiB R/W 100/0"\nmax = 5\nunit = "ms"\n'
        '[[criterion]]\nfigure = "ART RND 4KiB R/W 10/0"\nmax = 5\nunit = "ms"\n'
    )
    p = iolab("fleet", name, "--runs-dir", str(runs), "--spec-sheet", str(sheet), "--json")
    whys = [v["why"] for d in json.loads(p.stdout)["drives"] for v in d["verdicts"]]
    pct = [w for w in whys if w.startswith("99.999 %")]
    typo = [w for w in whys if w.startswith("ART RND 4KiB R/W 10/0")]
    assert len(pct) == 2 and all(re.search(r"not measured by this run: .*its [\d,]+ IOs are too few", w) for w in pct)
    assert not any("did you mean" in w for w in pct), pct
    assert len(typo) == 2 and all("did you mean 'ART RND 4KiB R/W 100/0'" in w for w in typo), typo


def test_a_forced_comparison_lists_the_settings_that_differ_by_meaning_in_one_unit(tmp_path):
    """A run stored before the share rule keeps 10 % as '0.1', one since as '10%': a forced
    comparison listed every setting of both runs in their stored text ('0.1' vs '10%' read as a
    difference beside the real one, '0.05' vs '20%' in two units)."""
    runs = tmp_path / "runs"
    for settle in ("10", "15"):
        p = iolab("run", "xsr", "--quick", "-t", SMALL_SIM, "--set", "recovery_tolerance=20", "--set",
                  f"settle_tolerance={settle}", "--no-report", "--runs-dir", str(runs))  # fmt: skip
        assert p.returncode == 0, p.stdout + p.stderr
    old, new = sorted(runs.iterdir())
    m = json.loads((old / "manifest.json").read_text())
    m["profile"]["settings"] = [
        ["recovery_tolerance", "0.05"],
        ["settle_tolerance", "0.15"],
    ]  # as stored before the rule
    m["plan"].pop("values", None)
    (old / "manifest.json").write_text(json.dumps(m))
    forced = iolab("compare", "--force", str(old), str(new), "--out", str(tmp_path / "cmp"))
    assert forced.returncode == 0, forced.stdout + forced.stderr
    checked = iolab("check", str(new), "--baseline", str(old))
    for said in (flat(forced.stdout + forced.stderr), flat(checked.stdout + checked.stderr)):
        assert re.search(r"setting recovery_tolerance: .* 5 % vs .* 20 %", said), said
        assert "settle_tolerance" not in said and "'0.05'" not in said and "[[" not in said, said


def test_a_declared_spread_is_printed_as_given(tmp_path, short_runs):
    """`iolab check` printed a declared spread with :g: "0.00001%" as "1e-05 %", "99.99999%" as "100 %"."""
    base, cand = short_runs[0]
    tol = tmp_path / "tol.toml"
    tol.write_text('[spread]\n"ART RND 4KiB R/W 100/0" = "0.00001%"\n"ART RND 4KiB R/W 0/100" = "99.99999%"\n')
    p = iolab("check", str(cand), "--baseline", str(base), "--tolerances", str(tol))
    said = flat(p.stdout + p.stderr)
    for given in ("0.00001 %", "99.99999 %"):
        assert f"from the declared run-to-run spread ({given} of the value per run" in said, said
    assert "1e-05" not in said and "(100 % of the value" not in said


def test_plan_prints_an_ignored_option_s_value_as_its_flag_takes_it():
    """`iolab plan iops --wsat-max-time 2h` listed "--wsat-max-time (the plan is the same at
    86400.0)": the stored seconds, not a value the option takes."""
    p = iolab("plan", "iops", "--quick", "--wsat-max-time", "2h", "--active-range", "50%", "-t", SMALL_SIM)
    assert p.returncode == 0, p.stdout + p.stderr
    [row] = [line for line in p.stdout.splitlines() if re.match(r"\s+ignored\s", line)]
    assert row.split(None, 1)[1] == "--wsat-max-time (the plan is the same at 24h)", row
    assert "86400" not in p.stdout


@pytest.mark.parametrize(
    ("test", "options"),
    [("latency", ["--wsat-max-time", "2h", "--rwsw-min-writes", "2"]), ("pts", ["--precondition-factor", "3"])],
)
def test_plan_says_each_ignored_option_once(test, options):
    """`iolab plan latency --wsat-max-time 2h --rwsw-min-writes 2` said each twice: a note above
    the test ("changes nothing in latency … ignored") and the test's "ignored" row, the one that
    says the value its plan is the same at (of a sequence, the row of the one test, WSAT, that
    has no WIPC)."""
    p = iolab("plan", test, "--quick", *options, "-t", SMALL_SIM)
    assert p.returncode == 0, p.stdout + p.stderr
    for flag in options[::2]:
        said = [line for line in p.stdout.splitlines() if flag in line]
        assert len(said) == 1 and re.match(r"\s+ignored\s", said[0]), (flag, said)
        assert "(the plan is the same at " in said[0], said


@pytest.mark.parametrize("test", ["wsat", "xsr"])
def test_plan_says_once_that_the_round_limit_is_not_used_where_the_phases_run_to_their_budgets(test):
    """`iolab plan wsat --max-rounds 3` said "--max-rounds 3 is not used" on the round limit's line
    and "ignored --max-rounds (the plan is the same at 10)" two lines below it, and then the
    round limit's line repeated the note above the test."""
    p = iolab("plan", test, "--quick", "--max-rounds", "3", "--precondition-factor", "3", "-t", SMALL_SIM)
    assert p.returncode == 0, p.stdout + p.stderr
    block = [line for line in p.stdout.splitlines() if line.startswith("  ")]
    # said once, above the test (as `iolab run` says it); the round limit's line says what bounds
    # the rounds. Before, the test's block said "--max-rounds 3 is not used" under the note.
    said = [line for line in p.stdout.splitlines() if "--max-rounds" in line]
    note = f"note: --max-rounds changes nothing in {test} (its plan is the same without it): ignored."
    assert said == [note], p.stdout
    assert any("round limit: each phase's own, below" in line for line in block), block
    # another ignored option is still listed as ignored
    assert any(re.match(r"\s+ignored\s+--precondition-factor", line) for line in block), block


def test_hir_calls_its_baseline_a_steady_state_level_only_when_the_preconditioning_reached_it(tmp_path):
    # a quick run in 0.1 s cells writes 0.4 GB of its 0.54 GB drive before the round limit: the
    # window passes the rule but the drive never left fresh-out-of-box, so the phase is not steady
    runs = tmp_path / "runs"
    p = iolab("run", "hir", "--quick", "--cell-time", "100ms", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    # its numbers passed: said so, and why it was refused, never a bare "NOT reached"
    out = flat(p.stdout)
    assert re.search(
        r"preconditioning: 10 complete rounds; steady state NOT accepted: the window passes the rule's range and "
        r"slope, but only [\d.]+ GB was written since the purge, below the 2× the tested capacity \([\d.]+ GB\) a "
        r"drive must take to leave fresh-out-of-box; reached the round limit \(10\) without steady state",
        out,
    ), out
    [run] = list(runs.iterdir())
    page = flat(unescape(re.sub(r"<[^>]+>", " ", (run / "report" / f"{run.name}.html").read_text())))
    assert "Preconditioning steady-state level" not in page, page
    assert re.search(
        r"Preconditioning window mean: [\d,]+ IOPS .*its window passes the rule but was NOT accepted as steady state",
        page,
    ), page
    # its banner as `show` says it (it read "STEADY STATE NOT ACHIEVED", as if the numbers had failed)
    window = re.search(r"STEADY STATE NOT ACCEPTED \(preconditioning: (rounds \d+–\d+), which pass the rule's numbers "
                       r"but were not accepted\)", page)  # fmt: skip
    assert window, page
    assert f"preconditioning: {window.group(1)} (window passes, NOT accepted)" in page, page  # SS rounds
    refused = r"was NOT accepted as steady state: only [\d.]+ GB was written since the purge, below the 2×"
    assert re.search(r"Verdict the window passes the rule's range and slope, but " + refused, page), page
    assert "see its stop reason" not in page and "STEADY STATE NOT ACHIEVED. The results" not in page


def test_endurance_of_writes_confined_to_part_of_the_drive_says_so_wherever_tbw_is_printed(tmp_path):
    # --capacity-limit 1GiB on the 400 GB drive: every write lands in 0.27 % of its range and
    # garbage collection finds the rest of the flash free, so the WAF is 1.00 and TBW 15,361 TB,
    # printed beside "incompressible random write" as if it were the drive's
    runs = tmp_path / "runs"
    small = ("--set", "precondition_time=10s", "--set", "rounds=2", "--set", "measured=200ms", "--set", "warmup=100ms")
    p = iolab("run", "qos", "--capacity-limit", "1GiB", *small, "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    part = "the writes were confined to 0.27 % of the drive's range (the rest of its flash free)"
    assert part in flat(p.stdout) and re.search(r"endurance: WAF [\d.]+, basis: .*" + re.escape(part), flat(p.stdout))
    [run] = list(runs.iterdir())
    record = json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]["endurance"]
    assert part in record["basis"] and record["short"] == "incompressible random write, 0.27 % of the drive's range"
    page = flat(unescape(re.sub(r"<[^>]+>", " ", (run / "report" / f"{run.name}.html").read_text())))
    assert re.search(
        r"TBW = flash capacity × P/E ÷ WAF [\d,.]+ TB \(WAF [\d.]+, .*0\.27 % of the drive's range\)", page
    )


def test_a_seeded_run_is_a_run_of_the_same_drive_for_the_sequence_report_as_for_history(tmp_path, short_runs):
    """Two runs of one simulated drive, one with &seed=3: `iolab history` kept them on one line
    (a seed is another run of the drive), `iolab report --sequence` refused them as "runs on 2
    targets". Both now take them as one drive; another drive parameter is still another target."""
    runs = tmp_path / "runs"
    quick = ("--quick", "--max-rounds", "1", "--no-report", "--runs-dir", str(runs))
    for spec in (f"{SMALL_SIM}&seed=3", f"{SMALL_SIM}&op=0.5"):
        p = iolab("run", "latency", "-t", spec, *quick)
        assert p.returncode == 0, p.stdout + p.stderr
    seeded, other = sorted(runs.iterdir())
    first = short_runs[0][0]
    seq = iolab("report", "--sequence", str(first), str(seeded), "-o", str(tmp_path / "seq"))
    assert seq.returncode == 0 and list((tmp_path / "seq").glob("*.pdf")), seq.stdout + seq.stderr
    shutil.copytree(first, runs / first.name)
    h = iolab("history", "ART RND 4KiB R/W 0/100", "--runs-dir", str(runs), "--json")
    assert h.returncode == 0, h.stdout + h.stderr
    lines = {len(t["points"]) for t in json.loads(h.stdout)["history"]["targets"]}
    assert lines == {2, 1}, h.stdout  # the two seeds on one line, op=0.5 on its own
    refused = iolab("report", "--sequence", str(first), str(other), "-o", str(tmp_path / "seq2"))
    assert refused.returncode != 0 and "a sequence report covers runs on one target, these are on 2" in flat(
        refused.stdout + refused.stderr
    ), refused.stdout + refused.stderr
