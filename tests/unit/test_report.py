"""Reports from recorded run directories: every required page and header field, the PDF's page
count, the non-compliance label on every page, incomplete and not-steady runs, links to the
raw files. Runs are recorded with the runner's ScriptedEngine (no fio)."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import pypdf
import pytest

from iolab import suites
from iolab.api import registry
from iolab.api.reports import build_document, write_report
from iolab.core.results import Histogram
from iolab.core.units import MiB
from iolab.engines.sim import SimEngine
from iolab.figures.summary import summarise
from iolab.pages.report.html import render
from iolab.pages.report.model import CONTENT_MM, Page, Table, Text, split_rows
from iolab.pages.report.rundata import RunData
from iolab.run.runner import Runner
from iolab.run.runstart import RunOptions, start
from iolab.store.runstore import RunStore
from iolab.targets import DeviceFacts, Target
from tests.unit.test_runner import ScriptedEngine


def target(vendor="Acme", model="FastDisk 9000", firmware="1.2.3") -> Target:
    facts = DeviceFacts(
        vendor=vendor,
        model=model,
        serial="SN1",
        firmware=firmware,
        interface="nvme",
        logical_sector=512,
        physical_sector=4096,
        rotational=False,
    )
    # the quick limit's size: a quick run tests it whole (a larger drive, cut to the limit, is never steady)
    return Target("sim", f"sim:{model.replace(' ', '_')}", model.replace(" ", "_"), 512 * MiB, facts)


def spread_histogram(mean_us: float) -> Histogram:
    """A log-normal-ish latency histogram around mean_us with a sparse tail, of ~1.2 million IOs:
    enough to measure every percentile the reports show (results.measurable)."""
    values, counts, v = [], [], mean_us * 0.3
    while v < mean_us * 60:
        x = math.log(v / mean_us)
        values.append(round(v, 3))
        counts.append(30 * (int(5000 * math.exp(-x * x / 0.18)) + (1 if v > 4 * mean_us else 0)))
        v *= 1.1
    return Histogram(tuple(values), tuple(counts), values[-1])


class DriveEngine(ScriptedEngine):
    """The runner tests' scripted engine, with IOPS that depend on block size and mix (so plots
    and rankings have something to show) and realistic histograms."""

    def __init__(self, speed: float = 1.0, shape=None, **kw):
        super().__init__(self._iops, **kw)
        self.speed, self.shape, self.workload = speed, shape, None

    def _iops(self, rnd, call):
        if self.shape is not None:
            return self.speed * self.shape(rnd, call)
        bs = self.workload.streams[0].block_size
        reads = self.workload.read_pct / 100
        base = min(400_000 * reads + 80_000 * (1 - reads), 3e9 / bs)
        return self.speed * base * (2.5 if rnd <= 2 else 1.0) * (1 + 0.03 * math.sin(call))

    def run(self, target, workload, raw_dir, tag, progress=None):
        self.workload = workload
        r = super().run(target, workload, raw_dir, tag, progress)

        def side(s):
            if s.ios == 0:
                return s
            lat = 1e6 * workload.outstanding / max(r.iops, 1)
            return dataclasses.replace(s, lat_mean_us=lat, lat_max_us=lat * 40, histogram=spread_histogram(lat))

        return dataclasses.replace(r, read=side(r.read), write=side(r.write))


class IdlingDriveEngine(DriveEngine):
    """Host Idle Recovery idles between bursts: the scripted drive takes the idle and does nothing."""

    capabilities = SimEngine.capabilities

    def idle(self, target, seconds):
        pass


def record(root: Path, test: str, engine: DriveEngine, tgt: Target | None = None, **profile) -> Path:
    tgt = tgt or target()
    plan = registry.build_plan(test, suites.make_profile("enterprise", quick=True, cell_seconds=1.0, **profile), tgt)
    opts = RunOptions(tested_by="QA lab")
    store = start(plan, tgt, engine, opts, root)
    try:
        Runner(plan, tgt, engine, store, opts).run()
    except KeyboardInterrupt:
        pass
    finally:
        # closed here, not when the store is garbage collected: a test that checks a reader
        # writes nothing saw the writer's late close end the WAL under it
        store.close()
    return store.dir


def pdf_pages(path: Path) -> list[str]:
    return [p.extract_text() for p in pypdf.PdfReader(str(path)).pages]


# -- one complete IOPS run, written as HTML and PDF ------------------------------------------


@pytest.fixture(scope="module")
def iops_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    run = record(root, "iops", DriveEngine())
    out = tmp_path_factory.mktemp("report")
    paths = write_report([run], out)
    return run, out, paths


IOPS_PAGES = [
    "Steady State Convergence — IOPS, R/W 0/100",
    "Steady State Convergence — IOPS, R/W 65/35",
    "Steady State Convergence — IOPS, R/W 100/0",
    "Steady State Measurement Window — IOPS 0/100 4KiB",
    "Steady State Measurement Window — IOPS 65/35 64KiB",
    "Steady State Measurement Window — IOPS 100/0 1024KiB",
    "Tabular Results — IOPS and MB/s",
    "IOPS vs Block Size (2D)",
    "MB/s vs Block Size (2D)",
    "3D Column Plot",
    "Heat Map",
    "Response Time Histogram — 0/100 4KiB",
    "Run Details and Notes",
]


def test_write_report_returns_one_html_and_one_pdf_per_run(iops_report):
    run, out, paths = iops_report
    assert [p.suffix for p in paths] == [".html", ".pdf"]
    assert all(p.parent == out.resolve() and p.stat().st_size > 0 for p in paths)
    assert paths[0].stem == run.name


def test_pdf_has_one_page_per_report_page_each_with_header_and_quick_label(iops_report):
    _, _, (html_path, pdf_path) = iops_report
    pages = pdf_pages(pdf_path)
    assert len(pages) == len(IOPS_PAGES)
    for n, text in enumerate(pages, 1):
        flat = " ".join(text.split())
        assert f"Page {n} of {len(IOPS_PAGES)}" in flat
        assert "non-compliant (quick profile)" in flat
        assert "PTS 2.0.2" in flat and "Acme FastDisk 9000" in flat and "Tested by: QA lab" in flat
        for column in ("Test Platform", "Device Under Test", "Set Up Parameters", "Test Parameters"):
            assert (column in flat) == (n == 1), (n, column)  # the header columns on page 1, a compact head after
    for n, title in enumerate(IOPS_PAGES, 1):
        assert title in " ".join(pages[n - 1].split()), (n, title)


def test_html_is_self_contained_and_has_every_page_and_header_field(iops_report):
    _, _, (html_path, _) = iops_report
    html = html_path.read_text()
    assert not re.search(r"""(src|href)=["']https?://""", html)  # nothing fetched from the network
    assert "<script" not in html
    assert html.count('<section class="page"') == len(IOPS_PAGES)
    # every plot of the IOPS report, its bars too, is drawn by iolab (inline SVG, vector.py): no PNG
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="plot"') >= 11
    assert "data:image/png;base64," not in html
    assert html.count("non-compliant (quick profile)") == len(IOPS_PAGES)
    for title in IOPS_PAGES:
        assert title in html
    for field in (
        "Firmware",
        "1.2.3",
        "Capacity",
        "Interface",
        "nvme",
        "Purge",
        "sim-purge",
        "Write cache",
        "PC1 (WIPC)",
        "SS rounds",
        "rounds 3–7 (steady state reached)",
        "Outstanding IO",
        "TC 4 × QD 32",
        "Test run:",
        "Page 1 of 13",
    ):
        assert field in html, field


def test_tables_name_the_measurement_window_and_link_the_raw_files(iops_report):
    run, out, (html_path, _) = iops_report
    html = html_path.read_text()
    assert "over the measurement window (rounds 3–7)" in html
    hrefs = re.findall(r'href="([^"]+)"', html)
    raw = [h for h in hrefs if "/raw/" in h]
    assert raw and all(not h.startswith("/") for h in raw)  # relative links
    for h in raw[:20]:
        assert (out / h).resolve().exists(), h  # each link reaches the file inside the run directory
    # the IOPS table links every window cell: 56 cells × 5 rounds
    assert len({h for h in raw if re.search(r"-r0[3-7]-c\d\d-", h)}) == 56 * 5
    assert any(h.endswith("results.db") for h in hrefs) and any(h.endswith("manifest.json") for h in hrefs)


def test_iops_table_shows_the_stored_window_means(iops_report):
    run, _, (html_path, _) = iops_report
    html = html_path.read_text()
    store = RunStore.open(run)
    cells = [c for c in store.cells() if c.cell_key == "0/100 4KiB" and 3 <= c.round <= 7]
    mean = sum(c.iops for c in cells) / len(cells)
    assert f"{mean:,.0f}" in html


# -- other tests and run states (page model only, no PDF: quicker) ---------------------------


def titles(doc) -> list[str]:
    return [p.title for p in doc.pages]


def text_of(doc) -> str:
    return render(doc)


def test_latency_not_steady_is_reported_as_such(tmp_path):
    run = record(tmp_path, "latency", DriveEngine(shape=lambda rnd, call: 1000 * (rnd + 1) ** 2), max_rounds=6)
    doc = build_document(RunData.load(run, tmp_path / "out"))
    html = text_of(doc)
    assert "STEADY STATE NOT ACHIEVED" in html
    assert html.count("rounds 2–6 (STEADY STATE NOT ACHIEVED)") == 1  # the set-up column, on page 1
    assert any(b.startswith("STEADY STATE NOT ACHIEVED") for b in doc.banners)  # a banner, on every page
    t = titles(doc)
    for title in (
        "Steady State Convergence — ART and MRT, R/W 0/100",
        "Steady State Measurement Window — ART 0/100 4KiB",
        "Tabular Results — Response Times and IOPS",
        "Average Response Time — 3D Column Plot",
        "Maximum Response Time — 3D Column Plot",
        "Maximum Response Time vs Block Size (2D)",
        "99.999 % Response Time vs Block Size (2D)",  # its cells measured it: not left out
        "Average Response Time — Heat Map",
        "Response Time Histogram — 0/100 4KiB",
        "Response Time Histogram — 100/0 4KiB",
    ):
        assert title in t, title
    assert "99.999 % response time" in html and "FAIL" in html


def test_interrupted_run_reports_what_was_measured_marked_incomplete(tmp_path):
    # 1 preconditioning call + 2 rounds of 2 cells (read, write) at 1024 KiB, then Ctrl-C inside round 3
    run = record(tmp_path, "throughput", DriveEngine(interrupt_at=1 + 2 * 2 + 1))
    data = RunData.load(run, tmp_path / "out")
    assert data.manifest.state == "interrupted"
    doc = build_document(data)
    html = text_of(doc)
    assert html.count("INCOMPLETE RUN (interrupted)") == len(doc.pages)
    assert "only the 2 complete rounds measured are shown" in html
    assert "Steady state not evaluated" in html
    assert "-r03-" not in html  # the round in flight is not reported
    assert "SEQ 1024KiB" in html and "Steady State Convergence — SEQ 128KiB" not in html  # never started


def test_run_interrupted_before_any_round_still_gets_a_report(tmp_path):
    run = record(tmp_path, "iops", DriveEngine(interrupt_at=2))  # inside round 1
    paths = write_report([run], tmp_path / "out")
    pages = pdf_pages(paths[1])
    assert all("INCOMPLETE RUN (interrupted)" in " ".join(p.split()) for p in pages)
    assert any("nothing to show" in " ".join(p.split()) for p in pages)


def test_wsat_pages_plot_iops_against_time_and_tgbw(tmp_path):
    run = record(
        tmp_path,
        "wsat",
        DriveEngine(shape=lambda rnd, call: 40_000 / (1 + rnd / 3) + 5_000),
        capacity_limit=20_000_000,
        wsat_capacity_multiple=4,
    )
    doc = build_document(RunData.load(run, tmp_path / "out"))
    t = titles(doc)
    assert t[:2] == ["IOPS vs Time", "IOPS vs Total GB Written"]
    html = text_of(doc)
    assert "Write Saturation summary" in html and "Total written (TGBW)" in html
    assert "0.080 GB" in html  # 4 × 20 MB written, the byte budget


def test_throughput_pages_cover_both_block_sizes(tmp_path):
    run = record(tmp_path, "throughput", DriveEngine())
    doc = build_document(RunData.load(run, tmp_path / "out"))
    t = titles(doc)
    assert "Steady State Convergence — SEQ 1024KiB" in t and "Steady State Convergence — SEQ 128KiB" in t
    assert "Tabular Results and 2D Plot — Throughput" in t
    assert "Write MB/s SEQ 128KiB" in text_of(doc)


class NoisyReadEngine(DriveEngine):
    """Writes flat from round 1; reads swing ±50 % round by round, so they never pass the rule."""

    def _iops(self, rnd, call):
        if self.workload.read_pct == 100:
            return 2_000 * (1.5 if rnd % 2 else 0.5)
        return 1_000.0


def test_throughput_tracks_read_with_its_own_verdict_that_does_not_end_the_phase(tmp_path):
    run = record(tmp_path, "throughput", NoisyReadEngine(), max_rounds=6)
    store = RunStore.open(run)
    for ph in summarise(store):
        assert ph.steady is True, ph.phase.stop_reason  # write MB/s alone decides, as in the PTS
        verdicts = {v.name.split()[0]: v for v in ph.verdicts}
        assert verdicts["Write"].steady and not verdicts["Read"].steady
        assert ph.shown_only == {verdicts["Read"].name}
    doc = build_document(RunData.load(run, tmp_path / "out"))
    t = titles(doc)
    for bs in ("1024KiB", "128KiB"):
        assert f"Steady State Measurement Window — Read MB/s SEQ {bs}" in t
        assert f"Steady State Measurement Window — Write MB/s SEQ {bs}" in t
    html = text_of(doc)
    assert "shown only: the phase&#x27;s steady state is decided by its other tracking variables" in html


def test_compliant_run_has_no_noncompliance_banner(tmp_path):
    tgt = target()
    plan = registry.build_plan("latency", suites.make_profile("enterprise"), tgt)
    # a full-length profile with a scripted engine: the manifest says compliant
    store = start(plan, tgt, DriveEngine(), RunOptions(), tmp_path)
    store.finish("complete")
    doc = build_document(RunData.load(store.dir, tmp_path / "out"))
    assert not any("non-compliant" in b for b in doc.banners)


# -- page model ------------------------------------------------------------------------------


def test_a_page_that_would_overflow_is_refused():
    rows = [("x", "y")] * 60
    with pytest.raises(ValueError, match="mm of content"):
        Page("too long", (Table("t", ("a", "b"), tuple(rows), "src"),))


def test_a_figure_takes_its_drawings_height_on_the_page():
    """The page budget counts a figure as tall as its drawing prints: no second height to
    disagree with it (two 100 mm plots do not fit one page, whatever a builder would say)."""
    from iolab.pages.report.model import FIGURE_EXTRA_MM, Figure
    from iolab.pages.report.vector import Drawing

    fig = Figure("plot", Drawing(190.0, 73.5, ()), "src")
    assert fig.height_mm == 73.5 and fig.total_mm == 73.5 + FIGURE_EXTRA_MM
    with pytest.raises(ValueError, match="mm of content"):
        Page("two plots", (fig, Figure("taller", Drawing(190.0, 110.0, ()), "src")))


def test_split_rows_fits_each_chunk_on_a_page():
    rows = [(str(i), "value") for i in range(200)]
    chunks = split_rows(rows, 50.0, CONTENT_MM)
    assert [r for c in chunks for r in c] == rows and len(chunks) > 2
    assert Table("t", ("a", "b"), tuple(chunks[0]), "src").height_mm <= 50.0
    for chunk in chunks[1:]:
        Page("p", (Table("t", ("a", "b"), tuple(chunk), "src"),))  # fits, or raises


def test_a_page_that_spills_over_gets_real_sheet_numbers_in_the_pdf(tmp_path):
    from iolab.pages.report import write_document
    from iolab.pages.report.model import Document, HeaderColumn

    long_text = Text(tuple("a paragraph that takes room " * 12 for _ in range(120)), height_mm=10)  # a lie
    cols = tuple(HeaderColumn(t, (("k", "v"),)) for t in ("Test Platform", "Device Under Test", "Set Up", "Test"))
    doc = Document("t", "spec", "Test", "start", "end", "device", "me", cols, (), (Page("one", (long_text,)),))
    html, pdf = write_document(doc, tmp_path, "spill")
    pages = pdf_pages(pdf)
    assert len(pages) > 1
    assert f"Sheet 1 of {len(pages)}" in pages[0] and "Page 1 of 1" not in pages[1]


def test_a_test_without_pages_of_its_own_still_gets_its_cells_reported(tmp_path):
    run = record(tmp_path, "latency", DriveEngine(), max_rounds=5)
    store = RunStore.open(run)
    store.manifest.test, store.manifest.title = "future-test", "Future Test"
    store.write_manifest()
    doc = build_document(RunData.load(run, tmp_path / "out"))
    assert [p.title for p in doc.pages] == [
        "Steady State Measurement Window — ART 0/100 4KiB",
        "Tabular Results",
        "Run Details and Notes",
    ]
    table = doc.pages[1].blocks[0]
    assert [row[0] for row in table.rows][:3] == ["100/0 8KiB", "100/0 4KiB", "100/0 0.5KiB"] and len(table.rows) == 9


# -- one number formatter -----------------------------------------------------------------------


def test_steady_state_terminal_table_keeps_every_number_whole_at_80_columns():
    from rich.console import Console

    from iolab.core.steady import SteadyRule, check_variable
    from iolab.figures.summary import PhaseSummary
    from iolab.pages.textreport import iops_grid, render_phase
    from iolab.store.runstore import PhaseRow

    rule = SteadyRule()
    verdicts = (
        check_variable(
            "IOPS 0/100 1024KiB",
            [21, 22, 23, 24, 25],
            [1_234_567.8, 1_111_111.1, 1_345_678.9, 1_299_999.4, 1_200_000.2],
            rule,
        ),
        check_variable("IOPS 65/35 0.5KiB", [21, 22, 23, 24, 25], [0.0123, 0.0125, 0.0121, 0.0124, 0.0122], rule),
    )
    phase = PhaseRow("main", 0, None, None, None, False, 25, "round limit")
    ph = PhaseSummary(phase, tuple(range(1, 26)), tuple(range(21, 26)), False, verdicts, (), (), (), ())
    console = Console(width=80, record=True, color_system=None)
    render_phase(ph, console, iops_grid)
    out = console.export_text()
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out
    # the verdict column whole too (it was cut to "p" / "pas" at 80 columns, e.g. stdout to a file)
    head = next(line for line in out.splitlines() if line.lstrip().startswith("variable"))
    assert head.split()[-1] == "SS", out
    assert sum(line.split()[-1:] in (["pass"], ["FAIL"]) for line in out.splitlines()) == len(verdicts), out
    from iolab.core.units import num

    for v in verdicts:
        for x in (v.average, v.range_measured, v.range_allowed, v.fit_excursion, v.fit_allowed):
            assert f" {num(x)} " in f" {out} ".replace("\n", " "), (num(x), out)
        assert v.formula() in out.replace("\n", " ")


def _visible_text(html: str) -> str:
    # a PNG's data, and an SVG plot's geometry record (numbers in JSON, never printed)
    return re.sub(r'src="data:image/png;base64,[^"]*"|<metadata [^>]*>[^<]*</metadata>', "", html)


def test_report_numbers_have_no_exponent_notation_and_one_unit_per_table(tmp_path):
    # ~200 µs IOs with a tail past 10 ms: in µs, {:,.4g} printed the tail as "1.2e+04"
    run = record(tmp_path, "latency", DriveEngine(shape=lambda rnd, call: 5_000.0 + call), max_rounds=5)
    doc = build_document(RunData.load(run, tmp_path / "out"))
    text = _visible_text(render(doc))
    assert not re.search(r"\d[eE][+-]\d", text), re.search(r".{60}\d[eE][+-]\d.{20}", text).group(0)
    row = re.search(r"<td class=\"h\">response time \((µs|ms|s)\)</td>((?:<td>[^<]*</td>)+)", text)
    assert row is not None
    cells = re.findall(r"<td>([^<]*)</td>", row.group(2))
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*(\.\d+)?", c) for c in cells), cells
    assert all(len(re.sub(r"\D", "", c).lstrip("0")) >= 4 for c in cells), cells  # fixed significant digits


def test_header_columns_shrink_or_point_but_never_cut_text():
    from iolab.pages.report.header import MIN_SCALE, RUN_DETAILS, fit_column

    # the Test Parameters column of a quick Multi-WSAT run: it used to end in "composite: RND 64Ki…"
    items = [
        ("Profile", "enterprise (WCD)"),
        ("Cell duration", "1 s"),
        ("Stimulus", "composite: RND 64KiB R 49.9 %, SEQ 4KiB W 30.0 %, RND 8KiB W 20.0 %"),
        ("Outstanding IO", "TC 1 × QD 1 = 1 (from the workload file)"),
        (
            "Stop",
            "steady state, or 4× capacity written (2.147 GB; workloads with writes), or 24.0 h, or 30 "
            "intervals (quick)",
        ),
        ("Workload files", "composite.toml, replay.toml, analysis.json"),
        ("Workload digest", "316c4d59d71e"),
        ("Self-Test", "from the capture's stream analysis"),
        ("Rounds measured", "11"),
    ]
    col = fit_column("Test Parameters", items)
    assert col.items == tuple(items) and MIN_SCALE <= col.scale < 1.0  # all of it, in a smaller font
    more = items + [(f"Extra {i}", "a long value " * 6) for i in range(4)]
    crowded = fit_column("Test Parameters", more)
    assert crowded.scale == MIN_SCALE
    kept = [(k, v) for k, v in crowded.items if k != "…"]
    for (k, v), (k2, v2) in zip(more, kept):
        assert k == k2 and "…" not in v2
        assert v2 == " ".join(v.split()) or v2 == f"(in full on the {RUN_DETAILS} page)"
    # rows that do not fit even so are named by the last one, never cut below the box
    assert len(kept) == len(more) or crowded.items[-1] == (
        "…",
        f"{len(more) - len(kept)} more, on the {RUN_DETAILS} page",
    )


def test_banners_are_whole_or_name_the_page_with_the_full_text():
    from iolab.pages.report.header import BANNER_LINE_CHARS, fit_banners

    short = ("non-compliant (quick profile): quick profile", "non-compliant (quick profile)", "Run Details and Notes")
    assert fit_banners([short]) == (short[0],)
    long = ("non-compliant: " + "; ".join(f"reason number {i}" for i in range(30)), "non-compliant", "Drives Compared")
    incomplete = ("INCOMPLETE RUN (failed): only the 3 complete rounds measured are shown",) * 2 + ("Run Details",)
    out = fit_banners([long, incomplete])
    assert out == ("non-compliant — in full on the Drives Compared page", incomplete[0])
    assert all("…" not in b and len(b) <= 2 * BANNER_LINE_CHARS for b in out)


def test_write_amplification_is_not_reported_where_the_engine_counts_no_flash_writes(iops_report, tmp_path):
    """fio on a real drive cannot see flash writes: the header says so instead of a number."""
    from iolab.pages.report import header

    run = RunData.load(iops_report[0], tmp_path)
    assert run.write_amplification() is None
    assert dict(header.device_items(run))["Write amplification"] == header.NOT_REPORTED


def test_wsat_report_marks_the_partial_last_interval_and_leaves_it_out_of_the_figures(tmp_path):
    # 1,400, 1,300, 1,200, 1,100 IOPS × 4 KiB in 1 s intervals, then 2,400 IOPS: the budget's
    # last 672 IOs (interval 5, the rest by bytes: at most half a pace) take 0.28 s (a report
    # dividing by the planned 1 s would show 672 IOPS)
    budget = (1400 + 1300 + 1200 + 1100 + 672) * 4096
    run = record(
        tmp_path,
        "wsat",
        DriveEngine(shape=lambda rnd, call: 2400.0 if rnd == 5 else 1000.0 + 100 * (5 - rnd)),
        capacity_limit=budget,
        wsat_capacity_multiple=1,
    )
    doc = build_document(RunData.load(run, tmp_path / "out"))
    html = text_of(doc)
    assert "5 (partial, 0.28 s)" in html
    assert "Intervals measured" in html and "5 (1 partial)" in html
    # the minimum and maximum over full intervals: intervals 4 and 1, never the partial interval's 2,400
    assert "Minimum / maximum interval IOPS (full intervals)" in html and "1,100 / 1,400" in html
    assert "Mean IOPS of the last 4 full intervals" in html


def test_run_details_of_a_run_with_hundreds_of_idles_fits_its_pages(tmp_path):
    """A full HIR idles before each of 360 bursts per wait state; Run Details summarises the
    idles per length instead of one entry per cell (which overflowed a page)."""
    run = record(
        tmp_path,
        "hir",
        IdlingDriveEngine(),
        settings=(("pc_round_intervals", "1"), ("bursts", "150"), ("wait_states", "1,2"), ("baseline_time", "2s")),
    )
    doc = build_document(RunData.load(run, tmp_path))
    text = render(doc)
    assert "1.00 s before each of 150 cells" in text and "2.00 s before each of 150 cells" in text


def test_hir_timeline_shades_idles_closer_than_its_resolution_as_one_band():
    from iolab.pages.report.hir import _merged

    assert _merged([(0.0, 1.0), (1.001, 2.0), (5.0, 6.0)], 0.01) == [(0.0, 2.0), (5.0, 6.0)]
    assert _merged([(0.0, 1.0), (1.5, 2.0)], 0.01) == [(0.0, 1.0), (1.5, 2.0)]
