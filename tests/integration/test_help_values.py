"""Help names each option's value for what it is, the same way in every command that takes the
option, and lists what the option takes."""

from __future__ import annotations

import re

import pytest

import iolab.targets.registry  # noqa: F401  (registers every kind of target)
from iolab.targets.kinds import KINDS

from .test_cli_conventions import COMMANDS, _option_rows, cli

pytestmark = pytest.mark.integration


# Options whose value means another thing in each command that takes it
DIFFERENT_VALUES = {
    "--out": "a directory or a file",
    "--format": "each command's formats",
    "--baseline": "a run or a group",
}


def test_an_option_reads_the_same_in_every_command_that_takes_it():
    # `--cell-time` was DURATION in `iolab run -h` and TEXT in `iolab sim calibrate -h`
    seen: dict[str, dict[str, str]] = {}
    for command in COMMANDS:
        for name, row in _option_rows(cli(*command.split(), "-h").stdout).items():
            words = row.split()[1:]
            words = words[1:] if words and re.fullmatch(r"-\w", words[0]) else words
            value = words[0] if words and (words[0].isupper() or "|" in words[0]) else ""
            seen.setdefault(name, {})[command] = value
    for name, values in seen.items():
        if name not in DIFFERENT_VALUES:
            assert len(set(values.values())) == 1, (name, values)
    assert seen["--cell-time"] == {
        "run": "DURATION",
        "fio-job": "DURATION",
        "plan": "DURATION",
        "sim calibrate": "DURATION",
    }


def test_purge_help_lists_every_method_a_target_takes():
    # the default target's own ('sim', 'sim-purge') were missing: a user read them only in the
    # refusal of another ('use one of auto, sim, sim-purge, none')
    row = _option_rows(cli("run", "-h").stdout)["--purge"]
    listed = set(re.findall(r"[\w-]+", row.split(" (")[0].removeprefix("--purge METHOD")))
    every = {m for kind in KINDS.values() for m in kind.purge_methods} | {"none"}
    assert every <= listed, sorted(every - listed)
