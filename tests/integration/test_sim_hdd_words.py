"""A simulated HDD is described as a disk: `iolab plan` (and the run's notes, from the same
words) never gives it the flash of the SSD presets, over-provisioning, fresh-out-of-box or
erased flash blocks, which a disk does not have. Real `iolab plan --json`, which runs nothing."""

from __future__ import annotations

import json

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration


def plan_text(target: str) -> str:
    p = iolab("plan", "latency", "--quick", "-t", target, "--json")
    assert p.returncode == 0, p.stderr
    return json.dumps(json.loads(p.stdout), ensure_ascii=False)


def test_a_quick_copy_of_a_simulated_hdd_is_described_as_a_disk_and_an_ssd_as_flash():
    hdd = plan_text("sim:sas-15k-hdd")
    assert "seek curve and rotation spread over the copy's span" in hdd
    assert "a simulated HDD keeps no data: nothing to erase" in hdd
    for flash_word in ("over-provisioning", "OP ", "fresh-out-of-box", "flash block"):
        assert flash_word not in hdd, flash_word
    ssd = plan_text("sim:enterprise-sas")
    # the copy's over-provisioning as every page's header gives it (sim_facts.copy_over_provisioning)
    assert "copy's OP 27.9% (28.0% at full size)" in ssd and "every flash block erased" in ssd
    assert "seek curve" not in ssd
