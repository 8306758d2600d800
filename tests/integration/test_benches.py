"""Benches that cannot rot: every bench in bench/ runs with `--smoke`, its tiny setting, as
users run it (`python bench/NAME.py`). A bench is any bench/*.py run as a script (it has a
`__main__` block); shared helpers (treetime.py) are not. A new bench without `--smoke` fails
here, and so does one the code under it has moved away from (bench/overhead.py passed the
engine a two-argument progress callback after the engine began to call it with three, and
crashed for months). The benches run two at a time (two cores); their figures are not checked,
only that each runs to its end without a traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
# Benches that make loop devices, network namespaces or mounts: run as root only (as the
# loop-device tests are).
NEEDS_ROOT = {"capture_overhead", "robustness", "scaleout"}


def benches() -> list[str]:
    return sorted(p.stem for p in BENCH.glob("*.py") if re.search(r"^if __name__ == .__main__.:", p.read_text(), re.M))


def runnable(name: str) -> bool:
    return name not in NEEDS_ROOT or os.geteuid() == 0


def smoke(name: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    try:
        return subprocess.run(
            [sys.executable, str(BENCH / f"{name}.py"), "--smoke"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(e.cmd, -9, str(e.stdout or ""), f"timed out after {e.timeout} s")


@pytest.fixture(scope="module")
def smoked() -> dict[str, subprocess.CompletedProcess[str]]:
    """Every runnable bench's smoke run, made once: the tests of what a bench prints read its run
    here (they ran sim_regress twice more, sim_speed and sim_iops again: ~6 CPU-s)."""
    names = [n for n in benches() if runnable(n)]
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(names, pool.map(smoke, names)))


def test_the_benches_are_found():
    found = benches()
    assert {"overhead", "json_overhead", "sim_regress"} <= set(found), found
    assert "treetime" not in found  # a helper the benches import, not a bench


@pytest.mark.parametrize("name", benches())
def test_every_bench_runs_its_smoke_setting(name, smoked):
    if not runnable(name):
        pytest.skip(f"bench/{name}.py needs root")
    res = smoked[name]
    out = res.stdout + res.stderr
    assert res.returncode == 0, f"bench/{name}.py --smoke exited {res.returncode}:\n{out[-3000:]}"
    assert "Traceback" not in out, out[-3000:]
    assert res.stdout.strip(), f"bench/{name}.py --smoke printed no figures"


def test_sim_regress_prints_the_default_presets_beside_the_mechanisms_off_drive(smoked):
    # The default preset as it ships is what a user's run costs (issue 35): its line must be
    # there, with a ratio and both builds' rates, beside the mechanisms-off line.
    out = smoked["sim_regress"].stdout
    assert re.search(r"^op 0\.28: CPU new/old \d+\.\d+x", out, re.M), out
    line = re.search(
        r"^default preset, op 0\.28: CPU new/old (\d+\.\d+)x .*old (\d+\.\d+), new (\d+\.\d+) M IO", out, re.M
    )
    assert line and all(float(g) > 0 for g in line.groups()), out
    # and how much of that ratio is the model's work (flash written per host write) and how much the code
    split = re.search(
        r"^default preset, .*flash written per host write (\d+\.\d+)x; CPU per chunk written (\d+\.\d+)x", out, re.M
    )
    assert split and all(float(g) > 0 for g in split.groups()), out
    # and the default preset with its GC starting at the reserve, as the old build's does: the
    # same flash work per host write (docs/simulator.md, "Flash written per host write")
    same = re.search(
        r"^default preset, op 0\.28, gc_start_pct=0: CPU new/old (\d+\.\d+)x .*flash written per host write (\d+\.\d+)x",
        out,
        re.M,
    )
    assert same and all(float(g) > 0 for g in same.groups()), out


def test_the_simulator_benches_print_each_figure_beside_its_goal(smoked):
    # Issue 35: the simulator's speed figures, each measured in one run, beside its goal.
    assert re.search(
        r"^default preset, op 0\.28: CPU new/old \d+\.\d+x \(goal <= 1\.00x", smoked["sim_regress"].stdout, re.M
    )
    assert "write / goal (>= 6 M IO/s at 400 GB)" in smoked["sim_speed"].stdout
    out = smoked["sim_iops"].stdout
    assert re.search(r"^this build: \d+\.\d CPU-s .*\(goal <= 150 ", out, re.M), out
    assert re.search(r"^  this .* raw outputs, digest [0-9a-f]{16}$", out, re.M), out
    # and where that CPU went: the engine's phases and the rest of the process tree, which add up
    phases = re.search(r"^    CPU-s by phase: (.*); rounds ", out, re.M)
    assert phases, out
    parts = [float(v) for v in re.findall(r" (-?\d+\.\d) \(", phases[1])]
    total = float(re.search(r"^  this +(\d+\.\d) CPU-s", out, re.M)[1])
    assert len(parts) == 7 and abs(sum(parts) - total) <= 0.1 * 7, out
