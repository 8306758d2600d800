"""The registry of target kinds: each kind declares how its specs are read and its hooks for
claiming, safety checks, purge and the write cache. Nothing is written to a target whose kind
is not registered here, and a kind cannot be registered without every hook.

The built-in kinds (block, file, nbd, sim) are registered by registry.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from iolab.core.errors import RefusedError
from iolab.targets.model import Elsewhere, Problem, PurgeOutcome, Target

ProgressFn = Callable[[float], None]


class Claim(Protocol):
    """A target held for one run (lock.py): a second run is refused while it is held."""

    def note_run(self, run_id: str, run_dir: Path) -> None: ...
    def release(self) -> None: ...


@dataclass(frozen=True)
class Kind:
    name: str  # Target.kind
    prefixes: tuple[str, ...]  # spec prefixes this kind reads ('file:', '/dev/', ...)
    parse: Callable[[str, str], Target]  # (spec as written, stripped spec) -> Target
    problems: Callable[[Target], list[Problem]]  # safety checks; [] when nothing was found
    claim: Callable[[Target], Claim]  # exclusive use for one run; RefusedError when taken
    purge: Callable[[Target, str, ProgressFn | None], PurgeOutcome]  # never called with 'none'
    write_cache: Callable[[Target, bool], str]  # what was done, for the manifest
    # --purge values that make sense on this kind ('none' is always allowed); the engine's
    # capabilities say which of them it can carry out.
    purge_methods: tuple[str, ...] = ("auto",)
    simulated: bool = False  # capability: holds no one's data, the engine owns its state
    # how a spec is read for a target on another machine, asking that machine what the spec names
    # (None: the spec names nothing this machine would answer for, and `parse` reads it)
    parse_elsewhere: Callable[[str, str, Elsewhere], Target] | None = None

    def victim(self, target: Target) -> str:
        """Where data would be destroyed, for refusals: 'on /dev/sdb', 'in /x/file.img'."""
        return f"in {target.path}" if self.name == "file" else f"on {target.path}"


KINDS: dict[str, Kind] = {}

_HOOKS = ("parse", "problems", "claim", "purge", "write_cache")


def register(kind: Kind) -> Kind:
    """Add a target kind. Every hook is required: a kind without safety checks would be
    written to unchecked, so it is not accepted at all."""
    missing = [h for h in _HOOKS if not callable(getattr(kind, h, None))]
    if missing:
        raise ValueError(f"target kind {kind.name!r}: no {', '.join(missing)} hook; not registered")
    if not kind.prefixes:
        raise ValueError(f"target kind {kind.name!r}: no spec prefixes; not registered")
    KINDS[kind.name] = kind
    return kind


def kind_of(target: Target) -> Kind:
    """The registered kind of a target; RefusedError for a kind iolab has no hooks for."""
    kind = KINDS.get(target.kind)
    if kind is None:
        raise RefusedError(
            f"Refusing to write to target {target.spec!r} ({target.path}): its kind {target.kind!r} is not a "
            f"registered target kind ({', '.join(sorted(KINDS))}), so iolab has no safety checks, purge or "
            "write-cache hooks for it."
        )
    return kind


def kind_for_spec(text: str) -> Kind | None:
    """The kind whose prefix starts this spec (the longest prefix wins)."""
    matches = [(len(p), k) for k in KINDS.values() for p in k.prefixes if text.startswith(p)]
    return max(matches, key=lambda m: m[0])[1] if matches else None
