"""The options `iolab run` shares with `fio-job` and `resume`, declared once as the fields of
RunArgs, --runs-dir and the options other commands share. cli/app.py mounts them (the conventions
of every command are cli_typer.py's); nothing here runs a test."""

import functools
import inspect
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from iolab.api import registry
from iolab.cli.auto import JSON_HELP, STEADY_HELP, emit, emit_anyway, record_of, records_code
from iolab.cli.runsdir import runs_dir_option
from iolab.core.errors import IolabError
from iolab.core.ioengines import AUTO_RULE, check_ioengine
from iolab.core.percentages import refuse_fraction_like
from iolab.core.units import parse_duration, parse_percent, parse_size

if TYPE_CHECKING:
    from iolab.core.plan import Profile
    from iolab.run.runstart import RunOptions


def _opt(default, *names: str, help: str, metavar: Optional[str] = None, **kw):
    """A dataclass field whose CLI declaration travels with it."""
    return field(default=default, metadata={"option": typer.Option(default, *names, help=help, metavar=metavar, **kw)})


TARGET_HELP = (
    "/dev/XXX[?size=16GiB] (size: test its first part), file:PATH?size=8GiB, nbd://HOST[:PORT]/EXPORT or "
    "sim:PRESET?param=value (`iolab run`: "
    "default the simulated drive, repeat for several drives in parallel; `iolab fio-job`: default a 1 GiB scratch file)."
)


# --quick's help, with the sizes the code uses (suites.QUICK_CAPACITY, QUICK_MAX_ROUNDS and each
# test's quick_sim_gb): written out, not read from the suites, whose import loads every page
# module into every command's start (`iolab --help` among them); test_quick_help.py holds it
# to the code and to what `iolab plan --quick` builds.
QUICK_HELP = (
    "Scaled-down run (short cells, 512 MiB tested, ≤10 rounds; a simulated drive, sized in its target or not, "
    "becomes a 512 MiB copy with the same over-provisioning, larger for tests whose footprint needs more "
    "(consistency 4 GB, slc-cache 32 GB), or is tested whole when no larger): finishes in minutes, labelled "
    "non-compliant."
)


TEST_HELP = (
    f"A test ({', '.join(registry.names())}) or a sequence ({', '.join(registry.sequences())}: its tests in "
    "order); `iolab tests` lists them. Tests that need an input take --workload."
)
DESTROYS = " DESTROYS DATA."
PE_CYCLES_HELP = "Rated P/E cycles of the flash, for TBW (at most 1,000,000; same as --set pe_cycles=N)."
WARRANTY_HELP = "Warranty in years, for DWPD (at most 100; same as --set warranty_years=Y)."


@dataclass(frozen=True)
class RunArgs:
    """The options of `iolab run`, as parsed. A command that takes a subset gets the defaults
    for the rest, so a profile built from them is the run's profile."""

    target: Optional[list[str]] = _opt(None, "--target", "-t", metavar="TARGET", help=TARGET_HELP)
    paths: Optional[str] = _opt(
        None,
        "--paths",
        metavar="PATH,...",
        help=(
            "Split the outstanding IO over these paths to the one drive (comma-separated, incl. --target); "
            "a simulated drive's paths are its ports: SPEC,SPEC&port=1."
        ),
    )
    hosts: Optional[str] = _opt(
        None,
        "--hosts",
        metavar="HOST[:PORT],...",
        help="Run on these fio servers at once, splitting the outstanding IO.",
    )
    hosts_file: Optional[Path] = _opt(
        None,
        "--hosts-file",
        metavar="FILE",
        help="TOML \\[\\[host]] list: address, port, target, share, ssh, ssh_config, ioengine.",
    )
    listen_any: bool = _opt(
        False,
        "--listen-any",
        help="Let a fio server iolab starts for --hosts listen on every "
        "interface (a host given as 0.0.0.0 or ::). Anyone who reaches it can make it write.",
    )
    workload: Optional[Path] = _opt(
        None,
        "--workload",
        "-w",
        metavar="DIR",
        help="RWSW tests: the directory written by `iolab trace analyze` (or its composite.toml / replay.toml).",
    )
    profile: str = _opt(
        "enterprise",
        "--profile",
        metavar="NAME",
        help="enterprise (WCD, AR 100 %, TC4/QD32) or client (WCE, AR 75 %, TC2/QD16).",
    )
    write_cache: Optional[str] = _opt(
        None,
        "--write-cache",
        metavar="on|off",
        help="The drive's volatile write cache during the run: on (WCE) or off (WCD) instead of the profile's "
        "(enterprise off, client on); non-compliant when it differs.",
    )
    active_range: Optional[str] = _opt(
        None,
        "--active-range",
        metavar="PCT",
        help="Test this share of the target's LBA range, above 0 and at most 100 (e.g. 50 or 50%; up to 1 only with "
        "its %, e.g. 0.5%) instead of the "
        "profile's (enterprise 100, client 75); non-compliant when it differs.",
    )
    spec: str = _opt(
        "2.0.2", "--spec", metavar="VERSION", help="PTS revision: 2.0.2 or 1.1 (changes the IOPS tracking variables)."
    )
    quick: bool = _opt(
        False,
        "--quick",
        help=QUICK_HELP,
    )
    # the cell time is `cell_seconds` from here to the engine (Profile.cell_seconds, then each
    # workload's duration_s); only an engine converts it (fio's runtime=, the simulator's ns)
    cell_seconds: Optional[str] = _opt(
        None,
        "--cell-time",
        metavar="DURATION",
        help="Duration of each cell/interval (e.g. 60s, 500ms). Below 60 s is non-compliant.",
    )
    max_rounds: Optional[int] = _opt(
        None,
        "--max-rounds",
        metavar="N",
        help="Round limit for steady state (spec: 25; at most 1,000). Tests that run to a write or time budget "
        "(wsat, xsr, multi-wsat, streams-wsat) keep their own limits and say --max-rounds is ignored.",
    )
    capacity_limit: Optional[str] = _opt(
        None, "--capacity-limit", metavar="SIZE", help="Test only this much of the target (e.g. 4GiB); non-compliant."
    )
    precondition_factor: Optional[float] = _opt(
        None, "--precondition-factor", metavar="X", help="WIPC volume in × tested capacity (spec: 2)."
    )
    strict_steady: bool = _opt(
        False, "--strict-steady", help="Use strict < instead of inclusive ≤ in the steady-state test."
    )
    wsat_capacity_multiple: Optional[float] = _opt(
        None,
        "--wsat-capacity-multiple",
        metavar="X",
        help="Write Saturation stops after this × capacity written (spec: 4).",
    )
    wsat_max_time: Optional[str] = _opt(
        None, "--wsat-max-time", metavar="DURATION", help="Write Saturation time limit (spec: 24h; at most 1000d)."
    )
    rwsw_min_writes: Optional[float] = _opt(
        None,
        "--rwsw-min-writes",
        metavar="X",
        help="Multi-WSAT / Individual "
        "Streams: accept steady state only after this × capacity of workload writes (default 1).",
    )
    steady_min_writes: Optional[float] = _opt(
        None,
        "--steady-min-writes",
        metavar="X",
        help="Accept steady state only "
        "after this × the tested capacity (plus the drive outside a range cut to the "
        "quick limit) is written since the purge (default 2; at most 1,000).",
    )
    sets: Optional[list[str]] = _opt(
        None,
        "--set",
        metavar="NAME=VALUE",
        help="A test's own parameter (repeatable), "
        "e.g. --set steps=5000:5000:100000; `iolab tests TEST` lists each test's parameters. A percentage "
        "(min_gain, tolerance, ...) is written 5 or 5%, and from above 0 to 1 only with its % (0.5%).",
    )
    # text, not numbers: each is a test's parameter (--set), which reads it and names it as typed
    pe_cycles: Optional[str] = _opt(None, "--pe-cycles", metavar="N", help=PE_CYCLES_HELP)
    warranty_years: Optional[str] = _opt(None, "--warranty-years", metavar="YEARS", help=WARRANTY_HELP)
    purge: str = _opt(
        "auto",
        "--purge",
        metavar="METHOD",
        help="auto, nvme-format, nvme-sanitize, ata-secure-erase, sg-format, sg-sanitize, blkdiscard, file, sim, "
        "sim-purge, none (a device's ?size= below its size: auto discards that part alone; drive erases are refused).",
    )
    allow_unsafe_target: bool = _opt(
        False,
        "--allow-unsafe-target",
        help="Write even to a partitioned, signature-bearing, in-use or foreign target." + DESTROYS,
    )
    allow_system_disk: bool = _opt(
        False,
        "--allow-system-disk",
        help="Write even where a mounted filesystem, active "
        "swap or the running system lives (separate from --allow-unsafe-target)." + DESTROYS,
    )
    runs_dir: Optional[Path] = field(default=None, metadata={"option": runs_dir_option()})
    tested_by: str = _opt("", "--tested-by", metavar="NAME", help="Name for the report's 'tested by' field.")
    report: bool = _opt(True, "--report/--no-report", help="Write the HTML/PDF report at the end.")
    spec_sheet: Optional[Path] = _opt(
        None,
        "--spec-sheet",
        metavar="FILE",
        help="Open the report with a front page against this spec sheet (TOML or CSV): see `iolab report --spec-sheet`; "
        "`run --fleet`: the fleet is judged against it too, in place of its fleet file's (a fleet resumed keeps its own).",
    )
    stall_timeout: Optional[str] = _opt(
        None,
        "--stall-timeout",
        metavar="DURATION",
        help="Stop and fail a round in "
        "which fio completes no IO for this long (default: 3 × the cell time, at least "
        "30 s; e.g. 2m; at most 72h). Lower values than 30 s only when given here.",
    )
    ioengine: Optional[str] = _opt(
        None,
        "--ioengine",
        metavar="ENGINE",
        help=f"fio's IO engine on block devices and files: io_uring, libaio or auto ({AUTO_RULE}; "
        "`iolab resume`: the run's own). NBD uses fio's nbd engine; --hosts-file hosts their ioengine field.",
    )
    everything: bool = _opt(False, "--all", help="A sequence with its optional tests (pts: every PTS 2.0 test).")
    json_out: bool = _opt(False, "--json", help=JSON_HELP)
    require_steady: bool = _opt(False, "--require-steady", help=STEADY_HELP)
    quiet: bool = _opt(
        False,
        "--quiet",
        "-q",
        help="No progress (no live panel, no timestamped lines): only the results, the report and run "
        "directory paths, warnings and errors.",
    )

    def __post_init__(self) -> None:
        if self.ioengine is not None:  # refused before anything starts, whatever the target
            check_ioengine(self.ioengine)

    def make_profile(self) -> "Profile":
        """The profile the options make."""
        from iolab import suites
        from iolab.core.testparams import OWN_OPTION, parse_settings  # the plan's types: not at every command's start

        # the parameters with an option of their own, declared once (testparams.OWN_OPTION); each
        # option's field is named as its parameter
        given = {k: v for k in OWN_OPTION if (v := getattr(self, k)) is not None}
        for k, v in given.items():
            also = [s for s in self.sets or () if s.partition("=")[0].strip() == k]
            if also:  # parse_settings would name the --set alone, which the user gave once
                raise IolabError(
                    f"{OWN_OPTION[k]} {v} and --set {also[0].strip()}: the same parameter given twice; give one. "
                    "Nothing was run or written."
                )
        sets = [*(self.sets or ()), *(f"{k}={v}" for k, v in given.items())]
        return suites.make_profile(
            self.profile,
            quick=self.quick,
            spec=self.spec,
            write_cache=_maybe(_on_off, self.write_cache, "--write-cache"),
            active_range=_maybe(_active_range, self.active_range, "active range (--active-range)"),
            cell_seconds=_maybe(parse_duration, self.cell_seconds, "--cell-time"),
            max_rounds=self.max_rounds,
            capacity_limit=_maybe(parse_size, self.capacity_limit, "--capacity-limit"),
            # as given, so the run names what scaled it in the user's words ("512MiB", not --quick's)
            capacity_limit_given=" ".join(self.capacity_limit.split()) if self.capacity_limit else None,
            precondition_factor=self.precondition_factor,
            strict_steady=self.strict_steady or None,
            wsat_capacity_multiple=self.wsat_capacity_multiple,
            wsat_max_seconds=_maybe(parse_duration, self.wsat_max_time, "--wsat-max-time"),
            rwsw_min_write_multiple=self.rwsw_min_writes,
            steady_min_write_multiple=self.steady_min_writes,
            settings=parse_settings(sets) if sets else None,
        )

    def run_options(self) -> "RunOptions":
        from iolab.run.runstart import RunOptions

        return RunOptions(
            purge_method=self.purge,
            allow_unsafe=self.allow_unsafe_target,
            allow_system_disk=self.allow_system_disk,
            tested_by=self.tested_by,
        )

    def stall_seconds(self) -> Optional[float]:
        from iolab.engines.fio_supervise import check_stall_timeout

        seconds = _maybe(parse_duration, self.stall_timeout, "--stall-timeout")
        check_stall_timeout(seconds, self.stall_timeout)  # refused in the user's words, before any run
        return seconds

    def refuse_as_run_would(self, target, split) -> None:
        """`iolab plan`: every refusal `iolab run` makes before it measures (api/preflight.py);
        `split`: scaleout.legs_for_run's."""
        from iolab.api.preflight import refuse_as_run_would

        refuse_as_run_would(target, split, self.run_options(), self.stall_seconds(), self.ioengine, self.listen_any)


def _maybe(parse, text, option):
    return parse(text, option) if text is not None else None


def _active_range(text: str, what: str) -> float:
    """'50' or '50%' -> 0.5; from above 0 to 1 only with its % ('0.5' is 0.5 % or half the drive)."""
    refuse_fraction_like("--active-range", text)
    return parse_percent(text, what)


def _on_off(text: str, option: str) -> bool:
    if text.strip().lower() not in ("on", "off"):
        raise IolabError(
            f"write cache ({option}): {text!r} is not a setting; give on (WCE) or off (WCD). Nothing was run or written."
        )
    return text.strip().lower() == "on"


# The other commands' options whose declarations would fill a screen of cli/app.py.
SHOW_JSON = typer.Option(
    False,
    "--json",
    help="Print the run as one JSON document instead of the tables "
    "(docs/automation.md; schema in docs/schema/outcome.schema.json).",
)
REPORT_OUT = typer.Option(
    None,
    "--out",
    "-o",
    metavar="DIR",
    help="Directory for the HTML and PDF files (default: "
    "each run's report/ folder; with --sequence: sequences/ beside the runs).",
)
SPEC_SHEET_PAGE = typer.Option(
    None,
    "--spec-sheet",
    metavar="FILE",
    help="Open the report with a front page against this spec sheet (TOML or CSV, as `iolab fleet` reads): "
    "each criterion beside the measured figure, with a verdict; a quick, not-steady or limited-range "
    "run's figures are shown but not judged.",
)
SEQUENCE = typer.Option(
    False,
    "--sequence",
    help="One report of these runs of one target (a summary page, then each "
    "run's pages in the order they ran), as `iolab run pts|characterise` writes.",
)
COMPARE_OUT = typer.Option(
    None,
    "--out",
    "-o",
    metavar="DIR",
    help="Directory for the comparison (default: compare/ under the runs directory).",
)
COMPARE_FORCE = typer.Option(
    False, "--force", help="Compare runs of different tests or parameters anyway; every page lists the differences."
)
LABELS = typer.Option(
    None,
    "--label",
    metavar="NAME",
    help="A name for each run, in the order of the runs (repeat "
    "once per run), e.g. --label before --label after; default: the drive, with the run id where two "
    "runs would read the same.",
)
EXPORT_OUT = typer.Option(
    None,
    "--out",
    "-o",
    metavar="DIR",
    help="Directory for the files (default: the run's "
    "export/ folder); - writes a JSON export to standard output as one document.",
)


RUN_FIELDS = {f.name: f for f in fields(RunArgs)}
# `iolab resume` goes on with the run's own test, target and profile: these options only.
RESUME_OPTIONS = (
    "allow_unsafe_target",
    "allow_system_disk",
    "listen_any",
    "runs_dir",
    "report",
    "json_out",
    "require_steady",
    "ioengine",
    "quiet",
    "spec_sheet",  # a resumed run's report opens with it as the run's own would have (a fleet's drive: the fleet's)
)


def with_run_args(*names: str):
    """The command takes the RunArgs options `names` (none given: all of them) and receives
    them as one RunArgs in its `args` parameter."""
    chosen = [RUN_FIELDS[n] for n in names] if names else list(RUN_FIELDS.values())

    def wrap(fn):
        own = [p for p in inspect.signature(fn).parameters.values() if p.name != "args"]
        added = [
            inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.metadata["option"], annotation=f.type)
            for f in chosen
        ]

        @functools.wraps(fn)
        def command(**kw):
            args = RunArgs(**{f.name: kw.pop(f.name) for f in chosen})
            return fn(args=args, **kw)

        hints = {k: v for k, v in fn.__annotations__.items() if k != "args"}
        # typer reads the signature set here; the type functools.wraps gives has no such attribute
        command.__signature__ = inspect.Signature([*own, *added])  # type: ignore[attr-defined]
        command.__annotations__ = {**hints, **{f.name: f.type for f in chosen}}
        return command

    return wrap


def with_runs_dir(fn):
    """A command declared elsewhere, given --runs-dir: its runs are then looked up there."""

    @functools.wraps(fn)
    def command(*a, runs_dir_given: Optional[Path] = None, **kw):
        return fn(*a, **kw)

    params = list(inspect.signature(fn).parameters.values())
    params.append(
        inspect.Parameter(
            "runs_dir_given", inspect.Parameter.KEYWORD_ONLY, default=runs_dir_option(), annotation=Optional[Path]
        )
    )
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]  # as in with_run_args
    command.__annotations__ = {**fn.__annotations__, "runs_dir_given": Optional[Path]}
    return command


def ended_early(command: str, json_out: bool, records: list[dict], store, code: int, error: str | None = None) -> None:
    """An interrupted or failed run: its document (the run so far, and the command's `error`), then its exit code."""
    if json_out:
        if not any(r["path"] == str(store.dir) for r in records):
            records.append(record_of(store.dir))
        emit_anyway(command, code, runs=records, **({"error": error} if error else {}))
    raise typer.Exit(code)


def finish(command: str, json_out: bool, require_steady: bool, records: list[dict], **parts) -> None:
    code = records_code(records, require_steady)
    if json_out:
        emit(command, code, runs=records, **parts)
    if code:
        raise typer.Exit(code)


def compliance_text(r) -> str:
    """The `runs` table's compliant column: the run's own reasons, never a guessed one."""
    if r.compliant:
        return "yes"
    return "no: " + "; ".join(r.noncompliance) if r.noncompliance else "no"
