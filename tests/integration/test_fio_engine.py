"""The fio engine against real fio: files, a loop device, an NBD export; Ctrl-C and a killed
parent; byte budgets, entropy and stream proportions checked on what fio actually did."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import pytest

from iolab.core.errors import EngineError
from iolab.core.workload import Stream, Workload
from iolab.engines.fio import FioEngine
from iolab.targets import Target

from .conftest import default_signals

pytestmark = pytest.mark.integration

KiB = 1024
MiB = 1024 * KiB


@pytest.fixture
def target(scratch: Path) -> Target:
    path = scratch / "target.img"
    t = Target("file", f"file:{path}?size=64MiB", str(path), 64 * MiB)
    FioEngine().prepare(t)
    return t


def run(target: Target, w: Workload, raw: Path, tag: str = "r1", **kw):
    return FioEngine().run(target, w, raw, tag, **kw)


def test_random_mix_matches_the_read_share_and_is_self_consistent(target, scratch):
    live: list[tuple[float, float, float | None]] = []
    w = Workload.mix("rnd", 70, 4 * KiB, threads=2, queue_depth=4, duration_s=2.2)
    r = run(target, w, scratch / "run" / "raw", progress=lambda t, iops, lat: live.append((t, iops, lat)))
    assert r.read.ios / r.ios == pytest.approx(0.70, abs=0.02)
    for side in (r.read, r.write):
        assert side.io_bytes == side.ios * 4 * KiB
        assert side.histogram.total == side.ios
        assert side.iops * r.runtime_s == pytest.approx(side.ios, rel=0.02)
        assert side.lat_min_us <= side.lat_mean_us <= side.lat_max_us
    assert len(r.series) >= 2 and all(s.read_iops > 0 and s.write_iops > 0 for s in r.series)
    # the round's rest after its last whole logged second is a partial row; fio's lat log has
    # each job's mean over it but nothing to weigh two jobs' by, so it has none
    assert all(s.lat_mean_us is not None for s in r.series[:-1])
    ends = [s.t_s for s in r.series]
    assert ends[-1] == pytest.approx(r.runtime_s) and ends[-1] - ends[-2] < 0.98
    spans = [b - a for a, b in zip([0.0, *ends], ends)]
    assert sum((s.read_iops + s.write_iops) * d for s, d in zip(r.series, spans)) == pytest.approx(r.ios)
    assert live and all(iops > 0 for _, iops, _ in live)
    # each live report's latency is the mean of the IOs since the one before: weighted by those
    # IOs they add up to the cell's mean, up to the IOs after the last report (the last call
    # carries the cell's own figures)
    reports, (end_t, end_iops, end_lat) = live[:-1], live[-1]
    assert end_iops == r.iops
    assert end_t == r.runtime_s and end_lat == r.lat_mean_us
    assert reports and all(lat is not None and lat > 0 for _, _, lat in reports)
    ios = [iops * (t - t0) for (t, iops, _), t0 in zip(reports, [0.0] + [t for t, _, _ in reports])]
    weighted = sum(n * lat for n, (_, _, lat) in zip(ios, reports)) / sum(ios)
    assert weighted == pytest.approx(r.lat_mean_us, rel=0.25)
    assert {"raw/r1.fio", "raw/r1.json", "raw/r1_iops.1.log", "raw/r1_iops.2.log"} <= set(r.raw_files)
    assert all((scratch / "run" / p).exists() for p in r.raw_files)
    # Stored output is never overwritten.
    with pytest.raises(EngineError, match="already exists"):
        run(target, w, scratch / "run" / "raw")


def test_byte_budget_writes_exactly_the_budget(target, scratch):
    r = run(target, Workload.mix("rnd", 0, 4 * KiB, threads=2, queue_depth=4, bytes_budget=8 * MiB), scratch / "raw")
    assert r.write.io_bytes == 8 * MiB
    assert r.read.ios == 0 and r.read.lat_mean_us is None


def test_entropy_controls_how_compressible_the_written_data_is(target, scratch):
    def written_ratio(entropy: float, tag: str) -> float:
        run(target, Workload.mix("seq", 0, 128 * KiB, entropy=entropy, bytes_budget=4 * MiB), scratch / "raw", tag)
        with open(target.path, "rb") as fh:
            data = fh.read(4 * MiB)
        return len(zlib.compress(data, 6)) / len(data)

    assert written_ratio(1.0, "e100") > 0.97
    assert written_ratio(0.5, "e50") == pytest.approx(0.5, abs=0.1)


def test_mixed_random_and_sequential_streams_keep_their_proportions(target, scratch):
    w = Workload(
        streams=(Stream("rnd", "read", 4 * KiB, 0.7), Stream("seq", "write", 64 * KiB, 0.3)),
        threads=1,
        queue_depth=4,
        duration_s=2.0,
    )
    r = run(target, w, scratch / "raw")
    # The two access patterns run as two fio jobs; reads are all RND, writes all SEQ.
    assert r.read.ios / r.ios == pytest.approx(0.7, abs=0.03)
    assert r.write.io_bytes == r.write.ios * 64 * KiB


def test_sub_second_round(target, scratch):
    r = run(target, Workload.mix("rnd", 100, 4 * KiB, duration_s=0.3), scratch / "raw")
    assert r.read.ios > 0 and r.runtime_s < 1.0
    # fio ran with the clock the job named, where this machine lets iolab name it
    from iolab.engines.fio_job import local_clocksource

    clock = local_clocksource()
    report = json.loads((scratch / "raw" / "r1.json").read_text())
    assert report["global options"].get("clocksource") == clock
    assert r.read.lat_mean_us is not None and 0 < r.read.lat_mean_us < 1e6


def test_fio_failure_names_the_job_file_and_what_fio_said(scratch):
    uri = f"nbd+unix:///?socket={scratch}/no-server.sock"
    with pytest.raises(EngineError) as e:
        run(Target("nbd", uri, uri, 64 * MiB), Workload.mix("rnd", 100, 4 * KiB, duration_s=0.3), scratch / "raw")
    msg = str(e.value)
    assert str(scratch / "raw" / "r1.fio") in msg and "fio said: fio: nbd_connect_uri" in msg


def test_a_missing_device_is_refused_not_created(scratch):
    # fio itself would lay out a regular file at the path, even under /dev.
    missing = scratch / "no-such-device"
    with pytest.raises(EngineError, match="does not exist"):
        run(
            Target("block", str(missing), str(missing), 64 * MiB),
            Workload.mix("rnd", 0, 4 * KiB, duration_s=0.3),
            scratch / "raw",
        )
    assert not missing.exists()
    with pytest.raises(EngineError, match="not a block device"):
        run(
            Target("block", str(scratch), str(scratch), 64 * MiB),
            Workload.mix("rnd", 0, 4 * KiB, duration_s=0.3),
            scratch / "raw2",
        )


def test_generated_jobs_are_accepted_by_fio(target, scratch):
    engine = FioEngine()
    workloads = [
        Workload(
            streams=(
                Stream("rnd", "read", 4 * KiB, 0.3),
                Stream("rnd", "read", 8 * KiB, 0.2),
                Stream("rnd", "write", 4 * KiB, 1 / 6),
                Stream("rnd", "write", 64 * KiB, 1 / 3),
            ),
            threads=2,
            queue_depth=8,
            rate_iops=5000,
            entropy=0.4,
            duration_s=1,
        ),
        Workload(
            streams=(Stream("seq", "write", 128 * KiB, 0.5), Stream("rnd", "read", 4 * KiB, 0.5)),
            threads=3,
            queue_depth=1,
            bytes_budget=MiB,
        ),
        Workload.mix("seq", 0, 1024 * KiB, threads=4, rate_iops=8, active_range=0.75, duration_s=0.5),
    ]
    for i, w in enumerate(workloads):
        job = scratch / f"j{i}.fio"
        job.write_text(engine.job_text(target, w, f"j{i}"))
        out = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True, cwd=scratch)
        assert out.returncode == 0, out.stdout + out.stderr
    assert f"ioengine={engine.job_text(target, workloads[0], 'x').split('ioengine=')[1].split()[0]}" in (
        "ioengine=io_uring",
        "ioengine=libaio",
    )


def test_loop_device(loop_device, scratch):
    t = Target("block", loop_device, loop_device, 256 * MiB)
    r = run(t, Workload.mix("rnd", 50, 4 * KiB, threads=1, queue_depth=8, duration_s=1.0), scratch / "raw")
    assert r.read.ios > 0 and r.write.ios > 0
    assert r.read.ios / r.ios == pytest.approx(0.5, abs=0.03)


def test_nbd_export(scratch):
    nbdkit = shutil.which("nbdkit")
    if not nbdkit:
        pytest.skip("nbdkit not installed")
    sock = scratch / "nbd.sock"
    server = subprocess.Popen(
        [nbdkit, "-f", "-U", str(sock), "memory", "64M"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(100):
            if sock.exists():
                break
            time.sleep(0.05)
        uri = f"nbd+unix:///?socket={sock}"
        r = run(
            Target("nbd", uri, uri, 64 * MiB),
            Workload.mix("rnd", 50, 4 * KiB, queue_depth=4, duration_s=0.5),
            scratch / "raw",
        )
        assert r.read.ios > 0 and r.write.ios > 0
    finally:
        server.terminate()
        server.wait(timeout=10)


# -- stopping fio ---------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from iolab.engines.fio import FioEngine
    from iolab.targets import Target
    from iolab.core.workload import Workload

    path, raw = sys.argv[1], Path(sys.argv[2])
    t = Target("file", "file:" + path, path, 64 * 1024 * 1024)
    try:
        FioEngine().run(t, Workload.mix("rnd", 50, 4096, duration_s=120), raw, "long",
                        progress=lambda s, iops, lat: print("live", flush=True))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(42)
    print("finished", flush=True)
""")


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start_child(target: Target, scratch: Path, env: dict | None = None) -> tuple[subprocess.Popen, list[int]]:
    """A Python process running a long round; returns it and fio's processes: fio itself, and
    any job processes it forked (none: iolab's jobs are threads of fio, thread=1, which end
    with it; a forked job would sit in its own session and could outlive fio)."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, target.path, str(scratch / "raw")],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=default_signals,  # stopped with SIGINT
    )
    assert child.stdout.readline().strip() == "live"  # fio is running and reporting
    fio = [p for p in _children(child.pid) if Path(f"/proc/{p}/comm").read_text().strip() == "fio"]
    assert len(fio) == 1
    return child, [fio[0], *_children(fio[0])]


def _wait_gone(pids, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


def test_ctrl_c_stops_fio_and_propagates(target, scratch):
    child, fio = _start_child(target, scratch)
    try:
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=60)
        assert child.returncode == 42 and "interrupted" in out
        assert not [p for p in fio if _alive(p)]  # fio (its job threads with it) is gone
        assert not (scratch / "raw" / "long.json").exists()  # an interrupted round is no result
    finally:
        if child.poll() is None:
            child.kill()
        _reap(fio)


def test_a_killed_parent_does_not_leave_fio_running(target, scratch):
    bare = scratch / "bin"  # fio and nothing else on PATH: no helper such as setpriv ties it to iolab
    bare.mkdir()
    (bare / "fio").symlink_to(shutil.which("fio"))
    child, fio = _start_child(target, scratch, dict(os.environ, PATH=str(bare)))
    try:
        child.kill()
        child.wait(timeout=10)
        assert _wait_gone(fio), f"fio processes still running: {[p for p in fio if _alive(p)]}"
    finally:
        _reap(fio)


def _reap(pids: list[int]) -> None:
    """Leave nothing running if a test failed (these are the processes the test started)."""
    for p in pids:
        if _alive(p):
            os.kill(p, signal.SIGKILL)
