"""`iolab resume FLEET`: a fleet whose coordinator stopped (Ctrl-C, kill -9, a crash) goes on.

A drive that completed keeps its row, unless it is named with `--again` (measure_again): then it
starts a new run. A drive that failed or was refused is tried again (its
stored run resumed, or started anew when it left none): what failed it may have been fixed since
(a host back, a drive unmounted); its earlier attempt's out.json and log.txt are kept. A drive
whose row says it was running is read again from its own out.json: a drive's run does not die with the coordinator
(api/fleet.py), so it ran to its end and said how it ended there; one still running is waited
for. A drive with a stored, interrupted run goes on with `iolab resume` of that run (its last
complete round); one that never started, or left no run, starts again. A coordinator still
alive is refused: the fleet is not run twice at once.

The safety and output options given to `iolab resume FLEET` (`--allow-unsafe-target`, ...) reach
every drive it runs again, as `iolab resume RUN` takes them for one run: a drive refused for want
of an override is run again with it (they were dropped, and the drive refused again, telling the
user to pass the option they had just passed). They join the fleet's arguments in fleet.json, so
a later resume keeps them."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from iolab.api.fleet import FleetState, Member, load_state, read_outcome, run_fleet
from iolab.api.fleetfile import load_fleet
from iolab.core.errors import IolabError


def _alive(pid: int | None) -> bool:
    """A process of that pid runs and is an iolab (a reused pid of another program is not)."""
    if not pid or pid == os.getpid():
        return False
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"iolab" in cmd


def with_options(args: list[str], extra: list[str]) -> list[str]:
    """The fleet's arguments with `extra` (resume's options: flags, and `--ioengine X`, which
    replaces the fleet's own engine) added where they are not already."""
    out = list(args)
    i = 0
    while i < len(extra):
        a = extra[i]
        if a == "--ioengine" and i + 1 < len(extra):
            j = out.index(a) if a in out else -1
            if j >= 0 and j + 1 < len(out):
                out[j + 1] = extra[i + 1]
            else:
                out += [a, extra[i + 1]]
            i += 2
            continue
        if a not in out:
            out.append(a)
        i += 1
    return out


def measure_again(state: FleetState, names: list[str]) -> None:
    """The drives named (`iolab resume FLEET --again NAME`) start a new run, whatever their row
    says: a drive whose complete run was an outlier or failed the spec sheet, measured again once
    its cause (a cable, a slot, a firmware setting) is fixed, is judged with the fleet it belongs
    to. Its earlier run stays in the runs directory; its out.json and log.txt are kept as attempts.
    IolabError, before anything changes, for a name the fleet does not hold."""
    rows = {m.name: m for m in state.members}
    unknown = [n for n in names if n not in rows]
    if unknown:
        raise IolabError(
            f"fleet {state.dir}: --again {unknown[0]}: no drive of that name; its drives are "
            f"{', '.join(rows)}. Nothing was run."
        )
    for n in dict.fromkeys(names):
        m = rows[n]
        if m.state == "running" and _alive(m.pid):
            raise IolabError(f"fleet {state.dir}: --again {n}: its run is still going (pid {m.pid}). Nothing was run.")
        m.state, m.run_dir, m.exit_code, m.error, m.out_sha256, m.pid = "interrupted", None, None, None, None, None


def resume(
    fleet_dir: Path,
    root: Path,
    on_event: Callable[[Member, str], None],
    extra: list[str] | None = None,
    again: list[str] | None = None,
) -> FleetState:
    state = load_state(fleet_dir)
    if state.state == "running" and _alive(state.pid):
        raise IolabError(
            f"fleet {fleet_dir}: its coordinator (pid {state.pid}) is still running; wait for it, or stop it first "
            "(Ctrl-C), then resume."
        )
    if again:
        measure_again(state, again)
    for m in state.members:
        if m.state == "running" and _alive(m.pid):
            on_event(m, "wait")
            while _alive(m.pid):
                time.sleep(0.2)
    for m in state.members:
        if m.state in ("failed", "refused", "unreadable"):  # tried again: a host back, a drive freed or fixed
            m.state, m.error = "interrupted", None
        if m.state == "running":  # the coordinator died before it read the drive's end
            read_outcome(m, state.dir / "drives" / m.name / "out.json", None)
            if m.state not in ("complete", "interrupted"):
                m.state = "interrupted"  # killed before it said anything: start it again
    fleet = load_fleet(state.dir / "fleet.toml", Path(state.cwd) if state.cwd else None)
    state.args = with_options(state.args, extra or [])
    state.pid, state.state, state.ended, state.stopped_by = os.getpid(), "running", None, None
    state.save()
    return run_fleet(fleet, state, root, on_event)
