"""Imported only by the plot workers' fork server (drawing.PRELOAD), never by a command.

multiprocessing runs the parent's main script again in every worker it starts (as
`__mp_main__`, so that functions defined there can be unpickled). For iolab that script is the
`iolab` console script, which imports the whole command line: about 0.06 CPU-s per worker, and a
characterise run starts 16 of them. The workers are only ever handed functions of iolab's own
modules (drawing._draw_in_worker), so they skip that step. (multiprocessing's own way, a
"__main__" fork-server preload, never receives the script's path on Python 3.11: forkserver.py
asks get_preparation_data for 'main_path', which it names 'init_main_from_path'.)
"""

from __future__ import annotations

import signal
from multiprocessing import spawn

# The fork server imports matplotlib next (half a CPU-second) and only then ignores Ctrl-C itself:
# a Ctrl-C to the process group meanwhile printed a KeyboardInterrupt trace into the run's output.
# The report's process stops the server (its pipe closes) whatever the signal.
signal.signal(signal.SIGINT, signal.SIG_IGN)


def _main_not_run_again(main_path: str) -> None:  # spawn.prepare calls it with the parent's script
    return None


spawn._fixup_main_from_path = _main_not_run_again  # type: ignore[attr-defined]
