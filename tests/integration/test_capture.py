"""Capture through tracefs on a loop device while fio runs a known mix; fio's own iolog.

Needs root (loop devices, tracefs). Each test is a few seconds of fio."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import duckdb
import pytest
import zstandard

from iolab.core.errors import RefusedError
from iolab.traces import TraceTable, import_trace
from iolab.traces.analysis.streams import analyse
from iolab.traces.capture import INSTANCE, TRACEFS, capture
from iolab.traces.tracefs_raw import import_tracefs_raw

from .conftest import default_signals, iolab

pytestmark = [pytest.mark.integration, pytest.mark.root]

if os.geteuid() != 0:
    pytest.skip("capture needs root", allow_module_level=True)


def fio(dev: str, *extra: str, seconds: int = 2, ios: int | None = None) -> dict:
    """A 70/30 random 4 KiB mix for `seconds`, or for exactly `ios` IOs where a test counts
    events: a busy machine does fewer IOs in a given time, so a count must not hang on one."""
    until = [f"--io_size={ios * 4}k", "--runtime=300"] if ios else [f"--runtime={seconds}", "--time_based"]
    out = subprocess.run(
        [
            "fio",
            "--name=mix",
            f"--filename={dev}",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--direct=1",
            "--ioengine=libaio",
            "--iodepth=4",
            *until,
            "--randseed=7",
            "--output-format=json",
            *extra,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)["jobs"][0]


def capture_while(dev: str, out: Path, work, **kw):
    """Arm a capture, run `work()`, stop the capture; returns (capture result, work's result)."""
    ready, stop, res = threading.Event(), threading.Event(), {}

    def run():
        try:
            res["cap"] = capture(dev, 120, out, stop=stop, ready=ready, **kw)
        except BaseException as e:  # handed to the test thread
            res["err"] = e
            ready.set()

    t = threading.Thread(target=run)
    t.start()
    assert ready.wait(30)
    try:
        got = work()
    finally:
        stop.set()
        t.join(60)
    if "err" in res:
        raise res["err"]
    return res["cap"], got


def test_capture_finds_the_fio_mix(loop_device, scratch):
    ticks = []
    cap, job = capture_while(loop_device, scratch / "cap.parquet", lambda: fio(loop_device), on_tick=ticks.append)
    assert cap.interrupted and cap.lost_events == 0
    assert cap.table.lost_events == 0 and TraceTable.open(cap.table.path).lost_events == 0  # stored: a complete trace
    assert not any("INCOMPLETE" in n for n in cap.table.notes)
    assert abs(cap.table.start_unix_ns / 1e9 - time.time()) < 60  # dated by the wall clock
    assert not (TRACEFS / "instances" / INSTANCE).exists()  # cleaned up
    # The kernel's pages are kept with their layout, and rebuild the same table.
    assert sum(f.stat().st_size for f in cap.raw_path.glob("cpu*.raw")) > 0
    again = import_tracefs_raw(cap.raw_path, scratch / "again.parquet")
    assert again.rows == cap.table.rows and again.lost_events == 0
    assert ticks and ticks[-1].ios > 0
    fio_ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    a = analyse(cap.table, step_s=1)
    # Every IO fio did, and (almost) nothing else: udev may read a few blocks of a new loop device.
    assert fio_ios <= a.total_ios <= fio_ios * 1.01
    mix = {s.label(): s.pct for s in a.streams}
    assert mix["RND 4KiB R"] == pytest.approx(70, abs=2)
    assert mix["RND 4KiB W"] == pytest.approx(30, abs=2)
    assert [s.label() for s in a.dominant] == ["RND 4KiB R", "RND 4KiB W"]
    assert a.has_latency
    # fio keeps 4 IOs in flight: the block layer never sees more.
    busy = [s for s in a.steps if s.ios > 100]
    assert busy and max(s.oio_max for s in busy) == 4
    # the average is over the step's time, and on a busy machine fio may sit descheduled with
    # nothing in flight for part of a step: only the bounds the queue depth sets hold
    assert all(0 < s.oio_avg <= 4 for s in busy)


def test_a_buffer_too_small_for_the_load_reports_the_dropped_events(loop_device, scratch):
    # 8 KiB per CPU holds ~100 events; fio issues thousands between two reads of the buffer.
    cap, job = capture_while(
        loop_device,
        scratch / "cap.parquet",
        lambda: fio(loop_device, "--iodepth=16", ios=20000),
        buffer_kb=8,
        source="tracefs",
    )
    fio_ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    assert cap.lost_events > 0
    stored = TraceTable.open(cap.table.path)
    assert stored.lost_events == cap.lost_events
    assert stored.notes[0].startswith(f"INCOMPLETE TRACE: the kernel dropped {cap.lost_events:,} trace events")
    assert "INCOMPLETE" in stored.summary()
    # What was recorded plus what was lost accounts for fio's IOs (each IO is 2 events).
    assert cap.table.rows < fio_ios <= cap.table.rows + cap.lost_events


def test_cli_capture_says_loudly_when_events_were_dropped(loop_device, scratch):
    from .conftest import IOLAB

    def cli_capture(out: Path, *extra: str):
        cmd = [*IOLAB, "capture", loop_device, "-d", "60s", "-o", str(out), "--source", "tracefs", *extra]
        stdout, stderr, _ = ctrl_c_after(cmd, lambda: fio(loop_device, "--iodepth=16", seconds=1))
        return stdout, stderr

    stdout, stderr = cli_capture(scratch / "small.parquet", "--buffer", "8KiB")
    lost = TraceTable.open(scratch / "small.parquet").lost_events
    assert lost > 0
    assert f"WARNING: the kernel dropped {lost:,} trace events" in stderr and "INCOMPLETE" in stderr
    assert f"trace events dropped by the kernel: {lost:,} (INCOMPLETE trace)" in stdout
    stdout, stderr = cli_capture(scratch / "normal.parquet")
    assert "trace events dropped by the kernel: 0\n" in stdout and "WARNING" not in stderr
    assert TraceTable.open(scratch / "normal.parquet").lost_events == 0


def ctrl_c_after(cmd: list[str], work, sig: int = signal.SIGINT):
    """Start a capturing process, run `work()` once it is armed, then Ctrl-C it (or send it
    `sig`): (its stdout, its stderr, what `work` returned); it must exit 0."""
    p = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, COLUMNS="300"),
        preexec_fn=default_signals,  # stopped with SIGINT
    )
    try:
        _wait_armed(p)
        got = work()
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, stderr
    return stdout, stderr, got


def _wait_armed(p: subprocess.Popen) -> None:
    """Until the capture in process `p` has enabled its block events."""
    enable = TRACEFS / "instances" / INSTANCE / "events" / "block" / "block_rq_issue" / "enable"
    deadline = time.monotonic() + 30
    while not enable.exists() or _read(enable) != "1":
        assert time.monotonic() < deadline and p.poll() is None, p.stderr.read() if p.poll() is not None else ""
        time.sleep(0.05)


def test_raw_pages_decode_to_what_the_kernel_prints(loop_device, scratch):
    """The same buffer read twice: first as the kernel's text (`trace`, which does not
    consume), then as binary pages (trace_pipe_raw, as capture records them)."""
    from iolab.traces.capture import _copy_pages
    from iolab.traces.tracefs_raw import snapshot_layout

    inst = TRACEFS / "instances" / "iolab-decode-test"
    st = os.stat(loop_device)
    events = [inst / "events" / "block" / e for e in ("block_rq_issue", "block_rq_complete")]
    inst.mkdir()
    try:
        (inst / "trace_clock").write_text("mono")
        (inst / "buffer_size_kb").write_text("8192")
        for ev in events:
            (ev / "filter").write_text(f"dev == {os.major(st.st_rdev) << 20 | os.minor(st.st_rdev)}")
            ev.joinpath("enable").write_text("1")
        fio(loop_device, "--rate_iops=1500", ios=1500)
        subprocess.run(
            ["dd", f"if={loop_device}", "of=/dev/null", "bs=256k", "count=20", "iflag=direct"],
            check=True,
            capture_output=True,
        )
        for ev in events:
            ev.joinpath("enable").write_text("0")
        (scratch / "trace.txt").write_bytes((inst / "trace").read_bytes())
        raw = scratch / "raw"
        layout = snapshot_layout(inst, raw)
        for cpu in sorted(p.name for p in (inst / "per_cpu").glob("cpu*")):
            fd = os.open(inst / "per_cpu" / cpu / "trace_pipe_raw", os.O_RDONLY | os.O_NONBLOCK)
            try:
                with open(raw / f"{cpu}.raw", "wb") as sink:
                    _copy_pages(fd, sink, layout.page_size)
            finally:
                os.close(fd)
    finally:
        for ev in events:
            if ev.exists():
                ev.joinpath("enable").write_text("0")
        for _ in range(50):
            try:
                inst.rmdir()
                break
            except OSError:
                time.sleep(0.1)
    text = import_trace(scratch / "trace.txt", "tracefs", scratch / "text.parquet")
    pages = import_tracefs_raw(raw, scratch / "raw.parquet")
    assert pages.rows == text.rows >= 1000 and pages.lost_events == 0
    # Each IO of the text found among the pages (same fields), at the nearest time. Paired by row
    # in time order instead, two IOs issued within a µs could each meet the other's row: the text's
    # times are µs and not always the pages' ns rounded (1,518 of 1,520 alike on a loaded machine).
    same, worst_t, worst_lat = duckdb.sql(f"""
        WITH a AS (SELECT *, row_number() OVER () AS k FROM read_parquet('{text.path}')),
             near AS (
               SELECT a.k, min(abs(a.time_ns - b.time_ns)) AS dt,
                      arg_min(abs(a.latency_us - b.latency_us), abs(a.time_ns - b.time_ns)) AS dlat
               FROM a JOIN read_parquet('{pages.path}') b
                 ON a.op = b.op AND a.device = b.device AND a.offset_bytes = b.offset_bytes
                AND a.size_bytes = b.size_bytes AND a.process = b.process AND a.pid = b.pid
               GROUP BY a.k)
        SELECT count(*) FILTER (WHERE dt < 1000), max(dt), max(dlat) FROM near""").fetchall()[0]
    assert same == text.rows
    # The text has µs timestamps, the pages ns: they agree to within the text's rounding.
    assert worst_t < 1000 and worst_lat < 1.0
    assert {r[0] for r in duckdb.sql(f"SELECT DISTINCT process FROM {pages.scan_sql()}").fetchall()} == {"fio", "dd"}


def test_process_filter_keeps_only_that_process(loop_device, scratch):
    def work():
        dd = subprocess.Popen(
            ["dd", f"if={loop_device}", "of=/dev/null", "bs=64k", "iflag=direct", "count=2000"],
            stderr=subprocess.DEVNULL,
        )
        try:
            return fio(loop_device, seconds=1)
        finally:
            dd.wait(60)

    cap, _ = capture_while(loop_device, scratch / "cap.parquet", work, process="fio")
    a = analyse(cap.table, step_s=1)
    assert {s.block_size for s in a.streams} == {4096}  # dd's 64 KiB reads are filtered out


def test_refuses_when_block_tracing_is_in_use(loop_device, scratch):
    enable = TRACEFS / "events" / "block" / "block_rq_issue" / "enable"
    if not enable.exists():
        pytest.skip("tracefs not mounted")
    enable.write_text("1")
    try:
        with pytest.raises(RefusedError, match="already in use"):
            capture(loop_device, 1, scratch / "x.parquet")
    finally:
        enable.write_text("0")
    assert not (TRACEFS / "instances" / INSTANCE).exists()


def test_failure_during_capture_still_cleans_up(loop_device, scratch):
    def boom(_tick):
        raise RuntimeError("display broke")

    with pytest.raises(RuntimeError, match="display broke"):
        capture_while(loop_device, scratch / "x.parquet", lambda: fio(loop_device, seconds=2), on_tick=boom)
    assert not (TRACEFS / "instances" / INSTANCE).exists()
    assert _read(TRACEFS / "events" / "block" / "block_rq_issue" / "enable") == "0"


def _read(p: Path) -> str:
    return p.read_text().strip()


def test_fio_write_iolog_imports_to_fios_own_counts(scratch):
    target = scratch / "f.img"
    with open(target, "wb") as f:
        f.truncate(64 << 20)
    log = scratch / "fio.iolog"
    job = fio(str(target), f"--write_iolog={log}", seconds=1)
    t = import_trace(log, "fio", scratch / "t.parquet")
    a = analyse(t, step_s=1)
    assert a.total_ios == job["read"]["total_ios"] + job["write"]["total_ios"]
    reads = sum(s.ios for s in a.streams if s.op == "read")
    assert reads == job["read"]["total_ios"]
    # v3 timestamps are µs: the log spans fio's runtime (read as ns or ms it would be 1,000x off;
    # on a busy machine its first and last IOs may start late and end early, so no tighter bound)
    assert 0.5 * job["job_runtime"] / 1000 <= t.duration_s <= 1.1 * job["job_runtime"] / 1000


def test_ctrl_c_ends_the_capture_cleanly_and_keeps_what_was_recorded(loop_device, scratch):
    import sys

    out = scratch / "cap.parquet"
    code = (
        f"from iolab.traces.capture import capture; r = capture({loop_device!r}, 120, {str(out)!r}); "
        "print(r.interrupted, r.table.rows)"
    )
    stdout, _, job = ctrl_c_after([sys.executable, "-c", code], lambda: fio(loop_device, seconds=1))
    interrupted, rows = stdout.split()
    assert interrupted == "True" and int(rows) >= job["read"]["total_ios"] + job["write"]["total_ios"]
    assert not (TRACEFS / "instances" / INSTANCE).exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_end_the_capture_as_ctrl_c_does(loop_device, scratch, sig):
    """`timeout 10 iolab capture DEV -d 1h` or a closed terminal: the signal killed iolab at
    once (exit 143 / 129, nothing said), no table was written and the kernel went on tracing
    into iolab's tracefs instance until the next capture removed it. It now ends the capture
    as Ctrl-C does: the table of what was recorded, and the instance gone."""
    from .conftest import IOLAB

    out = scratch / "cap.parquet"
    cmd = [*IOLAB, "capture", loop_device, "-d", "60s", "-o", str(out), "--source", "tracefs"]
    stdout, _, job = ctrl_c_after(cmd, lambda: fio(loop_device, seconds=1), sig)
    assert "(ended early)" in stdout
    assert TraceTable.open(out).rows >= job["read"]["total_ios"] + job["write"]["total_ios"]
    assert not (TRACEFS / "instances" / INSTANCE).exists()


def test_no_io_during_the_capture_is_an_error(loop_device, scratch):
    from iolab.core.errors import IolabError

    with pytest.raises(IolabError, match=f"no block IO was issued to {loop_device}"):
        capture(loop_device, 0.5, scratch / "x.parquet")
    assert not (TRACEFS / "instances" / INSTANCE).exists()


def test_cli_capture_refuses_a_missing_directory_as_every_file_output_does(loop_device, scratch):
    # `-o missing/dir/t.parquet` made both folders (the raw trace's directory beside the table), traced,
    # and kept what it traced there, where trace import/export refuse the path before any work
    from .conftest import IOLAB

    out = scratch / "missing" / "dir" / "t.parquet"
    p = subprocess.run([*IOLAB, "capture", loop_device, "-d", "1s", "-o", str(out)], capture_output=True, text=True)
    said = " ".join(p.stderr.split())
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
    assert f"--out {out}: the directory {out.parent} does not exist" in said, said
    assert not (scratch / "missing").exists()
    assert not (TRACEFS / "instances" / INSTANCE).exists()


def test_blktrace_when_it_works_else_tracefs_saying_why(loop_device, scratch, monkeypatch):
    from iolab.core.errors import IolabError
    from iolab.traces import blktrace_capture

    problem = blktrace_capture.blktrace_problem(loop_device)
    cap, job = capture_while(loop_device, scratch / "auto.parquet", lambda: fio(loop_device, seconds=1))
    fio_ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    assert cap.table.rows >= fio_ios
    oio = duckdb.sql(f"SELECT max(outstanding), count(pid) FROM read_parquet('{cap.table.path}')").fetchall()[0]
    assert oio[0] >= 1 and oio[1] == cap.table.rows  # fio runs at QD 4; every issue has its pid
    if problem is None:  # blktrace works on this machine: it was used
        assert cap.table.fmt == "blktrace"
    else:
        assert cap.table.fmt == "tracefs-raw"
        assert any(n.startswith(f"blktrace not used ({problem})") for n in cap.table.notes)
        with pytest.raises(IolabError, match="cannot capture .* with blktrace: .*--source tracefs"):
            capture(loop_device, 1, scratch / "bt.parquet", source="blktrace")
    monkeypatch.setattr(blktrace_capture.shutil, "which", lambda _: None)
    assert "not installed" in blktrace_capture.blktrace_problem(loop_device)


def test_cli_capture_samples_the_written_data_read_only(loop_device, scratch):
    """64 blocks written at 1 MiB while capturing: 32 of zeros, 16 distinct random ones and
    16 copies of 4 of them; plus 1 KiB at 2 MiB + 512 that covers no whole block. The rest of
    the device is zeros, so a block read from outside the written blocks would be counted
    as one more zero block."""
    import mmap

    from .conftest import IOLAB

    rng = random.Random(3)
    rnd = [rng.randbytes(4096) for _ in range(16)]
    blocks = [bytes(4096)] * 32 + rnd + [rnd[i % 4] for i in range(16)]

    def write():
        fd = os.open(loop_device, os.O_WRONLY | os.O_DIRECT)
        try:
            buf = mmap.mmap(-1, len(blocks) * 4096)
            buf.write(b"".join(blocks))
            for i in range(len(blocks)):
                os.pwritev(fd, [memoryview(buf)[i * 4096 : (i + 1) * 4096]], (1 << 20) + i * 4096)
            os.pwritev(fd, [memoryview(buf)[32 * 4096 : 32 * 4096 + 1024]], (2 << 20) + 512)
        finally:
            os.close(fd)

    out = scratch / "data.parquet"
    cmd = [*IOLAB, "capture", loop_device, "-d", "60s", "-o", str(out), "--source", "tracefs", "--sample-data", "1MiB"]
    stdout, _, _ = ctrl_c_after(cmd, write)
    zc = zstandard.ZstdCompressor(level=3)
    ratio = 64 * 4096 / sum(len(zc.compress(b)) for b in blocks)
    line = (
        f"written data: 64 blocks of 4KiB read back (every whole block written): zstd -3 compresses them {ratio:.2f}:1"
        " (each block alone); 73.4 % of the blocks duplicate an earlier one; 50.0 % are zeros"
    )
    assert line in stdout, stdout
    doc = json.loads((scratch / "data.parquet.data.json").read_text())["sample"]
    assert (doc["written_bytes"], doc["blocks"], doc["duplicate_blocks"], doc["zero_blocks"]) == (
        64 * 4096 + 1024,
        64,
        31 + 16,  # the zero blocks after the first, and the copies
        32,
    )
    p = iolab("trace", "analyze", str(out), "-o", str(scratch / "wl"), "--qd", "1", "--step", "1s")
    assert line in p.stdout, p.stderr + p.stdout
    assert json.loads((scratch / "wl" / "analysis.json").read_text())["data"] == doc
