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


# A process that stops itself with SIGTERM inside logging's fork callback, as a run's stop can
# land while it starts fio: the callback's exception is one Python only prints ("Exception
# ignored in: <function _releaseLock>" and a traceback on the stop's way out), then the next
# cell acts on the stop.
STOPPED_IN_A_FORK = textwrap.dedent(
    """
    import logging, os, signal, sys
    from iolab.run.stopsignals import Interrupted, raise_if_stopped, stop_on_signals

    def stop_me():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs between bytecodes, here, inside the callback
            pass

    os.register_at_fork(after_in_parent=stop_me)
    with stop_on_signals():
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        try:
            raise_if_stopped()
        except Interrupted as e:
            print("stopped by", e.signal_name)
    # outside a run the hook is Python's again: another exception Python only prints is printed
    class Loud:
        def __del__(self):
            raise ValueError("printed")
    Loud()
    """
)


def test_a_stop_inside_a_fork_callback_prints_no_traceback_and_is_acted_on():
    p = subprocess.run([sys.executable, "-c", STOPPED_IN_A_FORK], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout == "stopped by SIGTERM\n", p.stdout + p.stderr
    assert "Interrupted" not in p.stderr and "_releaseLock" not in p.stderr, p.stderr
    assert "ValueError: printed" in p.stderr
