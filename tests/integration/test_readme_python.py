"""The README's "From Python" example, run as a user runs it (a script of its own): it called
`api.run_test`, which `iolab.api` (a package since) does not have: AttributeError."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SMALL_SIM

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_python_example_runs_a_test(tmp_path):
    text = (ROOT / "README.md").read_text()
    [code] = re.findall(r"\*\*From Python\.\*\*.*?```python\n(.*?)```", text, re.S)
    # the README's 8 GiB file becomes a small simulated drive: the calls are what is checked
    assert '"file:/var/tmp/d.img?size=8GiB"' in code
    script = tmp_path / "example.py"
    script.write_text(code.replace('"file:/var/tmp/d.img?size=8GiB"', repr(SMALL_SIM)))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    [run] = (tmp_path / "runs").iterdir()  # stored where `iolab run` stores it: ./runs
    assert p.stdout.startswith(f"{run} complete (") and ".html" in p.stdout, p.stdout
