"""No module reaches a subpackage's module as an attribute it never imported.

`from iolab import targets` then `targets.lock.claim(...)` works only where something else has
already imported iolab.targets.lock: in one command's start it may, in another's it may not. The
tests' `iolab` commands are forked from a process that has imported every iolab module
(tests/forkserver.py), where such a line always works: this check keeps it from hiding one. An
attribute of an imported package must be a name its __init__ binds, or a submodule the module
imports itself."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def _package_dir(dotted: str) -> Path | None:
    d = SRC.joinpath(*dotted.split("."))
    return d if (d / "__init__.py").is_file() else None


@cache
def _bound_names(init: Path) -> set[str]:
    """The names a package's __init__ binds at its top level (defs, assignments, imports)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _absolute(module: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def unimported_attributes(path: Path) -> list[str]:
    """`NAME.attr` uses in the module at `path` where NAME is an iolab package it imported and
    attr is neither bound by the package's __init__ nor a submodule imported here."""
    rel = path.relative_to(SRC).with_suffix("")
    is_pkg = rel.name == "__init__"
    module = ".".join(rel.parts[:-1] if is_pkg else rel.parts)
    tree = ast.parse(path.read_text())
    packages: dict[str, str] = {}  # local name -> the package's dotted name
    imported: set[str] = set()  # every dotted module name this module imports
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, is_pkg, node)
            for a in node.names:
                dotted = f"{source}.{a.name}"
                imported.add(dotted)
                if dotted.startswith("iolab.") and _package_dir(dotted):
                    packages[a.asname or a.name] = dotted
        elif isinstance(node, ast.Import):
            for a in node.names:
                imported.add(a.name)
                if a.asname and a.name.startswith("iolab.") and _package_dir(a.name):
                    packages[a.asname] = a.name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in packages:
            pkg = packages[node.value.id]
            init = _package_dir(pkg) / "__init__.py"
            if node.attr not in _bound_names(init) and f"{pkg}.{node.attr}" not in imported:
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_uses_a_submodule_it_did_not_import():
    found = [line for p in sorted((SRC / "iolab").rglob("*.py")) for line in unimported_attributes(p)]
    assert not found, "attributes of a package that only another module's import binds:\n" + "\n".join(found)


def test_the_check_finds_a_submodule_used_without_its_import(tmp_path, monkeypatch):
    pkg = tmp_path / "iolab" / "things"
    pkg.mkdir(parents=True)
    (tmp_path / "iolab" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from iolab.things.base import Thing\nKINDS = ()\n")
    (pkg / "base.py").write_text("class Thing: ...\n")
    (pkg / "extra.py").write_text("def f(): ...\n")
    user = tmp_path / "iolab" / "user.py"
    user.write_text("from iolab import things\n\nthings.Thing\nthings.KINDS\nthings.extra.f()\n")
    monkeypatch.setattr(f"{__name__}.SRC", tmp_path)
    assert unimported_attributes(user) == ["iolab/user.py:5: things.extra"]
    user.write_text("from iolab import things\nfrom iolab.things import extra\n\nthings.extra.f()\n")
    assert unimported_attributes(user) == []
