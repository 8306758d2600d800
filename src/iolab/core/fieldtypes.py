"""A stored JSON document's fields held to the types its dataclass declares.

iolab's state files (a run's manifest.json, a fleet's fleet.json) are plain files a user can
edit or a tool can damage: a field of the wrong type (`started` a number, `labels` a list,
`outlier_k` a path) must make the file unreadable with the field named, never a TypeError or
AttributeError deep in a view that happens to use it."""

from __future__ import annotations

import json
import math
from types import UnionType
from typing import Any, Union, get_args, get_origin


def fits(value: Any, hint: Any) -> bool:
    """Whether a value read from JSON is of the declared type `hint`."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return True
    if origin in (Union, UnionType):
        return any(fits(value, a) for a in args)
    if origin is list:
        return isinstance(value, list) and all(fits(v, args[0]) for v in value)
    if origin is dict:
        # dict[str, Any] (most of a manifest) takes any value; dict[str, str] (a fleet drive's
        # labels) holds each value to its type too, as a view prints them as text.
        return isinstance(value, dict) and all(fits(v, args[1]) for v in value.values())
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:  # JSON writes 3.0 as 3 when a hand does; NaN and infinity are no setting
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, hint)


def kind(hint: Any) -> str:
    """The declared type in words: 'a string or null', 'a list of strings'."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, UnionType):
        return " or ".join(kind(a) for a in args)
    if origin is list:
        return f"a list of {kind(args[0]).removeprefix('a ').removeprefix('an ')}s"
    if origin is dict:
        return "an object" if args[1] is Any else f"an object of {kind(args[1]).removeprefix('a ')}s"
    words = {str: "a string", bool: "true or false", int: "a whole number", float: "a finite number"}
    return words.get(hint, "null" if hint is type(None) else getattr(hint, "__name__", str(hint)))


def shown(value: Any) -> str:
    """A value as the file holds it, cut to 60 characters for a one-line message."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def wrong_type(name: str, value: Any, hint: Any) -> str | None:
    """ "field 'started' is 12345, not a string" when the value is not of the field's type."""
    return None if fits(value, hint) else f"field {name!r} is {shown(value)}, not {kind(hint)}"


def json_finite(x: Any) -> Any:
    """`x` with every float that is not a number (NaN, ±infinity) made null: JSON has neither, and
    json.dumps(allow_nan=False) raised on one read from a damaged results.db in the middle of a
    document already half on standard output."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: json_finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_finite(v) for v in x]
    return x
