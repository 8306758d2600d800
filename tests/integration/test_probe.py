"""The fio server probe from the command line: its wait is one budget the user can set
(IOLAB_FIO_PROBE_TIMEOUT), and a probe that fails early is tried again. Real fio servers on
this machine's loopback (no root needed); the timing is made by the test, not measured."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

from .conftest import iolab

QUICK = ("--quick", "--cell-time", "100ms", "--max-rounds", "2", "--no-report", "--purge", "none")


def run_through(scratch: Path, port: int, env: dict) -> subprocess.CompletedProcess:
    """A quick latency run on a file through the fio server at 127.0.0.1:port."""
    target, runs = f"file:{scratch}/a.img?size=8MiB", str(scratch / "runs")
    args = ("run", "latency", *QUICK, "--target", target, "--hosts", f"127.0.0.1:{port}", "--runs-dir", runs)
    return iolab(*args, env=env, timeout=300)


def test_a_server_that_does_not_answer_within_the_budget_the_user_set_is_refused_naming_it(scratch, fio_server_process):
    proc, port = fio_server_process
    proc.send_signal(signal.SIGSTOP)  # it accepts connections (the kernel does) and answers nothing
    r = run_through(scratch, port, {"IOLAB_FIO_PROBE_TIMEOUT": "2"})
    said = " ".join((r.stdout + r.stderr).split())
    assert r.returncode != 0 and "Traceback" not in said, said
    assert f"fio server 127.0.0.1:{port} did not finish a 4 KiB probe job within 2 s" in said, said
    assert "set by IOLAB_FIO_PROBE_TIMEOUT" in said and "IOLAB_FIO_PROBE_TIMEOUT=SECONDS" in said


def test_a_bad_probe_budget_is_one_paragraph_and_no_run(scratch, fio_server_process):
    _, port = fio_server_process
    r = run_through(scratch, port, {"IOLAB_FIO_PROBE_TIMEOUT": "soon"})
    said = " ".join((r.stdout + r.stderr).split())
    assert r.returncode == 2 and "Traceback" not in said, said
    assert "IOLAB_FIO_PROBE_TIMEOUT='soon': give the seconds" in said, said
    assert not list((scratch / "runs").glob("*/manifest.json"))


def test_a_probe_that_fails_once_is_tried_again_and_the_run_records_it(scratch, fio_server_process, tmp_path):
    """The first probe's client fails as one whose connection was dropped does (a `fio` first on
    PATH that fails its first probe job, then runs the real fio)."""
    _, port = fio_server_process
    real = shutil.which("fio")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fio").write_text(
        "#!/bin/sh\n"
        'case "$*" in *probe.fio*) if [ ! -e "$0.failed" ]; then : > "$0.failed"; '
        'echo "fio: connection to server lost" >&2; exit 1; fi;; esac\n'
        f'exec {real} "$@"\n'
    )
    (bin_dir / "fio").chmod(0o755)
    r = run_through(scratch, port, {"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert (bin_dir / "fio.failed").exists()
    (manifest,) = (scratch / "runs").glob("*/manifest.json")
    notes = json.loads(Path(manifest).read_text())["notes"]
    (probe,) = [n for n in notes if n.startswith("fio server probe")]
    assert f"127.0.0.1:{port} answered in" in probe and "(2 attempts)" in probe
    assert "IOLAB_FIO_PROBE_TIMEOUT sets it" in probe
    assert "fio server probe" in " ".join(r.stdout.split())  # printed as the run starts


def test_each_round_reaches_the_server_through_the_relay_and_names_the_clock_the_server_chose(
    scratch, fio_server_process
):
    """The round's fio output names the relay (127.0.0.1 and its port), whose map to the server
    is kept beside it; the jobs name clocksource=cpu exactly when the probe saw the server choose
    that clock itself (this machine's own choice, so either way is a pass)."""
    _, port = fio_server_process
    r = run_through(scratch, port, {})
    assert r.returncode == 0, r.stdout + r.stderr
    (manifest,) = (scratch / "runs").glob("*/manifest.json")
    (probe,) = [n for n in json.loads(Path(manifest).read_text())["notes"] if n.startswith("fio server probe")]
    raw = Path(manifest).parent / "raw"
    outs = sorted(p for p in raw.glob("*.json") if ".p" not in p.name)
    assert outs
    for out in outs:
        (relay,) = (raw / f"{out.stem}.relay").read_text().splitlines()
        local, server_at = relay.split(" -> ")
        assert server_at == f"127.0.0.1:{port}" and local != server_at
        stats = json.loads(out.read_text()[out.read_text().index("{") :])["client_stats"]
        assert {f"{j['hostname']}:{j['port']}" for j in stats} == {local}
        chose = "its server chose clocksource=cpu itself" in probe
        assert ("\nclocksource=cpu\n" in (raw / f"{out.stem}.p0.fio").read_text()) == chose, probe


def test_a_run_through_one_host_says_one_host_in_its_notes(scratch, fio_server_process):
    """Its note said "split over 1 hosts"."""
    _, port = fio_server_process
    r = run_through(scratch, port, {})
    assert r.returncode == 0, r.stdout + r.stderr
    (run,) = (scratch / "runs").iterdir()
    notes = " ".join(json.loads((run / "manifest.json").read_text())["notes"])
    assert "split over 1 host (fio client/server)" in notes and "1 hosts" not in notes, notes
