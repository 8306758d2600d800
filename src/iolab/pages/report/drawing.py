"""matplotlib plots drawn once and, while a report is written, in worker processes: a plot
function marked `drawn_apart` returns its PNG bytes, or inside `drawing_in_parallel` a `Pending`
PNG at once, so matplotlib draws on every CPU while the pages are built and the PDF laid out.
The plots iolab draws itself (vector.py) take milliseconds and are drawn where they are called."""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import pickle
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from iolab.pages.report.model import Pending

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

PRELOAD = [
    "iolab.pages.report.workermain",
    "iolab.pages.report.plots",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
]
_ACTIVE = False  # inside `drawing_in_parallel`
_POOL: ProcessPoolExecutor | None = None  # its worker processes, once a matplotlib plot is submitted
_NO_POOL = False  # they could not start, or there is one CPU: plots are drawn in this process
# Every plot drawn in this process, by its function and arguments: a sequence's report shows the
# same figures as its runs' own reports, drawn once.
_DRAWN: dict[bytes, bytes | Pending] = {}


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group: the report's process stops the workers, which
    # would otherwise each print a KeyboardInterrupt trace
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _draw_in_worker(module: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes:
    png: bytes = getattr(importlib.import_module(module), name).__wrapped__(*args, **kwargs)
    return png


@contextmanager
def drawing_in_parallel() -> Iterator[None]:
    """matplotlib plots called inside are drawn in worker processes (one per CPU) while the pages
    are built; their figures hold `Pending` PNGs until the report is rendered. The workers start
    with the first such plot: a report whose plots iolab draws itself (vector.py) never starts
    them, nor imports matplotlib."""
    global _ACTIVE, _POOL, _NO_POOL
    if _ACTIVE:
        yield
        return
    _ACTIVE, _NO_POOL = True, False
    try:
        yield
    finally:
        pool, _POOL, _ACTIVE = _POOL, None, False
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _pool() -> ProcessPoolExecutor | None:
    """The plot workers inside `drawing_in_parallel`, started on the first call; None outside
    it, on one CPU, or where they cannot start (no POSIX semaphores: no /dev/shm)."""
    global _POOL, _NO_POOL
    if not _ACTIVE or _NO_POOL or _POOL is not None:
        return _POOL
    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if workers < 2:
        _NO_POOL = True
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # forkserver: the workers start from a clean process that has imported matplotlib once, not
    # as forks of this one and its threads (the live view, the store), and do not run the main
    # script (the `iolab` console script, the whole command line) again each (workermain.py)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    try:
        _POOL = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_ignore_sigint)
    except (OSError, NotImplementedError):  # drawn in this process
        _NO_POOL = True
    return _POOL


def drawn_apart(draw: Callable[..., bytes]) -> Callable[..., bytes | Pending]:
    """A plot function whose PNG is drawn once per set of arguments in this process, in a
    worker process inside `drawing_in_parallel` (the call then returns a `Pending`)."""

    @functools.wraps(draw)
    def call(*args: Any, **kwargs: Any) -> bytes | Pending:
        try:
            key = hashlib.sha1(pickle.dumps((draw.__module__, draw.__qualname__, args, kwargs))).digest()
        except Exception:  # noqa: BLE001 - arguments that do not pickle: drawn here, every time
            return draw(*args, **kwargs)
        if key not in _DRAWN:
            pool = _pool()
            if pool is None:
                _DRAWN[key] = draw(*args, **kwargs)
            else:
                _DRAWN[key] = Pending(
                    pool.submit(_draw_in_worker, draw.__module__, draw.__qualname__, args, kwargs), draw, args, kwargs
                )
        return _DRAWN[key]

    return call
