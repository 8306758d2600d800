"""The fio engine: turns a `Workload` into a fio job file (`fio_job`), runs fio on a real
target (block device, file or NBD export) under supervision (`fio_supervise`) and reads fio's
JSON+ output and per-second logs back into a `RoundResult` (`fio_parse`)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from iolab.core.errors import EngineError, IolabError
from iolab.core.ioengines import check_ioengine
from iolab.core.procs import die_with_parent
from iolab.core.results import RoundResult
from iolab.core.workload import Workload
from iolab.engines.capabilities import Capabilities  # noqa: E402
from iolab.engines.fio_job import (
    WARMUP_SUFFIX,
    build_job,
    deviation,
    fio_missing,
    fio_version,
    local_clocksource,
    pick_ioengine,
    separate_warmup,
)
from iolab.engines.fio_parse import load_round
from iolab.engines.fio_supervise import (
    Progress,
    ReportStream,
    Stalled,
    check_stall_timeout,
    default_stall_timeout,
    kill,
    pump,
    stall_error,
    stderr_tail,
    stop,
)
from iolab.targets import PURGE_METHODS as _TARGET_PURGES  # noqa: E402  (kept beside the class that uses them)
from iolab.targets import PurgeOutcome, Target


class FioEngine:
    """Runs workloads on block devices, files and NBD exports through fio."""

    name = "fio"
    # Purge and the write cache are the target kind's hooks (targets/); idling is wall time.
    capabilities = Capabilities(
        drives=("block", "file", "nbd"),
        idle=True,
        trim=True,
        purge_methods=tuple(m for m in _TARGET_PURGES if m != "none"),
        write_cache=True,
        replay_timestamps=False,
        remote_targets=False,
        claims_targets=False,
        virtual_time=False,
        keeps_state=True,
    )

    def __init__(self, fio: str = "fio", stall_timeout: float | None = None, ioengine: str = "auto"):
        """`stall_timeout`: seconds without a completed IO before a round is stopped and
        failed (default: `default_stall_timeout` of each round's workload). `ioengine`: fio's
        engine for block devices and files, io_uring, libaio or auto (fio_job.pick_ioengine)."""
        check_stall_timeout(stall_timeout)
        self.fio = fio
        self.stall_timeout = stall_timeout
        self.ioengine = check_ioengine(ioengine)

    # -- protocol -------------------------------------------------------------------------
    def version(self) -> str:
        return fio_version(self.fio)

    def prepare(self, target: Target) -> None:
        """Files: created, or extended, to the target's capacity with space allocated, by
        targets.prepare_file (which never shrinks or overwrites data). Block devices and NBD
        exports need nothing."""
        if target.kind == "file":
            from iolab.targets import prepare_file  # lazy: targets owns file creation and marking

            prepare_file(target)

    def purge(self, target: Target, method: str) -> PurgeOutcome:
        from iolab.targets import purge  # lazy: targets owns purge methods and safety checks

        return purge(target, method)

    def set_write_cache(self, target: Target, enabled: bool) -> str:
        from iolab.targets import set_write_cache

        return set_write_cache(target, enabled)

    def idle(self, target: Target, seconds: float) -> None:
        """The device gets no IO from iolab for `seconds` of wall time. Sleeping in short steps
        keeps Ctrl-C and the stop signals prompt."""
        if seconds < 0:
            raise IolabError(f"idle time {seconds} s must not be negative")
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(left, 0.5))

    def ioengine_of(self, target: Target) -> str:
        """The fio ioengine this engine's rounds on `target` use (the manifest records it)."""
        return pick_ioengine(self.ioengine, target, self.fio)

    def job_text(self, target: Target, workload: Workload, tag: str) -> str:
        return build_job(target, workload, tag, self.ioengine_of(target), local_clocksource())

    def run(
        self, target: Target, workload: Workload, raw_dir: Path, tag: str, progress: Progress | None = None
    ) -> RoundResult:
        """Run one round. Raw output: raw_dir/<tag>.fio (the job), <tag>.json (fio's final
        json+ report), <tag>.stderr (what fio said besides JSON) and fio's logs
        <tag>_{iops,bw,lat,clat,slat}.N.log. Ctrl-C stops fio and re-raises. A round in
        which fio completes no IO for the stall timeout is killed and fails (EngineError);
        the last status report fio printed is kept as <tag>.stalled.txt. A warm-up fio's
        ramp_time cannot carry runs first as a job of its own, <tag>.warmup.* (separate_warmup)."""
        raw_dir = Path(raw_dir)
        raw_dir.mkdir(parents=True, exist_ok=True)
        warmup, measured = separate_warmup(workload)
        jobs = [(warmup, tag + WARMUP_SUFFIX)] if warmup is not None else []
        texts = [self.job_text(target, w, t) for w, t in [*jobs, (measured, tag)]]
        _check_path(target)
        refuse_existing(raw_dir, tag)  # a warm-up's files are the cell's: <tag>.warmup.*
        for (w, t), text in zip(jobs, texts):
            self._fio(target, w, raw_dir, t, text, None)
        result = self._fio(target, measured, raw_dir, tag, texts[-1], progress)
        if note := deviation(measured):
            result = replace(result, deviations=(note,))
        if progress is not None:
            progress(result.runtime_s, result.iops, result.lat_mean_us)
        return result

    def _fio(
        self, target: Target, workload: Workload, raw_dir: Path, tag: str, text: str, progress: Progress | None
    ) -> RoundResult:
        """One fio job (`text`) run to its end under the stall watchdog, and its output read."""
        job = raw_dir / f"{tag}.fio"
        job.write_text(text)
        err_path = raw_dir / f"{tag}.stderr"
        # The report comes on stdout (not --output) so periodic status reports can be read
        # live and dropped; only the final one is written to <tag>.json. They are asked for
        # even without a progress display: the stall watchdog needs them.
        cmd = [self.fio, "--output-format=json+", "--status-interval=1", job.name]
        stall_s = self.stall_timeout if self.stall_timeout is not None else default_stall_timeout(workload)
        stalled: Stalled | None = None
        killed = True
        reports = ReportStream()
        with open(err_path, "ab") as err:
            proc = _start(cmd, raw_dir, err)
            try:
                pump(proc, reports, progress, stall_s)
            except Stalled as e:
                stalled = e
                killed = kill(proc)  # no polite stop: a stuck fio may never act on SIGINT
            except BaseException:
                stop(proc)
                raise
            finally:
                proc.stdout.close()  # type: ignore[union-attr]
                reports.close()
                if reports.notes:
                    err.write(("\n".join(reports.notes) + "\n").encode())
        if stalled is not None:
            raise stall_error(stalled, target, tag, job, raw_dir, reports, proc, killed, err_path)
        if reports.final_text is not None:
            (raw_dir / f"{tag}.json").write_text(reports.final_text + "\n")
        if proc.returncode != 0:
            raise EngineError(
                f"fio failed on round {tag!r} (exit {proc.returncode}; job file {job}). "
                f"fio said: {stderr_tail(err_path) or '(nothing)'}"
            )
        try:
            return load_round(raw_dir, tag)
        except EngineError as e:
            tail = stderr_tail(err_path)
            raise EngineError(f"{e} Job file: {job}." + (f" fio said: {tail}" if tail else "")) from None

    def close(self) -> None:
        pass  # fio runs are self-contained; nothing stays up between rounds


def _check_path(target: Target) -> None:
    """fio quietly creates a regular file where a block device or file is missing (even in
    /dev), so a typo would be 'measured' as a fresh file in the page cache. Refuse instead."""
    if target.kind == "nbd":
        return
    try:
        mode = os.stat(target.path).st_mode
    except FileNotFoundError:
        what = "block device" if target.kind == "block" else "file (prepare() creates it)"
        raise EngineError(f"target {target.spec}: {target.path} does not exist; expected a {what}.") from None
    if target.kind == "block" and not stat.S_ISBLK(mode):
        raise EngineError(f"target {target.spec}: {target.path} is not a block device.")
    if target.kind == "file" and not stat.S_ISREG(mode):
        raise EngineError(f"target {target.spec}: {target.path} is not a regular file.")


def refuse_existing(raw_dir: Path, tag: str) -> None:
    """EngineError if round `tag` already has raw output in raw_dir (one fio or one per host)."""
    existing = [n for n in os.listdir(raw_dir) if n.startswith((f"{tag}.", f"{tag}_"))]
    if existing:
        raise EngineError(
            f"raw output of round {tag!r} already exists in {raw_dir} ({', '.join(sorted(existing)[:3])}"
            f"{', ...' if len(existing) > 3 else ''}). iolab never overwrites stored output: "
            "use a new round tag or move the old files away."
        )


def _start(cmd: list[str], raw_dir: Path, err: BinaryIO) -> subprocess.Popen[bytes]:
    """fio started on the job, its reports on a pipe and its stderr into `err`."""
    try:
        # Own session: a terminal's Ctrl-C reaches iolab only, which then stops fio
        # once, on purpose, and knows the round was interrupted.
        # restore_signals=False: fio inherits Python's ignored SIGPIPE. If iolab dies,
        # fio's "terminating on signal" message then fails with EPIPE instead of
        # killing fio before it has told its job processes to stop (they would run on,
        # orphaned, to the end of the round).
        return subprocess.Popen(
            cmd,
            cwd=raw_dir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
            restore_signals=False,
            # If iolab dies without a chance to stop fio (SIGKILL), the kernel sends fio
            # SIGTERM: a byte-budget round has no runtime cap and would go on writing.
            preexec_fn=die_with_parent(signal.SIGTERM),
        )
    except FileNotFoundError:
        raise fio_missing(cmd[0]) from None
