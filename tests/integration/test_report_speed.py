"""What makes reports and start-up fast without changing what they show: commands that
write no report load none of the plotting, trace or report libraries; a report of vector plots
imports no plotting library; the terminal says how far a report is."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pypdf
import pytest

from .conftest import iolab

# Libraries a command that writes no report never needs: the plotting, table, PDF and trace
# libraries, and pydantic, which Typer imports to validate a parameter (0.1 s CPU; iolab takes
# its text, paths and flags without it, cli_typer.py).
HEAVY = ("matplotlib", "numpy", "duckdb", "jinja2", "PIL", "scipy", "pandas", "pyarrow", "pydantic")
# iolab's own layers above the test declarations: the library the commands call, the runner,
# the reports and comparisons. Only `iolab tests` reads the declarations, which name their pages.
LAYERS = (
    "iolab.api.runs",
    "iolab.api.reports",
    "iolab.api.comparisons",
    "iolab.run.runner",
    "iolab.pages.report",
    "iolab.pages.compare_pages",
)
# What a run without a report, or `iolab show`, never draws or reads: the test's own report pages
# and comparison overlays (its declaration imports them when a report is built), the PDF writer,
# the plots' drawing code and a spec sheet's reader (tomllib)
NOT_DRAWN = (
    "iolab.pages.report.pts",
    "iolab.pages.report.pdf",
    "iolab.pages.report.vector",
    "iolab.pages.report.power",
    "iolab.pages.report.sequence",
    "iolab.pages.compare_pages",
    "iolab.figures.specsheet",
    "tomllib",
)
# the report's pages, every one: what the terminal's tables (show, a run's end) never import
REPORT = ("iolab.pages.report",)
# The rule that marks each key figure of a run not at steady state [a], as compare marks it, and
# the run data it reads: the report's header (with its document model and font widths, which the
# banners' fitting uses). `show` and a run's end print those marks too.
CAVEAT_RULE = {
    f"iolab.pages.report{m}" for m in ("", ".header", ".model", ".rundata", ".steadywords", ".textwidth", ".ttf")
}
# the report's plots: what every one is drawn with, and the modules of each kind
PLOTS = ("iolab.pages.report.vfigure", "iolab.pages.report.plots", "iolab.pages.report.latency_plots")
# What `--help`, `--version` and `run -h` never need: the plan's types, the trace formats (the
# trace commands' help names them when it is printed) and the installed distribution's metadata
# (its import, with the email parser, cost more than the rest of --version)
UNPLANNED = (
    "iolab.core.plan",
    "iolab.core.testparams",
    "iolab.core.decide",
    "iolab.traces.formats",
    "importlib.metadata",
)

# What help and usage errors never show: Markdown help and a pretty traceback, whose modules
# Typer's printer imports at its top (36 ms CPU of each; cli_help.printer)
UNSHOWN = ("rich.markdown", "rich.traceback", "markdown_it", "pygments")

# the `iolab` command, then the modules it loaded (as the console script runs it)
LOADED = """
import atexit, sys
atexit.register(lambda: print("LOADED", *sorted(sys.modules), file=sys.stderr))
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""


def loaded_by(*args: str, script: str = LOADED) -> list[str]:
    """The modules `iolab ARGS` loaded in its own process."""
    res = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    [line] = [ln for ln in res.stderr.splitlines() if ln.startswith("LOADED")]
    return line.split()[1:]


@pytest.mark.parametrize(
    "args",
    [("--help",), ("--version",), ("runs",), ("tests",), ("tests", "latency"), ("sim", "presets"), ("run", "-h")],
)
def test_commands_that_write_no_report_load_no_plot_trace_or_report_library(args, tmp_path):
    loaded = loaded_by(*args, *(("--runs-dir", str(tmp_path)) if args == ("runs",) else ()))
    assert "iolab.cli.main" in loaded  # the list is the command's
    heavy = sorted({m.split(".")[0] for m in loaded} & set(HEAVY))
    assert not heavy, f"iolab {' '.join(args)} loaded {heavy}"
    if args[0] != "tests":
        layers = [m for m in loaded if m.startswith(LAYERS)]
        assert not layers, f"iolab {' '.join(args)} loaded {layers}"
    else:  # every test's declaration, and no plot: the plan helpers and views it names are below them
        drawn = [m for m in loaded if m.startswith(PLOTS) or (m.startswith(NOT_DRAWN) and m.startswith("iolab"))]
        assert not drawn, f"iolab {' '.join(args)} loaded {drawn}"
        assert args != ("tests",) or "iolab.suites.char_demand" in loaded  # all were declared
    if args == ("runs",):  # a runs directory without fleets: the fleet library (threads, fio hosts) stays out
        assert "iolab.api.fleet" not in loaded
    if args in (("--help",), ("--version",), ("run", "-h")):
        planned = [m for m in loaded if m.startswith(UNPLANNED)]
        assert not planned, f"iolab {' '.join(args)} loaded {planned}"
        assert "typer.rich_utils" in loaded or args == ("--version",)  # the help was Typer's printer's
        unshown = [m for m in loaded if m.startswith(UNSHOWN)]
        assert not unshown, f"iolab {' '.join(args)} loaded {unshown}"


def test_a_usage_error_loads_no_markdown_or_traceback_printer():
    """Typer's printer of a usage error imported Markdown and a traceback's highlighter (36 ms
    CPU) for a three-line message; the message is its own still."""
    res = subprocess.run([sys.executable, "-c", LOADED, "show", "--bogus"], capture_output=True, text=True)
    assert res.returncode == 2 and "No such option: --bogus" in res.stderr and "iolab show -h" in res.stderr
    [line] = [ln for ln in res.stderr.splitlines() if ln.startswith("LOADED")]
    loaded = line.split()[1:]
    assert "typer.rich_utils" in loaded
    unshown = [m for m in loaded if m.startswith(UNSHOWN)]
    assert not unshown, f"a usage error loaded {unshown}"


def test_version_alone_is_answered_before_typer_rich_or_the_commands_are_imported():
    """`iolab --version` imported Typer, Rich and every command's module (0.16 CPU-s, ten times
    Python's own start) to print one line; cli/main.py answers it first."""
    loaded = loaded_by("--version")
    assert "iolab.core.usertext" in loaded  # its environment checked, as every command's
    outside = sorted({m.split(".")[0] for m in loaded} & {"typer", "click", "rich"})
    assert not outside, f"iolab --version loaded {outside}"
    own = [m for m in loaded if m.startswith("iolab")]
    assert "iolab.cli.app" not in own and len(own) < 10, own


# the `iolab` command, then the commands Typer built for it (each function's parameters read)
BUILT = """
import atexit, sys
from typer import main as typer_main
built, make = [], typer_main.get_command_from_info
def counted(*a, **kw):
    command = make(*a, **kw)
    built.append(command.name)
    return command
typer_main.get_command_from_info = counted
atexit.register(lambda: print("LOADED", *built, file=sys.stderr))
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""


def test_a_command_builds_only_itself_and_help_lists_every_command(tmp_path):
    """Typer built all 24 commands at every start (about 200 parameters read from their
    functions' signatures) to run one; the top-level group builds the one named. The help and
    a typo's suggestions still know every command."""
    assert loaded_by("runs", "--runs-dir", str(tmp_path), script=BUILT) == ["runs"]
    assert loaded_by("sim", "presets", script=BUILT) == ["presets", "calibrate"]  # a sub-group: Typer's, whole
    listed = loaded_by("--help", script=BUILT)
    assert {"run", "show", "report", "compare", "check", "tests", "presets", "analyze"} <= set(listed)
    typo = iolab("rn")
    assert typo.returncode == 2 and "Did you mean 'run', 'runs'?" in typo.stderr


def test_a_run_without_a_report_loads_no_plot_report_or_validation_library(tmp_path):
    """`iolab run --no-report` with numbers given (each drive of a fleet is one such run): its
    start imported numpy (a meter log's reader), the report pages and pydantic (Typer's
    validator of every number option), half of its 0.5 CPU-s."""
    args = ["run", "latency", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "--precondition-factor", "0.5"]
    loaded = loaded_by(*args, "--no-report", "--json", "--quiet", "--runs-dir", str(tmp_path))
    assert "iolab.run.runner" in loaded and "iolab.figures.power" in loaded  # the run ran, power modelled
    heavy = sorted({m.split(".")[0] for m in loaded} & set(HEAVY))
    assert not heavy, f"iolab run --no-report loaded {heavy}"
    pages = [m for m in loaded if m.startswith((*NOT_DRAWN, *REPORT)) and m not in CAVEAT_RULE]
    assert not pages, f"iolab run --no-report loaded {pages}"
    # a simulated drive's run starts no fio: fio's host engine (threads, sockets) stays out
    assert "iolab.engines.fio_hosts" not in loaded and "concurrent.futures" not in loaded


def test_a_plan_of_one_drive_loads_no_hosts_engine():
    """`iolab plan` checks what `iolab run` would refuse: the checks of a run split over hosts or
    paths (and the words of its purge) brought fio's host engine, its threads and sockets, to
    the plan of a simulated drive, which has none."""
    loaded = loaded_by("plan", "latency", "--quick", "-t", "sim:enterprise-sas?user_gb=0.1")
    assert "iolab.api.preflight" in loaded  # the run's refusals were checked
    hosts = [
        m
        for m in loaded
        if m.startswith(("iolab.engines.host", "iolab.engines.fio_hosts", "iolab.engines.fioprobe", "concurrent"))
    ]
    assert not hosts, f"iolab plan loaded {hosts}"


@pytest.fixture(scope="module")
def latency_run(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    res = iolab(
        "run", "latency", "--quick", "--cell-time", "200ms", "--max-rounds", "1", "--no-report", "--runs-dir", str(runs)
    )
    assert res.returncode == 0, res.stderr
    [run] = list(runs.iterdir())
    return run


def test_show_loads_no_report_page_plot_or_pdf_module(latency_run):
    """`iolab show RUN` prints the terminal's tables: it cost 0.4-0.5 CPU-s when the test's
    declaration loaded its report pages, their plots and the PDF writer with it."""
    loaded = loaded_by("show", str(latency_run))
    assert "iolab.pages.textreport" in loaded and "iolab.suites.pts_latency" in loaded  # shown with its test's view
    pages = [m for m in loaded if m.startswith(NOT_DRAWN)]
    assert not pages, f"iolab show loaded {pages}"
    # nor any engine: the audit's bound on the per-second rows took fio's log interval from the
    # fio job writer, and every engine's package with it
    engines = [m for m in loaded if m.startswith("iolab.engines")]
    assert not engines, f"iolab show loaded {engines}"
    # nor the report's pages, but for the rule that marks a figure not at steady state (CAVEAT_RULE):
    # the words the terminal shares with them (pages/runwords.py) brought the whole package
    report = [m for m in loaded if m.startswith(REPORT) and m not in CAVEAT_RULE]
    assert not report, f"iolab show loaded {report}"


def test_a_report_of_vector_plots_imports_no_plotting_library(latency_run, tmp_path):
    # every plot of the quick latency report is drawn by iolab, in its own process, in
    # milliseconds: none is a PNG, and neither matplotlib nor numpy is imported
    loaded = loaded_by("report", str(latency_run), "--out", str(tmp_path))
    assert "iolab.pages.report.pdfdoc" in loaded and "iolab.pages.report.plots" in loaded  # a report with plots
    assert not [m for m in loaded if m.split(".")[0] in ("matplotlib", "weasyprint")]
    html = next(tmp_path.glob("*.html")).read_text()
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="plot"') >= 10 and '<img class="plot"' not in html


def test_report_says_which_page_it_is_writing(latency_run, tmp_path):
    res = iolab("report", str(latency_run), "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    pages = len(pypdf.PdfReader(str(next(tmp_path.glob("*.pdf")))).pages)
    lines = res.stderr.splitlines()
    assert all(ln.startswith(f"writing report {latency_run.name}: ") for ln in lines), lines
    layout = [m.groups() for ln in lines if (m := re.search(r": page (\d+) of (\d+)$", ln))]
    assert layout[-1] == (str(pages), str(pages))  # the last page is always said
    assert lines[-1].endswith(": PDF file")


def _page_texts(pdf: Path) -> list[str]:
    return [" ".join(p.extract_text().split()) for p in pypdf.PdfReader(str(pdf)).pages]


def test_header_columns_are_printed_on_a_documents_first_page_and_a_compact_head_on_the_others(latency_run, tmp_path):
    from iolab.api.reports import write_report

    paths = write_report([latency_run], tmp_path)
    pages = _page_texts(next(p for p in paths if p.suffix == ".pdf"))
    assert len(pages) > 5
    columns = ("Test Platform", "Device Under Test", "Set Up Parameters", "Test Parameters", "Host ", "Firmware")
    assert all(field in pages[0] for field in columns)
    for n, text in enumerate(pages[1:], 2):
        assert not any(field in text for field in columns[:4]), n
        assert f"Page {n} of {len(pages)}" in text and "Test run:" in text and "Device:" in text


def test_a_sequence_report_numbers_its_runs_pages_through_with_the_same_images(tmp_path):
    from iolab.api.reports import write_report, write_sequence_report
    from tests.unit.test_report import DriveEngine, record

    qos = record(tmp_path / "runs", "qos", DriveEngine(), settings=(("rounds", "2"),))
    own_files, seq_files = write_report([qos], tmp_path / "own"), write_sequence_report([qos], tmp_path / "seq")
    own, seq = (next(p for p in files if p.suffix == ".pdf") for files in (own_files, seq_files))
    pages, own_pages = _page_texts(seq), _page_texts(own)
    assert len(pages) > len(own_pages) > 5
    assert all(f"Page {n} of {len(pages)}" in text for n, text in enumerate(pages, 1))
    # the QoS report's plots are vector drawings: the same ones, shape for shape, in both
    plots = [
        re.findall(r'<svg [^>]*class="plot".*?</svg>', next(p for p in files if p.suffix == ".html").read_text(), re.S)
        for files in (own_files, seq_files)
    ]
    assert plots[0] and set(plots[0]) <= set(plots[1])
