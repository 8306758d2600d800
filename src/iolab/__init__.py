"""iolab: an open, automated storage test bench (SNIA PTS, RWSW, characterisation)."""

import _signal  # type: ignore[import-not-found]  # not `signal`: it imports enum, functools, collections (~10 ms)
import os  # loaded by Python's own start-up already
import sys

__version__ = "0.1.0"


def _stop_quietly(signum: int, frame: object) -> None:
    # errors.Exit.INTERRUPTED, as a run stopped by Ctrl-C exits. Not SystemExit: raised while
    # the import machinery ran a weakref callback (its module locks), it was printed as
    # "Exception ignored" and swallowed, and the run went on to exit 0. Only imports run while
    # this handler is set, so there is nothing to flush or clean up.
    os._exit(130)


# Ctrl-C while the `iolab` command is still importing its libraries (about half a second)
# ended in a KeyboardInterrupt traceback from deep inside an import. For the command only (a
# program importing the library keeps its own Ctrl-C), and only over Python's own handler,
# it exits 130 without one until cli/main.py has imported the Typer app, then puts Python's handler back.
_STARTING = False
if sys.argv and sys.argv[0].rsplit("/", 1)[-1] == "iolab":
    try:
        _STARTING = _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler
        if _STARTING:
            _signal.signal(_signal.SIGINT, _stop_quietly)
    except ValueError:  # not the main thread, where no handler can be set
        _STARTING = False
