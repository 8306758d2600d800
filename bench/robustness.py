"""How iolab holds up against a hostile tester, driving the real `iolab` command.

    sudo .venv/bin/python bench/robustness.py [--dir /var/tmp] [--kills 5] [--resume 1]
                                              [--fault-timeout 150] [--fuzz-cases 20000]
                                              [--skip refusals,writes,kills,faults,fuzz,hosts,watch,input]

Prints eight figures, each measured in this run (nothing is assumed):

  refusals   occupied targets iolab must refuse before it writes anything: a mounted loop
             device, a partitioned one, one with a filesystem signature, a read-only one, a
             second run on a loop device and on a file a first run is using, a file backing a
             loop device, a file carrying a filesystem signature, a file another process holds
             open. Refused = non-zero exit, no traceback, no run directory created, within 60 s
             (a target that is accepted is stopped after 20 s: the case counts as not refused).
  writes     hostile write paths iolab must refuse (exit 3) leaving the path unchanged: the
             simulator's save= to a loop device with a filesystem, over a foreign file, to
             /proc/sys/vm/drop_caches and through a symlink to a device; --runs-dir on sysfs;
             a file target on /proc; a mode-0444 file iolab made; a loop device whose backing
             file another process holds open, or whose file a run writes through another loop
             device; an export over a file iolab did not write.
  kills      kill -9 at a random point of quick runs on file targets, then: the database passes
             SQLite's integrity check, `iolab runs` shows the run interrupted, no fio is left
             behind, and every fio output in raw/ has its cell in the database ("cells lost"
             counts those that do not). `--resume N` also resumes N of the killed runs and checks
             each completes with every round once.
  faults     injected faults that must end the run cleanly (non-zero exit, no traceback, the run
             marked failed, no fio left) within --fault-timeout: nbdkit's error filter (EIO on
             10 % of requests), nbdkit's delay filter (a server that stops answering), a fio that
             never exits, a fio that prints no JSON, a fio that exits with an error (fake fio
             scripts put first on PATH).
  fuzz       bench/fuzz_import.py with --cases, if present: its case count and uncaught exceptions.
  hosts      hosts runs (--hosts, --hosts-file) that must be refused before anything is written
             (a foreign file through 127.0.0.1, 127.0.0.2 and localhost; a partitioned loop device
             spelt //dev/loopN and through a symlink outside /dev; a host reached through fio
             alone; 0.0.0.0 and [::] without --listen-any), the data compared before and after;
             and kill -9 of a hosts run, then its resume: no fio server left listening after either.
  watch      `iolab watch` (port 19460) asked for files outside its runs directory (`..`, `%2e%2e`,
             a report symlink pointing out, `%00`) and under another Host name, and nothing under
             the runs directory changes; nobody's `iolab run` with a lock file planted as a symlink
             to nobody's own file (another user's per-user lock directory, a shared sticky one).
  input      a table of bad command lines (control characters and fio's comment and variable
             characters in targets, --set, hosts; sizes and counts too large; binary and corrupt input files; empty values;
             a refused target among several). Held = the expected non-zero exit, one paragraph
             naming the problem, no traceback, nothing created or changed, within 120 s.

Needs root (loop devices, mounts) and nbdkit. Everything it creates lives under a scratch
directory it removes; it stops only processes it started, by their pid.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from iolab.targets import mark_created

IOLAB = str(Path(sys.executable).parent / "iolab")
QUICK = ["--quick", "--cell-time", "1s", "--no-report"]


@dataclass
class Case:
    name: str
    ok: bool
    detail: str


def sh(*argv: str, check: bool = True) -> str:
    return subprocess.run(argv, check=check, capture_output=True, text=True).stdout.strip()


def iolab(args: list[str], timeout: float, env: dict | None = None) -> tuple[int | None, str, str]:
    """Run the CLI; on timeout stop it (SIGINT, then SIGKILL) and return rc None."""
    e = dict(os.environ, COLUMNS="200", **(env or {}))
    p = subprocess.Popen([IOLAB, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        return None, out, err


def first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " ".join(lines)[:160] if lines else "(nothing)"


def fio_processes_with(path: str) -> list[int]:
    """Pids of fio processes whose job refers to `path` (read from /proc, not killed)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            comm = (d / "comm").read_text().strip()
            if comm != "fio":
                continue
            cwd = os.readlink(d / "cwd")
        except OSError:
            continue
        if path in cwd:
            out.append(int(d.name))
    return out


# -- refusals ---------------------------------------------------------------------------------


class Loops:
    def __init__(self, work: Path):
        self.work, self.devs, self.mounts = work, [], []

    def make(self, name: str, size_mib: int = 64, readonly: bool = False) -> tuple[str, Path]:
        backing = self.work / f"{name}.img"
        with open(backing, "wb") as f:
            f.truncate(size_mib << 20)
        dev = sh("losetup", "-f", "--show", "-P", *(["-r"] if readonly else []), str(backing))
        self.devs.append(dev)
        return dev, backing

    def cleanup(self) -> None:
        for m in reversed(self.mounts):
            subprocess.run(["umount", m], capture_output=True)
        for d in self.devs:
            subprocess.run(["losetup", "-d", d], capture_output=True)


def write_mbr(path: Path) -> None:
    """One Linux partition (sectors 2048-67583) in an MBR: no partitioning tool needed."""
    entry = bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + (2048).to_bytes(4, "little") + (65536).to_bytes(4, "little")
    with open(path, "r+b") as f:
        f.seek(446)
        f.write(entry + bytes(48) + b"\x55\xaa")


def refused(name: str, args: list[str], runs: Path) -> Case:
    before = set(runs.iterdir()) if runs.exists() else set()
    rc, out, err = iolab(args, timeout=20)
    created = (set(runs.iterdir()) if runs.exists() else set()) - before
    if rc is None:
        return Case(name, False, "accepted: still running after 20 s (stopped)")
    if "Traceback" in err:
        return Case(name, False, "traceback: " + first_line(err.splitlines()[-1]))
    if rc == 0:
        return Case(name, False, "accepted: the run completed")
    if created:
        return Case(name, False, f"exit {rc} but a run directory was created first: {first_line(err)}")
    return Case(name, True, f"exit {rc}: {first_line(err)}")


def refusal_cases(work: Path) -> list[Case]:
    runs = work / "runs-refusals"
    runs.mkdir()
    loops = Loops(work)
    cases = []
    try:
        base = ["run", "iops", *QUICK, "--runs-dir", str(runs), "-t"]
        dev, _ = loops.make("mounted")
        sh("mkfs.ext4", "-q", dev)
        mnt = work / "mnt"
        mnt.mkdir()
        sh("mount", dev, str(mnt))
        loops.mounts.append(str(mnt))
        cases.append(refused("mounted loop device", base + [dev], runs))

        dev, backing = loops.make("partitioned")
        write_mbr(backing)
        subprocess.run(["blockdev", "--rereadpt", dev], capture_output=True)
        cases.append(refused("partitioned loop device", base + [dev], runs))

        dev, _ = loops.make("fs")
        sh("mkfs.ext4", "-q", dev)
        cases.append(refused("loop device with a filesystem signature", base + [dev], runs))

        dev, _ = loops.make("ro", readonly=True)
        cases.append(refused("read-only loop device", base + [dev], runs))

        # The files below carry iolab's own mark, so only the check under test can refuse them.
        dev, backing = loops.make("backing")
        mark_created(str(backing))
        cases.append(refused("file backing a loop device", base + [f"file:{backing}"], runs))

        fsfile = work / "fsfile.img"
        with open(fsfile, "wb") as f:
            f.truncate(64 << 20)
        sh("mkfs.ext4", "-q", "-F", str(fsfile))
        mark_created(str(fsfile))
        cases.append(refused("file with a filesystem signature", base + [f"file:{fsfile}"], runs))

        held = work / "held.img"
        with open(held, "wb") as f:
            f.truncate(64 << 20)
        mark_created(str(held))
        holder = subprocess.Popen(["sleep", "600"], stdin=open(held, "rb"))
        try:
            cases.append(refused("file open by another process", base + [f"file:{held}"], runs))
        finally:
            holder.kill()
            holder.wait()

        dev, _ = loops.make("concurrent")
        cases.append(concurrent("second run on a loop device in use by a run", dev, runs, work))
        cases.append(
            concurrent("second run on a file in use by a run", f"file:{work}/shared.img?size=64MiB", runs, work)
        )
    finally:
        loops.cleanup()
    return cases


def concurrent(name: str, target: str, runs: Path, work: Path, second: str | None = None) -> Case:
    first_runs = work / f"runs-first-{abs(hash(name))}"
    env = dict(os.environ, COLUMNS="200")
    first = subprocess.Popen(
        [IOLAB, "run", "latency", *QUICK, "--max-rounds", "3", "-t", target, "--runs-dir", str(first_runs)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60  # probe between cells, when no fio runs: the hard moment
        while time.monotonic() < deadline and not list(first_runs.glob("*/raw/*-r01-c01-*.json")):
            time.sleep(0.05)
        target_arg = second or target
        return refused(name, ["run", "iops", *QUICK, "--runs-dir", str(runs), "-t", target_arg], runs)
    finally:
        first.send_signal(signal.SIGINT)
        try:
            first.wait(timeout=30)
        except subprocess.TimeoutExpired:
            first.kill()
            first.wait()


# -- hostile write paths ----------------------------------------------------------------------


def refused_output(name: str, args: list[str], keep: Path | None, runs: Path) -> Case:
    """An output path iolab must not write: refused (exit 3, no traceback, no run directory)
    and `keep` (a file or device) unchanged."""
    before = sh("sha256sum", str(keep)).split()[0] if keep is not None else None
    case = refused(name, args, runs)
    if case.ok and not case.detail.startswith("exit 3"):
        case = Case(name, False, "refused, but not as a safety refusal (exit 3): " + case.detail)
    if before is not None and sh("sha256sum", str(keep)).split()[0] != before:
        case = Case(name, False, f"{keep} was changed; " + case.detail)
    return case


def hostile_write_paths(work: Path) -> list[Case]:
    """Output paths and targets that lead to a device, the kernel or someone's file: the
    simulator's save=, exports, trace exports, --runs-dir, file targets on /proc, a read-only
    file iolab made, loop devices over a file that is open elsewhere or in use by a run."""
    runs = work / "runs-writes"
    runs.mkdir()
    loops = Loops(work)
    cases = []
    sim = "sim:enterprise-sas?user_gb=4"
    base = ["run", "iops", *QUICK, "--runs-dir", str(runs), "-t"]
    try:
        dev, _ = loops.make("save-device")
        sh("mkfs.ext4", "-q", dev)
        cases.append(
            refused_output(
                "sim save= to a loop device with a filesystem",
                ["run", "throughput", *QUICK, "--runs-dir", str(runs), "-t", f"{sim}&save={dev}"],
                Path(dev),
                runs,
            )
        )
        foreign = work / "foreign.txt"
        foreign.write_text("someone's file\n")
        cases.append(
            refused_output("sim save= over a file iolab did not write", base + [f"{sim}&save={foreign}"], foreign, runs)
        )
        cases.append(
            refused_output(
                "sim save= to /proc/sys/vm/drop_caches", base + [f"{sim}&save=/proc/sys/vm/drop_caches"], None, runs
            )
        )
        link = work / "link-to-device"
        link.symlink_to(dev)
        cases.append(
            refused_output("sim save= through a symlink to a device", base + [f"{sim}&save={link}"], Path(dev), runs)
        )
        cases.append(
            refused_output(
                "--runs-dir on sysfs",
                ["run", "iops", *QUICK, "--runs-dir", "/sys/kernel/iolab-runs", "-t", sim],
                None,
                runs,
            )
        )
        cases.append(
            refused_output("file target /proc/self/comm", base + ["file:/proc/self/comm?size=1MiB"], None, runs)
        )

        readonly = work / "readonly.img"
        with open(readonly, "wb") as f:
            f.truncate(64 << 20)
        mark_created(str(readonly))
        readonly.chmod(0o444)
        cases.append(refused_output("mode-0444 file iolab made (as root)", base + [f"file:{readonly}"], readonly, runs))

        dev, backing = loops.make("vm")
        with open(backing, "r+b") as rw:
            vm = subprocess.Popen(["sleep", "600"], stdout=rw)
        try:
            cases.append(
                refused_output("loop device whose backing file is open read-write", base + [dev], backing, runs)
            )
        finally:
            vm.kill()
            vm.wait()

        first, backing = loops.make("two-loops")
        second = sh("losetup", "-f", "--show", str(backing))
        loops.devs.append(second)
        cases.append(
            concurrent("second loop device over a file a run writes through the first", first, runs, work, second)
        )

        rc, out, err = iolab(["run", "iops", *QUICK, "--runs-dir", str(work / "runs-export"), "-t", sim], timeout=120)
        run = next((work / "runs-export").glob("*"), None)
        if rc != 0 or run is None:
            cases.append(
                Case(
                    "export over a file iolab did not write", False, f"no run to export: exit {rc}: " + first_line(err)
                )
            )
        else:
            out_dir = work / "export"
            out_dir.mkdir()
            (out_dir / "cells.csv").write_text("someone's spreadsheet\n")
            cases.append(
                refused_output(
                    "export over a file iolab did not write",
                    ["export", str(run), "--out", str(out_dir)],
                    out_dir / "cells.csv",
                    runs,
                )
            )
    finally:
        loops.cleanup()
    return cases


# -- kills ------------------------------------------------------------------------------------


@dataclass
class KillResult:
    ok: bool
    outputs: int
    lost: int
    detail: str
    run: Path | None


def db_check(run: Path) -> tuple[str, list[str], list[str]]:
    """Integrity (on a private copy: the check must not change the run), raw outputs, cells' files."""
    with tempfile.TemporaryDirectory() as t:
        for name in ("results.db", "results.db-wal"):
            if (run / name).exists():
                shutil.copyfile(run / name, Path(t) / name)
        con = sqlite3.connect(Path(t) / "results.db")
        try:
            (ok,) = con.execute("PRAGMA integrity_check").fetchone()
            named = [f for (raw,) in con.execute("SELECT raw_files FROM cells") for f in json.loads(raw or "[]")]
        except sqlite3.DatabaseError as e:
            return f"unreadable: {e}", [], []
        finally:
            con.close()
    outputs = [str(p.relative_to(run)) for p in run.glob("raw/*.json")]
    return ok, outputs, named


def one_kill(work: Path, i: int, rng: random.Random) -> KillResult:
    runs = work / f"runs-kill-{i}"
    target = work / f"kill-{i}.img"
    cmd = [
        IOLAB,
        "run",
        "latency",
        *QUICK,
        "--max-rounds",
        "3",
        "-t",
        f"file:{target}?size=64MiB",
        "--runs-dir",
        str(runs),
    ]
    at = rng.uniform(2.0, 40.0)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(at)
    if p.poll() is not None:
        return KillResult(False, 0, 0, f"the run ended (exit {p.returncode}) before the kill at {at:.1f} s", None)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    time.sleep(3)
    dirs = list(runs.iterdir()) if runs.exists() else []
    if not dirs:
        return KillResult(True, 0, 0, f"killed at {at:.1f} s before the run directory existed", None)
    run = dirs[0]
    left = fio_processes_with(str(run))
    ok, outputs, named = db_check(run)
    lost = [o for o in outputs if o not in named]
    rc, out, err = iolab(["runs", "--runs-dir", str(runs)], timeout=60)
    problems = []
    if ok != "ok":
        problems.append(f"database: {ok}")
    if left:
        problems.append(f"fio left running: pids {left}")
    if "interrupted" not in out:
        problems.append(f"`iolab runs` does not show it interrupted: {first_line(out + err)}")
    if lost:
        problems.append(f"cells lost: {', '.join(lost)}")
    return KillResult(
        not problems,
        len(outputs),
        len(lost),
        f"killed at {at:.1f} s: " + ("; ".join(problems) or f"ok ({len(outputs)} outputs, all stored)"),
        run,
    )


def resumed(run: Path) -> Case:
    rc, out, err = iolab(["resume", str(run), "--no-report"], timeout=900)
    if rc != 0:
        return Case(f"resume {run.name}", False, f"exit {rc}: {first_line(err)}")
    con = sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True)
    rounds = [r for (r,) in con.execute("SELECT round FROM rounds WHERE complete=1 AND round>0 ORDER BY round")]
    cells = con.execute("SELECT round, ordinal FROM cells c WHERE kind='measure'").fetchall()
    con.close()
    dup = len(cells) - len(set(cells))
    ok, outputs, named = db_check(run)
    unstored = [o for o in outputs if o not in named]
    good = rounds == list(range(1, len(rounds) + 1)) and dup == 0 and len(rounds) > 0 and not unstored and ok == "ok"
    return Case(
        f"resume {run.name}",
        good,
        f"rounds {rounds}, {dup} duplicate cells, {len(unstored)} fio outputs without their cell, database {ok}",
    )


# -- faults -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


FAKE_FIO = {
    "never exits": "exec sleep 100000",
    "prints no JSON": 'echo "this is not json"; exit 0',
    "exits with an error": 'echo "fio: engine crashed" >&2; exit 1',
}


def fake_fio(work: Path, name: str, body: str) -> Path:
    d = work / f"fakefio-{abs(hash(name))}"
    d.mkdir()
    real = shutil.which("fio")
    script = d / "fio"
    script.write_text(
        f'#!/bin/sh\ncase "$1" in --version) exec {real} --version;; --enghelp*) exec {real} "$@";; esac\n{body}\n'
    )
    script.chmod(0o755)
    return d


def fault(name: str, args: list[str], runs: Path, timeout: float, env: dict | None = None) -> Case:
    t0 = time.monotonic()
    rc, out, err = iolab(args, timeout=timeout, env=env)
    took = time.monotonic() - t0
    states = [
        json.loads((d / "manifest.json").read_text()).get("state")
        for d in runs.glob("*/")
        if (d / "manifest.json").exists()
    ]
    left = [pid for d in runs.glob("*/") for pid in fio_processes_with(str(d))]
    problems = []
    if rc is None:
        problems.append(f"hung: still running after {timeout:g} s (stopped with Ctrl-C)")
    elif rc == 0:
        problems.append("exit 0 despite the fault")
    if "Traceback" in err:
        problems.append("traceback")
    if any(s == "running" for s in states):
        problems.append("run left 'running'")
    if left:
        problems.append(f"fio left running: {left}")
    return Case(name, not problems, f"{took:.0f} s, exit {rc}: " + ("; ".join(problems) or first_line(err)))


def fault_cases(work: Path, timeout: float) -> list[Case]:
    cases = []
    nbdkit = shutil.which("nbdkit")
    filters = [
        (
            "nbdkit error filter (EIO on 10 % of requests)",
            ["--filter=error", "memory", "64M", "error-rate=10%", "error=EIO"],
        ),
        (
            "nbdkit delay filter (a server that stops answering)",
            ["--filter=delay", "memory", "64M", "rdelay=1000", "wdelay=1000"],
        ),
    ]
    for name, argv in filters:
        if not nbdkit:
            cases.append(Case(name, False, "nbdkit not installed: not measured"))
            continue
        port = free_port()
        server = subprocess.Popen(
            [nbdkit, "-f", "-i", "127.0.0.1", "-p", str(port), *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            time.sleep(1)
            runs = work / f"runs-fault-{port}"
            cases.append(
                fault(
                    name,
                    ["run", "latency", *QUICK, "-t", f"nbd://127.0.0.1:{port}/?size=64MiB", "--runs-dir", str(runs)],
                    runs,
                    timeout,
                )
            )
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    for name, body in FAKE_FIO.items():
        d = fake_fio(work, name, body)
        runs = work / f"runs-fake-{abs(hash(name))}"
        env = {"PATH": f"{d}:{os.environ.get('PATH', '')}"}
        cases.append(
            fault(
                f"a fio that {name}",
                [
                    "run",
                    "latency",
                    *QUICK,
                    "-t",
                    f"file:{work}/fake-{abs(hash(name))}.img?size=16MiB",
                    "--runs-dir",
                    str(runs),
                ],
                runs,
                timeout,
                env,
            )
        )
    return cases


# -- fuzz -------------------------------------------------------------------------------------


def fuzz(cases: int) -> str:
    script = Path(__file__).with_name("fuzz_import.py")
    if not script.exists():
        return "not available (bench/fuzz_import.py does not exist)"
    p = subprocess.run([sys.executable, str(script), "--cases", str(cases)], capture_output=True, text=True)
    tail = [ln for ln in (p.stdout + p.stderr).splitlines() if ln.strip()][-4:]
    return f"bench/fuzz_import.py --cases {cases} (exit {p.returncode}): " + " | ".join(tail)


# -- hostile input ----------------------------------------------------------------------------

# A bad command line: its arguments ({w}: a scratch directory made for it, holding the files
# named below), the exit status it must end with, and a word its message must hold.
BAD_LINES: list[tuple[str, list[str], int, str]] = [
    (
        "newline in a file target (exec_prerun in the job file)",
        ["run", "latency", "-t", "file:{w}/x/victim.dat\n[global]\nexec_prerun=touch PWNED?size=4MiB"],
        2,
        "control",
    ),
    ("carriage return in a file target", ["fio-job", "iops", "-t", "file:{w}/a\rb?size=4MiB"], 2, "control"),
    ("tab in a file target", ["run", "iops", "-t", "file:{w}/a\tb?size=4MiB"], 2, "control"),
    ("escape sequence in --tested-by", ["run", "iops", "--tested-by", "me\x1b[31m"], 2, "control"),
    ("newline in --set", ["run", "iops", "--set", "steps=1\n[global]"], 2, "control"),
    (
        "newline in --hosts",
        ["run", "iops", "--hosts", "127.0.0.1\n[x]", "-t", "file:{w}/h.img?size=16MiB"],
        2,
        "control",
    ),
    (
        "newline in a hosts file's target",
        ["run", "iops", "--hosts-file", "{w}/inject.toml", "-t", "file:{w}/h.img?size=16MiB"],
        2,
        "control",
    ),
    ("';' in a file path (fio: a comment)", ["run", "iops", "-t", "file:{w}/a;b.img?size=4MiB"], 2, "fio"),
    ("'#' in a file path (fio: a comment)", ["run", "iops", "-t", "file:{w}/a#b.img?size=4MiB"], 2, "fio"),
    ("'$' in a file path (fio: a variable)", ["run", "iops", "-t", "file:{w}/a${{HOME}}.img?size=4MiB"], 2, "fio"),
    ("file path ending in a blank", ["run", "iops", "-t", "file:{w}/a.img ?size=4MiB"], 2, "white space"),
    ("file size of 10^23 TiB", ["run", "iops", "-t", "file:{w}/big.img?size=99999999999999999999999TiB"], 2, "EiB"),
    ("DIRTH threads of 10^20", ["run", "dirth", "--set", "threads=99999999999999999999"], 2, "2,147,483,647"),
    ("DIRTH threads of 5,000", ["run", "dirth", "--set", "threads=5000"], 2, "4,096"),
    (
        "latency-bound threads of 10^20",
        ["run", "latency-bound", "--set", "threads=99999999999999999999"],
        2,
        "2,147,483,647",
    ),
    ("--max-rounds of 10^23", ["run", "iops", "--max-rounds", "99999999999999999999999"], 2, "1,000"),
    ("--precondition-factor of 1e300", ["run", "iops", "--precondition-factor", "1e300"], 2, "1,000"),
    ("--wsat-capacity-multiple of 1e300", ["run", "wsat", "--wsat-capacity-multiple", "1e300"], 2, "1,000"),
    ("--rwsw-min-writes of inf", ["run", "iops", "--rwsw-min-writes", "inf"], 2, "1,000"),
    (
        "sim calibrate --rounds of 10^20",
        ["sim", "calibrate", "{w}/nope", "--rounds", "99999999999999999999"],
        2,
        "1,000",
    ),
    ("--cell-time of 400 digits", ["run", "iops", "--cell-time", "9" * 400], 2, "duration"),
    (
        "binary --hosts-file",
        ["run", "iops", "--hosts-file", "{w}/binary", "-t", "file:{w}/h.img?size=16MiB"],
        2,
        "text",
    ),
    ("corrupt gzip trace, format detected", ["trace", "import", "{w}/bad.csv.gz", "-o", "{w}/o.parquet"], 2, "gzip"),
    ("cut gzip trace, format detected", ["trace", "import", "{w}/cut.csv.gz", "-o", "{w}/o.parquet"], 2, "gzip"),
    (
        "corrupt gzip trace, --skip-bad-lines",
        ["trace", "import", "{w}/bad.csv.gz", "-f", "msr", "--skip-bad-lines", "-o", "{w}/o.parquet"],
        2,
        "read",
    ),
    ("empty --cell-time", ["run", "iops", "--cell-time", ""], 2, "empty"),
    ("empty --cell-time=", ["run", "iops", "--cell-time="], 2, "empty"),
    ("empty --hosts", ["run", "iops", "--hosts", "", "-t", "file:{w}/h.img?size=16MiB"], 2, "empty"),
    ("empty --paths", ["run", "iops", "--paths", "", "-t", "file:{w}/h.img?size=16MiB"], 2, "empty"),
    ("empty --runs-dir", ["run", "iops", "--runs-dir", ""], 2, "empty"),
    ("empty -t", ["run", "iops", "-t", ""], 2, "empty"),
    (
        "someone's file among several targets",
        ["run", "iops", "-t", "file:{w}/foreign.img", "-t", "sim:nope"],
        3,
        "Refusing",
    ),
    ("/dev/null as a target", ["run", "iops", "-t", "/dev/null"], 2, "block device"),
    ("unknown target option", ["run", "iops", "-t", "file:{w}/f.img?sise=1"], 2, "sise"),
    ("NBD port out of range", ["run", "iops", "-t", "nbd://h:99999/x"], 2, "NBD"),
    ("markup in a target", ["info", "[red]x[/red]"], 2, "[red]x[/red]"),
    ("NaN preconditioning factor", ["run", "iops", "--precondition-factor", "nan"], 2, "preconditioning"),
    ("zero rounds", ["run", "iops", "--max-rounds", "0"], 2, "round"),
    ("cell time of 25 h", ["run", "iops", "--cell-time", "25h"], 2, "cell time"),
    ("unknown purge method", ["run", "iops", "--purge", "foo"], 2, "foo"),
    ("unknown --set name", ["run", "iops", "--set", "nope=1"], 2, "nope"),
    ("--set without a value", ["run", "iops", "--set", "steps="], 2, "NAME=VALUE"),
    (
        "runs directory that is a file",
        ["run", "iops", "--runs-dir", "{w}/binary"],
        3,
        "binary",
    ),  # the write policy refuses it
    ("RWSW test without its workload", ["run", "multi-wsat"], 2, "workload"),
]
QUICK_BAD = ["--quick", "--no-report"]  # were a bad line accepted, it would at least end soon


def bad_line_files(w: Path) -> None:
    (w / "x").mkdir()
    (w / "binary").write_bytes(bytes(range(256)) * 4)
    (w / "foreign.img").write_bytes(os.urandom(1 << 20))  # someone's data: no iolab mark
    (w / "inject.toml").write_text(
        '[[host]]\naddress = "127.0.0.1"\ntarget = "/tmp/x\\n[global]\\nexec_prerun=touch PWNED"\n'
    )
    good = gzip.compress(b"".join(b"%d,h,0,Read,%d,4096,10\n" % (i, i * 4096) for i in range(2000)))
    (w / "bad.csv.gz").write_bytes(good[:30] + bytes(range(200, 255)) + good[85:])
    (w / "cut.csv.gz").write_bytes(good[:25])


def bad_line(name: str, args: list[str], code: int, says: str, work: Path) -> Case:
    """Held: exit `code`, one paragraph holding `says`, no traceback, no file created or
    changed in its scratch directory (no run directory, no target, no PWNED), within 120 s."""
    w = Path(tempfile.mkdtemp(prefix="bad-", dir=work))
    bad_line_files(w)
    before = {p: p.stat().st_mtime_ns for p in w.rglob("*")}
    argv = [a.format(w=w) for a in args] + (QUICK_BAD if args[0] == "run" else [])
    t0 = time.monotonic()
    p = subprocess.Popen(
        [IOLAB, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=w,
        env=dict(os.environ, COLUMNS="200", IOLAB_RUNS=str(w / "runs")),
    )
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGINT)
        out, err = p.communicate()
        return Case(name, False, "accepted: still running after 120 s (stopped)")
    after = {p: p.stat().st_mtime_ns for p in w.rglob("*")}
    problems = []
    if p.returncode != code:
        problems.append(f"exit {p.returncode}, not {code}")
    if "Traceback" in out + err:
        problems.append("traceback")
    message = err.strip() or out.strip()
    if "\n\n" in message:
        problems.append("more than one paragraph")
    if says not in " ".join(message.split()):
        problems.append(f"the message does not say {says!r}")
    changed = sorted(str(q.relative_to(w)) for q in after if before.get(q) != after[q])
    if changed:
        problems.append(f"created or changed: {', '.join(changed[:3])}")
    took = time.monotonic() - t0
    return Case(
        name, not problems, f"{took:.1f} s, exit {p.returncode}: " + ("; ".join(problems) or first_line(message))
    )


def hostile_input(work: Path, limit: int | None = None) -> list[Case]:
    return [bad_line(name, args, code, says, work) for name, args, code, says in BAD_LINES[:limit]]


# -- main -------------------------------------------------------------------------------------


def report(title: str, cases: list[Case]) -> None:
    ok = sum(c.ok for c in cases)
    print(f"\n{title}: {ok}/{len(cases)}")
    for c in cases:
        print(f"  [{'ok ' if c.ok else 'NOT'}] {c.name}: {c.detail}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="/var/tmp", help="scratch filesystem (not tmpfs: fio uses O_DIRECT)")
    ap.add_argument("--kills", type=int, default=5, help="quick runs killed with SIGKILL at a random point")
    ap.add_argument("--resume", type=int, default=1, help="how many killed runs to `iolab resume` afterwards")
    ap.add_argument("--fault-timeout", type=float, default=150.0, help="seconds a faulty run may take to end")
    ap.add_argument("--fuzz-cases", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=None, help="kill points (default: random, printed)")
    ap.add_argument("--skip", default="", help="comma-separated: refusals,writes,kills,faults,fuzz,hosts,watch,input")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="only the watch section and two bad command lines: does the bench still run?",
    )
    a = ap.parse_args()
    if a.smoke:
        a.skip = "refusals,writes,kills,faults,fuzz,hosts"
    if os.geteuid() != 0:
        print("robustness: needs root (loop devices, mounts)", file=sys.stderr)
        return 2
    skip = set(filter(None, a.skip.split(",")))
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    work = Path(tempfile.mkdtemp(prefix="iolab-robust-", dir=a.dir))
    print(f"iolab robustness, scratch {work}, kill seed {seed}")
    try:
        if "refusals" not in skip:
            report("refusals (occupied targets refused before anything is written)", refusal_cases(work))
        if "writes" not in skip:
            report("hostile write paths refused (exit 3, nothing changed)", hostile_write_paths(work))
        if "kills" not in skip:
            rng = random.Random(seed)
            kills = [one_kill(work, i, rng) for i in range(a.kills)]
            report("kills survived", [Case(f"kill {i + 1}", k.ok, k.detail) for i, k in enumerate(kills)])
            print(f"  cells lost: {sum(k.lost for k in kills)} of {sum(k.outputs for k in kills)} fio outputs on disk")
            to_resume = [k.run for k in kills if k.run is not None][: a.resume]
            if to_resume:
                report("killed runs resumed to completion", [resumed(r) for r in to_resume])
        if "faults" not in skip:
            report(f"faults ending cleanly (within {a.fault_timeout:g} s)", fault_cases(work, a.fault_timeout))
        if "fuzz" not in skip:
            print(f"\nfuzz: {fuzz(a.fuzz_cases)}")
        if "hosts" not in skip:
            report("hostile hosts runs (refused before writing; no fio server outlives a run)", hostile_hosts(work))
        if "watch" not in skip:
            report("hostile watch requests and planted lock files refused", hostile_watch_and_locks(work))
        if "input" not in skip:
            report(
                "hostile input (bad command lines: refused in one paragraph, no traceback, nothing written)",
                hostile_input(work, 2 if a.smoke else None),
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


# -- hosts runs -------------------------------------------------------------------------------

HOSTS_PORT = 19380  # a fixed port per case, from the range this bench may use


def _digest(path: str | Path) -> str:
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read(1 << 20)).hexdigest()


def _server_gone(port: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            return True
        time.sleep(0.1)
    return False


def hostile_hosts(work: Path) -> list[Case]:
    runs = work / "runs-hosts"
    runs.mkdir()
    loops = Loops(work)
    cases = []
    base = ["run", "latency", *QUICK, "--purge", "none", "--runs-dir", str(runs)]
    try:
        foreign = work / "hosts-foreign.img"
        foreign.write_bytes(os.urandom(1 << 20))
        for i, address in enumerate(("127.0.0.1", "127.0.0.2", "localhost")):
            before = _digest(foreign)
            c = refused(
                f"foreign file through --hosts {address}",
                base + ["-t", f"file:{foreign}?size=1MiB", "--hosts", f"{address}:{HOSTS_PORT + i}"],
                runs,
            )
            cases.append(Case(c.name, c.ok and _digest(foreign) == before, c.detail))

        dev, backing = loops.make("hosts-partitioned")
        write_mbr(backing)
        link = work / "hosts-disk-link"
        link.symlink_to(dev)
        for name, spelt in (
            ("partitioned loop device spelt //dev/...", "/" + dev),
            ("partitioned loop device through a symlink outside /dev", str(link)),
        ):
            f = work / "hosts.toml"
            f.write_text(f'[[host]]\naddress = "127.0.0.1"\nport = {HOSTS_PORT + 3}\ntarget = "{spelt}"\n')
            before = _digest(dev)
            c = refused(name, base + ["-t", f"file:{work}/hosts-x.img?size=16MiB", "--hosts-file", str(f)], runs)
            cases.append(Case(c.name, c.ok and _digest(dev) == before, c.detail))

        cases.append(
            refused(
                "a host reached through fio alone (nothing can be checked there)",
                base + ["-t", f"file:{work}/hosts-x.img?size=16MiB", "--hosts", "198.51.100.7:19399"],
                runs,
            )
        )
        for wild in ("0.0.0.0", "[::]"):
            c = refused(
                f"--hosts {wild} without --listen-any",
                base + ["-t", f"file:{work}/hosts-x.img?size=16MiB", "--hosts", f"{wild}:{HOSTS_PORT + 4}"],
                runs,
            )
            cases.append(Case(c.name, c.ok and _server_gone(HOSTS_PORT + 4, 1), c.detail))
        cases += _hosts_kill(work)
    finally:
        loops.cleanup()
    return cases


def _hosts_kill(work: Path) -> list[Case]:
    port, runs = HOSTS_PORT + 5, work / "runs-hosts-kill"
    p = subprocess.Popen(
        [
            IOLAB,
            "run",
            "throughput",
            "--quick",
            "--cell-time",
            "1s",
            "--max-rounds",
            "2",
            "--no-report",
            "--purge",
            "none",
            "-t",
            f"file:{work}/hosts-k.img?size=16MiB",
            "--hosts",
            f"127.0.0.1:{port}",
            "--runs-dir",
            str(runs),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and p.poll() is None and not any(runs.glob("*/raw/*-r01-c01-*.p0.fio")):
        time.sleep(0.05)
    if p.poll() is not None:
        return [Case("kill -9 of a hosts run", False, f"the run ended (exit {p.returncode}) before the kill point")]
    p.kill()
    p.wait()
    killed = Case(
        "kill -9 of a hosts run leaves no fio server",
        _server_gone(port),
        f"127.0.0.1:{port} {'closed' if _server_gone(port, 0.5) else 'STILL LISTENING'} after the kill",
    )
    run = next(runs.iterdir())
    rc, _, err = iolab(["resume", str(run), "--no-report"], timeout=300)
    gone = _server_gone(port)
    return [
        killed,
        Case(
            "its resume completes and leaves no fio server",
            rc == 0 and gone,
            f"exit {rc}, server {'gone' if gone else 'STILL LISTENING'}; {first_line(err) if rc else ''}",
        ),
    ]


# --- hostile requests to `iolab watch` and lock files planted by another user ----------------

WATCH_PORT = 19460
REPO = Path(__file__).resolve().parents[1]
SECRET = b"outside the runs directory"


def _get(path: str, host: str | None) -> tuple[int | None, bytes]:
    """One raw GET (the request line exactly as given); status None when the server dropped it."""
    import http.client

    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))  # the tests' request helper
    from tests.integration.test_watch_cli import get

    try:
        return get(path, host, WATCH_PORT)
    except (OSError, http.client.HTTPException):
        return None, b""


def _tree(d: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(d)): (p.lstat().st_mtime_ns, p.lstat().st_size) for p in d.rglob("*")}


def hostile_watch_and_locks(work: Path) -> list[Case]:
    """`iolab watch` asked for files outside its runs directory, with a NUL, under another Host
    name; lock files planted by another user in the victim's lock directory."""
    base = work / "hostile"
    runs, outside = base / "runs", base / "outside"
    for d in (runs / "a-run" / "report", outside, base / "report"):
        d.mkdir(parents=True)
    (runs / "a-run" / "report" / "index.html").write_text("<p>report</p>")
    (runs / "a-run" / "report" / "passwd.html").symlink_to("/etc/passwd")
    (runs / "linked-run").mkdir()
    (runs / "linked-run" / "report").symlink_to(outside)
    (outside / "secret.html").write_bytes(SECRET)
    (base / "report" / "secret.html").write_bytes(SECRET)
    before = _tree(runs)
    own = f"127.0.0.1:{WATCH_PORT}"
    asks = [  # name, path, Host, the statuses that are right
        ("the page", "/", own, {200}),
        ("a report", "/runs/a-run/report/index.html", own, {200}),
        ("/runs/../report/F", "/runs/../report/secret.html", own, {400, 404}),
        ("%2e%2e", "/runs/%2e%2e/report/secret.html", own, {400, 404}),
        ("encoded slashes", "/runs/x/report/..%2f..%2f..%2freport%2fsecret.html", own, {400, 404}),
        ("a report symlink out", "/runs/linked-run/report/secret.html", own, {404}),
        ("a report file linked out", "/runs/a-run/report/passwd.html", own, {404}),
        ("%00", "/runs/a-run/report/%00", own, {400, 404}),
        ("invalid UTF-8", "/runs/a-run/report/%ff", own, {400, 404}),
        ("Host evil.example (DNS rebinding)", "/api/runs", f"evil.example:{WATCH_PORT}", {400, 421}),
        ("no Host header", "/", None, {400, 421}),
    ]
    cases = []
    proc = subprocess.Popen(
        [IOLAB, "watch", str(runs), "--port", str(WATCH_PORT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", WATCH_PORT), timeout=5).close()
                break
            except OSError:
                time.sleep(0.2)
        if proc.poll() is not None:
            cases.append(Case("iolab watch starts", False, first_line(proc.stderr.read())))
        else:
            for name, path, host, right in asks:
                status, body = _get(path, host)
                ok = status in right and SECRET not in body and b"root:" not in body
                cases.append(Case(f"watch: {name}", ok, f"{path} -> {status}"))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    cases.append(Case("watch: nothing under the runs directory changed", _tree(runs) == before, str(runs)))
    cases += _planted_locks(base)
    return cases


def _planted_locks(base: Path) -> list[Case]:
    """nobody's `iolab run` with a lock file planted as a symlink to nobody's own file: in a
    per-user lock directory another user made first, and in a shared sticky one."""
    from iolab.targets.lock import lock_name

    victim, attacker = 65534, 65533
    home, tmp = base / "home", base / "tmp"
    home.mkdir()
    tmp.mkdir()
    for d in (base.parent, base):  # the scratch directory: nobody must reach the files
        os.chmod(d, 0o755)
    os.chmod(tmp, 0o1777)
    precious = home / "precious.txt"
    precious.write_bytes(b"the user's own data\n")
    for p in (home, precious):
        os.chown(p, victim, victim)
    cases = []
    for name, env in (
        ("a per-user lock directory another user made", {"TMPDIR": str(tmp)}),
        ("a symlink in a shared lock directory", {"IOLAB_LOCK_DIR": str(tmp)}),
    ):
        d = tmp / f"iolab-locks-{victim}" if "TMPDIR" in env else tmp
        d.mkdir(mode=0o777, exist_ok=True)
        link = d / lock_name(f"file-{home}/t.img")
        link.unlink(missing_ok=True)
        link.symlink_to(precious)
        if "TMPDIR" in env:
            os.chmod(d, 0o777)
            for p in (d, link):
                os.lchown(p, attacker, attacker)
        e = {k: v for k, v in os.environ.items() if k not in ("IOLAB_LOCK_DIR", "TMPDIR")}
        e.update(HOME=str(home), COLUMNS="200", **env)
        p = subprocess.run(
            [
                "setpriv",
                f"--reuid={victim}",
                f"--regid={victim}",
                "--clear-groups",
                IOLAB,
                "run",
                "throughput",
                "--target",
                f"file:{home}/t.img?size=16MiB",
                *QUICK,
                "--runs-dir",
                str(home / "runs"),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env=e,
            cwd=home,
        )
        intact = precious.read_bytes() == b"the user's own data\n"
        refused = p.returncode != 0 and "lock" in p.stderr and "Traceback" not in p.stderr
        cases.append(
            Case(
                f"locks: {name}",
                intact and refused,
                f"exit {p.returncode}, file {'intact' if intact else 'OVERWRITTEN'}: {first_line(p.stderr)}",
            )
        )
        precious.write_bytes(b"the user's own data\n")
    return cases


if __name__ == "__main__":
    sys.exit(main())
