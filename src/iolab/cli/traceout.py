"""What `iolab trace analyze` shows and how it leaves its directory when writing fails."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def step_table(a):
    """The per-step figures of an analysis (the first and last 10 steps of a long trace)."""
    from rich.table import Table

    from iolab.core.units import num

    t = Table(title="per step (the Self-Test figures)", title_justify="left")
    for col in ("step", "start s", "IOPS", "MB/s", "read %", "OIO avg / max", "RT avg / max µs"):
        t.add_column(col, justify="right")

    def f(v, fmt):
        return "—" if v is None else format(v, fmt)

    shown = a.steps if len(a.steps) <= 30 else a.steps[:10] + a.steps[-10:]
    for s in shown:
        if len(a.steps) > 30 and s is a.steps[-10]:
            t.add_row("…", *[""] * 6)
        t.add_row(
            f"{s.index}{' (partial)' if s.partial else ''}",
            num(s.start_s, trim=True),  # a step of 100 ms starts at 0.3 s, not "0"
            f(s.iops, ",.0f"),
            f(s.mbps, ",.1f"),
            f(s.read_pct, ".1f"),
            f"{f(s.oio_avg, ',.2f')} / {f(s.oio_max, ',')}",
            f"{f(s.rt_avg_us, ',.0f')} / {f(s.rt_max_us, ',.0f')}",
        )
    return t


@contextmanager
def kept_whole(out: Path, made: bool) -> Iterator[None]:
    """An analysis that fails while written (a full disk) leaves none of its files: a 0-byte
    analysis.json, or one without its composite.toml, is what `run rwsw -w DIR` would read next.
    A directory this command made goes whole; in one that was there, the workload files go."""
    from iolab.core.runfiles import ANALYSIS_FILE, COMPOSITE_FILE, REPLAY_FILE

    try:
        yield
    except BaseException:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        else:
            for name in (ANALYSIS_FILE, COMPOSITE_FILE, REPLAY_FILE):
                (out / name).unlink(missing_ok=True)
        raise
