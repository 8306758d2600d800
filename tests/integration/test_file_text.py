"""Text that files a user names bring to the terminal, through the installed `iolab` command: a
control character in a published-figures CSV or a spec sheet is refused as one in an argument
is (exit 2, one paragraph naming the file, line and field), and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab, quick_sim_run


@pytest.fixture(scope="module")
def a_run(tmp_path_factory) -> Path:
    return quick_sim_run(tmp_path_factory.mktemp("file-text") / "runs")


def refused(p) -> str:
    text = p.stdout + p.stderr
    assert p.returncode == 2 and "Traceback" not in text, text
    assert "\x1b" not in text and "\x07" not in text, "a control character reached the terminal"
    assert p.stderr.startswith("iolab: ") and "\n\n" not in p.stderr.strip(), p.stderr
    return " ".join(p.stderr.split())


@pytest.mark.parametrize(
    ("csv", "says"),
    [
        # the drive's name went into the comparison's table as it stood, escape sequence and bell
        (
            "drive,figure,value,unit\nX\x1b[31mRED\x07,ART RND 4KiB R/W 65/35,95,µs\n",
            "line 2, field 'drive': 'X\\x1b[31mRED\\x07' holds a control character ('\\x1b' at position 2)",
        ),
        # a header that lacked a column was quoted raw in the refusal ("it has: drive, …")
        ("drive,figure,value,\x1b[2Junit\n", "line 1, field 'column 4': '\\x1b[2Junit' holds a control character"),
        ("drive,figure,value,unit\nX,ART RND 4KiB R/W 65/35,95,µs\tx\n", "line 2, field 'unit': 'µs\\tx' holds"),
        # a header alone was "line 2: the file lists no figures", of a file without a line 2
        ("drive,figure,value,unit\n", "line 1: the file has only its header line, no line of figures under it."),
    ],
)
def test_a_published_figure_with_a_control_character_is_refused(a_run, tmp_path, csv, says):
    sheet = tmp_path / "esc.csv"
    sheet.write_text(csv)
    out = tmp_path / "cmp"
    said = refused(iolab("compare", str(a_run), str(sheet), "--out", str(out)))
    assert f"{sheet}, {says}" in said and "Nothing was compared." in said, said
    assert not out.exists()


SHEET = '[sheet]\nmodel = "M\\u001b[31mRED\\u0007"\n[[criterion]]\nfigure = "ART RND 4KiB R/W 65/35"\nmax = 1000\n'


def test_a_spec_sheet_model_with_a_control_character_is_refused(a_run, tmp_path):
    """The model was written into the report's front page as it stood ("for M<ESC>[31mRED")."""
    sheet = tmp_path / "ss.toml"
    sheet.write_text(SHEET)
    says = f"spec sheet {sheet}, [sheet]: field 'model' 'M\\x1b[31mRED\\x07': holds a control character"
    before = sorted(a_run.rglob("*"))
    assert says in refused(iolab("report", str(a_run), "--spec-sheet", str(sheet)))
    assert sorted(a_run.rglob("*")) == before, "the report was written"
    runs = tmp_path / "runs"
    p = iolab("run", "latency", "--quick", "-q", "-t", SMALL_SIM, "--spec-sheet", str(sheet), "--runs-dir", str(runs))
    assert says in refused(p) and not runs.exists()
