"""Every `iolab` command and subcommand, run from the command line as a user types it, with
valid arguments: each exits 0 without a traceback, and the read-only ones create or change no
file. The commands are listed from the Typer app itself, so a new command without a line
here fails `test_every_command_has_a_line`."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import typer.main

from iolab.cli.app import app

from .conftest import IOLAB, default_signals, iolab
from .test_resume import run_and_kill

SIM = "sim:enterprise-sas?user_gb=1"
# the finished IOPS runs the reading commands read: a copy this small is at steady state in the
# five rounds of its window (the 1 GB one took eight), with every figure those commands read
IOPS_SIM = "sim:enterprise-sas?user_gb=0.25"

# command -> (arguments after it, read-only); {d} is the scratch directory, {iops} and {iops2}
# two finished quick IOPS runs on the simulator, {cut} a run killed part-way on a file, {loop} a
# loop device being written to.
LINES: dict[tuple[str, ...], tuple[str, bool]] = {
    ("run",): (
        "latency --quick --no-report --cell-time 100ms --max-rounds 1 -t " + SIM + " --runs-dir {d}/runs-new",
        False,
    ),
    ("resume",): ("{cut} --no-report", False),
    ("tests",): ("", True),
    ("runs",): ("--runs-dir {d}/runs", True),
    ("show",): ("{iops}", True),
    ("report",): ("{iops} --out {d}/report", False),
    ("compare",): ("{iops} {iops2} --out {d}/compare", False),
    ("check",): ("{iops2} --baseline {iops} --max-regression 50%", True),
    ("history",): ("{figure} --runs-dir {d}/runs --json", True),
    ("fleet",): ("--runs-dir {d}/runs", True),
    ("export",): ("{iops} --format csv --out {d}/export", False),
    ("audit",): ("{good}", True),
    # a meter log whose two readings hold over any run's time (written as the fixtures are made)
    ("power",): ("{cut} {d}/meter.csv", False),
    ("info",): (SIM, True),
    ("fio-job",): ("iops --quick -t file:{d}/never-created.img?size=16MiB", True),
    ("plan",): ("pts --all --quick -t file:{d}/never-created.img?size=16MiB", True),
    ("watch",): ("{d}/runs --port 0", True),
    ("capture",): ("{loop} -d 3s -o {d}/capture.parquet", False),
    ("sim", "presets"): ("", True),
    ("sim", "calibrate"): ("{iops} --budget 1 --rounds 1 --capacity 256MiB --cell-time 100ms", True),
    ("trace", "capture"): ("{loop} -d 3s -o {d}/trace-capture.parquet", False),
    ("trace", "import"): ("{d}/trace.csv -f msr -o {d}/imported.parquet", False),
    ("trace", "export"): ("{d}/table.parquet -f msr -o {d}/exported.csv", False),
    ("trace", "analyze"): ("{d}/table.parquet -o {d}/analysis --step 1s", False),
}


def commands(cmd, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    subs = getattr(cmd, "commands", None)
    if subs is None:
        return [path]
    return [p for name, sub in subs.items() for p in commands(sub, (*path, name))]


def test_every_command_has_a_line():
    assert sorted(commands(typer.main.get_command(app))) == sorted(LINES)


def snapshot(d: Path) -> dict[str, tuple[int, int, int]]:
    return {str(p.relative_to(d)): (st.st_size, st.st_mtime_ns, st.st_mode) for p in d.rglob("*") for st in [p.lstat()]}


def msr_trace(path: Path) -> None:
    """A small MSR Cambridge trace: random 4 KiB reads and writes over two seconds."""
    lines = [
        f"{128166372000000000 + i * 20000},host,0,{'Read' if i % 3 else 'Write'},{(i * 7919 % 4096) * 4096},4096,150"
        for i in range(1000)
    ]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def place():
    """Scratch directory with the inputs the lines name; built once (a few quick runs)."""
    from .conftest import _scratch_dir

    with _scratch_dir() as d:
        runs = d / "runs"
        for _ in range(2):
            p = iolab(
                "run", "iops", "--quick", "--no-report", "--cell-time", "100ms", "-t", IOPS_SIM, "--runs-dir", str(runs)
            )
            assert p.returncode == 0, p.stderr
            time.sleep(1.1)  # run directories are named to the second
        iops, iops2 = sorted(runs.iterdir())
        # a run whose audit passes (one round: no steady state declared on the quick-cut range)
        p = iolab(
            "run", "latency", "--quick", "--no-report", "--cell-time", "100ms", "--max-rounds", "1", "-t", SIM,
            "--runs-dir", str(d / "runs-good"),
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
        [good] = (d / "runs-good").iterdir()
        msr_trace(d / "trace.csv")
        (d / "meter.csv").write_text("time,watts\n0,5.5\n4000000000,5.5\n")
        p = iolab("trace", "import", str(d / "trace.csv"), "-f", "msr", "-o", str(d / "table.parquet"))
        assert p.returncode == 0, p.stderr
        yield {
            "d": d,
            "iops": iops,
            "iops2": iops2,
            "good": good,
            "cut": None,
            "loop": None,
            "figure": "RND 4KiB R/W 0/100 IOPS",
        }


def loop_with_io(d: Path):
    """A 16 MiB loop device and a thread writing to it until stopped (something to capture)."""
    if os.geteuid() != 0 or not Path("/sys/kernel/tracing/events/block").exists():
        pytest.skip("capture needs root and tracefs block events")
    backing = d / f"loop-{time.monotonic_ns()}.img"
    with open(backing, "wb") as f:
        f.truncate(16 << 20)
    dev = subprocess.run(
        ["losetup", "-f", "--show", str(backing)], check=True, capture_output=True, text=True
    ).stdout.strip()
    stop = threading.Event()

    def write() -> None:
        fd = os.open(dev, os.O_WRONLY | os.O_SYNC)
        try:
            i = 0
            while not stop.is_set():
                os.pwrite(fd, b"x" * 4096, (i % 4096) * 4096)
                i += 1
                time.sleep(0.002)
        finally:
            os.close(fd)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return dev, stop, t


@pytest.mark.parametrize("command", sorted(LINES), ids=" ".join)
def test_a_command_runs_from_the_command_line(command, place):
    args_text, read_only = LINES[command]
    d = place["d"]
    loop = None
    if "{cut}" in args_text:
        # two rounds of 200 ms cells on a file, not the default five: resume and power need a run
        # killed part-way with cells left to measure, which the kill point leaves either way
        cut = ("latency", "--cell-time", "200ms", "--max-rounds", "2", "-t", f"file:{d}/target.img?size=64MiB")
        place["cut"] = place["cut"] or run_and_kill(d, d / "runs-cut", "-r01-c01", cut)
    if "{loop}" in args_text:
        loop = loop_with_io(d)
        place["loop"] = loop[0]
    args = [*command, *(a.format(**place) for a in args_text.split())]
    before = snapshot(d)
    try:
        if command == ("watch",):
            out, err, code = watch(args)
        else:
            p = iolab(*args, env={"IOLAB_RUNS": str(d / "runs")})
            out, err, code = p.stdout, p.stderr, p.returncode
    finally:
        if loop:
            dev, stop, t = loop
            stop.set()
            t.join()
            subprocess.run(["losetup", "-d", dev], capture_output=True)
    assert "Traceback" not in out + err, err
    # watch runs until Ctrl-C, which ends it with 130 as it ends every command (docs/automation.md)
    assert code == (130 if command == ("watch",) else 0), out + err
    if read_only:
        assert snapshot(d) == before, "a read-only command created or changed files"


def watch(args: list[str]) -> tuple[str, str, int]:
    """Start `iolab watch`, wait for its address, fetch the page, then Ctrl-C it (exit status 130)."""
    import urllib.request

    # Ctrl-C ends it: a suite started in the background hands its children SIGINT ignored
    proc = subprocess.Popen(
        [*IOLAB, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("iolab watch: http://"), line
        url = line.split()[2]
        with urllib.request.urlopen(url, timeout=30) as r:
            assert r.status == 200
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    return line + out, err, proc.returncode
