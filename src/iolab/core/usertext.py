"""What a user-given string may hold before it reaches a fio job file, a command line, a report
or a terminal.

A newline in a target path once started a new `[global]` section in a job file, so fio ran
options the safety checks never saw. Control characters are refused wherever user text
enters (the command line, target specs, `--set`, hosts files), and so are invisible format
characters (a bidi override prints a name reversed), and the job writer refuses what fio would
read differently from what iolab checked.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence

from iolab.core.errors import IolabError

# fio reads ';' and '#' as the start of a comment anywhere in a line and expands '$' (${VAR},
# $ncpus, ...), so a value holding one names something other than what iolab checked.
FIO_SPECIAL = ";#$"


def _control(text: str) -> int | None:
    """Index of the first control or line/paragraph separator character, or None."""
    for i, ch in enumerate(text):
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            return i
    return None


# Joiners that Persian, the Indic scripts and emoji need to be written as they are read: the
# only invisible format characters (category Cf) a name may hold.
_JOINERS = frozenset("\u200c\u200d")


def _invisible(text: str) -> int | None:
    """Index of the first invisible format character but a joiner (bidi overrides, embeddings
    and isolates U+202A..U+202E, U+2066..U+2069, marks U+200E/U+200F, zero-width space U+200B,
    word joiner, BOM, soft hyphen, ...), or None: printed in a table or a terminal they make a
    name read other than it is (U+202E shows 'abc' reversed) or two names look alike."""
    for i, ch in enumerate(text):
        if unicodedata.category(ch) == "Cf" and ch not in _JOINERS:
            return i
    return None


def control_problem(text: str) -> str | None:
    """Which control or invisible format character `text` holds and where ("holds a control
    character ('\\x1b' at position 2)"), or None: the one wording for an argument and for a field
    of a file iolab reads, whose text reaches the terminal (an escape sequence there recolours or
    rewrites it; a bidi override shows it reversed)."""
    if (i := _control(text)) is not None:
        return f"holds a control character ({text[i]!r} at position {i + 1})"
    if (i := _invisible(text)) is not None:
        name = unicodedata.name(text[i], "unnamed")
        return f"holds an invisible format character ({text[i]!r}, {name}, at position {i + 1})"
    return None


def check_text(text: str, what: str) -> str:
    """`text` unchanged, or IolabError when it holds a control character (newline, tab, NUL, ...)
    or an invisible format character (a bidi override, a zero-width space, ...)."""
    problem = control_problem(text)
    if problem is not None:
        raise IolabError(
            f"{what} {text!r}: {problem}; names, paths and values may not contain newlines, tabs or other "
            "control characters, nor invisible format characters (bidi overrides, zero-width spaces). "
            "Nothing was run or written."
        )
    return text


def check_fio_value(text: str, what: str) -> str:
    """`text` unchanged if fio's job-file parser reads it back as written, else IolabError."""
    check_text(text, what)
    bad = sorted({ch for ch in text if ch in FIO_SPECIAL})
    if bad:
        raise IolabError(
            f"{what} {text!r}: holds {' and '.join(repr(c) for c in bad)}, which fio's job files "
            "cannot carry (';' and '#' start a comment, '$' expands a variable), so fio would "
            "use another name than the one iolab checked. Rename it or pick another path. "
            "Nothing was run or written."
        )
    if text != text.rstrip():
        raise IolabError(
            f"{what} {text!r}: ends in white space, which fio's job files drop. Nothing was run or written."
        )
    return text


def check_argv(args: list[str], names: Sequence[str | None] = ()) -> None:
    """Refuse an empty argument (an empty --hosts once ran locally, an empty --runs-dir wrote
    into the current directory) and control characters in any argument before parsing. Each is
    named by `names` (the option whose value it is, or the command's argument it stands for:
    cli/conventions.value_names), else by its place."""
    for i, a in enumerate(args):
        name, eq, value = a.partition("=") if a.startswith("--") and "=" in a else ("", "", a)
        named = names[i] if i < len(names) else None
        option = name if eq else named if named and named.startswith("-") else None
        what = option or f"argument {i + 1}" + (f" ({named})" if named else "")
        if not value:
            leave = "the option" if option else "it"
            raise IolabError(
                f"{what}: the value is empty; give a value or leave {leave} out. Nothing was run or written."
            )
        check_text(value, what)


def check_env(environ: Mapping[str, str]) -> None:
    """Refuse an empty $IOLAB_RUNS as --runs-dir '' is refused: Path('') is the current
    directory, so `IOLAB_RUNS=$UNSET iolab run` stored its runs wherever the job stood and
    `iolab runs` listed that directory ("no runs", exit 0)."""
    value = environ.get("IOLAB_RUNS")
    if value is not None and not value.strip():
        raise IolabError(
            "$IOLAB_RUNS is set but empty; set it to the runs directory or unset it (the default is "
            "./runs). Nothing was run or written."
        )
    if value is not None:
        check_text(value, "$IOLAB_RUNS")


# A name that becomes one file or directory name (a run's id names its report files; a fleet's
# drive its folder): at most this long, so the longest file made of it (".NAME.html.PID-N.partial",
# core/writeaside._new_part) still fits a filesystem's 255-byte name.
NAME_MAX = 200


def name_problem(name: str) -> str | None:
    """Why `name` cannot stand as one file or directory name inside a directory (a clause), or
    None: a '/' (or '\\') would put what it names elsewhere ('../../etc', '/srv/x'), '.' and '..'
    name the directory itself or its parent, an empty name or a control character names nothing, and
    an invisible format character makes it read other than it is."""
    if name in ("", ".", ".."):
        return "it names no file of its own (empty, '.' or '..')"
    if "/" in name or "\\" in name:
        return "it holds a '/' or '\\', so it would name a path elsewhere, not one name"
    if (problem := control_problem(name)) is not None:  # a bidi override shows the name reversed too
        return f"it {problem}"
    if len(name.encode()) > NAME_MAX:
        return f"it is {len(name.encode())} bytes long, more than a name may be ({NAME_MAX})"
    return None


# How store.manifest.resolve_run reads a RUN, as every command that takes one says it in its help
# (README: "Naming a run"): one phrase, so no command's help tells less than another's. Here, not
# beside resolve_run: the help is built at start-up, which need not load the store for it.
RUN_REF = "its directory, its id, or any part of the id unique to it"
# --runs-dir's help, one text for every command that takes it (cli/options.py, cli/auto.py)
RUNS_HELP = "Runs directory (default ./runs or $IOLAB_RUNS)."
