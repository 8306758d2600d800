"""A saved `--json` document as one side of `iolab check` (`--baseline last-good.json`, or a
candidate's). The file is a person's to edit, so nothing in it is taken on trust that the test
itself defines: it is held to the schema, each run's figures to the test's own definition of
them (unit, direction, kind: a baseline whose ART said `ms`, `higher-is-better` or `value` for
a maximum was judged in that unit, upside down, or as an average) and each value to what a run
can measure (plausible.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from iolab.api import registry
from iolab.automation.plausible import implausible
from iolab.core.errors import IolabError
from iolab.core.safefile import read_json

REWRITE = "write it again with `iolab show RUN --json > FILE`"


def is_saved(ref: str) -> bool:
    """A side's argument that names a saved document rather than a run."""
    p = Path(ref)
    return p.suffix == ".json" and p.is_file()


def read_saved(path: Path) -> list[dict]:
    """The run records of a saved document, each checked (module doc); IolabError naming the
    file, the run, the figure and where it is in the document when one is not what a run gives."""
    from iolab.pages.outcome import SCHEMA_NAME, SCHEMA_VERSION
    from iolab.pages.outcome_schema import SCHEMA
    from iolab.pages.schema_lite import errors

    try:
        doc = read_json(path, "JSON document", "document")
    except OSError as e:
        raise IolabError(f"{path}: cannot read it as a JSON document ({e.strerror or e}).") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA_NAME or doc.get("schema_version") != SCHEMA_VERSION:
        raise IolabError(f"{path}: not an iolab --json document of schema version {SCHEMA_VERSION} ({REWRITE}).")
    wrong = errors(doc, SCHEMA)
    if wrong:
        more = f", and {len(wrong) - 1} more" if len(wrong) > 1 else ""
        raise IolabError(f"{path}: does not follow the iolab --json schema ({wrong[0]}{more}); {REWRITE}.")
    if not doc.get("runs"):
        raise IolabError(f"{path}: the document lists no runs.")
    for r in doc["runs"]:  # a figure saved under a name its test has since changed: by today's name
        for f in r["figures"]:
            f["name"] = registry.current_figure(f["name"], r["test"])
    if problem := definition_problem(doc["runs"]) or figure_value_problem(doc["runs"]):
        raise IolabError(
            f"{path}: {problem} A saved document's figures are those a run measured, as its test defines "
            f"them; {REWRITE}. Nothing was checked."
        )
    return list(doc["runs"])


def _where(r: dict, i: int, f: dict, j: int, field: str) -> str:
    return f"run {r['run_id']}'s {f['name']!r} (runs[{i}].figures[{j}].{field})"


def definition_problem(runs: Sequence[dict]) -> str | None:
    """The first figure that differs from its test's definition (its name, unit, direction or
    kind, or the figures the test defines left out or one given twice), where it is and what
    the test says; None when all agree. A figure renamed by hand ('ART RND 4KiB R/W 50/50') was
    judged "missing" from the candidate and failed the check (exit 7) while the candidate's own
    figure of that name dropped out. A test whose figures are named after what the run measured
    (TestDef.figures_named_by_runs: a stream's, a wait state's) defines only its others without
    the run's phases: check holds the rest to the other runs' (check._meta)."""
    for i, r in enumerate(runs):
        t = registry.find(r["test"])
        if t is None or t.key_figures is None:
            return f"run {r['run_id']}'s test {r['test']!r} is no registered test with key figures."
        defined = {m.name: m for m in t.key_figures(())}
        if problem := _names_problem(r, i, list(defined), t.figures_named_by_runs):
            return problem
        for j, f in enumerate(r["figures"]):
            m = defined.get(f["name"])
            if m is None:
                continue
            want = {
                "unit": m.unit,
                "direction": "higher-is-better" if m.higher_is_better else "lower-is-better",
                "kind": m.kind,
            }
            for name, value in want.items():
                # a document saved before figures had a kind has none: the definition's is taken
                if name in f and f[name] != value:
                    return f"{_where(r, i, f, j, name)} is {f[name]!r}, but test {r['test']!r} defines it as {value!r}."
    return None


def _names_problem(r: dict, i: int, defined: list[str], named_by_runs: bool) -> str | None:
    """A figure given twice in one run, and where every name is the test's own: one it does not
    define, or one it defines left out (a run's record lists every one, measured or not)."""
    seen: set[str] = set()
    for j, f in enumerate(r["figures"]):
        if f["name"] in seen:
            return f"{_where(r, i, f, j, 'name')} is given twice; a run has each figure once."
        seen.add(f["name"])
        if not named_by_runs and f["name"] not in defined:
            return (
                f"{_where(r, i, f, j, 'name')} is no figure of test {r['test']!r}; it defines "
                + ", ".join(map(repr, defined))
                + "."
            )
    left_out = [n for n in defined if n not in seen] if not named_by_runs else []
    if left_out:
        return (
            f"run {r['run_id']}'s figures (runs[{i}].figures) leave out {', '.join(map(repr, left_out))}, "
            f"which test {r['test']!r} defines; a run's record lists every one, measured or not."
        )
    return None


def figure_value_problem(runs: Sequence[dict]) -> str | None:
    """The first figure value no drive can have (plausible.py: the rule `compare` applies to
    published figures), its value or one of its window rounds' alone, where it is and why; None
    when every one can be (round_values [1e308, -5] were taken as they were)."""
    for i, r in enumerate(runs):
        for j, f in enumerate(r["figures"]):
            values = [("value", f["value"])] + [(f"round_values[{k}]", v) for k, v in enumerate(f["round_values"])]
            for field, v in values:
                if v is not None and (why := implausible(v, f["unit"], magnitude=True)):
                    return f"{_where(r, i, f, j, field)}: {why}"
    return None
