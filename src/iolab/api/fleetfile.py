"""A fleet file (TOML): the drives one `iolab run TEST --fleet FILE` tests at once, on this machine
and on fio-server or ssh hosts, with their labels (firmware group, rack, ...).

    [fleet]
    name = "pm-fw-a"            # optional: names the fleet directory
    parallel = 8                # optional: at most this many drives at once (default: all)
    spec_sheet = "sheet.toml"   # optional: acceptance criteria (figures/specsheet.py), beside this file
    outlier_k = 3.5             # optional: the outlier rule's k (median ± k × MAD-sigma)
    outlier_min_pct = 5.0       # optional: ... and at least this far from the median (%)
    group_by = "firmware"       # optional: compare the groups of this label (iolab check's way)
    baseline = "A"              # optional: the group the others are compared with (default: the first)

    [[drive]]                   # a drive of this machine: a device, file: or sim: target
    target = "sim:enterprise-sas?user_gb=0.25&seed={i}"
    count = 8                   # optional: 8 drives, {i} = 1..8 in target and name
    name = "sim{i}"             # optional (default: model+serial, else the file name: default_names)
    labels = { group = "A" }

    [[host]]                    # a host: the fields of a --hosts-file [[host]] table ...
    address = "10.0.0.2"
    labels = { rack = "r1" }
    [[host.drive]]              # ... and its drives: the target as this machine names it,
    target = "file:/data/d0.img?size=8GiB"   # its path the one the host's fio opens
                                # (a device, a file, or an NBD URI the host's fio reaches)

Parsing checks everything before anything runs; a bad file is one paragraph (IolabError, exit 2)
that names the file, the table and the field."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from iolab import targets
from iolab.core.errors import IolabError
from iolab.core.safefile import loads_toml, read_config
from iolab.core.usertext import check_text
from iolab.engines.hostlist import Host, host_from_table
from iolab.engines.hosttargets import parse_on_hosts

FLEET_FIELDS = {"name", "parallel", "spec_sheet", "outlier_k", "outlier_min_pct", "group_by", "baseline"}
DRIVE_FIELDS = {"target", "name", "labels", "count"}
MAX_DRIVES = 4096
_NAME_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


@dataclass(frozen=True)
class FleetDrive:
    """One drive of a fleet: `target` as `iolab run --target` takes it; `host` None: this machine."""

    name: str
    target: str
    host: Host | None = None
    labels: dict[str, str] = field(default_factory=dict)
    # the default names of a drive the file names not (shortest first, default_names); empty when named
    defaults: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return self.host.name if self.host else "local"


@dataclass(frozen=True)
class Fleet:
    path: Path
    text: str  # the file as read, kept in the fleet directory
    name: str
    drives: tuple[FleetDrive, ...]
    parallel: int | None = None
    spec_sheet: Path | None = None
    outlier_k: float | None = None
    outlier_min_pct: float | None = None
    group_by: str | None = None
    baseline: str | None = None


def load_fleet(path: Path, base: Path | None = None) -> Fleet:
    """The fleet file at `path`, checked (IolabError names what is wrong and where). A relative
    `file:` path of this machine is `base`'s (default: the current directory, as `--target` reads
    it), and the drive's target names it whole: `iolab resume FLEET` from another directory gives
    the fleet's own directory as `base`, where it ran a drive on a new file of the same name there
    and reported it as the fleet's drive."""
    what = f"fleet file {path}"
    base = base or Path.cwd()
    text = read_config(path, "fleet file")
    data = loads_toml(text, what)
    unknown = set(data) - {"fleet", "drive", "host"}
    if unknown:
        raise IolabError(
            f"{what}: unknown table {sorted(unknown)[0]!r}; a fleet file holds [fleet], [[drive]] and [[host]] "
            "(with [[host.drive]]) tables."
        )
    head = _table(data.get("fleet", {}), f"{what}, [fleet]", FLEET_FIELDS)
    drives: list[FleetDrive] = []
    for i, t in enumerate(_tables(data, "drive", what)):
        drives += _drives(t, None, {}, f"{what}, [[drive]] #{i + 1}", base)
    for i, t in enumerate(_tables(data, "host", what)):
        where = f"{what}, [[host]] #{i + 1}"
        if not isinstance(t, dict):
            raise IolabError(f"{where}: expected a table.")
        if "target" in t:
            raise IolabError(f"{where}: a host's targets are its [[host.drive]] tables, not a 'target' field.")
        host = host_from_table(t, where, frozenset({"labels", "drive"}))
        labels = _labels(t.get("labels", {}), where)
        tables = t.get("drive")
        if not isinstance(tables, list) or not tables:
            raise IolabError(f"{where}: give the host's drives as [[host.drive]] tables (none found).")
        for j, d in enumerate(tables):
            drives += _drives(d, host, labels, f"{where}, [[host.drive]] #{j + 1}")
    if not drives:
        raise IolabError(f"{what}: no drive in it; give [[drive]] tables, or [[host]] tables with [[host.drive]].")
    drives = named(drives)
    _unique(drives, what)
    parallel = head.get("parallel")
    if parallel is not None and (isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1):
        raise IolabError(
            f"{what}, [fleet]: field 'parallel' is {parallel!r}; give a whole number of drives, 1 or more."
        )
    k = head.get("outlier_k")
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, float)) or not 0 < k <= 100):
        raise IolabError(f"{what}, [fleet]: field 'outlier_k' is {k!r}; give a number above 0 (e.g. 3.5).")
    pct = head.get("outlier_min_pct")
    if pct is not None and (isinstance(pct, bool) or not isinstance(pct, (int, float)) or not 0 <= pct < 100):
        raise IolabError(f"{what}, [fleet]: field 'outlier_min_pct' is {pct!r}; give a percentage from 0 to below 100.")
    sheet = head.get("spec_sheet")
    if sheet is not None:
        sheet = path.parent / _text(sheet, f"{what}, [fleet]: field 'spec_sheet'")
    name = fleet_name(head.get("name", path.stem), f"{what}, [fleet]: field 'name'")
    group_by, baseline = (
        None if head.get(f) is None else _text(head[f], f"{what}, [fleet]: field {f!r}")
        for f in ("group_by", "baseline")
    )
    if baseline is not None and group_by is None:
        raise IolabError(f"{what}, [fleet]: field 'baseline' needs field 'group_by' (the label whose groups it names).")
    if group_by is not None and not any(group_by in d.labels for d in drives):
        raise IolabError(f"{what}, [fleet]: group_by = {group_by!r}, but no drive has that label.")
    return Fleet(
        path,
        text,
        name,
        tuple(drives),
        parallel,
        sheet,
        None if k is None else float(k),
        None if pct is None else float(pct),
        group_by,
        baseline,
    )


def _tables(data: dict, key: str, what: str) -> list:
    tables = data.get(key, [])
    if not isinstance(tables, list):
        raise IolabError(f"{what}: {key!r} must be [[{key}]] tables.")
    return tables


def _table(t, where: str, allowed: set[str]) -> dict:
    if not isinstance(t, dict):
        raise IolabError(f"{where}: expected a table.")
    unknown = set(t) - allowed
    if unknown:
        raise IolabError(f"{where}: unknown field {sorted(unknown)[0]!r}; fields are {', '.join(sorted(allowed))}.")
    return t


def _text(v, where: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise IolabError(f"{where} must be a non-empty string (found {v!r}).")
    return check_text(v, where)


def fleet_name(v, where: str) -> str:
    s = _text(v, where)
    bad = sorted(set(s) - _NAME_OK)
    if bad or len(s) > 64 or s in (".", ".."):  # '.' and '..' would name the drives/ or fleet directory
        # a name of thousands of characters was echoed whole: a screenful, not one paragraph
        said = repr(s) if len(s) <= 80 else f"{s[:40]!r}… ({len(s):,} characters)"
        raise IolabError(
            f"{where} is {said}; a name is at most 64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', and not '.' or '..' "
            "(it names files in the fleet directory)."
        )
    return s


def _labels(v, where: str) -> dict[str, str]:
    if not isinstance(v, dict) or not all(isinstance(x, (str, int, float)) for x in v.values()):
        raise IolabError(
            f"{where}: field 'labels' must be a table of names and values (labels = {{ firmware = \"A\" }})."
        )
    blank = next((k for k, x in v.items() if not k.strip() or not str(x).strip()), None)
    if blank is not None:  # `--group-by ""` and `--baseline ""` are refused: such a label could never be chosen
        raise IolabError(
            f"{where}: field 'labels' has a label {blank!r} = {str(v[blank])!r}; a label needs a name and a value "
            '(labels = { firmware = "A" }).'
        )
    return {check_text(k, f"{where}: label"): check_text(str(x), f"{where}: label {k!r}") for k, x in v.items()}


def _pinned(spec: str, base: Path) -> str:
    """A `file:` spec of this machine with its path made absolute against `base` (else as given)."""
    if not spec.startswith("file:"):
        return spec
    raw, q, rest = spec[len("file:") :].partition("?")
    if not raw or os.path.isabs(os.path.expanduser(raw)):
        return spec
    return f"file:{os.path.normpath(base / raw)}{q}{rest}"


def _drives(
    t, host: Host | None, host_labels: dict[str, str], where: str, base: Path | None = None
) -> list[FleetDrive]:
    t = _table(t, where, DRIVE_FIELDS)
    if "target" not in t:
        raise IolabError(f"{where}: field 'target' is missing (e.g. target = \"/dev/nvme0n1\").")
    count = t.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_DRIVES:
        raise IolabError(f"{where}: field 'count' is {count!r}; give a whole number from 1 to {MAX_DRIVES}.")
    spec = _text(t["target"], f"{where}: field 'target'")
    name = t.get("name")
    if count > 1 and ("{i}" not in spec or (name is not None and "{i}" not in str(name))):
        raise IolabError(
            f"{where}: count = {count} needs {{i}} in 'target' (and in 'name' if given), so that each drive differs "
            '(e.g. target = "sim:enterprise-sas?seed={i}").'
        )
    labels = {**host_labels, **_labels(t.get("labels", {}), where)}
    out = []
    for i in range(1, count + 1):
        given = spec.replace("{i}", str(i))
        s = _pinned(given, base) if host is None and base is not None else given
        try:
            tgt = drive_target(s, host)
        except IolabError as e:
            raise IolabError(f"{where}: {e}") from None
        if host is not None and tgt.kind not in ("block", "file", "nbd"):
            raise IolabError(
                f"{where}: target {s!r} is a {tgt.kind} target; a host's drive is a device, a file:PATH?size=... "
                "or an NBD export (nbd://..., nbd+unix:///?socket=...) its fio server opens."
            )
        if name is not None:
            out.append(FleetDrive(fleet_name(str(name).replace("{i}", str(i)), f"{where}: name"), s, host, labels))
            continue
        serial = serial_name(tgt.facts.model, tgt.facts.serial) if tgt.kind == "block" and host is None else None
        defaults = default_names(given, host, serial)
        out.append(FleetDrive(defaults[0], s, host, labels, defaults))
    return out


def drive_target(spec: str, host: Host | None) -> targets.Target:
    """A drive's target as its run reads it: a host's as that host reaches it (hosttargets.py)."""
    return targets.parse_target(spec) if host is None else parse_on_hosts(spec, [host])


def _safe(text: str) -> str:
    """`text` in the characters a name may hold (each other one '_'), without '_' at its ends."""
    return "".join(c if c in _NAME_OK else "_" for c in text).strip("_")


def serial_name(model: str | None, serial: str | None) -> str | None:
    """A drive's name from what it reports of itself: its model and serial, the same on every run
    and every host that reaches it (None: it reports no serial). The model is shortened where the
    two would pass 64 characters; the serial never is."""
    sn = _safe(serial or "")
    if not sn:
        return None
    mn = _safe(model or "")[: max(0, 63 - len(sn))].rstrip("_")
    return (f"{mn}_{sn}" if mn else sn)[-64:]


def default_names(spec: str, host: Host | None, serial: str | None = None) -> tuple[str, ...]:
    """The names a drive the file does not name may get, shortest first (`named` gives each the
    first no other drive has): a device that reports a serial by its model and serial (then with
    its node: two namespaces of one controller); else its file or device name, then with the
    directories above it, a host's after the host's address (two hosts' /data/d1.img), then the
    whole path. An NBD export (its socket or export names it after the '?') and a simulated drive
    (its preset, parameters and seed) keep their whole spec."""
    pre = f"{host.address}_" if host else ""
    if spec.startswith(("nbd", "sim:")):
        return (_safe(pre + spec.removeprefix("sim:"))[-64:] or "drive",)
    path = spec.removeprefix("file:").split("?", 1)[0].rstrip("/")
    parts = [p for p in path.split("/") if p]
    if not parts:
        return (_safe(pre + spec)[-64:] or "drive",)
    names = [serial, f"{serial}_{parts[-1]}"] if serial else []
    tails = ["_".join(parts[-k:]) for k in range(1, len(parts) + 1)]
    names += [tails[0]] + [pre + t for t in tails] if host else tails
    out = [n for n in (_safe(x)[-64:] for x in names if x) if n not in ("", ".", "..")]  # '..': drives/NAME
    return tuple(dict.fromkeys(out)) or ("drive",)


def named(drives: list[FleetDrive]) -> list[FleetDrive]:
    """Each drive the file does not name given the first of its default names no other drive has
    (the names given in the file stay as they are): short where that is unique (d1.img), longer
    only for the drives whose shorter names meet."""
    level = [0] * len(drives)
    while True:
        names = [d.defaults[min(level[i], len(d.defaults) - 1)] if d.defaults else d.name for i, d in enumerate(drives)]
        seen: dict[str, int] = {}
        for n in names:
            seen[n] = seen.get(n, 0) + 1
        longer = [i for i, d in enumerate(drives) if seen[names[i]] > 1 and level[i] < len(d.defaults) - 1]
        if not longer:
            return [replace(d, name=n) if d.defaults else d for d, n in zip(drives, names)]
        for i in longer:
            level[i] += 1


def _unique(drives: list[FleetDrive], what: str) -> None:
    names: set[str] = set()
    places: dict[tuple[str, str], str] = {}
    for d in drives:
        if d.name in names:
            raise IolabError(f"{what}: two drives are named {d.name!r}; give each drive its own name.")
        names.add(d.name)
        tgt = drive_target(d.target, d.host)
        key = (d.host.machine if d.host else "local", tgt.path if tgt.kind != "sim" else sim_key(tgt))
        if key in places:
            raise IolabError(
                f"{what}: drives {places[key]!r} and {d.name!r} are the same drive ({d.target} on {d.where}); "
                "a drive is tested once per fleet (simulated drives: give each its own seed)."
            )
        places[key] = d.name


def sim_key(tgt: targets.Target) -> str:
    """A `sim:` target's identity: one preset, parameters and seed, however the spec writes them."""
    from iolab.targets.sim_facts import drive_key

    return repr(drive_key(tgt.path, dict(tgt.options)))
