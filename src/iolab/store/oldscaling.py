"""What scaled down a quick run stored before its profile kept --capacity-limit's text
(`capacity_limit_given`): such a run said "--quick simulated a copy of the drive at this size"
and "--capacity-limit SIZE chooses a larger copy" of a copy the user's --capacity-limit had sized,
on every page. Its own stored options tell the two apart: --quick set 512 MiB, or a test's larger
copy of whole decimal GB (TestDef.quick_sim_gb: round(gb × 1e9)); any other size was the user's.
A user's limit of exactly those sizes cannot be told from --quick's and stays credited to it.

`credit_limit` names the option in the manifest's document as it is read (Manifest.from_document),
so every page, `show` and the sequence report say what today's runs say."""

from __future__ import annotations

import re
from typing import Any

from iolab.core.plan import QUICK_CAPACITY
from iolab.core.units import size_option

_COPY_NOTE = re.compile(r"^--quick simulated a ([\d.]+) GB copy of ([^\s,]+)")
_LARGER = "; --capacity-limit SIZE chooses a larger copy"
_RANGE = "--quick simulated a copy of the drive at this size"


def users_limit(profile: dict[str, Any]) -> str | None:
    """The --capacity-limit text of an old quick run's user limit (None: not such a run)."""
    limit = profile.get("capacity_limit")
    if not profile.get("quick") or "capacity_limit_given" in profile or type(limit) is not int:
        return None
    if limit == QUICK_CAPACITY or limit % 10**9 == 0:
        return None  # --quick's own, or a test's larger quick copy
    return size_option(limit)


def credit_limit(doc: dict[str, Any]) -> None:
    """Name the user's --capacity-limit in an old quick run's document (in place): the profile's
    text, the active range's parameter, the copy's note and a non-compliance line of its own."""
    profile = doc.get("profile")
    if not isinstance(profile, dict) or (given := users_limit(profile)) is None:
        return
    source = f"--capacity-limit {given}"
    profile["capacity_limit_given"] = given
    params = doc.get("parameters")
    if (
        isinstance(params, dict)
        and isinstance(params.get("Active range"), str)
        and source not in params["Active range"]
    ):
        params["Active range"] = params["Active range"].replace(_RANGE, f"{_RANGE}, the size of {source}")
    notes = doc.get("notes")
    if not isinstance(notes, list):
        return
    for i, note in enumerate(notes):
        copy = _COPY_NOTE.match(note) if isinstance(note, str) else None
        if copy is None:
            continue
        notes[i] = note.replace(" GB copy of ", f" GB copy (the size of {source}) of ", 1).replace(_LARGER, "")
        lines = doc.get("noncompliance")
        if isinstance(lines, list) and not any(source in str(n) for n in lines):
            lines.append(f"a {copy.group(1)} GB copy of {copy.group(2)}, its size set by {source}")
