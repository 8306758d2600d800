"""The path of `iolab run` (issue 34 item 3): follow the test's name, and the cell time, through
the calls of a real quick run, made in this process, and count the modules they pass through
and how often the path turns back up to a higher layer.

How it is measured (sys.setprofile, every call of an iolab function while the run lasts):
a call *carries* a value when one of its arguments (`self` included) is the value, or a record
that holds it as a field (a TestDef's name, a TestPlan's test, a Profile's cell_seconds, a
Workload's duration). The carrying calls, in the order they ran, are a sequence of modules; the
modules crossed are the distinct ones from `api.runs.run_test` on, and a *climb* is a step of
that sequence from a module of one layer to a module of a higher layer (architecture.md's
order; a callback handed down, or a hub calling its next helper after a deeper one returned),
each pair of modules counted once however often a loop repeats it.

The test's name is matched by equality: `latency-demand` is the name of a quick built-in test
that appears nowhere else as a value (an identifier-like name such as `iops` is also a metric
and a page key, and a literal equal to it would be counted wherever it is used). The cell time
is an odd value (0.37 s) given with --cell-time, so no other number of the run is taken for it.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from iolab.cli.main import app

LAYERS = (
    "cli",
    "automation",
    "api",
    "suites",
    "run",
    "pages",
    "figures",
    "engines",
    "store",
    "traces",
    "targets",
    "core",
)
TEST = "latency-demand"
CELL = 0.37


def rank(module: str) -> int:
    """0 for the top layer (cli) to 11 for core."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else LAYERS.index("core")


def _fields(v: object) -> dict[str, object]:
    """An iolab record's fields (dataclasses and plain objects of iolab's own classes)."""
    if not type(v).__module__.startswith("iolab"):
        return {}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: getattr(v, f.name, None) for f in dataclasses.fields(v)}
    return dict(getattr(v, "__dict__", {}))


@dataclasses.dataclass
class Path_:
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
        """Steps of the sequence of carrying calls back to a higher layer than the call before
        (a hub calling its next helper after a deeper one returned, as well as a callback)."""
        seq = [m for i, (m, _, _, _) in enumerate(self.stays) if i == 0 or self.stays[i - 1][0] != m]
        return len(set((a, b) for a, b in zip(seq, seq[1:]) if rank(b) < rank(a)))

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(n for _, _, ns, _ in self.stays for n in sorted(ns)))


def follow(argv: list[str], given: Callable[[object], bool]) -> tuple[Path_, Path_]:
    """Run `iolab ARGV` here; the calls that carry a value `given` picks out, of the whole
    command and of the run's api function (the first function of api/runs.py that the cli layer
    runs: `run_test` before issue 34, the `run_steps` generator since) while it runs. What a call given the value returns as a number is that
    value parsed (the cell time's text made seconds): that very object is followed on, so a
    measured time that happens to be equal to it is not."""
    whole, inner = Path_(), Path_()
    parsed: list[object] = []

    def matches(v: object) -> bool:
        return given(v) or any(v is p for p in parsed)

    entry: list[object] = []  # the code of the run's api function, once called
    depth = [0]

    def carries(frame) -> tuple[bool, frozenset[str]]:
        """Whether the call carries the value, and the record fields that hold it."""
        code = frame.f_code
        n = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
        given, fields = False, set()
        for name in code.co_varnames[:n]:
            v = frame.f_locals.get(name)
            for x in v if isinstance(v, (list, tuple)) else (v,):
                if matches(x):
                    given = True
                else:
                    fields.update(f for f, fv in _fields(x).items() if matches(fv))
        return given or bool(fields), frozenset(fields)

    def caller(frame) -> str:
        f = frame.f_back
        while f is not None and not f.f_globals.get("__name__", "").startswith("iolab."):
            f = f.f_back
        return f.f_globals["__name__"] if f is not None else ""

    def code_of_a_function(frame) -> bool:
        return frame.f_code.co_name != "<module>"  # the command imports api/runs.py first

    def profile(frame, event, arg):
        if event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        if (
            not entry
            and event == "call"
            and module == "iolab.api.runs"
            and code_of_a_function(frame)
            and rank(caller(frame)) == 0
        ):
            entry.append(frame.f_code)
        if entry and frame.f_code is entry[0]:  # a generator's frame returns at each yield, is called at each resume
            depth[0] += 1 if event == "call" else -1
        if not module.startswith("iolab."):
            return
        if event == "return":
            if isinstance(arg, float) and any(given(v) for v in frame.f_locals.values()):
                parsed.append(arg)
            return
        carried, fields = carries(frame)
        if carried:
            stay = (module, frame.f_code.co_qualname, fields, caller(frame))
            whole.stays.append(stay)
            if depth[0]:
                inner.stays.append(stay)

    sys.setprofile(profile)
    try:
        result = CliRunner().invoke(app, argv)
    finally:
        sys.setprofile(None)
    assert result.exit_code == 0, result.output
    return whole, inner


def quick_run(tmp_path: Path) -> list[str]:
    return [
        "run",
        TEST,
        "--quick",
        "--no-report",
        "-q",
        "--max-rounds",
        "3",
        "--cell-time",
        f"{CELL}s",
        "--runs-dir",
        str(tmp_path),
        "-t",
        "sim:enterprise-sas?user_gb=0.25",
    ]


def test_the_test_name_runs_a_straight_path(tmp_path: Path) -> None:
    _, path = follow(quick_run(tmp_path), lambda v: isinstance(v, str) and v == TEST)
    print("name:", len(path.modules), "modules", path.modules, len(path.climbs), "climbs", path.climbs, path.turns, "turns")

    assert len(path.modules) <= 12, path.modules
    assert len(path.climbs) <= 4, path.climbs


def test_the_cell_time_runs_a_straight_path_under_one_name(tmp_path: Path) -> None:
    whole, path = follow(quick_run(tmp_path), lambda v: isinstance(v, str) and v == f"{CELL}s")
    print("cell time:", len(path.modules), "modules", path.modules, len(path.climbs), "climbs", path.climbs, path.turns, "turns")
    print("its field names from the command line on:", whole.names)

    assert len(path.modules) <= 12, path.modules
    assert len(path.climbs) <= 4, path.climbs
