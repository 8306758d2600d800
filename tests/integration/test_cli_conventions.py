"""The command line's conventions, as a user meets them: -h, --version, completion,
--runs-dir wherever runs are read, readable help, the presets' summary, and tables written
to a file or a pipe whole."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from iolab.engines.sim import list_presets

from .conftest import IOLAB as INSTALLED
from .conftest import iolab, on_a_terminal

IOLAB = [sys.executable, "-c", "from iolab.cli.main import main; main()"]
COMMANDS = [
    "run",
    "resume",
    "tests",
    "runs",
    "show",
    "report",
    "compare",
    "export",
    "info",
    "fio-job",
    "plan",
    "watch",
    "check",
    "audit",
    "fleet",
    "history",
    "power",
    "capture",
    "sim presets",
    "sim calibrate",
    "trace capture",
    "trace import",
    "trace analyze",
    "trace export",
]
READERS = [
    "runs",
    "show",
    "report",
    "compare",
    "export",
    "watch",
    "check",
    "audit",
    "resume",
    "sim calibrate",
    "fleet",
    "history",
]


def cli(*args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "IOLAB_RUNS")}
    return subprocess.run([*IOLAB, *args], capture_output=True, text=True, timeout=300, env={**e, **(env or {})}, **kw)


def test_version_prints_the_installed_version():
    from importlib.metadata import version

    import iolab

    p = cli("--version")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"iolab {version('iolab')}"
    # the number `--version` prints is the one runs record (manifest, report footer)
    assert iolab.__version__ == version("iolab")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_h_as_help_with_readable_metavars(command):
    short, long = cli(*command.split(), "-h"), cli(*command.split(), "--help")
    assert short.returncode == 0, short.stdout + short.stderr
    assert short.stdout == long.stdout
    assert "Usage: iolab " + command in short.stdout
    # types' names (<bool>, <list[str]>, <path>) are not what a user types
    assert not re.search(r"<\w+(\[\w+\])?>", short.stdout), short.stdout
    # help to a pipe is wider than 80 columns, so an option's help is not cut with "…"
    assert "…" not in short.stdout
    assert max(map(len, short.stdout.splitlines())) > 80
    # arguments in capitals, as the docs write them (`iolab capture DEVICE`, not {device}; info's
    # targets once as {TARGET}..., not {TARGET...}...)
    [usage] = [line.split("[OPTIONS]", 1)[1] for line in short.stdout.splitlines() if "Usage: " in line]
    assert not re.search(r"[{\[][a-z]", usage) and "...}" not in usage, usage
    # a value is named for what it is (DURATION, SIZE, PCT, FILE), not by the type Typer reads it
    # as: `sim calibrate --cell-time TEXT` beside `run --cell-time DURATION`
    typed = re.findall(r"^│\s+(?:\*\s+)?(--[\w-]+)(?:\s+-\w)?\s+(?:TEXT|PATH)\s", short.stdout, re.M)
    assert not typed, typed


@pytest.mark.parametrize("command", READERS)
def test_every_command_that_reads_runs_takes_runs_dir(command):
    out = cli(*command.split(), "-h").stdout
    # one name and one help for it everywhere (history said PATH and "The runs directory")
    [row] = [" ".join(line.strip("│ ").split()) for line in out.splitlines() if "--runs-dir" in line]
    assert row == "--runs-dir DIR Runs directory (default ./runs or $IOLAB_RUNS).", row


def test_runs_dir_finds_a_run_by_its_id(tmp_path):
    runs = tmp_path / "runs"
    p = cli("run", "latency", "--quick", "--cell-time", "100ms", "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    [run] = [d.name for d in runs.iterdir()]
    # by id, from another directory: found only through --runs-dir
    shown = cli("show", run, "--runs-dir", str(runs), cwd=tmp_path.parent)
    assert shown.returncode == 0, shown.stderr
    assert run in shown.stdout
    assert cli("show", run, cwd=tmp_path.parent).returncode != 0
    out = tmp_path / "export"
    exported = cli("export", run, "--runs-dir", str(runs), "--out", str(out), cwd=tmp_path.parent)
    assert exported.returncode == 0, exported.stderr
    assert any(out.iterdir())


def test_install_completion_installs_the_named_shells_script_and_refuses_an_unknown_one(tmp_path):
    # `--install-completion zsh` installed the bash script into ~/.bashrc, exit 0
    home = {"HOME": str(tmp_path), "PATH": os.environ["PATH"]}
    zsh = iolab("--install-completion", "zsh", env=home)
    assert zsh.returncode == 0, zsh.stderr
    assert zsh.stdout.startswith(f"zsh completion installed in {tmp_path / '.zfunc' / '_iolab'}")
    assert (tmp_path / ".zfunc" / "_iolab").read_text().strip() == iolab("--show-completion", "zsh").stdout.strip()
    assert "compinit" in (tmp_path / ".zshrc").read_text()
    fish = iolab("--install-completion=fish", env=home)
    assert fish.returncode == 0 and "complete_fish" in (tmp_path / ".config/fish/completions/iolab.fish").read_text()
    assert not (tmp_path / ".bashrc").exists()
    before = sorted(str(f.relative_to(tmp_path)) for f in tmp_path.rglob("*"))
    bad = iolab("--install-completion", "nosh", env=home)
    assert bad.returncode == 2 and bad.stdout == ""
    assert " ".join(bad.stderr.split()).startswith("iolab: --install-completion nosh: not a shell")
    assert "Nothing was installed." in " ".join(bad.stderr.split())
    # PowerShell is asked where its profile is: without it on PATH, a paragraph, not a traceback
    nopwsh = iolab("--install-completion", "pwsh", env={"HOME": str(tmp_path), "PATH": str(tmp_path / "bin")})
    assert nopwsh.returncode == 2 and "no 'pwsh' program on PATH" in " ".join(nopwsh.stderr.split())
    assert "Traceback" not in bad.stderr + nopwsh.stderr
    assert sorted(str(f.relative_to(tmp_path)) for f in tmp_path.rglob("*")) == before


def test_shell_completion_is_offered():
    # Typer finds the shell among the command's parent processes, which a suite started from a
    # background job or a CI runner may not show ("Shell  not supported."); its own switch takes
    # the shell named on the command line instead
    p = cli("--show-completion", "bash", env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"})
    assert p.returncode == 0, p.stderr
    assert "complete" in p.stdout and "iolab" in p.stdout.lower()


def test_sim_presets_is_one_line_per_preset_with_the_default_marked():
    p = cli("sim", "presets", env={"COLUMNS": "200"})
    assert p.returncode == 0, p.stderr
    presets = list_presets()
    rows = [line for line in p.stdout.splitlines() if line.split() and line.split()[0] in {q.name for q in presets}]
    assert [r.split()[0] for r in rows] == [q.name for q in presets]
    for q, row in zip(presets, rows):
        assert ("(default)" in row) == q.default, row
        values = dict(q.parameters)
        assert q.kind.upper() in row
        assert values.get("user_gb", values.get("capacity_gb")) in row and values["link"] in row
        # the figures it stands for: an SSD's published ones, an HDD's spindle and media rate
        if q.kind == "ssd":
            # the preset's own calibration, from the simulator (no Python table of them)
            assert q.calibrated_to and q.calibrated_to in row, row
            assert re.search(r"\d[\d.,]*k? IOPS|\d+ GB SLC", row), row
        else:
            assert values["rpm"] in row and values["outer_mbps"] in row, row
    # the parameters are one command away, not in the summary
    assert "t_prog_us" not in p.stdout
    one = cli("sim", "presets", presets[0].name, env={"COLUMNS": "200"})
    assert one.returncode == 0 and "t_prog_us" in one.stdout and presets[1].name not in one.stdout
    assert presets[0].description in one.stdout
    bad = cli("sim", "presets", "no-such-drive")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "no-such-drive" in bad.stderr


def test_a_table_written_to_a_file_keeps_every_column_whole(tmp_path):
    runs = tmp_path / "runs"
    p = cli("run", "iops", "--quick", "--cell-time", "100ms", "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    [run] = list(runs.iterdir())
    # a narrow declared width, output to a pipe: the steady-state verdicts were cut to "pas"
    shown = cli("show", str(run), env={"COLUMNS": "60"})
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    head = next(line for line in out.splitlines() if line.lstrip().startswith("variable"))
    assert head.split()[-1] == "SS", out
    assert len(re.findall(r"\b(pass|FAIL)\b", out)) == 3, out
    assert "…" not in out
    assert "1024KiB" in out and "R/W 100/0" in out


def _option_rows(help_text: str) -> dict[str, str]:
    """Each option's row of a command's help (name, metavar, help), words joined."""
    rows: dict[str, str] = {}
    name = None
    for line in help_text.splitlines():
        cells = line.strip("│ ").split()
        if not line.startswith("│") or not cells:
            name = None if not line.startswith("│") else name
            continue
        if line.startswith("│ --"):  # a row's first line; its help may go on with "--target" further right
            name = cells[0]
            rows[name] = ""
        if name:
            rows[name] = f"{rows[name]} {' '.join(cells)}".strip()
    return rows


# a command's options that are its own, not `iolab run`'s (resume --again names a fleet's drives)
OWN_OPTIONS = {"resume": {"--again"}}


@pytest.mark.parametrize("command", ["fio-job", "resume"])
def test_run_options_mean_the_same_in_every_command_that_takes_them(command):
    # declared once: an option of `iolab run` another command takes reads the same there
    run, other = _option_rows(cli("run", "--help").stdout), _option_rows(cli(command, "--help").stdout)
    shared = set(other) - {"--help"} - OWN_OPTIONS.get(command, set())
    assert len(shared) >= 6 and shared <= set(run), shared - set(run)
    for name in sorted(shared):
        assert other[name] == run[name], (name, other[name], run[name])


def test_fio_job_refuses_several_targets_instead_of_taking_the_last(tmp_path):
    a, b = f"file:{tmp_path / 'a.img'}?size=64MiB", f"file:{tmp_path / 'b.img'}?size=64MiB"
    p = cli("fio-job", "iops", "--quick", "-t", a, "-t", b)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "one --target" in p.stderr
    assert not p.stdout


def test_tables_of_run_check_and_history_written_to_a_file_keep_every_cell_whole(tmp_path):
    runs = tmp_path / "runs"

    def to_file(*args: str) -> str:
        out = tmp_path / "out.txt"
        env = {k: v for k, v in os.environ.items() if k != "IOLAB_RUNS"} | {"COLUMNS": "60"}  # a narrow width
        with out.open("w") as f:
            p = subprocess.run([*IOLAB, *args, "--runs-dir", str(runs)], stdout=f, stderr=subprocess.PIPE, env=env)
        assert p.returncode == 0, p.stderr
        return out.read_text()

    ran = to_file("run", "latency", "--quick", "--cell-time", "100ms", "--no-report")
    assert re.search(r"ART 0/100 4KiB .* (pass|FAIL)\s*$", ran, re.M), ran  # the steady-state verdict
    to_file(
        "run", "latency", "--quick", "--cell-time", "100ms", "--no-report"
    )  # a candidate (a run is no baseline of itself)
    base, run = sorted(p.name for p in runs.iterdir())
    checked = to_file("check", "-b", base, run, "--force")
    # the maximum is an extreme: reported (info), not judged
    for figure, v in (
        ("ART RND 4KiB R/W 100/0 (µs; ↓)", "within-tolerance"),
        ("MRT RND 4KiB R/W 0/100 (µs; ↓; extreme)", "info"),
    ):
        assert re.search(re.escape(figure) + rf" .* {v}\s*$", checked, re.M), checked
    history = to_file("history", "ART RND 4KiB R/W 0/100")
    assert re.search(rf"\b{run}\b", history) and "sim:enterprise-sas?user_gb=" in history, history
    assert "…" not in checked + history
    # on a terminal narrower than the table, a run id stays whole and copyable (it was folded
    # mid-word below ~150 columns): the other columns give way, or each run becomes a block
    for columns in (80, 100):
        for args in (["runs"], ["history", "ART RND 4KiB R/W 0/100"]):
            shown = on_a_terminal([*IOLAB, *args, "--runs-dir", str(runs)], columns)
            assert re.search(rf"\b{base}\b", shown) and re.search(rf"\b{run}\b", shown), shown
            assert max(len(line) for line in shown.splitlines()) <= columns, shown


def _words(help_text: str) -> list[str]:
    return sorted(w for w in re.split(r"[\s│╭╮╰╯─]+", help_text) if w)


@pytest.mark.parametrize("columns", [60, 80, 200])
@pytest.mark.parametrize("command", ["run", "resume", "check", "sim calibrate"])
def test_help_fits_the_terminal_without_cutting_a_word(command, columns):
    # an 80-column terminal cut 10 cells of `run -h` ("--precondition-fac…", "file:PATH?size=8Gi…")
    shown = on_a_terminal([*IOLAB, *command.split(), "-h"], columns)
    assert "…" not in shown, shown
    assert max(map(len, shown.splitlines())) <= columns, shown
    # every word of the help, whole: the same words as the help written to a pipe
    assert _words(shown) == _words(cli(*command.split(), "-h").stdout)


PROGRESS_LINE = re.compile(r"^\d\d:\d\d:\d\d |phase \d+/\d+|round \d+ done|^resuming ", re.M)


def test_quiet_run_and_resume_print_results_and_errors_only(scratch):
    from .test_resume import run_and_kill

    runs = scratch / "runs"
    quick = ("--quick", "--cell-time", "100ms", "--max-rounds", "2", "--no-report", "--runs-dir", str(runs))
    shown = cli("run", "latency", *quick)
    assert PROGRESS_LINE.search(shown.stdout), shown.stdout  # what --quiet leaves out
    for extra in ((), ("--json",)):  # progress goes to standard error with --json: none there either
        p = cli("run", "latency", *quick, "-q", *extra)
        assert p.returncode == 0, p.stderr
        assert not PROGRESS_LINE.search(p.stdout + p.stderr), p.stdout + p.stderr
        assert ("run directory: " in p.stderr) if extra else ("run directory: " in p.stdout and "ART" in p.stdout)
    # with its report: no "writing report RUN: page N of M" lines either, only the report's paths
    with_report = [a for a in quick if a != "--no-report"]
    p = cli("run", "latency", *with_report, "-q")
    assert p.returncode == 0 and "writing report" not in p.stdout + p.stderr, p.stdout + p.stderr
    assert re.search(r"\.pdf$", p.stdout, re.M), p.stdout
    # two rounds on the file, not the default five: the quiet resume's output is what is checked,
    # and the eight cells left after the kill point are enough for it to print progress if it would
    on_file = ("latency", "--cell-time", "200ms", "--max-rounds", "2", "-t", f"file:{scratch}/target.img?size=64MiB")
    cut = run_and_kill(scratch, scratch / "cut", "main-r02-c01", on_file)
    p = cli("resume", str(cut), "--quiet", "--no-report", env={"COLUMNS": "300"})
    assert p.returncode == 0, p.stderr
    assert not PROGRESS_LINE.search(p.stdout + p.stderr), p.stdout + p.stderr
    assert f"run directory: {cut}" in p.stdout


def test_a_reader_that_goes_away_does_not_end_the_run(tmp_path):
    # `iolab run ... | head -3` failed the run: "internal error: SystemExit(1)"
    import json

    runs = tmp_path / "runs"
    e = {k: v for k, v in os.environ.items() if k != "IOLAB_RUNS"}
    cmd = [*IOLAB, "run", "iops", "--quick", "--no-report", "-t", "sim:enterprise-sas", "--runs-dir", str(runs)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    assert p.stdout is not None and p.stderr is not None
    head = [p.stdout.readline() for _ in range(3)]
    p.stdout.close()  # as `head -3` exits
    err = p.stderr.read()
    assert p.wait(timeout=300) == 0, err
    assert all(head) and "Traceback" not in err and not err.strip(), err
    [run] = list(runs.iterdir())
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["state"] == "complete", manifest.get("error")


def test_a_report_is_written_when_the_reader_of_both_streams_goes_away(tmp_path):
    # `iolab run iops --quick 2>&1 | head -3` and `iolab report RUN 2>&1 | head -1` exited 1 with
    # report/ empty: the report's progress line ("writing report ...: page 16 of 16") met EPIPE
    runs = tmp_path / "runs"

    def head_1(*args: str) -> tuple[int, str]:
        """`iolab ARGS 2>&1 | head -1`: one pipe for both streams, closed after its first line."""
        p = subprocess.Popen([*IOLAB, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert p.stdout is not None
        first = p.stdout.readline()
        p.stdout.close()  # as `head -1` exits
        return p.wait(timeout=600), first

    code, first = head_1("run", "iops", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "--runs-dir", str(runs))
    [d] = list(runs.iterdir())
    assert code == 0 and first.startswith("IOPS on "), first
    reports = sorted(f.suffix for f in (d / "report").iterdir())
    assert reports == [".html", ".pdf"]
    for f in (d / "report").iterdir():
        f.unlink()
    code, first = head_1("report", str(d))
    assert code == 0 and first.startswith("writing report"), first
    assert sorted(f.suffix for f in (d / "report").iterdir()) == reports


def test_closed_standard_streams_are_treated_as_readers_that_went_away(tmp_path):
    # `iolab show RUN >&-` exited 1 (sys.stdout is None: AttributeError in tidy_help), and
    # `iolab run latency --quick 2>&-` measured everything, then lost its report the same way
    runs = tmp_path / "runs"

    def closed(fd: int, *args: str) -> subprocess.CompletedProcess:
        """`iolab ARGS` with descriptor `fd` closed, as `>&-` or `2>&-` leave it."""
        keep = subprocess.PIPE
        return subprocess.run(
            [*IOLAB, *args],
            stdout=keep if fd != 1 else subprocess.DEVNULL,
            stderr=keep if fd != 2 else subprocess.DEVNULL,
            preexec_fn=lambda: os.close(fd),  # noqa: PLW1509  # the child's own descriptor, after fork
            text=True,
            timeout=600,
        )

    r = closed(2, "run", "latency", "--quick", "--max-rounds", "1", "--cell-time", "100ms", "--runs-dir", str(runs))
    [d] = list(runs.iterdir())
    assert r.returncode == 0 and "run directory: " in r.stdout, r.stdout
    assert sorted(f.suffix for f in (d / "report").iterdir()) == [".html", ".pdf"]
    for args in (("show", str(d)), ("--help",)):
        r = closed(1, *args)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr)
    # a document is the output a script waits for: delivered nowhere, it is an error, not 0
    r = closed(1, "show", str(d), "--json")
    said = " ".join(r.stderr.split())
    assert r.returncode == 2 and "standard output is closed" in said and "Traceback" not in said, said
    # nothing iolab wrote reached a run file that took the free descriptor: the run reads back whole
    r = subprocess.run([*IOLAB, "show", str(d), "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and '"state": "complete"' in r.stdout, r.stderr


@pytest.mark.parametrize(
    "args", [("fio-job", "iops", "--quick"), ("--version",), ("run", "-h"), ("tests",), ("plan", "latency", "--quick")]
)
def test_a_reader_gone_before_the_first_line_is_no_error(args):
    """`iolab fio-job iops --quick | true`, `iolab --version | true` and `iolab run -h | true`
    exited 1 with no message (click's and Rich's answer to EPIPE), where tests, show and plan
    exited 0. The pipe's reader is closed before iolab writes, as `| true` may leave it."""
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([*INSTALLED, *args], stdout=w, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(w)
    assert p.returncode == 0 and not p.stderr.strip(), p.stderr


def test_data_on_standard_output_ends_quietly_when_its_reader_goes_away(tmp_path):
    # `iolab export RUN -o - --format json | head -2` exited 1 (the flush at exit met the closed
    # pipe), and a fleet's --json document would have too
    runs = tmp_path / "runs"
    r = cli(
        "run",
        "latency",
        "--quick",
        "--no-report",
        "--quiet",
        "-t",
        "sim:enterprise-sas?user_gb=0.25",
        "--runs-dir",
        str(runs),
    )
    assert r.returncode == 0, r.stderr
    [run] = list(runs.iterdir())
    cmd = [*IOLAB, "export", str(run), "-o", "-", "--format", "json"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stderr is not None
    first = p.stdout.readline()
    p.stdout.close()  # as `head -1` exits
    err = p.stderr.read()
    assert p.wait(timeout=120) == 0 and first.strip() == "{", err
    assert not err.strip(), err


def test_show_completion_prints_the_named_shells_script_and_refuses_an_unknown_one():
    # every SHELL printed the bash script ("complete -o default -F _iolab_completion iolab"), exit 0
    scripts = {}
    for shell in ("bash", "zsh", "fish", "powershell"):
        p = iolab("--show-completion", shell)
        assert p.returncode == 0, p.stderr
        scripts[shell] = p.stdout
    assert "complete -o default -F _iolab_completion iolab" in scripts["bash"]
    assert "compdef _iolab_completion iolab" in scripts["zsh"]
    assert "complete_fish" in scripts["fish"] and "Register-ArgumentCompleter" in scripts["powershell"]
    assert len(set(scripts.values())) == 4
    assert iolab("--show-completion=zsh").stdout == scripts["zsh"]
    p = iolab("--show-completion", "nosh")
    assert p.returncode == 2 and p.stdout == "", p.stdout
    said = " ".join(p.stderr.split())
    assert said.startswith("iolab: --show-completion nosh: not a shell") and "bash, zsh, fish, powershell" in said
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("command", [*COMMANDS, "power"])
def test_every_command_that_takes_a_run_says_how_a_run_is_named(command):
    """A RUN is a run's directory, its id or any part of an id only one run contains (README,
    "Naming a run"); the help said "Run id or directory" alone. Every command whose usage takes a
    RUN (and check's --baseline) says it in the same words (core.usertext.RUN_REF)."""
    from iolab.core.usertext import RUN_REF

    p = cli(*command.split(), "--help")
    assert p.returncode == 0, p.stderr
    if not re.search(r"Usage: iolab [\w -]*\[OPTIONS\] .*\{RUN\}", p.stdout):
        assert command not in ("show", "report", "compare", "export", "resume", "audit", "power", "check"), p.stdout
        return
    text = " ".join(p.stdout.replace("│", " ").split())  # Rich's box and wrapping taken out
    assert text.count(RUN_REF) == (2 if command == "check" else 1), text
