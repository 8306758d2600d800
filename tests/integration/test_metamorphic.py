"""Metamorphic tests of the simulated SSDs through `iolab run --quick`: relations that must hold
between runs whatever the exact figures are, so a model or runner bug that moves a figure the
wrong way fails here even where no reference value exists.

Every test in the registry passes its own self-audit (the physical invariants, steady state only
on the drive's evidence among them: the audit the run stored at its end and one made again from
what it stored, as `iolab audit` makes it), quick with short cells, on the reference SSD preset
and on one of the other two in turn (SELF_AUDITS).

For every SSD preset, with Write Saturation (quick: a whole 0.5 GB copy, 4x its capacity written
from FOB, the last five intervals' mean IOPS as the figure):
- a drive whose target gives its size and the preset unsized give the same figure within 20 %
  (a quick run tests a copy of either, so both leave fresh-out-of-box);
- more over-provisioning never lowers steady write IOPS; a slower NAND program never raises it;
- the same seed gives the same cells to the last digit;
- two seeds differ by no more than `iolab check` allows (it flags no regression between them).
"""

from __future__ import annotations

import json
import re
import sqlite3
from functools import cache

import pytest

from iolab import _sim
from iolab.api import registry
from iolab.figures.audit import audit
from iolab.store.runstore import RunStore

from .conftest import iolab
from .test_rwsw import workload  # noqa: F401  (the RWSW tests' input: a small analysed trace)

SSDS = ("enterprise-sas", "entry-sata-compress", "client-nvme-slc")
# a monotone relation may be flat within the simulator's round-to-round wobble, never reversed by more
FLAT = 0.02


@cache
def wsat(spec: str, runs: str) -> tuple[float, str]:
    """(the window mean IOPS, the run directory) of a quick WSAT on `spec`."""
    p = iolab("run", "wsat", "--quick", "-t", spec, "--no-report", "--runs-dir", runs)
    assert p.returncode == 0, p.stderr
    m = re.search(r"│ IOPS, window mean \(last ≤5 intervals\)\s*│\s*([\d,]+)", p.stdout)
    assert m, p.stdout
    return float(m.group(1).replace(",", "")), re.search(r"run directory: (\S+)", p.stdout).group(1)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("metamorphic"))


def cells(run_dir: str) -> list[tuple]:
    db = sqlite3.connect(f"file:{run_dir}/results.db?mode=ro", uri=True)
    try:
        return db.execute(
            "SELECT phase, round, cell_key, iops, mbps, lat_mean_us, lat_max_us, write_bytes, counters "
            "FROM cells ORDER BY phase, round, ordinal"
        ).fetchall()
    finally:
        db.close()


@pytest.mark.parametrize("preset", SSDS)
def test_a_sized_drive_and_the_preset_give_the_same_quick_figure(preset, runs):
    sized, _ = wsat(f"sim:{preset}?user_gb=4", runs)
    unsized, _ = wsat(f"sim:{preset}", runs)
    assert abs(sized - unsized) <= 0.2 * unsized, (sized, unsized)


@pytest.mark.parametrize("preset", SSDS)
def test_more_over_provisioning_never_lowers_steady_write_iops(preset, runs):
    op = float(json.loads(_sim.describe(preset, []))["op"])
    low, _ = wsat(f"sim:{preset}?op={op:.6g}", runs)
    high, _ = wsat(f"sim:{preset}?op={op + 0.15:.6g}", runs)
    assert high >= low * (1 - FLAT), (low, high)


@pytest.mark.parametrize("preset", SSDS)
def test_a_slower_nand_program_never_raises_write_iops(preset, runs):
    base, _ = wsat(f"sim:{preset}?seed=7", runs)
    prog = float(dict(json.loads(_sim.describe(preset, []))["params"])["t_prog_us"])
    slow, _ = wsat(f"sim:{preset}?seed=7&t_prog_us={prog * 1.3:g}", runs)
    assert slow <= base * (1 + FLAT), (base, slow)


@pytest.mark.parametrize("preset", SSDS)
def test_the_same_seed_gives_the_same_cells_and_another_seed_stays_within_checks_noise(preset, tmp_path, runs):
    _, a = wsat(f"sim:{preset}?seed=11", runs)
    _, b = wsat(f"sim:{preset}?seed=11", str(tmp_path))  # a second run, not the cached one
    assert cells(a) == cells(b) and len(cells(a)) > 5
    _, c = wsat(f"sim:{preset}?seed=12", runs)
    assert cells(c) != cells(a)  # the seed reaches the model
    p = iolab("check", c, "--baseline", a)
    assert p.returncode == 0, p.stdout + p.stderr


TESTS = sorted(t.name for t in registry.all())
# Every test on the reference preset, and on one of the other two in turn (so each of those runs
# about half the tests, PTS and characterisation alike in the names' order): 42 runs, not every
# test on every preset's 63, which took 85 of the suite's ~1,700 test CPU-s (a suite that must end
# within 20 minutes on two cores). The tests made for a preset's mechanism run on that preset.
MADE_FOR = {"entropy": "entry-sata-compress", "slc-cache": "client-nvme-slc"}
SELF_AUDITS = [(t, p) for i, t in enumerate(TESTS) for p in (SSDS[0], MADE_FOR.get(t, SSDS[1 + i % 2]))]


@pytest.mark.parametrize(("test", "preset"), SELF_AUDITS)
def test_every_test_passes_its_self_audit_on_the_reference_preset_and_another(test, preset, workload, tmp_path):  # noqa: F811
    given = ("--workload", str(workload / "wl")) if registry.get(test).needs_workload else ()
    if test == "latency-bound":
        # in 100 ms cells a step measures a 99 % from 10,000 IOPS up; a 1 ms bound broken there
        # leaves no step it can judge (exit 2, as it should): a looser bound is met and judged
        given = ("--set", "bound=50ms")
    p = iolab(
        "run", test, *given, "--quick", "--cell-time", "100ms", "--max-rounds", "6", "--wsat-max-time", "5s",
        "-t", f"sim:{preset}", "--no-report", "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    run_dirs = re.findall(r"run directory: (\S+)", p.stdout)
    assert run_dirs, p.stdout[-2000:]
    # The audit in this process, not through `iolab audit` (its command line is test_audit_cli.py's):
    # 63 more commands cost ~20 CPU-s of interpreter start and imports, and audit the same way.
    for run_dir in run_dirs:
        st = RunStore.open(run_dir)
        try:
            stored, again = st.manifest.audit, audit(st)
        finally:
            st.close()
        assert stored.get("passed") is True, (run_dir, stored.get("failed") or stored)
        assert again.passed, (run_dir, again.summary())
