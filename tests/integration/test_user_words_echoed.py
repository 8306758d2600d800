"""An error quotes the user's own words as they were typed: Rich read ":100:" and ":-1:" in
them as emoji codes, so the error about --set demand=900:100:700 quoted '900💯700'. Real `iolab`
commands refused before anything runs."""

from __future__ import annotations

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "args, typed",
    [
        (("plan", "latency-demand", "--quick", "--set", "demand=900:100:700"), "'900:100:700'"),
        (("plan", "latency-bound", "--quick", "--set", "steps=1000:-1:10"), "'1000:-1:10'"),
        (("run", ":+1:"), "test ':+1:': unknown"),
    ],
)
def test_an_error_quotes_what_was_typed_not_an_emoji(args, typed):
    p = iolab(*args)
    assert p.returncode == 2, p.stderr
    said = " ".join(p.stderr.split())
    assert typed in said and not any(ord(ch) >= 0x1F000 for ch in said), said
