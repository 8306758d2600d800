"""`iolab compare` once its options are read (cli/app.py declares them): the runs a shell's
`runs/*` names, the comparison (api/comparisons.py) or the ranking beside published figures (a
FILE.csv), and what the terminal and the `--json` document say of it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.markup import escape as esc

from iolab.cli.auto import emit, record_of
from iolab.cli.console import Console
from iolab.core.errors import Exit, IolabError

# Runs, their records and checks are imported by the functions that read them: `iolab --help`
# mounts these commands without loading the store, the reports or the statistics.


def compare(
    refs: list[str], out: Path, force: bool, labels: Sequence[str], json_out: bool, console: Console, err: Console
) -> None:
    """`iolab compare` once its options are read: the comparison (with published figures ranked
    beside the runs when a FILE.csv is given), its ranking and caveats on the terminal, the paths
    it wrote, and with --json its document."""
    from iolab.api import comparisons as api
    from iolab.pages import textreport

    refs = runs_given(refs, err)  # `runs/*` names the runs directory's own folders too
    if compare_published(refs, out, force, labels, json_out, console):
        return
    done = api.compare(refs, out, force=force, labels=labels)
    for caveat in done.caveats:
        console.print(f"[bold red]{esc(caveat)}[/]")
    if done.summary is not None:
        textreport.render_ranking(done.summary, console)
    for p in done.paths:
        console.print(f"comparison: {esc(str(p))}", soft_wrap=True)
    if json_out:
        emit(
            "compare",
            Exit.OK,
            runs=[record_of(r) for r in refs],
            reports=[str(p) for p in done.paths],
            **({"ranking": ranking(done.summary, done.caveats)} if done.summary is not None else {}),
        )


def runs_given(refs: list[str], console: Console) -> list[str]:
    """The runs of `iolab compare runs/*`: the shell's list also names the folders iolab writes
    beside the runs (compare/, sequences/, fleets/), which were refused as no run (exit 2). Each
    is passed over with a note; named alone, it is refused as before."""
    from iolab.store.manifest import runs_dir_folder

    kept = [r for r in refs if runs_dir_folder(Path(r)) is None]
    for r in (r for r in refs if r not in kept and kept):
        console.print(
            f"note: {esc(r)} holds the runs directory's {runs_dir_folder(Path(r))}, not a run: passed over",
            soft_wrap=True,
        )
    return kept or refs


def compare_published(
    refs: list[str], out: Path, force: bool, labels: Sequence[str], json_out: bool, console: Console
) -> bool:
    """`iolab compare` when any argument is a CSV of published figures (published.py): the
    measured runs' comparison (its report when there are two or more runs) with the published
    drives ranked beside them. False when no argument is such a file."""
    from iolab.api import comparisons as api
    from iolab.automation.published import is_published, known_figures, read_published
    from iolab.automation.published import ranking as published_ranking
    from iolab.pages.textreport import render_ranking

    files, run_refs = [Path(r) for r in refs if is_published(r)], [r for r in refs if not is_published(r)]
    if not files:
        return False
    known = known_figures()
    published = [p for f in files for p in read_published(f, known)]
    first: dict[tuple[str, str], str] = {}
    for p in published:
        if first.setdefault((p.drive, p.figure), p.source) != p.source:
            raise IolabError(
                f"{p.source}: {p.drive!r} has {p.figure!r} already at {first[(p.drive, p.figure)]}; "
                "give each drive's figure once."
            )
    paths: list[Path] = []
    measured = None
    caveats: tuple[str, ...] = ()
    if len(run_refs) >= 2:
        done = api.compare(run_refs, out, force=force, labels=labels)
        if done.summary is None:
            raise IolabError("published figures rank beside runs of one test; these runs are a sequence's.")
        measured, paths, caveats = done.summary, list(done.paths), done.caveats
    elif run_refs:
        # one run's figures carry the caveats two runs' do (they were ranked bare: no [a], none
        # of the incomplete, non-compliant or steady-state lines)
        done = api.rank(run_refs[0], out, labels)
        measured, caveats = done.summary, done.caveats
    table, notes = published_ranking(measured, published)
    for caveat in caveats:
        console.print(f"[bold red]{esc(caveat)}[/]")
    render_ranking(table, console, report=bool(paths))
    for n in notes:
        console.print(f"[yellow]{esc(n)}[/]", soft_wrap=True)
    for path in paths:
        console.print(f"comparison: {esc(str(path))}", soft_wrap=True)
    if json_out:
        rank = ranking(table, caveats)
        n_measured = len(measured.drives) if measured is not None else 0
        rank["published"] = [i >= n_measured for i in range(len(table.drives))]
        emit(
            "compare",
            Exit.OK,
            runs=[record_of(r) for r in run_refs],
            reports=[str(path) for path in paths],
            ranking=rank,
            published=[p.record() for p in published],
        )
    return True


def ranking(summary, caveats: Sequence[str] = ()) -> dict:
    """`iolab compare`'s summary table (compare.SummaryTable) as the document's ranking, with what
    the terminal says beside it: the caveat each drive's figure carries (its key, as the terminal's
    [a]), each caveat's text by its key, the comparison's own caveats (`caveats`, in full) and the
    figure notes (each drive's, and the lines the terminal prints)."""
    return {
        "labels": list(summary.drives),
        "figures": [
            {
                "name": m.name,
                "unit": m.unit,
                "direction": "higher-is-better" if m.higher_is_better else "lower-is-better",
                "values": [row[j] for row in summary.values],
                "ranks": [row[j] for row in summary.ranks],
                "caveats": [summary.mark_of(i, j) for i in range(len(summary.drives))],
                # per label: what that drive's figure is of, where its name may claim more
                "notes": [summary.note_of(i, j) for i in range(len(summary.drives))],
            }
            for j, m in enumerate(summary.metrics)
        ],
        "caveats": [{"key": key, "text": mk} for mk, key in summary.mark_keys().items()],
        "comparison_caveats": list(caveats),
        # the figure notes as the terminal prints them under its ranking: "NAME (D1, D2): note"
        "notes": list(summary.notes),
    }
