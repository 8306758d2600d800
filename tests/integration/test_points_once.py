"""A point named twice on a page reads as a row printed twice by mistake: the max-iops table
listed the thread search's first step (TC1 at the depth the queue-depth search chose) as a bare
second "TC1/QD64", `show` printed each queue-depth step's name in two columns ("TC1/QD1 │
TC1/QD1"), and DIRTH's operating points gave MinIOPS the rule "TC1/QD1" beside its point
"TC1/QD1". Each point is now printed once, or its repeat says why."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

SIM = "sim:enterprise-sas?user_gb=0.1"


def _run(test: str, runs: Path) -> tuple[Path, str]:
    p = iolab("run", test, "-t", SIM, "--quick", "--cell-time", "100ms", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = [d for d in runs.iterdir() if d.is_dir() and test in d.name]
    shown = iolab("show", str(run))
    assert shown.returncode == 0, shown.stderr
    return run, shown.stdout


def _report_rows(run: Path) -> list[list[str]]:
    page = next((run / "report").glob("*.html")).read_text()
    rows = re.findall(r"<tr>(.*?)</tr>", page, flags=re.S)
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)]
        for r in rows
    ]


def test_max_iops_prints_each_search_step_once_and_says_why_one_repeats(tmp_path):
    run, shown = _run("max-iops", tmp_path / "runs")
    rows = [r for r in _report_rows(run) if len(r) == 6 and r[0].endswith(("search", "optimum"))]
    ops: list[list[list[str]]] = []  # read's steps and rounds, then write's
    for r in rows:
        if not ops or (r[0] == "queue-depth search" and "optimum" in ops[-1][-1][0]):
            ops.append([])
        ops[-1].append(r)
    assert len(ops) == 2, rows
    for op_rows in ops:
        qd = [r[1] for r in op_rows if r[0] == "queue-depth search"]
        tc = [r[1] for r in op_rows if r[0] == "thread-count search"]
        assert qd and tc and len(set(qd)) == len(qd), op_rows
        # the thread search's TC1 step is the depth the first search chose: named, and why it is again
        first = tc[0].split(" (")[0]
        assert first in qd and tc[0] == f"{first} (measured again: the thread-count search starts here)", tc
        # every step's TC/QD is in its column, the rounds' included (their TC/QD stood under 'outstanding IO')
        for r in op_rows:
            t, q = map(int, re.match(r"TC(\d+)/QD(\d+)", r[1]).groups())
            assert r[2] == str(t * q), r
        assert [r[0] for r in op_rows if "optimum" in r[0]] == [f"round {i} at the optimum" for i in (1, 2, 3)]
    # show: the queue-depth search's steps, named by their TC/QD, in one column
    table = shown[shown.index("read QD search  ") : shown.index("most IOPS")]
    assert re.search(r"│\s+TC1/QD1 │\s+1 │", table) and not re.search(r"TC1/QD1\s*│\s*TC1/QD1", table), table
    assert "┃ threads/QD ┃ round ┃" in table and "┃ cell" not in table
    # a phase whose cells are named otherwise keeps both names ("TC1 at the best QD │ TC1/QD…")
    assert re.search(r"TC1 at the best QD │\s+TC1/QD\d+ │", shown), shown
    # the QD the thread search ran at, said in words (its cells' keys name none), and on the page
    # its first step against the same point in the queue-depth search, with both measurements
    said, page = (
        " ".join(shown.split()),
        " ".join(html.unescape(next((run / "report").glob("*.html")).read_text()).split()),
    )
    for op_rows in ops:
        again = next(r for r in op_rows if r[0] == "thread-count search")
        point = again[1].split(" (")[0]
        before = next(r for r in op_rows if r[0] == "queue-depth search" and r[1] == point)
        qd = point.split("/QD")[1]
        assert (
            f"the thread search ran at QD{qd}, the queue-depth search's choice; its TC1 step measured that point again"
            in said
        )
        assert (
            f"The thread search ran at QD{qd}, the queue-depth search's choice. Its first step, {point}, measured "
            f"that point again: {again[3]} IOPS against {before[3]} in the queue-depth search (" in page
        ), page


def test_dirth_says_minops_rule_in_words_beside_its_point(tmp_path):
    run, shown = _run("dirth", tmp_path / "runs")
    rule = "fixed by A.11: the lowest demand, one thread at queue depth 1"
    assert f"MinIOPS ({rule}): TC1/QD1, " in " ".join(shown.split())
    [mins] = [r for r in _report_rows(run) if r[:1] == ["MinIOPS"]]
    assert mins[1:3] == [rule, "TC1/QD1"], mins
