"""Never hang: the stall watchdog (a frozen NBD server, fake fios that never finish), stop
signals other than Ctrl-C, and fio output with impossible figures. Each case must end on its
own, stop every process it started, mark the run and keep what was stored."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from iolab.core.errors import EngineError
from iolab.core.workload import Workload
from iolab.engines.fio import FioEngine
from iolab.engines.fio_supervise import MIN_STALL_S, default_stall_timeout
from iolab.store.runstore import RunStore
from iolab.targets import Target

from .conftest import IOLAB, fake_fio, iolab
from .test_fio_engine import _alive, _wait_gone

pytestmark = pytest.mark.integration

MiB = 1024 * 1024
FIX = Path(__file__).resolve().parents[1] / "fixtures" / "fio"
QUICK = ["--quick", "--no-report"]


@pytest.fixture(autouse=True)
def deadline():
    """Fail (instead of hanging the suite) if a case does not end: the old code hung here."""

    def expired(signum, frame):
        raise TimeoutError("the case did not end within 240 s: something hung")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(240)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _procs_in(directory: Path) -> list[int]:
    """Processes working in `directory` (fio runs in the round's raw directory)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cwd = os.readlink(f"/proc/{entry}/cwd")
            except OSError:
                continue
            if (cwd == str(directory) or cwd.startswith(f"{directory}/")) and _alive(int(entry)):
                out.append(int(entry))
    return out


def _kill_all(pids) -> None:
    for p in pids:
        if _alive(p):
            os.kill(p, signal.SIGKILL)


def _wait_for(predicate, timeout: float = 120.0, what: str = "") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _measured_cells(runs: Path) -> int:
    try:
        [run] = list(runs.iterdir())
        con = sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT count(*) FROM cells WHERE kind = 'measure'").fetchone()[0]
        finally:
            con.close()
    except (OSError, ValueError, sqlite3.Error):
        return 0  # the run directory or its database is not there yet


def _stored_run(runs: Path) -> RunStore:
    [run] = list(runs.iterdir())
    con = sqlite3.connect(run / "results.db")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    return RunStore.open(str(run))


@pytest.fixture
def nbd_server(scratch):
    """Start nbdkit on a unix socket with the given plugin/filter arguments; always stopped."""
    nbdkit = shutil.which("nbdkit")
    if not nbdkit:
        pytest.skip("nbdkit not installed")
    servers = []

    def start(*args: str) -> tuple[subprocess.Popen, str]:
        sock = scratch / f"nbd{len(servers)}.sock"
        p = subprocess.Popen(
            [nbdkit, "-f", "-U", str(sock), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        servers.append(p)
        _wait_for(sock.exists, 10, "nbdkit's socket")
        return p, f"nbd+unix:///?socket={sock}"

    yield start
    for p in servers:
        if p.poll() is None:
            p.send_signal(signal.SIGCONT)
            p.terminate()
            p.wait(timeout=10)


# -- the engine alone ------------------------------------------------------------------------


def test_the_default_stall_timeout_is_three_cells_and_at_least_30_s():
    assert default_stall_timeout(Workload.mix("rnd", 0, 4096, duration_s=60)) == 180
    assert default_stall_timeout(Workload.mix("rnd", 0, 4096, duration_s=1)) == MIN_STALL_S == 30
    assert default_stall_timeout(Workload.mix("seq", 0, 4096, bytes_budget=MiB)) == 30


def test_a_server_that_never_answers_fails_the_round(nbd_server, scratch):
    _, uri = nbd_server("--filter=delay", "memory", "64M", "rdelay=3600", "wdelay=3600")
    raw = scratch / "raw"
    with pytest.raises(EngineError) as e:
        FioEngine(stall_timeout=2).run(
            Target("nbd", uri, uri, 64 * MiB), Workload.mix("rnd", 50, 4096, queue_depth=4, duration_s=60), raw, "r1"
        )
    assert str(e.value).startswith(f"no progress for 2 s on {uri}: fio completed no IO (round 'r1'")
    assert "fio was killed, with its jobs" in str(e.value)
    assert not (raw / "r1.json").exists()  # a stalled round is no result
    assert _wait_gone(_procs_in(raw), 10)


def test_a_slow_server_that_keeps_answering_is_not_a_stall(nbd_server, scratch):
    # Each IO takes 0.3 s and the round lasts 6 s, longer than the stall timeout: the watchdog
    # must look at progress, not at how long the round takes or how fast IOs are. The timeout
    # also counts fio's start (its first report comes a second after its first IO): at 2 s, a
    # fio that took 2.5 s to start on a busy machine was a stall, so it is 5 s here.
    _, uri = nbd_server("--filter=delay", "memory", "64M", "rdelay=300ms", "wdelay=300ms")
    r = FioEngine(stall_timeout=5).run(
        Target("nbd", uri, uri, 64 * MiB),
        Workload.mix("rnd", 50, 4096, queue_depth=1, duration_s=6),
        scratch / "raw",
        "r1",
    )
    assert 4 <= r.ios <= 25 and r.runtime_s >= 5.9


def _fake_pids(scratch: Path) -> list[int]:
    try:
        return [int(x) for x in (scratch / "fake.pids").read_text().split()]
    except FileNotFoundError:
        return []


FAKES = {
    "prints nothing and never exits": ("exec sleep 600", "fio completed no IO (round"),
    "reports once, then nothing": (f"cat {FIX / 'randrw.json'}\nexec sleep 600", "fio completed no IO after its first"),
    "closes its output but never exits": ("exec >&-\nexec sleep 600", "fio closed its output but did not exit"),
    "has a job that ignores SIGINT and SIGTERM": (
        'sh -c \'trap "" INT TERM HUP; echo $$ >> "$0"; exec sleep 600\' {pids} &\nwait',
        "fio completed no IO",
    ),
}


@pytest.mark.parametrize("case", FAKES)
def test_a_fio_that_does_not_finish_is_killed(case, scratch):
    body, said = FAKES[case]
    fake = fake_fio(scratch, body.format(pids=scratch / "fake.pids"))
    path = scratch / "t.img"
    path.write_bytes(b"\0" * MiB)
    raw = scratch / "raw"
    try:
        with pytest.raises(EngineError) as e:
            FioEngine(str(fake), stall_timeout=2).run(
                Target("file", f"file:{path}", str(path), MiB), Workload.mix("rnd", 50, 4096, duration_s=1), raw, "r1"
            )
        assert str(e.value).startswith(f"no progress for 2 s on file:{path}: ") and said in str(e.value)
        pids = _fake_pids(scratch)
        assert pids and _wait_gone(pids, 10), f"still running: {[p for p in pids if _alive(p)]}"
        assert not (raw / "r1.json").exists()
    finally:
        _kill_all(_fake_pids(scratch))


# -- whole runs through the command ----------------------------------------------------------


def test_a_frozen_nbd_server_fails_the_run_and_keeps_what_was_measured(nbd_server, scratch):
    server, uri = nbd_server("memory", "64M")
    runs = scratch / "runs"
    cmd = [
        *IOLAB,
        "run",
        "latency",
        "-t",
        f"{uri}&size=64MiB",
        *QUICK,
        "--cell-time",
        "300ms",
        "--stall-timeout",
        "3s",
        "--runs-dir",
        str(runs),
    ]
    run = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, COLUMNS="300")
    )
    try:
        _wait_for(lambda: _measured_cells(runs) >= 2, what="two measured cells")
        server.send_signal(signal.SIGSTOP)  # the server freezes mid-run, connections open
        before = _measured_cells(runs)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 4, out + err
    assert "Traceback" not in err and f"no progress for 3 s on {uri}&size=64MiB" in err
    store = _stored_run(runs)
    assert store.manifest.state == "failed" and store.manifest.error.startswith("no progress for 3 s on nbd+unix")
    assert len(store.cells(complete_only=False)) >= before >= 2  # nothing stored is lost
    assert not _procs_in(store.dir), "fio is still running"
    shown = iolab("show", str(store.dir))
    assert shown.returncode == 0 and "failed" in shown.stdout


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_stops_fio_and_marks_the_run(sig, scratch):
    runs = scratch / "runs"
    cmd = [
        *IOLAB,
        "run",
        "latency",
        "-t",
        f"file:{scratch}/t.img?size=64MiB",
        *QUICK,
        "--cell-time",
        "2s",
        "--runs-dir",
        str(runs),
    ]
    run = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, COLUMNS="300")
    )
    fio: list[int] = []
    try:
        _wait_for(lambda: _measured_cells(runs) >= 1, what="a measured cell")
        raw = next(runs.iterdir()) / "raw"
        _wait_for(lambda: len(_procs_in(raw)) >= 1, 30, "fio (its jobs are its threads)")
        fio = _procs_in(raw)
        run.send_signal(sig)
        try:
            out, err = run.communicate(timeout=120)
        except subprocess.TimeoutExpired:  # say where the run was, not only that it did not stop
            run.kill()
            out, err = run.communicate()
            pytest.fail(f"{sig.name} did not stop the run within 120 s; its output:\n{out}\n{err}")
    finally:
        if run.poll() is None:
            run.kill()
        _kill_all(fio)
    assert run.returncode == 128 + sig, out + err
    assert "Traceback" not in err and f"stopped by {sig.name}" in err
    assert _wait_gone(fio, 10), f"fio still running: {[p for p in fio if _alive(p)]}"
    store = _stored_run(runs)
    assert store.manifest.state == "interrupted" and sig.name in store.manifest.error
    assert len(store.cells(complete_only=False)) >= 1


def test_fio_reporting_impossible_figures_fails_the_run_and_stores_nothing(scratch):
    report = json.loads((FIX / "randrw.json").read_text())
    for job in report["jobs"]:
        job["read"]["iops"] = -job["read"]["iops"]
    (scratch / "bad.json").write_text(json.dumps(report))
    fake = fake_fio(scratch, f"cat {scratch / 'bad.json'}")
    runs = scratch / "runs"
    p = iolab(
        "run",
        "latency",
        "-t",
        f"file:{scratch}/t.img?size=64MiB",
        *QUICK,
        "--runs-dir",
        str(runs),
        env={"PATH": f"{fake.parent}:{os.environ['PATH']}"},
    )
    assert p.returncode == 4, p.stdout + p.stderr
    assert "impossible figures (read iops is -" in " ".join(p.stderr.split())
    store = _stored_run(runs)
    assert store.manifest.state == "failed" and not store.cells()
