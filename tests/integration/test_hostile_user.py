"""A hostile user's inputs, through the installed `iolab` command: each refused in one paragraph
with the CLI's exit code, nothing written where it should not be, and no traceback or false
figure (docs/automation.md, Exit codes)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from .conftest import iolab, quick_sim_run


def refused(p, code: int) -> str:
    text = p.stdout + p.stderr
    assert p.returncode == code and "Traceback" not in text and "Warning" not in text, text
    assert p.stderr.startswith("iolab: "), p.stderr
    return " ".join(p.stderr.split())


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_output_iolab_wrote_is_not_a_test_target(scratch):
    """Outputs and scratch files carried one mark, so `iolab run -t file:trace.parquet` took an
    imported trace for a scratch file of its own and overwrote it with fio's data, exit 0."""
    src = scratch / "t.txt"
    src.write_text("".join(f"{i * 100} 1 {i * 8} 8 1\n" for i in range(50)))
    table = scratch / "trace.parquet"
    p = iolab("trace", "import", str(src), "-f", "disksim", "--time-unit", "us", "-o", str(table))
    assert p.returncode == 0, p.stderr
    before = digest(table)
    runs = scratch / "runs"
    p = iolab("run", "throughput", "--quick", "-q", "-t", f"file:{table}?size=16MiB", "--runs-dir", str(runs))
    text = refused(p, 3)
    assert f"iolab output: {table} holds" in text and "that iolab wrote as a result" in text, text
    assert "--allow-unsafe-target" in text, text
    assert digest(table) == before and not runs.exists()
    # the policy still lets iolab replace its own output
    p = iolab("trace", "import", str(src), "-f", "disksim", "--time-unit", "us", "-o", str(table))
    assert p.returncode == 0, p.stderr


def test_a_file_target_in_a_stored_run_is_refused(scratch):
    """A file target inside another run's directory (its report/ folder, or a new image beside
    its results.db) was accepted: the run wrote 16 MiB of fio data into that run's record."""
    runs = scratch / "runs"
    run = quick_sim_run(runs)
    kept = sorted(p.name for p in run.rglob("*"))
    for path in (run / "scratch.img", run / "raw" / "x.img"):
        p = iolab("run", "latency", "--quick", "-q", "-t", f"file:{path}?size=16MiB", "--runs-dir", str(runs))
        text = refused(p, 3)
        assert f"run directory: {path} is in the run directory {run}, whose files are that run's record" in text
        assert text.endswith("Nothing overrides this: choose another target."), text
    assert sorted(p.name for p in run.rglob("*")) == kept
    assert [d.name for d in runs.iterdir()] == [run.name]
