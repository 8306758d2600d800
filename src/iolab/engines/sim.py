"""The sim engine: workloads on iolab's built-in simulated drives, in virtual time.

The drive models live in Rust (crates/sim, built into `iolab._sim`): a page-mapped SSD FTL
with garbage collection on timed flash, and an HDD. This module adapts them to the engine
protocol. A target `sim:PRESET?param=value&...` names a preset and overrides its
parameters (`iolab sim presets` lists them); three more options are not drive parameters:
`load=FILE` starts from a saved drive state, `save=FILE` writes the state when the engine
closes (so a preconditioned drive can be reused), `seed=N` changes every round's random
stream (offsets, flash timing spread), so two runs of one drive differ as two real runs do.

One engine instance keeps one drive per target spec, so the drive's state carries over from
round to round as a real drive's does. Each round's raw result is the JSON the simulator
returns, stored as raw_dir/<tag>.json and parsed from that text.
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from iolab import _sim
from iolab.core.diskfull import is_disk_full
from iolab.core.errors import EngineError, IolabError
from iolab.core.results import Histogram, OpStats, RoundResult, SecondSample
from iolab.core.safefile import check_regular
from iolab.core.workload import Workload
from iolab.engines.capabilities import Capabilities
from iolab.targets import PurgeOutcome, Target
from iolab.targets.sim_facts import describe, drive_params, saved_mismatch
from iolab.targets.writepolicy import SIM_STATE, output_file

# Each round's seed mixes in its tag, exactly as the fio engine's randseed does, so rounds do
# not replay the same offsets and every run stays reproducible.

DEFAULT_PRESET: str = _sim.DEFAULT_PRESET
PURGE_METHODS = ("auto", "sim", "sim-purge")


@dataclass(frozen=True)
class SimParam:
    name: str
    value: str
    unit: str
    help: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class SimPreset:
    name: str
    kind: str  # 'ssd' or 'hdd'
    description: str
    default: bool
    params: tuple[SimParam, ...]
    # The published figures an SSD preset is calibrated to (its headline); None for an HDD.
    calibrated_to: str | None

    @property
    def parameters(self) -> tuple[tuple[str, str], ...]:
        """(name, value with unit) pairs, for listing."""
        return tuple((p.name, f"{p.value} {p.unit}".strip() if p.value else "(unset)") for p in self.params)


def list_presets() -> list[SimPreset]:
    """Every preset with its parameters, the default first."""
    out = []
    for p in json.loads(_sim.presets()):
        params = tuple(SimParam(q["name"], q["value"], q["unit"], q["help"], tuple(q["choices"])) for q in p["params"])
        out.append(SimPreset(p["name"], p["kind"], p["title"], bool(p["default"]), params, p["calibrated_to"]))
    return sorted(out, key=lambda p: not p.default)


def write_cache_effect(info: dict, enabled: bool) -> str:
    """What the write-cache setting does on this simulated drive, for the manifest (short:
    the report's header shows it)."""
    on = "enabled" if enabled else "disabled"
    if info["kind"] == "ssd":
        if int(info["buffer_bytes"]) == 0:
            return f"simulated: {on}, no effect (no write buffer: acknowledged once programmed)"
        if info["plp"]:
            return f"simulated: {on}, no effect (power-loss-protected buffer)"
        return f"simulated: {on} (writes acknowledged {'from buffer' if enabled else 'once programmed'})"
    if int(info["cache_bytes"]) == 0:
        return f"simulated: {on}, no effect (no cache)"
    return f"simulated: {on} (writes acknowledged {'from cache' if enabled else 'once on media'})"


def _mem_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _check_memory(target: Target) -> None:
    """Refuse a drive whose maps would not fit in memory (the allocation would abort)."""
    need = int(describe(target.path, dict(target.options)).get("memory_bytes", 0))
    avail = _mem_available()
    if avail is not None and need > 0.9 * avail:
        raise IolabError(
            f"target {target.spec}: this simulated drive needs {need / 2**30:.1f} GiB of memory for its maps "
            f"but only {avail / 2**30:.1f} GiB is available; give a smaller drive (e.g. fewer blocks_per_plane)."
        )


def check_drive(target: Target) -> None:
    """What SimEngine.prepare refuses before a round runs, without keeping the drive: maps that
    would not fit in memory, and a load= file that is no iolab state or the state of another
    drive than the target describes. `iolab plan` calls it (api/preflight), so a plan is not
    described for a run that would be refused here."""
    _check_memory(target)
    load = dict(target.options).get("load")
    if load:
        _loaded(target, load)


def _loaded(target: Target, path: str) -> _sim.Drive:
    """The drive saved in `path` (the target's load=), which must be the drive the target describes."""
    check_regular(path, f"target {target.spec}: the saved state (load=)")  # resume skips the parse
    try:
        drive = _sim.Drive.load(path)
    except ValueError as e:
        raise IolabError(f"target {target.spec}: {e}") from None
    info = json.loads(drive.describe())
    if info["preset"] != target.path or drive.capacity != target.capacity:
        raise IolabError(
            f"target {target.spec}: the state in {path} is the {info['preset']} drive of {drive.capacity} B, "
            f"not the {target.path} drive of {target.capacity} B this target describes. Give the same "
            "preset and parameters the state was saved with."
        )
    # the state carries its own parameters, and the drive runs with them (sim_facts.saved_mismatch)
    mismatch = saved_mismatch(target.path, dict(target.options), info["params"])
    if mismatch:
        raise IolabError(f"target {target.spec}: the state in {path} {mismatch}")
    return drive


# -- the raw result ---------------------------------------------------------------------------


class _Raw:
    """Field access on the simulator's JSON that fails loudly, naming the field and file."""

    def __init__(self, source: str):
        self.source = source

    def get(self, obj: dict, key: str, where: str):
        if not isinstance(obj, dict) or key not in obj:
            raise EngineError(
                f"sim result {self.source}: field {where}.{key} is missing; the raw file is kept as written."
            )
        return obj[key]


def _op_stats(o: dict, raw: _Raw, where: str) -> OpStats:
    ios = int(raw.get(o, "ios", where))
    if ios == 0:
        return OpStats.idle()
    bins = raw.get(o, "histogram_us", where)
    max_us = float(raw.get(o, "lat_max_us", where))
    hist = Histogram(tuple(float(v) for v, _ in bins), tuple(int(c) for _, c in bins), max_us)
    if hist.total != ios:
        raise EngineError(f"sim result {raw.source}: {where} histogram holds {hist.total} IOs, not {ios}.")
    return OpStats(
        ios=ios,
        io_bytes=int(raw.get(o, "bytes", where)),
        iops=float(raw.get(o, "iops", where)),
        mbps=float(raw.get(o, "mbps", where)),
        lat_mean_us=float(raw.get(o, "lat_mean_us", where)),
        lat_max_us=max_us,
        lat_min_us=float(raw.get(o, "lat_min_us", where)),
        histogram=hist,
    )


def parse_result(text: str, source: str, raw_files: tuple[str, ...] = ()) -> RoundResult:
    """RoundResult from the simulator's JSON (latency µs, MB/s, series in virtual seconds)."""
    try:
        j = json.loads(text)
    except json.JSONDecodeError as e:
        raise EngineError(f"sim result {source}: not valid JSON ({e}).") from None
    return result_of(j, source, raw_files)


def result_of(j: dict, source: str, raw_files: tuple[str, ...] = ()) -> RoundResult:
    """RoundResult from the simulator's JSON report, parsed (`parse_result`'s)."""
    raw = _Raw(source)
    # a sixth column, the second's maximum latency (raw files written before it have five), and
    # a seventh, the row's length (span_s, under 1 s for the partial rest), which t_s implies
    series = tuple(
        SecondSample(
            t_s=float(t),
            read_iops=float(r),
            write_iops=float(w),
            mbps=float(mb),
            lat_mean_us=None if lat is None else float(lat),
            lat_max_us=None if not mx or mx[0] is None else float(mx[0]),
        )
        for t, r, w, mb, lat, *mx in raw.get(j, "series", "result")
    )
    counters = {str(k): float(v) for k, v in raw.get(j, "counters", "result").items()}
    return RoundResult(
        read=_op_stats(raw.get(j, "read", "result"), raw, "read"),
        write=_op_stats(raw.get(j, "write", "result"), raw, "write"),
        runtime_s=float(raw.get(j, "runtime_s", "result")),
        series=series,
        counters=counters,
        raw_files=raw_files,
        engine="sim",
        engine_version=str(raw.get(j, "version", "result")),
        raw=j,  # parsed once here: the store and the power model take it from here, not from the file
    )


def _seeded(w: Workload, opts: dict[str, str]) -> Workload:
    """The workload with the target's `seed=N` mixed into its seed (unchanged without one)."""
    # sim_facts.describe has checked it is a whole number when the target was parsed
    return replace(w, seed=(w.seed ^ int(opts["seed"])) & 0xFFFF_FFFF) if "seed" in opts else w


def _run_spec(w: Workload, tag: str, paths: list[int]) -> dict:
    """The keyword arguments of `Drive.run` for one round (also printed in the job text);
    `paths`: each host path's outstanding IO when there are several (`sim_paths`)."""
    return ({"paths": paths} if paths else {}) | {
        "streams": [(s.access, s.op, s.block_size, s.share) for s in w.streams],
        "threads": w.threads,
        "queue_depth": w.queue_depth,
        "active_range": w.active_range,
        "entropy": w.entropy,
        "rate_iops": None if w.rate_iops is None else float(w.rate_iops),
        "duration_s": w.duration_s,
        "bytes_budget": w.bytes_budget,
        "seed": w.seed_for(tag),
        "zones": [tuple(z) for z in w.zones],
    }


# -- the engine -------------------------------------------------------------------------------


def _new_raw_path(raw_dir: Path, tag: str) -> Path:
    """Where a round's raw result goes; stored output is never overwritten."""
    raw_dir = Path(raw_dir)
    raw_dir.mkdir(parents=True, exist_ok=True)
    path = raw_dir / f"{tag}.json"
    if path.exists():
        raise EngineError(
            f"raw output of round {tag!r} already exists ({path}); iolab never overwrites stored output: "
            "use a new round tag or move the old file away."
        )
    return path


def _store_raw(path: Path, text: str) -> RoundResult:
    """Keep the engine's raw output, then read the round from it (raw file relative to the run dir)."""
    path.write_text(text + "\n")
    return parse_result(text, str(path), (str(path.relative_to(path.parent.parent)),))


class SimEngine:
    """Runs workloads on simulated drives; one drive per target spec, kept across rounds."""

    name = "sim"
    # The drive lives in this process (its state ends with it) and runs in virtual time: an
    # idle period is the model's background work, not a wait.
    capabilities = Capabilities(
        drives=("sim",),
        idle=True,
        trim=True,
        purge_methods=PURGE_METHODS,
        write_cache=True,
        replay_timestamps=True,
        remote_targets=False,
        claims_targets=False,
        virtual_time=True,
        keeps_state=False,
    )

    def __init__(self) -> None:
        self._drives: dict[str, _sim.Drive] = {}
        self._targets: dict[str, Target] = {}
        # the drives a purge, round, replay, idle or trim changed: only those save their state
        # (save=) at close; a drive built for a run that was then refused (its safety checks, a
        # save= directory that does not exist) wrote nothing, so its refusal writes nothing either
        self._used: set[str] = set()

    def version(self) -> str:
        return f"iolab-sim-{_sim.__version__}"

    def prepare(self, target: Target) -> None:
        if target.spec in self._drives:
            return
        self._check_kind(target)
        opts = dict(target.options)
        load = opts.get("load")
        _check_memory(target)
        if load:
            drive = _loaded(target, load)
        else:
            try:
                drive = _sim.Drive(target.path, drive_params(opts))
            except ValueError as e:
                raise IolabError(f"target {target.spec}: {e}") from None
        self._drives[target.spec] = drive
        self._targets[target.spec] = target

    def _check_kind(self, target: Target) -> None:
        if target.kind != "sim":
            raise EngineError(f"target {target.spec}: the sim engine only drives sim: targets.")

    def drive(self, target: Target) -> _sim.Drive:
        """The target's drive (built on first use)."""
        self.prepare(target)
        return self._drives[target.spec]

    def _changed(self, target: Target) -> _sim.Drive:
        """The target's drive, for an operation that changes its state (saved at close)."""
        self._used.add(target.spec)
        return self.drive(target)

    def purge(self, target: Target, method: str) -> PurgeOutcome:
        if method == "none":
            return PurgeOutcome("none", False, "purge skipped on request: the simulated drive keeps its state")
        if method not in PURGE_METHODS:
            raise IolabError(
                f"purge method {method!r}: a simulated drive is purged with 'auto' (the simulator's secure "
                "erase, 'sim-purge') or skipped with 'none'."
            )
        drive = self._changed(target)
        t0 = time.monotonic()
        virtual = drive.purge()
        kind = json.loads(drive.describe())["kind"]
        detail = (
            f"simulated secure erase: every flash block erased and every mapping dropped in {virtual:.3f} "
            "virtual s; the drive is fresh-out-of-box (wear counts are kept)"
            if kind == "ssd"
            else "simulated HDD: nothing to erase (the model keeps no data); purge is a no-op"
        )
        return PurgeOutcome("sim-purge", True, detail, seconds=time.monotonic() - t0)

    def set_write_cache(self, target: Target, enabled: bool) -> str:
        """Switch the simulated drive's write cache (the model honours it); says what it does."""
        self.drive(target).write_cache = enabled
        return write_cache_effect(describe(target.path, dict(target.options)), enabled)

    def job_text(self, target: Target, workload: Workload, tag: str) -> str:
        """The simulator call this round makes, as Python a user can run by hand."""
        opts = dict(target.options)
        w = _seeded(workload, opts)
        lines = [
            f"# iolab sim engine, round {tag}: target {target.spec}",
            f"# workload: {json.dumps(asdict(w))}",
            "from iolab import _sim",
            (
                f"drive = _sim.Drive.load({opts['load']!r})"
                if opts.get("load")
                else f"drive = _sim.Drive({target.path!r}, {drive_params(opts)!r})"
            ),
            f"drive.write_cache = {self._drives[target.spec].write_cache if target.spec in self._drives else True!r}",
            f"print(drive.run(**{_run_spec(w, tag, self._path_io(w))!r}))",
        ]
        return "\n".join(lines) + "\n"

    def run(
        self,
        target: Target,
        workload: Workload,
        raw_dir: Path,
        tag: str,
        progress: Callable[[float, float], None] | None = None,
    ) -> RoundResult:
        """Run one round in virtual time; the raw result goes to raw_dir/<tag>.json."""
        drive = self._changed(target)
        path = _new_raw_path(raw_dir, tag)
        w = _seeded(workload, dict(target.options))
        paths = self._path_io(w)
        try:
            if w.ramp_s > 0:
                # The warm-up runs on the drive (it changes its state) but is not measured, as
                # fio's ramp_time; its own output is kept beside the round's for inspection.
                warm = drive.run(
                    **(_run_spec(w, tag + "-warmup", paths) | {"duration_s": w.ramp_s, "bytes_budget": None})
                )
                path.with_name(f"{tag}.warmup.json").write_text(warm + "\n")
            text = drive.run(**_run_spec(w, tag, paths), progress=progress)
        except ValueError as e:
            raise EngineError(f"sim engine, round {tag!r} on {target.spec}, workload {w.label()!r}: {e}") from None
        return _store_raw(path, text)

    def _path_io(self, w: Workload) -> list[int]:
        """Each host path's outstanding IO of a round; empty: the drive is reached over one path."""
        return []

    def replay(
        self,
        target: Target,
        times_s: list[float],
        writes: list[bool],
        offsets: list[int],
        sizes: list[int],
        raw_dir: Path,
        tag: str,
        queue_depth: int = 32,
        entropy: float = 1.0,
        progress: Callable[[float, float], None] | None = None,
    ) -> RoundResult:
        """Replay IOs at their timestamps (seconds, open loop, at most `queue_depth` outstanding)."""
        drive = self._changed(target)
        path = _new_raw_path(raw_dir, tag)
        try:
            text = drive.replay(list(times_s), list(writes), list(offsets), list(sizes), queue_depth, entropy, progress)
        except ValueError as e:
            raise EngineError(f"sim engine, replay {tag!r} on {target.spec}: {e}") from None
        return _store_raw(path, text)

    def idle(self, target: Target, seconds: float) -> None:
        """Let `seconds` of virtual time pass with no host IO (background GC, SLC eviction):
        what a wait state of Host Idle Recovery needs."""
        if seconds < 0:
            raise IolabError(f"idle time {seconds} s must not be negative")
        self._changed(target).idle(seconds)

    def trim(self, target: Target, offset: int, length: int) -> None:
        try:
            self._changed(target).trim(offset, length)
        except ValueError as e:
            raise IolabError(f"target {target.spec}: {e}") from None

    def save_state(self, target: Target, path: str | Path) -> None:
        """Save the drive's state to `path` under the write policy (checked again here: the
        path may have changed since the run's safety checks). The state is written beside it
        and renamed into place, so the previous state survives a failed save."""
        try:  # written aside under a fresh name (core/writeaside), marked, then renamed into place
            with output_file(path, SIM_STATE) as part:
                self.drive(target).save(str(part))
        except ValueError as e:
            if is_disk_full(e):  # the system's error, naming the state file: the caller says the disk is full
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from None
            raise IolabError(f"target {target.spec}: {e}") from None

    def counters(self, target: Target) -> dict[str, float]:
        """The drive's present counters (lifetime totals, wear, free blocks)."""
        return {k: float(v) for k, v in json.loads(self.drive(target).counters()).items()}

    def close(self) -> None:
        """Save the state of targets with save=FILE, then drop the drives."""
        try:
            for spec in self._drives:
                save = self._targets[spec].option("save")
                if save and spec in self._used:
                    self.save_state(self._targets[spec], save)
        finally:
            self._drives.clear()
            self._targets.clear()
            self._used.clear()
