"""Layer 4 of 12. May import: run, pages, figures, engines, store, traces, targets, core (a test
declares its plan and the pages, figures and views that show it). Imported by api and above.

The storage tests: one module per test, each declaring `TEST = TestDef(...)` (its plan
builder and the functions that show it; see iolab.suites.testdef) and listed in iolab.api.registry.
This package holds what the tests share: profiles, quick scaling, WIPC, common parameters.

(The project's own test suite is `tests/` at the repository root; this package holds the
*storage* tests iolab runs.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

from iolab.core.errors import IolabError
from iolab.core.plan import QUICK_CAPACITY, Profile, TestPlan
from iolab.core.profilewords import PROFILE_SETTINGS, cache_text, percent_text
from iolab.core.units import KiB, human_bytes, share_text, size_option
from iolab.core.workload import Stream, Workload
from iolab.suites.testdef import TestDef
from iolab.targets import Target, kind_of, parse_target

QUICK_CELL_SECONDS = 1.0
QUICK_MAX_ROUNDS = 10
# Target options that set a simulated drive's size: a quick run keeps a size the user chose.
SIM_SIZE_OPTIONS = ("user_gb", "blocks_per_plane", "pages_per_block", "capacity_gb")
_REVISIONS: dict[str, Literal["1.1", "2.0.2"]] = {"1.1": "1.1", "2.0.2": "2.0.2"}  # the PTS revisions iolab runs
_PROFILES: dict[str, Literal["enterprise", "client"]] = {"enterprise": "enterprise", "client": "client"}


def make_profile(name: str = "enterprise", *, quick: bool = False, spec: str = "2.0.2", **overrides: Any) -> Profile:
    """Enterprise: WCD, AR 100 %, TC4/QD32. Client: WCE, AR 75 %, TC2/QD16 (the PTS's common parameters).

    Quick scales the run down (shorter cells, a capacity limit, fewer rounds) and marks it
    non-compliant; any explicit override wins over both (a write cache or active range other
    than the profile's also makes the run non-compliant).
    """
    known = _PROFILES.get(name)
    if known is None:
        raise IolabError(f"profile {name!r}: unknown; use 'enterprise' or 'client'.")
    revision = _REVISIONS.get(spec)
    if revision is None:
        raise IolabError(f"spec revision {spec!r}: use '1.1' (PTS-E 1.1) or '2.0.2' (PTS 2.0.2).")
    p = Profile(name=known, spec=revision, **PROFILE_SETTINGS[known])
    if quick:
        p = replace(
            p, quick=True, cell_seconds=QUICK_CELL_SECONDS, capacity_limit=QUICK_CAPACITY, max_rounds=QUICK_MAX_ROUNDS
        )
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if overrides.get("capacity_limit") is not None and not overrides.get("capacity_limit_given"):
        # a caller's own limit, even at --quick's size, is named as its own (Profile.limit_source)
        overrides["capacity_limit_given"] = size_option(int(overrides["capacity_limit"]))
    return replace(p, **overrides)


def given_size(target: Target) -> dict[str, str]:
    """The size options a simulated target names (empty: the preset's size)."""
    return {k: v for k, v in target.options if k in SIM_SIZE_OPTIONS} if kind_of(target).simulated else {}


def copies(target: Target) -> bool:
    """Whether --quick tests a small copy of this target instead of a range of it: a simulated
    drive can be copied at a smaller size (a saved state, load=, cannot)."""
    return kind_of(target).simulated and "load" not in dict(target.options)


def quick_setup(profile: Profile, given: Target, test: TestDef) -> tuple[Profile, Target, tuple[str, ...]]:
    """The profile, target and run notes a test runs with. A quick run on a simulated drive
    tests a whole copy of it (quick_target); a test that needs a larger copy
    (`TestDef.quick_sim_gb`) gets that size, unless the user chose the limit with
    --capacity-limit."""
    if test.quick_sim_gb is not None and profile.quick and copies(given) and quick_limit(profile):
        profile = replace(profile, capacity_limit=round(test.quick_sim_gb * 1e9))
    run = quick_target(profile, given, test.quick_keeps_cache)
    return profile, run, quick_notes(profile, given, run, test.quick_keeps_cache)


def quick_limit(profile: Profile) -> bool:
    """The capacity limit is --quick's own: no --capacity-limit was given, even one of its size."""
    return profile.quick and profile.capacity_limit == QUICK_CAPACITY and not profile.capacity_limit_given


def quick_target(profile: Profile, target: Target, keep_cache: bool = False) -> Target:
    """A quick run on a simulated drive larger than the quick limit tests a small copy of it,
    whole: the same geometry ratios and over-provisioning at the quick capacity, so the write
    cliff and steady state still appear, sooner. Testing 0.5 GB of a 4 GB or 400 GB drive never
    takes its LBA range out of fresh-out-of-box: every write lands in the small range and the
    rest of the flash stays free, so a drive whose target gives its size is copied too. Any
    other target (a real drive, a file, a simulated drive loaded from a saved state) is tested
    as it is, cut to the capacity limit, and its figures say they are not the drive's steady
    state (phaseend.range_share)."""
    limit = profile.capacity_limit or QUICK_CAPACITY
    if not profile.quick or not copies(target) or target.capacity <= limit:
        return target
    from iolab.engines.simcopy import scaled_spec, smallest_copy  # lazy: the simulator is an optional native module

    try:
        copy = parse_target(scaled_spec(target, limit, keep_cache))
    except IolabError as e:
        # refused in the copy's own parameters (user_gb=1e-09 for --capacity-limit 1B), which the
        # user never gave: said instead in the option that sized the copy, with a size that works
        found = smallest_copy(target, limit, keep_cache)
        source = profile.limit_source()
        if found is None:  # not its size: the simulator's words, after the option's
            raise IolabError(f"{source} sized a copy of {target.spec} the simulator refuses: {e}") from None
        smallest, why = found
        raise IolabError(
            f"{source} makes too small a copy of {target.spec} to test: {why}. The smallest size it takes is "
            f"{human_bytes(smallest)}: give --capacity-limit {size_option(smallest)} or more."
        ) from None
    return replace(copy, copy_of=target.spec, copy_of_capacity=target.capacity)


def quick_notes(profile: Profile, given: Target, run: Target, keep_cache: bool = False) -> tuple[str, ...]:
    """What a quick run made of the simulated drive the user named, for the run's notes."""
    if not profile.quick or not kind_of(given).simulated:
        return ()
    if run is given:
        if tested_capacity(profile, run) >= int(run.capacity * profile.active_range):
            return (f"--quick tested the simulated drive whole ({run.capacity / 1e9:.3f} GB): it is within the limit",)
        return (
            f"--quick tested {tested_capacity(profile, run) / 1e9:.3f} GB of the simulated drive's "
            f"{run.capacity / 1e9:.3f} GB: a drive loaded from a saved state (load=) cannot be copied smaller, so "
            "its figures are not the drive's steady state",
        )
    cache = dict(run.options).get("slc_gb") if keep_cache else None
    kept = f"; its SLC cache kept at the drive's {cache} GB" if cache else ""
    size = given_size(given)
    sized = f" (its size as the target gives it: {', '.join(f'{k}={v}' for k, v in size.items())})" if size else ""
    source = profile.limit_source()
    # the copy's size named by the option the user gave; that option offered only when not given
    by = "" if source == "--quick" else f" (the size of {source})"
    hint = "; --capacity-limit SIZE chooses a larger copy" if source == "--quick" else ""
    copy = f"--quick simulated a {run.capacity / 1e9:.3f} GB copy{by} of {given.spec}{sized}"
    # the client profile's 75 % active range: "tested it whole" stood beside "tested 402.7 MB" of
    # the copy's 536.9 MB
    whole = (
        "it whole"
        if profile.active_range >= 1
        else f"its first {share_text(profile.active_range)} ({tested_capacity(profile, run) / 1e9:.3f} GB), the "
        "active range the drive's run would test"
    )
    if given.facts.rotational:
        # a disk has no over-provisioning and no fresh-out-of-box state to leave: the copy keeps
        # its platters' geometry over the smaller span (engines/simcopy.scaled_spec: capacity_gb alone)
        return (
            f"{copy}, its zones, seek curve and rotation spread over the copy's span (a random IO seeks as far "
            f"as on the drive), and tested {whole}{hint}",
        )
    from iolab.targets.sim_facts import copy_over_provisioning  # lazy: the simulator is an optional native module

    # the copy's spare as its pages' header says it: "the drive's over-provisioning" is true of all
    # its flash, not of the share garbage collection has beside a smaller copy's SLC cache
    op = copy_over_provisioning(run.path, dict(run.options))
    return (
        f"{copy}, with the drive's geometry ratios and the copy's {op}{kept}, and tested {whole}, so the copy "
        f"leaves fresh-out-of-box as the drive would{hint}",
    )


def no_input(build: Callable[[Profile, Target], TestPlan]) -> Callable[..., TestPlan]:
    """A test that takes no workload input, as a TestDef's `build`."""
    return lambda profile, target, workload=None: build(profile, target)


# -- shared building blocks of the PTS tests --------------------------------------------------


def tested_capacity(profile: Profile, target: Target) -> int:
    """Bytes of the target the test addresses: the active range, cut to the quick limit."""
    cap = int(target.capacity * profile.active_range)
    if profile.capacity_limit is not None:
        cap = min(cap, profile.capacity_limit)
    return cap


def untested_capacity(profile: Profile, target: Target) -> int:
    """Bytes of the drive outside a tested range that the quick limit cut (0 when it did not):
    after a purge, they take writes too before the drive leaves fresh-out-of-box."""
    cap = tested_capacity(profile, target)
    return target.capacity - cap if cap < int(target.capacity * profile.active_range) else 0


def limit_text(profile: Profile, target: Target) -> str:
    """What the capacity limit did to the active range, for the parameter line: the option it
    came from (--quick's own 512 MiB or --capacity-limit), and 'whole' when the range is within
    it, so a reader is not told a cut happened that did not."""
    limit = profile.capacity_limit
    tested = tested_capacity(profile, target)
    drive = target.drive_capacity
    if drive > target.capacity and (limit is None or untested_capacity(profile, target) == 0):
        # the device's own ?size= cut the range, not the limit: never "tested whole"
        return f", the device's first {tested / 1e9:.3f} GB of {drive / 1e9:.3f} GB (?size={target.option('size')})"
    if limit is None:
        return ""
    whole = untested_capacity(profile, target) == 0
    source = profile.limit_source()
    if whole and target.copy_of:
        # the limit sized the copy (quick_setup may have replaced --quick's for a larger one)
        of = "" if source == "--quick" else f", the size of {source}"
        # the copy is the limit's size, the range tested its active range of it (client: 75 % of it)
        size = "at this size" if tested >= target.capacity else f"of {target.capacity / 1e9:.3f} GB"
        return f", tested whole ({tested / 1e9:.3f} GB): --quick simulated a copy of the drive {size}{of}"
    if whole:
        return f", tested whole ({tested / 1e9:.3f} GB): within the {limit / 1e9:.3f} GB limit of {source}"
    return f", limited to {tested / 1e9:.3f} GB ({source})"


def active_fraction(profile: Profile, target: Target) -> float:
    return tested_capacity(profile, target) / target.capacity


def wipc(profile: Profile, target: Target, block_size: int = 128 * KiB) -> Workload:
    """Workload-independent preconditioning: SEQ writes of 2× the tested capacity (A.2)."""
    cap = tested_capacity(profile, target)
    return Workload.mix(
        "seq",
        0,
        block_size,
        threads=1,
        queue_depth=32,
        active_range=active_fraction(profile, target),
        bytes_budget=int(profile.precondition_factor * cap),
        name=f"WIPC SEQ {block_size // KiB}KiB W",
    )


def block_size_problem(block_size: int, target: Target) -> str | None:
    """Why direct IO cannot issue this block size on the target (None: it can): it must be whole
    logical sectors. A 3,000 B block was taken, the target purged, and every fio job then failed
    with EINVAL."""
    sector = target.facts.logical_sector or 512
    if block_size < sector:
        return f"below the target's {sector} B logical sector"
    if block_size % sector:
        return f"not a whole number of the target's {sector} B logical sectors"
    return None


def supported_block_sizes(sizes: list[int], target: Target) -> tuple[list[int], list[str]]:
    """Drop the block sizes direct IO cannot issue on the device (block_size_problem)."""
    keep = [b for b in sizes if block_size_problem(b, target) is None]
    notes = [f"{b} B block size skipped: {why}" for b in sizes if (why := block_size_problem(b, target))]
    return keep, notes


def common_parameters(profile: Profile, target: Target) -> list[tuple[str, str]]:
    (_, _, own_cache), (_, _, own_range) = profile.own_settings()
    return [
        (
            "Profile",
            f"{profile.name} ({cache_text(profile.write_cache)}"
            + (f" by --write-cache; the profile's: {own_cache})" if own_cache else ")"),
        ),
        (
            "Active range",
            percent_text(profile.active_range)
            + (f" by --active-range (the profile's: {own_range})" if own_range else "")
            + limit_text(profile, target),
        ),
        ("Data pattern", "random (incompressible)"),
        ("Cell duration", f"{profile.cell_seconds:g} s"),
    ]


# The Composite Block Size Workload (ECW in 1.1, CBW in 2.0; SNIA PTS 2.0): % of IOs per block
# size, and the LBA skew as (share of IOs, share of the range) from LBA 0.
CBW_MIX = (
    (512, 4),
    (1024, 1),
    (1536, 1),
    (2048, 1),
    (2560, 1),
    (3072, 1),
    (3584, 1),
    (4 * KiB, 67),
    (8 * KiB, 10),
    (16 * KiB, 7),
    (32 * KiB, 3),
    (64 * KiB, 3),
)
CBW_ZONES = ((0.50, 0.05), (0.30, 0.15), (0.20, 0.80))
CBW_TEXT = "CBW: RND 0.5–64 KiB mix (4 KiB 67 %), 50 % of IOs to the first 5 % of LBAs, 30 % to the next 15 %"


def cbw(read_pct: float, target: Target, **kw: Any) -> Workload:
    """The CBW at a read share, random, with its block-size mix and LBA skew."""
    sector = target.facts.logical_sector or 512
    if sector > CBW_MIX[0][0]:
        raise IolabError(
            f"the Composite Block Size Workload issues 0.5–3.5 KiB IOs, below this target's {sector} B "
            "logical sector; direct IO cannot issue them. Nothing was run or written."
        )
    streams = tuple(
        Stream("rnd", op, bs, pct / 100 * (read_pct if op == "read" else 100 - read_pct) / 100)
        for bs, pct in CBW_MIX
        for op in ("read", "write")
        if (read_pct if op == "read" else 100 - read_pct) > 0
    )
    return Workload(streams=streams, zones=CBW_ZONES, **kw)
