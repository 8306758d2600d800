"""Files and settings a user hands iolab, written the way real users write them (a spreadsheet's
CSV, a Windows editor's TOML, a hand-typed sheet, a relative directory in the environment):
each read as meant or refused in one paragraph, before anything runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab

FIGURE = "RND 4KiB R/W 0/100 IOPS"
QUICK = ("run", "latency", "--quick", "-q", "--no-report", "-t", SMALL_SIM)


def refused(p, says: str) -> str:
    text = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stdout + p.stderr, p.stdout + p.stderr
    assert p.stderr.startswith("iolab: ") and says in text, text
    return text


@pytest.mark.parametrize(
    "name, body",
    [
        ("sheet.csv", f"figure,min\n{FIGURE},1000\n"),
        ("sheet.toml", f'[[criterion]]\nfigure = "{FIGURE}"\nmin = 1000\n'),
    ],
)
def test_a_config_file_that_opens_with_a_byte_order_mark_is_read(tmp_path, name, body):
    """Excel's "CSV UTF-8" and Windows editors start a file with a UTF-8 BOM: the CSV sheet was
    refused as naming no 'figure' column, the TOML one as invalid at line 1, column 1."""
    sheet = tmp_path / name
    sheet.write_bytes(b"\xef\xbb\xbf" + body.encode())
    p = iolab(*QUICK, "--spec-sheet", str(sheet), "--runs-dir", str(tmp_path / "runs"), timeout=300)
    assert p.returncode == 0, p.stderr
    (run,) = (tmp_path / "runs").iterdir()
    p = iolab("report", str(run), "--spec-sheet", str(sheet), timeout=300)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("unit", '["IOPS"]', "field 'unit' is ['IOPS']; give text in quotes."),  # was TypeError
        ("name", "{ a = 1 }", "field 'name' is {'a': 1}; give text in quotes."),  # was printed as a repr
        ("figure", "5", "field 'figure' is 5; give text in quotes."),  # was "is missing"
    ],
)
def test_a_spec_sheet_text_field_of_another_type_is_refused(tmp_path, field, value, says):
    fields = {"figure": f'"{FIGURE}"', "min": "1000", field: value}
    sheet = tmp_path / "sheet.toml"
    sheet.write_text("[[criterion]]\n" + "".join(f"{k} = {v}\n" for k, v in fields.items()))
    p = iolab(*QUICK, "--spec-sheet", str(sheet), "--runs-dir", str(tmp_path / "runs"), timeout=300)
    refused(p, f"spec sheet {sheet}, [[criterion]] #1: {says}")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "body, says",
    [
        # DictReader kept the last cell of a name twice given: the drive was judged against min = 3
        (f"figure,min,min\n{FIGURE},1000,3\n", "the first line names column 'min' twice; name each column once."),
        # an unquoted comma in a name: was "unknown field None"
        (
            f"figure,min,name\n{FIGURE},1000,4K, random\n",
            "line 2: 4 cells, but the first line names 3 columns; quote a cell that holds a comma",
        ),
    ],
)
def test_a_csv_spec_sheet_whose_cells_do_not_match_its_columns_is_refused(tmp_path, body, says):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(body)
    p = iolab(*QUICK, "--spec-sheet", str(sheet), "--runs-dir", str(tmp_path / "runs"), timeout=300)
    refused(p, f"spec sheet {sheet}{', ' if says.startswith('line') else ': '}{says}")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("value", ["locks", " ", "./locks"])
def test_a_relative_lock_directory_is_refused(tmp_path, value):
    """A relative IOLAB_LOCK_DIR was taken from the working directory: two runs started from two
    directories on one simulator state file (or NBD export) each took their own lock, and both
    ran on it at once."""
    state = tmp_path / "drive.state"
    runs = tmp_path / "runs"
    p = iolab(*QUICK[:-1], f"{SMALL_SIM}&save={state}", "--runs-dir", str(runs), env={"IOLAB_LOCK_DIR": value})
    refused(p, f"IOLAB_LOCK_DIR={value!r} is not an absolute path")
    assert not runs.exists() and not state.exists()


def test_a_lock_directory_that_is_a_file_is_called_so(tmp_path):
    """IOLAB_LOCK_DIR naming a file was reported as '(/dev/null: File exists)', mkdir's word."""
    runs = tmp_path / "runs"
    state = tmp_path / "s.state"
    p = iolab(*QUICK[:-1], f"{SMALL_SIM}&save={state}", "--runs-dir", str(runs), env={"IOLAB_LOCK_DIR": "/dev/null"})
    text = " ".join(p.stderr.split())
    assert p.returncode == 3 and "Traceback" not in text, text
    assert "(/dev/null: not a directory); set IOLAB_LOCK_DIR to a directory" in text, text
    assert not runs.exists()


@pytest.mark.parametrize("kind", ["directory", "FIFO"])
def test_a_trace_table_that_is_not_a_file_is_called_what_it_is(tmp_path, kind):
    """`iolab trace analyze DIR` said 'DIR: no such trace table' of a directory that exists."""
    table = tmp_path / "t.parquet"
    table.mkdir() if kind == "directory" else os.mkfifo(table)
    p = iolab("trace", "analyze", str(table), "-o", str(tmp_path / "out"), timeout=60)
    text = refused(p, f"trace table {table}: is a {kind}")
    assert "not a regular file" in text and "no such" not in text, text
    assert not (tmp_path / "out").exists()


def test_a_hosts_file_that_opens_with_a_byte_order_mark_is_read(tmp_path):
    """The hosts file saved by a Windows editor: 'not valid TOML (Invalid statement (at line 1,
    column 1))'. `iolab fio-job --hosts-file` reads it without connecting to any host."""
    hosts = tmp_path / "hosts.toml"
    hosts.write_bytes(b'\xef\xbb\xbf[[host]]\naddress = "127.0.0.1"\nport = 8765\n')
    p = iolab(
        "fio-job", "latency", "--quick", "--hosts-file", str(hosts), "-t", f"file:{tmp_path / 'd.img'}?size=16MiB"
    )
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "===== leg 0: 127.0.0.1:8765" in p.stdout, p.stdout[:500]


def test_a_replay_iolab_wrote_over_4_mib_is_read_back(tmp_path):
    """A 2.5 h trace analysed in 1 s steps: `iolab trace analyze` wrote a 4.1 MiB replay.toml
    that `iolab run replay --workload` then refused as 'larger than 4 MiB ... not one iolab
    wrote' (workload files had the hosts file's cap)."""
    src = tmp_path / "long.txt"
    # one IO every 0.15 s for 9,000 s, three block sizes, reads and writes (disksim: us, dev, lba, sectors, R=1)
    src.write_text(
        "".join(f"{i * 150_000} 0 {(i * 7919) % (1 << 20) * 8} {(8, 16, 64)[i % 3]} {i % 2}\n" for i in range(60_000))
    )
    table, out = tmp_path / "long.parquet", tmp_path / "wl"
    p = iolab("trace", "import", str(src), "-f", "disksim", "--time-unit", "us", "-o", str(table), timeout=300)
    assert p.returncode == 0, p.stderr
    p = iolab("trace", "analyze", str(table), "-o", str(out), "--step", "1s", "--qd", "4", timeout=300)
    assert p.returncode == 0, p.stderr
    assert (out / "replay.toml").stat().st_size > 4 * 1024 * 1024  # the case: past the old cap
    p = iolab("plan", "replay", "--workload", str(out), "-t", SMALL_SIM, timeout=300)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "cell step 8999: replay step 8999 (capture 8999 s)" in p.stdout, p.stdout[-500:]


@pytest.fixture(scope="module")
def small_table(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("bom-trace")
    src, table = d / "t.txt", d / "t.parquet"
    src.write_text("".join(f"{i * 1000} 0 {i * 64} 8 {i % 2}\n" for i in range(200)))
    p = iolab("trace", "import", str(src), "-f", "disksim", "--time-unit", "us", "-o", str(table))
    assert p.returncode == 0, p.stderr
    return table


@pytest.mark.parametrize("fmt", ["msr", "spc", "alibaba", "fiu", "systor", "disksim", "cloudphysics"])
def test_a_text_trace_that_opens_with_a_byte_order_mark_is_detected(small_table, tmp_path, fmt):
    """The readers skip a BOM, but the format guess read it into the first field: an MSR CSV
    saved by a spreadsheet was 'cannot tell the trace format from the first line'."""
    plain, marked = tmp_path / f"t.{fmt}", tmp_path / f"bom.{fmt}"
    p = iolab("trace", "export", str(small_table), "-f", fmt, "-o", str(plain))
    assert p.returncode == 0, p.stderr
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    p = iolab("trace", "import", str(marked), "-o", str(tmp_path / "back.parquet"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"format: {fmt} (detected"), p.stdout
    assert f"back.parquet: 200 IOs from {fmt}" in p.stdout, p.stdout
