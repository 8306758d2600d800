"""`iolab tests TEST` piped (80 columns): the test's heading broke mid-summary onto a second
line ("rw-matrix: RND/SEQ × ... IOPS, MB/s, \\naverage and maximum latency") while its
parameter lines beside it kept one line each; each heading is now one line."""

from __future__ import annotations

import os
import subprocess

import pytest

from iolab.api import registry

from .conftest import IOLAB

pytestmark = pytest.mark.integration


def test_each_tests_heading_is_one_line_when_piped():
    # as a pipe is: no COLUMNS (conftest.iolab sets 200), so rich takes 80
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    # a sequence: every one of its tests' headings
    p = subprocess.run([*IOLAB, "tests", "characterise"], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    for d in registry.sequence("characterise"):
        heading = f"{d.name}: {d.summary}"
        assert heading in lines, (heading, p.stdout[:2000])
    assert any(len(h) > 80 for h in lines if not h.startswith(" ")), "no heading longer than the 80 columns"
