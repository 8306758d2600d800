"""The path of `iolab run` (issue 34 item 3): follow the test's name, and the cell time, through
the calls of a real quick run made in this process, and count the modules they pass through and
the calls that climb back up to a higher layer.

How it is measured (sys.setprofile: every call of an iolab function while the command runs):
a call *carries* a value when one of its arguments (`self` included, or an item of a list or
tuple argument) is the value, or a record that holds it as a field (a TestDef's name, a
TestPlan's test, a Profile's cell_seconds, a Workload's duration_s). The modules crossed are
the distinct modules of the carrying calls made while the run's api function runs (the first
function of api/runs.py the command calls: `run_test` before issue 34, the `run_steps`
generator since, whose frame leaves at each step it yields). A *climb* is a carrying call from
a module of a lower layer into one of a higher layer (the layers of pyproject's import-linter
contract: a callback handed down, such as a progress display or a command's own function),
each pair of modules counted once however often a loop repeats it. `turns` (printed, not held)
also counts the steps of the sequence of carrying calls that go back to a higher layer than the
call before, as a hub does that calls its next helper after a deeper one has returned.

Measured on the main branch before this change: the name 15 modules and 2 climbs (api.runs ->
cli.main's on_plan, run.runner -> cli.progress's phase) and 8 turns; the cell time 13 modules, 2
climbs, 8 turns, and three field names (RunArgs.cell_time, Profile.cell_seconds,
Workload.duration_s). After it: the name 12 modules, 0 climbs, 7 turns; the cell time 12
modules, 1 climb (core.testparams -> a test's own quick scaling, in suites/), 8 turns, and two
field names.

The test's name is matched by equality: `latency-demand` is a quick built-in test whose name
appears nowhere else as a value (`iops` is also a metric's name, so every use of the metric
would be counted). The cell time is an odd value (0.37 s) given with --cell-time; the float
its text is parsed to is followed by identity, so a measured time that happens to be equal is
not taken for it.
"""

from __future__ import annotations

import dataclasses
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iolab.cli.app import app

PYPROJECT = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
LAYERS = next(c["layers"] for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["id"] == "layers")
TEST = "latency-demand"
CELL = 0.37


def rank(module: str) -> int:
    """0 for the top layer (cli) to 11 for core; a module outside the layers counts as core."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS) - 1


def fields_of(v: object) -> dict[str, object]:
    """An iolab record's fields (a dataclass, or a plain object of one of iolab's classes)."""
    if not type(v).__module__.startswith("iolab"):
        return {}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: getattr(v, f.name, None) for f in dataclasses.fields(v)}
    return dict(getattr(v, "__dict__", {}))


@dataclasses.dataclass
class Route:
    """The carrying calls as they ran: (module, function, the fields of a record that held the
    value, the module of the nearest iolab caller)."""

    stays: list[tuple[str, str, frozenset[str], str]] = dataclasses.field(default_factory=list)

    @property
    def modules(self) -> list[str]:
        return list(dict.fromkeys(m for m, _, _, _ in self.stays))

    @property
    def climbs(self) -> list[tuple[str, str]]:
        """Each (caller, callee) pair of modules where the callee's layer is above the caller's."""
        return list(dict.fromkeys((c, m) for m, _, _, c in self.stays if rank(m) < rank(c)))

    @property
    def turns(self) -> int:
        seq = [m for i, (m, _, _, _) in enumerate(self.stays) if i == 0 or self.stays[i - 1][0] != m]
        return len({(a, b) for a, b in zip(seq, seq[1:]) if rank(b) < rank(a)})

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(n for _, _, ns, _ in self.stays for n in sorted(ns)))

    def summary(self) -> str:
        return f"{len(self.modules)} modules {self.modules}; climbs {self.climbs}; {self.turns} turns"


class Follower:
    """Follows one value through the calls: `given` picks it out as the command line gives it."""

    def __init__(self, given: Callable[[object], bool]):
        self.given = given
        self.parsed: list[object] = []  # what a call given the value returned as a number: the value parsed
        self.whole, self.run = Route(), Route()

    def matches(self, v: object) -> bool:
        return self.given(v) or any(v is p for p in self.parsed)

    def carried(self, frame) -> tuple[bool, frozenset[str]]:
        """Whether the call carries the value, and the fields of the records that hold it."""
        code = frame.f_code
        n = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
        direct, fields = False, set()
        for name in code.co_varnames[:n]:
            v = frame.f_locals.get(name)
            for x in v if isinstance(v, (list, tuple)) else (v,):
                if self.matches(x):
                    direct = True
                else:
                    fields.update(f for f, fv in fields_of(x).items() if self.matches(fv))
        return direct or bool(fields), frozenset(fields)


def module_of(frame) -> str:
    return frame.f_globals.get("__name__", "") if frame is not None else ""


def caller_of(frame) -> str:
    """The module of the nearest iolab function below this call (past functools, contextlib...)."""
    f = frame.f_back
    while f is not None and not module_of(f).startswith("iolab."):
        f = f.f_back
    return module_of(f)


def follow(argv: list[str], followers: list[Follower]) -> None:
    """Run `iolab ARGV` here, each follower recording the calls that carry its value."""
    entry: list[object] = []  # the code of the run's api function, once the command calls it
    depth = [0]

    def profile(frame, event, arg):
        if event not in ("call", "return"):
            return
        module = module_of(frame)
        if not module.startswith("iolab."):
            return
        # the command imports api/runs.py first: its module code is not the run's function
        first = not entry and event == "call" and module == "iolab.api.runs" and frame.f_code.co_name != "<module>"
        if first and rank(caller_of(frame)) == 0:
            entry.append(frame.f_code)
        if entry and frame.f_code is entry[0]:  # a generator's frame returns at each yield, is called at each resume
            depth[0] += 1 if event == "call" else -1
        for f in followers:
            if event == "return":
                if isinstance(arg, float) and any(f.given(v) for v in frame.f_locals.values()):
                    f.parsed.append(arg)
                continue
            carried, fields = f.carried(frame)
            if carried:
                stay = (module, frame.f_code.co_qualname, fields, caller_of(frame))
                f.whole.stays.append(stay)
                if depth[0]:
                    f.run.stays.append(stay)

    sys.setprofile(profile)
    try:
        result = CliRunner().invoke(app, argv)
    finally:
        sys.setprofile(None)
    assert result.exit_code == 0, result.output
    assert entry, "the command called no function of api/runs.py"


@pytest.fixture(scope="module")
def followed(tmp_path_factory) -> tuple[Follower, Follower]:
    name = Follower(lambda v: isinstance(v, str) and v == TEST)
    cell = Follower(lambda v: isinstance(v, str) and v == f"{CELL}s")
    runs = tmp_path_factory.mktemp("runs")
    argv = ["run", TEST, "--quick", "--no-report", "-q", "--max-rounds", "3", "--cell-time", f"{CELL}s"]
    follow([*argv, "--runs-dir", str(runs), "-t", "sim:enterprise-sas?user_gb=0.25"], [name, cell])
    return name, cell


def test_the_test_name_runs_a_straight_path(followed) -> None:
    route = followed[0].run
    print("the test's name:", route.summary())
    assert len(route.modules) <= 12, route.summary()
    assert len(route.climbs) <= 4, route.summary()


def test_the_cell_time_runs_a_straight_path_under_one_name(followed) -> None:
    cell = followed[1]
    print("the cell time:", cell.run.summary(), "; its fields from the command line on:", cell.whole.names)
    assert len(cell.run.modules) <= 12, cell.run.summary()
    assert len(cell.run.climbs) <= 4, cell.run.summary()
    # cell_seconds from the command line to the plan; a workload's length is its duration_s
    # (the cell time, or what a test makes of it) up to the engine, which alone converts it
    assert cell.whole.names == ["cell_seconds", "duration_s"]
