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
    m = re.search(r"becomes a (\d+) MiB copy with the same over-provisioning, larger for tests whose footprint "
                  r"needs more \(([^)]*)\), unless its target gives its size\)", said)  # fmt: skip
    assert m, said
    assert int(m.group(1)) * MiB == QUICK_CAPACITY
    assert f"512 MiB tested, ≤{QUICK_MAX_ROUNDS} rounds;" in said and 512 * MiB == QUICK_CAPACITY, said
    larger = dict(re.fullmatch(r"(\S+) ([\d.]+) GB", x).groups() for x in m.group(2).split(", "))
    assert set(larger) == {t.name for t in registry.all() if t.quick_sim_gb} and larger, larger
    for test, gb in larger.items():
        assert planned_gb(test) == pytest.approx(float(gb), rel=1e-3), test
    assert planned_gb("iops") == pytest.approx(QUICK_CAPACITY / 1e9, rel=1e-3)  # the rest: the quick size
