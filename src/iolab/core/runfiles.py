"""Names of the files a workload directory holds and a run directory keeps of them: the
suites write them, reports and resume read them, and neither may import the other; and the
state file that makes a folder a fleet directory, which the write policy (targets/) reads too."""

import re
from pathlib import Path

ANALYSIS_FILE = "analysis.json"
COMPOSITE_FILE = "composite.toml"
REPLAY_FILE = "replay.toml"
INPUTS_DIR = "inputs"  # inside a run directory: the input files as they were when the run started
POWER_FILE = "power.json"  # inside a run directory: a power meter's log aligned to its cells (`iolab power`)
METER_COPY = "power-meter.csv"  # beside power.json: the meter log those figures come from
FLEET_FILE = "fleet.json"  # a fleet directory's state (api/fleet.py writes it)
FLEET_SCHEMA = "iolab-fleet"  # its "schema" field, which tells a fleet directory from a folder of that file name
# `iolab export` (pages/export.py): its formats, and the table every export folder holds
EXPORT_FORMATS = ("csv", "json", "parquet")
EXPORT_CELLS = "cells"
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


def is_export(d: Path) -> bool:
    """`iolab export`'s folder: a run's manifest.json copied beside its tables (cells.csv …) and
    no results.db. A copy of a run's tables, not a run: the runs directory neither lists it (as a
    broken run) nor matches a run id to it."""
    return (
        (d / "manifest.json").is_file()
        and not (d / "results.db").exists()
        and any((d / f"{EXPORT_CELLS}.{fmt}").is_file() for fmt in EXPORT_FORMATS)
    )


def links_to_a_run_of(d: Path, root: Path) -> bool:
    """`d` is a symlink to another directory of the runs directory `root`: that run, listed and
    matched once under its own name, not a second run."""
    return d.is_symlink() and d.resolve() != d.absolute() and d.resolve().parent == root.resolve()


def not_a_run_of(d: Path, root: Path) -> bool:
    """What a runs directory holds that is not one more run: an export folder, a link to a run there."""
    return is_export(d) or links_to_a_run_of(d, root)
