"""`--write-cache on|off` and `--active-range PCT` through the `iolab` command: what a run records
and shows of them, the fio jobs they give, the runs they keep apart, and the values refused."""

from __future__ import annotations

import json
import re

import pytest

from iolab.api.runlist import list_runs

from .conftest import iolab
from .test_rwsw import workload  # noqa: F401  (the module-scoped capture analysed into wl/)

pytestmark = pytest.mark.integration

QUICK_QOS = ("qos", "--quick", "--set", "rounds=2", "--set", "measured=200ms", "--set", "warmup=100ms")


def one_run(runs):
    [r] = list_runs(runs)
    return r.path


@pytest.mark.parametrize(
    "args,says",
    [
        (("--active-range", "0"), "active range (--active-range): 0% is out of range"),
        (("--active-range", "150"), "active range (--active-range): 150% is out of range"),
        # a negative share is read, and refused as out of range with the range allowed (was "cannot read")
        (("--active-range", "-5%"), "-5% is out of range; give a percentage of the target above 0% and at most 100%"),
        (("--active-range", "abc"), "cannot read 'abc' as a percentage"),
        (("--write-cache", "maybe"), "write cache (--write-cache): 'maybe' is not a setting"),
    ],
)
@pytest.mark.parametrize("command", ["run", "fio-job", "plan"])
def test_a_bad_value_is_one_paragraph_and_exit_2(scratch, command, args, says):
    runs = scratch / "runs"
    where = ("--runs-dir", str(runs)) if command == "run" else ()
    p = iolab(command, "iops", "--quick", "-t", f"file:{scratch}/f.img?size=16MiB", *where, *args)
    assert p.returncode == 2, p.stdout + p.stderr
    text = " ".join(p.stderr.split())
    assert says in text and "Traceback" not in p.stderr and "\n\n" not in p.stderr.strip()
    assert not (scratch / "f.img").exists() and not runs.exists()


def _sizes(job_text: str) -> set[int]:
    return {int(n) for n in re.findall(r"^size=(\d+)$", job_text, re.M)}


def test_fio_job_addresses_the_active_range_given(scratch):
    target = f"file:{scratch}/f.img?size=64MiB"
    whole = iolab("fio-job", "iops", "-t", target)
    half = iolab("fio-job", "iops", "-t", target, "--active-range", "50")
    assert whole.returncode == half.returncode == 0, whole.stderr + half.stderr
    assert _sizes(whole.stdout) == {64 << 20}
    assert _sizes(half.stdout) == {32 << 20}  # preconditioning and every cell: the first half, from offset 0
    assert "active range 0.5 (33554432 B from offset 0)" in half.stdout
    client = iolab("fio-job", "iops", "-t", target, "--profile", "client", "--active-range", "100%")
    assert _sizes(client.stdout) == {64 << 20}  # the option replaces the client profile's 75 %
    assert not (scratch / "f.img").exists()  # printing jobs writes nothing


@pytest.fixture(scope="module")
def cache_on_half_span(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    p = iolab(
        "run",
        *QUICK_QOS,
        "-t",
        "sim:enterprise-sas",
        "--write-cache",
        "on",
        "--active-range",
        "50",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr + p.stdout
    return runs, one_run(runs)


def test_a_run_records_and_shows_write_cache_and_active_range(cache_on_half_span):
    _, run = cache_on_half_span
    m = json.loads((run / "manifest.json").read_text())
    assert (m["profile"]["write_cache"], m["profile"]["active_range"]) == (True, 0.5)
    assert m["target"]["tested_capacity"] == m["target"]["capacity"] // 2
    assert "write cache WCE (the enterprise profile: WCD)" in m["noncompliance"]
    assert "active range 50 % (the enterprise profile: 100 %)" in m["noncompliance"]
    shown = iolab("show", str(run))
    assert shown.returncode == 0, shown.stderr
    assert (
        "profile enterprise: write cache WCE (--write-cache; the profile's: WCD), "
        "active range 50 % (--active-range; the profile's: 100 %)"
    ) in shown.stdout
    html = " ".join(next((run / "report").glob("*.html")).read_text().split())
    assert "enterprise (WCE by --write-cache; the profile" in html  # the header's Profile row
    assert "50 % by --active-range (the profile" in html  # and its Active range row


def test_a_run_with_other_settings_is_compared_only_with_force(cache_on_half_span):
    runs, run = cache_on_half_span
    other = runs.parent / "runs-default"
    p = iolab("run", *QUICK_QOS, "-t", "sim:enterprise-sas", "--no-report", "--runs-dir", str(other))
    assert p.returncode == 0, p.stderr + p.stdout
    refused = iolab("compare", str(run), str(one_run(other)), "-o", str(runs.parent / "cmp"))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    said = " ".join(refused.stderr.split())
    # named as the user sets them, with the values as the options take them (were the stored
    # fields: "write_cache: D1 ... True vs D2 ... False; active_range: D1 ... 0.5 vs D2 ... 1.0")
    assert re.search(r"--active-range: D1 .* 50% vs D2 .* 100%", said), said
    assert re.search(r"--write-cache: D1 .* on vs D2 .* off", said), said
    assert "--force" in said and "write_cache" not in said


def test_an_option_the_test_does_not_use_is_named_before_it_runs(scratch):
    # WSAT runs to its write or time budget: a round limit cannot shape it, and the run says so
    runs = scratch / "runs"
    p = iolab(
        "run", "wsat", "--quick", "--cell-time", "100ms", "--wsat-max-time", "1s", "--max-rounds", "3",
        "--no-report", "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stderr.split())
    assert "--max-rounds changes nothing in wsat (its plan is the same without it): ignored." in text
    assert "--wsat-max-time changes nothing" not in text and "--cell-time changes nothing" not in text


def test_streams_wsat_says_max_rounds_is_ignored_and_keeps_its_own_round_limit(workload, tmp_path):
    # `run streams-wsat --max-rounds 3` ran its write stream 30 rounds without a word: the
    # saturation phases end at their WSAT budgets (30 intervals when quick), while the steady
    # rule's round limit, which no phase of the plan reads, made the plan look as if it used it.
    # `iolab plan` even said "round limit 3 (--max-rounds)"
    wl, runs = str(workload / "wl"), tmp_path / "runs"
    plan = iolab("plan", "streams-wsat", "-w", wl, "--quick", "--max-rounds", "3")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    said = " ".join(plan.stdout.split())
    assert "note: --max-rounds changes nothing in streams-wsat (its plan is the same without it): ignored." in said
    assert "round limit 3 (--max-rounds)" not in said and "round limit: each phase's own, below" in said
    quick = ("-w", wl, "--quick", "--max-rounds", "3", "--cell-time", "100ms", "--no-report", "--runs-dir", str(runs))
    p = iolab("run", "streams-wsat", *quick)
    assert p.returncode == 0, p.stdout + p.stderr
    note = "iolab: note: --max-rounds changes nothing in streams-wsat (its plan is the same without it): ignored."
    assert note in " ".join(p.stderr.split()), p.stderr
    # and the run did what the note says: the write stream went past 3 rounds, to its own limit
    assert re.search(r"RND 8KiB W: phase done after (\d+) rounds", p.stdout), p.stdout
    assert int(re.search(r"RND 8KiB W: phase done after (\d+) rounds", p.stdout)[1]) > 3
    # a sequence says which of its tests ignore it: replay and dirth-rwsw take the limit
    plan = iolab("plan", "rwsw", "-w", wl, "--quick", "--max-rounds", "3")
    said = " ".join(plan.stdout.split())
    assert "--max-rounds changes nothing in multi-wsat, streams-wsat (their plans are the same without it)" in said
    assert said.count("round limit 3 (--max-rounds)") == 2, said


def test_which_options_each_test_ignores():
    from dataclasses import replace

    from iolab import suites
    from iolab.api.runs import planned
    from iolab.api.unused import ignored
    from iolab.core.plan import PROFILE_FLAGS
    from iolab.targets import parse_target

    target, defaults = parse_target("sim:enterprise-sas"), suites.make_profile(quick=True)

    def said(test: str, **given) -> list[str]:
        plans = [plan for plan, _, _ in planned(test, replace(defaults, **given), target)]
        return ignored(test, plans, PROFILE_FLAGS)

    assert said("xsr", max_rounds=7) == [
        "--max-rounds changes nothing in xsr (its plan is the same without it): ignored."
    ]
    assert said("iops", max_rounds=7) == [] and said("wsat", wsat_capacity_multiple=2.0) == []
    assert said("iops", max_rounds=7, wsat_max_seconds=60.0) == [
        "--wsat-max-time changes nothing in iops (its plan is the same without it): ignored."
    ]
    assert said("hir", precondition_factor=3.0)[0].startswith("--precondition-factor changes nothing in hir")
    [line] = said("characterise", precondition_factor=3.0)
    assert line.startswith("--precondition-factor changes nothing in qos, rw-matrix") and "latency-demand" not in line
    assert said("iops", active_range=0.5) == said("latency", cell_seconds=30.0) == []
    # the runner sets the drive's write cache from the plan's profile: every test uses it
    assert said("iops", write_cache=True) == said("wsat", write_cache=True) == said("qos", write_cache=True) == []


def test_runs_that_differ_only_in_an_option_their_test_ignores_compare_without_force(scratch):
    # each run records that WSAT's plan is the same without --max-rounds; compare and check read it
    runs = scratch / "runs"
    for rounds in ("3", "7"):
        p = iolab(
            "run", "wsat", "--quick", "--cell-time", "100ms", "--wsat-max-time", "1s", "--max-rounds", rounds,
            "--no-report", "--runs-dir", str(runs / rounds),
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
    three, seven = one_run(runs / "3"), one_run(runs / "7")
    assert json.loads((three / "manifest.json").read_text())["ignored_options"] == {"max_rounds": 10}
    compared = iolab("compare", str(three), str(seven), "-o", str(scratch / "cmp"))
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "max_rounds" not in compared.stdout + compared.stderr
    checked = iolab("check", str(seven), "--baseline", str(three))
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize(
    "size,args,says",
    [
        # cut by --capacity-limit on a run without --quick: was "limited to 0.017 GB (quick)"
        ("64MiB", ("--capacity-limit", "16MiB"), "Active range: 100 %, limited to 0.017 GB (--capacity-limit 16MiB)"),
        # a 64 MiB file under --quick's 512 MiB is tested whole: was "limited to 0.067 GB (quick)"
        ("64MiB", ("--quick",), "Active range: 100 %, tested whole (0.067 GB): within the 0.537 GB limit of --quick"),
        ("1GiB", ("--quick",), "Active range: 100 %, limited to 0.537 GB (--quick)"),
        (
            "1GiB",
            ("--quick", "--capacity-limit", "16MiB"),
            "Active range: 100 %, limited to 0.017 GB (--capacity-limit 16MiB)",
        ),
    ],
)
def test_the_active_range_line_names_the_option_that_cut_it_or_says_whole(scratch, size, args, says):
    p = iolab("plan", "latency", "-t", f"file:{scratch}/f.img?size={size}", *args)
    assert p.returncode == 0, p.stderr
    assert says in " ".join(p.stdout.split())
    assert "(quick)" not in p.stdout
