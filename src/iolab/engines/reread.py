"""A stored cell's figures read again from its raw engine output, by the parsers the engines
read it with when the cell was stored (fio_parse.parse_fio_json, sim.parse_result): the
self-audit's `raw-figures` invariant (figures/audit_rederive.py) holds every stored figure to
what these give, so a results.db edited after the run cannot pass for what the engine measured.

Which parser reads a file is told by its final report's shape, as core/results.held_ios tells
its IO counts: fio's report names its version ("fio version") and holds its jobs, or a fio
client's per-host entries (client_stats, less the "All clients" sum, as fio_client reads it);
the simulator's holds its read and write sides. A round split over paths or hosts (engines/merge)
stored one JSON per part, or one client report naming every host: its jobs, all of them, are
read as one group; merge adds its parts' counts and rates and merges their latencies exactly as
fio_parse._combine adds a part's jobs, so that is the merged figures (to the order of the sums).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iolab.core.errors import EngineError
from iolab.core.results import RoundResult, json_objects
from iolab.core.safefile import read_output
from iolab.engines.fio_parse import fio_result

# The engines whose raw output these parsers read, by the version each records (manifest.json's
# versions.engine: `fio --version`'s "fio-3.33", SimEngine.version's "iolab-sim-0.1.0"): a run of
# another engine (a test's scripted one, a new engine before its reader is declared here) has no
# figures these can derive again, where a fio or simulator run's output they cannot read is
# figures without their evidence.
READ_VERSIONS = ("fio-", "iolab-sim-")


def reads(engine_version: str) -> bool:
    """Whether a run of the engine that recorded this version wrote output `reread` reads."""
    return engine_version.startswith(READ_VERSIONS)


def _final(path: Path) -> dict[str, Any]:
    """A raw file's final report (EngineError: none)."""
    try:
        text = read_output(path)
    except OSError as e:
        raise EngineError(f"raw output {path} cannot be read ({e.strerror or e})") from None
    try:
        objs = [json.loads(text)]  # the usual case, one object: a single parse
    except ValueError:
        objs = json_objects(text)[0]
    if not objs or not isinstance(objs[-1], dict):
        raise EngineError(f"raw output {path} holds no JSON report")
    return objs[-1]


def _fio_jobs(report: dict[str, Any]) -> list[Any]:
    """A fio report's job entries as the engine read them: its jobs, or a client's hosts'."""
    if isinstance(report.get("jobs"), list):
        return list(report["jobs"])
    stats = report.get("client_stats")
    if isinstance(stats, list):
        return [j for j in stats if not (isinstance(j, dict) and j.get("jobname") == "All clients")]
    raise EngineError("a fio report without jobs or client_stats")


def reread(run_dir: Path, names: Sequence[str]) -> RoundResult:
    """The RoundResult a cell's raw JSON outputs (`names`, relative to `run_dir`; a name given
    twice, a client report per host, is read once) give. EngineError: a file that is not an
    output these parsers read (raw-output says what is wrong with a damaged one)."""
    files = list(dict.fromkeys(names))
    if not files:
        raise EngineError("no raw JSON output")
    read = [(name, _final(run_dir / name)) for name in files]
    if all("fio version" in report for _, report in read):
        jobs = [j for _, report in read for j in _fio_jobs(report)]
        return fio_result({"fio version": read[0][1]["fio version"], "jobs": jobs}, ", ".join(files))
    if len(read) == 1 and isinstance(read[0][1].get("read"), dict) and isinstance(read[0][1].get("write"), dict):
        from iolab.engines.sim import result_of  # lazy: loads the simulator's Rust core

        return result_of(read[0][1], read[0][0])
    raise EngineError(f"raw output {', '.join(files)}: not a report of an engine iolab runs")
