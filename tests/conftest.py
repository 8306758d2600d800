"""How the suite runs in parallel (pytest-xdist, `--dist loadgroup`, as scripts/test runs it).

A test file stays on one worker: its tests may share module fixtures, ports and names. Files
that share something machine-wide, or an expensive session fixture, are one group, so they
never run side by side and the fixture is built once."""

from __future__ import annotations

import sys

import pytest

SHARED = {
    # the tracefs instance `iolab capture` uses has one name on the machine (a second capture is
    # refused while one runs); bench/capture_overhead.py's smoke run captures too
    "tracefs": ("test_capture.py", "test_every_command.py", "test_rwsw.py", "test_benches.py"),
    # the characterise run of conftest.characterise_on_a_file is read by all three (a session
    # fixture is built once per worker: a file outside the group ran the whole run again)
    "characterise": ("test_cli_characterise.py", "test_char_demand.py", "test_report_geometry.py"),
}


# Groups that take minutes, longest first: they are handed out before the rest (xdist would
# hand out the groups with the most tests first), so none starts late and becomes the long pole
# while the other workers sit idle. The VM boot (tests/vm) is by far the longest.
SLOW = (
    "test_drives.py",
    "test_cli_pts.py",
    "tracefs",
    "characterise",
    "test_resume.py",
    "test_hosts_safety.py",
    "test_automation.py",
    "test_scaleout.py",
    "test_ssh_hosts.py",
    "test_ssh_host_sharing.py",
    "test_sim_calibrate.py",
)


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

        def _assign_work_unit(self, node) -> None:
            if not getattr(self, "slow_first", False):
                slow = sorted(
                    (g for g in self.workqueue if g.rsplit("/", 1)[-1] in SLOW),
                    key=lambda g: SLOW.index(g.rsplit("/", 1)[-1]),
                    reverse=True,
                )
                for g in slow:
                    self.workqueue.move_to_end(g, last=False)
                self.slow_first = True
            super()._assign_work_unit(node)

    return ByGroup(config, log)


@pytest.fixture(autouse=True)
def _no_nbd_sizes_of_another_test():
    """A test's (often faked) nbdinfo is asked afresh: the process's answers (targets/spec.py
    NBD_SIZES) are another test's."""
    spec = sys.modules.get("iolab.targets.spec")
    if spec is not None:
        spec.NBD_SIZES.clear()


@pytest.fixture(autouse=True)
def _own_lock_dir(tmp_path_factory, monkeypatch):
    """Each test's runs claim their targets in a lock directory of its own (IOLAB_LOCK_DIR, which
    the iolab processes it starts inherit): a run a test kills leaves its lock file there, with the
    test's temporary files, not in the machine's /run/iolab/locks for `iolab runs` to list as
    stale. A test of the lock directory itself sets or removes the variable as it needs."""
    monkeypatch.setenv("IOLAB_LOCK_DIR", str(tmp_path_factory.mktemp("locks")))


@pytest.fixture(autouse=True)
def _no_runs_directory_of_another_test(monkeypatch):
    """No test starts with $IOLAB_RUNS, and whatever a command parsed inside this process set there
    is undone after it: `--runs-dir` sets the variable for its command's length, and
    test_docs_commands parsed `--runs-dir /lab/runs` without closing the command, so the next
    test's `iolab` child in that worker (the README's Python example, fc20) stored its run in
    /lab/runs. Tests that need the variable set it themselves."""
    for name in ("IOLAB_RUNS", "IOLAB_RUNS_OF_SHELL"):
        monkeypatch.delenv(name, raising=False)
