"""Names of the files a workload directory holds and a run directory keeps of them: the
suites write them, reports and resume read them, and neither may import the other; and the
state file that makes a folder a fleet directory, which the write policy (targets/) reads too."""

import re

ANALYSIS_FILE = "analysis.json"
COMPOSITE_FILE = "composite.toml"
REPLAY_FILE = "replay.toml"
INPUTS_DIR = "inputs"  # inside a run directory: the input files as they were when the run started
POWER_FILE = "power.json"  # inside a run directory: a power meter's log aligned to its cells (`iolab power`)
METER_COPY = "power-meter.csv"  # beside power.json: the meter log those figures come from
FLEET_FILE = "fleet.json"  # a fleet directory's state (api/fleet.py writes it)
FLEET_SCHEMA = "iolab-fleet"  # its "schema" field, which tells a fleet directory from a folder of that file name
# `--runs-dir` sets IOLAB_RUNS for its command's length (cli/options.py); the value the user's shell
# had ("" for none) is kept in this variable, so that a command iolab suggests typing there
# (store/manifest.shell_runs_root) knows where it would write without --runs-dir
SHELL_RUNS_VAR = "IOLAB_RUNS_OF_SHELL"


def run_name_order(name: str) -> tuple[str | int, ...]:
    """A run directory's name as runs are ordered: runs started in one second are named X, X-2, …
    X-10 (store/runstore), which text order listed X, X-10, X-2; each group of ASCII digits is
    compared as a number (re.split keeps text at even places and numbers at odd ones, so a
    number is never compared with text)."""
    return tuple(int(p) if i % 2 else p for i, p in enumerate(re.split(r"([0-9]+)", name)))
