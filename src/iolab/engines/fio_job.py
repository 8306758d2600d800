"""Writing fio job files: one fio job section per access pattern (RND, SEQ); inside a
section, read % and per-direction block-size splits are exact fio options. Also what fio
itself is on this host (its version, whether io_uring works) and which ioengine a target gets."""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cache

from iolab.core.errors import EngineError, IolabError
from iolab.core.ioengines import AUTO_IOENGINE, JOB_IOENGINES, check_ioengine
from iolab.core.results import LOG_INTERVAL_MS, raised_outstanding
from iolab.core.units import counted
from iolab.core.usertext import check_fio_value, check_text
from iolab.core.workload import Stream, Workload
from iolab.targets import Target

# Sleep (µs) of a job that is ahead of its `flow` share. With the default 0 fio busy-spins
# the blocked job, which starves the other jobs on small machines (measured: 2 cores, 4 jobs
# lost >90 % of their IOPS); 20 µs keeps the proportions and costs almost nothing.
FLOW_SLEEP_US = 20
_TAG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


# ---------------------------------------------------------------------------------------
# fio itself: version and the best async IO engine on this host
# ---------------------------------------------------------------------------------------


def fio_missing(fio: str) -> EngineError:
    return EngineError(
        f"fio was not found (looked for {fio!r} on PATH). iolab drives real targets through "
        "fio: install it (Debian/Ubuntu: apt install fio; Fedora: dnf install fio) or point "
        "iolab at the binary."
    )


CLOCK_NOTE = (
    "the CPU clock fio picks itself on this machine (invariant TSC, the kernel's clocksource), "
    "without its clock test at each start"
)


HOST_CLOCK_NOTE = (
    "the clock this host's fio server chose itself for iolab's probe job (after its own clock tests), "
    "without those tests at each job"
)


@cache
def local_clocksource(
    kernel_clock: str = "/sys/devices/system/clocksource/clocksource0/current_clocksource",
    cpuinfo: str = "/proc/cpuinfo",
) -> str | None:
    """'cpu' when fio would choose its CPU (TSC) clock here anyway, else None (fio chooses).

    Each fio start tests whether the TSC stays monotonic across CPUs before it uses it: half of
    its start-up CPU (measured 0.14 -> 0.07 CPU-s a start), paid at every cell. The test is
    skipped when the job names its clock source. The kernel runs the same kind of check
    (TSC sync at boot, a watchdog after) and keeps `tsc` as its clocksource only while it
    holds, and fio trusts the TSC only when the CPU flags it invariant; with both, naming `cpu`
    gives fio the clock it would have picked. Otherwise fio keeps its own choice."""
    try:
        with open(kernel_clock) as f:
            clock = f.read().strip()
        with open(cpuinfo) as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return None
    invariant = "constant_tsc" in flags and "nonstop_tsc" in flags
    return "cpu" if clock == "tsc" and invariant else None


def client_clock() -> list[str]:
    """fio's client options that name its clock: `--clocksource=cpu` where fio would pick the
    CPU clock on this machine itself (local_clocksource). The client then calibrates it while
    reading its options and skips its cross-CPU clock test (0.12 -> 0.07 CPU-s a client); its
    clock times only its own waits, never the jobs, which the servers time. Placed before any
    --client, the option stays on this machine (it is not sent to the servers)."""
    clock = local_clocksource()
    return [f"--clocksource={clock}"] if clock else []


@cache
def fio_version(fio: str) -> str:
    try:
        out = subprocess.run([fio, "--version"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise fio_missing(fio) from None
    except subprocess.TimeoutExpired:
        raise EngineError(
            f"`{fio} --version` did not answer within 30 s (it was stopped). Check the fio installation."
        ) from None
    version = out.stdout.strip()
    if out.returncode != 0 or not version.startswith("fio-"):
        raise EngineError(
            f"`{fio} --version` did not print a fio version (exit {out.returncode}, output "
            f"{(out.stdout + out.stderr).strip()[-200:]!r}). Check the fio installation."
        )
    return version


@cache
def async_ioengine(fio: str) -> str:
    """'io_uring' if a tiny fio run with it succeeds on this host, else 'libaio'.

    io_uring can be compiled in yet unusable (old kernel, seccomp in containers,
    io_uring_disabled sysctl), so we ask the kernel rather than the version number. The probe
    uses buffered IO on a temp file because /tmp may be tmpfs, which refuses O_DIRECT.
    """
    with tempfile.TemporaryDirectory(prefix="iolab-fio-probe-") as tmp:
        cmd = [
            fio,
            "--name=probe",
            f"--filename={tmp}/probe",
            "--size=64k",
            "--io_size=4k",
            "--bs=4k",
            "--rw=read",
            "--ioengine=io_uring",
            "--output-format=json",
        ]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            raise fio_missing(fio) from None
        except subprocess.TimeoutExpired:
            return "libaio"
        try:
            job = json.loads(out.stdout)["jobs"][0]
            ok = out.returncode == 0 and job["error"] == 0 and job["read"]["total_ios"] == 1
        except (ValueError, KeyError, IndexError, TypeError):
            ok = False
    return "io_uring" if ok else "libaio"


def pick_ioengine(choice: str, target: Target, fio: str) -> str:
    """The fio ioengine a round on `target` uses for `--ioengine choice`. `auto` follows
    AUTO_IOENGINE, with libaio where io_uring does not work on this host; io_uring asked for
    by name on such a host is refused rather than silently replaced."""
    check_ioengine(choice)
    if target.kind == "nbd":
        return "nbd"
    want = AUTO_IOENGINE.get(target.kind, "libaio") if choice == "auto" else choice
    if want == "io_uring" and async_ioengine(fio) != "io_uring":
        if choice == "auto":
            return "libaio"
        raise EngineError(
            "--ioengine io_uring: a one-IO fio run with io_uring failed on this host (kernel too old, "
            "io_uring disabled by sysctl or a container's seccomp). Use --ioengine libaio or auto."
        )
    return want


# ---------------------------------------------------------------------------------------
# Job generation
# ---------------------------------------------------------------------------------------


def _apportion(total: int, weights: list[float]) -> list[int]:
    """Split `total` into one integer ≥ 1 per weight, proportional to the weights, summing to
    `total` exactly (largest remainder). Needs total ≥ len(weights)."""
    wsum = sum(weights)
    raw = [total * w / wsum for w in weights]
    out = [max(1, int(r)) for r in raw]
    while sum(out) > total:
        i = max((i for i in range(len(out)) if out[i] > 1), key=lambda i: out[i] - raw[i])
        out[i] -= 1
    while sum(out) < total:
        i = max(range(len(out)), key=lambda i: raw[i] - out[i])
        out[i] += 1
    return out


def _split_text(streams: list[Stream]) -> str:
    """fio bssplit for one direction: 'bs/pct:bs/pct', percentages to 0.01 summing to 100."""
    by_bs: dict[int, float] = defaultdict(float)
    for s in streams:
        by_bs[s.block_size] += s.share
    sizes = sorted(by_bs)
    units = _apportion(10_000, [by_bs[b] for b in sizes])
    return ":".join(f"{b}/{u / 100:g}" for b, u in zip(sizes, units))


def _escape_filename(path: str) -> str:
    # fio splits `filename` on ':' (several files); a literal colon must be escaped.
    return path.replace(":", "\\:")


@dataclass(frozen=True)
class _Section:
    """One fio job section: the streams of one access pattern and their slice of the load."""

    access: str
    streams: tuple[Stream, ...]
    share: float  # this section's share of all IOs
    numjobs: int
    iodepth: int

    def by_op(self, op: str) -> list[Stream]:
        return [s for s in self.streams if s.op == op]

    @property
    def max_bs(self) -> int:
        return max(s.block_size for s in self.streams)

    @property
    def bytes_per_io(self) -> float:
        """Mean bytes per IO of this section, weighted by the streams' shares."""
        return sum(s.share * s.block_size for s in self.streams) / self.share


def _sections(w: Workload) -> tuple[list[_Section], str | None]:
    """Group streams by access pattern and split the outstanding IO between the groups.

    One fio job expresses any mix of read/write and block sizes exactly (rwmixread plus a
    per-direction bssplit), but not a mix of random and sequential streams with their joint
    shares, so each access pattern gets its own section. Returns the sections and, when the
    requested outstanding IO cannot be split (fewer IOs in flight than sections), a note for
    the job file saying what was run instead.
    """
    groups: dict[str, list[Stream]] = {}
    for s in w.streams:
        groups.setdefault(s.access, []).append(s)
    accesses = sorted(groups, key=lambda a: a != "rnd")  # rnd first: stable section order
    shares = [sum(s.share for s in groups[a]) for a in accesses]
    n = len(accesses)
    note = None
    if n == 1:
        jobs, depths = [w.threads], [w.queue_depth]
    elif w.queue_depth >= n:
        jobs, depths = [w.threads] * n, _apportion(w.queue_depth, shares)
    elif w.threads >= n:
        jobs, depths = _apportion(w.threads, shares), [w.queue_depth] * n
    else:
        jobs, depths = [w.threads] * n, [1] * n
        note = (
            f"{raised_outstanding(w.outstanding, sum(j * d for j, d in zip(jobs, depths)))}: "
            "fio runs random and sequential streams as jobs of their own, each with at least one IO in flight"
        )
    secs = [_Section(a, tuple(groups[a]), sh, j, d) for a, sh, j, d in zip(accesses, shares, jobs, depths)]
    return secs, note


def deviation(w: Workload) -> str | None:
    """How a job runs `w` otherwise than asked (None: as asked): the note its job file carries."""
    return _sections(w)[1]


def _rw(section: _Section) -> str:
    reads, writes = bool(section.by_op("read")), bool(section.by_op("write"))
    if section.access == "rnd":
        return "randrw" if reads and writes else "randread" if reads else "randwrite"
    return "rw" if reads and writes else "read" if reads else "write"


def _block_sizes(section: _Section) -> str:
    """`bs=` when each direction has one block size, else a per-direction `bssplit=`."""
    reads, writes = section.by_op("read"), section.by_op("write")
    present = [ss for ss in (reads, writes) if ss]
    if all(len({s.block_size for s in ss}) == 1 for ss in present):
        sizes = [str(ss[0].block_size) for ss in present]
        if len(sizes) == 2 and sizes[0] == sizes[1]:
            sizes = sizes[:1]
        return "bs=" + ",".join(sizes)
    # With one direction present, its split alone is given (fio applies it to all).
    return "bssplit=" + ",".join(_split_text(ss) for ss in present)


def build_job(
    target: Target, w: Workload, tag: str, ioengine: str, clocksource: str | None = None, clock_note: str = CLOCK_NOTE
) -> str:
    """The fio job file for one round. `ioengine` is the async engine for block devices and
    files (NBD targets always use fio's nbd engine). `clocksource`: fio's time source when the
    job runs on this machine (`local_clocksource()`) or the clock a host's server chose itself
    (its probe; `clock_note` says which), None to let fio choose. Logs and output paths are
    relative: fio runs in the round's raw directory, where this file is stored."""
    _check_job(target, tag)
    sections, note = _sections(w)
    size = _active_size(target, w)
    head = _head_comments(target, w, tag, size, note)
    g = _global_section(target, w, tag, ioengine, size)
    if clocksource:
        head.append(f"; clocksource={clocksource}: {clock_note}")
        g.append(f"clocksource={clocksource}")
    body: list[str] = []
    planned_bytes = 0
    # fio's flow weights are integers up to 1000.
    weights = _apportion(1000, [s.share for s in sections]) if len(sections) > 1 else []
    for i, sec in enumerate(sections):
        lines, planned = _section_lines(w, sec, size, weights[i] if weights else None)
        body += lines
        planned_bytes += planned
    if w.bytes_budget is not None and planned_bytes != w.bytes_budget:
        head.append(f"; note: byte budget {w.bytes_budget} B rounded to whole blocks per job: {planned_bytes} B")
    return "\n".join(_checked(head + g + body)) + "\n"


def _check_job(target: Target, tag: str) -> None:
    """Refuse a tag that cannot name fio's output files and a target fio does not drive."""
    if not _TAG_RE.match(tag):
        raise IolabError(
            f"round tag {tag!r} cannot name fio's output files: use letters, digits, '.', '_' "
            "and '-' only, starting with a letter or digit."
        )
    if target.kind not in ("block", "file", "nbd"):
        raise EngineError(
            f"the fio engine drives block devices, files and NBD exports, not a {target.kind!r} "
            f"target ({target.spec}). Simulated targets run on the sim engine."
        )


def _active_size(target: Target, w: Workload) -> int:
    """The bytes fio addresses from offset 0: the active range in whole largest blocks."""
    max_bs = max(s.block_size for s in w.streams)
    size = int(w.active_range * target.capacity) // max_bs * max_bs
    if size < max_bs:
        raise IolabError(
            f"workload {w.label()!r}: the active range ({w.active_range:g} of {target.capacity} B "
            f"on {target.spec}) is smaller than one {max_bs} B block. Use a larger target or range."
        )
    return size


def _head_comments(target: Target, w: Workload, tag: str, size: int, note: str | None) -> list[str]:
    part = w.leg_said(size)
    head = [
        # a host's own path (hosts file `target`) is what its fio opens, not the spec's
        f"; iolab round {tag}: {w.label()} on {target.spec}{'' if target.path in target.spec else ' at ' + target.path}",
        f"; outstanding IO {counted(w.threads, 'thread')} x QD {w.queue_depth}, active range {w.active_range:g}"
        f" ({size} B from offset 0{'; this leg streams sequentially its ' + part if part else ''}), "
        f"entropy {w.entropy:g}",
        # true of the file a run keeps in raw/ and of the text `iolab fio-job` prints (no file)
        f"; run by hand, this text saved as {tag}.fio: fio --output-format=json+ --output={tag}.json {tag}.fio",
    ]
    if note:
        head.append(f"; note: {note}")
    return head


WARMUP_SUFFIX = ".warmup"


def separate_warmup(w: Workload) -> tuple[Workload | None, Workload]:
    """(the warm-up to run as a fio job of its own first, or None; the measured job's workload).
    fio starts its runtime clock with its ramp_time's (axboe/fio#2041), so its ramp_time carries
    a warm-up only up to the measured time. Longer, under a demanded rate, fio 3.33 ends the job
    early and reports its IOs without one latency (a 1 s warm-up before 100 ms of 1,000 IOPS: 101
    IOs, lat N 0), and the round fails. Such a warm-up runs first, at the same rate and unmeasured
    (as the simulator runs every warm-up), and the measured job has none; fio's ramp_time keeps
    every other warm-up, which it measures correctly."""
    if w.ramp_s <= 0 or w.rate_iops is None or w.duration_s is None or w.ramp_s <= w.duration_s:
        return None, w
    return replace(w, duration_s=w.ramp_s, ramp_s=0.0, bytes_budget=None), replace(w, ramp_s=0.0)


def _global_section(target: Target, w: Workload, tag: str, ioengine: str, size: int) -> list[str]:
    """The [global] section: the target, the run's length, data, seed and logs."""
    g = ["[global]"]
    if target.kind == "nbd":
        g += ["ioengine=nbd", f"uri={target.path}"]
    elif ioengine not in JOB_IOENGINES:
        # whatever the caller checked: fio's external: and exec engines run code as the server's user
        raise IolabError(f"ioengine {ioengine!r}: iolab writes only {', '.join(JOB_IOENGINES)} into a fio job.")
    else:
        g += [f"ioengine={ioengine}", f"filename={_escape_filename(target.path)}"]
    g += [
        "direct=1",
        f"size={size}",
        "group_reporting=1",
        # Uniform random with replacement over the whole range, as the PTS asks; fio's random
        # map (touch each block once per pass) also costs memory on large drives.
        "norandommap=1",
        # The 32-bit default generator cannot address every block of drives > 16 TiB at 4 KiB.
        "random_generator=tausworthe64",
        f"randseed={w.seed_for(tag)}",
        # json+ bins of total latency (submission + completion), so percentiles describe the
        # same latency as the mean and the maximum.
        "lat_percentiles=1",
        # Jobs as threads of one fio process, not forked processes: the same IO, measured the
        # same way (fio reads each job's CPU use per thread), but forking cost fio more CPU
        # and time than a short cell's IO (docs/tests.md: DIRTH's 64 jobs 0.58 -> 0.42 CPU-s,
        # 3.6 -> 1.8 s before its 500 ms of IO were done).
        "thread=1",
    ]
    if w.duration_s is not None:
        # fio takes ms, so sub-second cells (quick profiles) are exact.
        runtime_ms = max(1, round(w.duration_s * 1000))
        g += [f"runtime={runtime_ms}ms"]
        if w.bytes_budget is None:
            g += ["time_based=1"]
    if w.ramp_s > 0:
        # fio runs the warm-up first and resets its statistics after it (logs too), so
        # nothing of it enters the JSON; runtime counts from the end of the warm-up.
        g += [f"ramp_time={max(1, round(w.ramp_s * 1000))}ms"]
    if any(s.op == "write" for s in w.streams):
        # refill_buffers: fresh data for every write, so a drive that dedupes or compresses
        # sees what `entropy` says. Reads never use these buffers.
        g += ["refill_buffers=1"]
        compress = round((1 - w.entropy) * 100)
        if compress > 0:
            g += [f"buffer_compress_percentage={compress}"]
    g += [f"write_iops_log={tag}", f"write_bw_log={tag}", f"write_lat_log={tag}", f"log_avg_msec={LOG_INTERVAL_MS}"]
    if w.max_per_second:
        g += [f"write_hist_log={tag}", f"log_hist_msec={LOG_INTERVAL_MS}"]
    return g


def _section_lines(w: Workload, sec: _Section, size: int, flow: int | None) -> tuple[list[str], int]:
    """One access pattern's job section, and the bytes it plans under a byte budget (0
    without one). `flow`: its weight when several sections share the load."""
    lines = ["", f"[{sec.access}]", f"rw={_rw(sec)}"]
    planned = 0
    reads = sum(s.share for s in sec.by_op("read"))
    if sec.by_op("read") and sec.by_op("write"):
        # fio takes whole percent; keep both directions present when both are asked for.
        lines.append(f"rwmixread={min(99, max(1, round(100 * reads / sec.share)))}")
    lines += [_block_sizes(sec), f"numjobs={sec.numjobs}", f"iodepth={sec.iodepth}"]
    if sec.access == "rnd" and w.zones:
        lines.append("random_distribution=zoned:" + ":".join(f"{100 * io:g}/{100 * span:g}" for io, span in w.zones))
    if sec.access == "seq":
        lines += _seq_range(w, sec, size)
    if w.bytes_budget is not None:
        total_bpi = sum(s.share * s.block_size for s in w.streams)
        part = w.bytes_budget * sec.share * sec.bytes_per_io / total_bpi
        # Whole blocks per job (at least one), so fio stops exactly at io_size.
        per_job = max(sec.max_bs, int(part / sec.numjobs) // sec.max_bs * sec.max_bs)
        lines.append(f"io_size={per_job}")
        planned = per_job * sec.numjobs
    if w.rate_iops is not None:
        lines.append("rate_iops=" + _rate_text(w, sec))
    if flow is not None:
        # IO proportions between sections follow the stream shares (fio counts IOs).
        lines += [f"flow={flow}", f"flow_sleep={FLOW_SLEEP_US}"]
    return lines, planned


def _seq_range(w: Workload, sec: _Section, size: int) -> list[str]:
    """Where a sequential section streams: its leg's part of the active range (Workload.leg_part),
    each thread its own slice of that. Random sections keep the whole range on every leg and thread
    (uniform draws, seeded apart)."""
    start, span = w.leg_part(size)
    said = w.leg_said(size)
    lines = [f"; sequential streams: {said} (the active range shared by the legs opening this target)"] if said else []
    lines += [f"offset={start}"] if start else []
    per_job = span // sec.numjobs // sec.max_bs * sec.max_bs
    if sec.numjobs > 1 and per_job >= sec.max_bs:
        return lines + [f"size={per_job}", f"offset_increment={per_job}"]
    return lines + ([f"size={span}"] if span != size else [])


def _checked(lines: list[str]) -> list[str]:
    """The job file's lines, refused if one could start another line or section in fio's eyes,
    or hold a value fio would read differently (whatever the caller checked before). Options
    first: a path the header's comment also names is refused as the option it is."""
    for line in sorted(lines, key=lambda x: x.startswith(";")):
        if line.startswith(";"):
            check_text(line, "fio job comment")
        elif line and not (line.startswith("[") and line.endswith("]")):
            key, _, value = line.partition("=")
            check_fio_value(value, f"fio job option {key}")
        else:
            check_text(line, "fio job section")
    return lines


def _rate_text(w: Workload, sec: _Section) -> str:
    """Per-job, per-direction IOPS caps ('r,w') that add up to the workload's rate."""
    assert w.rate_iops is not None
    parts = []
    for op in ("read", "write"):
        share = sum(s.share for s in sec.by_op(op))
        if share == 0:
            parts.append("")
            continue
        per_job = w.rate_iops * share / sec.numjobs
        if per_job < 1:
            raise IolabError(
                f"workload {w.label()!r}: a rate of {w.rate_iops} IOPS leaves {per_job:.2f} IOPS "
                f"per fio job for {op}s ({sec.numjobs} jobs), and fio caps rates in whole IOPS. "
                "Use fewer threads or a higher rate."
            )
        parts.append(str(round(per_job)))
    return ",".join(parts).rstrip(",")
