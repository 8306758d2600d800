"""An option a test ignores does not keep its runs apart: each run records the profile options its
plan is the same without (core/plan.ignored_options, the manifest's ignored_options), and
`iolab compare` and `iolab check` count such an option at the value the plan is the same at. An
option the test uses still keeps runs apart, and runs stored before the record compare as given."""

from __future__ import annotations

import json
from dataclasses import asdict, replace

import pytest

from iolab import suites
from iolab.api.runs import planned
from iolab.automation.check import differences as check_differences
from iolab.core.errors import IolabError
from iolab.figures.compare import RunFacts, check_comparable, differences
from iolab.targets import parse_target

TARGET = parse_target("sim:enterprise-sas")
QUICK = suites.make_profile(quick=True)  # its round limit: 10


def stored(test: str, label: str, **given) -> RunFacts:
    """The facts `iolab compare` reads of a run of `test` with these options (its plan as built
    for the run, the profile and record as the manifest holds them: JSON)."""
    [(plan, _, _)] = planned(test, replace(QUICK, **given), TARGET)
    profile, ignored = json.loads(json.dumps([asdict(plan.profile), dict(plan.ignored_options)]))
    cells = tuple((p.name, tuple(c.key for c in getattr(p, "cells", ()))) for p in plan.phases)
    return RunFacts(label, test, profile, cells, ignored=ignored)


def test_a_run_records_the_options_its_test_ignored_at_the_value_its_plan_is_the_same_at():
    assert stored("wsat", "A", max_rounds=3).ignored == {"max_rounds": QUICK.max_rounds}
    assert stored("iops", "A", max_rounds=3).ignored == {}  # IOPS stops at its round limit
    assert stored("wsat", "A").ignored == {}  # nothing given, nothing to record
    # a sequence's parameter its other tests do not take: IOPS's plan is the same without it
    iops = planned("pts", replace(QUICK, settings=(("workload", "oltp"),)), TARGET)[0][0]
    assert (iops.test, dict(iops.ignored_options)) == ("iops", {"settings": ()})


def test_runs_that_differ_only_in_an_option_their_test_ignores_are_comparable():
    three, seven, default = stored("wsat", "A", max_rounds=3), stored("wsat", "B", max_rounds=7), stored("wsat", "C")
    assert (three.profile["max_rounds"], seven.profile["max_rounds"]) == (3, 7)
    assert differences([three, seven]) == differences([default, three]) == []
    assert check_comparable([three, seven, default], force=False) == []


def test_an_option_the_test_uses_still_keeps_runs_apart():
    with pytest.raises(IolabError, match=r"--max-rounds: A 3 vs B 7.*--force"):
        check_comparable([stored("iops", "A", max_rounds=3), stored("iops", "B", max_rounds=7)], force=False)
    # ignored --max-rounds beside a different Write Saturation budget, which WSAT uses
    both = differences([stored("wsat", "A", max_rounds=3), stored("wsat", "B", wsat_capacity_multiple=2.0)])
    assert both == ["--wsat-capacity-multiple: A 4 vs B 2"]


def test_a_run_stored_before_the_record_counts_every_option_as_given():
    def old(facts: RunFacts) -> RunFacts:
        return replace(facts, ignored={})

    three, seven = stored("wsat", "A", max_rounds=3), stored("wsat", "B", max_rounds=7)
    assert differences([old(three), old(seven)]) == ["--max-rounds: A 3 vs B 7"]  # as before the record
    assert differences([old(three), seven]) == ["--max-rounds: A 3 vs B 7"]  # 3 is not what B's plan is the same at
    # B's own record says its plan is that of the round limit the old run had
    assert differences([old(stored("wsat", "C")), seven]) == []
    # the same value given to both: no difference, though only the new run recorded it as ignored
    assert differences([old(seven), stored("wsat", "D", max_rounds=7)]) == []


def test_check_counts_an_ignored_option_as_compare_does():
    def record(facts: RunFacts) -> dict:
        return {"run_id": facts.label, "profile": facts.profile, "ignored_options": facts.ignored}

    wsat = [record(stored("wsat", "A", max_rounds=3)), record(stored("wsat", "B", max_rounds=7))]
    iops = [record(stored("iops", "A", max_rounds=3)), record(stored("iops", "B", max_rounds=7))]
    assert check_differences(wsat[:1], wsat[1:]) == []
    assert check_differences(iops[:1], iops[1:]) == ["--max-rounds: A 3 vs B 7"]
    # a --json document saved before the record has no ignored_options: compared as given
    old = [{k: v for k, v in r.items() if k != "ignored_options"} for r in wsat]
    assert check_differences(old[:1], old[1:]) == ["--max-rounds: A 3 vs B 7"]
