"""How the suite runs in parallel (pytest-xdist, `--dist loadgroup`, as scripts/test runs it).

A test file stays on one worker: its tests may share module fixtures, ports and names. Files
that share something machine-wide, or an expensive session fixture, are one group, so they
never run side by side and the fixture is built once."""

from __future__ import annotations

import pytest

SHARED = {
    # the tracefs instance `iolab capture` uses has one name on the machine
    "tracefs": ("test_capture.py", "test_every_command.py", "test_rwsw.py"),
    # the characterise run of conftest.characterise_on_a_file is read by both
    "characterise": ("test_cli_characterise.py", "test_char_demand.py"),
}


def group_of(nodeid: str) -> str:
    """The worker-sharing group of a test: its file's, or the SHARED group naming the file."""
    path = nodeid.split("::", 1)[0]
    return next((g for g, files in SHARED.items() if path.rsplit("/", 1)[-1] in files), path)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    # xdist's own loadgroup reads xdist_group marks into the node id through an attribute this
    # pytest no longer has, so the marks did nothing and a file's tests ran on every worker
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return ByGroup(config, log)
