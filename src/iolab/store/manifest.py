"""manifest.json and where run directories are: the run's plain-data description (target
facts, plan, versions, times, state, who writes it) and how a run is named on the command
line."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, get_type_hints

from iolab import __version__
from iolab.core.decide import stored_decision
from iolab.core.errors import IolabError
from iolab.core.fieldtypes import shown as _shown
from iolab.core.fieldtypes import wrong_type
from iolab.core.procs import boot_id, process_start
from iolab.core.runfiles import FLEET_FILE, SHELL_RUNS_VAR, not_a_run_of
from iolab.core.safefile import read_json
from iolab.core.usertext import name_problem
from iolab.store.oldscaling import credit_limit


def runs_root() -> Path:
    return Path(os.environ.get("IOLAB_RUNS", "runs")).resolve()


def shell_runs_root() -> Path:
    """The runs directory a command typed in the user's shell writes to without --runs-dir: its
    $IOLAB_RUNS as it was before this command's --runs-dir set it (SHELL_RUNS_VAR), else ./runs."""
    shell = os.environ.get(SHELL_RUNS_VAR)
    return runs_root() if shell is None else Path(shell or "runs").resolve()


@dataclass
class Manifest:
    """manifest.json. Plain data so a run directory can be read without iolab's code."""

    run_id: str
    test: str
    title: str
    spec: str
    target: dict[str, Any]
    profile: dict[str, Any]
    compliant: bool
    noncompliance: list[str]
    parameters: dict[str, Any]
    notes: list[str]
    steady_rule: str
    versions: dict[str, Any]
    platform: dict[str, Any]
    started: str
    state: str = "running"  # running | complete | failed | interrupted
    ended: str | None = None
    error: str | None = None
    pid: int = field(default_factory=os.getpid)
    # With the pid they tell the writer from a later process that reused its pid.
    pid_start: int | None = None
    boot_id: str | None = None
    purges: list[dict[str, Any]] = field(default_factory=list)
    write_cache: str | None = None
    safety_overrides: list[str] = field(default_factory=list)
    plan: dict[str, Any] = field(default_factory=dict)
    decisions: list[dict[str, Any]] = field(default_factory=list)  # decide.Decision records, in the order made
    # per phase: the drive's own write counters at its start and end (targets/wear.py)
    endurance: dict[str, Any] = field(default_factory=dict)
    # The legs a split engine ran each round over (--paths/--hosts): name, path, share, host.
    split: list[dict[str, Any]] = field(default_factory=list)
    # The self-audit of physical invariants made when the run ended (audit.Audit.to_dict); empty
    # for runs stored before it existed, which `iolab audit` and the views audit when read.
    audit: dict[str, Any] = field(default_factory=dict)
    # results.db's size and mtime (ns) as the run's end left it, a plain file (RunStore.finish):
    # any later change to it shows in them, and the audit's raw-figures check is then made again
    # wherever the stored audit is read (audit.stored_audit). Empty: not recorded (a run stored
    # before it, or one not ended), which is checked again whenever read.
    results_db_stat: list[int] = field(default_factory=list)
    # A simulated SSD's power model, the values its power.json was computed with
    # (figures/simpower.DriveModel.record, all UNVERIFIED); empty for real drives and HDDs.
    power_model: dict[str, Any] = field(default_factory=dict)
    # The profile options the test ignored (TestPlan.ignored_options): each with the value the
    # run's plan is the same at; empty for runs stored before it existed (compared as given).
    ignored_options: dict[str, Any] = field(default_factory=dict)
    # Minted once when the run is created: a copy of the run directory keeps it, two runs never
    # share it (the run id does, for runs started in one second in different runs directories).
    # None for runs stored before it existed.
    uid: str | None = None
    # Whether results.db was made naming this run's uid (store/dbidentity.py): set when the run is
    # created (and when resume records it in an older database), so a results.db beside it that
    # names no run was put there after, not left by a version before the table.
    db_names_run: bool = False
    # What a newer iolab stored that this one does not know, by name: never a key of
    # manifest.json itself (STORED_APART); `manifest_bytes` writes the fields back beside the
    # known ones, so a resume or any rewrite by this version loses nothing stored.
    unknown: dict[str, Any] = field(default_factory=dict, metadata={"apart": True})

    @classmethod
    def from_document(cls, data: Any) -> Manifest:
        """A Manifest from manifest.json's document. Fields a newer iolab added are kept in
        `unknown` (a run is not unreadable for what it has in addition); a missing required
        field, or a document that is no object, still raises TypeError."""
        if not isinstance(data, dict):
            raise TypeError(f"a JSON {type(data).__name__}, not an object")
        credit_limit(data)  # an old quick run's --capacity-limit, named as today's runs name it
        known = {k: v for k, v in data.items() if k in KNOWN_FIELDS}
        for name, value in known.items():
            if (problem := _wrong_type(name, value)) is not None:
                raise TypeError(problem)
        for name in NAME_FIELDS:
            if isinstance(known.get(name), str) and (why := name_problem(known[name])) is not None:
                raise TypeError(f"field {name!r} is {_shown(known[name])}, not a plain name: {why}")
        if (problem := _nested_problem(known)) is not None:
            raise TypeError(problem)
        if known.get("compliant") is True and (known.get("profile") or {}).get("quick") is True:
            # every page, check and fleet verdict reads the flag: a hand-set `true` on a --quick run
            # took its NON-COMPLIANT banner off every page, and the fleet judged it as the drive's
            raise TypeError(
                "field 'compliant' is true, but its 'profile.quick' is true: a --quick run is scaled down, "
                "never compliant"
            )
        if known.get("state", "running") not in STATES:
            raise TypeError(f"field 'state' is {_shown(known['state'])}, not one of {', '.join(STATES)}")
        if isinstance(known.get("decisions"), list):  # in today's form (a bisection step's of older runs)
            known["decisions"] = [stored_decision(d) if isinstance(d, dict) else d for d in known["decisions"]]
        return cls(**known, unknown={k: v for k, v in data.items() if k not in KNOWN_FIELDS})


# Manifest fields that are not keys of manifest.json: a key of that name in the file is a field
# this version does not know, like any other.
STORED_APART = frozenset(f.name for f in fields(Manifest) if f.metadata.get("apart"))
KNOWN_FIELDS = frozenset(f.name for f in fields(Manifest)) - STORED_APART


STATES = ("running", "complete", "failed", "interrupted")
# Fields that name files: the run's id its report (RUN/report/RUN_ID.html, or in --out), the test
# a comparison's (compare-TEST-...). A hand-edited '../../etc' wrote the report outside --out.
NAME_FIELDS = ("run_id", "test")
# Each field's type as the dataclass declares it: a manifest is held to it when read, so that a
# hand-edited or damaged field (`started` a number, `plan` null, `target` a string) makes the run
# unreadable with the field named, never a TypeError or AttributeError deep in a view.
_TYPES = get_type_hints(Manifest)


# The numbers of the target and profile objects that every view computes with (the tested
# capacity is capacity × active range): a hand-edited `"capacity": "big"` or an active range of
# 1e308 made `show`, `report` and `audit` end in a ValueError or OverflowError traceback.
_TARGET_NUMBERS = {"capacity": int, "tested_capacity": int}
_PROFILE_NUMBERS = {
    "active_range": float,
    "threads": int,
    "queue_depth": int,
    "cell_seconds": float,
    "precondition_factor": float,
    "capacity_limit": int | None,
    "max_rounds": int,
    "wsat_capacity_multiple": float,
    "wsat_max_seconds": float,
    "rwsw_min_write_multiple": float,
    "steady_min_write_multiple": float,
}


_DECISION_KEYS = {"phase": str, "rule": dict, "outcome": str}


def _nested_problem(known: dict[str, Any]) -> str | None:
    """The first number of the target or profile object that is not of its type, an active range
    that is no share of the target, or a part the views walk (the target's facts, the plan's
    phases, the decisions) that is not of the shape they read."""
    for part, hints in (("target", _TARGET_NUMBERS), ("profile", _PROFILE_NUMBERS)):
        obj = known.get(part)
        if not isinstance(obj, dict):
            continue  # its own type is checked with the fields'
        for key, hint in hints.items():
            if key in obj and (problem := wrong_type(f"{part}.{key}", obj[key], hint)) is not None:
                return problem
    facts = (known.get("target") or {}).get("facts", {})
    if not isinstance(facts, dict):
        return wrong_type("target.facts", facts, dict[str, Any])
    phases = (known.get("plan") or {}).get("phases", [])
    if (problem := wrong_type("plan.phases", phases, list[dict[str, Any]])) is not None:
        return problem
    for d in known.get("decisions") or ():
        if not isinstance(d, dict) or not all(isinstance(d.get(k), t) for k, t in _DECISION_KEYS.items()):
            return f"field 'decisions' holds {_shown(d)}, not a decision (an object with {', '.join(_DECISION_KEYS)})"
    share = (known.get("profile") or {}).get("active_range", 1.0)
    if not 0 < share <= 1:
        return f"field 'profile.active_range' is {_shown(share)}, not a share of the target above 0 and at most 1"
    return None


def _wrong_type(name: str, value: Any) -> str | None:
    """'field 'started' is 12345, not a string' when the value is not of the field's type."""
    return wrong_type(name, value, _TYPES[name])


def unknown_parts(m: Manifest, schema: Sequence[str] = ()) -> list[str]:
    """What a run holds that this version does not know: its manifest's fields and the results.db
    tables and columns `schema` names (resultsdb.unknown_schema)."""
    return [f"manifest.json field {k}" for k in sorted(m.unknown)] + [f"results.db {s}" for s in schema]


def unknown_text(parts: Sequence[str]) -> str | None:
    """What `iolab show` and `iolab runs` say of a run holding what this version does not know
    (`unknown_parts`; None: nothing): that it is kept, and that nothing it records is shown."""
    if not parts:
        return None
    return (
        f"iolab {__version__} does not know {'; '.join(parts)} (a newer iolab wrote "
        f"{'it' if len(parts) == 1 else 'them'}, or a hand did): kept as stored and not read, so nothing "
        "recorded there is shown or used here."
    )


def run_key(run_id: str, uid: str | None, legacy: str = "") -> str:
    """What tells one run from another: its uid, or for a run stored before uids its id and
    `legacy` (what else the reader knows of it)."""
    return f"uid {uid}" if uid else f"id {run_id} {legacy}".rstrip()


def manifest_run_key(m: Manifest) -> str:
    """run_key of a run whose whole manifest is at hand: a run stored before uids is its id and
    the process that wrote it (a copy of its directory has both; two runs started in one second
    in other runs directories only the id)."""
    return run_key(m.run_id, m.uid, f"{m.boot_id} {m.pid} {m.pid_start}")


class _RunDir(Protocol):
    dir: Path
    manifest: Manifest | None


def manifest_of(store: _RunDir) -> Manifest:
    """A store's manifest. RunStore.open and RunStore.create always have one; a directory
    without manifest.json is not a run, and this says so rather than fail on None later."""
    if store.manifest is None:
        raise IolabError(f"{store.dir}: not an iolab run directory (no manifest.json).")
    return store.manifest


def now_iso() -> str:
    return datetime.now(UTC).astimezone().isoformat(timespec="seconds")


def stamp_writer(m: Manifest) -> None:
    """Mark the run as running in this process (pid, its start time, the boot)."""
    m.state, m.ended, m.error = "running", None, None
    m.pid, m.pid_start, m.boot_id = os.getpid(), process_start(os.getpid()), boot_id()


def manifest_bytes(m: Manifest) -> bytes:
    """manifest.json's text: the known fields, then those a newer iolab stored, as they were."""
    doc = asdict(m)
    for name in STORED_APART:
        doc.pop(name)
    doc |= {k: v for k, v in m.unknown.items() if k not in doc}
    return json.dumps(doc, indent=2, sort_keys=False, default=str).encode()


def is_fleet_dir(path: str | Path) -> bool:
    return (Path(path) / FLEET_FILE).is_file()


def fleet_dir(ref: str | Path, root: Path | None = None) -> Path | None:
    """The fleet `ref` names, by its directory or by its name under ROOT/fleets (default: the
    runs root); None when it names no fleet."""
    for cand in (Path(ref), (root or runs_root()) / "fleets" / str(ref)):
        if is_fleet_dir(cand):
            return cand
    return None


# The folders iolab writes into a runs directory beside the runs (`iolab compare` without --out,
# a sequence's one report, a fleet's directory): what `iolab compare runs/*` names beside them.
RUNS_DIR_FOLDERS = {"compare": "comparisons", "sequences": "sequence reports", "fleets": "fleets"}


def runs_dir_folder(p: Path) -> str | None:
    """What `p` holds when it is one of the folders iolab writes beside the runs of a runs
    directory (it is no run, and a run is stored beside it); None otherwise."""
    if p.name not in RUNS_DIR_FOLDERS or not p.is_dir() or (p / "manifest.json").exists():
        return None
    beside = (d for d in p.parent.iterdir() if d.is_dir() and d != p)
    return RUNS_DIR_FOLDERS[p.name] if any((d / "manifest.json").is_file() for d in beside) else None


def not_a_run(ref: str, fleet: Path) -> IolabError:
    """The refusal of a fleet given to a command that takes runs (by its path here, by its name
    too in cli/fleet.refuse_fleets)."""
    return IolabError(
        f"{ref!r} is a fleet, not a run: `iolab fleet {fleet}` reports it (`--group-by LABEL` compares "
        "its groups), `iolab show` and `iolab report` take it as it is, and its drives' runs, which this "
        "command takes, are listed in its report (run_dir)."
    )


def resolve_run(ref: str | Path) -> Path:
    """A run is named by its directory path, by its directory's name under the runs root, or by
    its run id (the manifest's, which a renamed or copied directory keeps: `iolab runs` lists
    it), else by a part of a directory name or run id that one run alone there contains."""
    p = Path(ref)
    if (p / "manifest.json").exists():
        return p.resolve()
    q = runs_root() / str(ref)
    if (q / "manifest.json").exists():
        return q
    matches = runs_named(str(ref))
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        how, lists = (
            "by directory name or run id",
            "`iolab runs` shows each run's directory where it differs from its id",
        )
        raise ambiguous("run", str(ref), matches, runs_root(), how, lists)
    fleet = fleet_dir(ref)
    if fleet is not None:
        raise not_a_run(str(ref), fleet)
    # a name under the runs root counts as much as a path: `iolab runs` lists a directory there
    # that holds results.db but no manifest as a broken run, and `show NAME` said nothing was there
    there = p if p.exists() else q
    if there.exists() and not there.is_dir():  # there, but a file: say what it is not, not that nothing is there
        raise IolabError(
            f"run {ref!r}: {there} is {_node_kind(there)}, not a run directory (a run is "
            f"the directory `iolab run` stored, holding manifest.json, results.db and raw/). `iolab runs` lists "
            f"the runs under {runs_root()}."
        )
    if there.is_dir():  # there, but no run: say so, not that nothing is there
        raise IolabError(
            f"{ref!r}{'' if there is p else f' ({there})'} is a directory but not a run (it has no manifest.json; "
            "a run directory holds the "
            f"manifest, results.db and raw/ iolab wrote). `iolab runs` lists the runs under {runs_root()}."
        )
    raise IolabError(
        f"run {ref!r}: no such run directory (looked in {p} and {runs_root()}, and for a run there whose "
        f"directory name or run id contains {str(ref)!r}){_AS_TEXT if any(c in str(ref) for c in '*?[') else ''}. `iolab runs` lists runs."
    )


def _node_kind(p: Path) -> str:
    """What the non-directory at `p` is, in a few words."""
    mode = p.stat().st_mode
    for test, name in (
        (stat.S_ISREG, "a file"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a directory"


# A shell passes a pattern that matched no file on as it is (`iolab report *` in an empty
# directory): iolab reads it as text, as it reads every run reference.
_AS_TEXT = "; a run reference is text, not a pattern: `*`, `?` and `[` are characters of a run id to iolab"


def runs_named(text: str) -> list[Path]:
    """The runs under the runs root that `text` names, as it is written (README: "Where results
    go"): those whose run id is `text` (two copies of one run both, which the caller refuses as
    ambiguous); else those whose directory name or run id contains it. Plain text, never a glob
    pattern: the user's `*` or `**` went into Path.glob before, which raised ValueError ('**' can
    only be an entire path component) as a traceback, and a `?` or `[` matched ids that do not
    contain it. The run id is read from each manifest: a directory renamed or copied (an archived
    baseline) keeps its id, which `iolab runs` prints, and lookup by it said there was no such run."""
    if not text or "/" in text:  # an id is one name; empty text is in every id and names no run
        return []
    return named_among(text, stored_runs(runs_root()))


def stored_runs(root: Path) -> list[tuple[Path, str | None]]:
    """The runs under `root`, each with its run id (None: its manifest cannot be read)."""
    try:
        names = sorted(d.name for d in root.iterdir()) if root.is_dir() else []
    except OSError:  # an unreadable runs root holds no run this command can open
        return []
    return [
        (root / n, _run_id(root / n))
        for n in names
        if (root / n / "manifest.json").exists() and not not_a_run_of(root / n, root)
    ]


def named_among(text: str, named: Sequence[tuple[Path, str | None]]) -> list[Path]:
    """The directories of `named` (each with its own name: a run's id, a fleet's name) that `text`
    names: those whose own name is `text`, else those whose directory name or own name contains
    it. How `iolab show` finds a run and `iolab fleet` a fleet by a part of its name."""
    exact = [d for d, own in named if own == text]
    return exact or [d for d, own in named if text in d.name or text in (own or "")]


def ambiguous(what: str, ref: str, matches: Sequence[Path], where: Path, how: str, lists: str) -> IolabError:
    """The refusal of a name that `matches` several directories under `where`, naming them
    (`how` they match; `lists`: the command that lists them, and what it shows)."""
    shown = ", ".join(m.name for m in matches[:5]) + (", …" if len(matches) > 5 else "")
    return IolabError(
        f"{what} {ref!r} is ambiguous: {len(matches)} {what} directories under {where} match it ({how}): "
        f"{shown}. Name one by its directory ({lists})."
    )


def _run_id(run_dir: Path) -> str | None:
    """The run id a run directory's manifest holds (None when it cannot be read: its directory
    name still names it)."""
    try:
        doc = read_json(run_dir / "manifest.json", "run manifest", "manifest")
    except (OSError, IolabError):
        return None
    run_id = doc.get("run_id") if isinstance(doc, dict) else None
    return run_id if isinstance(run_id, str) else None
