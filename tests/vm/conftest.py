"""One boot of a real kernel per test session (machine.py), shared by every VM test.

Where QEMU, a kernel image or virtme-ng is missing the VM tests are skipped with the reason;
under CI (CI=true) that is a failure, since CI installs them (scripts/test). IOLAB_VM_DIR names
a directory a previous boot (scripts/vm-drives) left: its results are checked without booting.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import machine


@dataclass(frozen=True)
class Guest:
    dir: Path
    host: dict  # machine.boot's answer (without the console text)
    results: dict  # what guest.py wrote

    def check(self, name: str) -> dict:
        c = self.results["checks"].get(name)
        assert c is not None, f"the guest never reached the check {name!r} (see {self.dir / 'console.log'})"
        assert "error" not in c, f"the guest's check {name!r} crashed:\n{c['error']}"
        return c

    def run_dir(self, manifest: dict) -> Path:
        """Where a run the guest made is on the host: its lane's runs directory, copied out."""
        d = Path(manifest["dir"])
        return self.dir / "out" / "runs" / d.parent.name / d.name


def _load(d: Path) -> Guest:
    host = json.loads((d / "host.json").read_text())
    results_file = d / "out" / "results.json"
    if not results_file.exists():
        console = (d / "console.log").read_text(errors="replace")[-4000:]
        pytest.fail(
            f"the guest wrote no results (vng exit {host['rc']} after {host['seconds']} s); console:\n{console}"
        )
    return Guest(d, host, json.loads(results_file.read_text()))


@pytest.fixture(scope="session")
def guest() -> Guest:
    given = os.environ.get("IOLAB_VM_DIR")
    if given:
        yield _load(Path(given))
        return
    why = machine.missing()
    if why:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"the VM tests cannot boot on CI: {why}")
        pytest.skip(f"VM tests need a bootable kernel: {why}")
    d = Path(tempfile.mkdtemp(prefix="iolab-vm-", dir=os.environ.get("IOLAB_TEST_SCRATCH", "/var/tmp")))
    try:
        machine.boot(d)
        yield _load(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
