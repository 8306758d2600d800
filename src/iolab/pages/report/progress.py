"""Lines on stderr while a report is written ("writing report RUN: page 3 of 13"): the plots
and the PDF's layout take seconds to minutes, and the terminal should not look stuck."""

from __future__ import annotations

import sys
import time

EVERY_S = 1.0  # at most one line a second, and always the last one of a stage


class Progress:
    def __init__(self, what: str):
        self.what = what
        self._last = 0.0

    def __call__(self, step: str, last: bool = False) -> None:
        now = time.monotonic()
        if last or now - self._last >= EVERY_S:
            self._last = now
            print(f"{self.what}: {step}", file=sys.stderr, flush=True)
