"""The storage tests iolab knows: one line per test, naming the module that declares it
(its `TEST = TestDef(...)`). Modules are imported when a test is first asked for, so
`iolab --help` imports no test. `register` adds a test declared elsewhere (a plug-in, or a
test of the test suite) for the life of the process.

Nothing here imports pages/ or figures/compare; only this module and the api modules that ask it
(api/runs.py, api/reports.py, api/comparisons.py) map names to tests.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from iolab.core.errors import IolabError

if TYPE_CHECKING:  # the names alone: `iolab --help` lists the tests without these modules
    from iolab.core.plan import Profile, TestPlan
    from iolab.suites.testdef import TestDef
    from iolab.targets import Target

MODULES = {
    "iops": "iolab.suites.pts_iops",
    "throughput": "iolab.suites.pts_throughput",
    "latency": "iolab.suites.pts_latency",
    "wsat": "iolab.suites.pts_wsat",
    "hir": "iolab.suites.pts_hir",
    "xsr": "iolab.suites.pts_xsr",
    "dirth": "iolab.suites.pts_dirth",
    "cbw": "iolab.suites.pts_cbw",
    "multi-wsat": "iolab.suites.rwsw_multi_wsat",
    "streams-wsat": "iolab.suites.rwsw_streams_wsat",
    "replay": "iolab.suites.rwsw_replay",
    "dirth-rwsw": "iolab.suites.rwsw_dirth",
    "latency-demand": "iolab.suites.char_demand",
    "qos": "iolab.suites.char_qos",
    "max-iops": "iolab.suites.char_maxiops",
    "rw-matrix": "iolab.suites.char_matrix",
    "mixed-matrix": "iolab.suites.char_mixed",
    "entropy": "iolab.suites.char_entropy",
    "consistency": "iolab.suites.char_consistency",
    "slc-cache": "iolab.suites.char_slc",
    "latency-bound": "iolab.suites.scale_latbound",
}

_registered: dict[str, TestDef] = {}
_checked: set[str] = set()  # built-in tests whose functions were checked against the contract

__all__ = ["TestDef", "register", "unregister", "get", "find", "all", "names", "sequence", "sequences", "build_plan"]


def register(test: TestDef) -> TestDef:
    """Make `test` known to every command in this process (after the built-in tests)."""
    if test.name in MODULES or test.name in sequences():
        raise IolabError(f"test {test.name!r}: the name is taken by a built-in test or sequence.")
    _registered[test.name] = check(test)
    return test


def check(test: TestDef) -> TestDef:
    """`test`, once its declared functions are found to keep TestDef's contract (as pluggy checks
    a hook's implementation against its specification when it is registered): a function of
    the wrong signature is refused here, naming the test, the field and the call it must take."""
    from iolab.suites.testdef import contract_problems

    problems = contract_problems(test)
    if problems:
        raise IolabError(
            f"test {test.name!r}: its declaration breaks the TestDef contract (iolab/suites/testdef.py CONTRACT): "
            + "; ".join(problems)
            + ". The test is refused; nothing was run or written."
        )
    return test


def __getattr__(name: str):
    # TestDef is named here for callers (__all__), but imported only when asked for: the suites
    # package (plans, targets) is most of what `iolab --help` or `iolab runs` would import
    if name == "TestDef":
        from iolab.suites.testdef import TestDef

        return TestDef
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def unregister(name: str) -> None:
    _registered.pop(name, None)


def names() -> list[str]:
    return [*MODULES, *_registered]


def find(name: str) -> TestDef | None:
    """The test of this name, or None (a stored run of a test this process does not know is
    shown with the generic views)."""
    if name in _registered:
        return _registered[name]
    if name not in MODULES:
        return None
    test = import_module(MODULES[name]).TEST
    if test.name != name:
        raise IolabError(f"{MODULES[name]} declares test {test.name!r}, registered as {name!r}.")
    if name not in _checked:
        _checked.add(check(test).name)
    return test


def get(name: str) -> TestDef:
    test = find(name)
    if test is None:
        seqs = "".join(f", '{s}'" for s in sequences())
        raise IolabError(
            f"test {name!r}: unknown; choose one of {', '.join(names())}{seqs} "
            "(a sequence runs its tests in order; `iolab tests` lists them all)."
        )
    return test


def current_figure(name: str, test: str | None = None) -> str:
    """A key figure's name now: `name` itself, or the name a test (`test`, else any) renamed it
    to (TestDef.renamed_figures), so what was saved or typed under the old name still finds it."""
    for t in [find(test)] if test is not None else all():
        renamed = dict(t.renamed_figures) if t is not None else {}
        if name in renamed:
            return renamed[name]
    return name


def all() -> list[TestDef]:  # noqa: A001 - the registry's own vocabulary
    return [get(n) for n in names()]


def sequences() -> list[str]:
    """Sequence names, in the order of their first test. Built-in tests declare theirs; the
    built-in sequences are known without importing a test module."""
    return list(
        dict.fromkeys(["pts", "rwsw", "characterise", *(t.sequence for t in _registered.values() if t.sequence)])
    )


def sequence(name: str, everything: bool = False) -> list[TestDef]:
    """The tests `iolab run NAME` runs, in registry order: a sequence's members (the optional
    ones too with `everything`, i.e. --all), or the one test."""
    if name in sequences():
        return [t for t in all() if t.sequence == name and (everything or not t.optional)]
    if everything:
        raise IolabError(
            f"--all: {name!r} is one test; --all runs every test of a sequence ({', '.join(sequences())})."
        )
    return [get(name)]


def build_plan(name: str, profile: Profile, target: Target, workload: str | Path | None = None) -> TestPlan:
    """The plan of one test. `workload` is the input of the tests that need one (the RWSW
    tests: the `iolab trace analyze` output directory or one of its files)."""
    test = get(name)
    if test.needs_workload and workload is None:
        raise IolabError(
            f"test {name}: needs --workload PATH, the directory written by `iolab trace analyze TRACE "
            "--out DIR` (or its composite.toml / replay.toml)."
        )
    if not test.needs_workload and workload is not None:
        takers = ", ".join(t.name for t in all() if t.needs_workload)
        raise IolabError(f"test {name}: takes no --workload (only {takers} do).")
    if int(target.capacity * profile.active_range) < 1:
        # a range that rounds to no byte of the target failed inside a workload ("workload '':
        # active range must be in (0, 1]") though the option's own check had taken it
        from iolab.core.units import given

        raise IolabError(
            f"active range (--active-range): {given(profile.active_range * 100)}% of {target.spec} "
            f"({target.capacity:,} B) is less than one byte; give a larger percentage (enterprise uses "
            "100%, client 75%). Nothing was run or written."
        )
    return test.build(profile, target, Path(workload) if workload is not None else None)
