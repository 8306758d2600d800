"""`iolab run` across several fio job targets: `--paths` (several paths to one drive),
`--hosts`/`--hosts-file` (several load-generating hosts), and several `--target`s (several
drives in parallel, one run each, then their comparison report)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from iolab.core.errors import IolabError

if TYPE_CHECKING:  # imported where used: the command line imports this module for `iolab watch`
    from iolab.engines import Engine
    from iolab.targets import Target

TARGET_FLAGS = ("--target", "-t")

# run_many's children name each run directory they complete in the file this variable names (one
# JSON string a line): a machine channel. The printed "run directory: ..." line is for people, and
# a terminal's width wraps it (a long runs directory was then read as the path '.').
RUN_DIRS_ENV = "IOLAB_RUN_DIRS_FILE"


def run_dirs_file() -> Path | None:
    """The file this process, a child of run_many, names its run directories in (None: not such a
    child). Taken out of the environment, so that no process it starts writes there too."""
    given = os.environ.pop(RUN_DIRS_ENV, None)
    return Path(given) if given else None


def tell_run_dir(told: Path, run_dir: Path) -> None:
    from iolab.targets.writepolicy import output_file

    # the path comes from the environment: written as every path iolab writes, under the policy
    with (
        output_file(told, "list of run directories for several --target", keep=True) as path,
        path.open("a", encoding="utf-8") as f,
    ):
        f.write(json.dumps(str(run_dir)) + "\n")


def _told_run_dirs(told: Path) -> list[Path]:
    """Every run directory a child named, in order: one per test of a sequence it completed."""
    try:
        lines = told.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    return [Path(json.loads(line)) for line in lines if line]


def _compare_runs(dirs: list[Path], root: Path, console, report: bool = True, quiet: bool = False) -> None:
    """Compare each test across the targets that completed it (a sequence is several tests: its
    IOPS runs with each other, its Throughput runs with each other, ...), then, when the tests are
    one sequence that declares summary figures (RWSW), the sequence's summary comparison.
    `report`: False (--no-report) writes none and prints the command that would; `quiet`
    (--quiet): no page-by-page lines while writing, as a single run's report."""
    import shlex

    from iolab.api import comparisons as api
    from iolab.api.runlist import summarise_run
    from iolab.core.streams import QUIET_PROGRESS
    from iolab.pages.textreport import render_ranking

    by_test: dict[str, list[Path]] = {}
    for d in dirs:
        by_test.setdefault(summarise_run(d).test, []).append(d)
    groups = [runs for runs in by_test.values() if len(runs) > 1]
    if len(groups) > 1 and api.summary_sequence(set(by_test)) is not None:
        groups.append([d for runs in groups for d in runs])
    for runs in groups:
        if not report:
            command = shlex.join(["iolab", "compare", "--runs-dir", str(root), *map(str, runs)])
            console.print(f"comparison not written (--no-report); to write it: {command}", markup=False, soft_wrap=True)
            continue
        was, QUIET_PROGRESS["on"] = QUIET_PROGRESS["on"], QUIET_PROGRESS["on"] or quiet
        try:
            compared = api.compare(runs, root / "compare", force=True)
        finally:
            QUIET_PROGRESS["on"] = was
        if compared.summary is not None:
            render_ranking(compared.summary, console)
        for p in compared.paths:
            console.print(f"comparison: {p}", markup=False, soft_wrap=True)


def run_target(spec: str, hosts: str | None, hosts_file: Path | None) -> Target:
    """-t as the run reaches it: with --hosts/--hosts-file, as each host's fio reaches it
    (an NBD URI's size asked on that host, never here: engines/hosttargets.py)."""
    from iolab import targets

    if not (hosts or hosts_file):
        return targets.parse_target(spec)
    from iolab.engines.hostlist import load_hosts_file, parse_hosts
    from iolab.engines.hosttargets import parse_on_hosts

    return parse_on_hosts(spec, parse_hosts(hosts) if hosts else load_hosts_file(hosts_file))  # type: ignore[arg-type]


def legs_for_run(tgt: Target, paths: str | None, hosts: str | None, hosts_file: Path | None) -> tuple[list, str] | None:
    """The legs `--paths`/`--hosts`/`--hosts-file` ask for and the option that named them (None:
    no split). Nothing is checked or connected yet (`iolab fio-job` only prints their jobs)."""
    given = [n for n, v in (("--paths", paths), ("--hosts", hosts), ("--hosts-file", hosts_file)) if v]
    if len(given) > 1:
        raise IolabError(
            f"{' and '.join(given)}: give one way to split the IO (paths to one drive, or hosts), not both."
        )
    if not given:
        return None
    from iolab import targets
    from iolab.engines.fio import FioEngine
    from iolab.engines.fio_hosts import host_legs, path_legs
    from iolab.engines.hostlist import load_hosts_file, parse_hosts

    legs = [targets.parse_target(p.strip()) for p in paths.split(",") if p.strip()] if paths else []
    if tgt.kind == "sim" and paths:  # the ports of one simulated drive, split in the simulator
        from iolab.engines.sim_paths import sim_paths

        return sim_paths(tgt, legs, paths), given[0]
    if tgt.kind not in FioEngine.capabilities.drives:  # the split runs fio on every path or host
        raise IolabError(
            f"{given[0]}: splitting a round needs a fio target (a device, file or NBD export)"
            + (" or --paths into a simulated drive" if tgt.kind == "sim" else "")
            + f", not {tgt.spec}."
        )
    if paths:
        if len(legs) < 2 or tgt.path not in {p.path for p in legs}:
            raise IolabError(
                f"--paths {paths}: give two or more paths to the drive, including the --target ({tgt.path})."
            )
        real = [os.path.realpath(p.path) for p in legs]
        twice = sorted({p.path for p, r in zip(legs, real) if real.count(r) > 1})
        if twice:
            raise IolabError(
                f"--paths {paths}: {' and '.join(twice)} name the same path; each path is a port of its own "
                "into the drive (e.g. /dev/nvme0n1,/dev/nvme1n1 for the two controllers of one namespace)."
            )
        return path_legs(tgt, legs), given[0]
    return host_legs(tgt, parse_hosts(hosts) if hosts else load_hosts_file(hosts_file)), given[0]  # type: ignore[arg-type]


def engine_for_run(
    tgt: Target,
    paths: str | None,
    hosts: str | None,
    hosts_file: Path | None,
    stall_s: float | None,
    allow_unsafe: bool = False,
    allow_system_disk: bool = False,
    listen_any: bool = False,
    ioengine: str | None = None,
) -> Engine:
    """The engine for `iolab run`: the target's own, or one that splits each round's
    outstanding IO over several paths or hosts. `ioengine`: `--ioengine` (None: not given)."""
    from iolab.engines import engine_for

    split = legs_for_run(tgt, paths, hosts, hosts_file)
    if split is None:
        return engine_for(tgt, stall_timeout=stall_s, ioengine=ioengine)
    if tgt.kind == "sim":
        from iolab.engines.sim_paths import SimPathsEngine

        return SimPathsEngine(split[0])
    from iolab.engines.fio_hosts import split_engine

    return split_engine(tgt, split[0], stall_s, allow_unsafe, allow_system_disk, listen_any, ioengine or "auto")


def _refuse_one_target_twice(specs: list[str], hosts: list | None = None) -> None:
    """One drive or file named twice (the same spec, a symlink or hard link to it, `//dev/sdb`, a
    second device node of one device) would start two runs on it: the first runs to its end and
    the second is refused by its lock, after the first's whole run. Said before anything starts,
    by what each target is (the fleet's identity: WWID or serial, device number, inode), read
    where it is: with `hosts` (--hosts/--hosts-file), where each host's fio opens it
    (fleetident.on_host), never on this machine, whose node of that name is another drive.
    A simulated drive is its preset, parameters and seed, however the spec writes them: the same
    one twice would be one drive's figures twice, compared as two drives (a fleet refuses it too)."""
    from iolab import targets
    from iolab.api.fleetident import on_host
    from iolab.run.identity import drive_key

    seen: dict[str, tuple[int, str]] = {}  # a drive's key -> the --target (its place, its spec) that reaches it
    for i, spec in enumerate(specs):
        keys: list[tuple[str | None, str]] = []
        for h in hosts or [None]:
            try:
                if h is not None:
                    keys.append((on_host(spec, h), f", where host {h.name} opens it"))
                    continue
                t = targets.parse_target(spec)
                keys.append((drive_key(t), ""))
            except IolabError:  # its own run says what is wrong with it, beside the others' outcomes
                continue
        for key, where in keys:
            # one --target's drive through several hosts is one; by place, not spec: -t F -t F is two
            if key is None or seen.setdefault(key, (i, spec))[0] == i:
                continue
            if key.startswith("simulated "):
                raise IolabError(
                    f"--target {seen[key][1]} and --target {spec} are one simulated drive (one preset, parameters "
                    "and seed, however the spec writes them), and a simulation of it gives the same figures each "
                    "time, so the two would be compared as two drives that agree. Give each simulated drive its own "
                    "seed (?seed=N). Nothing was run or written."
                )
            raise IolabError(
                f"--target {seen[key][1]} and --target {spec} are one drive: both reach the {key}{where} (a "
                "symlink, a hard link, a second device node or another address of one NBD server is another "
                "name of one drive). Two runs on one drive would measure neither: give each drive once. "
                "Nothing was run or written."
            )


def run_many(
    target_specs: list[str],
    argv: list[str],
    root: Path,
    console,
    hosts: str | None = None,
    hosts_file: Path | None = None,
    *,
    report: bool = True,
    quiet: bool = False,
) -> int:
    """Several drives at once: one `iolab run` per target, started together, each with the
    same arguments; their output is printed prefixed with the target; then the comparison
    report of the runs that finished. Returns the exit status (0: every run finished).
    `hosts`, `hosts_file`: --hosts, --hosts-file (each run's targets are on those hosts);
    `report`, `quiet`: --report/--no-report and --quiet, for the comparison too."""
    listed = None
    if hosts or hosts_file:
        from iolab.engines.hostlist import load_hosts_file, parse_hosts

        listed = parse_hosts(hosts) if hosts else load_hosts_file(hosts_file)  # type: ignore[arg-type]
    _refuse_one_target_twice(target_specs, listed)
    base = _without_targets(argv)
    with tempfile.TemporaryDirectory(prefix="iolab-run-many-") as told:
        return _run_many(target_specs, base, root, console, Path(told), (report, quiet))


def _run_many(
    target_specs: list[str], base: list[str], root: Path, console, told: Path, report_quiet: tuple[bool, bool]
) -> int:
    from iolab.api.prefixlines import PrefixedLines
    from iolab.core.stopdefer import CHILD_MAIN
    from iolab.run.stopsignals import stop_on_signals

    procs: list[tuple[str, subprocess.Popen]] = []
    lock = threading.Lock()
    out = PrefixedLines(target_specs, console.width if console.is_terminal else None)
    err_out = PrefixedLines(target_specs, shutil.get_terminal_size().columns if sys.stderr.isatty() else None)
    rooms = [r for r in (out.room, err_out.room) if r]
    # a child writes to a pipe: told the room beside its prefix, it wraps its paragraphs to fit
    child_env = dict(os.environ, **({"COLUMNS": str(min(rooms))} if rooms else {}))

    def say(lines: list[str], err: bool) -> None:
        for text in lines:
            if err:
                print(text, file=sys.stderr, flush=True)
            else:
                console.print(text, markup=False, highlight=False, soft_wrap=True)

    def pump(i: int, stream, err: bool) -> None:
        # Each child's stream to this process's own: its data (run directories, tables) to
        # stdout, its error paragraph and warnings to stderr, where a script reading stdout
        # does not take them for data.
        for line in stream:
            with lock:
                say((err_out if err else out).lines(i, line.rstrip("\n")), err)

    say(err_out.legend() or out.legend(), bool(err_out.legend()))

    def start(i: int, spec: str) -> list[threading.Thread]:
        # main(), not app(): a child's error comes out as its one paragraph and exit code.
        # Its own process group: a terminal's Ctrl-C reaches this process alone, which
        # passes it on once (a second SIGINT would cut the child's own stopping short).
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD_MAIN, *base, "--target", spec],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(child_env, **{RUN_DIRS_ENV: str(told / f"{i}.json")}),
            process_group=0,
        )
        procs.append((spec, proc))
        pairs = ((proc.stdout, False), (proc.stderr, True))
        readers = [threading.Thread(target=pump, args=(i, s, err), daemon=True) for s, err in pairs]
        for t in readers:
            t.start()
        return readers

    stop = ChildStop(procs)
    # SIGTERM, SIGHUP and Ctrl-C stop the runs rather than this process alone: each child is
    # told (stop.forward), and this process waits for every one to record its interruption
    with stop_on_signals():
        stop.start_and_wait([partial(start, i, spec) for i, spec in enumerate(target_specs)])
    failed = [f"{spec} (exit {p.returncode})" for spec, p in procs if p.returncode != 0]
    if failed:
        print(f"runs that did not finish: {', '.join(failed)}", file=sys.stderr, flush=True)
    done = [d for i, (_s, p) in enumerate(procs) if p.returncode == 0 for d in _told_run_dirs(told / f"{i}.json")]
    _compare_runs(done, root, console, *report_quiet)
    # The first failed run's own status (3: a safety refusal, 2: bad input, ...); a run killed
    # by a signal as a shell reports it (128 + the signal).
    rc = next((p.returncode for _, p in procs if p.returncode != 0), 0)
    return stop.code if stop.code is not None else rc if rc >= 0 else 128 - rc


class ChildStop:
    """A stop signal to the process that runs several --target (or --repeat): passed once to every run still
    going, whose own handling stops fio and marks its run interrupted; the exit code is the
    signal's (143 for SIGTERM, 130 for Ctrl-C) once all have ended."""

    def __init__(self, procs: list[tuple[str, subprocess.Popen]]):
        self.procs = procs
        self.code: int | None = None
        self.came: list[KeyboardInterrupt] = []  # stops taken in, to be passed on in start_and_wait

    def forward(self, e: KeyboardInterrupt) -> None:
        import signal

        from iolab.run.stopsignals import Interrupted, acted_on, exit_code

        acted_on()
        if self.code is not None:
            return  # told once: a second signal would cut the runs' own stopping short
        self.code = exit_code(e)
        signum = e.signum if isinstance(e, Interrupted) else signal.SIGINT
        for _spec, proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signum)

    def start_and_wait(self, starts: Sequence[Callable[[], list[threading.Thread]]]) -> None:
        """Start each child (`starts`, in order, each giving the readers of its output), then wait
        for every child and reader, whatever stop signals arrive: each is passed on (forward) once
        the children started so far are in `procs`. A child is started under a held stop with the
        stop signals blocked (stops_blocked, until it can take them): a run started is a run told
        of a stop, and none is started once one came. Every step is inside the one try that takes
        a stop, the loop's jump back too: outside it (an except clause, then the try that waited),
        a stop went out of the command with the runs it had started untold, running to their end."""
        from iolab.core.stopdefer import stops_blocked
        from iolab.run.stopsignals import held_stop

        readers: list[threading.Thread] = []
        started = done = 0
        while True:
            try:
                while True:
                    while self.came:
                        self.forward(self.came.pop(0))
                    if started < len(starts) and self.code is None:
                        with held_stop() as held, stops_blocked():
                            readers += starts[started]()
                            started += 1
                        held.release()
                        continue
                    waits: list[subprocess.Popen | threading.Thread] = [p for _, p in self.procs] + readers
                    if done == len(waits):
                        return
                    self.wait(waits[done])
                    done += 1
            except KeyboardInterrupt as e:
                self.came.append(e)

    def wait(self, what: subprocess.Popen | threading.Thread) -> None:
        """Wait for a child, or a reader of its output, to end (a stop meanwhile is raised, for
        start_and_wait's try to take)."""
        if isinstance(what, subprocess.Popen):
            what.wait()
        else:
            what.join()


def _without_targets(argv: list[str]) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in TARGET_FLAGS:
            skip = True
        elif not any(a.startswith(f + "=") for f in TARGET_FLAGS if f.startswith("--")):
            out.append(a)
    return out


def watch(
    runs_dir: Path | None = typer.Argument(
        None, metavar="RUNS_DIR", help="Runs directory (default ./runs or $IOLAB_RUNS)."
    ),
    bind: str = typer.Option(
        "127.0.0.1",
        "--bind",
        metavar="ADDRESS",
        help="Address to serve on. The page shows run details to whoever reaches it.",
    ),
    port: int = typer.Option(8737, "--port", help="TCP port (0: any free port)."),
):
    """Serve a live web page of running and finished runs (read-only; Ctrl-C stops it, exit status 130 as for every command)."""
    from iolab.api.watch import serve
    from iolab.core.streams import write_text
    from iolab.store.manifest import runs_root

    server = serve(runs_dir or runs_root(), bind, port)
    host, bound = server.socket.getsockname()[:2]
    # a reader gone (`iolab watch | head -1`) drops the line, as every command's output: Rich's
    # own console ended the command with exit status 1 on the broken pipe
    # A wildcard bind is no address to open: the page refuses the Host 0.0.0.0 (it admits only the
    # address a client reached), so the URL printed was the one URL that answered 421.
    wildcard = host in ("0.0.0.0", "::")
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    url_host = f"[{shown}]" if ":" in shown else shown  # an IPv6 address in a URL (RFC 3986)
    elsewhere = f"; from another machine, this machine's address at port {bound}" if wildcard else ""
    write_text(f"iolab watch: http://{url_host}:{bound}/ (Ctrl-C stops{elsewhere})\n", sys.stdout)
    # Ctrl-C ends the server as it ends every command (docs/automation.md: exit status 130), with
    # nothing said: it is how a watch is ended, not a command cut short. It was swallowed here
    # (exit 0), against the one documented rule.
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    finally:
        server.server_close()
