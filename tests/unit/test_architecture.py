"""The house rules that keep the code walkable: no module over ~500 lines, no import cycle
between iolab's modules, counting imports inside functions too (a lazy import only hides a
cycle; it does not remove the tangle), and no import against the layers docs/architecture.md
documents (data flows plan -> runner -> engine -> store -> report, one way)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "iolab"
MAX_LINES = 500


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """iolab modules that `name` imports anywhere in its text. `from pkg import sub` names
    the submodule when `sub` is one, otherwise the package itself."""
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("iolab"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:
                    found.add(sub)
                elif target in known:
                    found.add(target)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_between_iolab_modules():
    found = cycles(import_graph())
    assert not found, "import cycles (counting imports inside functions):\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_cycle_through_a_lazy_import(tmp_path):
    # The check above must be able to fail: a package whose submodule imports back into the
    # package's __init__ from inside a function is a cycle.
    pkg = tmp_path / "iolab"
    (pkg / "engines").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "engines" / "__init__.py").write_text("def f():\n    from .fio import X\n")
    (pkg / "engines" / "fio.py").write_text("from . import check\n")
    global SRC, PACKAGE
    saved = SRC, PACKAGE
    SRC, PACKAGE = tmp_path, pkg
    try:
        assert cycles(import_graph()) == [["iolab.engines", "iolab.engines.fio"]]
    finally:
        SRC, PACKAGE = saved


# (importer, imported, why): a module whose name is, or is under, the first may not import
# one that is, or is under, the second. Each line is a sentence of docs/architecture.md.
FORBIDDEN = [
    *[
        (
            low,
            "iolab.registry",
            "only the api and the CLI ask the test registry; the layers below are handed "
            "what they need (e.g. build_plan, engine_for)",
        )
        for low in (
            "iolab.runner",
            "iolab.runstart",
            "iolab.resume",
            "iolab.store",
            "iolab.resultsdb",
            "iolab.engines",
            "iolab.report",
            "iolab.compare",
            "iolab.compare_pages",
            "iolab.suites",
            "iolab.targets",
            "iolab.plan",
            "iolab.decide",
            "iolab.steady",
            "iolab.export",
            "iolab.scaleout",
            "iolab.watch",
            "iolab.textreport",
            "iolab.summary",
        )
    ],
    *[
        (low, "iolab.suites", "reports and comparisons read the plan stored in the run, never today's suite code")
        for low in ("iolab.report", "iolab.compare", "iolab.compare_pages")
    ],
    *[
        (low, "iolab.api", "the api is the top of the library: only the CLI (and the multi-run driver) use it")
        for low in (
            "iolab.runner",
            "iolab.runstart",
            "iolab.resume",
            "iolab.store",
            "iolab.resultsdb",
            "iolab.engines",
            "iolab.report",
            "iolab.compare",
            "iolab.compare_pages",
            "iolab.suites",
            "iolab.targets",
            "iolab.registry",
        )
    ],
    *[
        (low, "iolab.cli", "the CLI is the top: nothing imports it")
        for low in ("iolab.api", "iolab.report", "iolab.runner", "iolab.runstart", "iolab.suites")
    ],
    *[
        (low, up, "an engine runs one workload and never knows the test, round or store")
        for low in ("iolab.engines",)
        for up in (
            "iolab.runner",
            "iolab.runstart",
            "iolab.store",
            "iolab.resultsdb",
            "iolab.report",
            "iolab.suites",
            "iolab.compare",
            "iolab.compare_pages",
            "iolab.plan",
        )
    ],
    *[
        (low, up, "the runner executes any plan and never knows which test it serves or how it is shown")
        for low in ("iolab.runner", "iolab.runstart")
        for up in ("iolab.suites", "iolab.report", "iolab.compare", "iolab.compare_pages", "iolab.textreport")
    ],
    *[
        (low, up, "the store keeps what was measured and knows nothing above it")
        for low in ("iolab.store", "iolab.resultsdb")
        for up in (
            "iolab.runner",
            "iolab.runstart",
            "iolab.engines",
            "iolab.suites",
            "iolab.report",
            "iolab.compare",
            "iolab.compare_pages",
        )
    ],
    *[
        ("iolab.targets", up, "targets describe what is tested, below the runner and the engines")
        for up in (
            "iolab.runner",
            "iolab.runstart",
            "iolab.engines",
            "iolab.suites",
            "iolab.report",
            "iolab.store",
            "iolab.resultsdb",
        )
    ],
    *[
        (
            "iolab.compare",
            up,
            "the comparison figures (compare/) are below report/, which may use them, and below the comparison pages",
        )
        for up in ("iolab.report", "iolab.compare_pages")
    ],
    (
        "iolab.report",
        "iolab.compare_pages",
        "the comparison pages (compare_pages/) are above report/: they are built from its pages, never the other way",
    ),
]


def under(name: str, prefix: str) -> bool:
    if prefix.endswith(".__init__"):  # the package module itself, not its submodules
        return name == prefix.removesuffix(".__init__")
    return name == prefix or name.startswith(prefix + ".")


def layer_breaks(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{a} imports {b}: {why}"
        for low, up, why in FORBIDDEN
        for a, deps in sorted(graph.items())
        if under(a, low)
        for b in sorted(deps)
        if under(b, up) and not under(a, up)
    ]


def test_no_import_against_the_documented_layers():
    found = layer_breaks(import_graph())
    assert not found, "imports against the layers:\n" + "\n".join(found)


def test_the_layer_check_finds_a_planted_back_edge(tmp_path):
    # The check above must be able to fail: a report module that reads suite code, a runner
    # that asks the registry, comparison figures that use a report page builder, and a report
    # module that uses a comparison page are each found.
    pkg = tmp_path / "iolab"
    for d in ("report", "suites", "compare", "compare_pages"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "registry.py").write_text("")
    (pkg / "suites" / "pts_iops.py").write_text("X = 1\n")
    (pkg / "report" / "pts.py").write_text("def f():\n    from ..suites.pts_iops import X\n")
    (pkg / "runner.py").write_text("from . import registry\n")
    (pkg / "report" / "sections.py").write_text("X = 1\n")
    (pkg / "compare" / "hir.py").write_text("from ..report.sections import X\n")
    (pkg / "compare_pages" / "pts.py").write_text("X = 1\n")
    (pkg / "report" / "hir.py").write_text("def f():\n    from ..compare_pages import pts\n")
    global SRC, PACKAGE
    saved = SRC, PACKAGE
    SRC, PACKAGE = tmp_path, pkg
    try:
        found = layer_breaks(import_graph())
    finally:
        SRC, PACKAGE = saved
    assert sorted(f.split(":")[0] for f in found) == [
        "iolab.compare.hir imports iolab.report.sections",
        "iolab.report.hir imports iolab.compare_pages.pts",
        "iolab.report.pts imports iolab.suites.pts_iops",
        "iolab.runner imports iolab.registry",
    ]


def test_no_module_over_the_size_limit():
    big = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines: {big}"
