"""A number written in quotes in a TOML input (a spec sheet's `min = "5"`, a hosts file's
`port = "8765"`) is text where a number belongs: refused in one paragraph naming the file and
the field, before anything runs. Before, both were read as the number they spell."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab, quick_sim_run

FIGURE = "ART RND 4KiB R/W 0/100"


def _said(p) -> str:
    text = p.stdout + p.stderr
    assert p.returncode == 2 and "Traceback" not in text, text
    assert "\n\n" not in p.stderr.strip(), p.stderr
    return " ".join(p.stderr.split())


def _sheet(d: Path, field: str) -> Path:
    bounds = {"min": "min = 1", "max": "max = 1e9", "claim": "claim = 100"} | {field: f'{field} = "5"'}
    path = d / f"sheet-{field}.toml"
    path.write_text(f'[[criterion]]\nfigure = "{FIGURE}"\n' + "\n".join(bounds.values()) + "\n")
    return path


@pytest.mark.parametrize("field", ["min", "max", "claim"])
def test_a_quoted_spec_sheet_number_is_refused_before_the_run(tmp_path, field):
    sheet = _sheet(tmp_path, field)
    runs = tmp_path / "runs"
    p = iolab("run", "latency", "--quick", "-t", SMALL_SIM, "--spec-sheet", str(sheet), "--runs-dir", str(runs))
    said = _said(p)
    assert said == (
        f"iolab: spec sheet {sheet}, [[criterion]] #1: field '{field}' is \"5\", text in quotes where a number "
        "belongs; write the number without them."
    ), said
    assert not runs.exists()


def test_a_quoted_spec_sheet_number_is_refused_by_report_and_a_csv_cell_is_still_read(tmp_path):
    run = quick_sim_run(tmp_path / "runs")
    sheet = _sheet(tmp_path, "min")
    p = iolab("report", str(run), "--spec-sheet", str(sheet), "--out", str(tmp_path / "r"))
    assert f"spec sheet {sheet}, [[criterion]] #1: field 'min' is \"5\"" in _said(p)
    assert not (tmp_path / "r").exists()
    # a CSV cell is text by nature: its number (with a thousands comma) is read as before
    csv = tmp_path / "sheet.csv"
    csv.write_text(f'figure,min,max\n{FIGURE},1,"5,000,000"\n')
    p = iolab("report", str(run), "--spec-sheet", str(csv), "--out", str(tmp_path / "r"))
    assert p.returncode == 0, p.stderr
    csv.write_text(f"figure,min\n{FIGURE},five\n")
    p = iolab("report", str(run), "--spec-sheet", str(csv), "--out", str(tmp_path / "r2"))
    assert f"spec sheet {csv}, line 2: field 'min' is 'five'; give a number" in _said(p)


@pytest.mark.parametrize(("port", "shown"), [('"8765"', '"8765"'), ("8765.0", "8765.0"), ("0", "0"), ("true", "True")])
def test_a_hosts_file_port_that_is_not_a_whole_number_is_refused(tmp_path, port, shown):
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(f'[[host]]\naddress = "127.0.0.1"\nport = {port}\n')
    p = iolab("fio-job", "iops", "--quick", "-t", f"file:{tmp_path}/t.img?size=4MiB", "--hosts-file", str(hosts))
    said = _said(p)
    assert said == (
        f"iolab: hosts file {hosts}, line 1 ([[host]] #1): field 'port' is {shown}; give a whole number from 1 "
        "to 65535 (without quotes)."
    ), said
