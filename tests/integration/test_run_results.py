"""Reading stored runs: the Python API's documented example (docs/python-api.md) run as a user
runs it, and `iolab history` across a runs directory, read-only, through the `iolab` command."""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..schema_lite import errors
from .conftest import iolab

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs/schema/outcome.schema.json").read_text())
QUICK = ("--quick", "--cell-time", "1s", "--max-rounds", "5", "--no-report")
ART = "ART RND 4KiB R/W 65/35"
IOPS = "RND 4KiB R/W 0/100 IOPS"


def quick_run(runs: Path, target: str, test: str = "latency") -> dict:
    p = iolab("run", test, "-t", target, *QUICK, "--runs-dir", str(runs), "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["runs"][0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, list[dict]]:
    """Four quick runs: three of one simulated drive (seeds 1, 2 and 1 again: runs of the same drive,
    docs/simulator.md), one of another (another preset)."""
    root = tmp_path_factory.mktemp("results") / "runs"
    made = [
        quick_run(root, t)
        for t in (
            "sim:enterprise-sas?seed=1&user_gb=4",
            "sim:enterprise-sas?seed=2&user_gb=4",
            "sim:enterprise-sas?seed=1&user_gb=4",
            "sim:client-nvme-slc?seed=1&user_gb=4",
        )
    ]
    return root, made


def tree_hash(d: Path) -> str:
    """Every name, size, mode, time and byte under d."""
    h = hashlib.sha256()
    for p in sorted(d.rglob("*")):
        st = p.lstat()
        h.update(f"{p.relative_to(d)} {st.st_mode} {st.st_size} {st.st_mtime_ns}\n".encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def test_the_python_api_example_in_the_docs_runs_on_a_real_run(runs, tmp_path):
    root, made = runs
    text = (ROOT / "docs/python-api.md").read_text()
    [code] = re.findall(r"```python\n(.*?)```", text, re.S)
    script = tmp_path / "example.py"
    script.write_text(code)
    before = tree_hash(root)
    p = subprocess.run([sys.executable, str(script), made[0]["path"]], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert tree_hash(root) == before  # read-only
    # the figures the example prints are the run's own, as `iolab show --json` gives them
    for f in made[0]["figures"]:
        shown = "not measured" if f["value"] is None else f"{f['value']:.1f} {f['unit']}"
        assert f"{f['name']}: {shown} ({f['direction']})" in p.stdout
    assert f"steady state: {made[0]['steady_state']}" in p.stdout
    assert re.search(r"^45 cells; most IOPS: ", p.stdout, re.M), p.stdout


def test_the_python_api_gives_cells_verdicts_and_a_dataframe_only_with_pandas(runs):
    from iolab.api.results import CELL_COLUMNS, open_run

    _, made = runs
    with open_run(made[0]["path"]) as run:
        rec = made[0]
        assert [(f.name, f.value, f.unit, f.direction) for f in run.figures()] == [
            (f["name"], f["value"], f["unit"], f["direction"]) for f in rec["figures"]
        ]
        assert run.figure(ART).value == next(f["value"] for f in rec["figures"] if f["name"] == ART)
        with pytest.raises(KeyError, match="it has: 'ART RND 4KiB R/W 100/0'"):
            run.figure("no such figure")
        [ph] = run.phases()
        assert (ph.name, ph.steady, list(ph.window)) == (
            rec["phases"][0]["name"],
            rec["phases"][0]["steady"],
            rec["phases"][0]["window"],
        )
        assert [t.values for t in ph.tracking] == [tuple(t["values"]) for t in rec["phases"][0]["tracking"]]
        rows = run.cells()
        assert rows and set(rows[0]) == set(CELL_COLUMNS)
        arr = run.cell_arrays()
        assert list(arr["iops"]) == [r["iops"] for r in rows]
        try:
            import pandas  # noqa: F401
        except ImportError:
            with pytest.raises(ImportError, match="needs pandas"):
                run.dataframe()
        else:
            assert list(run.dataframe()["iops"]) == [r["iops"] for r in rows]


def test_history_lists_a_figure_per_target_in_time_order_and_leaves_the_runs_as_they_were(runs, tmp_path):
    root, made = runs
    broken = root / "20200101-000000-latency-broken"
    if not broken.exists():
        broken.mkdir()
        (broken / "manifest.json").write_text("{not json")
    before = tree_hash(root)
    out = tmp_path / "trend.html"
    p = iolab("history", ART, "--runs-dir", str(root), "--json", "--html", str(out))
    assert p.returncode == 0, p.stderr
    assert tree_hash(root) == before  # read-only, also with a chart written elsewhere
    doc = json.loads(p.stdout)
    assert errors(doc, SCHEMA) == [] and doc["command"] == "history" and doc["exit_code"] == 0
    h = doc["history"]
    assert (h["figure"], h["unit"], h["direction"], h["tests"]) == (ART, "µs", "lower-is-better", ["latency"])
    value = {r["run_id"]: next(f["value"] for f in r["figures"] if f["name"] == ART) for r in made}
    # a seed is another run of the drive, another preset another drive (the first target's first run started first)
    drive, other = h["targets"]
    assert [p["run_id"] for p in drive["points"]] == [r["run_id"] for r in made[:3]]
    assert [p["seed"] for p in drive["points"]] == [1, 2, 1] and "seed" not in drive["spec"]
    assert [(p["run_id"], p["seed"]) for p in other["points"]] == [(made[3]["run_id"], 1)]
    for t in (drive, other):
        for pt in t["points"]:
            assert pt["value"] == value[pt["run_id"]] and pt["firmware"].startswith("sim-")
    assert [s["path"] for s in h["skipped"]] == [str(broken)]
    # the chart: one self-contained page, nothing loaded from elsewhere
    page = out.read_text()
    chart = page[page.index("<svg") : page.index("</svg>")]  # a point per run (a square: no steady state)
    assert chart.count("<circle") + chart.count("<rect") == 4 and made[2]["run_id"] in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    # the table, one target: by its id, or by the spec of one of its runs (seed and all)
    for which in (other["id"], made[3]["target"]["spec"]):
        t = iolab("history", ART, "--runs-dir", str(root), "--target", which)
        assert t.returncode == 0, t.stderr
        # whole words: two runs started in the same second are named X and X-2
        shown = set(t.stdout.split())
        assert made[3]["run_id"] in shown and made[0]["run_id"] not in shown
        [row] = [line.split() for line in t.stdout.splitlines() if made[3]["run_id"] in line]
        assert float(row[-1].replace(",", "")) == pytest.approx(value[made[3]["run_id"]], rel=1e-3), t.stdout
    t = iolab("history", ART, "--runs-dir", str(root), "--target", made[1]["target"]["spec"])  # seed=2's
    rows = [line.split() for line in t.stdout.splitlines() if any(r["run_id"] in line for r in made)]
    assert t.returncode == 0 and [row[2] for row in rows] == ["1", "2", "1"], t.stdout  # the seed column
    assert tree_hash(root) == before


def test_history_counts_a_copied_run_directory_once_and_says_which_copy_it_left_out(runs, tmp_path):
    # `cp -a runs/RUN hdup/copy-of-run` beside RUN itself showed two identical points of one run
    # (one uid), as if the drive had been measured twice; compare and check refuse that pair
    _, made = runs
    root = tmp_path / "hdup"
    first, again = (Path(made[i]["path"]) for i in (0, 2))  # two runs of one drive (seed 1 twice)
    for src, name in ((first, first.name), (first, "copy-of-run"), (again, again.name)):
        shutil.copytree(src, root / name, symlinks=True)
    p = iolab("history", ART, "--runs-dir", str(root), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert errors(doc, SCHEMA) == []
    [drive] = doc["history"]["targets"]
    assert [pt["run_id"] for pt in drive["points"]] == [made[0]["run_id"], made[2]["run_id"]]
    assert [s["path"] for s in doc["history"]["skipped"]] == [str(root / "copy-of-run")]
    assert made[0]["run_id"] in doc["history"]["skipped"][0]["reason"]
    shown = iolab("history", ART, "--runs-dir", str(root))
    said = " ".join(shown.stdout.split())
    # whole words: made[2] started in made[0]'s second is named X-2 (or X-3), which holds X
    rows = [ln for ln in shown.stdout.splitlines() if made[0]["run_id"] in ln.split() and not ln.startswith("skipped")]
    assert shown.returncode == 0 and len(rows) == 1, shown.stdout
    assert f"skipped {root / 'copy-of-run'}: a copy of run {made[0]['run_id']}" in said, said


def test_history_marks_each_scaled_down_run_in_the_table_the_document_and_the_chart(runs, tmp_path):
    """A quick run (1 s cells, 512 MiB tested) and a compliant run of one drive are points of
    one line: history printed, saved and drew them alike, with nothing to tell a scaled-down
    run's figure from a compliant one's. Each point now says whether its run is compliant and
    why not, as `iolab runs` and every report page do."""
    root, made = runs
    out = tmp_path / "trend.html"
    p = iolab("history", ART, "--runs-dir", str(root), "--json", "--html", str(out))
    assert p.returncode == 0, p.stderr
    points = [pt for t in json.loads(p.stdout)["history"]["targets"] for pt in t["points"]]
    assert len(points) == 4
    for pt in points:
        assert pt["compliant"] is False and "quick profile" in pt["noncompliance"], pt
    shown = iolab("history", ART, "--runs-dir", str(root)).stdout
    rows = [line for line in shown.splitlines() if any(r["run_id"] in line for r in made)]
    assert len(rows) == 4 and all("no: quick profile" in line for line in rows), shown
    page = out.read_text()
    chart = page[page.index("<svg") : page.index("</svg>")]  # the points; the legend of marks is below it
    assert chart.count('fill="white"') == 4 and "non-compliant" in page  # hollow points, said in words


def test_history_marks_a_run_not_at_steady_state_and_one_whose_audit_failed(tmp_path):
    """A drive's run that reached steady state and one cut to 4 rounds (never judged) whose
    audit failed: history listed, saved and drew both as ordinary points, with nothing of the
    steady state or the audit, which `fleet` carries per drive. Each point now says both."""
    import sqlite3

    from .conftest import SMALL_SIM

    root = tmp_path / "runs"
    steady = quick_run(root, SMALL_SIM)
    p = iolab("run", "latency", "-t", SMALL_SIM, "--quick", "--max-rounds", "4", "--no-report", "--runs-dir", str(root), "--json")  # fmt: skip
    assert p.returncode == 0, p.stderr
    short = json.loads(p.stdout)["runs"][0]
    assert (steady["steady_state"], short["steady_state"]) == ("reached", "not-evaluated")
    db = sqlite3.connect(Path(short["path"]) / "results.db")  # a percentile above the cell's largest sample
    db.execute("update cells set p99=lat_max_us*3 where id=(select min(id) from cells where round=1)")
    db.commit()
    db.close()
    assert iolab("audit", short["path"], "--store").returncode == 8
    out = tmp_path / "trend.html"
    p = iolab("history", ART, "--runs-dir", str(root), "--json", "--html", str(out))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert errors(doc, SCHEMA) == []
    [target] = doc["history"]["targets"]
    got = [(pt["run_id"], pt["steady_state"], pt["audit_failed"]) for pt in target["points"]]
    # raw-figures too: the p99 stored is not what the cell's raw output gives
    failed = ["percentile-samples", "raw-figures"]
    assert got == [(steady["run_id"], "reached", []), (short["run_id"], "not-evaluated", failed)]
    shown = iolab("history", ART, "--runs-dir", str(root)).stdout
    # whole words: the short run started in the steady one's second is named X-2, which holds X
    rows = {r["run_id"]: line for r in (steady, short) for line in shown.splitlines() if r["run_id"] in line.split()}
    assert " reached " in rows[steady["run_id"]] and " passed " in rows[steady["run_id"]], shown
    assert (
        "not evaluated" in rows[short["run_id"]] and "FAILED: percentile-samples, raw-figures" in rows[short["run_id"]]
    ), shown
    page = out.read_text()
    chart = page[page.index("<svg") : page.index("</svg>")]
    # the steady run a circle, the other a square crossed in red; the legend says what each mark is
    assert chart.count("<circle") == 1 and chart.count("<rect") == 1 and chart.count('stroke="#b02a37"') == 1
    assert "steady state NOT reached, or not evaluated" in page and "self-audit failed" in page
    assert "<td>not evaluated</td><td>FAILED: percentile-samples, raw-figures</td>" in page


def test_history_bad_input_is_one_message_and_exit_2_and_the_chart_obeys_the_write_policy(runs, tmp_path):
    root, _ = runs

    def message(*args: str) -> str:
        p = iolab("history", *args)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        return " ".join(p.stderr.split())

    m = message("No such figure", "--runs-dir", str(root))
    assert "have a figure named 'No such figure'; the figures they have: " in m and repr(ART) in m
    assert "no runs of test 'iops'" in message(ART, "--runs-dir", str(root), "--test", "iops")
    assert "--target nothing-like-it: no target" in message(ART, "--runs-dir", str(root), "--target", "nothing-like-it")
    assert "no such runs directory" in message(ART, "--runs-dir", str(tmp_path / "absent"))
    assert not (tmp_path / "absent").exists()
    mine = tmp_path / "mine.html"
    mine.write_text("someone's notes")
    p = iolab("history", ART, "--runs-dir", str(root), "--html", str(mine))
    assert p.returncode == 3 and "Refusing to write the history chart" in p.stderr
    assert mine.read_text() == "someone's notes"


PUBLISHED = """drive,figure,value,unit
Vendor X1,ART RND 4KiB R/W 65/35,{x1},µs
Vendor X1,MRT RND 4KiB R/W 0/100,{mrt},µs
Vendor Y2,ART RND 4KiB R/W 65/35,{y2},µs
Vendor Y2,RND 4KiB R/W 0/100 IOPS,100000,IOPS
"""


def test_compare_ranks_published_figures_alone_or_beside_measured_runs(runs, tmp_path):
    root, made = runs
    art = [next(f["value"] for f in r["figures"] if f["name"] == ART) for r in made[:2]]
    mrt = next(f["value"] for f in made[0]["figures"] if f["name"] == "MRT RND 4KiB R/W 0/100")
    csv_file = tmp_path / "datasheets.csv"
    # X1 beats both runs' ART, Y2 is worse than both; X1's MRT ties run 1's as printed
    csv_file.write_text(PUBLISHED.format(x1=min(art) / 2, y2=max(art) * 2, mrt=mrt))
    p = iolab("compare", made[0]["path"], made[1]["path"], str(csv_file), "--out", str(tmp_path / "cmp"), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert errors(d, SCHEMA) == [] and d["command"] == "compare" and len(d["runs"]) == 2 and d["reports"]
    r = d["ranking"]
    assert r["labels"][2:] == ["Vendor X1 (published)", "Vendor Y2 (published)"]
    assert r["published"] == [False, False, True, True]
    a = next(f for f in r["figures"] if f["name"] == ART)
    assert a["ranks"][2] == 1 and a["ranks"][3] == 4 and sorted(a["ranks"][:2]) in ([2, 2], [2, 3])
    m = next(f for f in r["figures"] if f["name"] == "MRT RND 4KiB R/W 0/100")
    assert m["values"][3] is None and m["ranks"][3] is None and m["ranks"][2] == m["ranks"][0]
    assert [x["source"] for x in d["published"]] == [f"{csv_file}:{n}" for n in (2, 3, 4, 5)]
    assert "RND 4KiB R/W 0/100 IOPS' is not a figure of the compared test" in " ".join(p.stderr.split())

    # alone: the published drives ranked among themselves, each figure in its known direction
    p = iolab("compare", str(csv_file), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert errors(d, SCHEMA) == [] and d["runs"] == [] and d["reports"] == []
    iops = next(f for f in d["ranking"]["figures"] if f["name"] == "RND 4KiB R/W 0/100 IOPS")
    # Y2 alone publishes this figure: one value is ranked for none
    assert iops["direction"] == "higher-is-better" and iops["ranks"] == [None, None]
    assert next(f for f in d["ranking"]["figures"] if f["name"] == ART)["ranks"] == [1, 2]
    # the table a person reads
    t = iolab("compare", made[0]["path"], str(csv_file))
    assert t.returncode == 0 and "Vendor X1 (published)" in t.stdout and "(#1)" in t.stdout
    # one run and published figures write no report, and the table's note does not promise one
    assert "comparison:" not in t.stdout and "the report has" not in t.stdout
    assert "no comparison report: overlays need two or more measured runs" in " ".join(t.stdout.split())


@pytest.mark.parametrize(
    "text, where",
    [
        (
            "drive,figure,value\nX,ART RND 4KiB R/W 65/35,1\n",
            "line 1, field 'unit': the header line has no column unit",
        ),
        ("drive,figure,value,unit,colour\n", "line 1, field 'colour': the header line's column 'colour' is unknown"),
        (
            "drive,figure,value,unit\nX,ART RND 4KiB R/W 65/35,fast,µs\n",
            "line 2, field 'value': 'fast' is no plain number (ASCII digits",
        ),
        (
            "drive,figure,value,unit\nX,ART RND 4KiB R/W 65/35,nan,µs\n",
            "line 2, field 'value': 'nan' is no plain number (ASCII digits",
        ),
        (
            "drive,figure,value,unit\nX,ART RND 4KiB R/W 65/35,1,µs\n,ART RND 4KiB R/W 65/35,2,µs\n",
            "line 3, field 'drive': the field is empty",
        ),
        (
            "drive,figure,value,unit\nX,ART RND 4KiB R/W 65/35,1,ms\n",
            "line 2, field 'unit': 'ART RND 4KiB R/W 65/35' is in µs",
        ),
        (
            "drive,figure,value,unit\nX,Made-up figure,1,x\n",
            "line 2, field 'figure': 'Made-up figure' is no key figure",
        ),
        ("drive,figure,value,unit,direction\nX,Made-up figure,1,x,up\n", "line 2, field 'direction': 'up' is neither"),
        (
            "drive,figure,value,unit\nX,ART RND 4KiB R/W 65/35,1,µs,extra\n",
            "line 2: the line has 5 fields, the header 4",
        ),
        ("drive,figure,value,unit\nX\n", "line 2: the line has 1 field, the header 4"),  # was "1 fields"
        (
            "drive,figure,value,unit\nX,ART RND 4KiB R/W 65/35,1,µs\nX,ART RND 4KiB R/W 65/35,2,µs\n",
            "line 3, field 'figure': 'X' has 'ART RND 4KiB R/W 65/35' already on line 2",
        ),
    ],
)
def test_a_malformed_published_csv_is_one_message_naming_file_line_and_field(runs, tmp_path, text, where):
    root, made = runs
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    p = iolab("compare", made[0]["path"], made[1]["path"], str(bad), "--out", str(tmp_path / "cmp"))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    message = " ".join(p.stderr.split())
    assert f"{bad}, {where}" in message and "Nothing was compared." in message
    assert not (tmp_path / "cmp").exists()  # refused before anything was written


@pytest.mark.parametrize(
    "value, unit, said",
    [
        ("-50000", "IOPS", "-50,000 IOPS is negative; the figure is a magnitude"),
        ("1e300", "IOPS", "1.000e+300 IOPS is more than any drive's (at most 1,000,000,000 IOPS is taken)"),
        ("2e9", "IOPS", "2,000,000,000 IOPS is more than any drive's"),
        ("0", "IOPS", "0 IOPS is no drive's: an IO rate or latency"),
    ],
)
def test_a_negative_or_implausible_published_figure_is_refused_and_printed_readably(tmp_path, value, unit, said):
    # -50000 and 1e300 IOPS were ranked (1e300 first), the latter printed with 301 digits
    f = tmp_path / "vendor.csv"
    f.write_text(f"drive,figure,value,unit\nA,{IOPS},{value},{unit}\nB,{IOPS},180000,IOPS\n")
    p = iolab("compare", str(f))
    message = " ".join(p.stderr.split())
    assert p.returncode == 2 and f"{f}, line 2, field 'value': {said}" in message, p.stdout + p.stderr
    assert not re.search(r"\d[\d,]{20,}", message)  # no number printed digit by digit


def test_published_figures_up_to_the_bound_and_negative_ones_of_other_units_are_ranked(tmp_path):
    f = tmp_path / "vendor.csv"
    f.write_text(
        f"drive,figure,value,unit,direction\nA,{IOPS},1e9,IOPS,\nB,{IOPS},180000,IOPS,\n"
        "A,Temperature rise,-2.5,°C,lower-is-better\nB,Temperature rise,3,°C,lower-is-better\n"
    )
    p = iolab("compare", str(f), "--json")
    assert p.returncode == 0, p.stderr
    figures = {x["name"]: x for x in json.loads(p.stdout)["ranking"]["figures"]}
    assert figures[IOPS]["ranks"] == [1, 2] and figures["Temperature rise"]["ranks"] == [1, 2]


def test_a_made_up_figure_with_a_direction_column_is_ranked(tmp_path):
    f = tmp_path / "vendor.csv"
    f.write_text(
        "drive,figure,value,unit,direction\nA,Sustained write,900,MB/s,higher-is-better\n"
        "B,Sustained write,1200,MB/s,higher-is-better\n"
    )
    p = iolab("compare", str(f), "--json")
    assert p.returncode == 0, p.stderr
    [fig] = json.loads(p.stdout)["ranking"]["figures"]
    assert fig["ranks"] == [2, 1] and fig["unit"] == "MB/s"


def test_run_repeat_gives_each_figure_an_interval_and_check_takes_the_repeats_as_noise(tmp_path):
    runs = tmp_path / "runs"

    def repeated(target: str) -> tuple[subprocess.CompletedProcess, dict]:
        p = iolab("run", "latency", "-t", target, *QUICK, "--runs-dir", str(runs), "--repeat", "3", "--json")
        d = json.loads(p.stdout)
        assert errors(d, SCHEMA) == [] and d["exit_code"] == p.returncode
        return p, d

    p, base = repeated("sim:enterprise-sas?user_gb=4")
    assert p.returncode == 0, p.stderr
    # three whole runs, each with its own purge; the simulator draws a new stream per repeat
    assert [re.search(r"seed=\d+", r["target"]["spec"]).group() for r in base["runs"]] == ["seed=1", "seed=2", "seed=3"]
    assert p.stderr.count("purge") >= 3 and len({r["run_id"] for r in base["runs"]}) == 3
    rep = base["repeat"]
    assert rep["runs"] == 3 and rep["confidence"] == 0.95 and "logarithms" in rep["method"]
    art = next(f for f in rep["figures"] if f["name"] == ART)
    values = [next(f["value"] for f in r["figures"] if f["name"] == ART) for r in base["runs"]]
    assert art["values"] == values and art["n"] == 3
    mean = sum(values) / 3
    sd = (sum((v - mean) ** 2 for v in values) / 2) ** 0.5
    assert art["mean"] == pytest.approx(mean) and art["stdev"] == pytest.approx(sd)
    # a time is a magnitude: the t interval of the logarithms, geometric mean ×/÷ exp(t(0.975, 2) × s_ln / √3)
    logs = [math.log(v) for v in values]
    centre, sd_ln = math.exp(sum(logs) / 3), (sum((x - sum(logs) / 3) ** 2 for x in logs) / 2) ** 0.5
    factor = math.exp(4.302653 * sd_ln / 3**0.5)
    assert art["interval"] == "geometric" and art["half_width"] is None
    assert art["geometric_mean"] == pytest.approx(centre) and art["factor"] == pytest.approx(factor, rel=1e-6)
    assert (art["low"], art["high"]) == pytest.approx((centre / factor, centre * factor), rel=1e-6)
    [row] = [line for line in p.stderr.splitlines() if line.lstrip().startswith(ART)]
    assert "geometric mean" in row and "×/÷" in row, p.stderr
    # an extreme (one maximum per run) gets no t interval: 3 runs' maxima of 163,495, 8,831 and
    # 24,034 µs on a file gave -146,310 to 277,216 µs
    mrt = next(f for f in rep["figures"] if f["name"] == "MRT RND 4KiB R/W 0/100")
    assert mrt["kind"] == "extreme" and mrt["n"] == 3 and mrt["mean"] is not None
    assert mrt["half_width"] is None and mrt["low"] is None and mrt["high"] is None
    assert art["kind"] == "value"
    [row] = [line for line in p.stderr.splitlines() if line.lstrip().startswith("MRT RND 4KiB R/W 0/100")]
    assert "none: an extreme" in row, p.stderr
    # a figure no repeat measured says why below the table, as each run's own key figures do
    nines = next(f for f in rep["figures"] if f["name"] == "99.999 % RND 4KiB R/W 100/0")
    said = [next(f.get("unmeasured") for f in r["figures"] if f["name"] == nines["name"]) for r in base["runs"]]
    assert nines["n"] == 0 and all(said) and nines["unmeasured"] == list(dict.fromkeys(said))
    assert f"— {nines['name']}: not measured in any run: {said[0]}" in " ".join(p.stderr.split()), p.stderr
    (tmp_path / "base.json").write_text(p.stdout)

    p, cand = repeated("sim:enterprise-sas?user_gb=4&t_prog_us=2300")  # twice the program time
    assert p.returncode == 0, p.stderr
    (tmp_path / "cand.json").write_text(p.stdout)
    c = iolab("check", str(tmp_path / "cand.json"), "--baseline", str(tmp_path / "base.json"), "--json")
    assert c.returncode == 7, c.stderr
    fig = next(f for f in json.loads(c.stdout)["check"]["figures"] if f["name"] == ART)
    assert fig["baseline"]["noise_source"] == fig["candidate"]["noise_source"] == "repeats"
    assert fig["baseline"]["samples"] == values and "repeated runs" in fig["method"]
    assert fig["verdict"] == "regression"
    # the same with the run ids, as a person types them
    ids = [r["run_id"] for r in cand["runs"]]
    c = iolab(
        "check", *ids, *(x for r in base["runs"] for x in ("--baseline", r["run_id"])), env={"IOLAB_RUNS": str(runs)}
    )
    assert c.returncode == 7 and "repeated runs" in " ".join(c.stdout.split())


def test_run_repeat_of_a_sequence_counts_repeats_and_keeps_each_figure_with_its_test(tmp_path):
    """A repeat of a sequence is one run per test: the table counts repeats, not runs, and a
    figure's values are its own test's, n of them per test."""
    # 200 ms cells: what is read is how the repeats are counted and each figure kept, not a
    # figure's value, and the simulator works in proportion to the time it simulates
    short = ("--quick", "--cell-time", "200ms", "--max-rounds", "5", "--no-report")
    p = iolab(
        "run", "characterise", "-t", "sim:enterprise-sas?user_gb=4", *short, "--runs-dir", str(tmp_path / "runs"),
        "--repeat", "2", "--json", timeout=900,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert errors(d, SCHEMA) == []
    tests = [r["test"] for r in d["runs"]]
    assert len(tests) == 2 * len(set(tests)) > 2
    rep = d["repeat"]
    assert rep["runs"] == len(tests) and rep["repeats"] == 2
    for f in rep["figures"]:
        runs = [r for r in d["runs"] if r["test"] == f["test"]]
        mine = [x["value"] for r in runs for x in r["figures"] if x["name"] == f["name"]]
        assert f["values"] == [v for v in mine if v is not None] and f["n"] <= 2, f
    # the table as the terminal gives it: with --json on standard error (on standard output
    # without it: test_run_repeat_output_and_bad_counts), the same command's, not a second sequence
    text = " ".join(p.stderr.split())
    assert "2 of 2 repeats complete" in text and "qos: write: median round IOPS" in text


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_run_repeat_output_and_bad_counts(tmp_path, quiet):
    """Each repeat's results (its key figures, its run directory) went to standard error, the
    interval table alone to standard output: data where a script reads progress."""
    runs = tmp_path / "runs"
    p = iolab(
        "run", "latency", "-t", "sim:enterprise-sas?user_gb=4", *QUICK, *quiet, "--runs-dir", str(runs), "--repeat", "2"
    )
    assert p.returncode == 0, p.stderr
    out = " ".join(p.stdout.split())
    assert "2 of 2 repeats complete: mean and 95% confidence interval" in out and "t interval of the logarithms" in out
    assert f"{ART} (µs; ↓) 2" in out
    dirs = sorted(str(d) for d in runs.iterdir())
    assert out.count("key figures") == 2 and all(f"run directory: {d}" in out for d in dirs), p.stdout
    assert "key figures" not in p.stderr and "run directory" not in p.stderr, p.stderr
    assert [line for line in p.stderr.splitlines() if line.startswith("repeat ")] == [
        f"repeat {k} of 2: sim:enterprise-sas?user_gb=4&seed={k}" for k in (1, 2)
    ], p.stderr  # what is under way: progress, on standard error
    # with --json, standard output is the document alone, each repeat's results beside the progress
    j = iolab(
        "run",
        "latency",
        "-t",
        "sim:enterprise-sas?user_gb=4",
        *QUICK,
        *quiet,
        "--runs-dir",
        str(runs),
        "--repeat",
        "2",
        "--json",
    )
    assert j.returncode == 0 and len(json.loads(j.stdout)["runs"]) == 2, j.stderr
    assert j.stderr.count("key figures") == 2 and j.stderr.count("run directory: ") == 2, j.stderr
    # no repeat complete: no empty table on stdout, only the error on stderr
    none = iolab("run", "latency", "-t", "sim:nosuch", *QUICK, "--repeat", "2", "--runs-dir", str(tmp_path / "rn"))
    assert none.returncode == 2 and none.stdout == "", none.stdout
    assert "repeat 1 of 2 ended with exit code 2" in none.stderr and "unknown" in none.stderr
    bad = iolab("run", "latency", "--repeat", "0", "--runs-dir", str(tmp_path / "runs0"))
    assert bad.returncode == 2 and "--repeat 0: give a number of runs from 1 to 1,000" in bad.stderr
    assert not (tmp_path / "runs0").exists()


def test_check_junit_file_passes_the_write_policy(runs, tmp_path):
    _, made = runs
    mine = tmp_path / "notes.xml"
    mine.write_text("<my-notes/>")
    p = iolab("check", made[2]["path"], "--baseline", made[0]["path"], "--junit", str(mine))
    assert p.returncode == 3 and "Refusing to write the JUnit file" in " ".join(p.stderr.split())
    assert mine.read_text() == "<my-notes/>"
    fresh = tmp_path / "check.xml"
    for _ in range(2):  # iolab's own file is written again
        p = iolab("check", made[2]["path"], "--baseline", made[0]["path"], "--junit", str(fresh))
        assert p.returncode == 0, p.stderr
        assert "<testsuites" in fresh.read_text()


def test_runs_started_in_one_second_are_listed_in_the_order_they_were_named(runs, tmp_path):
    """Runs started in one second are named X, X-2, ... X-10 (a fleet's drives start so): text
    order listed X-10 between X and X-2."""
    _, made = runs
    root = tmp_path / "same-second"
    names = [f"20300101-000000-latency-x{s}" for s in ("", "-2", "-3", "-10", "-11")]
    for name in reversed(names):
        shutil.copytree(made[0]["path"], root / name, symlinks=True)
    p = iolab("runs", "--runs-dir", str(root), "--json")
    assert p.returncode == 0, p.stderr
    assert [Path(r["path"]).name for r in json.loads(p.stdout)["listed"]] == names
