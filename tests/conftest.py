"""How the suite runs in parallel (pytest-xdist, `--dist loadgroup`, as scripts/test runs it).

A test file stays on one worker: its tests may share module fixtures, ports and names. Files
that share something machine-wide, or an expensive session fixture, are one group, so they
never run side by side and the fixture is built once."""

from __future__ import annotations

import pytest

SHARED = {
    # the tracefs instance `iolab capture` uses has one name on the machine
    "tracefs": ("test_capture.py", "test_every_command.py", "test_rwsw.py"),
    # the characterise run of conftest.characterise_on_a_file is read by both
    "characterise": ("test_cli_characterise.py", "test_char_demand.py"),
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = item.path.name
        group = next((g for g, files in SHARED.items() if name in files), str(item.path))
        item.add_marker(pytest.mark.xdist_group(group))
