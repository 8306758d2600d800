"""`iolab run --quick -h` says the size of the copy each test simulates as `iolab plan` builds
it: it said 'a 512 MiB copy' for every test, where consistency and slc-cache test larger ones."""

from __future__ import annotations

import json
import re

import pytest

from iolab.api import registry
from iolab.core.units import MiB
from iolab.suites import QUICK_CAPACITY, QUICK_MAX_ROUNDS

from .conftest import iolab

pytestmark = pytest.mark.integration


def quick_help() -> str:
    p = iolab("run", "--quick", "-h")
    assert p.returncode == 0, p.stderr
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", p.stdout).split())


def planned_gb(test: str) -> float:
    p = iolab("plan", test, "--quick", "--json")
    assert p.returncode == 0, p.stderr
    (planned,) = json.loads(p.stdout)["plan"]["tests"]
    assert planned["copy_of"] == "sim:enterprise-sas", planned
    return planned["target_capacity_bytes"] / 1e9


def test_quick_help_names_each_larger_copy_as_the_plan_builds_it():
    said = quick_help()
    # a drive sized in its target is copied too: the help said 'unless its target gives its size'
    m = re.search(r"a simulated drive, sized in its target or not, becomes a (\d+) MiB copy with the same "
                  r"over-provisioning, larger for tests whose footprint needs more \(([^)]*)\), or is tested "
                  r"whole when no larger\)", said)  # fmt: skip
    assert m, said
    assert int(m.group(1)) * MiB == QUICK_CAPACITY
    assert f"512 MiB tested, ≤{QUICK_MAX_ROUNDS} rounds;" in said and 512 * MiB == QUICK_CAPACITY, said
    larger = dict(re.fullmatch(r"(\S+) ([\d.]+) GB", x).groups() for x in m.group(2).split(", "))
    assert set(larger) == {t.name for t in registry.all() if t.quick_sim_gb} and larger, larger
    for test, gb in larger.items():
        assert planned_gb(test) == pytest.approx(float(gb), rel=1e-3), test
    assert planned_gb("iops") == pytest.approx(QUICK_CAPACITY / 1e9, rel=1e-3)  # the rest: the quick size
    for spec, copy_of, size in (
        ("sim:enterprise-sas?user_gb=4", "sim:enterprise-sas?user_gb=4", QUICK_CAPACITY),  # sized: copied
        ("sim:enterprise-sas?user_gb=0.25", None, 249_999_360),  # no larger: whole
    ):
        p = iolab("plan", "iops", "--quick", "-t", spec, "--json")
        (planned,) = json.loads(p.stdout)["plan"]["tests"]
        assert (planned["copy_of"], planned["target_capacity_bytes"]) == (copy_of, size), planned
