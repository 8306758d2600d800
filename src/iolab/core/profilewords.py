"""The words a run's profile is told in: what scaled it down (--quick, --capacity-limit), its
write cache and active range beside the profile's own, a short cell's non-compliance. Read from
a Profile (core/plan) or from the profile a manifest stores, so old runs are told as new ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iolab.core.units import share_text, size_option

PROFILE_SETTINGS: dict[str, dict[str, Any]] = {
    "enterprise": {"write_cache": False, "active_range": 1.0, "threads": 4, "queue_depth": 32},
    "client": {"write_cache": True, "active_range": 0.75, "threads": 2, "queue_depth": 16},
}


def cell_time_text(seconds: float) -> str:
    """The non-compliance of cells shorter than the PTS's 60 s."""
    return f"{seconds:g} s per cell instead of 60 s"


def limit_source(profile: Mapping[str, Any]) -> str:
    """What set a profile's (or a stored one's) capacity limit, as the user gave it:
    "--capacity-limit 512MiB", "--quick" (its own limit, or the larger copy a test's --quick
    takes); "" when there is none."""
    limit = profile.get("capacity_limit")
    if limit is None:
        return ""
    if profile.get("capacity_limit_given"):
        return f"--capacity-limit {profile['capacity_limit_given']}"
    # a quick run stored before the text was kept: its limit was --quick's unless the user's,
    # which the run did not record
    return "--quick" if profile.get("quick") else f"--capacity-limit {size_option(int(limit))}"


def scaled_by(profile: Mapping[str, Any]) -> list[str]:
    """Each option that scaled a run down, as the user gave it: ["--quick", "--capacity-limit
    512MiB"] (a profile as a manifest stores it); empty for a run at full scale."""
    source = limit_source(profile)
    return (["--quick"] if profile.get("quick") else []) + ([source] if source and source != "--quick" else [])


def scaled_text(profile: Mapping[str, Any]) -> str:
    """'--quick and --capacity-limit 512MiB' ('' for a run at full scale)."""
    return " and ".join(scaled_by(profile))


def profile_settings(name: str, write_cache: bool, active_range: float) -> list[tuple[str, str, str]]:
    """(option, the run's setting, the profile's own where the option replaced it, else '') for
    the write cache and the active range; read from a Profile or a stored one."""
    own = PROFILE_SETTINGS.get(name, {"write_cache": write_cache, "active_range": active_range})
    cache, span = own["write_cache"], own["active_range"]
    return [
        ("--write-cache", f"write cache {cache_text(write_cache)}", cache_text(cache) if write_cache != cache else ""),
        (
            "--active-range",
            f"active range {percent_text(active_range)}",
            percent_text(span) if active_range != span else "",
        ),
    ]


def cache_text(enabled: bool) -> str:
    return "WCE" if enabled else "WCD"  # write cache enabled / disabled, as the PTS writes it


percent_text = share_text  # the active range, as every share is printed
