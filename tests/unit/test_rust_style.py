"""Style gates on the Rust crate (crates/sim) that rustfmt and clippy do not check: no function
over 80 lines, and no dependency cycle between the modules of `config` (a cycle there tied
the geometry to the resolver's value reader, so neither could be read or tested alone) nor
between the driver's (driver, ports and source used each other's types: the driver's shared
types now live in workload.rs)."""

import re
from pathlib import Path

CRATE = Path(__file__).resolve().parents[2] / "crates" / "sim"
MAX_LINES = 80

# Functions allowed over the limit, as (file, name): none.
ALLOWED: set[tuple[str, str]] = set()

_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+(\w+)")
# What may hold a brace that is not code: string and character literals and line comments
# (raw strings are not recognised; the crate has none with a brace).
_NOT_CODE = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'|//.*$')


def rust_functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, line count) of every function with a body in `text`, nested ones too."""
    lines = [_NOT_CODE.sub('""', line) for line in text.splitlines()]
    out = []
    for i, line in enumerate(lines):
        m = _FN.match(line)
        if not m:
            continue
        depth, opened = 0, False
        for k in range(i, len(lines)):
            code = lines[k] if k > i else lines[k][m.end() :]
            if not opened and ";" in code.split("{")[0]:
                break  # a declaration without a body (trait method, extern)
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                out.append((m.group(1), i + 1, k - i + 1))
                break
    return out


def test_the_function_reader_counts_lines():
    src = 'fn a() {\n    let s = "}";\n    if x { y }\n}\ntrait T {\n    fn b(&self);\n    fn c() {}\n}\n'
    assert rust_functions(src) == [("a", 1, 4), ("c", 7, 1)]


def test_no_rust_function_is_over_80_lines():
    long = []
    for f in sorted(CRATE.rglob("*.rs")):
        rel = f.relative_to(CRATE).as_posix()
        if rel.startswith("target/"):
            continue
        for name, line, n in rust_functions(f.read_text()):
            if n > MAX_LINES and (rel, name) not in ALLOWED:
                long.append(f"{rel}:{line} {name} ({n} lines)")
    assert not long, f"Rust functions over {MAX_LINES} lines (split them): " + "; ".join(long)


def config_imports() -> dict[str, set[str]]:
    """Each module of crates/sim/src/config and the sibling modules it uses."""
    mods = {f.stem: f.read_text() for f in (CRATE / "src" / "config").glob("*.rs") if f.stem != "mod"}
    out = {}
    for name, text in mods.items():
        used = set(re.findall(r"\b(?:super|crate::config)::(\w+)", text))
        out[name] = {m for m in used if m in mods and m != name}
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` as the path that closes it, or None."""
    state: dict[str, int] = {}

    def visit(n: str, path: list[str]) -> list[str] | None:
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m) :] + [n, m] if m in path else [n, m]
            if m not in state and (c := visit(m, path + [n])):
                return c
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (c := visit(n, [])):
            return c
    return None


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_config_modules_have_no_cycle():
    imports = config_imports()
    assert imports["geometry"] and imports["resolve"], "the import reader found no imports"
    assert find_cycle(imports) is None, imports


# The driver and the modules it runs a workload with: the types they share are workload.rs's.
DRIVER_MODULES = ("driver", "ports", "source", "workload")


def driver_imports() -> dict[str, set[str]]:
    """Each of DRIVER_MODULES and which of the others it names (`crate::NAME::`, `use crate::NAME`)."""
    out = {}
    for name in DRIVER_MODULES:
        if not (CRATE / "src" / f"{name}.rs").exists():
            continue
        text = re.sub(r"(?s)#\[cfg\(test\)\].*", "", (CRATE / "src" / f"{name}.rs").read_text())
        used = set(re.findall(r"\bcrate::(\w+)", text))
        out[name] = {m for m in used if m in DRIVER_MODULES and m != name}
    return out


def test_driver_modules_have_no_cycle():
    imports = driver_imports()
    assert imports["driver"] >= {"ports", "source"}, "the import reader found no imports"
    assert find_cycle(imports) is None, imports
