"""How a run is stopped: SIGTERM and SIGHUP raise `Interrupted` like Ctrl-C does, and the few
steps that must not be cut in half (the run directory made and claimed, but not yet known to
whoever marks an interrupted run) hold a stop signal until they are done."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from iolab.core.stopdefer import stops_held


class Interrupted(KeyboardInterrupt):
    """A stop signal other than Ctrl-C (SIGTERM, SIGHUP), handled exactly like Ctrl-C: fio is
    stopped, the run is marked interrupted with the signal named, what is stored is kept."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.signal_name = signal.Signals(signum).name


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def stop_exception(signum: int) -> KeyboardInterrupt:
    """The exception a stop signal raises: KeyboardInterrupt for Ctrl-C, `Interrupted` for the others."""
    return KeyboardInterrupt() if signum == signal.SIGINT else Interrupted(signum)


def exit_code(e: KeyboardInterrupt) -> int:
    """The shell's code for a process ended by this stop: 128 + the signal (130 for Ctrl-C)."""
    return 128 + e.signum if isinstance(e, Interrupted) else 130


# The stop signals that arrived while `stop_on_signals` was active and have not been acted on.
# Python raises a signal's exception in whatever Python code the main thread runs next; when that
# is a callback whose exceptions Python only prints (logging's fork handler, run around every fork
# of a child: "Exception ignored in: <function _releaseLock>"), the stop is lost and the run went on
# to its end. The runner asks `raise_if_stopped()` before each cell, so a lost stop is acted on there.
_PENDING: list[int] = []


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """While a run is in progress, SIGTERM and SIGHUP raise `Interrupted` in the main thread
    (their default is to die at once, leaving fio running and the run marked 'running'), and
    Ctrl-C raises KeyboardInterrupt as it does by default; each is also recorded until acted on
    (`raise_if_stopped`). A Ctrl-C the process was started to ignore (a background job) stays
    ignored."""

    def handler(signum: int, frame: FrameType | None) -> None:
        _PENDING.append(signum)
        raise stop_exception(signum)

    watched = [*STOP_SIGNALS] + (
        [signal.SIGINT] if signal.getsignal(signal.SIGINT) is signal.default_int_handler else []
    )

    def unraisable(u: sys.UnraisableHookArgs) -> None:
        # a stop raised where Python only prints it (see _PENDING) is acted on at the next
        # cell: printed, it put a traceback on the stop's way out (a SIGTERM during a fork)
        if not (isinstance(u.exc_value, KeyboardInterrupt) and _PENDING):
            hook(u)

    previous = {s: signal.signal(s, handler) for s in watched}
    hook, sys.unraisablehook = sys.unraisablehook, unraisable
    _PENDING.clear()
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        sys.unraisablehook = hook
        _PENDING.clear()


def raise_if_stopped() -> None:
    """Raise the first stop signal that arrived and was lost on its way (see _PENDING)."""
    if _PENDING:
        signum = _PENDING[0]
        _PENDING.clear()
        raise stop_exception(signum)


def acted_on() -> None:
    """The stop was raised and is being handled: nothing is pending any more."""
    _PENDING.clear()


class HeldStop:
    """The stop signals that arrived while held (see `held_stop`); `release()` raises the first."""

    def __init__(self, signals: list[int]) -> None:
        self.signals = signals

    def release(self) -> None:
        if self.signals:
            signum, self.signals = self.signals[0], []
            raise stop_exception(signum)


@contextmanager
def held_stop() -> Iterator[HeldStop]:
    """Ctrl-C, SIGTERM and SIGHUP inside the block are kept, not raised, for the caller to
    `release()` once what the block made is in its hands: a stop that landed between a run
    directory's creation and its caller's `try` left a run marked 'running' that nobody would
    mark interrupted (a fleet drive stopped as it started). Which signals are held, and where
    (the main thread only), is core/stopdefer.stops_held's."""
    with stops_held() as came:
        yield HeldStop(came)
