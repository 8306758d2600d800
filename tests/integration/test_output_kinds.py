"""Outputs of different kinds do not replace each other, through the installed `iolab` command:
the write policy let any iolab output overwrite any other, so `check --junit my_trace.parquet`
replaced an imported trace table with JUnit XML, exit 0 (targets/writepolicy.py)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from iolab.targets.files import MARK_XATTR, read_mark

from .conftest import iolab, quick_sim_run


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, Path]:
    runs = tmp_path_factory.mktemp("output-kinds") / "runs"
    return quick_sim_run(runs), quick_sim_run(runs)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def trace_import(src: Path, out: Path):
    return iolab("trace", "import", str(src), "-f", "disksim", "--time-unit", "us", "-o", str(out))


def a_trace(d: Path) -> Path:
    src = d / "t.txt"
    src.write_text("".join(f"{i * 100} 1 {i * 8} 8 1\n" for i in range(50)))
    return src


def refused(p) -> str:
    text = p.stdout + p.stderr
    assert p.returncode == 3 and "Traceback" not in text, text
    assert p.stderr.startswith("iolab: ") and "\n\n" not in p.stderr.strip(), p.stderr
    return " ".join(p.stderr.split())


def test_a_junit_file_does_not_replace_an_imported_trace_table(two_runs, tmp_path):
    first, second = two_runs
    src, table = a_trace(tmp_path), tmp_path / "my_trace.parquet"
    assert trace_import(src, table).returncode == 0
    before = digest(table)
    p = iolab("check", str(second), "--baseline", str(first), "--junit", str(table))
    text = refused(p)
    assert f"Refusing to write the JUnit file '{table}': {table} is iolab's IO table:" in text, text
    assert "only with the same kind of file" in text and "Nothing was written" in text, text
    assert digest(table) == before
    # each kind still replaces its own: the table imported again, a JUnit file checked twice
    assert trace_import(src, table).returncode == 0
    junit = tmp_path / "j.xml"
    for _ in range(2):
        p = iolab("check", str(second), "--baseline", str(first), "--junit", str(junit))
        assert p.returncode == 0, p.stderr
    assert read_mark(str(junit)) == ("output", "JUnit file")
    # and the other way round: a trace table over the JUnit file
    text = refused(trace_import(src, junit))
    assert f"{junit} is iolab's JUnit file" in text, text
    assert junit.read_text().startswith("<?xml")


def test_an_output_is_not_written_over_a_tests_scratch_file(tmp_path):
    """A scratch file iolab made for a test is not an output either: a trace table is not written there."""
    scratch = tmp_path / "scratch.img"
    scratch.write_bytes(b"x" * 4096)
    os.setxattr(scratch, MARK_XATTR, b"created by iolab")  # as prepare_file marks a file target
    text = refused(trace_import(a_trace(tmp_path), scratch))
    assert f"{scratch} is a test's scratch file iolab made" in text, text
    assert scratch.read_bytes() == b"x" * 4096


def test_an_output_marked_before_kinds_were_recorded_is_replaced_and_then_carries_its_kind(two_runs, tmp_path):
    """Older versions marked every output `iolab output` alone: such a file is replaced by any output, as
    then (it may be any kind), and from that write on it carries its kind."""
    first, second = two_runs
    junit = tmp_path / "old.xml"
    junit.write_text("<?xml version='1.0'?><testsuites/>\n")
    os.setxattr(junit, MARK_XATTR, b"iolab output")
    assert read_mark(str(junit)) == ("output", None)
    p = iolab("check", str(second), "--baseline", str(first), "--junit", str(junit))
    assert p.returncode == 0, p.stderr
    assert read_mark(str(junit)) == ("output", "JUnit file")
    refused(trace_import(a_trace(tmp_path), junit))
