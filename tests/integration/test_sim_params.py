"""A simulated drive's parameters as a firmware engineer sets them, from the command line: a
saved state loads only into the drive it was saved from, impossible values are refused naming
the parameter (never a crash), and the documented defaults are the presets' own."""

from __future__ import annotations

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration


def test_a_state_loads_only_into_a_drive_of_the_parameters_it_was_saved_with(scratch):
    """A state saved from enterprise-sas loaded into `...&t_prog_us=5000&gc=fifo` ran the saved
    drive (greedy, 1,150 µs programs: every figure the same as without them, exit 0) while the
    run recorded the target's parameters."""
    state = scratch / "s.state"
    saved = iolab(
        "run", "latency", "--quick", "--no-report", "-q", "--runs-dir", str(scratch / "saved"),
        "-t", f"sim:enterprise-sas?user_gb=0.25&save={state}",
    )  # fmt: skip
    assert saved.returncode == 0 and state.is_file(), saved.stderr
    runs = scratch / "runs"
    other = f"sim:enterprise-sas?user_gb=0.25&load={state}&t_prog_us=5000&gc=fifo"
    for cmd in ("plan", "run"):
        p = iolab(cmd, "latency", "--quick", "--runs-dir", str(runs), "-t", other)
        err = " ".join(p.stderr.split())
        assert p.returncode == 2, p.stdout + p.stderr
        assert "saved from a drive with t_prog_us=1150, gc=greedy, not t_prog_us=5000, gc=fifo" in err, err
    assert not runs.exists()
    # the same drive, its parameters written another way, still loads
    same = f"sim:enterprise-sas?user_gb=.250&gc=greedy&load={state}"
    p = iolab("plan", "latency", "--quick", "--runs-dir", str(runs), "-t", same)
    assert p.returncode == 0, p.stdout + p.stderr
