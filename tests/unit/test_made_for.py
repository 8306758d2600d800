"""made_for: a writer that fails, or is stopped, leaves no folder it made (a report stopped by
Ctrl-C as its folder appeared kept an empty `report/`: the fresh clone of 19173685 saw it)."""

from __future__ import annotations

import pytest

from iolab.targets import writepolicy


def test_a_failed_writer_leaves_no_folder_it_made_and_keeps_one_that_was_there(tmp_path):
    out = tmp_path / "a" / "b"
    with pytest.raises(KeyboardInterrupt), writepolicy.made_for(out, "report directory"):
        assert out.is_dir()
        raise KeyboardInterrupt
    assert not (tmp_path / "a").exists()
    (tmp_path / "kept").mkdir()
    with pytest.raises(OSError), writepolicy.made_for(tmp_path / "kept", "report directory"):
        raise OSError("disk full")
    assert (tmp_path / "kept").is_dir()


def test_a_stop_just_after_the_folder_is_made_removes_it(tmp_path, monkeypatch):
    made = writepolicy.output_dir

    def made_then_stopped(path, what):  # the signal lands as mkdir returns, before the writer begins
        made(path, what)
        raise KeyboardInterrupt

    monkeypatch.setattr(writepolicy, "output_dir", made_then_stopped)
    with pytest.raises(KeyboardInterrupt), writepolicy.made_for(tmp_path / "report", "report directory"):
        pytest.fail("the writer never begins")
    assert not (tmp_path / "report").exists()
