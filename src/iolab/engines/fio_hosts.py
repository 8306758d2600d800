"""Split rounds: one workload's outstanding IO spread over several fio job targets that run at
the same time, either several paths to one drive on this machine (`--paths`), or several
hosts (`--hosts`, `--hosts-file`) driven through fio's client/server mode. Both are one
mechanism: `merge.split_workload` gives each leg its share, each leg's fio output is parsed
as fio's own, and `merge.merge` adds them up exactly (summed json+ bins for percentiles)
keeping each leg's figures for the report's breakdown page.

Local legs run one fio process each (the single-drive engine, with its watchdog and Ctrl-C
handling); host legs run in one `fio --client=H1 job1 --client=H2 job2 ...` invocation
(fio_client.py)."""

from __future__ import annotations

import os
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from iolab.core.errors import EngineError, IolabError
from iolab.core.results import RoundResult
from iolab.core.units import counted
from iolab.core.workload import Workload
from iolab.engines.capabilities import Capabilities
from iolab.engines.fio import FioEngine, refuse_existing
from iolab.engines.fio_client import client_parts, run_clients, time_limit
from iolab.engines.fio_job import HOST_CLOCK_NOTE, WARMUP_SUFFIX, build_job, client_clock, separate_warmup
from iolab.engines.fio_job import fio_version as _fio_version
from iolab.engines.fio_supervise import _job_processes
from iolab.engines.fioprobe import budget
from iolab.engines.hostcheck import check_split_legs, create_over_ssh
from iolab.engines.hostholds import NbdHold, RemoteHold
from iolab.engines.hostlist import Host
from iolab.engines.hosts import (
    Servers,
    check_versions,
    read_identity_over_ssh,
    server_arg,
    ssh_runner,
    start_servers,
)
from iolab.engines.hosttargets import leg_write_cache, legs_unheld_cache
from iolab.engines.merge import Part, merge, split_workload
from iolab.targets import PurgeOutcome, Target, parse_target, unheld_write_cache
from iolab.targets.spec import nbd_uri
from iolab.targets.wear import phase_writes, read_counters


@dataclass(frozen=True)
class Leg:
    name: str  # device path or host address:port, as the report shows it
    target: Target  # what this leg's fio opens
    share: float = 1.0
    host: Host | None = None


# What a hosts run with a host of another machine does for a purge (and `iolab plan` says it will).
NOT_PURGED = "the targets are on other hosts; iolab does not purge them (purge each host's target before the run)"
# the purge's outcome then: no method, not ok (the run records "purge failed (none)", and plan says so)
NOT_PURGED_OUTCOME = PurgeOutcome("none", False, NOT_PURGED)


def path_legs(target: Target, paths: list[Target]) -> list[Leg]:
    """`--paths`: every path to the drive gets an equal share."""
    return [Leg(p.path, p) for p in paths]


def host_legs(target: Target, hosts: list[Host]) -> list[Leg]:
    return [
        Leg(h.name, replace(target, path=_own_path(target, h.target)) if h.target else target, h.share, h)
        for h in hosts
    ]


def _own_path(target: Target, own: str) -> str:
    """A host's own path as its fio opens it: an export's URI written as parse_nbd writes one (the
    port given, its ?size= read by hosttargets, not handed to fio's nbd engine)."""
    return nbd_uri(own) if target.kind == "nbd" and own.startswith("nbd") else own


def legs_from_manifest(target: Target, split: list[dict]) -> list[Leg]:
    """The legs a run stored in its manifest (`SplitFioEngine.split`), for `iolab resume`."""
    try:
        if all(leg.get("host") for leg in split):
            return [
                replace(leg, share=float(s["share"]))
                for leg, s in zip(host_legs(target, [Host(**s["host"]) for s in split]), split)
            ]
        return [
            Leg(
                s["name"],
                target
                if s["path"] == target.path
                else parse_target(s["path"])
                if target.kind == "block"
                else replace(target, path=s["path"]),
                float(s["share"]),
            )
            for s in split
        ]
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise IolabError(
            f"the run's stored split {str(split)[:200]} is not one this iolab can rebuild ({e}); "
            "start a new run with the same --paths/--hosts/--hosts-file."
        ) from None


def split_engine(
    target: Target,
    legs: list[Leg],
    stall_s: float | None = None,
    allow_unsafe: bool = False,
    allow_system_disk: bool = False,
    listen_any: bool = False,
    ioengine: str = "auto",
) -> SplitFioEngine:
    """Check every leg as a run must (each extra path like the target; each host's target
    where that host writes it, see hostcheck), then start or reach the fio servers."""
    claims, local, overridden, how = check_split_legs(target, legs, allow_unsafe, allow_system_disk, listen_any)
    if legs[0].host is None:
        return SplitFioEngine(legs, stall_timeout=stall_s, ioengine=ioengine)
    try:
        engine = SplitFioEngine(legs, stall_timeout=stall_s, ioengine=ioengine)
    except BaseException:
        for c in claims:
            c.release()
        raise
    engine.claims, engine.local_targets, engine.safety_overrides = claims, local, overridden
    # where the target facts are read depends on which hosts are this machine's (known only now)
    engine.notes = (*engine.notes, engine.where_read(), "where each host's target was checked: " + "; ".join(how))
    return engine


class SplitFioEngine:
    """The fio engine over several legs; to the runner it is one engine on one target."""

    name = "fio"

    def __init__(self, legs: list[Leg], fio: str = "fio", stall_timeout: float | None = None, ioengine: str = "auto"):
        """`ioengine`: fio's IO engine for paths on this machine; a host's comes from its host entry."""
        if len(legs) < 1 or (any(leg.host for leg in legs) and not all(leg.host for leg in legs)):
            raise EngineError("a split round needs legs that are all local paths or all hosts.")
        self.legs = legs
        self.fio = fio
        self.single = FioEngine(fio, stall_timeout, ioengine)
        self.stall_timeout = stall_timeout
        self.servers: Servers | None = None
        self.claims: list = []  # this machine's paths that host legs write, held until close
        self.holds: list[RemoteHold] = []  # the ssh hosts' targets, locked there until close
        self.local_targets: dict[str, Target] = {}  # leg name -> its target as checked here
        self.safety_overrides: list[str] = []
        self._run_noted = False
        self.host_clocks: dict[str, str | None] = {}  # host name -> the clock its server chose itself
        probed: list[str] = []
        if legs[0].host is not None:
            hosts = [leg.host for leg in legs if leg.host]
            budget()  # a bad IOLAB_FIO_PROBE_TIMEOUT is refused before any server is started
            self.servers = start_servers(hosts, fio)
            try:
                probed, self.host_clocks = check_versions(hosts, self.servers, self.version(), fio)
            except BaseException:
                self.close()
                raise
        n = len(legs)
        kind = f"{counted(n, 'host')} (fio client/server)" if self.servers else f"{counted(n, 'path')} to one drive"
        # Printed in the report's notes: which legs measured this run and what iolab started.
        self.notes = (
            f"each round's outstanding IO is split over {kind}; results are merged exactly "
            "(rates added, percentiles from the summed latency bins): "
            + "; ".join(f"{leg.name} (share {leg.share:g}, opens {leg.target.path})" for leg in legs),
            *(f"started for this run: {s}" for s in (self.servers.started if self.servers else ())),
            *probed,
        )

    def where_read(self) -> str:
        """The report's note on where the target's facts and write counters were read."""
        if not self._elsewhere():
            return (
                "target identity, facts and the drive's write counters: read on this machine, as a local run's "
                "(every host is this machine's and writes its path)"
            )
        ssh = [leg.name for leg in self.legs if leg.host and leg.host.ssh]
        other = [leg.name for leg in self.legs if leg.host and not leg.host.ssh]
        return (
            "target identity and the drives' write counters: nothing is read on this machine (its path of the same "
            "name is not what the hosts write; the target facts shown are empty)"
            + (f"; read on each host over SSH: {', '.join(ssh)}" if ssh else "")
            + (
                f"; not read on {', '.join(other)}: reached through fio's server only, which runs jobs and reports IO "
                "statistics (give a host an `ssh` field to read them)"
                if other
                else ""
            )
        )

    def target_identity(self) -> dict:
        """Each host's target as that host sees it (ssh mode), what `iolab resume` could check."""
        return {
            "kind": "hosts",
            "hosts": {
                leg.name: {"not_read": "an NBD export: its server alone knows it, nothing on the host says what it is"}
                if leg.target.kind == "nbd"
                else read_identity_over_ssh(leg.host, leg.target.path)
                if leg.host.ssh
                else {"not_read": "no SSH access to this host"}
                for leg in self.legs
                if leg.host
            },
        }

    def here_legs(self) -> dict[str, Target]:
        """Each host's target when every host is this machine's, whose identity resume checks."""
        return dict(self.local_targets) if self.servers is not None and not self._elsewhere() else {}

    def wear_snapshot(self, record: dict, phase: str, when: str) -> list[str]:
        """record[host][phase][when]: the write counters of each ssh host's device target, read
        there. Returns notes for the report at a phase's end (what each host's drive counted)."""
        notes = []
        for leg in self.legs:
            if not (leg.host and leg.host.ssh and leg.target.path.startswith("/dev/")):
                continue
            c = read_counters(leg.target.path, ssh_runner(leg.host))
            if c is not None:
                record.setdefault(leg.name, {}).setdefault(phase, {})[when] = c.record()
            got = phase_writes(record.get(leg.name, {}).get(phase, {}))
            if when == "end":
                host_b, media_b, source = got if got else (None, None, "")
                said = (
                    f"{host_b:,} B written by the host, media writes "
                    + (f"{media_b:,} B" if media_b is not None else "not reported")
                    + f" ({source})"
                    if host_b is not None
                    else "no write counters reported"
                )
                notes.append(
                    f"{phase}: {leg.name}'s drive {leg.target.path}, counters read on that host over SSH: {said}"
                )
        return notes

    @property
    def split(self) -> list[dict]:
        """The legs as the manifest stores them (what a later `iolab resume` would rebuild)."""
        return [
            {
                "name": leg.name,
                "path": leg.target.path,
                "share": leg.share,
                "host": asdict(leg.host) if leg.host else None,
            }
            for leg in self.legs
        ]

    def _elsewhere(self) -> bool:
        """Some leg's host is another machine (a host whose address is this machine's writes a path
        of this machine, checked and claimed here: hostcheck.py)."""
        return self.servers is not None and any(leg.name not in self.local_targets for leg in self.legs)

    def _here(self) -> list[Target]:
        """The drives the legs write when all are this machine's: each distinct path once."""
        if self.servers is None or self._elsewhere():
            return [self.legs[0].target]  # --paths: every path reaches the same drive
        return list({t.path: t for t in self.local_targets.values()}.values())

    @property
    def capabilities(self) -> Capabilities:
        if self.servers is None:  # --paths: one drive of this machine, which the run's start claims
            return FioEngine.capabilities
        if not self._elsewhere():
            # fio servers of this machine: a local run's purge, idle, trim and readings of the target;
            # the paths were checked and claimed by split_engine. The write cache is left alone: the
            # runner puts back the run target's, not each host's path's.
            return replace(FioEngine.capabilities, write_cache=False, claims_targets=True)
        # fio's, except that iolab cannot idle, trim, purge or switch the cache of another host
        return replace(
            FioEngine.capabilities,
            idle=False,
            trim=False,
            purge_methods=(),
            write_cache=False,
            remote_targets=True,
            claims_targets=True,
            keeps_state=True,
        )

    def version(self) -> str:
        return _fio_version(self.fio)

    def ioengine_of(self, target: Target) -> str:
        """The fio ioengine(s) the legs' rounds use: a host's from its host entry."""
        names = [leg.host.ioengine if leg.host else self.single.ioengine_of(leg.target) for leg in self.legs]
        return ", ".join(dict.fromkeys(names))

    def prepare(self, target: Target) -> None:
        # A file target is made here (marked as iolab's, as a local run makes it) on this
        # machine or an ssh host; a host reached through fio only lets its fio create it.
        if self.servers is None:
            for leg in self.legs:
                self.single.prepare(leg.target)
            return
        for leg in self.legs:
            if leg.name in self.local_targets:
                self.single.prepare(self.local_targets[leg.name])
            elif leg.host and leg.host.ssh:
                if leg.target.kind == "file":
                    create_over_ssh(leg.host, leg.target)
                # Locked once it exists (flock would create a missing file empty and unmarked). An
                # NBD export is no path on the host: the lock files a local run there takes are held.
                if not any(h.host == leg.host and h.target.path == leg.target.path for h in self.holds):
                    hold = NbdHold if leg.target.kind == "nbd" else RemoteHold
                    self.holds.append(hold(leg.host, leg.target))

    def purge(self, target: Target, method: str) -> PurgeOutcome:
        if self._elsewhere() and method != "none":
            return NOT_PURGED_OUTCOME
        here = self._here()
        got = [self.single.purge(t, method) for t in here]
        if len(got) == 1:
            return got[0]
        return PurgeOutcome(
            "/".join(dict.fromkeys(g.method for g in got)),
            all(g.ok for g in got),
            "; ".join(f"{t.path}: {g.detail}" for t, g in zip(here, got)),
            sum(g.seconds for g in got),
        )

    def idle(self, target: Target, seconds: float) -> None:
        if self._elsewhere():  # capabilities.idle is False: the runner refuses such a plan before this
            raise EngineError("the targets are on other hosts; iolab cannot keep them idle.")
        self.single.idle(self._here()[0], seconds)  # no IO from iolab to any of them: one wait

    def set_write_cache(self, target: Target, enabled: bool) -> str:
        """A hosts run leaves each host's cache as it is and records it (hosttargets.leg_write_cache)."""
        if self.servers is None:  # --paths: one drive of this machine, set as a local run sets it
            return self.single.set_write_cache(self.legs[0].target, enabled)
        why = (
            "the targets are on other hosts"
            if self._elsewhere()
            else "a hosts run leaves each host's write cache as it is"
        )
        each = "; ".join(
            f"{leg.name}: {leg_write_cache(leg.host, self.local_targets.get(leg.name) or leg.target)}"
            for leg in self.legs
        )
        return f"not changed: {why}; each host's: {each}"

    def unheld_write_cache(self, enabled: bool, read_back: bool) -> str | None:
        """hosttargets.legs_unheld_cache, at the run's end (nothing was set before); --paths: the one drive set."""
        if self.servers is None:
            return unheld_write_cache(self.legs[0].target, read_back)
        legs = [(leg.name, leg.host, self.local_targets.get(leg.name) or leg.target) for leg in self.legs]
        return legs_unheld_cache(legs, enabled) if read_back else None

    def plan(self, workload: Workload) -> list[tuple[int, Leg, Workload]]:
        return plan_legs(self.legs, workload)

    def job_text(self, target: Target, workload: Workload, tag: str) -> str:
        return legs_job_text(self.legs, self.single, workload, tag, self.host_clocks)

    def run(self, target: Target, workload: Workload, raw_dir: Path, tag: str, progress=None) -> RoundResult:
        raw_dir = Path(raw_dir)
        raw_dir.mkdir(parents=True, exist_ok=True)
        legs = self.plan(workload)
        if self.servers is not None:
            if not self._run_noted:  # name the run in what would outlive it: locks, server pid files
                self._run_noted = True
                for c in [*self.claims, *(h for h in self.holds if isinstance(h, NbdHold))]:
                    c.note_run(raw_dir.parent.name, raw_dir.parent)
                self.servers.note_run(raw_dir.parent)
            # fio_job.separate_warmup: a warm-up longer than a rate-limited cell runs first, on
            # every host (over local paths, each path's own engine runs its legs' warm-ups)
            warmup, workload = separate_warmup(workload)
            if warmup is not None:
                self._run_hosts(self.plan(warmup), warmup, raw_dir, tag + WARMUP_SUFFIX)
                legs = self.plan(workload)
            parts = self._run_hosts(legs, workload, raw_dir, tag)
        else:
            parts = self._run_paths(legs, raw_dir, tag, progress)
        result = merge(parts, "fio", self.version(), among=[leg.name for leg in self.legs])
        if progress is not None:
            progress(result.runtime_s, result.iops, result.lat_mean_us)
        return result

    def _run_paths(self, legs, raw_dir: Path, tag: str, progress) -> list[Part]:
        live: dict[int, tuple[float, float | None]] = {}
        lock = threading.Lock()

        def leg_progress(i):
            def report(elapsed, iops, lat_us=None):
                with lock:
                    live[i] = (iops, lat_us)
                    if progress is not None:  # the runner's LiveFile shows each path's share
                        total = sum(v for v, _ in live.values())
                        # the mean over every leg's IOs: each leg's mean weighted by its IOs
                        timed = [(v, lat) for v, lat in live.values() if lat is not None]
                        mean = sum(v * lat for v, lat in timed) / total if total and len(timed) == len(live) else None
                        progress(elapsed, total, mean, {self.legs[j].name: v for j, (v, _) in live.items()})

            return report

        with ThreadPoolExecutor(max_workers=len(legs)) as pool:
            futures = [
                pool.submit(self.single.run, leg.target, w, raw_dir, f"{tag}.p{i}", leg_progress(i))
                for i, leg, w in legs
            ]
            try:
                outcomes = [_outcome(f) for f in futures]
            except BaseException:
                _interrupt_children(raw_dir)  # Ctrl-C reaches this thread only: stop every leg's fio
                raise
        failed = [(leg, o) for (i, leg, w), o in zip(legs, outcomes) if isinstance(o, Exception)]
        if failed:
            raise EngineError(
                f"round {tag!r}: {len(failed)} of {len(legs)} paths failed; "
                + " ".join(f"path {leg.name}: {o}" for leg, o in failed)
            )
        return [Part(leg.name, o, w.threads, w.queue_depth) for (i, leg, w), o in zip(legs, outcomes)]

    def _run_hosts(self, legs, workload: Workload, raw_dir: Path, tag: str) -> list[Part]:
        assert self.servers is not None
        refuse_existing(raw_dir, tag)
        ends = self.servers.endpoints
        jobs = [
            (f"{tag}.p{i}", ends[leg.host.name], host_job(leg, w, f"{tag}.p{i}", self.host_clocks))
            for i, leg, w in legs
        ]
        code = run_clients(jobs, raw_dir, tag, time_limit(workload, self.stall_timeout), self.fio)
        return client_parts(legs, self.servers.endpoints, raw_dir, tag, code)

    def close(self) -> None:
        if self.servers is not None:
            self.servers.close()
        for c in [*self.claims, *self.holds]:
            c.release()
        self.claims, self.holds = [], []


def host_job(leg: Leg, w: Workload, name: str, clocks: dict[str, str | None]) -> str:
    """A host leg's job file: the host's ioengine, and the clock its server chose itself at the
    probe named (the server's job then calibrates its clock once instead of twice and skips fio's
    cross-CPU clock test; fio's time debug output shows both)."""
    assert leg.host is not None
    return build_job(leg.target, w, name, leg.host.ioengine, clocks.get(leg.host.name), HOST_CLOCK_NOTE)


def _server_of(h: Host) -> str:
    """Where a leg's relay reaches the host's fio server, as the job file's comment says it."""
    if h.ssh:
        return f"an SSH tunnel to the Unix socket of this run's fio server on {h.ssh}"
    return server_arg(h.address, h.port)


def legs_job_text(
    legs: list[Leg], single: FioEngine, workload: Workload, tag: str, clocks: dict[str, str | None] | None = None
) -> str:
    """Each leg's job file for one round, as the split engine writes them (TAG.pN.fio)."""
    out = []
    for i, leg, w in plan_legs(legs, workload):
        text = (
            host_job(leg, w, f"{tag}.p{i}", clocks or {}) if leg.host else single.job_text(leg.target, w, f"{tag}.p{i}")
        )
        how = (
            f"; iolab sends it to the fio server of {leg.name} (together with the other legs) through its relay "
            f"on this machine's loopback, which hands the server the job and its start together (fio_relay): "
            + " ".join(["fio", *client_clock(), "--output-format=json+", "--client=127.0.0.1,PORT", f"{tag}.p{i}.fio"])
            + f" (PORT relays to {_server_of(leg.host)})\n"
            if leg.host
            else ""
        )
        out.append(f"; ===== leg {i}: {leg.name} ({tag}.p{i}.fio) =====\n{how}{text}")
    return "\n".join(out)


def plan_legs(legs: list[Leg], workload: Workload) -> list[tuple[int, Leg, Workload]]:
    """(index, leg, its workload) of the legs with IO in a round, each numbered (`Workload.leg`) among
    the running legs opening its target: all paths (one drive), or hosts on one path, not a host's own."""
    split = split_workload(workload, [leg.share for leg in legs])
    running = [(i, leg, w) for i, (leg, w) in enumerate(zip(legs, split)) if w is not None]
    opens = [leg.target.path if leg.host else "" for _, leg, _ in running]
    return [
        (i, leg, replace(w, leg=(opens[:k].count(p), opens.count(p))))
        for k, (p, (i, leg, w)) in enumerate(zip(opens, running))
    ]


def _outcome(future):
    try:
        return future.result()
    except Exception as e:  # reported per path once every leg has ended
        return e


def _interrupt_children(raw_dir: Path) -> None:
    """SIGINT to this process's fio children running in raw_dir (only ours: by parent pid and cwd)."""
    for pid in _job_processes(os.getpid()):
        try:
            if Path(os.readlink(f"/proc/{pid}/cwd")) == raw_dir.resolve():
                os.kill(pid, signal.SIGINT)
        except OSError:
            pass
