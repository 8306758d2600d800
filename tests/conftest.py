"""How the suite runs in parallel (pytest-xdist, `--dist loadfile`, as scripts/test runs it).

A test file stays on one worker: its tests may share module fixtures, ports and names. What
tests in different files share machine-wide is taken under a lock file for the length of
each test, so two workers never use it at once."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

# the tracefs instance `iolab capture` uses has one name on the machine
SHARED = {"tracefs": ("test_capture.py", "test_every_command.py", "test_rwsw.py")}
LOCKS = Path("/tmp")


@pytest.fixture(autouse=True)
def _machine_wide(request):
    held = [name for name, files in SHARED.items() if request.node.path.name in files]
    fds = []
    try:
        for name in held:
            f = open(LOCKS / f"iolab-tests-{name}.lock", "a")
            fcntl.flock(f, fcntl.LOCK_EX)
            fds.append(f)
        yield
    finally:
        for f in fds:
            f.close()
