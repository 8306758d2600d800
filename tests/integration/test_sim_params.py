"""A simulated drive's parameters as a firmware engineer sets them, from the command line: a
saved state loads only into the drive it was saved from, impossible values are refused naming
the parameter (never a crash), and the documented defaults are the presets' own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import iolab, saved_sim_state
from .test_hostile_input import files_under, refused

pytestmark = pytest.mark.integration
ROOT = Path(__file__).parents[2]


def test_a_state_loads_only_into_a_drive_of_the_parameters_it_was_saved_with(scratch):
    """A state saved from enterprise-sas loaded into `...&t_prog_us=5000&gc=fifo` ran the saved
    drive (greedy, 1,150 µs programs: every figure the same as without them, exit 0) while the
    run recorded the target's parameters."""
    state = saved_sim_state(scratch)
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


def _documented_defaults() -> dict[str, dict[str, str]]:
    """docs/simulator.md's "Mechanism parameters and defaults" table: {preset: {param: value}}.
    A row names one parameter or several (`a` × `b`, `a` / `b`), each cell as many values, or
    one that says the mechanism is off (its first parameter's value); "(off)" states none."""
    text = (ROOT / "docs/simulator.md").read_text()
    table = text.split("## Mechanism parameters and defaults", 1)[1].split("\n\n", 2)[1]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()]
    presets, out = rows[0][1:-1], {}
    for row in rows[2:]:
        names = re.findall(r"`([a-z_]+)`", row[0])
        for preset, cell in zip(presets, row[1:-1], strict=True):
            values = [re.sub(r"\s*\(.*\)", "", v).replace(",", "") for v in re.split(r" × | / ", cell)]
            for name, value in zip(names, values, strict=False):
                if value:
                    out.setdefault(preset, {})[name] = value
    return out


def test_the_documented_mechanism_defaults_are_the_presets_own():
    """The table gave entry-sata-compress's gc_start_pct as 0; the preset starts GC at 10 %
    (a change made for its QD1 write tail after a sequential fill), which `iolab sim presets`
    shows."""
    documented = _documented_defaults()
    assert set(documented) == {"enterprise-sas", "entry-sata-compress", "client-nvme-slc"}, documented
    for preset, values in documented.items():
        p = iolab("sim", "presets", preset)
        assert p.returncode == 0, p.stderr
        shown = dict(re.findall(r"│ ([a-z_]+) +│ ([^ │]+)", p.stdout))
        wrong = {k: (v, shown.get(k)) for k, v in values.items() if float(v) != float(shown[k])}
        assert not wrong, f"{preset}: documented, shown: {wrong}"


@pytest.mark.parametrize(
    ("target", "says"),
    [
        # the run aborted allocating 34 GB (buffer) or 885 GB (a per-second series), exit 134
        ("sim:enterprise-sas?user_gb=0.25&buffer_kib=1e300", "buffer_kib=1e300 must be at most 1048576 (1 GiB)"),
        ("sim:enterprise-sas?user_gb=0.25&overhead_us=1e300", "overhead_us=1e300 must be at most 3600000000"),
        ("sim:sata-7200-hdd?capacity_gb=0.5&cache_mib=1e300", "cache_mib=1e300 must be at most 4096 (4 GiB)"),
        # never ended / wrapped the clock and printed the default drive's figures, exit 0
        ("sim:enterprise-sas?user_gb=0.25&link_mbps=1e-300", "link_mbps=1e-300 must be at least 1 MB/s"),
        ("sim:enterprise-sas?user_gb=0.25&channel_mbps=1e-300", "channel_mbps=1e-300 must be at least 1 MB/s"),
        ("sim:sata-7200-hdd?capacity_gb=0.5&rpm=1e-300", "rpm=1e-300 must be at least 0.01666"),
        # "greater than zero", then rounded to a read of 0 ns
        ("sim:enterprise-sas?user_gb=0.25&t_read_us=1e-9", "t_read_us=1e-9 must be at least 0.001 (a nanosecond)"),
        # a share past its bound says it is one, as a size's bound says its size
        ("sim:enterprise-sas?user_gb=0.25&time_spread_pct=95", "time_spread_pct=95 must be at most 90 (a percentage)"),
    ],
)
def test_an_impossible_time_rate_or_buffer_is_refused_before_the_run(scratch, target, says):
    before = files_under(scratch)
    p = iolab(
        "run", "latency", "--quick", "--no-report", "--runs-dir", str(scratch / "runs"), "-t", target, timeout=120
    )
    err = refused(p, scratch, before)  # exit 2, one paragraph, no run directory
    assert says in err and "backtrace" not in err, err


def test_a_drive_too_small_for_the_slc_cache_given_names_the_cache():
    """user_gb=8&slc_gb=0.5 on client-nvme-slc (without slc_gb, or with 0.1, the drive is
    taken) was told only that user_gb=8 is too small: the cache the user asked for is what
    takes the spare blocks, and lowering it is the other way out."""
    p = iolab("plan", "iops", "--quick", "-t", "sim:client-nvme-slc?user_gb=8&slc_gb=0.5")
    said = " ".join(p.stderr.split())
    assert p.returncode == 2, p.stdout + p.stderr
    assert "the smallest user_gb it takes here is 16, or lower slc_gb=0.5, which takes spare blocks" in said, said
    p = iolab("plan", "iops", "--quick", "-t", "sim:client-nvme-slc?user_gb=8&slc_gb=0.1")
    assert p.returncode == 0, p.stdout + p.stderr
