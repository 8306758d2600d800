"""How a run is stopped: SIGTERM and SIGHUP raise `Interrupted` like Ctrl-C does, and the few
steps that must not be cut in half (the run directory made and claimed, but not yet known to
whoever marks an interrupted run) hold a stop signal until they are done."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Interrupted(KeyboardInterrupt):
    """A stop signal other than Ctrl-C (SIGTERM, SIGHUP), handled exactly like Ctrl-C: fio is
    stopped, the run is marked interrupted with the signal named, what is stored is kept."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.signal_name = signal.Signals(signum).name


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def exit_code(e: KeyboardInterrupt) -> int:
    """The shell's code for a process ended by this stop: 128 + the signal (130 for Ctrl-C)."""
    return 128 + e.signum if isinstance(e, Interrupted) else 130


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """While a run is in progress, SIGTERM and SIGHUP raise `Interrupted` in the main thread
    (their default is to die at once, leaving fio running and the run marked 'running')."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


class HeldStop:
    """The stop signals that arrived while held (see `held_stop`); `release()` raises the first."""

    def __init__(self) -> None:
        self.signals: list[int] = []

    def release(self) -> None:
        if self.signals:
            signum, self.signals = self.signals[0], []
            raise KeyboardInterrupt() if signum == signal.SIGINT else Interrupted(signum)


@contextmanager
def held_stop() -> Iterator[HeldStop]:
    """Ctrl-C, SIGTERM and SIGHUP inside the block are kept, not raised, for the caller to
    `release()` once what the block made is in its hands: a stop that landed between a run
    directory's creation and its caller's `try` left a run marked 'running' that nobody would
    mark interrupted (a fleet drive stopped as it started). Outside the main thread signals
    are not ours to hold, and the block runs as it is."""
    held = HeldStop()
    if threading.current_thread() is not threading.main_thread():
        yield held
        return

    def hold(signum: int, frame: FrameType | None) -> None:
        held.signals.append(signum)

    previous = {s: signal.signal(s, hold) for s in (signal.SIGINT, *STOP_SIGNALS)}
    try:
        yield held
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
