"""Each second's maximum latency from fio's completion-latency histogram logs
(`write_hist_log` with `log_hist_msec`): a line is `time_ms, direction, bs, bin0 … binN`, the
IO count of each latency bin over that interval (fio 3.x: 1856 bins in ns, FIO_IO_U_PLAT_BITS
6), so the highest non-empty bin of a second is its maximum completion latency to within a
bin (1/64 of the value). Submission latency is not in it; fio's per-second lat log (the
average) cannot give a maximum alongside its average before fio 3.36.
"""

from __future__ import annotations

import csv
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from iolab.core.errors import EngineError
from iolab.core.safefile import output_lines

HIST_RE = re.compile(r"_clat_hist\.(\d+)\.log$")
PLAT_BITS, PLAT_VAL, PLAT_NR = 6, 64, 1856  # fio stat.h, log_hist_coarseness=0


def bin_value(idx: int, bits: int = PLAT_BITS, val: int = PLAT_VAL) -> float:
    """fio's stat.c plat_idx_to_val: the middle of bin `idx`'s range."""
    if idx < (val << 1):
        return float(idx)
    error_bits = (idx >> bits) - 1
    return (1 << (error_bits + bits)) + (idx % val + 0.5) * (1 << error_bits)


def tagged(raw_dir: Path, tag: str) -> list[str]:
    """The names in raw_dir that start with round `tag`, sorted. Names are listed as strings
    and filtered by prefix first: a run's raw directory holds every round's files (thousands),
    and a Path per entry per round made a long run quadratic."""
    return sorted(n for n in os.listdir(raw_dir) if n.startswith(tag))


def matching(raw_dir: Path, names: Iterable[str], tag: str, suffix: re.Pattern[str]) -> list[Path]:
    """The files among `names` (in raw_dir) that are the tag then `suffix`, in their order."""
    pat = re.compile(re.escape(tag) + suffix.pattern)
    return [raw_dir / n for n in names if pat.fullmatch(n)]


def files(raw_dir: Path, tag: str, names: Iterable[str] | None = None) -> list[Path]:
    """Round `tag`'s histogram logs; `names`: the round's names when the caller has listed them."""
    return matching(raw_dir, tagged(raw_dir, tag) if names is None else names, tag, HIST_RE)


@contextmanager
def log_lines(path: Path, what: str) -> Iterator[Iterator[str]]:
    """A fio log's lines (safefile.output_lines), read during a run, by resume recovering a cell
    and by the audit deriving its per-second rows again: a FIFO planted as a log hung them in
    open(). A log that cannot be read is an EngineError naming it; a missing one stays
    FileNotFoundError (the audit's "a log not kept")."""
    try:
        with output_lines(path) as lines:
            yield lines
    except FileNotFoundError:
        raise
    except OSError as e:
        raise EngineError(f"{what} {path} cannot be read ({e.strerror or e}).") from None


def maxima(paths: Iterable[Path], interval_ms: int) -> dict[int, float]:
    """Interval bucket (as parse_fio_logs numbers them) → the largest latency (µs) any job
    completed in it, in either direction."""
    out: dict[int, float] = {}
    for path in paths:
        last: dict[int, int] = defaultdict(int)
        with log_lines(path, "fio histogram log") as lines:
            for lineno, row in enumerate(csv.reader(lines, skipinitialspace=True), 1):
                if not row:
                    continue
                try:
                    t_ms, ddir, counts = int(row[0]), int(row[1]), [int(c) for c in row[3:]]
                except (ValueError, IndexError):
                    counts = []
                if len(counts) != PLAT_NR:
                    raise EngineError(
                        f"fio histogram log {path}, line {lineno}: expected 'time, direction, bs' and "
                        f"{PLAT_NR} bin counts, got {len(row)} fields. The log is damaged or from an "
                        "unknown fio; rerun the round."
                    )
                if ddir not in (0, 1):
                    continue
                k = max(t_ms // interval_ms, last[ddir] + 1)  # the bucketing of fio.py's _read_log
                last[ddir] = k
                top = next((i for i in range(PLAT_NR - 1, -1, -1) if counts[i]), None)
                if top is not None:
                    out[k] = max(out.get(k, 0.0), bin_value(top) / 1000.0)
    return out
