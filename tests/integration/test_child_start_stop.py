"""A stop passed on to a child `iolab` (a run of several --target) while the child's Python is
still starting: before, the Ctrl-C landed in Python's own start-up and the child died with
"Fatal Python error: init_import_site" (a KeyboardInterrupt while `site` was imported). The
child now starts with its stop signals blocked and takes the Ctrl-C once its handling is in
place: "interrupted", exit 130, as a Ctrl-C as any command starts.

Deterministic: each child waits in its start-up (a sitecustomize on its PYTHONPATH, imported by
`site`) until the test has seen both waiting and the stop has reached the child, delivered or
pending; no sleep decides anything."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from .conftest import IOLAB, SMALL_SIM, default_signals

# Imported by `site` in every Python this environment starts; it acts only in a child of several
# --target (IOLAB_RUN_DIRS_FILE, api/scaleout.py) of this test (IOLAB_TEST_CHILD_WAIT): it says it
# is there, then waits until a SIGINT reached it. Blocked, the signal is pending and the wait ends;
# delivered, it is a KeyboardInterrupt raised here, inside Python's start-up.
SITECUSTOMIZE = """
import os, signal, time
where = os.environ.get("IOLAB_TEST_CHILD_WAIT")
if where and os.environ.get("IOLAB_RUN_DIRS_FILE"):
    open(os.path.join(where, f"child-{os.getpid()}"), "w").close()
    deadline = time.monotonic() + 300
    while signal.SIGINT not in signal.sigpending() and time.monotonic() < deadline:
        time.sleep(0.01)
"""


def test_ctrl_c_passed_on_while_the_children_start_is_taken_by_each_once_it_can(tmp_path):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    waiting = tmp_path / "waiting"
    waiting.mkdir()
    runs = tmp_path / "runs"
    env = dict(os.environ, PYTHONPATH=str(hook), IOLAB_TEST_CHILD_WAIT=str(waiting), COLUMNS="200")
    args = ["run", "latency", "--quick", "--no-report", "--runs-dir", str(runs), "-t", f"{SMALL_SIM}&seed=1"]
    args += ["-t", f"{SMALL_SIM}&seed=2"]
    parent = subprocess.Popen(
        [*IOLAB, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=default_signals
    )
    try:
        deadline = time.monotonic() + 300
        while len(list(waiting.iterdir())) < 2:  # both children in their start-up, waiting
            assert parent.poll() is None, parent.communicate()
            assert time.monotonic() < deadline, "the children never started"
            time.sleep(0.01)
        parent.send_signal(signal.SIGINT)  # Ctrl-C: the parent passes it on to both
        out, err = parent.communicate(timeout=300)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    said = out + err
    assert "Fatal Python error" not in said and "Traceback" not in said, said
    assert parent.returncode == 130, said
    # each child took it as a Ctrl-C as it starts (main's "interrupted", exit 130), before a run began
    assert [ln.split("] ", 1)[1] for ln in err.splitlines() if "] " in ln] == ["interrupted"] * 2, err
    assert not runs.exists() or not any(runs.iterdir()), "a run began after the stop"
