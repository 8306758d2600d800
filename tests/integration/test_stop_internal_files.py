"""A stop just after iolab wrote one of its internal files (a repeat's --json document, the list of
run directories a run on several targets names, a data sample beside a captured trace): they were
written in place and marked after, so the stop left an unmarked file that the next write refused
as someone's data. They are now written beside their name and marked before they take it
(writepolicy.output_file). The stop lands as Ctrl-C would, right after the write returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.targets.files import read_mark

from .conftest import SMALL_SIM, default_signals

pytestmark = pytest.mark.integration

# `iolab ARGS` stopped (KeyboardInterrupt, as Ctrl-C lands) in place of the first call, for a
# file named MATCH, of what follows a write in writepolicy: the mark of a file written in place
# (mark_written), or the rename of one written aside (put_in_place). Either way the file's
# contents are written and nothing after that has run. Deterministic whatever the machine's speed.
STOP_AFTER_WRITE = """
import sys
from iolab.targets import writepolicy
from iolab.pages.report import stream_plots  # a writer that imported the mark by name
match, done = sys.argv[1], []
for name in ("mark_written", "put_in_place"):
    def stopped(*args, _real=getattr(writepolicy, name), **kwargs):
        if not done and match in repr(args):
            done.append(1)
            raise KeyboardInterrupt
        return _real(*args, **kwargs)
    for module in (writepolicy, stream_plots):
        if hasattr(module, name):
            setattr(module, name, stopped)
sys.argv = ["iolab", *sys.argv[2:]]
from iolab.cli.main import main
main()
"""


def as_a_child(env: dict[str, str], *args: str, stop: str | None = None) -> subprocess.CompletedProcess:
    """`iolab ARGS` as `run --repeat` or a run on several targets starts it (main(), the file it
    writes named in its environment), stopped right after it writes a file named `stop`."""
    script = ["-c", STOP_AFTER_WRITE, stop] if stop else ["-c", "from iolab.cli.main import main; main()"]
    return subprocess.run(
        [sys.executable, *script, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, COLUMNS="200", **env),
        preexec_fn=default_signals,
    )


def no_parts(d: Path) -> None:
    assert [f.name for f in d.iterdir() if f.name.endswith(".partial")] == []


def test_a_repeat_stopped_as_its_document_is_written_leaves_none_the_next_refuses(tmp_path):
    told = tmp_path / "repeat-1.json"
    env = {"IOLAB_OUTCOME_FILE": str(told)}
    run = ("run", "latency", "--quick", "-q", "--no-report", "-t", SMALL_SIM, "--runs-dir", str(tmp_path / "runs"))
    p = as_a_child(env, *run, "--json", stop=told.name)
    assert "Traceback" not in p.stderr and "Refusing" not in p.stderr, p.stderr
    # the stop left the document unwritten (its writer never finished), or iolab's: never an
    # unmarked file that the next write refuses as someone's data
    assert not told.exists() or read_mark(str(told)) == ("output", "--json document of a repeat")
    no_parts(tmp_path)
    p = as_a_child(env, *run, "--json")
    assert p.returncode == 0 and "Refusing" not in p.stderr, p.stderr
    assert json.loads(told.read_text())["exit_code"] == 0


def test_a_list_of_run_directories_stopped_as_it_is_written_is_still_appended_to(tmp_path):
    told = tmp_path / "0.json"
    env = {"IOLAB_RUN_DIRS_FILE": str(told)}
    runs = tmp_path / "runs"
    run = ("run", "latency", "--quick", "-q", "--no-report", "-t", SMALL_SIM, "--runs-dir", str(runs))
    p = as_a_child(env, *run, stop=told.name)
    assert "Traceback" not in p.stderr, p.stderr
    no_parts(tmp_path)
    p = as_a_child(env, *run)
    assert p.returncode == 0 and "Refusing" not in p.stderr, p.stderr
    # the second run's directory appended to what the list held
    said = [json.loads(line) for line in told.read_text().splitlines()]
    assert said[-1] in {str(d) for d in runs.iterdir()} and len(said) == len(set(said)), said
    assert read_mark(str(told)) == ("output", "list of run directories for several --target")


def test_an_analysis_stopped_as_a_plot_is_written_is_written_again(tmp_path):
    """`trace analyze --out DIR` wrote each plot in place, then marked it: stopped between the two,
    in a directory that was there before (whose files a failed analysis does not take away), the
    same command run again refused the plot as someone's data."""
    from .test_trace_analyze_refusals import spc_trace

    spc_trace(tmp_path / "t.spc")
    table = tmp_path / "t.parquet"
    imported = as_a_child({}, "trace", "import", str(tmp_path / "t.spc"), "--format", "spc", "--out", str(table))
    assert imported.returncode == 0, imported.stderr
    out = tmp_path / "analysis"
    out.mkdir()
    analyze = ("trace", "analyze", str(table), "--step", "1s", "--qd", "4", "--out", str(out))
    p = as_a_child({}, *analyze, stop="stream_map.svg")
    assert p.returncode == 130 and "Traceback" not in p.stderr, p.stderr
    plot = out / "plots" / "stream_map.svg"
    assert not plot.exists() or read_mark(str(plot)) == ("output", "plot")
    p = as_a_child({}, *analyze)
    assert p.returncode == 0 and "Refusing" not in p.stderr, p.stderr
    assert read_mark(str(plot)) == ("output", "plot")
    no_parts(plot.parent)
