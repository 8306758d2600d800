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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from iolab.core.errors import EngineError
from iolab.core.results import LOG_INTERVAL_MS, RoundResult, SecondSample, held_ios, json_objects
from iolab.core.safefile import read_output
from iolab.engines import fio_hist
from iolab.engines.fio_parse import fio_result, log_files, parse_fio_logs

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


@dataclass(frozen=True)
class Reread:
    """What a cell's raw outputs give: the engine's result, and for fio the IOs each direction
    *issued* after the warm-up (its jobs' `total_ios`, summed), which runs stored before the IO
    count became the latency samples' (core/results.fio_completed_ios) kept as the cell's count."""

    result: RoundResult
    issued: tuple[int, int] | None = None  # (read, write); None: not fio, or a report without them
    reports: tuple[tuple[str, dict[str, Any]], ...] = ()  # fio: each file's final report (its name, the report)
    # A split round's legs (engines/merge.Part's results), as the engine parsed each: a path's
    # own report (fio) or entry (the simulator's "paths"), a fio client's host's entries; with
    # each fio leg's report (for its issued IOs). Empty: one leg.
    legs: tuple[tuple[RoundResult, dict[str, Any] | None], ...] = ()

    def counted_as_issued(self, read_ios: int | None, write_ios: int | None) -> bool:
        """Whether a cell stored these counts by the rule before: fio's issued IOs, where they
        differ from the IOs its latencies count (an IO in flight when the warm-up ended)."""
        stored = (read_ios or 0, write_ios or 0)
        return self.issued is not None and stored == self.issued != (self.result.read.ios, self.result.write.ios)


def reread(run_dir: Path, names: Sequence[str]) -> Reread:
    """What a cell's raw JSON outputs (`names`, relative to `run_dir`; a name given twice, a
    client report per host, is read once) give. EngineError: a file that is not an output
    these parsers read (raw-output says what is wrong with a damaged one)."""
    files = list(dict.fromkeys(names))
    if not files:
        raise EngineError("no raw JSON output")
    read = [(name, _final(run_dir / name)) for name in files]
    if all("fio version" in report for _, report in read):
        jobs = [j for _, report in read for j in _fio_jobs(report)]
        result = fio_result({"fio version": read[0][1]["fio version"], "jobs": jobs}, ", ".join(files))
        counts = [held_ios(report, issued=True) for _, report in read]
        whole = [c for c in counts if c is not None and c != (-1, -1)]
        issued = (sum(r for r, _ in whole), sum(w for _, w in whole)) if len(whole) == len(counts) else None
        return Reread(result, issued, tuple(read), _fio_legs(read))
    if len(read) == 1 and isinstance(read[0][1].get("read"), dict) and isinstance(read[0][1].get("write"), dict):
        from iolab.engines.sim import result_of  # lazy: loads the simulator's Rust core

        result = result_of(read[0][1], read[0][0])
        return Reread(result, legs=_sim_legs(result, read[0][1], read[0][0]))
    raise EngineError(f"raw output {', '.join(files)}: not a report of an engine iolab runs")


def _fio_legs(read: list[tuple[str, dict[str, Any]]]) -> tuple[tuple[RoundResult, dict[str, Any] | None], ...]:
    """A split fio round's legs: each path's report (one file each), or each host's entries in a
    client's report (fio_client.client_parts: a host's jobs by its hostname and port)."""
    version = read[0][1]["fio version"]
    if len(read) > 1:
        groups = [(name, _fio_jobs(report)) for name, report in read]
    else:
        hosts: dict[tuple[Any, Any], list[Any]] = {}
        for j in _fio_jobs(read[0][1]) if "client_stats" in read[0][1] else ():
            hosts.setdefault((j.get("hostname"), j.get("port")), []).append(j)
        if len(hosts) < 2:
            return ()
        groups = [(f"{read[0][0]} (client {h}:{p})", jobs) for (h, p), jobs in hosts.items()]
    return tuple((fio_result({"fio version": version, "jobs": jobs}, name), {"jobs": jobs}) for name, jobs in groups)


def _sim_legs(result: RoundResult, report: dict[str, Any], name: str) -> tuple[tuple[RoundResult, None], ...]:
    """A simulated split round's legs: its report's "paths" entries, as engines/sim_paths reads them."""
    paths = report.get("paths")
    if not isinstance(paths, list):
        return ()
    from iolab.engines.sim_paths import path_results

    return tuple((r, None) for r in path_results(result, paths, name))


def legs(got: Reread, as_issued: bool = False) -> list[RoundResult]:
    """The split round's legs' results (empty: one leg); `as_issued`: each fio leg's IO counts
    its issued ones, the rule the cell was stored under (Reread.counted_as_issued)."""
    return [_counted(r, report) if as_issued and report is not None else r for r, report in got.legs]


def _counted(result: RoundResult, report: dict[str, Any]) -> RoundResult:
    """`result` with its read and write IOs fio's issued ones in `report` (the rule before)."""
    r, w = held_ios(report, issued=True) or (result.read.ios, result.write.ios)
    return replace(result, read=replace(result.read, ios=r), write=replace(result.write, ios=w))


def reseries(
    run_dir: Path, raw_files: Sequence[str], got: Reread, as_issued: bool = False, merged_before: bool = False
) -> tuple[SecondSample, ...] | None:
    """The per-second series a cell's raw output gives, as the engine made it when the cell was
    stored: the simulator's from its JSON; fio's from the per-second logs among `raw_files` (the
    cell's, as stored), each JSON's own (a split round's part's) with that report as the totals
    its partial last row is taken from (fio_parse.load_round's), a split's parts merged as
    engines/merge merged them. `as_issued`: the cell's counts were fio's issued IOs (the rule
    before), which its last row was then made with. `merged_before`: a split's parts merged by the
    rule before merge_series held every leg's rest (merge_before), which runs stored then were.
    None: a fio client's report (its hosts' logs are told apart by the endpoints the run used,
    which it does not keep)."""
    if not got.reports:
        return got.result.series
    if any(not isinstance(report.get("jobs"), list) for _, report in got.reports):
        return None
    from iolab.engines.merge import merge_series  # here: merge loads the job writer
    from iolab.engines.merge_before import merge_series_before

    fio2 = got.result.engine_version.startswith("fio-2.")
    names = [str(n).rpartition("/")[2] for n in raw_files]  # not a Path each: ~20 files a cell
    each = (
        legs(got, as_issued)
        if len(got.reports) > 1
        else [_counted(got.result, got.reports[0][1]) if as_issued else got.result]
    )
    parts = []
    for (name, _report), totals in zip(got.reports, each):
        raw_dir, tag = (run_dir / name).parent, Path(name).name.removesuffix(".json")
        hists = [] if fio2 else fio_hist.files(raw_dir, tag, names)
        maxima = fio_hist.maxima(hists, LOG_INTERVAL_MS)
        logs = log_files(raw_dir, tag, names)
        series = parse_fio_logs(
            [*logs, *empty_logs(raw_dir, tag, logs)],
            lat_per_us=1.0 if fio2 else 1000.0,
            maxima=maxima,
            totals=totals,
        )
        parts.append(replace(totals, series=series))
    if len(parts) == 1:
        return parts[0].series
    return merge_series_before([p.series for p in parts]) if merged_before else merge_series(parts)


def empty_logs(raw_dir: Path, tag: str, listed: Sequence[Path]) -> list[Path]:
    """The round's iops and bw logs a job wrote empty, which its cell does not list (a run lists
    only non-empty raw files) but the series was made with: a job that logged no line leaves no
    second every job covers (fio_parse.parse_fio_logs), so the round is one row, where the other
    jobs' logs alone would give rows of their IOs only. fio numbers a round's logs from 1 on."""
    have, out, n = set(listed), [], 1
    while True:
        seen = False
        for kind in ("iops", "bw"):
            p = raw_dir / f"{tag}_{kind}.{n}.log"
            if p in have:
                seen = True
            elif p.is_file():
                seen = True
                out += [p] if p.stat().st_size == 0 else []
        if not seen:
            return out
        n += 1


# A leg's figures the runner gave, not the engine: how the round's workload was split.
LEG_FACTS = ("threads", "queue_depth")


def leg_figures(got: Reread, as_issued: bool = False) -> list[dict[str, float]]:
    """Each leg's measured figures as a split round stores them in its counters (by the engine's
    own merge.part_counters), from the raw output (the whole round is its one leg when it ran on
    one); `as_issued` as for `legs`."""
    from iolab.engines.merge import PART_SEP, Part, part_counters

    results = legs(got, as_issued)
    if not results:
        jobs = {"jobs": [j for _, report in got.reports for j in _fio_jobs(report)]}
        results = [_counted(got.result, jobs) if as_issued and got.reports else got.result]
    out = []
    for r in results:
        figures = {k.rsplit(PART_SEP, 1)[1]: v for k, v in part_counters([Part("leg", r, 0, 0)]).items()}
        out.append({k: v for k, v in figures.items() if k not in LEG_FACTS})
    return out


def stored_legs(counters: dict[str, Any]) -> dict[str, dict[str, float]]:
    """A stored cell's legs' figures by leg name (merge.breakdown), the runner's facts left out."""
    from iolab.engines.merge import breakdown

    return {p.name: {k: v for k, v in p.figures.items() if k not in LEG_FACTS} for p in breakdown(counters)}
