"""Scale-out with real fio: several hosts (network namespaces running `fio --server`), several
paths to one drive (two loop devices over one file), several drives in parallel."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from iolab.api.runlist import list_runs
from iolab.engines.hostlist import Host
from iolab.engines.merge import breakdown
from iolab.figures.audit_series import Shape, findings
from iolab.store.bulk import series_rows
from iolab.store.runstore import RunStore

from .conftest import IOLAB, default_signals, iolab, on_a_terminal
from .netns import fio_hosts, kill_host

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces and loop devices")
QUICK = ("--quick", "--cell-time", "200ms", "--max-rounds", "2", "--no-report")
# The namespaces' fio servers are reached through fio alone: iolab cannot check their targets
# (tests/integration/test_hosts_safety.py), so these runs say the targets are the test's own.
UNCHECKED = "--allow-unsafe-target"


def hosts_file(tmp: Path, hosts, size="32MiB") -> tuple[Path, str]:
    f = tmp / "hosts.toml"
    f.write_text(
        "".join(f'[[host]]\naddress = "{addr}"\ntarget = "{tmp}/h{i}.img"\n\n' for i, (_, addr) in enumerate(hosts))
    )
    return f, f"file:{tmp}/h0.img?size={size}"


def run_dir(out: str) -> Path:
    return Path(next(ln for ln in out.splitlines() if ln.startswith("run directory: ")).split(": ", 1)[1])


def test_three_hosts_run_a_test_together_and_merge_exactly(scratch):
    with fio_hosts(3) as hosts:
        f, target = hosts_file(scratch, hosts)
        r = iolab(
            "run",
            "throughput",
            *QUICK,
            "--purge",
            "none",
            UNCHECKED,
            "--target",
            target,
            "--hosts-file",
            str(f),
            "--runs-dir",
            str(scratch / "runs"),
            timeout=300,
        )
    assert r.returncode == 0, r.stdout + r.stderr
    store = RunStore.open(run_dir(r.stdout))
    cells = store.cells()
    assert cells and store.manifest.state == "complete"
    names = [h[1] + ":8765" for h in hosts]
    for c in cells:
        parts = {p.name: p.figures for p in breakdown(c.counters)}
        assert list(parts) == names  # QD 32 split 11/11/10: every host ran every cell
        assert sum(p["ios"] for p in parts.values()) == c.read_ios + c.write_ios
        assert sum(p["threads"] * p["queue_depth"] for p in parts.values()) == 32
        assert [f for f in c.raw_files if f.endswith(".fio")] == [
            f"raw/{c.raw_files[0].split('/')[1].split('.p')[0]}.p{i}.fio" for i in range(3)
        ]
    assert any("split over 3 hosts" in n for n in store.manifest.notes)
    from iolab.api import reports as api
    from iolab.pages.report.rundata import RunData

    titles = [p.title for p in api.build_document(RunData.load(store.dir, scratch / "rep")).pages]
    assert "Per-Host / Per-Path Breakdown" in titles


def when_measuring(runs: Path, act, done: threading.Event) -> threading.Thread:
    """A thread that calls `act()` once the first measured round's second host has its job file
    (or gives up when `done` is set or after 120 s)."""

    def watch():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not done.is_set():
            if any(runs.glob("*/raw/*-r01-c01-*.p1.fio")):
                act()
                return
            time.sleep(0.02)

    t = threading.Thread(target=watch)
    t.start()
    return t


def test_a_host_that_dies_mid_round_fails_the_cell_naming_it_and_keeps_the_run(scratch):
    with fio_hosts(2) as hosts:
        f, target = hosts_file(scratch, hosts)
        runs = scratch / "runs"
        killer_done = threading.Event()
        t = when_measuring(runs, lambda: (time.sleep(0.5), kill_host(hosts[1][0])), killer_done)
        try:
            r = iolab(
                "run",
                "throughput",
                "--quick",
                "--cell-time",
                "3s",
                "--max-rounds",
                "1",
                "--no-report",
                "--purge",
                "none",
                UNCHECKED,
                "--target",
                target,
                "--hosts-file",
                str(f),
                "--runs-dir",
                str(runs),
                timeout=300,
            )
        finally:
            killer_done.set()
            t.join()
    assert r.returncode != 0
    assert f"host {hosts[1][1]}:8765 sent no results" in r.stderr, r.stderr
    assert "disconnected" in r.stderr
    store = RunStore.open(next(runs.iterdir()))
    assert store.manifest.state == "failed"
    kept = store.cells(kind="measure", complete_only=False)  # the cells before the failure are kept
    assert [c.cell_key for c in kept][:1] == ["100/0 1024KiB"] and "r01-c01" not in " ".join(kept[-1].raw_files)


def test_a_frozen_host_fails_the_round_within_its_time_and_the_stall_timeout(scratch):
    # the fio client waited 10 s for a frozen host to answer its stop: a 10 s stall timeout
    # took 21-26 s to fail the run
    cell_s, stall_s = 1.0, 3.0
    with fio_hosts(2) as hosts:
        f, target = hosts_file(scratch, hosts)
        runs = scratch / "runs"
        frozen: list[float] = []
        t = when_measuring(
            runs, lambda: (kill_host(hosts[1][0], signal.SIGSTOP), frozen.append(time.monotonic())), threading.Event()
        )
        try:
            r = iolab(
                *("run", "throughput", "--quick", "--cell-time", f"{cell_s:g}s", "--max-rounds", "1", "--no-report"),
                *("--purge", "none", UNCHECKED, "--target", target, "--hosts-file", str(f), "--runs-dir", str(runs)),
                *("--stall-timeout", f"{stall_s:g}s"),
                timeout=300,
            )
            ended = time.monotonic()
        finally:
            t.join()
    assert frozen and r.returncode == 4, r.stdout + r.stderr
    # the round's time limit counts from its start, before the freeze; then 2 s for fio's client
    # to stop (fio_client.END_WAIT_S) and 4 s for iolab to end
    assert ended - frozen[0] < cell_s + stall_s + 2.0 + 4.0, ended - frozen[0]
    assert "did not finish within 4 s (its time and the stall timeout" in " ".join(r.stderr.split())


@pytest.fixture
def second_path(loop_device):
    """A second loop device over the loop device's backing file: two paths to one drive."""
    backing = subprocess.run(
        ["losetup", "-n", "-O", "BACK-FILE", loop_device], capture_output=True, text=True
    ).stdout.strip()
    second = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", backing], check=True, capture_output=True, text=True
    ).stdout.strip()
    yield second
    subprocess.run(["losetup", "-d", second], capture_output=True)


def _options(section: str) -> dict[str, str]:
    return dict(ln.split("=", 1) for ln in section.splitlines() if "=" in ln and not ln.startswith(";"))


def _seq_extents(legs: list[dict[str, str]], whole: int) -> list[tuple[int, int]]:
    """The (offset, size) each sequential fio job of the legs streams, from each leg's [seq]
    section options (a job file's or fio's own 'job options'): jobs of one leg step by offset_increment."""
    out = []
    for o in legs:
        start, size, step = int(o.get("offset", 0)), int(o.get("size", whole)), int(o.get("offset_increment", 0))
        out += [(start + j * step, size) for j in range(int(o.get("numjobs", 1)))]
    return sorted(out)


def _assert_streamed_once(extents: list[tuple[int, int]], whole: int, bs: int) -> None:
    """The extents are disjoint and together cover the range but for less than one block per extent."""
    for (a, n), (b, _) in zip(extents, extents[1:]):
        assert a + n <= b, extents  # no block streamed by two jobs
    assert extents[0][0] == 0 and whole - sum(n for _, n in extents) < bs * len(extents), extents


def test_fio_job_gives_each_path_and_each_shared_host_its_own_part_of_a_sequential_range(
    scratch, loop_device, second_path
):
    """Every leg of a split round reaches one drive: each streams its own part of the range (a
    second stream over the same blocks would hit the drive's cache, a fill would write them twice)."""
    f = scratch / "hosts.toml"
    f.write_text('[[host]]\naddress = "192.0.2.1"\n\n[[host]]\naddress = "198.51.100.2"\nshare = 3\n')
    for over in (
        ["-t", loop_device, "--paths", f"{loop_device},{second_path}"],
        ["-t", f"file:{scratch}/x.img?size=64MiB", "--hosts-file", str(f)],
    ):
        r = iolab("fio-job", "throughput", "--quick", *over, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        cells = {}
        for block in r.stdout.split("; ===== leg ")[1:]:
            cells.setdefault(block.split("(", 1)[1].split(".p", 1)[0], []).append(block)
        assert len(cells) >= 6, list(cells)
        for tag, legs in cells.items():
            assert len(legs) == 2, tag
            whole = int(_options(legs[0].split("[global]")[1].split("\n[")[0])["size"])
            seq = [_options(b.split("[seq]")[1]) for b in legs]
            bs = max(int(o["bs"]) for o in seq)
            _assert_streamed_once(_seq_extents(seq, whole), whole, bs)
    assert not (scratch / "x.img").exists()


def test_a_host_with_a_target_of_its_own_streams_its_whole_range_and_hosts_on_one_path_share_theirs(scratch):
    """A split's legs share a target's sequential range only when they open it: two hosts on the
    --target's path stream half each; a host with its own `target` (its own drive) streams all of it
    (it streamed a third, so its drive's fill wrote a third of it). Each job file's header says
    what its sequential streams address, as its [seq] section does."""
    f = scratch / "hosts.toml"
    f.write_text(
        '[[host]]\naddress = "192.0.2.1"\n\n[[host]]\naddress = "192.0.2.2"\n\n'
        '[[host]]\naddress = "198.51.100.2"\ntarget = "/data/own.img"\n'
    )
    r = iolab("fio-job", "throughput", "--quick", "-t", f"file:{scratch}/x.img?size=64MiB", "--hosts-file", str(f))
    assert r.returncode == 0, r.stdout + r.stderr
    blocks = r.stdout.split("; ===== leg ")[1:]
    assert len(blocks) >= 9 and len(blocks) % 3 == 0
    for shared, other, own in zip(blocks[::3], blocks[1::3], blocks[2::3]):
        whole = int(_options(own.split("[global]")[1].split("\n[")[0])["size"])
        seq = [_options(b.split("[seq]")[1]) for b in (shared, other)]
        _assert_streamed_once(_seq_extents(seq, whole), whole, max(int(o["bs"]) for o in seq))
        assert _seq_extents([_options(own.split("[seq]")[1])], whole) == [(0, whole)], own
        assert "filename=/data/own.img" in own and " at /data/own.img\n" in own
        for i, b in enumerate((shared, other)):
            o = seq[i]
            head = (
                f"this leg streams sequentially its part {i + 1} of 2: {o['size']} B from offset {o.get('offset', 0)})"
            )
            assert head in b.split("[global]")[0], b
        assert "this leg streams" not in own and "sequential streams:" not in own
    assert not (scratch / "x.img").exists()


def test_two_paths_to_one_drive_split_the_queue_depth_and_compare_with_one_path(scratch, loop_device, second_path):
    runs = scratch / "runs"
    one = iolab("run", "throughput", *QUICK, "--target", loop_device, "--runs-dir", str(runs), timeout=300)
    assert one.returncode == 0, one.stdout + one.stderr
    r = iolab(
        "run",
        "throughput",
        *QUICK,
        "--target",
        loop_device,
        "--paths",
        f"{loop_device},{second_path}",
        "--runs-dir",
        str(runs),
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    store = RunStore.open(run_dir(r.stdout))
    # what fio ran on each path (its own record of its jobs' options): each streamed its own half
    # of the drive, and the fill wrote its half as many times as one path writes the whole drive
    whole = 256 * 1024 * 1024
    for p0 in (store.dir / "raw").glob("*-r0[01]-c0*.p0.json"):
        legs = [json.loads(p0.with_name(p0.name.replace(".p0.", f".p{i}.")).read_text()) for i in (0, 1)]
        [job] = legs[0]["jobs"]
        _assert_streamed_once(
            _seq_extents([g["jobs"][0]["job options"] for g in legs], whole), whole, int(job["job options"]["bs"])
        )
        if "WIPC" in p0.name:
            assert [g["jobs"][0]["write"]["io_bytes"] for g in legs] == [whole, whole], p0.name
    ios_per_phase: dict[str, dict[str, float]] = {}
    # a cell's stored workload is the round's, not a leg's: no `leg` (it said [0, 1] of every cell)
    assert not [c for c in store.cells() + RunStore.open(run_dir(one.stdout)).cells() if "leg" in c.workload]
    for c in store.cells():
        parts = breakdown(c.counters)
        assert [p.name for p in parts] == [loop_device, second_path]
        assert [p.figures["queue_depth"] for p in parts] == [16, 16]
        assert sum(p.figures["ios"] for p in parts) == c.read_ios + c.write_ios
        for p in parts:
            per = ios_per_phase.setdefault(c.phase, {})
            per[p.name] = per.get(p.name, 0.0) + p.figures["ios"]
    # every split cell's per-second rows hold both paths' IOs, the WIPC fill's too (whose paths end
    # apart: one logged second 1 and ended at 1.6 s, the other logged 2 seconds; merge_series kept
    # second 1 only); `iolab audit` holds the measured cells' rows to that and to the raw logs
    stored = series_rows(store)
    for c in store.cells() + store.cells(kind="precondition"):
        if rows := [(t, r, w, mb, mx) for _, t, r, w, mb, _, mx in stored.get(c.id, ())]:
            w = c.workload
            shape = Shape(c.ios, c.io_bytes or 0, c.runtime_s or 0.0, w["threads"], w["queue_depth"], 0)
            assert not [f.text() for f in findings(rows, shape) if f.short or f.over], c.cell_key
    audit = iolab("audit", str(store.dir), timeout=120)
    assert "FAIL series-totals" not in audit.stdout and "FAIL raw-figures" not in audit.stdout, audit.stdout

    cmp = iolab("compare", str(run_dir(one.stdout)), str(store.dir), "--out", str(scratch / "cmp"), timeout=300)
    assert cmp.returncode == 0, cmp.stdout + cmp.stderr
    [html] = (scratch / "cmp").glob("*.html")
    text = html.read_text()
    d1, d2 = f"D1 {loop_device} (1 path)", f"D2 {loop_device} (2 paths: {loop_device}, {second_path})"
    # side by side: one row each in the summary table, one column each in the drives table
    assert re.search(
        rf'<tr><td class="h">{re.escape(d1)}</td>.*?</tr>\s*<tr><td class="h">{re.escape(d2)}</td>', text, re.S
    )
    assert re.search(rf"<th>{re.escape(d1)}</th><th>{re.escape(d2)}</th>", text)
    assert "Per-Host / Per-Path Breakdown — D2" in text and "Breakdown — D1" not in text  # the single path has none
    tables = re.findall(r"Each part&#x27;s share, phase (.+?), measurement.*?<tbody>(.*?)</tbody>", text, re.S)
    assert sorted(ph for ph, _ in tables) == sorted(ios_per_phase)
    for ph, body in tables:
        rows = re.findall(r'<tr><td class="h">([^<]+)</td><td>\d+</td><td>([\d,]+)</td><td>([\d.]+) %</td>', body)
        shown = {name: int(ios.replace(",", "")) for name, ios, _ in rows}
        assert shown == {n: int(v) for n, v in ios_per_phase[ph].items()}  # both paths, each with its own IOs
        assert abs(sum(float(share) for *_, share in rows) - 100) < 0.2


def test_several_targets_run_in_parallel_and_are_compared(scratch):
    a, b = (f"file:{scratch}/{n}.img?size=32MiB" for n in "ab")
    r = iolab(
        "run",
        "latency",
        "--quick",
        "--cell-time",
        "200ms",
        "--max-rounds",
        "1",
        "--target",
        a,
        "--target",
        b,
        "--runs-dir",
        str(scratch / "runs"),
        "--no-report",
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"[{a}] run directory:" in r.stdout and f"[{b}] run directory:" in r.stdout
    # --no-report: the comparison is not written either, and the command that writes it is printed
    assert not (scratch / "runs" / "compare").exists()
    compared = iolab(*printed_compare(r.stdout))
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert any(p.suffix == ".html" for p in (scratch / "runs" / "compare").iterdir())
    runs = [RunStore.open(p) for p in (scratch / "runs").iterdir() if p.name != "compare"]
    assert sorted(s.manifest.target["path"] for s in runs) == [f"{scratch}/a.img", f"{scratch}/b.img"]


def test_a_device_on_a_host_reached_through_fio_alone_runs_at_its_given_size(scratch, loop_device):
    # a host's device was read on this machine, and ?size= (which such a host needs, nothing
    # there being able to say the device's size) was refused: "a block device takes no options"
    with fio_hosts(2) as hosts:
        spec = f"{loop_device}?size=16MiB"
        args = ("run", "latency", *QUICK, "--max-rounds", "1", "--purge", "none", UNCHECKED, "-t", spec)
        r = iolab(*args, "--hosts", ",".join(a for _, a in hosts), "--runs-dir", str(scratch / "runs"), timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        store = RunStore.open(run_dir(r.stdout))
        assert store.manifest.target["capacity"] == 16 << 20 and store.manifest.split[0]["path"] == loop_device
        assert all(c.read_ios + c.write_ios > 0 for c in store.cells())
        # The latency cells' one outstanding IO runs on the first host alone, and the run says
        # so where it said the IO was split over both hosts; the hosts' checks are named too
        # (the note read "where each host's target was checked: " and ended there).
        first, second = (f"{a}:8765" for _, a in hosts)
        notes = " ".join(" ".join(store.manifest.notes).split())
        assert f"main, 100/0 4KiB: ran on 1 of its 2 legs ({first}): its 1 outstanding IO cannot" in notes
        assert f"{second} ran none of its IO" in notes
        assert f"target was checked: {first}: nowhere (reached through fio's server only" in notes
        for c in store.cells():
            parts = [p.name for p in breakdown(c.counters)]
            assert parts == ([first] if c.kind == "measure" else [first, second])


def test_several_targets_keep_each_runs_error_paragraph_on_stderr(scratch):
    # the children's stderr was merged into their stdout, so a refused run's paragraph came out
    # on stdout among the data (run directories) a script reads there
    good, bad = f"file:{scratch}/a.img?size=32MiB", f"file:{scratch}/no-such-dir/b.img?size=32MiB"
    args = ["run", "latency", "--quick", "--cell-time", "200ms", "--max-rounds", "1", "--no-report"]
    r = iolab(*args, "-t", good, "-t", bad, "--runs-dir", str(scratch / "runs"), timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr
    err = " ".join(r.stderr.split())
    assert f"[{bad}] iolab: target {bad!r}: directory {scratch}/no-such-dir does not exist" in err, r.stderr
    assert f"runs that did not finish: {bad} (exit 2)" in err, r.stderr
    assert "no-such-dir" not in r.stdout and f"[{good}] run directory:" in r.stdout, r.stdout


def _running_children(runs: Path, n: int, coordinator: subprocess.Popen) -> dict[Path, int]:
    """Each run directory of the n runs, once every one is running, with the pid of the run
    writing it (its claim's record): waits on the runs' own state, not on time."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        assert coordinator.poll() is None, "the runs ended before the test stopped them"
        found = {}
        for r in list_runs(runs) if runs.exists() else []:
            try:
                pid = json.loads((r.path / "writer.lock").read_text())["pid"]
            except (OSError, ValueError, KeyError):
                continue  # claimed, its record not written yet
            if r.state == "running":
                found[r.path] = pid
        if len(found) == n:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{n} runs were not all running within 300 s")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def _sigterm_once_running(argv: list[str], runs: Path, n: int) -> tuple[str, str, dict[Path, int]]:
    """Start `iolab ARGV` (its SIGINT/SIGTERM at their defaults), SIGTERM it once its `n` runs are
    running, and hand back its stdout, its stderr and the runs it had, each with its writer's pid;
    fails if it did not exit 143 or a run's process outlived it (killed then, never left behind)."""
    parent = subprocess.Popen(
        [*IOLAB, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals
    )
    children: dict[Path, int] = {}
    try:
        children = _running_children(runs, n, parent)
        parent.send_signal(signal.SIGTERM)
        out, err = parent.communicate(timeout=300)
        assert parent.returncode == 143, out + err
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        left = [pid for pid in children.values() if _alive(pid)]
        for pid in left:  # never leave a run behind, even when the test fails
            os.kill(pid, signal.SIGKILL)
    assert left == [], "runs went on after the process that started them ended"
    for d in children:
        m = RunStore.open(d).manifest
        assert m.state == "interrupted" and "stopped by SIGTERM" in (m.error or ""), (d, m.state, m.error)
        assert not (d / "writer.lock").exists()  # each released its claim as it ended
    assert "Traceback" not in out + err
    return out, err, children


def test_sigterm_to_several_targets_stops_every_run_each_marked_interrupted(scratch):
    # the process running several --target died of SIGTERM at once (143), and its runs went on
    # writing their targets with no one to stop them
    runs = scratch / "runs"
    specs = [f"file:{scratch}/{n}.img?size=32MiB" for n in "ab"]
    # 25 rounds of 9 one-second cells: fio's time-based cells outlast the wait for both to run
    args = ["run", "latency", "--quick", "--max-rounds", "25", "--no-report", "--runs-dir", str(runs)]
    _, err, _ = _sigterm_once_running([*args, *(a for s in specs for a in ("-t", s))], runs, len(specs))
    assert "runs that did not finish" in err


def test_sigterm_to_run_repeat_stops_the_repeat_under_way_and_starts_no_other(scratch):
    # `iolab run --repeat N` died of SIGTERM at once and its repeat went on writing the target
    runs = scratch / "runs"
    args = ["run", "latency", "--quick", "--max-rounds", "25", "--no-report", "--runs-dir", str(runs)]
    out, err, children = _sigterm_once_running(
        [*args, "--repeat", "3", "-t", f"file:{scratch}/r.img?size=32MiB"], runs, 1
    )
    assert [p for p in runs.iterdir() if p.is_dir()] == list(children), "a repeat started after the stop"
    # the stop is an error, told on standard error: stdout holds the data only
    assert "repeat 1 of 3 ended with exit code 143" in " ".join(err.split()) and "exit code" not in out


def test_several_targets_are_compared_however_long_the_runs_directory_on_a_narrow_console(scratch):
    # at 80 columns the child's "run directory: ..." line wrapped and the parent, which parsed it,
    # compared PosixPath('.'): exit 2 after both runs had completed
    root = scratch / "a-runs-directory-whose-path-is-longer-than-the-eighty-columns-of-the-console" / "runs"
    a, b = "sim:enterprise-sas", "sim:enterprise-sas?t_prog_us=2300"
    args = ("run", "latency", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report")
    env = dict(os.environ, COLUMNS="80", IOLAB_RUNS=str(root))
    r = subprocess.run([*IOLAB, *args, "-t", a, "-t", b], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    compared = subprocess.run([*IOLAB, *printed_compare(r.stdout)], capture_output=True, text=True, env=env)
    assert compared.returncode == 0, compared.stdout + compared.stderr
    [html] = [p for p in (root / "compare").iterdir() if p.suffix == ".html"]
    runs = sorted(p for p in root.iterdir() if p.name != "compare")
    assert len(runs) == 2 and all(p.name in html.read_text() for p in runs)
    # and a person reads each run directory whole, to copy it
    assert {ln.split("run directory: ", 1)[1] for ln in r.stdout.splitlines() if "] run directory: " in ln} == {
        str(p) for p in runs
    }


def test_several_targets_lines_fit_the_terminal_they_are_printed_on(scratch):
    # each line prefixed "[sim:enterprise-sas?user_gb=0.25&seed=1] " ran 300 characters wide on an
    # 80-column terminal, which wrapped it under the other run's lines
    a, b = (f"sim:enterprise-sas?user_gb=0.25&seed={n}" for n in (1, 2))
    args = ("run", "latency", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report")
    shown = on_a_terminal([*IOLAB, *args, "-t", a, "-t", b, "--runs-dir", str(scratch / "runs")], 80)
    lines = shown.splitlines()
    # the one line that is not a run's: the compare command, whole to be copied
    assert all(len(ln) <= 80 for ln in lines if not ln.startswith("comparison not written")), shown
    # prefixes that would take a quarter of the width are numbered, with a legend
    assert f"[1] is --target {a}" in lines and f"[2] is --target {b}" in lines, shown
    assert any(ln.startswith("[1] ") and "main: round 1 done" in ln for ln in lines), shown
    assert any(ln.startswith("[2] ") and "main: round 1 done" in ln for ln in lines), shown
    assert any(ln.startswith("    ") for ln in lines), shown  # a long line's tail, folded under its prefix


def printed_compare(stdout: str) -> list[str]:
    """The `iolab compare ...` command several --target with --no-report print (without 'iolab')."""
    [line] = [ln for ln in stdout.splitlines() if ln.startswith("comparison not written (--no-report)")]
    return shlex.split(line.split("to write it: ", 1)[1])[1:]


def test_several_targets_with_no_report_and_quiet_write_no_comparison_and_print_no_pages(scratch):
    # --no-report wrote the comparison (HTML and PDF) all the same, and -q printed its
    # "writing report ...: page N of M" lines
    runs = scratch / "runs"
    a, b = (f"sim:enterprise-sas?user_gb=0.25&seed={n}" for n in (1, 2))
    # one round of short cells: what is checked is what is written and printed, not the figures
    short = ("--cell-time", "100ms", "--max-rounds", "1")
    r = iolab("run", "latency", "--quick", *short, "-t", a, "-t", b, "--no-report", "-q", "--runs-dir", str(runs))
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (runs / "compare").exists()
    assert "comparison: " not in r.stdout
    assert printed_compare(r.stdout)[:3] == ["compare", "--runs-dir", str(runs)]
    # with the report, -q still silences the comparison's page-by-page progress
    r = iolab("run", "latency", "--quick", *short, "-t", a, "-t", b, "-q", "--runs-dir", str(runs))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "writing report" not in r.stdout + r.stderr
    assert [p.suffix for p in sorted((runs / "compare").iterdir())] == [".html", ".pdf"]


def test_the_run_directories_channel_writes_no_file_iolab_did_not_write(scratch):
    # IOLAB_RUN_DIRS_FILE comes from the environment: a file of the user's it names is not appended to
    precious = scratch / "notes.txt"
    precious.write_text("the user's own notes\n")
    args = ("run", "latency", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report")
    env = dict(os.environ, IOLAB_RUNS=str(scratch / "runs"), IOLAB_RUN_DIRS_FILE=str(precious))
    r = subprocess.run([*IOLAB, *args], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode != 0 and "Refusing to write" in r.stdout + r.stderr and "Traceback" not in r.stderr
    assert precious.read_text() == "the user's own notes\n"


def test_a_server_iolab_starts_is_bound_to_the_given_address_and_stopped_at_the_end():
    import socket

    from iolab.engines.fio_job import fio_version as _fio_version
    from iolab.engines.hosts import answers, check_versions, start_servers

    with socket.socket() as s:
        s.bind(("127.0.0.9", 0))
        port = s.getsockname()[1]
    h = Host("127.0.0.9", port)
    servers = start_servers([h])
    try:
        assert servers.endpoints == {h.name: ("127.0.0.9", port)} and servers.started
        assert answers("127.0.0.9", port) and not answers("127.0.0.1", port)  # not every address
        check_versions([h], servers, _fio_version("fio"))
    finally:
        servers.close()
    deadline = time.monotonic() + 10
    while answers("127.0.0.9", port, timeout=0.2) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not answers("127.0.0.9", port)


def test_a_killed_run_over_two_paths_resumes_over_the_same_paths(scratch, loop_device, second_path):
    from iolab.api.runlist import list_runs

    from .conftest import killed_at

    runs = scratch / "runs"
    killed_at(
        [
            "run",
            "throughput",
            "--quick",
            # 200 ms cells, as the other runs over two paths: the kill point is a cell's job file,
            # written as the cell starts, and each resumed cell still has its IOs split over both
            "--cell-time",
            "200ms",
            "--max-rounds",
            "3",
            "--no-report",
            "--target",
            loop_device,
            "--paths",
            f"{loop_device},{second_path}",
            "--runs-dir",
            str(runs),
        ],
        runs,
        "*/raw/SEQ_1024KiB-r02-c01-*.p1.fio",
    )
    [killed] = list_runs(runs)
    assert killed.state == "interrupted"
    r = iolab("resume", str(killed.path), "--no-report", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "continues at round 2" in r.stdout
    store = RunStore.open(killed.path)
    assert store.manifest.state == "complete"
    cells = store.cells()
    assert {c.round for c in store.cells("SEQ 1024KiB")} == {1, 2, 3} and len(cells) == 12
    for c in cells:  # the resumed rounds are split over both paths too, not run on the target alone
        parts = breakdown(c.counters)
        assert [p.name for p in parts] == [loop_device, second_path], (c.round, c.cell_key)
        assert sum(p.figures["ios"] for p in parts) == c.read_ios + c.write_ios


def test_fio_job_prints_each_hosts_job_file(scratch):
    f = scratch / "hosts.toml"
    f.write_text(
        '[[host]]\naddress = "192.0.2.1"\ntarget = "/data/a.img"\nshare = 3\n\n'
        '[[host]]\naddress = "198.51.100.2"\nport = 8766\ntarget = "/data/b.img"\n'
    )
    r = iolab(
        "fio-job", "latency", "--quick", "-t", f"file:{scratch}/x.img?size=16MiB", "--hosts-file", str(f), timeout=60
    )
    assert r.returncode == 0, r.stderr
    blocks = r.stdout.split("; ===== leg ")[1:]
    tag = next(b.split("(", 1)[1].split(".p1.fio")[0] for b in blocks if b.startswith("1:"))  # a cell both hosts run
    legs = [b for b in blocks if f"({tag}." in b.split("\n", 1)[0]]
    assert [b.split(":", 1)[0] for b in legs] == ["0", "1"]
    assert "(PORT relays to 192.0.2.1,8765)" in legs[0] and "filename=/data/a.img" in legs[0]
    assert "(PORT relays to 198.51.100.2,8766)" in legs[1] and "filename=/data/b.img" in legs[1]
    assert not (scratch / "x.img").exists()  # printing connects to nothing and creates nothing


def test_a_plan_that_idles_the_drive_runs_over_two_paths(scratch, loop_device, second_path):
    """Host Idle Recovery idles the drive before each burst: over two paths to one drive it is
    that drive's idle (as on one path), not a traceback."""
    target = loop_device
    r = iolab(
        "run",
        "hir",
        "--quick",
        "--cell-time",
        "200ms",
        "--no-report",
        "--target",
        target,
        "--paths",
        f"{target},{second_path}",
        "--set",
        "bursts=1",
        "--set",
        "wait_states=0.1",
        "--set",
        "baseline_time=0.2",
        "--set",
        "pc_round_intervals=1",
        "--runs-dir",
        str(scratch / "runs"),
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    store = RunStore.open(run_dir(r.stdout))
    try:
        assert store.manifest.state == "complete"
        assert [c.idle_before_s for c in store.cells() if c.idle_before_s] == [0.1]
    finally:
        store.close()
