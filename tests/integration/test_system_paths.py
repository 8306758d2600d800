"""The write policy's system-location rule through every command that writes: an output (or a
file target) is refused in the operating system's own trees, given there or through a symlink
planted where the output goes (`out -> /etc`), and nothing is written there. Before,
`iolab export RUN -o out` with `out -> /etc` wrote cells.csv, ..., manifest.json into /etc."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from iolab.pages.export import TABLES

from .conftest import SMALL_SIM, iolab, quick_sim_run
from .test_rwsw import msr_trace

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="as root, where a write into /etc would succeed"),
]

SYSTEM = "where the operating system keeps its own files"
FIGURE = "ART RND 4KiB R/W 0/100"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """Two runs and an IO table to read, made once."""
    d = tmp_path_factory.mktemp("system-paths")
    runs = d / "runs"
    first, second = quick_sim_run(runs), quick_sim_run(runs)
    msr_trace(d / "t.csv")
    p = iolab("trace", "import", str(d / "t.csv"), "-f", "msr", "-o", str(d / "t.parquet"))
    assert p.returncode == 0, p.stderr
    return {"runs": runs, "first": first, "second": second, "csv": d / "t.csv", "table": d / "t.parquet"}


@pytest.fixture
def in_etc() -> Iterator[Path]:
    """A new, empty directory in /etc, this test's own: what a write the policy should have
    refused puts there goes with it, and nothing else in /etc is touched."""
    d = Path(tempfile.mkdtemp(prefix="iolab-test-", dir="/etc"))
    try:
        yield d
    finally:
        shutil.rmtree(d)


@contextmanager
def none_made(*paths: Path) -> Iterator[None]:
    """Asserts none of `paths` (absent before) is made, and removes any that is."""
    assert not any(os.path.lexists(p) for p in paths)
    try:
        yield
        assert not [p for p in paths if os.path.lexists(p)]
    finally:
        for p in paths:
            shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink(missing_ok=True)


# each: the command's arguments, {L} standing for the symlink into /etc, {R} for a runs directory
COMMANDS = {
    "export -o": lambda m: ["export", str(m["first"]), "-o", "{L}"],
    "export -o, a folder to make": lambda m: ["export", str(m["first"]), "-o", "{L}/iolab-export"],
    "report --out": lambda m: ["report", str(m["first"]), "--out", "{L}"],
    "compare -o": lambda m: ["compare", str(m["first"]), str(m["second"]), "-o", "{L}"],
    "check --junit": lambda m: ["check", str(m["second"]), "--baseline", str(m["first"]), "--junit", "{L}/j.xml"],
    "history --html": lambda m: ["history", FIGURE, "--runs-dir", str(m["runs"]), "--html", "{L}/h.html"],
    "trace import -o": lambda m: ["trace", "import", str(m["csv"]), "-f", "msr", "-o", "{L}/t.parquet"],
    "trace export -o": lambda m: ["trace", "export", str(m["table"]), "-f", "msr", "-o", "{L}/t.csv"],
    "trace analyze -o": lambda m: ["trace", "analyze", str(m["table"]), "--step", "1s", "-o", "{L}/an"],
    "run save=": lambda m: ["run", "latency", "--quick", "-t", SMALL_SIM + "&save={L}/s.state", "--runs-dir", "{R}"],
    "run --runs-dir": lambda m: ["run", "latency", "--quick", "-t", SMALL_SIM, "--runs-dir", "{L}/runs"],
    "run -t file:": lambda m: ["run", "latency", "--quick", "-t", "file:{L}/x.img?size=16MiB", "--runs-dir", "{R}"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_command_writes_into_etc_through_a_symlink(made, tmp_path, in_etc, command):
    link = tmp_path / "out"
    link.symlink_to(in_etc)
    p = iolab(*(a.format(L=link, R=tmp_path / "runs") for a in COMMANDS[command](made)), timeout=300)
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 3 and "Traceback" not in said, said
    assert SYSTEM in said and str(in_etc) in said, said
    assert not os.listdir(in_etc) and not (tmp_path / "runs").exists()


def test_the_system_trees_given_as_they_are_are_refused_and_local_data_places_are_not(made):
    """/var was refused whole but for /var/tmp: `export -o /var/lib/iolab/runs` (a service's own
    data, FHS /var/lib/<package>) and /var/local were refused as /var/lib/dpkg is. The refusal
    names the rule."""
    mine = f"iolab-test-export-{os.getpid()}"
    in_root = [Path("/") / f"{t}.csv" for t in TABLES if not os.path.lexists(f"/{t}.csv")]
    system = [Path("/usr/local") / mine, Path("/var/lib/dpkg") / mine, Path("/var/log") / mine]
    with none_made(*in_root, *system):
        for where in ("/", *system):
            p = iolab("export", str(made["first"]), "-o", str(where))
            said = " ".join(p.stderr.split())
            assert p.returncode == 3 and SYSTEM in said and "the system-location rule" in said, said
    for out in (Path("/var/tmp") / mine, Path("/var/lib/iolab") / mine, Path("/var/local") / mine):
        made_top = next(d for d in (out, *out.parents) if os.path.lexists(d.parent))  # removed after
        try:
            p = iolab("export", str(made["first"]), "-o", str(out))
            assert p.returncode == 0, p.stderr
            assert (out / "cells.csv").is_file()
        finally:
            shutil.rmtree(made_top, ignore_errors=True)


def test_a_symlink_to_a_folder_yet_to_be_made_is_made_where_it_points(made, tmp_path):
    """`export -o out` with `out -> elsewhere/new` failed "iolab: File exists: out", exit 2."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out").symlink_to(tmp_path / "elsewhere" / "new")
    p = iolab("export", str(made["first"]), "-o", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "elsewhere" / "new" / "cells.csv").is_file()


def test_a_symlink_planted_at_a_writers_temporary_name_is_not_written_through(made, tmp_path):
    """`check --junit j.xml` wrote its XML to j.xml.tmp, a fixed name opened as it was: a symlink
    planted there (`j.xml.tmp -> someone's file`) had the JUnit XML written over that file."""
    victim = tmp_path / "victim.txt"
    victim.write_text("someone's notes\n")
    junit = tmp_path / "j.xml"
    (tmp_path / "j.xml.tmp").symlink_to(victim)
    p = iolab("check", str(made["second"]), "--baseline", str(made["first"]), "--junit", str(junit))
    assert p.returncode in (0, 7), p.stderr
    assert victim.read_text() == "someone's notes\n"
    assert junit.read_text().startswith("<?xml") and (tmp_path / "j.xml.tmp").is_symlink()
