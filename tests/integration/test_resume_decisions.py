"""A resumed run's decisions, killed (as by kill -9) at named points between the writes that
make them: a deferred phase killed once its decision was stored, before it began, was decided
twice on resume; a stop rule's decision not yet written when its round was (the runner writes the
round, then the decision) was lost, the phase stored as ended by its round limit. Each kill is
exact: the command runs with a seam that ends the process (os._exit, nothing of iolab's cleanup
runs) at the named call; everything else is iolab's own command line, fio and a file target."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from iolab.core.decide import Decision, Sample, best_by_iops, rule_record, sample_of_row
from iolab.core.plan import Cell, Deferred, Phase
from iolab.core.plan import TestPlan as Plan
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.store.runstore import RunStore

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
QDS = (1, 4, 16, 64)


@dataclass(frozen=True)
class AfterCells:
    """A stop rule that decides at its `cells`-th cell whatever the machine's speed (a real rule's
    moment depends on the IOPS measured), naming the best cell so far with its measured IOPS."""

    name: ClassVar[str] = "after-cells"
    cells: int = 3

    def describe(self) -> str:
        return f"stop after {self.cells} cells"

    def check(self, phase: str, samples: Sequence[Sample]) -> Decision | None:
        if len(samples) < self.cells:
            return None
        s, best = samples[-1], max(samples, key=lambda x: x.iops)
        said = f"{s.key} is cell {len(samples)}: the best so far {best.key} ({best.iops:,.3f} IOPS)"
        return Decision(phase, rule_record(self), said, {"best": best.key}, s.round, s.key)


RULE = AfterCells()


def _read(qd: int, seconds: float) -> Workload:
    return Workload.mix("rnd", 100, 4 * KiB, threads=1, queue_depth=qd, duration_s=seconds)


def build_search(prof, target, workload=None) -> Plan:
    """A queue-depth search its stop rule ends, then a phase built at the search's best QD."""
    cap = min(target.capacity, prof.capacity_limit or target.capacity)
    cells = tuple(Cell(f"QD {qd}", _read(qd, prof.cell_seconds), "100/0", 4 * KiB) for qd in QDS)
    search = Phase("qd search", cells, (), max_rounds=1, stop_on_steady=False, stop_rule=RULE)

    def at_best(samples):
        best = best_by_iops("qd search", samples["qd search"])
        cell = Cell(f"QD {best.outstanding}", _read(best.outstanding, prof.cell_seconds), "100/0", 4 * KiB)
        phase = Phase("at the best QD", (cell,), (), purge=False, max_rounds=2, stop_on_steady=False)
        said = f"{best.key} delivered the most IOPS ({best.iops:,.0f})"
        return phase, Decision("at the best QD", {"name": "most-iops"}, said, {"queue_depth": best.outstanding})

    deferred = Deferred("at the best QD", "the search's most IOPS", at_best)
    return Plan("qd-search", "QD search", "test", prof, (search, deferred), prof.rule(), cap)


# `iolab ARGS` with the test above registered; IOLAB_TEST_DIE_AT="begin:PHASE" ends the process as
# the phase is about to be stored as begun, "decide:PHASE" as a decision of that phase is about to
# be stored (the runner has stored the round it ended).
SEAM = f"""
import os, sys
sys.path.insert(0, {str(ROOT)!r})
from iolab.api import registry
from iolab.run.runner import Runner
from iolab.store.runstore import RunStore
from iolab.suites.testdef import TestDef
from tests.integration.test_resume_decisions import build_search
registry.register(TestDef("qd-search", "QD search", "test", "QD search, then rounds at the best", build=build_search))
how, _, name = os.environ.get("IOLAB_TEST_DIE_AT", "").partition(":")
real_begin, real_decide = RunStore.begin_phase, Runner.decide
def begin(self, phase, *args, **kwargs):
    if how == "begin" and phase == name:
        os._exit(137)
    return real_begin(self, phase, *args, **kwargs)
def decide(self, decision):
    if how == "decide" and decision.phase == name:
        os._exit(137)
    return real_decide(self, decision)
RunStore.begin_phase, Runner.decide = begin, decide
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""


def _iolab(*args: str, die_at: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="300", IOLAB_TEST_DIE_AT=die_at)
    return subprocess.run([sys.executable, "-c", SEAM, *args], capture_output=True, text=True, timeout=300, env=env)


def _killed_then_resumed(scratch: Path, die_at: str) -> tuple[RunStore, str]:
    runs = scratch / "runs"
    target = f"file:{scratch / 'qd.img'}?size=16MiB"
    args = ("run", "qd-search", "-t", target, "--quick", "--cell-time", "200ms", "--no-report", "--runs-dir", str(runs))
    p = _iolab(*args, die_at=die_at)
    assert p.returncode == 137, p.stdout + p.stderr
    [run] = runs.iterdir()
    p = _iolab("resume", str(run), "--no-report")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stdout + p.stderr
    return RunStore.open(run), " ".join(p.stdout.split())


def _searched(store: RunStore) -> Decision | None:
    """The stop rule's decision remade here from the stored search, checked after each cell as the runner checks."""
    samples = [sample_of_row(c) for c in store.cells("qd search")]
    return next((d for k in range(1, len(samples) + 1) if (d := RULE.check("qd search", samples[:k]))), None)


def test_a_deferred_phase_killed_after_its_decision_is_decided_once(scratch):
    store, said = _killed_then_resumed(scratch, "begin:at the best QD")
    m = store.manifest
    assert m.state == "complete", m.error
    built = [d for d in m.decisions if d["phase"] == "at the best QD"]
    assert len(built) == 1, m.decisions  # was stored twice: decided again as the resumed run reached it
    qd = built[0]["chosen"]["queue_depth"]
    assert {r.workload["queue_depth"] for r in store.cells("at the best QD")} == {qd}
    assert "at the best QD: its decision stored before the run was stopped is kept" in said, said


def test_a_stop_rule_decision_lost_between_its_round_and_its_write_is_remade_as_it_was(scratch):
    store, said = _killed_then_resumed(scratch, "decide:qd search")
    m = store.manifest
    assert m.state == "complete", m.error
    assert [c.cell_key for c in store.cells("qd search")] == ["QD 1", "QD 4", "QD 16"]  # the rule ended the round
    remade = _searched(store)
    assert remade is not None and remade.cell == "QD 16"
    assert [d for d in m.decisions if d["phase"] == "qd search"] == [remade.record()], m.decisions
    [search] = [p for p in store.phases() if p.name == "qd search"]
    assert search.stop_reason == f"after-cells: {remade.outcome}", search.stop_reason  # not "reached the round limit"
    assert "qd search: its stored round 1 already ends it (after-cells:" in said, said
