"""writepolicy.output_files, the one write-aside path (a report's PDF and HTML, an IO table, a
trace export, ...): a stop as the files written aside are made leaves none of them behind, and
a writer that fails leaves every file as it was. The stop lands as Ctrl-C would, from a real
SIGINT, whatever the suite's own SIGINT handling."""

from __future__ import annotations

import os
import signal

import pytest

from iolab.core import writeaside
from iolab.core.errors import RefusedError
from iolab.targets import writepolicy


@pytest.fixture
def ctrl_c_raises():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_stop_as_a_part_is_made_leaves_none_behind(tmp_path, monkeypatch, ctrl_c_raises):
    # Ctrl-C just as a report's folder appeared landed between a part's creation and its being
    # listed for removal: the part was left, and the folder made for it with it (test_faults.py)
    made = writeaside._new_part

    def made_then_stopped(p):
        part = made(p)
        os.kill(os.getpid(), signal.SIGINT)
        return part

    monkeypatch.setattr(writeaside, "_new_part", made_then_stopped)
    with (
        pytest.raises(KeyboardInterrupt),
        writepolicy.output_files([tmp_path / "a.pdf", tmp_path / "a.html"], "report file"),
    ):
        pytest.fail("the stop takes effect once the parts are listed, before the writer begins")
    assert list(tmp_path.iterdir()) == []


def test_a_writer_that_fails_leaves_each_file_as_it_was(tmp_path):
    pair = [tmp_path / "a.pdf", tmp_path / "a.html"]
    with writepolicy.output_files(pair, "report file") as parts:
        for part in parts:
            part.write_text("old")
    with pytest.raises(OSError), writepolicy.output_files(pair, "report file") as parts:
        parts[0].write_text("new")
        raise OSError("disk full")
    assert [p.read_text() for p in pair] == ["old", "old"] and sorted(tmp_path.iterdir()) == sorted(pair)


@pytest.mark.parametrize("check", ["check_file", "check_file_in_dir"])
def test_an_output_that_is_one_of_the_commands_inputs_is_refused_first_by_the_policy(tmp_path, check):
    # The policy's own check takes the files the command reads (its one copy; the trace commands
    # had theirs beside it): an iolab output read as input is refused though the policy lets
    # iolab replace it, and a user's file read as input for what it is, not as "not iolab's"
    mine, theirs = tmp_path / "t.parquet", tmp_path / "t.txt"
    mine.write_bytes(b"table")
    writepolicy.mark_written(mine, "IO table")
    theirs.write_text("0 1 0 8 1\n")
    (tmp_path / "link.parquet").symlink_to(mine)
    checked = getattr(writepolicy, check)
    extra = ("--out",) if check == "check_file_in_dir" else ()
    assert checked(mine, "IO table", *extra, reads=[theirs]) == mine  # another file: allowed
    for out, read in [(mine, mine), (tmp_path / "link.parquet", mine), (theirs, theirs)]:
        with pytest.raises(RefusedError) as e:
            checked(out, "IO table", *extra, reads=[tmp_path / "absent", read])
        said = str(e.value)
        assert f"Refusing to write the IO table {str(out)!r}: it is {read}, which this command reads" in said
        assert "would replace its own input" in said and "did not write" not in said
