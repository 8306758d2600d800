"""Lines on stderr while a report is written ("writing report RUN: page 3 of 13"): the plots
and the PDF's layout take seconds to minutes, and the terminal should not look stuck."""

from __future__ import annotations

import time

from iolab.core.streams import QUIET_PROGRESS, note_line

EVERY_S = 1.0  # at most one line a second, and always the last one of a stage


class Progress:
    def __init__(self, what: str):
        self.what = what
        self._last = 0.0

    def __call__(self, step: str, last: bool = False) -> None:
        now = time.monotonic()
        if QUIET_PROGRESS["on"]:
            return
        if last or now - self._last >= EVERY_S:
            self._last = now
            note_line(f"{self.what}: {step}")  # dropped if stderr's reader went away
