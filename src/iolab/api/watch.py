"""`iolab watch`: a local web page of the runs in a runs directory, running and finished:
test, phase, round, live IOPS per host/path/drive, latency, steady-state progress, an upper
bound on the time left, links to reports; and a page per run with its charts (watchrun.py). It reads the run store only, through its read-only open
(never creating or changing a file in a run directory); the pages (watchpage.py) poll JSON endpoints.
Standard library only (http.server)."""

from __future__ import annotations

import errno
import html
import json
import mimetypes
import os
import socket
import stat
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from iolab.api.fleet import list_fleets
from iolab.api.runlist import RunSummary, list_runs
from iolab.api.watchpage import list_page, run_page
from iolab.api.watchrun import p99_fields, run_detail
from iolab.core.errors import IolabError
from iolab.core.safefile import read_json
from iolab.core.steady import STEADY_NOT_EVALUATED, SteadyState, phase_steady_state, phase_verdict, run_steady_state
from iolab.engines.merge import breakdown
from iolab.run.live import read as read_live
from iolab.store.manifest import manifest_of
from iolab.store.runstore import RunStore

DEFAULT_BIND = "127.0.0.1"
DEFAULT_PORT = 8737
POLL_MS = 1000


def snapshot(root: Path) -> dict:
    """What the list page shows, for every run under root (newest first)."""
    root = Path(root).resolve()
    fleets = list_fleets(root)
    # a drive's run names its fleet and drive: the fleet's members by their run directories
    member = {
        str(Path(m.run_dir).resolve()): f"fleet {f.name}: drive {m.name}"
        for f in fleets
        for m in f.members
        if m.run_dir
    }
    # a drive still running has no run directory in its row yet: its process is the run's writer
    running = {
        m.pid: f"fleet {f.name}: drive {m.name}" for f in fleets for m in f.members if m.state == "running" and m.pid
    }
    runs = []
    found = _addresses(list_runs(root))
    for ref, s in sorted(found.items(), key=lambda kv: kv[1].started, reverse=True):
        e = _entry(root, s, ref)
        fleet = member.get(str(Path(s.path).resolve())) or (_writer(s.path, running) if s.state == "running" else None)
        if fleet:
            e["fleet"] = fleet
        runs.append(e)
    listed = [
        {
            "name": f.name,
            "test": f.test,
            "state": f.state,
            "drives": len(f.members),
            "complete": sum(m.state == "complete" for m in f.members),
        }
        for f in fleets
    ]
    return {"root": str(root), "runs": runs, "fleets": listed}


def _addresses(runs: list[RunSummary]) -> dict[str, RunSummary]:
    """Each run by its address in the pages' links: its id, where the id names it as `iolab show
    ID` takes it (store/manifest.resolve_run: a directory of that name first, else the one run
    that holds the id); else ID@DIRECTORY. A copy beside its original is so shown and opened as
    itself, and the id opens the run `show` opens (the original, named by it), or, when neither
    directory is named by it, neither (409, as `show` refuses it)."""
    ids = Counter(r.run_id for r in runs)
    named = {r.path.name: r for r in runs}
    out = {}
    for r in runs:
        owner = named.get(r.run_id)
        plain = owner is r if owner is not None else ids[r.run_id] == 1
        out[r.run_id if plain else f"{r.run_id}@{r.path.name}"] = r
    return out


@dataclass(frozen=True)
class Found:
    """What an address names: its run, or the HTTP status and why there is none."""

    run: RunSummary | None
    status: int = 200  # 404: no such run; 409: an id that two run directories hold
    why: str = ""


def _listed(root: Path, ref: str) -> Found:
    """The run at this address among those `list_runs` finds in root: the one way a page, its
    data and its report files find their run. An id two run directories hold names neither."""
    runs = list_runs(root)
    # an address; else a directory's name under root, as `iolab show` takes one; else ID@DIRECTORY
    # of a run whose plain id is its address (as a 409 named both directories before)
    run_id, _, name = ref.rpartition("@")
    run = (
        _addresses(runs).get(ref)
        or next((r for r in runs if r.path.name == ref), None)
        or next((r for r in runs if r.path.name == name and r.run_id == run_id), None)
    )
    if run is not None:
        return Found(run)
    both = [r for r in runs if r.run_id == ref]
    if both:
        dirs = " and ".join(f"{r.path} (/runs/{ref}@{r.path.name})" for r in both)
        return Found(
            None,
            409,
            f"run id {ref} is held by {len(both)} run directories: {dirs}; a copy of a run beside its "
            "original keeps its id. Open one by its address, or move the copy out of the runs directory.",
        )
    return Found(None, 404, f"no such run: {ref}")


def run_snapshot(root: Path, run_id: str) -> dict | None:
    """What a run's page shows: its line of the list and the charts' data (None: no such run
    in root; only runs `list_runs` finds are opened, so an id names nothing else)."""
    root = Path(root).resolve()
    s = _listed(root, run_id).run
    return None if s is None else _run_data(root, s, run_id)


def _run_data(root: Path, s: RunSummary, ref: str) -> dict:
    entry, detail = _entry(root, s, ref), None
    if s.state != "broken" and not entry.get("problem"):
        try:
            detail = run_detail(s.path, entry.get("live"))
        except IolabError as e:
            entry["problem"] = str(e)
    return {"summary": entry, "detail": detail}


def _writer(run_dir: Path, running: dict[int, str]) -> str | None:
    """The fleet drive whose process writes this running run (its manifest's pid), if any."""
    if not running:
        return None
    try:
        pid = read_json(run_dir / "manifest.json", "run manifest", "manifest").get("pid")
    except (OSError, IolabError, AttributeError):
        return None
    return running.get(pid) if isinstance(pid, int) else None


def _entry(root: Path, s, ref: str) -> dict:
    entry = {
        "id": s.run_id,
        "ref": ref,  # its address: the id, or ID@DIRECTORY where the id names another run (_addresses)
        "directory": s.path.name,
        "test": s.test,
        "target": s.target,
        "state": s.state,
        "started": s.started,
        "compliant": s.compliant,
        "problem": s.problem,
        "reports": _reports(root, s.path, ref),
    }
    if s.state != "broken":
        try:
            entry |= _progress(s.path)
        except IolabError as e:
            entry["problem"] = str(e)
    return entry


def _reports(root: Path, run_dir: Path, ref: str) -> list[dict]:
    """The report files the server would send (so none that a link places outside the runs directory).
    A PDF without its HTML is a report being put in place (the PDF goes first) or one a stop left
    half-way: not shown until the set is whole."""
    d = run_dir / "report"
    return (
        [
            {"name": p.name, "href": f"/runs/{ref}/report/{p.name}"}
            for p in sorted(d.glob("*"))
            if p.suffix in (".html", ".pdf")
            and (p.suffix == ".html" or p.with_suffix(".html").is_file())
            and p.resolve().is_relative_to(root)
            and p.resolve().is_file()
        ]
        if d.is_dir()
        else []
    )


def _progress(run_dir: Path) -> dict:
    store = RunStore.open(run_dir)
    try:
        phases = store.phases()
        if not phases:
            return {"phase": None}
        ph = phases[-1]
        plan: dict[str, Any] = next(
            (p for p in manifest_of(store).plan.get("phases", ()) if p.get("name") == ph.name), {}
        )
        cells = store.cells(ph.name, complete_only=False)
        last = cells[-1] if cells else None
        rnd = last.round if last else 0
        done_in_round = sum(1 for c in cells if c.round == rnd)
        per_round, max_rounds = len(plan.get("cells", ())) or 1, plan.get("max_rounds") or rnd or 1
        mean_s = sum(c.runtime_s for c in cells) / len(cells) if cells else None
        left = max(0, (max_rounds - rnd) * per_round + per_round - done_in_round) if ph.stop_reason is None else 0
        verdicts = store.steady_rows(ph.name)
        running = manifest_of(store).state == "running"
        return {
            "phase": ph.name,
            "phases": len(manifest_of(store).plan.get("phases", ())),
            "phase_index": ph.ordinal + 1,
            "round": rnd,
            "max_rounds": max_rounds,
            "cells_done": done_in_round,
            "cells_per_round": per_round,
            "stop_reason": ph.stop_reason,
            "last_cell": last.cell_key if last else None,
            "iops": last.iops if last else None,
            "lat_mean_us": last.lat_mean_us if last else None,
            "lat_max_us": last.lat_max_us if last else None,
            **(p99_fields(last) if last else {"p99_us": None, "p99_note": None}),
            "parts": [{"name": p.name, "iops": p.figures.get("iops")} for p in breakdown(last.counters)]
            if last
            else [],
            "steady": {
                "evaluated": bool(verdicts),
                "passing": sum(v.range_ok and v.slope_ok for v in verdicts),
                "variables": len(verdicts),
                # the verdict every page gives the phase (core/steady.phase_verdict): false for one
                # whose windows were judged and none accepted yet, null only while none was judged
                "reached": phase_verdict(ph.steady, bool(verdicts)),
                # the whole run's, as `iolab show` gives it: a finished run's last phase may track
                # nothing (a replay after its composite) and says nothing of the phases before it
                "run": _run_steady(store, phases, manifest_of(store).plan.get("phases", ())),
            },
            # Measurement time only (purges and setup not counted): a bound to the round limit.
            "eta_s": None if mean_s is None or not running else left * mean_s,
            # the cell under way: fio's periodic reports as the runner last wrote them (None for
            # hosts: fio's client reports each host at the end of its job only)
            "live": _live(run_dir) if running else None,
        }
    finally:
        store.close()


def _run_steady(store: RunStore, phases: list, plan_phases) -> SteadyState:
    """The run's steady state (outcome.steady_state) from the stored phases alone: summarising
    every phase's cells on each poll of the page would cost a tenth of a second a run."""
    tracks = {p.get("name") for p in plan_phases if p.get("tracking")}
    states = []
    for ph in phases:
        steady = phase_verdict(ph.steady, bool(store.steady_rows(ph.name)))
        states.append(phase_steady_state(steady, ph.name in tracks or steady is not None))
    stored = {ph.name for ph in phases}
    return run_steady_state([*states, *(STEADY_NOT_EVALUATED for name in tracks if name not in stored)])


def _live(run_dir: Path) -> dict | None:
    live = read_live(run_dir)
    if live is not None and isinstance(live.get("started"), (int, float)):
        live["running_s"] = max(0.0, time.time() - live["started"])  # wall time: engines without reports
    return live


ALLOWED = "GET, HEAD"  # the methods the page answers


def handler_for(root: Path):
    root = Path(root).resolve()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if not self._host_ok():
                # A page of another site that its DNS points here (DNS rebinding) names that site.
                self._send(421, "text/plain", b"unknown Host header: open this page by the address iolab watch printed")
                return
            parts = _segments(self.path)
            if parts is None:
                self._send(400, "text/plain", b"bad request path")
            elif parts == []:
                self._send(200, "text/html; charset=utf-8", list_page(POLL_MS))
            elif parts == ["api", "runs"]:
                self._send(200, "application/json", json.dumps(snapshot(root)).encode())
            elif len(parts) == 2 and parts[0] == "runs":
                found = _listed(root, parts[1])
                if found.run is None:
                    self._refuse(found)
                else:
                    self._send(200, "text/html; charset=utf-8", run_page(parts[1], POLL_MS))
            elif len(parts) == 3 and parts[:2] == ["api", "runs"]:
                found = _listed(root, parts[2])
                if found.run is None:
                    self._refuse(found)
                else:
                    self._send(200, "application/json", json.dumps(_run_data(root, found.run, parts[2])).encode())
            elif len(parts) == 4 and parts[0] == "runs" and parts[2] == "report":
                found = _listed(root, parts[1])
                body = None if found.run is None else _report_file(root, found.run, parts[3])
                if found.run is None:
                    self._refuse(found)
                elif body is None:
                    self._send(404, "text/plain", f"no such report: {html.escape('/'.join(parts))}".encode())
                else:
                    self._send(200, mimetypes.guess_type(parts[3])[0] or "application/octet-stream", body)
            else:
                self._send(404, "text/plain", b"not found")

        # HEAD is GET without the body (curl -I, link checkers); every other method is not
        # allowed on this read-only page: 405 naming the two that are, where http.server
        # answered each of them, HEAD too, 501 "Unsupported method"
        do_HEAD = do_GET  # noqa: N815 (http.server's name)

        def __getattr__(self, name: str):
            if name.startswith("do_"):  # http.server looks up do_<METHOD> for the request's method
                return self._not_allowed
            raise AttributeError(name)

        def _not_allowed(self) -> None:
            self._send(405, "text/plain", b"iolab watch is read-only: it answers GET and HEAD", {"Allow": ALLOWED})

        def _host_ok(self) -> bool:
            # the address and port the client reached: the ones given to --bind and --port, or
            # with a wildcard bind the interface's own address
            here, port = self.connection.getsockname()[:2]
            names = {"localhost", "127.0.0.1", "[::1]", f"[{here}]" if ":" in here else here}
            host = self.headers.get("Host", "").strip().lower()
            name, _, given = host.rpartition(":") if not host.endswith("]") else (host, "", "")
            return name in names and given == str(port)

        def _refuse(self, found: Found) -> None:
            self._send(found.status, "text/plain; charset=utf-8", html.escape(found.why).encode())

        def _send(self, code: int, ctype: str, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))  # a HEAD's too: the GET's length
            self.send_header("Cache-Control", "no-store")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def log_message(self, fmt, *args) -> None:
            pass  # polling every second would flood the terminal

    return Handler


def _segments(raw: str) -> list[str] | None:
    """The request path's segments, decoded one by one (so an encoded slash stays inside its
    segment); None for a path that could name something outside what the server shows."""
    path = raw.split("?", 1)[0]
    if not path.startswith("/"):
        return None
    try:
        parts = [unquote(p, errors="strict") for p in path.split("/")[1:]]
    except UnicodeDecodeError:
        return None
    if parts == [""]:
        return []
    if any(p in ("", ".", "..") or "/" in p or "\\" in p or "\x00" in p for p in parts):
        return None
    return parts


def _report_file(root: Path, s: RunSummary, name: str) -> bytes | None:
    """A report file of a run: a regular file inside the runs directory once every symlink is
    resolved (a `report` link pointing elsewhere is not followed out). The run is found by its
    address as the list names it, like its page: a run directory copied or renamed (an archive's
    'drive-A-fw1') keeps its manifest's id, which is not its directory's name."""
    f = (Path(s.path) / "report" / name).resolve()
    if not f.is_relative_to(root):
        return None
    try:
        fd = os.open(f, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # a fifo or device under the runs directory: never read
        return fh.read()


def serve(root: Path, bind: str = DEFAULT_BIND, port: int = DEFAULT_PORT) -> ThreadingHTTPServer:
    if not Path(root).is_dir():  # a file is there, not nothing: said as `iolab runs` says it (runlist.checked_root)
        what = "is not a directory" if Path(root).exists() else "does not exist"
        raise IolabError(f"runs directory {root} {what}; give the directory `iolab run --runs-dir` wrote to.")
    if not 0 <= port <= 65535:  # the socket layer's OverflowError, a traceback, before
        raise IolabError(f"`iolab watch`: --port {port} is not a TCP port; give 1 to 65535, or 0 for any free port.")
    address = bind[1:-1] if bind.startswith("[") and bind.endswith("]") else bind  # "[::1]" as a URL writes it
    server_class = _IPv6Server if ":" in address else ThreadingHTTPServer
    try:
        return server_class((address, port), handler_for(root))
    except OSError as e:
        # the port is the problem only when it is taken (or reserved); else the address is
        fix = (
            "choose another --port (or 0 for any free port)"
            if e.errno in (errno.EADDRINUSE, errno.EACCES)
            else "give --bind an address of this machine (127.0.0.1, ::1, 0.0.0.0 for every IPv4 interface, :: for every one)"
        )
        shown = f"[{address}]" if ":" in address else address
        raise IolabError(f"`iolab watch` cannot listen on {shown}:{port} ({e.strerror or e}); {fix}.") from None


class _IPv6Server(ThreadingHTTPServer):
    """An IPv6 --bind (::1, ::): http.server's class listens on IPv4 only."""

    address_family = socket.AF_INET6
