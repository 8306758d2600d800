"""`iolab resume` goes on with the file a run measured when its target was given by a relative
path: the run started in one directory with file:target.img was refused from any other, as
'the target is not the one the run wrote (dev was 65024, now None; inode was ...; missing was
None, now True; path was '/…/a/target.img', now '/…/b/target.img' ...)'."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from .conftest import IOLAB
from .test_resume import run_and_kill


def resume_from(cwd: Path, run: Path) -> subprocess.CompletedProcess:
    """`iolab resume RUN` typed in `cwd`."""
    return subprocess.run(
        [*IOLAB, "resume", str(run), "--no-report", "-q"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        env=dict(os.environ, COLUMNS="200"),
    )


def test_a_run_on_a_relative_file_path_resumes_from_another_directory(scratch):
    here, elsewhere, runs = scratch / "a", scratch / "b", scratch / "runs"
    here.mkdir()
    elsewhere.mkdir()
    # 3 rounds: the resume goes on from round 2 to the end, 9 cells after the kill point's round
    # where 5 rounds measured 27 more (the rounds' figures are not what is checked)
    run = ("latency", "--cell-time", "200ms", "--max-rounds", "3", "-t", "file:target.img?size=64MiB")
    stopped = run_and_kill(scratch, runs, "main-r02-c01", run, cwd=here)
    res = resume_from(elsewhere, stopped)
    assert res.returncode == 0, res.stdout + res.stderr
    assert list(elsewhere.iterdir()) == []  # no file made where the relative path would point now
    m = json.loads((stopped / "manifest.json").read_text())
    assert m["state"] == "complete" and m["target"]["spec"] == "file:target.img?size=64MiB"  # named as given
    assert m["target"]["identity"]["path"] == str((here / "target.img").resolve())


def test_a_refusal_gives_the_new_run_the_file_the_run_measured(scratch):
    """The run's file replaced by another: the refusal's 'Start a new run: iolab run ... -t
    file:target.img?size=64MiB' kept the relative path, which from another directory names
    another file; it gives the path the run resolved, so it works wherever it is typed."""
    here, elsewhere, runs = scratch / "a", scratch / "b", scratch / "runs"
    here.mkdir()
    elsewhere.mkdir()
    run = ("latency", "--cell-time", "200ms", "--max-rounds", "5", "-t", "file:target.img?size=64MiB")
    stopped = run_and_kill(scratch, runs, "main-r02-c01", run, cwd=here)
    target = here / "target.img"
    target.rename(here / "old.img")
    target.write_bytes(b"\0" * 4096)  # another file (another inode) where the run's was
    res = resume_from(elsewhere, stopped)
    said = " ".join(res.stderr.split())
    assert res.returncode == 2 and "not the one the run wrote" in said, res.stdout + res.stderr
    again = f"iolab run latency --quick -t 'file:{target.resolve()}?size=64MiB' --runs-dir {runs.resolve()}"
    assert said.endswith(f"Start a new run: {again}"), said
