"""fio's client/server mode for a split round over hosts: one `fio --client=H1 job1
--client=H2 job2 ...` run, stopped after a time limit so a host that stops answering cannot
hang it, and each host's result read back from its output (its own json+ entries, not fio's
"All clients" sum, which carries no latency bins, and its per-second logs)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from dataclasses import replace
from pathlib import Path

from iolab.core.errors import EngineError
from iolab.core.procs import wait_exit
from iolab.core.results import json_spans
from iolab.core.workload import Workload
from iolab.engines.fio_job import client_clock
from iolab.engines.fio_parse import log_files, parse_fio_json, parse_fio_logs
from iolab.engines.fio_relay import read_relay_map, relayed
from iolab.engines.fio_supervise import default_stall_timeout
from iolab.engines.hosts import answers
from iolab.engines.merge import Part

# A byte-budget round (preconditioning) has no runtime; it is stopped and failed when it
# has not finished at this rate (bytes/s over all hosts), so a lost host cannot hang a run.
MIN_BUDGET_RATE = 1e6
_CLIENT_LOG_RE = re.compile(r"^(?P<base>.+_(?:iops|bw|lat|clat|slat)\.\d+\.log)\.(?P<host>.+)$")


def run_clients(
    jobs: list[tuple[str, tuple[str, int], str]], raw_dir: Path, tag: str, limit: float, fio: str = "fio"
) -> int:
    """One `fio --client=E1 NAME1.fio --client=E2 NAME2.fio ...` run of (name, endpoint, job
    text) triples; fio's output is kept as raw_dir/tag.json (and .stderr; client_parts moves
    the lines around its JSON to tag.client.log). Returns fio's exit status;
    stops fio and fails after `limit` seconds, so a host that stops answering cannot hang.

    Each server is reached through iolab's relay (fio_relay.py: the server gets the job and RUN
    together), whose map is kept as raw_dir/tag.relay; the client names its own clock where fio
    would pick that clock here anyway (client_clock)."""
    cmd = [fio, *client_clock(), "--output-format=json+"]
    out_path, err_path = raw_dir / f"{tag}.json", raw_dir / f"{tag}.stderr"
    with relayed([ep for _, ep, _ in jobs], raw_dir / f"{tag}.relay") as relays:
        for name, endpoint, text in jobs:
            job = raw_dir / f"{name}.fio"
            job.write_text(text)
            cmd += [f"--client={relays.client_arg(endpoint)}", job.name]
        return _client(cmd, raw_dir, out_path, err_path, limit, f"round {tag!r} on {len(jobs)} hosts")


def _client(cmd: list[str], raw_dir: Path, out_path: Path, err_path: Path, limit: float, what: str) -> int:
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            cmd, cwd=raw_dir, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
        try:
            return wait_exit(proc, limit)
        except subprocess.TimeoutExpired:
            _end(proc)
            raise EngineError(
                f"{what} did not finish within {limit:g} s (its time and the stall "
                f"timeout: a host that stopped answering?); fio's client was stopped. Its output is kept in {out_path}."
            ) from None
        except BaseException:
            _end(proc)
            raise


# How long fio's client gets to stop on SIGINT before it is killed. A client whose host froze
# waits for that host's answer to the stop and never gets it; the round has failed either way,
# so the failure comes END_WAIT_S after the time limit (it waited 10 s here: a 10 s stall
# timeout took 21-26 s to fail the run).
END_WAIT_S = 2.0


def _end(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=END_WAIT_S)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)  # SIGKILL cannot be ignored; a client is not stuck in a device


def time_limit(w: Workload, stall_timeout: float | None) -> float:
    grace = stall_timeout if stall_timeout is not None else default_stall_timeout(w)
    if w.duration_s is not None:
        return w.duration_s + grace
    return (w.bytes_budget or 0) / MIN_BUDGET_RATE + grace


def client_parts(legs, endpoints: dict[str, tuple[str, int]], raw_dir: Path, tag: str, returncode: int) -> list[Part]:
    """Each host's result from one fio client run's output (raw_dir/tag.json): its own json+
    entries, parsed as a single-host report, and its per-second logs."""
    out_path = raw_dir / f"{tag}.json"
    text = out_path.read_text(errors="replace")
    found, lines, cut = json_spans(text)  # one scan for the reports and where the last one is
    objs = [obj for _, _, obj in found]
    log_path = keep_apart(out_path, text, found[-1][:2] if found and cut is None else None)
    stats = objs[-1].get("client_stats") if objs else None
    if not isinstance(stats, list):
        # fio's client says "connect: Connection refused" without the host when a server went
        # between rounds; which hosts no longer answer is asked now
        silent = [
            leg.name if leg.name == f"{addr}:{port}" else f"{leg.name} ({addr}:{port})"
            for _, leg, _ in legs
            for addr, port in [endpoints[leg.host.name]]
            if not answers(addr, port, timeout=2.0)
        ]
        gone = f"; no longer answering: {', '.join(silent)}" if silent else ""
        raise EngineError(
            f"fio client output {out_path} holds no client_stats (exit {returncode}){gone}; "
            f"fio said: {_said(lines, raw_dir / f'{tag}.stderr')}"
        )
    version = objs[-1].get("fio version")
    named = read_relay_map(raw_dir / f"{tag}.relay")  # server -> how fio's output names it
    parts, lost = [], []
    for i, leg, w in legs:
        addr, port = endpoints[leg.host.name]
        as_addr, as_port = named.get((addr, port), (addr, port))
        jobs = [
            j
            for j in stats
            if isinstance(j, dict)
            and j.get("hostname") == as_addr
            and j.get("port") == as_port
            and j.get("jobname") != "All clients"
        ]
        if not jobs:
            said = " | ".join(
                ln
                for ln in [*lines, *_lines(raw_dir / f"{tag}.stderr")]
                if addr in ln or f"{as_addr}:{as_port}" in ln or f"{as_addr},{as_port}" in ln
            )[-300:]
            # What fio printed of a lost host depends on when it went; whether its server still
            # answers is asked now, so the message says what happened either way.
            gone = (
                ""
                if answers(addr, port, timeout=2.0)
                else f"; its fio server at {addr}:{port} no longer answers (disconnected)"
            )
            lost.append(f"host {leg.name} sent no results; it said: {said or '(nothing)'}{gone}")
            continue
        name = f"{tag}.p{i}"
        result = parse_fio_json(json.dumps({"fio version": version, "jobs": jobs}), f"{out_path} (client {leg.name})")
        for p in raw_dir.iterdir():  # fio's client appends the host to each log it receives
            m = _CLIENT_LOG_RE.match(p.name)
            if m and m.group("base").startswith(f"{name}_") and m.group("host") == as_addr:
                p.rename(raw_dir / m.group("base"))
        logs = log_files(raw_dir, name)
        kept = [raw_dir / f"{name}.fio", out_path, *([log_path] if log_path else []), *logs]
        rel = tuple(str(p.relative_to(raw_dir.parent)) for p in kept)
        parts.append(
            Part(
                leg.name,
                replace(result, series=parse_fio_logs(logs, totals=result), raw_files=rel),
                w.threads,
                w.queue_depth,
            )
        )
    if lost or returncode != 0:
        raise EngineError(
            f"round {tag!r}: {'; '.join(lost) or f'fio client exit {returncode}'}. The round is not "
            f"stored; finished rounds are kept; fio's output is in {out_path} (and {log_path or out_path.with_suffix('.stderr')})."
        )
    return parts


def keep_apart(out_path: Path, text: str, document: tuple[int, int] | None) -> Path | None:
    """Make the client's output at `out_path` the JSON document it printed (`document`: where it
    is in `text`, json_spans), its other lines (the "<host> NAME: (g=0): ..." lines fio's client
    prints for each host, before its JSON, and any earlier report) going to NAME.client.log
    beside it: the run's raw JSON is then what `jq` and every reader take it for, and fio's text
    is kept byte for byte. Returns that log (None: nothing else was printed). Output without a
    whole JSON document (None: a client stopped mid-report) is kept as fio wrote it: that is the
    failure's evidence, which the caller reports."""
    if document is None:
        return None
    start, end = document
    rest = (text[:start] + text[end:]).strip("\n")
    log_path = out_path.with_name(out_path.name.removesuffix(".json") + ".client.log")
    if rest.strip():
        log_path.write_text(rest + "\n")  # first, so an interrupted split loses nothing
    out_path.write_text(text[start:end] + "\n")
    return log_path if rest.strip() else None


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return []


def _said(lines: list[str], err_path: Path) -> str:
    return " | ".join([*lines, *_lines(err_path)][-8:])[-600:] or "(nothing)"
