"""`iolab resume` goes on with the file a run measured when its target was given by a relative
path: the run started in one directory with file:target.img was refused from any other, as
'the target is not the one the run wrote (dev was 65024, now None; inode was ...; missing was
None, now True; path was '/…/a/target.img', now '/…/b/target.img' ...)'."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from iolab.api.runlist import list_runs

from .conftest import IOLAB


def test_a_run_on_a_relative_file_path_resumes_from_another_directory(scratch):
    here, elsewhere, runs = scratch / "a", scratch / "b", scratch / "runs"
    here.mkdir()
    elsewhere.mkdir()
    run = ["run", "latency", "--quick", "--cell-time", "200ms", "--max-rounds", "5", "--no-report"]
    cmd = [*IOLAB, *run, "-t", "file:target.img?size=64MiB", "--runs-dir", str(runs)]
    proc = subprocess.Popen(cmd, cwd=here, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            if any("main-r02-c01" in p.name for p in runs.glob("*/raw/*")):
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the run ended before the kill point"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    [stopped] = list_runs(runs)
    assert stopped.state == "interrupted"
    res = subprocess.run(
        [*IOLAB, "resume", str(stopped.path), "--no-report", "-q"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=900,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert list(elsewhere.iterdir()) == []  # no file made where the relative path would point now
    m = json.loads((stopped.path / "manifest.json").read_text())
    assert m["state"] == "complete" and m["target"]["spec"] == "file:target.img?size=64MiB"  # named as given
    assert m["target"]["identity"]["path"] == str((here / "target.img").resolve())
