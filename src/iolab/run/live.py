"""Mid-cell progress of a running run, for `iolab watch`: the runner's live-progress callback
also writes RUN_DIR/live.json (the cell running, seconds into it, live IOPS in total and per
path or drive of a split round, and the mean latency of the IOs since the engine's last
report), replaced atomically at most twice a second. It is a view of
the engine's periodic reports only; no stored result is derived from it. The cell's reports
so far are kept in it too (the last MAX_SAMPLES), so the page can chart the cell under way."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.safefile import read_json
from iolab.core.writeaside import written_aside

LIVE_NAME = "live.json"
MIN_INTERVAL_S = 0.5  # fio reports every second; a faster rewrite shows nothing new
MAX_SAMPLES = 600  # ten minutes of fio's per-second reports: the chart's width, a small file


class LiveFile:
    """The progress callback the runner gives an engine for one cell: forwards to the display
    and writes live.json. `parts`: live IOPS per leg of a split round, by leg name. `at_start`:
    live.json names the cell as it starts, before its first report (an engine in wall time
    reports a second in); an engine in virtual time reports at once, and that report is the
    cell's first write (written at its start too, live.json was written twice for every cell)."""

    def __init__(self, run_dir: Path, cell: str, forward: Callable[[float, float], None], at_start: bool = True):
        self.path = Path(run_dir) / LIVE_NAME
        self.cell = cell
        self.forward = forward
        self.started = time.time()
        self.samples: list[list] = []  # [seconds into the cell, IOPS, {leg: IOPS}, mean latency µs]
        if at_start:
            self._write(0.0, None, None, {})
        self._last = 0.0  # the first report is written however soon it comes

    def __call__(
        self, elapsed_s: float, iops: float, lat_us: float | None = None, parts: dict[str, float] | None = None
    ) -> None:
        self.forward(elapsed_s, iops)
        self.samples = [*self.samples[-(MAX_SAMPLES - 1) :], [elapsed_s, iops, parts or {}, lat_us]]
        if time.monotonic() - self._last >= MIN_INTERVAL_S:
            self._write(elapsed_s, iops, lat_us, parts or {})

    def _write(self, elapsed_s: float, iops: float | None, lat_us: float | None, parts: dict[str, float]) -> None:
        self._last = time.monotonic()
        doc = {
            "cell": self.cell,
            "elapsed_s": elapsed_s,
            "iops": iops,
            "lat_mean_us": lat_us,
            "parts": parts,
            "samples": self.samples,
            "started": self.started,
            "updated": time.time(),
        }
        # not durable: a view rewritten twice a second, never read back as a result; written aside
        # under a fresh name, not the fixed .live.json.tmp a planted symlink redirected
        with written_aside([self.path]) as (part,):
            part.write_text(json.dumps(doc))


def read(run_dir: Path) -> dict | None:
    """The last live.json written in run_dir (None: none, or caught mid-replace)."""
    try:
        data = read_json(Path(run_dir) / LIVE_NAME, "live progress file", "manifest")
    except (OSError, IolabError):
        return None
    return data if isinstance(data, dict) else None
