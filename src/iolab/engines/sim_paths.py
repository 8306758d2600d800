"""Several host paths into one simulated drive (`--paths` on a `sim:` target), as into a
dual-ported drive: a path is the target's spec with `port=N` (the target itself is port 0
unless it names another). Every path's IO goes to the one drive the target builds (one FTL,
one controller, one flash array) over a host link of its own port (an SSD's; the simulator's
ports.rs), each path keeps its share of the round's outstanding IO (split as `--paths` splits
it on real paths), and the simulator counts each path's IOs apart. So a link-bound round
(sequential reads at the link's rate) gains from a second port and a back-end-bound one does
not. The round's figures are the drive's own; each path's
are stored beside them for the report's per-path breakdown, as a split fio round stores them."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.core.errors import EngineError, IolabError
from iolab.core.results import RoundResult
from iolab.core.workload import Workload
from iolab.engines.merge import Part, idle_legs, part_counters, split_workload
from iolab.engines.sim import SimEngine, _op_stats, _Raw
from iolab.targets import Target

PORT = "port"


@dataclass(frozen=True)
class SimPath:
    name: str  # as the report shows it: "port N"
    port: int
    share: float = 1.0


def port_of(t: Target) -> int:
    value = t.option(PORT) or "0"
    if not value.isdigit():
        raise IolabError(f"target {t.spec}: port={value!r} is not a port number (0, 1, ...).")
    return int(value)


def sim_paths(tgt: Target, paths: list[Target], given: str) -> list[SimPath]:
    """`--paths` of a simulated drive: every path the target's own drive (same preset, same
    parameters), each on its own port, the target's among them."""
    drive = {k: v for k, v in tgt.options if k != PORT}
    for p in paths:
        other = {k: v for k, v in p.options if k != PORT}
        if p.kind != "sim" or p.path != tgt.path or other != drive:
            differs = (
                [f"not a simulated drive ({p.kind})"]
                if p.kind != "sim"
                else [f"preset {p.path}, not {tgt.path}"]
                if p.path != tgt.path
                else [
                    f"{k}={other.get(k, '(unset)')}, not {drive.get(k, '(unset)')}"
                    for k in sorted({*drive, *other})
                    if other.get(k) != drive.get(k)
                ]
            )
            raise IolabError(
                f"--paths: {p.spec} is not a path into the simulated drive of the --target ({tgt.spec}): "
                + "; ".join(differs)
                + ". Every path is the target's spec (same preset and parameters) with its own port=N, e.g. "
                f"--paths 'sim:{tgt.path}{_query(drive, 0)},sim:{tgt.path}{_query(drive, 1)}'."
            )
    ports = [port_of(p) for p in paths]
    twice = sorted({n for n in ports if ports.count(n) > 1})
    if twice:
        raise IolabError(
            f"--paths {given}: port {twice[0]} is given twice; each path into the drive is a port of its own "
            "(port=N in its spec)."
        )
    if len(ports) < 2 or port_of(tgt) not in ports:
        raise IolabError(
            f"--paths {given}: give two or more paths to the drive, including the --target ({tgt.spec}, "
            f"port {port_of(tgt)})."
        )
    return [SimPath(f"port {n}", n) for n in ports]


def _query(options: dict[str, str], port: int) -> str:
    items = [*(f"{k}={v}" for k, v in options.items()), *([f"{PORT}={port}"] if port else [])]
    return "?" + "&".join(items) if items else ""


def paths_from_manifest(split: list[dict]) -> SimPathsEngine:
    """The engine of a run's stored split (`SimPathsEngine.split`), for `iolab resume`."""
    try:
        return SimPathsEngine([SimPath(s["name"], int(s["port"]), float(s["share"])) for s in split])
    except (KeyError, TypeError, ValueError) as e:
        raise IolabError(
            f"the run's stored split {str(split)[:200]} is not one this iolab can rebuild ({e}); "
            "start a new run with the same --paths."
        ) from None


class SimPathsEngine(SimEngine):
    """The sim engine with each round's outstanding IO split over the drive's ports."""

    def __init__(self, paths: list[SimPath]):
        super().__init__()
        self.paths = paths
        self.notes = (
            f"each round's outstanding IO is split over {len(paths)} paths into one simulated drive (its ports; "
            "one FTL, controller and flash array; a host link per port): "
            + "; ".join(f"{p.name} (share {p.share:g})" for p in paths),
        )

    @property
    def split(self) -> list[dict]:
        """The paths as the manifest stores them (the shape `--paths` on real drives stores)."""
        return [
            {"name": p.name, "path": f"port {p.port}", "share": p.share, "host": None, "port": p.port}
            for p in self.paths
        ]

    def plan(self, w: Workload) -> list[tuple[SimPath, Workload]]:
        """The paths that carry IO in a round and their part of it (TC1/QD1 cannot be split)."""
        split = split_workload(w, [p.share for p in self.paths])
        return [(p, part) for p, part in zip(self.paths, split) if part is not None]

    def _path_io(self, w: Workload) -> list[int]:
        return [part.threads * part.queue_depth for _, part in self.plan(w)]

    def run(self, target: Target, workload: Workload, raw_dir: Path, tag: str, progress=None) -> RoundResult:
        result = super().run(target, workload, raw_dir, tag, progress)
        raw_path = Path(raw_dir) / f"{tag}.json"
        carried = self.plan(workload)
        raw = _Raw(str(raw_path))
        got = raw.get(json.loads(raw_path.read_text()), "paths", "result")
        if not isinstance(got, list) or len(got) != len(carried):
            raise EngineError(f"sim result {raw_path}: {len(carried)} paths ran but the result has {len(got)}.")
        parts = [
            Part(c[0].name, r, c[1].threads, c[1].queue_depth)
            for c, r in zip(carried, path_results(result, got, str(raw_path)))
        ]
        # a port the split left without IO (a QD1 cell) is said, as the note says every port carries IO
        idle = idle_legs(parts, [p.name for p in self.paths])
        return replace(result, counters=result.counters | part_counters(parts), deviations=(*result.deviations, *idle))


def path_results(result: RoundResult, paths: list, source: str) -> list[RoundResult]:
    """Each port's result from the simulator's report's "paths" entries (`source` names the
    file): its read and write sides within the round's `result`."""
    raw = _Raw(source)
    return [
        replace(
            result,
            read=_op_stats(raw.get(g, "read", f"paths[{i}]"), raw, f"paths[{i}].read"),
            write=_op_stats(raw.get(g, "write", f"paths[{i}]"), raw, f"paths[{i}].write"),
            series=(),
            counters={},
        )
        for i, g in enumerate(paths)
    ]
