"""The `iolab` command for scripts: every command's `--json` document on stdout (outcome.py),
delivered even when the command ends with an error, the shared exit codes (errors.Exit) and the
run records the documents hold. The commands made for scripts have their own modules: check.py,
history.py, compare.py, repeats.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from iolab.cli.console import Console, write_out
from iolab.core.errors import Exit, IolabError
from iolab.core.streams import OUTCOME_FILE_ENV, note_line

# Runs and their records are imported by the functions that read them: `iolab --help` mounts
# the commands without loading the store, the reports or the statistics.

JSON_HELP = (
    "Print one JSON document on standard output (docs/automation.md; schema in "
    "docs/schema/outcome.schema.json); the terminal output goes to standard error."
)
STEADY_HELP = (
    "Exit with code 6 when a run did not show steady state: a phase that tracks it did not reach it "
    "or ran too few rounds to be judged, or the run did not complete."
)

# The command that was asked for a JSON document, so an error that ends it still prints one.
_requested: dict[str, str] = {}


def want_json(command: str, console: Console, on: bool) -> None:
    """With --json, the command's human output goes to standard error."""
    if on:
        from iolab.core.streams import stdout_closed_at_start, undeliverable

        _requested["command"] = command
        # taken out of the environment: no process this one starts writes there too
        if told := os.environ.pop(OUTCOME_FILE_ENV, ""):
            _requested["to"] = told  # the console stays on standard output
            return
        if stdout_closed_at_start():  # refused before anything runs, not after a run of days
            raise undeliverable("is closed (>&-)")
        console.file = sys.stderr


def emit(command: str, code: int, **parts) -> None:
    from iolab.pages.outcome import document, dumps

    text = dumps(document(command, code, **parts)) + "\n"
    if "to" in _requested:  # a repeat's: its standard output holds what the run prints for people
        from iolab.targets.writepolicy import output_file

        # the path comes from the environment: written as every path iolab writes, under the policy
        with output_file(Path(_requested["to"]), "--json document of a repeat") as path:
            path.write_text(text, encoding="utf-8")
    else:
        write_out(text)


def emit_error(e: IolabError) -> None:
    """The document of a command that ended with an error (main() calls it); none when the error
    is that standard output takes no document."""
    from iolab.core.streams import Undelivered

    if _requested and not isinstance(e, Undelivered):
        emit_anyway(_requested["command"], e.exit_code, error=str(e))


def emit_anyway(command: str, code: int, **parts) -> None:
    """The document of a command that ends with `code` anyway (an error, an interrupted run): a
    document that cannot be delivered adds its own paragraph on standard error, and the
    command's own exit code stands."""
    try:
        emit(command, code, **parts)
    except IolabError as lost:
        note_line(f"iolab: {lost}")


def records_code(records: list[dict], require_steady: bool) -> int:
    from iolab.pages.outcome import run_exit_code

    return max((run_exit_code(r, require_steady) for r in records), default=Exit.OK)


def record_of(ref: str | Path, reports=()) -> dict:
    from iolab.api import reports as api
    from iolab.store.runstore import RunStore

    store = RunStore.open(ref)
    try:
        return api.run_record(store, reports)
    finally:
        store.close()
