"""Steps a stop signal must not cut in two, at the bottom of the layers (the store, the write
policy and the pages use it): files that belong together taking their names one rename after
another (an export's tables and its manifest, `iolab power`'s meter log and power.json, a
report's PDF and HTML). A stop between two renames left a set that was neither the old one nor
the new one: an export of new tables beside an earlier export's manifest, or a new meter log
beside the power.json computed from the one before.

Both ways of holding a stop are one mechanism, `stops_held`: run/stopsignals.held_stop holds a
stop for the run's own steps and raises it as an exception; `stop_deferred` sends the signal
again once the block is done, to whatever handles it then (the run's handler, Python's Ctrl-C,
or the default that ends the process), as if it had come a moment later.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Ctrl-C, and what a CI job's timeout or a closed terminal sends
DEFERRED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def stops_held() -> Iterator[list[int]]:
    """Ctrl-C, SIGTERM and SIGHUP inside the block are kept, not acted on, in the list it hands
    out (in the order they came) for the caller to act on once the block is done: stop_deferred
    sends the first again, run/stopsignals.held_stop raises it. Outside the main thread signals
    are not this thread's to hold, and a signal whose handler Python did not set (getsignal gives
    None) is left as it is: the block runs as it is for them. An ignored signal stays ignored (a
    background job's Ctrl-C: held, it stopped the run it was started not to stop)."""
    came: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield came
        return
    previous = {}
    for s in DEFERRED:
        h = signal.getsignal(s)
        if h is not None and h is not signal.SIG_IGN:
            previous[s] = signal.signal(s, lambda signum, frame: came.append(signum))
    try:
        yield came
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


@contextmanager
def stop_deferred() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP inside the block take effect once it is done (stops_held)."""
    came: list[int] = []
    try:
        with stops_held() as came:
            yield
    finally:
        if came:
            os.kill(os.getpid(), came[0])  # to the handler now in place, as the stop would have gone


# What a child `iolab` runs (each run of several --target, each --repeat): main() with the stop
# signals it was started with blocked (stops_blocked) let in once its handling of them is in place
CHILD_MAIN = "from iolab.cli.main import main; main(started_blocked=True)"


@contextmanager
def stops_blocked() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP blocked in this thread while it starts a child `iolab`
    (CHILD_MAIN): the mask passes through fork and exec, so the child starts with a stop passed
    on to it pending, not delivered, until its main() lets it in (let_stops_in). Delivered while
    the child's Python was still starting, a Ctrl-C ended it in "Fatal Python error:
    init_import_site" (or a KeyboardInterrupt traceback from an import). Here the stop waits
    the moment the child takes to start; the caller's own handling takes it after."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def let_stops_in() -> None:
    """A child started under stops_blocked takes its stops from here on (one that came while it
    started is delivered now)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, DEFERRED)
