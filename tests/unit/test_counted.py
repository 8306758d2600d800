"""A count and its noun agree in user-facing text: "1 step", "2 steps", never "1 step(s)" or
"1 steps" (a quick run printed "for 1 step(s)", "1 complete round(s)" and, for a sequence of
one test, "remaining 1 tests" and a report named "sequence-characterise-1tests-…")."""

from __future__ import annotations

import re
from pathlib import Path

from iolab.cli.progress import sequence_eta
from iolab.core.decide import DemandShortfall, NoGain
from iolab.core.steady import SteadyRule
from iolab.core.units import counted
from iolab.pages.report.sequence import runs_of_tests, sequence_stem

from .test_progress import qos_plan

SRC = Path(__file__).resolve().parents[2] / "src" / "iolab"


def test_the_noun_takes_the_number_of_its_count():
    assert counted(1, "step") == "1 step"
    assert counted(0, "complete round") == "0 complete rounds"
    assert counted(2, "earlier line") == "2 earlier lines"
    assert counted(1_024, "cell") == "1,024 cells"
    assert counted(2, "index", "indices") == "2 indices" and counted(1, "index", "indices") == "1 index"


def test_rules_and_limits_of_one_say_it_in_the_singular():
    assert "after 1 cell in a row delivering more than 2 % below" in DemandShortfall(0.02, 1).describe()
    assert "after 2 cells in a row delivering" in DemandShortfall(0.02, 2).describe()
    assert "after 1 cell in a row gaining less than" in NoGain(0.02, 1).describe()
    assert "at most 1 round;" in SteadyRule(max_rounds=1).describe()


def test_a_sequence_of_one_test_is_one_test():
    assert sequence_eta([qos_plan()]).startswith("1 test, ETA ")
    assert sequence_eta([qos_plan(), qos_plan()]).startswith("2 tests, ETA ")
    assert sequence_stem("characterise", ["a"]).startswith("sequence-characterise-1test-")
    # the names of sequences of several tests are as before (the same hash of the run ids)
    assert sequence_stem("characterise", ["a", "b"]) == "sequence-characterise-2tests-fcd127ff"
    assert sequence_stem("characterise", ["a", "b"], ["qos", "entropy"]) == "sequence-characterise-2tests-fcd127ff"
    # one test run twice is two runs of one test, never "2tests"
    assert sequence_stem("pts", ["a", "b"], ["latency", "latency"]) == "sequence-pts-2runs-1test-fcd127ff"
    assert runs_of_tests(["iops", "latency", "iops"]) == "3 runs of 2 tests"
    assert runs_of_tests(["iops", "latency"]) == "2 tests"


# an f-string's count followed by a noun with "(s)": "{n} cell(s)"
HEDGED = re.compile(r"\{[^{}]+\} [a-z]+(?: [a-z]+)*\(s\)")


def test_no_user_facing_text_hedges_a_count_with_an_s_in_brackets():
    found = [
        f"{p.relative_to(SRC)}:{i}: {line.strip()}"
        for p in sorted(SRC.rglob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if HEDGED.search(line)
    ]
    assert not found, "use core.units.counted:\n" + "\n".join(found)


def test_an_audit_outcome_counts_what_it_checked_in_the_number_it_takes():
    # the shared audit outcome printed "1 cells checked" and "steady phase(s)"
    from iolab.figures.audit_checks import _outcome

    assert _outcome([], 1, "cells", {}, one="cell").reason == "1 cell checked"
    assert _outcome([], 3, "cells", {}, one="cell").reason == "3 cells checked"
    assert _outcome([], 0, "steady phases", {}, one="steady phase").reason == "no steady phases to check"
