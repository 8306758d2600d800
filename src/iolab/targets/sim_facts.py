"""What the target layer knows about a simulated drive: the simulator's description of
`sim:PRESET?options` (capacity, kind, over-provisioning) and the device facts iolab shows for
it. Below both the targets and the sim engine, so parsing a sim: spec never reaches up into
an engine."""

from __future__ import annotations

import functools
import json

from iolab import _sim
from iolab.core.errors import IolabError
from iolab.core.safefile import check_regular
from iolab.targets.model import DeviceFacts

# Target options that steer the engine rather than describe the drive (port=: which of its host
# paths a spec names, see engines/sim_paths.py).
STATE_OPTIONS = ("load", "save", "seed", "port")
SEED_MAX = 0xFFFF_FFFF
# Host ports by interface: SAS drives are dual-ported, as enterprise NVMe drives can be (the
# model gives every NVMe preset two); SATA has one.
PORTS = {"sas": 2, "nvme": 2, "sata": 1}


def drive_key(preset: str, options: dict[str, str]) -> tuple:
    """What makes two `sim:` specs one simulated drive (same preset, parameters and workload
    seed), whatever the order of their options or how a number is written: no seed is seed 0
    (engines/sim.py mixes a seed in by xor), 0.25 and .250 are one value, and a parameter at the
    preset's default is the preset's own (sim:enterprise-sas?user_gb=400 is sim:enterprise-sas)."""
    return (preset, tuple(sorted((k, _value(k, v)) for k, v in drive_options(preset, options).items())))


def drive_of_spec(spec: str) -> str:
    """The drive a target spec names, as one key: a sim: spec's drive_key without its seed, any
    other spec as written. seed=k changes the simulated drive's random stream, not the drive: its
    runs are more runs of that drive, as `iolab history` keeps them on the drive's line
    (automation/history.drive_of) and a sequence report takes them (pages/report/sequence.py)."""
    if not spec.startswith("sim:"):
        return spec
    preset, _, query = spec.removeprefix("sim:").partition("?")
    return seedless_drive(preset, dict(q.partition("=")[::2] for q in query.split("&") if q))


def seedless_drive(preset: str, options: dict[str, str]) -> str:
    """The simulated drive `options` make, as one key, whatever their seed (drive_of_spec)."""
    return repr(drive_key(preset, {k: v for k, v in options.items() if k != "seed"}))


def drive_options(preset: str, options: dict[str, str]) -> dict[str, str]:
    """A spec's options as the drive they make: its seed (0 when none is given), and each other
    option but a drive parameter that leaves the drive as it is (user_gb=400 on enterprise-sas,
    or op=0.28 where user_gb=400 is given too). Parameters the simulator does not read (an
    unknown preset, a value it refuses) count as written."""
    given = {"seed": "0"} | dict(options)
    at_default = _at_default(preset, tuple(drive_params(options)))
    return {k: v for k, v in given.items() if k not in at_default}


@functools.lru_cache(maxsize=256)
def _at_default(preset: str, params: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """The parameters of `params` that change nothing: the drive the simulator resolves is the
    same without them. Judged on the whole resolved drive, not on a parameter's own value: with
    user_gb given, op is turned into the flash geometry and reads back as the preset's '', so
    user_gb=0.25&op=1.0 (OP 99.6 %) was taken for user_gb=0.25 (OP 28.3 %), one drive to a fleet,
    `iolab history` and the target checks. Dropped one at a time until none is left to drop
    (user_gb=400&op=0.28: op changes nothing, then user_gb neither)."""

    def drive(ps: list[tuple[str, str]]) -> dict | None:
        try:
            return json.loads(_sim.describe(preset, ps))
        except (ValueError, KeyError, TypeError):
            return None

    kept = list(params)
    dropped = True
    while dropped:
        dropped = False
        whole = drive(kept)
        if whole is None:
            return frozenset()
        for i in range(len(kept)):
            # a drive refused without the parameter is not the same drive: compression=on is
            # kept where compress_floor=0.3 (which acts only with it) is given too
            if drive(kept[:i] + kept[i + 1 :]) == whole:
                del kept[i]
                dropped = True
                break
    return frozenset(k for k, _ in params) - {k for k, _ in kept}


def _value(k: str, v: str) -> object:
    if k == "seed":
        return int(v)
    # as the simulator reads it (config/resolve.rs merged): gc=FIFO is gc=fifo's drive
    v = v.strip().lower()
    try:
        x = float(v)
    except ValueError:
        return v
    return x if x == x else v


def saved_mismatch(preset: str, options: dict[str, str], saved: list) -> str | None:
    """What a saved state's resolved parameters (`saved`, the loaded drive's) set otherwise
    than the drive `sim:PRESET?options` describes, as a refusal's words; None when they agree
    (numbers by value: 0.25 and .250 are one). A loaded drive runs with the parameters it was
    saved with: a target adding gc=fifo or t_prog_us=5000 to a state saved without them ran the
    saved drive while the run recorded the target's, every figure labelled with a drive that
    never ran."""
    given = dict(describe(preset, options)["params"])
    differ = [(k, v, given.get(k, "")) for k, v in saved if _value(k, v) != _value(k, given.get(k, ""))]
    if not differ:
        return None
    was = ", ".join(f"{k}={a or '(unset)'}" for k, a, _ in differ)
    wants = ", ".join(f"{k}={b or '(unset)'}" for k, _, b in differ)
    return (
        f"was saved from a drive with {was}, not {wants} as this target describes, and a loaded drive "
        "runs with the parameters it was saved with. Give the same preset and parameters the state was saved with."
    )


def drive_params(options: dict[str, str]) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in options.items() if k not in STATE_OPTIONS]


def describe(preset: str, options: dict[str, str]) -> dict:
    """The simulator's facts about a preset with parameters (no drive is built)."""
    seed = options.get("seed")
    if seed is not None and not (seed.isascii() and seed.isdigit()):
        raise IolabError(
            f"target sim:{preset}: seed={seed!r} is not a seed; give a whole number from 0 to {SEED_MAX} (e.g. seed=7)."
        )
    if seed is not None and int(seed) > SEED_MAX:
        # the engine keeps a seed's low 32 bits: seed=4294967297 would be seed=1's drive again
        raise IolabError(
            f"target sim:{preset}: seed={seed} is above {SEED_MAX:,}; give a seed from 0 to {SEED_MAX} "
            "(the simulator's seeds are 32-bit)."
        )
    try:
        info = json.loads(_sim.describe(preset, drive_params(options)))
    except ValueError as e:
        raise IolabError(f"target sim:{preset}: {e}") from None
    _check_port(preset, options.get("port"), info["interface"])
    return info


def _check_port(preset: str, port: str | None, interface: str) -> None:
    """port=N names one of the drive's host ports: a port it does not have is refused, as a
    real drive's missing port could not be reached."""
    if port is None:
        return
    n = PORTS.get(interface, 1)
    if not port.isdigit():
        raise IolabError(f"target sim:{preset}: port={port!r} is not a port number (0, 1, ...).")
    if int(port) >= n:
        ports = "port 0 only" if n == 1 else "ports 0 and 1" if n == 2 else f"ports 0 to {n - 1}"
        raise IolabError(
            f"target sim:{preset}: port={port}: this drive ({interface.upper()}) has {n} host "
            f"port{'s' if n > 1 else ''}, {ports}."
        )


def over_provisioning(info: dict, full: dict | None = None) -> str:
    """The drive's over-provisioning as the model line shows it: the spare garbage collection
    has. An SLC cache's blocks count in `op` (all the flash) but are no spare for GC, so a drive
    with one shows both, named (client-nvme-slc's 14.8 % once stood alone; GC has 9.7 %).
    Each figure is the simulated drive's; `full`, the drive a resized copy stands for (the same
    parameters at the preset's size: full_size), gives its own figure beside one that differs."""
    flash = f"{info['op']:.1%}{_beside(info['op'], None if full is None else full['op'])}"
    if not info["slc_blocks"]:
        return f"OP {flash}"
    gc = f"{info['op_for_gc']:.1%} for GC{_beside(info['op_for_gc'], None if full is None else full['op_for_gc'])}"
    return f"OP {gc}, {flash} with the SLC cache"


def copy_over_provisioning(preset: str, options: dict[str, str]) -> str:
    """`sim:PRESET?options`'s over-provisioning as its model line (every page's header) shows it,
    beside the drive's at full size where a resized copy's differs: `iolab plan`'s note on a quick
    copy says it in these words, so the plan and the pages cannot say two things of one copy."""
    return over_provisioning(describe(preset, options), full_size(preset, options))


def _beside(shown: float, preset: float | None) -> str:
    """The figure of the drive at the preset's size, where it differs from the one shown as printed."""
    if preset is None or f"{preset:.1%}" == f"{shown:.1%}":
        return ""
    return f" ({preset:.1%} at full size)"


def full_size(preset: str, options: dict[str, str]) -> dict | None:
    """The drive a copy resized with user_gb (--quick's, or the user's) stands for: the same
    parameters without user_gb, at the preset's size; None when none is given. A copy keeps the
    preset's over-provisioning over all its flash, but its SLC cache is whole blocks of far fewer
    (at least 128: resolve.rs): client-nvme-slc's 0.537 GB quick copy has 7 SLC blocks of 147,
    the drive 20 of 456, so garbage collection has 9.4 % spare where the preset has 9.7 %."""
    if "user_gb" not in options:
        return None
    try:
        return describe(preset, {k: v for k, v in options.items() if k != "user_gb"})
    except IolabError:  # those parameters make no drive at the preset's size: nothing to set beside
        return None


def describe_target(preset: str, options: dict[str, str]) -> tuple[int, DeviceFacts]:
    """Capacity and device facts of `sim:PRESET?options` (called by targets.parse_target)."""
    if "load" in options:
        # The simulator reads the state file: a FIFO there blocked it for ever, with the run marked running.
        check_regular(options["load"], f"target sim:{preset}: the saved state (load=)")
    info = describe(preset, options)
    ssd = info["kind"] == "ssd"
    # The over-provisioning goes in the model line, which every report's header shows.
    model = f"sim SSD {preset}, {copy_over_provisioning(preset, options)}" if ssd else f"sim HDD {preset}"
    facts = DeviceFacts(
        vendor="iolab",
        model=model,
        firmware=f"sim-{_sim.__version__}",
        capacity_bytes=int(info["capacity_bytes"]),
        logical_sector=512,
        physical_sector=4096 if ssd else 512,
        rotational=not ssd,
        interface="sim",
        # A new simulated drive has its write cache enabled; the runner sets it per profile.
        write_cache="enabled",
        sources=("iolab-sim",),
        # The preset's rated endurance (source "preset" on the Endurance page); --pe-cycles and
        # --warranty-years override it. None for an HDD.
        rated_pe_cycles=info.get("rated_pe_cycles"),
        warranty_years=info.get("warranty_years"),
    )
    return int(info["capacity_bytes"]), facts
