"""The replay time compression `iolab trace analyze --compress` takes: one that keeps every
replayed step within the duration a run accepts, refused at analysis time otherwise."""

from __future__ import annotations

import math
from collections.abc import Callable

from iolab.core.errors import IolabError
from iolab.core.plan import MAX_CELL_SECONDS, MIN_CELL_SECONDS
from iolab.traces.analysis.streamstats import StreamAnalysis
from iolab.traces.analysis.workloads import ReplayPlan


def check_compress(a: StreamAnalysis, plan: ReplayPlan, compress: float) -> None:
    """Refuse a --compress that takes a replay step outside the duration a run accepts (1 ms to
    24 h): `iolab run`/`plan` would refuse the replay.toml written here, after the analysis had
    recommended it. Names the factors that fit every step replayed."""
    # the capture's own step lengths, not replayed × compress: float error would name 994.9 for 995
    capture = {s.index: s.duration_s for s in a.steps}
    short = min(plan.steps, key=lambda s: capture[s.index])
    long = max(plan.steps, key=lambda s: capture[s.index])
    if short.duration_s >= MIN_CELL_SECONDS and long.duration_s <= MAX_CELL_SECONDS:
        return
    most = _fitting(capture[short.index] / MIN_CELL_SECONDS, lambda f: capture[short.index] / f >= MIN_CELL_SECONDS, -1)
    least = _fitting(capture[long.index] / MAX_CELL_SECONDS, lambda f: capture[long.index] / f <= MAX_CELL_SECONDS, 1)
    bad = short if short.duration_s < MIN_CELL_SECONDS else long
    # steps too unequal for any one factor (a very short last step): say so, not an empty range
    fits = f"give --compress from {least:g} to {most:g}" if least <= most else "no one --compress fits every step"
    raise IolabError(
        f"--compress {compress:g}: replay step {bad.index} ({capture[bad.index]:g} s of capture) would last "
        f"{bad.duration_s:g} s, and a run's step must last {MIN_CELL_SECONDS * 1000:g} ms to "
        f"{MAX_CELL_SECONDS / 3600:g} h: {fits}. Nothing was written."
    )


def _fitting(x: float, ok: Callable[[float], bool], way: int) -> float:
    """`x` to 4 significant figures, moved a last digit inwards (`way`) until `ok`: the factor
    a refusal names must itself be accepted."""
    r = float(f"{x:.4g}")
    while r > 0 and not ok(r):
        r += way * 10 ** (math.floor(math.log10(r)) - 3)
    return r
