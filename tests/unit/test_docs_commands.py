"""The docs hold to the command line: every `iolab ...` a page shows as a command to type parses
(its command exists, its options exist and take what it gives them), every iolab option a page
names exists, and every command that takes --json is named where the docs list them. Parsed by
the command line's own parser, without running anything (no eager option is ever given: the
completion options would write the user's shell start-up files)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest
import typer
from typer._click import exceptions as cx

from iolab.cli.app import app
from iolab.cli.conventions import tidy_help

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
IOLAB = re.compile(r"^(?:\$ )?(?:\.venv/bin/)?iolab\s+(.*)$")
ROOT_OPTIONS = {"--version", "--install-completion", "--show-completion", "--help", "-h"}
# Options of other programs that a page names in a sentence about that program
OTHERS = {
    "--smoke": "every bench's (architecture.md)",
    "--parallel": "bench/fleet.py's (fleet.md)",
    "--clocksource": "fio's client (scale-out.md)",
    "--status-interval": "fio's client and server (scale-out.md)",
    "--eta": "fio's client (scale-out.md)",
}


def _cli():
    cmd = typer.main.get_command(app)
    tidy_help(cmd)
    return cmd


CLI = _cli()


def _pages(pages: list[Path]):
    """(page, line, kind, text): each code line (fenced or indented) and each inline code span."""
    for page in pages:
        text, fenced, indented, blank, prose = page.read_text(), False, False, True, []
        for n, line in enumerate(text.splitlines(), 1):
            # an indented block is code after a blank line; a list item's next lines are prose
            indented = line.startswith("    ") and (indented or blank) and not fenced
            blank = not line.strip()
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif fenced or indented:
                yield page.name, n, "code", line.strip()
            else:
                prose.append((n, line))
        joined = "\n".join(line for _, line in prose)
        for m in re.finditer(r"`([^`]+)`", joined):
            n = prose[joined.count("\n", 0, m.start())][0]
            yield page.name, n, "inline", " ".join(m.group(1).split())


def _args(text: str) -> list[str]:
    """A documented command line as arguments: one command (no pipe, redirection or comment),
    placeholders (`[--out DIR]`, `…`, `...`) and a code line's trailing remark dropped."""
    text = re.split(r"\s(?:\||&&|>|2>)\s|\s{2,}\(", text)[0]
    text = re.sub(r"\s\[[^\]]*\]", " ", text.replace("…", " ").replace("...", " "))
    return shlex.split(text, comments=True)


def _command(args: list[str]):
    """The command the arguments name, and the arguments left for it; None when there is none."""
    cmd, path = CLI, []
    while hasattr(cmd, "commands"):
        if not args or args[0].startswith("-"):
            return cmd, path, args
        sub = cmd.commands.get(args[0])
        if sub is None:
            return None, path + args[:1], args[1:]
        cmd, path, args = sub, path + args[:1], args[1:]
    return cmd, path, args


def _options(cmd) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")} | {"-h", "--help"}


def _problem(kind: str, text: str) -> str | None:
    cmd, path, rest = _command(_args(IOLAB.match(text).group(1)))  # type: ignore[union-attr]
    if cmd is None:
        return f"no command 'iolab {' '.join(path)}'"
    names = [o for a in rest if re.match(r"--?[a-z]", a) for o in re.split(r"/(?=-)", a.split("=", 1)[0])]
    unknown = [o for o in names if o not in _options(cmd) and not (cmd is CLI and o in ROOT_OPTIONS)]
    if unknown:
        return f"'iolab {' '.join(path)}' has no option {', '.join(unknown)}"
    if kind == "inline" or cmd is CLI or {"-h", "--help"} & set(rest):
        return None  # a span in a sentence may name a command's part alone (`iolab run --repeat N`)
    try:  # a code line is a whole command: it parses as given
        # closed as a command is: `--runs-dir DIR` sets $IOLAB_RUNS until then, and a context left
        # open left it set for the next test's `iolab` children (a run stored in /lab/runs)
        with contextlib.redirect_stdout(io.StringIO()), cmd.make_context(f"iolab {' '.join(path)}", list(rest)):
            pass
    except cx.UsageError as e:
        return e.format_message()
    return None


DOCUMENTED = [d for d in _pages([*PAGES, ROOT / "bench/README.md"]) if IOLAB.match(d[3])]


def test_the_docs_show_commands_to_check():
    # the extraction itself: every page's commands are found (README's tour alone has dozens)
    assert len(DOCUMENTED) > 300 and {d[0] for d in DOCUMENTED} >= {p.name for p in PAGES} - {"python-api.md"}


@pytest.mark.parametrize("page", sorted({d[0] for d in DOCUMENTED}))
def test_every_documented_command_line_parses(page):
    bad = [
        f"{p}:{n}: {text}\n    {why}" for p, n, kind, text in DOCUMENTED if p == page if (why := _problem(kind, text))
    ]
    assert not bad, "\n".join(bad)


def test_every_option_the_docs_name_alone_exists():
    # `--steady-min-writes` in a sentence: an option of some command (another tool's options are
    # written with that tool's name: `fio --server`, `cargo fmt --check`)
    every = set(ROOT_OPTIONS)
    stack = [CLI]
    while stack:
        cmd = stack.pop()
        every |= _options(cmd)
        stack += list(getattr(cmd, "commands", {}).values())
    named = [
        (p, n, t.split()[0].split("=")[0]) for p, n, kind, t in _pages(PAGES) if kind == "inline" if t.startswith("--")
    ]
    assert len(named) > 100
    missing = [f"{p}:{n}: {o}" for p, n, o in named if o not in every | set(OTHERS)]
    assert not missing, missing


def test_every_command_that_takes_json_is_listed_where_the_docs_list_them():
    # `iolab power --json` writes a document of the outcome schema; automation.md's list and its
    # table of fields by command, and the README's list, left it out (the README also audit and plan)
    takes = sorted(
        " ".join(path)
        for path, cmd in _leaves(CLI, [])
        if "--json" in _options(cmd) and path not in (["fleet"], ["sim", "calibrate"])
    )
    auto = (ROOT / "docs/automation.md").read_text()
    listed = re.search(r"`iolab run`(.*?) take `--json`", auto, re.S).group(0)  # type: ignore[union-attr]
    rows = re.findall(r"^\| (`[^|]+`) \|", auto.split("and, by command:")[1], re.M)
    readme = re.search(r"`--json` on (.*?) prints one", (ROOT / "README.md").read_text(), re.S).group(1)  # type: ignore[union-attr]
    for where, text in (("automation.md's list", listed), ("its table", " ".join(rows)), ("README", readme)):
        named = set(re.findall(r"`(?:iolab )?([\w-]+)`", text))
        assert set(takes) <= named, (where, sorted(set(takes) - named))


def _leaves(cmd, path):
    if not hasattr(cmd, "commands"):
        yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _leaves(sub, [*path, name])


def test_every_field_of_the_outcome_document_is_described():
    # the schema is the code's (pages/outcome_schema.py writes it): a field it gains is described
    # on the page scripts read. `runs --json`'s `fleets` and a run record's `uid`,
    # `ignored_options`, `endurance` and `unknown` were in every document and on no page
    import json

    schema = json.loads((ROOT / "docs/schema/outcome.schema.json").read_text())
    auto = (ROOT / "docs/automation.md").read_text()
    head, by_command = auto.split("and, by command:", 1)
    tables = set(
        re.findall(r"`([\w-]+)`", head.split("## `--json`", 1)[1] + by_command.split("A run record holds:")[0])
    )
    assert set(schema["properties"]) <= tables, sorted(set(schema["properties"]) - tables)
    record = by_command.split("A run record holds:", 1)[1].split("Read a field with")[0]
    named = set(re.findall(r"`([\w-]+)`", record))
    assert set(schema["$defs"]["run"]["properties"]) <= named, sorted(set(schema["$defs"]["run"]["properties"]) - named)
    # and `iolab plan --json`'s plan, its tests, phases and steps (max_rounds_from was on no page)
    plan = schema["properties"]["plan"]["properties"]
    section = auto.split("### `iolab plan --json`", 1)[1].split("## Progress")[0]
    fields = {
        *plan,
        *plan["eta"]["properties"],
        *plan["tests"]["items"]["properties"],
        *schema["$defs"]["planned_phase"]["properties"],
        *schema["$defs"]["planned_step"]["properties"],
    }
    named = set(re.findall(r"`([\w-]+)`", section))
    assert fields <= named, sorted(fields - named)
    # and iolab check's object and run --repeat's summary
    d = schema["$defs"]
    for fields, section in (
        (
            {*d["check"]["properties"], *d["verdict"]["properties"], *d["side"]["properties"]},
            ("## `iolab check`", "### On real"),
        ),
        (
            {*d["repeat"]["properties"], *d["repeat"]["properties"]["figures"]["items"]["properties"]},
            ("## Repeats", "## `iolab history`"),
        ),
    ):
        named = set(re.findall(r"`([\w-]+)`", auto.split(section[0], 1)[1].split(section[1])[0]))
        assert fields <= named, (section[0], sorted(fields - named))
