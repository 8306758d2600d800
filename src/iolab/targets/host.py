"""The one seam between iolab's target code and the host: external commands, sysfs, /proc.

Every external tool (nvme, hdparm, smartctl, sg3-utils, blkid, blkdiscard, ...) runs through
`run_command`, and every sysfs or /proc path is built from `SYSFS` and `PROC`, so unit tests
replace these names here (and `sleep`) and nothing else.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Module-level so unit tests can point them at a fake tree.
SYSFS = Path("/sys")
PROC = Path("/proc")

sleep = time.sleep  # unit tests replace it to poll without waiting


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int  # 127: tool not installed, 124: timed out
    stdout: bytes  # bytes because some logs (NVMe sanitize log) are read in binary
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def text(self) -> str:
        return self.stdout.decode(errors="replace")

    @property
    def missing(self) -> bool:
        return self.returncode == 127

    @property
    def last_said(self) -> str:
        """The last line the tool said (its error, else its output), or its exit code: why it failed, in a paragraph."""
        return (self.stderr.strip() or self.text.strip() or f"exit {self.returncode}").splitlines()[-1]

    def summary(self, max_chars: int = 400) -> str:
        """'$ cmd -> exit N: output' for PurgeOutcome.detail and error messages."""
        said = " ".join((self.text.strip() + " " + self.stderr.strip()).split())
        if len(said) > max_chars:
            said = said[: max_chars - 3] + "..."
        return f"$ {' '.join(self.argv)} -> exit {self.returncode}" + (f": {said}" if said else "")


def run_command(argv: Sequence[str], timeout: float | None = 60.0) -> CommandResult:
    """Run one external tool; never raises for a missing tool, a failure or a time-out."""
    argv = tuple(argv)
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return CommandResult(argv, 127, b"", f"{argv[0]}: not installed")
    except subprocess.TimeoutExpired:
        return CommandResult(argv, 124, b"", f"timed out after {timeout:g} s")
    return CommandResult(argv, proc.returncode, proc.stdout, proc.stderr.decode(errors="replace"))


# Long-running destructive commands (format, secure erase) must not be cut short by a timeout
# tuned for inspection; 24 h bounds a hung tool without ever interrupting a real erase.
LONG = 24 * 3600.0


def read(path: Path) -> str | None:
    """A sysfs or /proc file's text, stripped; None when it is absent, unreadable or empty."""
    try:
        text = path.read_text(errors="replace").strip()
    except OSError:
        return None
    return text or None


def read_int(path: Path) -> int | None:
    text = read(path)
    return int(text) if text is not None and text.isdigit() else None


def stat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def json_object(text: str) -> dict | None:
    """A tool's JSON output when it is an object; None for anything else."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def open_exclusive(path: str) -> int:
    """Open a block device read-only with O_EXCL: while the descriptor is open the kernel
    refuses every other exclusive open (mount, mkfs, swapon, another iolab run), yet plain
    opens (fio's) still succeed. Raises OSError (EBUSY: someone else holds it)."""
    return os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)


def binds_here(address: str) -> bool:
    """True when this machine owns the IP `address` (a loopback or any of its interfaces'
    addresses, the wildcard too): a socket binds to it. Binding asks the kernel, so every
    spelling of an address and every interface counts without listing them."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind((address, 0))
            return True
    except OSError:
        return False
