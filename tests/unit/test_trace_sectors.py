"""`iolab trace export` to the formats that count in 512 B sectors: an IO that is not whole
sectors (the byte-offset formats, MSR among them, import such IOs) is rounded outward so that
it still covers its bytes, never to 0 bytes, and the export says how many IOs it changed.
Before, offsets and sizes were truncated: a 1 B read became a 0-length one, silently."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from iolab.cli.app import app
from iolab.traces import formats, import_trace

# The writers that count offsets (spc, biosnoop, cloudphysics, vscsi) or offsets and sizes in sectors
SECTOR_WRITERS = [
    "disksim",
    "tencent",
    "fiu",
    "blkparse",
    "blktrace",
    "tracefs",
    "spc",
    "biosnoop",
    "cloudphysics",
    "vscsi",
]
# MSR lines: write 1000 B at 1000, read 1 B at 513 (the tester's odd.csv), and an aligned read
ODD = (
    "128166372000000000,hm,0,Write,1000,1000,100\n"
    "128166372000100000,hm,0,Read,513,1,100\n"
    "128166372000200000,hm,0,Read,4096,4096,100\n"
)


def _ios(path: Path) -> list[tuple]:
    con = duckdb.connect()
    try:
        return con.execute(f"SELECT op, offset_bytes, size_bytes FROM read_parquet('{path}')").fetchall()
    finally:
        con.close()


def test_the_registry_marks_exactly_the_sector_writers():
    marked = {w for w in formats.writer_names() if getattr(formats.writer(w)[1], "sectors", "")}  # type: ignore[index]
    assert marked == set(SECTOR_WRITERS)


@pytest.mark.parametrize("fmt", SECTOR_WRITERS)
def test_export_rounds_outward_and_says_so(fmt, tmp_path):
    src = tmp_path / "odd.csv"
    src.write_text(ODD)
    table = tmp_path / "odd.parquet"
    assert CliRunner().invoke(app, ["trace", "import", str(src), "-o", str(table)]).exit_code == 0
    out = tmp_path / f"odd.{fmt}"
    r = CliRunner().invoke(app, ["trace", "export", str(table), "-f", fmt, "-o", str(out)])
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.split())
    assert "2 IOs rounded outward to whole 512 B sectors" in said, said
    back = import_trace(out, formats.writer(fmt)[0].name, tmp_path / "back.parquet")  # type: ignore[index]
    for (op, off, size), (op2, off2, size2) in zip(_ios(table), _ios(back.path), strict=True):
        assert op2 == op and size2 > 0
        assert off2 <= off and off2 + size2 >= off + size  # it covers its bytes
        assert off2 % 512 == 0 and off2 + size2 - (off + size) < 512  # by less than a sector more
    assert _ios(back.path)[2] == ("read", 4096, 4096)  # an aligned IO is written as it was


def test_an_aligned_trace_exports_without_a_note(tmp_path):
    src = tmp_path / "even.csv"
    src.write_text("128166372000000000,hm,0,Write,1024,512,100\n")
    table = tmp_path / "even.parquet"
    assert CliRunner().invoke(app, ["trace", "import", str(src), "-o", str(table)]).exit_code == 0
    r = CliRunner().invoke(app, ["trace", "export", str(table), "-f", "disksim", "-o", str(tmp_path / "e.disksim")])
    assert r.exit_code == 0 and "rounded" not in r.output
