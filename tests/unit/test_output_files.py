"""writepolicy.output_files, the one write-aside path (a report's PDF and HTML, an IO table, a
trace export, ...): a stop as the files written aside are made leaves none of them behind, and
a writer that fails leaves every file as it was. The stop lands as Ctrl-C would, from a real
SIGINT, whatever the suite's own SIGINT handling."""

from __future__ import annotations

import os
import signal

import pytest

from iolab.targets import writepolicy


@pytest.fixture
def ctrl_c_raises():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_stop_as_a_part_is_made_leaves_none_behind(tmp_path, monkeypatch, ctrl_c_raises):
    # Ctrl-C just as a report's folder appeared landed between a part's creation and its being
    # listed for removal: the part was left, and the folder made for it with it (test_faults.py)
    made = writepolicy.new_part

    def made_then_stopped(p):
        part = made(p)
        os.kill(os.getpid(), signal.SIGINT)
        return part

    monkeypatch.setattr(writepolicy, "new_part", made_then_stopped)
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
