"""Stream analysis of a normalised IO table and the workloads built from it (SNIA RWSW).

streams.analyse(table, step_s=300, threshold=0.03, seq=SeqRule()) -> StreamAnalysis
workloads.composite(analysis) -> Workload      (dominant streams renormalised to 100 %)
workloads.replay(analysis, compress=1) -> ReplayPlan   (.workloads(): one per step)
workloads.save_composite / load_composite, ReplayPlan.save / load_replay   (TOML)
"""

from iolab.traces.analysis.streamstats import SeqRule, StepStat, StreamAnalysis, StreamStat
from iolab.traces.analysis.workloads import (
    ReplayPlan,
    ReplayStep,
    composite,
    load_composite,
    load_replay,
    replay,
    save_composite,
)

__all__ = [
    "ReplayPlan",
    "ReplayStep",
    "SeqRule",
    "StepStat",
    "StreamAnalysis",
    "StreamStat",
    "analyse",
    "composite",
    "load_composite",
    "load_replay",
    "replay",
    "save_composite",
]


def __getattr__(name: str):
    # the analysis itself reads traces through duckdb; the report pages need only the result
    # types above, so `iolab tests` and the report modules do not load duckdb and numpy
    if name == "analyse":
        from iolab.traces.analysis.streams import analyse

        return analyse
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
