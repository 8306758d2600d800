"""A stop signal that Python raised where its exception is only printed (a fork callback) is
not lost: the runner acts on it before the next cell."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from iolab.run.stopsignals import Interrupted, raise_if_stopped, stop_on_signals


def _lose(sig: int) -> None:
    """The signal's exception raised and swallowed, as a callback Python only reports would."""
    try:
        os.kill(os.getpid(), sig)
        for _ in range(1000):  # the handler runs between bytecodes, here
            pass
    except KeyboardInterrupt:
        pass


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_lost_in_a_callback_is_raised_before_the_next_cell(sig):
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with stop_on_signals():
            _lose(sig)
            with pytest.raises(KeyboardInterrupt) as e:
                raise_if_stopped()
            assert isinstance(e.value, Interrupted) == (sig != signal.SIGINT)
            raise_if_stopped()  # acted on once: nothing pending any more
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_a_background_job_ignores_stays_ignored():
    code = textwrap.dedent(
        """
        import os, signal
        from iolab.run.stopsignals import raise_if_stopped, stop_on_signals
        with stop_on_signals():
            os.kill(os.getpid(), signal.SIGINT)
            raise_if_stopped()
        print("still running")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert out.returncode == 0 and out.stdout.strip() == "still running", out.stderr
