"""Workloads from a stream analysis: the RWSW composite and the replay.

    composite(analysis, queue_depth=None, threads=1, duration_s=60) -> Workload
    replay(analysis, compress=1.0, queue_depth=None, threads=1, streams="dominant") -> ReplayPlan
    save_composite(workload, path, analysis=None) / load_composite(path) -> Workload
    ReplayPlan.save(path) / load_replay(path) -> ReplayPlan;  ReplayPlan.workloads() -> tuple[Workload, ...]

Composite: the dominant streams with their shares renormalised to 100 %, as one fixed mix
(SNIA RWSW "applied test workload"). Its outstanding IO defaults to the capture's
time-weighted average outstanding IO (rounded, at least 1), split as `threads` × QD.

Replay: one workload per capture step, each with that step's mix of the chosen streams
(the capture's dominant streams by default, or all of them) and that step's average
outstanding IO as QD, run flat out for the step's duration divided by `compress` (60
turns a 5-minute step into 5 s). Steps with no IOs of the chosen streams have no mix to
run: they are left out and listed in `skipped`.

A trace without response times has no outstanding IO: then `queue_depth` must be given.

Both are saved as TOML a user can read and edit (comments say what each field is). On
load every field is checked; a bad value is reported with file, line, table and field.
Shares are written in % and must add up to 100 (±0.01) on load; they are then
renormalised exactly.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from iolab.core.errors import IolabError
from iolab.core.safefile import read_text
from iolab.core.units import counted, kib_label, parse_size
from iolab.core.usertext import check_text
from iolab.core.workload import Stream, Workload
from iolab.traces.analysis.streamstats import MIN_PARTIAL_SHARE, StreamAnalysis
from iolab.traces.events import SECTOR  # the unit of every IO a block device or the simulator takes

SHARE_TOLERANCE_PCT = 0.01


def _qd(value: float | None, given: int | None, what: str) -> int:
    if given is not None:
        if given < 1:
            raise IolabError(f"{what}: queue depth must be ≥ 1, got {given}")
        return int(given)
    if value is None:
        raise IolabError(
            f"{what}: the trace has no response times, so its outstanding IO (queue depth) is unknown. "
            "Give the queue depth to use (--qd N)."
        )
    return max(1, int(round(value)))


def composite(
    analysis: StreamAnalysis,
    queue_depth: int | None = None,
    threads: int = 1,
    duration_s: float = 60.0,
    name: str | None = None,
) -> Workload:
    """The dominant streams, renormalised to 100 %, as one Workload."""
    dom = analysis.dominant
    if not dom:
        biggest = analysis.streams[0]
        raise IolabError(
            f"{analysis.source}: no stream reaches the dominant threshold of {analysis.threshold * 100:g} % "
            f"(the largest, {biggest.label()}, has {biggest.pct:.2f} %). Lower the threshold."
        )
    total = sum(s.ios for s in dom)
    oio = analysis.oio_avg()
    qd = _qd(None if oio is None else oio / threads, queue_depth, "composite workload")
    return Workload(
        streams=tuple(s.stream(s.ios / total) for s in dom),
        threads=threads,
        queue_depth=qd,
        duration_s=duration_s,
        name=name or f"composite of {Path(analysis.source).stem}",
    )


@dataclass(frozen=True)
class ReplayStep:
    index: int  # the capture step it comes from
    start_s: float  # where that step starts in the capture
    duration_s: float  # how long it runs in the replay (capture step / compress)
    queue_depth: int
    streams: tuple[Stream, ...]  # shares add up to 1


@dataclass(frozen=True)
class ReplayPlan:
    source: str
    step_s: float  # capture step length
    compress: float
    threads: int
    steps: tuple[ReplayStep, ...]
    skipped: tuple[int, ...] = ()  # capture steps without IOs of the chosen streams
    short: tuple[int, ...] = ()  # a final partial step too short to replay (StreamAnalysis.short_step)

    @property
    def duration_s(self) -> float:
        return sum(s.duration_s for s in self.steps)

    def workloads(self) -> tuple[Workload, ...]:
        """One Workload per step, in order, for the runner (each runs flat out)."""
        return tuple(
            Workload(
                streams=s.streams,
                threads=self.threads,
                queue_depth=s.queue_depth,
                duration_s=s.duration_s,
                name=f"replay step {s.index} (capture {s.start_s:g} s)",
            )
            for s in self.steps
        )

    def save(self, path: str | Path) -> Path:
        out = [
            "# iolab replay workload (SNIA RWSW Replay-Native): one entry per capture step, run in order,",
            "# each flat out at its own stream mix and queue depth for its duration.",
            "# Edit freely. share_pct of each step must add up to 100; block_size is bytes or a size",
            '# with a unit ("8KiB"); access is rnd|seq, op is read|write.',
            f"# {counted(len(self.steps), 'step')}, {self.duration_s:g} s in all"
            + (
                f"; capture steps left out (no IOs of the chosen streams): {_ranges(self.skipped)}"
                if self.skipped
                else ""
            )
            + (
                f"; partial last step left out (shorter than {MIN_PARTIAL_SHARE:.0%} of a step): {_ranges(self.short)}"
                if self.short
                else ""
            ),
            "",
            "[replay]",
            f"source = {_toml_str(self.source)}",
            f"step_s = {self.step_s!r}  # capture step length",
            f"compress = {self.compress!r}  # capture time / replay time",
            f"threads = {self.threads}",
            f"skipped = [{', '.join(str(i) for i in self.skipped)}]",
            f"short = [{', '.join(str(i) for i in self.short)}]  # a final partial step left out",
        ]
        for s in self.steps:
            out += [
                "",
                "[[step]]",
                f"index = {s.index}",
                f"start_s = {s.start_s!r}",
                f"duration_s = {s.duration_s!r}",
                f"queue_depth = {s.queue_depth}",
                "streams = [",
                *[f"  {_stream_inline(x)},  # {x.label()}" for x in s.streams],
                "]",
            ]
        p = Path(path)
        p.write_text("\n".join(out) + "\n")
        return p


def replay(
    analysis: StreamAnalysis,
    compress: float = 1.0,
    queue_depth: int | None = None,
    threads: int = 1,
    streams: str = "dominant",
) -> ReplayPlan:
    """The per-step replay of a capture (see the module docstring)."""
    if compress <= 0:
        raise IolabError(f"replay: compress must be > 0, got {compress}")
    if streams not in ("dominant", "all"):
        raise IolabError(f"replay: streams must be 'dominant' or 'all', got {streams!r}")
    chosen = {i for i, s in enumerate(analysis.streams) if streams == "all" or s.dominant}
    if not chosen:
        raise IolabError(
            f"{analysis.source}: no dominant stream at the {analysis.threshold * 100:g} % threshold; "
            "lower the threshold or replay all streams."
        )
    steps, skipped = [], []
    for st in analysis.rated_steps():  # a short final step would run a few µs flat out
        mix = [(i, n) for i, n in st.streams if i in chosen]
        total = sum(n for _, n in mix)
        if not total:
            skipped.append(st.index)
            continue
        oio = None if st.oio_avg is None else st.oio_avg / threads
        steps.append(
            ReplayStep(
                index=st.index,
                start_s=st.start_s,
                duration_s=st.duration_s / compress,
                queue_depth=_qd(oio, queue_depth, f"replay step {st.index}"),
                streams=tuple(analysis.streams[i].stream(n / total) for i, n in mix),
            )
        )
    if not steps:
        raise IolabError(f"{analysis.source}: no step has IOs of the chosen streams; nothing to replay.")
    short = analysis.short_step()
    return ReplayPlan(
        analysis.source,
        analysis.step_s,
        compress,
        threads,
        tuple(steps),
        tuple(skipped),
        (short.index,) if short else (),
    )


# ---------------------------------------------------------------------------------------
# TOML files


def save_composite(w: Workload, path: str | Path, analysis: StreamAnalysis | None = None) -> Path:
    out = [
        "# iolab composite workload (SNIA RWSW): the dominant streams of a trace with their shares",
        "# renormalised to 100 %, run as one fixed mix. Edit freely: share_pct must add up to 100;",
        '# block_size is bytes or a size with a unit ("8KiB"); access is rnd|seq, op is read|write.',
    ]
    if analysis is not None:
        out.append(
            f"# from {analysis.source}: {analysis.total_ios:,} IOs, dominant threshold "
            f"{analysis.threshold * 100:g} %, the {len(analysis.dominant)} dominant streams hold "
            f"{analysis.dominant_pct:.1f} % of the IOs"
        )
    out += [
        "",
        "[workload]",
        f"name = {_toml_str(w.name)}",
        f"threads = {w.threads}",
        f"queue_depth = {w.queue_depth}  # outstanding IO = threads x queue_depth",
        f"duration_s = {w.duration_s!r}",
    ]
    for s in w.streams:
        out += [
            "",
            "[[stream]]",
            f"access = {_toml_str(s.access)}",
            f"op = {_toml_str(s.op)}",
            f"block_size = {s.block_size}  # {kib_label(s.block_size)}",
            f"share_pct = {_pct(s.share)}",
        ]
    p = Path(path)
    p.write_text("\n".join(out) + "\n")
    return p


def load_composite(path: str | Path) -> Workload:
    f = _TomlFile(path)
    w = _Where(f, "[workload]")
    t = f.table("workload")
    return Workload(
        streams=_streams([(_Where(f, "[[stream]]", j), x) for j, x in enumerate(f.array_of_tables("stream"), 1)]),
        threads=w.int(t, "threads", default=1),
        queue_depth=w.int(t, "queue_depth"),
        duration_s=w.num(t, "duration_s"),
        name=w.str(t, "name", default=f.path.stem),
    )


def load_replay(path: str | Path) -> ReplayPlan:
    f = _TomlFile(path)
    r = f.table("replay")
    top = _Where(f, "[replay]")
    steps = []
    for k, s in enumerate(f.array_of_tables("step"), 1):
        w = _Where(f, "[[step]]", k)
        raw = s.get("streams")
        if not isinstance(raw, list) or not raw:
            w.fail("streams", "a list of { access, op, block_size, share_pct } tables", raw)
        steps.append(
            ReplayStep(
                index=w.int(s, "index", minimum=0),
                start_s=w.num(s, "start_s", minimum=0),
                duration_s=w.num(s, "duration_s"),
                queue_depth=w.int(s, "queue_depth"),
                streams=_streams([(_Where(f, "[[step]]", k, f"streams[{j}]"), x) for j, x in enumerate(raw, 1)]),
            )
        )
    if not steps:
        raise IolabError(f"{f.path}: no [[step]] entries; a replay needs at least one step.")
    skipped, short = r.get("skipped", []), r.get("short", [])
    for key, val in (("skipped", skipped), ("short", short)):
        if not isinstance(val, list) or not all(isinstance(i, int) for i in val):
            top.fail(key, "a list of step numbers", val)
    return ReplayPlan(
        source=top.str(r, "source", default=""),
        step_s=top.num(r, "step_s"),
        compress=top.num(r, "compress", default=1.0),
        threads=top.int(r, "threads", default=1),
        steps=tuple(steps),
        skipped=tuple(skipped),
        short=tuple(short),
    )


def _streams(items: list[tuple[_Where, object]]) -> tuple[Stream, ...]:
    parsed = []
    for w, s in items:
        if not isinstance(s, dict):
            w.fail("stream", "a table { access, op, block_size, share_pct }", s)
        access = s.get("access")
        if access not in ("rnd", "seq"):
            w.fail("access", "'rnd' or 'seq'", access)
        op = s.get("op")
        if op not in ("read", "write"):
            w.fail("op", "'read' or 'write'", op)
        bs = s.get("block_size")
        try:
            if isinstance(bs, bool) or not isinstance(bs, (int, str)):
                raise IolabError("not a size")
            size = parse_size(bs)
        except IolabError:
            w.fail("block_size", "bytes (4096) or a size with a unit ('4KiB')", bs)
        if size <= 0 or size % SECTOR:
            # found here, not at the first cell after the purge and preconditioning: fio's direct
            # IO and the simulator take whole 512 B sectors only
            w.fail("block_size", f"a positive multiple of {SECTOR} B (IO is in whole sectors), e.g. 4096", bs)
        share = w.num(s, "share_pct", minimum=0)
        parsed.append((access, op, size, share))
    first = items[0][0]
    total = sum(x[3] for x in parsed)
    if abs(total - 100) > SHARE_TOLERANCE_PCT:
        raise IolabError(
            f"{first.file.path}:{first.line()}: {first.group()}: share_pct adds up to {total:g}, not 100. "
            "Fix the shares so they add up to 100."
        )
    keys = [(a, o, b) for a, o, b, _ in parsed]
    if len(set(keys)) != len(keys):
        raise IolabError(
            f"{first.file.path}:{first.line()}: {first.group()}: the same (access, op, block_size) appears twice; "
            "merge those entries."
        )
    return tuple(Stream(a, o, b, sh / total) for a, o, b, sh in parsed)


class _TomlFile:
    """A parsed TOML file plus its lines, so messages can say where a value is."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            text = read_text(self.path, "workload file", "workload")
        except FileNotFoundError:
            raise IolabError(f"{self.path}: no such workload file.") from None
        except OSError as e:
            raise IolabError(f"{self.path}: cannot read the workload file ({e.strerror or e}).") from None
        try:
            self.data = tomllib.loads(text)
        except RecursionError:
            raise IolabError(f"{self.path}: nested too deeply to be a workload file.") from None
        except tomllib.TOMLDecodeError as e:
            m = re.search(r"line (\d+)", str(e))
            raise IolabError(f"{self.path}{':' + m.group(1) if m else ''}: not valid TOML ({e}).") from None
        self.lines = text.splitlines()

    def table(self, name: str) -> dict:
        t = self.data.get(name)
        if not isinstance(t, dict):
            raise IolabError(f"{self.path}: missing the [{name}] table; is this an iolab {name} file?")
        return t

    def array_of_tables(self, name: str) -> list:
        t = self.data.get(name, [])
        if not isinstance(t, list):
            raise IolabError(f"{self.path}: '{name}' must be a list of [[{name}]] tables.")
        return t


_MISSING = object()


@dataclass(frozen=True)
class _Where:
    """A place in a TOML file: the k-th `header` table (and an inline entry inside it)."""

    file: _TomlFile
    header: str  # "[workload]", "[[stream]]", ...
    k: int = 1
    inner: str = ""  # "streams[2]" for an inline table inside the entry

    def group(self) -> str:
        base = self.header if not self.header.startswith("[[") else f"{self.header} #{self.k}"
        return f"{base} {self.inner.split('[')[0]}".strip()

    def label(self) -> str:
        base = self.header if not self.header.startswith("[[") else f"{self.header} #{self.k}"
        return f"{base} {self.inner}".strip()

    def line(self, key: str | None = None) -> str:
        """Line of this table (or of `key` in it, the inner entry's line for inline tables)."""
        starts = [i for i, ln in enumerate(self.file.lines) if ln.strip() == self.header]
        if len(starts) < self.k:
            return "?"
        start = starts[self.k - 1]
        if key is None and not self.inner:
            return str(start + 1)
        seen = 0
        want = int(self.inner.split("[")[1].rstrip("]")) if self.inner else None
        for i in range(start + 1, len(self.file.lines)):
            s = self.file.lines[i].strip()
            if s.startswith("[") and not s.startswith("[]"):
                break
            if want is not None:
                if s.startswith("{"):
                    seen += 1
                    if seen == want:
                        return str(i + 1)
            elif key and re.match(rf"{re.escape(key)}\s*=", s):
                return str(i + 1)
        return str(start + 1)

    def fail(self, key: str, expected: str, got: object) -> NoReturn:
        shown = "nothing" if got is None or got is _MISSING else repr(got)
        raise IolabError(
            f"{self.file.path}:{self.line(key)}: {self.label()}: field '{key}': expected {expected}, got {shown}."
        )

    def num(self, t: dict, key: str, default=_MISSING, minimum: float | None = None) -> float:
        v = t.get(key, default)
        # TOML reads nan and inf as floats: a share of nan passed the check that the shares add
        # up to 100 (every comparison with NaN is false) and ended fio-job and run in a traceback
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            self.fail(key, "a finite number", v)
        if minimum is not None and v < minimum:
            self.fail(key, f"a number ≥ {minimum:g}", v)
        if minimum is None and v <= 0:
            self.fail(key, "a number > 0", v)
        return float(v)

    def int(self, t: dict, key: str, default=_MISSING, minimum: int = 1) -> int:
        v = t.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            self.fail(key, f"a whole number ≥ {minimum}", v)
        return int(v)

    def str(self, t: dict, key: str, default=_MISSING) -> str:
        v = t.get(key, default)
        if not isinstance(v, str):
            self.fail(key, "a string", v)
        # a name reaches the terminal: refused for a control or invisible format character in the
        # words every argument and file field is (core/usertext), with the file's line
        return check_text(v, f"{self.file.path}:{self.line(key)}: {self.label()}: field '{key}'")


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _pct(share: float) -> str:
    # Enough digits that a saved and reloaded mix matches to 1e-9, few enough to read.
    return f"{share * 100:.10g}"


def _stream_inline(s: Stream) -> str:
    return f'{{ access = "{s.access}", op = "{s.op}", block_size = {s.block_size}, share_pct = {_pct(s.share)} }}'


def _ranges(idx: tuple[int, ...]) -> str:
    """(1, 2, 3, 7) -> '1-3, 7'."""
    out: list[str] = []
    if not idx:
        return ""
    start = prev = idx[0]
    for i in idx[1:]:
        if i == prev + 1:
            prev = i
        else:
            out.append(f"{start}-{prev}" if prev != start else str(start))
            start = prev = i
    out.append(f"{start}-{prev}" if prev != start else str(start))
    return ", ".join(out)
