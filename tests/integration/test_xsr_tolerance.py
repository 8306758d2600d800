"""XSR's recovery_tolerance must leave a bar to recover to: at 100 % group 3 "recovered" at its
first interval whatever the drive did (TP ≥ 0 × group 1's mean), a recovery time of the setting,
not the drive. Real `iolab plan`, which refuses it before anything runs."""

from __future__ import annotations

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration


def test_a_recovery_tolerance_of_100_percent_is_refused_and_0_percent_taken():
    p = iolab("plan", "xsr", "--quick", "--set", "recovery_tolerance=100")
    assert p.returncode == 2, p.stdout
    assert "recovery_tolerance='100' (test xsr): give a percentage from 0% to below 100%" in " ".join(p.stderr.split())
    ok = iolab("plan", "xsr", "--quick", "--set", "recovery_tolerance=0")  # the A.10 implementation's rule
    assert ok.returncode == 0 and "recovery_tolerance: 0 % (set with --set)" in ok.stdout, ok.stderr
