"""A latency percentile is shown only when the cell's IOs can measure it (ten IOs beyond it:
99.999 % needs 1,000,000): a quick latency run's cells of some 40,000-100,000 IOs print
"n/m (N IOs)" in `run` and `show`, and the export leaves the figure empty with its IO count."""

from __future__ import annotations

import csv
import json
import re

from iolab.core.units import percentile_min_ios

from .conftest import iolab


def test_a_five_nines_latency_from_too_few_ios_is_not_measurable_everywhere(tmp_path):
    runs = tmp_path / "runs"
    p = iolab("run", "latency", "--quick", "--cell-time", "500ms", "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    run = re.search(r"run directory: (\S+)", p.stdout).group(1)
    shown = iolab("show", run).stdout
    for out in (p.stdout, shown):
        # main printed a 99.999 % value in every cell: 127.6 / 2,527 / 2,527
        assert re.search(r"/ n/m\s+│?\s*.*\(\d{1,3}(,\d{3})* IOs\)", out, re.S), out
    e = iolab("export", run, "-o", str(tmp_path / "export"))
    assert e.returncode == 0, e.stderr
    with open(tmp_path / "export" / "cells.csv") as f:
        cells = [r for r in csv.DictReader(f) if r["kind"] == "measure"]
    assert cells and all(int(r["read_ios"]) + int(r["write_ios"]) < 1_000_000 for r in cells)
    assert all(r["p99_999_us"] == "" for r in cells) and all(r["p99_us"] for r in cells)
    with open(tmp_path / "export" / "window.csv") as f:
        window = list(csv.DictReader(f))
    assert window and all(r["p99_999_us"] == "" and 0 < int(r["latency_ios"]) < 1_000_000 for r in window)
    # the key figures' "—" say why, with the measurement window's IOs (they said only "—")
    ios = {(r["mix"], r["block_size"]): int(r["latency_ios"]) for r in window}
    for out in (p.stdout, shown):
        for mix in ("100/0", "0/100"):
            said = f"— 99.999 % RND 4KiB R/W {mix}: not measured, its {ios[(mix, '4096')]:,} IOs are too few for a"
            assert said in out, out


def _histogram_tables(html: str) -> list[tuple[int, str, dict[str, str]]]:
    """Each histogram page's percentile table: (the IOs it is read from, its caption's rest,
    {column: cell})."""
    out = []
    for ios, rest, head, body in re.findall(
        r"percentiles of the merged histogram \(([\d,]+) IOs\)([^<]*)</div><table[^>]*><thead>(.*?)</thead>"
        r"<tbody>(.*?)</tbody>",
        html,
        re.S,
    ):
        cols = re.findall(r"<th>([^<]*)</th>", head)
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", body)
        out.append((int(ios.replace(",", "")), rest, dict(zip(cols[1:], cells[1:]))))
    return out


def test_the_histogram_page_shows_only_the_percentiles_its_ios_measure(tmp_path):
    """An HDD's quick latency cells hold some 430 IOs and a quick WSAT window some 220,000: the
    histogram page's table printed 99 … 99.999 % read off the few slowest IOs (main: 20.38 /
    21.95 / 21.95 / 21.95 ms from 431 IOs). It gates them as every table does; the HDD run's
    99.999 % plot against block size, which no cell measured, is left out (it was a page of empty
    axes a reviewer could publish), and the caption of the table listing the percentiles says why."""
    runs = tmp_path / "runs"
    for test, target in (("latency", "sim:sata-7200-hdd"), ("wsat", "sim:enterprise-sas")):
        p = iolab("run", test, "--quick", "-t", target, "--no-report", "--runs-dir", str(runs))
        assert p.returncode == 0, p.stderr
    hdd, wsat = sorted(runs.iterdir(), key=lambda d: "wsat" in d.name)
    r = iolab("report", str(hdd), str(wsat), "--out", str(tmp_path / "rep"))
    assert r.returncode == 0, r.stderr
    html = {d.name: (tmp_path / "rep" / f"{d.name}.html").read_text() for d in (hdd, wsat)}
    seen = set()
    for name, text in html.items():
        tables = _histogram_tables(text)
        assert tables, name
        for ios, caption, row in tables:
            for pct in (99.0, 99.9, 99.99, 99.999):
                cell = row[f"{pct:g} %"]
                if ios < percentile_min_ios(pct):
                    assert cell == f"n/m ({ios:,} IOs)", (name, pct, cell)
                    assert f"{pct:g}" in caption.split(":")[1] and "not measured" in caption
                    seen.add(("n/m", pct))
                else:
                    assert re.fullmatch(r"[\d.,]+", cell), (name, pct, cell)
                    seen.add(("value", pct))
    # both cases were met: the HDD's four nines unmeasured, WSAT's 99.99 % measured and 99.999 % not
    assert {("n/m", 99.0), ("n/m", 99.999), ("value", 99.99)} <= seen
    assert "99.999 % Response Time vs Block Size" not in html[hdd.name]
    said = re.findall(
        r"99\.999 % response time \(\w+\), from the window&#x27;s merged histogram: no cell measured it \(its cells "
        r"had [\d,]+–[\d,]+ IOs; a 99\.999 % needs 1,000,000\), so its plot against block size is left out",
        html[hdd.name],
    )
    assert len(said) == 1, said


def test_check_says_why_a_percentile_is_not_measured_in_compares_words(tmp_path):
    # `check` said only "not measured: the baseline has no value for this figure" where
    # `compare` said "its 1,698 IOs are too few for a 99.999 % (it needs 1,000,000, …)", and of a
    # candidate without the figure nothing but "FAILED: NAME"
    def run(cell: str) -> str:
        runs = tmp_path / cell
        p = iolab("run", "latency", "--quick", "--cell-time", cell, "--max-rounds", "1", "--no-report",
                  "--runs-dir", str(runs))  # fmt: skip
        assert p.returncode == 0, p.stdout + p.stderr
        return re.search(r"run directory: (\S+)", p.stdout).group(1)

    short, long = run("100ms"), run("150s")  # 150 s cells measure the 99.999 % (over 10⁶ IOs)
    p = iolab("compare", long, short, "--force", "--out", str(tmp_path / "cmp"))
    assert p.returncode == 0, p.stdout + p.stderr
    compared = " ".join(p.stdout.split())
    why = {}
    for mix in ("100/0", "0/100"):  # each figure's footnote mark in the short run's column, then its text
        # the long run's value alone is ranked for none (no "(#1)" of one value)
        mark = re.search(rf"99\.999 % RND 4KiB R/W {mix} \(µs; ↓\) │ [\d,.]+ \[a\] │ — \[(\w)\]", compared)
        assert mark, compared
        why[mix] = re.search(
            rf"\[{mark[1]}\] not measured: (its [\d,]+ IOs are too few for a 99\.999 % \(.*?\))", compared
        )[1]
        assert why[mix].endswith("(it needs 1,000,000, 10 of them beyond it)"), why
    for cand, base, verdict, side in ((long, short, "not measured", "baseline"), (short, long, "missing", "candidate")):
        p = iolab("check", cand, "--baseline", base, "--force")
        # a missing figure fails the check (7); the other figures' verdicts are not this test's
        assert p.returncode in ((7,) if verdict == "missing" else (0, 7)), p.stdout + p.stderr
        said = " ".join(p.stdout.split())
        for mix in ("100/0", "0/100"):
            line = f"99.999 % RND 4KiB R/W {mix}: {verdict}: the {side} has no value for this figure: {why[mix]}"
            assert line in said, said
        j = json.loads(iolab("check", cand, "--baseline", base, "--force", "--json").stdout)
        methods = {f["name"]: f["method"] for f in j["check"]["figures"]}
        assert methods["99.999 % RND 4KiB R/W 0/100"].endswith(": " + why["0/100"]), methods
