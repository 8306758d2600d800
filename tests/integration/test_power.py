"""`iolab power RUN LOG` on a run with real fio on a file: a meter log made to draw a known power
in each cell comes back as each cell's average and maximum, through a shifted meter clock, into
power.json, the JSON document, the report's Power Consumption page and the run's inputs/."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3

import pytest
from pypdf import PdfReader

from .conftest import fill, iolab, mounted_tmpfs

pytestmark = pytest.mark.integration


def designed_log(run_dir, shift: float, step: float = 0.1) -> tuple[str, dict[tuple[str, int, int], float]]:
    """Readings every `step` (0.1) s inside each cell at 2 W + 0.5 W x its order, 1 W between cells; a reading
    at each cell's start and end, so the step function is the design exactly. Meter clock = host - shift."""
    db = sqlite3.connect(f"file:{run_dir / 'results.db'}?mode=ro", uri=True)
    cells = db.execute("SELECT phase, round, ordinal, started, ended FROM cells ORDER BY started").fetchall()
    rows, want = [], {}
    t0 = cells[0][3] - 5
    rows.append((t0, 1.0))
    for i, (phase, rnd, ordinal, start, end) in enumerate(cells):
        w = 2.0 + 0.5 * i
        want[(phase, rnd, ordinal)] = w * 1000
        t = start
        while t < end:
            rows.append((t, w))
            t += step
        rows.append((end, 1.0))
    rows.append((cells[-1][4] + 5, 1.0))
    return "time,watts\n" + "".join(f"{t - shift:.6f},{w}\n" for t, w in rows), want


def test_a_meter_log_gives_each_cell_its_power_in_the_document_report_and_run(scratch):
    runs = scratch / "runs"
    p = iolab(
        "run",
        "latency",
        "-t",
        f"file:{scratch}/drive.img?size=64MiB",
        "--quick",
        "--cell-time",
        "1s",
        "--max-rounds",
        "1",
        "--no-report",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode in (0, 6), p.stdout + p.stderr
    [run] = list(runs.iterdir())
    text, want = designed_log(run, shift=100.0)
    meter = scratch / "meter.csv"
    meter.write_text(text)

    p = iolab("power", str(run), str(meter), "--offset", "100", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["command"] == "power" and doc["exit_code"] == 0
    got = {(c["phase"], c["round"], c["cell"]): c for c in doc["power"]["cells"]}
    assert set(got) == set(want)
    # The log's times are written to the µs (cell bounds are finer), so a cell's first and last
    # reading may sit up to ~1 µs off its bound, weighing that much of the 1 W between cells into
    # it: about 1e-6 of a 1 s cell (1,999.9978 of 2,000 mW once). A reading too many or too few
    # (0.1 s) is 5 %.
    for key, mw in want.items():
        assert got[key]["avg_mw"] == pytest.approx(mw, rel=1e-5) and got[key]["max_mw"] == pytest.approx(mw)
        assert got[key]["coverage_pct"] == pytest.approx(100.0)
    assert doc["power"]["run"]["max_mw"] == pytest.approx(max(want.values()))
    assert json.loads((run / "power.json").read_text())["cells"] == doc["power"]["cells"]
    assert (run / "power-meter.csv").read_text() == text

    # without the clock offset the log misses the run: refused, with the times, nothing replaced
    p = iolab("power", str(run), str(meter))
    assert p.returncode == 2 and "covers none of the run's cells" in p.stderr and "Traceback" not in p.stderr
    assert json.loads((run / "power.json").read_text())["offset_s"] == 100.0
    # an offset that is not a number was blamed on the log's first reading ("power '7.000' ...
    # is not a finite non-negative reading"); it is the offset that is refused, nothing replaced
    for bad in ("nan", "inf", "-inf"):
        p = iolab("power", str(run), str(meter), f"--offset={bad}")
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        flat = " ".join(p.stderr.split())
        assert f"the clock offset (--offset) must be a finite number of seconds, not {bad}" in flat, flat
    assert json.loads((run / "power.json").read_text())["offset_s"] == 100.0
    # an offset no clock can be off by was blamed on the log ("every reading has the same time")
    p = iolab("power", str(run), str(meter), "--offset", "1e300")
    flat = " ".join(p.stderr.split())
    assert p.returncode == 2 and "the clock offset (--offset) 1e+300 s is more than 10,000,000,000 s" in flat, flat
    # a log that is not there: named as the meter log, and --json still prints its one document
    p = iolab("power", str(run), str(scratch / "no-such-log.csv"), "--json")
    missing = json.loads(p.stdout)
    assert p.returncode == 2 == missing["exit_code"] and missing["command"] == "power", p.stdout + p.stderr
    said = f"power meter log {scratch / 'no-such-log.csv'}: cannot read it (No such file or directory)"
    assert said in " ".join(p.stderr.split()) and said in missing["error"], (missing, p.stderr)
    assert json.loads((run / "power.json").read_text())["offset_s"] == 100.0

    out = scratch / "report"
    p = iolab("report", str(run), "--out", str(out))
    assert p.returncode == 0, p.stderr
    [pdf] = out.glob("*.pdf")
    pages = [pg.extract_text() for pg in PdfReader(pdf).pages]
    power = "\n".join(t for t in pages if "— Power Consumption" in t[:300])
    assert "Power Consumption: average and maximum" in power and "Power per workload" in power
    # each workload's cells pooled by time: what the designed log gives, none "not measured"
    pooled: dict[tuple[str, str], list[float]] = {}
    for c in doc["power"]["cells"]:
        e_t = pooled.setdefault((c["phase"], c["label"]), [0.0, 0.0])
        e_t[0] += want[(c["phase"], c["round"], c["cell"])] * (c["ended"] - c["started"])
        e_t[1] += c["ended"] - c["started"]
    assert all(f"{e / t:,.0f}" in power for e, t in pooled.values())
    assert "not measured" not in power.replace("is not measured", "")  # the source line names the rule


def test_a_simulated_run_has_no_meter_to_align(scratch):
    runs = scratch / "runs"
    p = iolab("run", "latency", "-t", "sim:client-nvme-slc", "--quick", "--no-report", "--runs-dir", str(runs))
    assert p.returncode in (0, 6), p.stderr
    [run] = list(runs.iterdir())
    modelled = (run / "power.json").read_bytes()  # the simulator power model's (figures/simpower.py)
    meter = scratch / "m.csv"
    meter.write_text("time,watts\n1,1\n2,1\n")
    p = iolab("power", str(run), str(meter))
    assert p.returncode == 2 and "virtual time" in p.stderr
    assert (run / "power.json").read_bytes() == modelled and not (run / "inputs").exists()


def test_a_disk_that_fills_between_the_meter_log_and_power_json_leaves_neither(scratch):
    """Before: the log's copy took its name, then power.json found no room (exit 5), leaving the
    new log beside the old figures (or none). Both are written aside first: each room from none
    up to what both need leaves neither file (exit 5), until both fit."""
    runs = scratch / "runs"
    line = ("run", "latency", "-t", f"file:{scratch}/drive.img?size=64MiB", "--quick", "--cell-time", "200ms")
    p = iolab(*line, "--max-rounds", "1", "--no-report", "--runs-dir", str(runs))
    assert p.returncode in (0, 6), p.stdout + p.stderr
    [run] = list(runs.iterdir())
    text, _ = designed_log(run, shift=0.0, step=0.0005)  # a log of many pages, power.json of a few
    meter = scratch / "meter.csv"
    meter.write_text(text)
    pages = -(-len(text.encode()) // 4096)
    failed = []
    with mounted_tmpfs("64M") as fs:
        copy = fs / run.name
        shutil.copytree(run, copy)
        for room in range(pages, pages + 16):  # free pages: the log's copy, writer.lock's, power.json's
            spacer = fs / "spacer"
            spacer.write_bytes(b"\0" * room * 4096)
            filler = fill(fs)
            spacer.unlink()
            p = iolab("power", str(copy), str(meter))
            filler.unlink()
            names = sorted(f.name for f in copy.iterdir())
            if p.returncode == 0:
                assert (copy / "power-meter.csv").read_text() == text
                assert json.loads((copy / "power.json").read_text())["source_copy"] == "power-meter.csv"
                break
            said = " ".join(p.stderr.split())
            assert p.returncode == 5 and f"results disk full at {copy}" in said and "Traceback" not in said, said
            assert "power-meter.csv" not in names and "power.json" not in names, (room, names)
            assert not [n for n in names if n.endswith((".tmp", ".partial"))], names
            failed.append(room)
        else:
            pytest.fail(f"power.json and the log's copy did not fit in {room} free pages")
    # the log's copy and writer.lock fitted in the last room that failed: it was power.json that did not
    assert failed and max(failed) >= pages + 1, failed


def test_a_kill_between_the_meter_log_and_power_json_is_told_not_paired(scratch):
    """`iolab power` replaces the log's copy, then power.json; killed between the two renames it
    leaves a new log beside the old figures. Before: show, report and export paired them (the
    report's source line named the new log's copy for the old log's figures), exit 0. power.json
    names its log by size and digest, and every reader refuses the pair, naming both."""
    runs = scratch / "runs"
    line = ("run", "latency", "-t", f"file:{scratch}/drive.img?size=64MiB", "--quick", "--cell-time", "200ms")
    p = iolab(*line, "--max-rounds", "1", "--no-report", "--runs-dir", str(runs))
    assert p.returncode in (0, 6), p.stdout + p.stderr
    [run] = list(runs.iterdir())
    first, _ = designed_log(run, shift=0.0)
    second, _ = designed_log(run, shift=0.0, step=0.05)
    for text, name in ((first, "first.csv"), (second, "second.csv")):
        (scratch / name).write_text(text)
    assert iolab("power", str(run), str(scratch / "first.csv")).returncode == 0
    for command in ("show", "report"):
        p = iolab(command, str(run), "--out", str(scratch / "ok")) if command == "report" else iolab(command, str(run))
        assert p.returncode in (0, 6), p.stderr
    # the replace's first rename only, as durable._replace_together does it: the copy, written aside
    tmp = run / "power-meter.csv.tmp"
    tmp.write_text(second)
    tmp.replace(run / "power-meter.csv")
    size = len(second.encode())
    for args in (
        ("show", str(run)),
        ("report", str(run), "--out", str(scratch / "r")),
        ("export", str(run), "-o", str(scratch / "e")),
    ):
        p = iolab(*args)
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "Traceback" not in said, (args, p.stdout, said)
        assert f"{run / 'power.json'}: its power figures come from a meter log of {len(first.encode()):,} bytes" in said
        assert f"but the copy beside it, {run / 'power-meter.csv'}, is {size:,} bytes with sha256" in said, said
        assert "`iolab power` was stopped between replacing the two" in said
    # attached again whole, the pair agrees
    assert iolab("power", str(run), str(scratch / "second.csv")).returncode == 0
    assert iolab("show", str(run)).returncode in (0, 6)


def test_an_irregular_meter_is_weighed_by_time_not_refused(scratch):
    """The tester's meter3.csv over a real run: every 2 s one 5.0 W reading that holds 1 s (the
    meter is slow while power is steady), then 1 s of readings every 10 ms at 5.0-6.0 W. Before,
    the 10 ms median made every steady second a gap: refused ("check the meter's clock"), or with
    --min-coverage lowered, averaged over the busy half only (~5,500 mW, not ~5,250)."""
    import random

    runs = scratch / "runs"
    target, one = f"file:{scratch}/drive.img?size=64MiB", ("--max-rounds", "1", "--no-report")
    p = iolab("run", "latency", "-t", target, "--quick", "--cell-time", "1s", *one, "--runs-dir", str(runs))
    assert p.returncode in (0, 6), p.stdout + p.stderr
    [run] = list(runs.iterdir())
    db = sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True)
    first, last = db.execute("SELECT MIN(started), MAX(ended) FROM cells").fetchone()
    rnd, rows, t = random.Random(3), [], first - 11
    while t < last + 15:
        rows += [(t, 5.0)] + [(t + 1 + k * 0.01, 5.0 + rnd.random()) for k in range(100)]
        t += 2
    meter = scratch / "meter3.csv"
    meter.write_text("time,watts\n" + "".join(f"{a:.3f},{w:.3f}\n" for a, w in rows))
    p = iolab("power", str(run), str(meter), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)["power"]
    assert doc["gap_s"] == pytest.approx(5.0) and doc["run"]["measured"] == doc["run"]["cells"]
    assert 5150 < doc["run"]["avg_mw"] < 5350  # half the time 5.0 W, half 5.0-6.0 W
    # the median interval (10 ms) alone did not say the 1 s readings hold: the gap limit used is
    # printed beside it, by `iolab power` and on the report's Power Consumption page
    said = "readings every 0.01 s (median); gap limit 5 s (5 x the 99.5th-percentile interval, 1 s)"
    p = iolab("power", str(run), str(meter))
    assert p.returncode == 0 and said in " ".join(p.stdout.split()), p.stdout + p.stderr
    assert iolab("report", str(run)).returncode == 0
    html = (run / "report" / f"{run.name}.html").read_text()
    assert said in " ".join(re.sub(r"<[^>]+>", " ", html).split())
