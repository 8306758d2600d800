"""The `iolab trace …` and `iolab capture` commands. Thin like the rest of the
CLI: parse, call the library, print. cli/app.py mounts them on the `iolab` command."""

from __future__ import annotations

import math
import shlex
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape as esc

from iolab.cli.console import Console
from iolab.cli.conventions import later
from iolab.cli.traceout import kept_whole, step_table, write_analysis
from iolab.core.errors import IolabError
from iolab.core.percentages import refuse_fraction_like
from iolab.core.units import as_given, given, parse_duration, parse_size

trace_app = typer.Typer(help="Block IO traces: capture, import, analyze, export.", no_args_is_help=True)
console = Console()
err = Console(stderr=True)


# -- traces: capture, import, stream analysis (SNIA RWSW) ------------------------------------


@trace_app.command("capture")
def capture(
    device: str = typer.Argument(
        ..., metavar="DEVICE", help="Block device to trace, e.g. /dev/nvme0n1 (read-only: nothing is written to it)."
    ),
    duration: str = typer.Option(
        ...,
        "--duration",
        "-d",
        metavar="DURATION",
        help="How long to capture (e.g. 60s, 5m, 24h); Ctrl-C ends it early.",
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        "-o",
        metavar="FILE",
        help="The IO table to write (.parquet); the raw trace (the kernel's buffer pages, or blktrace's files) is kept beside it.",
    ),
    process: Optional[str] = typer.Option(
        None,
        "--process",
        metavar="NAME",
        help="Only IOs issued by this process name (as the kernel shows it; * as a wildcard).",
    ),
    source: str = typer.Option(
        "auto",
        "--source",
        metavar="tracefs|blktrace|auto",
        help="tracefs (block tracepoints), blktrace (the blktrace tool's binary output) or auto: blktrace when it works on this machine, else tracefs.",
    ),
    buffer: str = typer.Option(
        "16MiB",
        "--buffer",
        metavar="SIZE",
        help="tracefs trace buffer per CPU (kernel memory while capturing); raise it if the capture reports dropped events.",
    ),
    sample_data: Optional[str] = typer.Option(
        None,
        "--sample-data",
        metavar="SIZE",
        help="After the capture, read back (read-only) up to this much of the 4 KiB blocks written (e.g. 64MiB) "
        "and measure how much it compresses (zstd) and the share of duplicate blocks; `iolab trace analyze` reports it.",
    ),
):
    """Capture block IO on a device (tracefs block tracepoints) into an IO table for `iolab trace analyze`."""
    from iolab.traces.capture import capture as trace_capture

    seconds, buffer_kb, sample_bytes = _capture_inputs(duration, buffer, sample_data, out)
    with console.status(f"capturing {esc(device)} for {seconds:g} s (Ctrl-C ends early)") as status:

        def tick(t) -> None:
            status.update(
                f"capturing {esc(device)}: {t.elapsed_s:,.0f} of {seconds:g} s, {t.iops:,.0f} IOPS, {t.ios:,} IOs"
            )

        result = trace_capture(
            device,
            seconds,
            out,
            process=process,
            on_tick=tick,
            source=source,
            buffer_kb=buffer_kb,
            sample_data=sample_bytes,
        )
    console.print(esc(result.table.summary()), soft_wrap=True)
    if result.data is not None:
        console.print(esc(result.data.text()), soft_wrap=True)
    console.print(
        f"raw trace: {esc(str(result.raw_path))}" + (" (ended early)" if result.interrupted else ""), soft_wrap=True
    )
    if result.lost_events:
        err.print(
            f"[bold red]WARNING: the kernel dropped {result.lost_events:,} trace events during this capture: the trace "
            f"is INCOMPLETE (the IOs they described are missing from {esc(str(out))}). Capture again with a "
            "larger --buffer, or only the process that matters (--process).[/]",
            soft_wrap=True,
        )


def _capture_inputs(duration: str, buffer: str, sample_data: str | None, out: Path) -> tuple[float, int, int]:
    """capture's --duration in seconds, --buffer in KiB and --sample-data in bytes (0: none),
    each refused before anything is traced, as is an --out in a missing directory."""
    from iolab.targets.writepolicy import check_file_in_dir

    # as trace import/export: the raw trace's directory (made beside the table) made `-o new/sub/t.parquet`'s
    # missing folders without a word, so a typo in the path went unnoticed until the capture was over
    check_file_in_dir(out, "IO table", "--out")
    seconds = parse_duration(duration, "--duration")
    buffer_kb = parse_size(buffer, "--buffer") // 1024
    if buffer_kb < 4:
        raise IolabError(f"--buffer {buffer}: give at least 4KiB per CPU (e.g. 16MiB).")
    sample_bytes = 0 if sample_data is None else parse_size(sample_data, "--sample-data")
    if sample_data is not None and sample_bytes < 4096:
        raise IolabError(f"--sample-data {sample_data}: give at least 4KiB (one block), e.g. 64MiB.")
    return seconds, buffer_kb, sample_bytes


# The format names in the help are read from the formats' registry when the help is printed
# (cli_typer.later), not imported at every command's start.
def _readers() -> str:
    from iolab.traces import formats

    return ", ".join(formats.reader_names())


def _timed() -> str:
    from iolab.traces import formats

    return ", ".join(f.name for f in formats.all_formats() if f.time_unit)


def _writers() -> str:
    from iolab.traces import formats

    return ", ".join(formats.writer_names())


@trace_app.command("import")
def trace_import(
    paths: list[Path] = typer.Argument(
        ..., metavar="FILE", help="Trace file(s) of one trace (e.g. the per-CPU blktrace files)."
    ),
    fmt: Optional[str] = typer.Option(
        None,
        "--format",
        "-f",
        metavar="FORMAT",
        help=f"Trace format: {later('trace-readers', _readers)} (default: detected from the file when unambiguous).",
    ),
    out: Path = typer.Option(..., "--out", "-o", metavar="FILE", help="The IO table to write (.parquet)."),
    skip_bad_lines: bool = typer.Option(
        False,
        "--skip-bad-lines",
        help="Drop lines that do not parse (counted and reported) instead of stopping at the first.",
    ),
    time_unit: Optional[str] = typer.Option(
        None,
        "--time-unit",
        metavar="ns|us|ms|s",
        help="Unit of the time field: ns, us, ms or s, for formats whose unit varies "
        f"({later('trace-timed', _timed)}; default: guessed from the times, "
        "and the guess is printed).",
    ),
):
    """Import a public trace format into the normalised IO table."""
    from iolab.store.durable import room_for
    from iolab.targets.writepolicy import check_file_in_dir
    from iolab.traces import detect_format, import_trace

    # as every file output refuses a missing directory (--junit, --html): the table's writer made
    # `-o new/sub/t.parquet`'s folders without a word, so a typo in the path went unnoticed
    check_file_in_dir(out, "IO table", "--out", reads=paths)
    if fmt is None:
        fmt = detect_format(paths[0])
        console.print(f"format: {fmt} (detected; pass --format to override)")
    with room_for("the IO table", out, "run the same `iolab trace import` again"):
        table = import_trace(paths, fmt, out, skip_bad_lines=skip_bad_lines, time_unit=time_unit)
    console.print(esc(table.summary()), soft_wrap=True)


@trace_app.command("export")
def trace_export(
    trace: Path = typer.Argument(
        ..., metavar="TRACE", help="IO table (.parquet) from `iolab trace capture` or `iolab trace import`."
    ),
    fmt: str = typer.Option(..., "--format", "-f", metavar="FORMAT", help=f"{later('trace-writers', _writers)}."),
    out: Path = typer.Option(..., "--out", "-o", metavar="FILE", help="The file to write."),
):
    """Write an IO table back out in a public trace format (reads and writes)."""
    from iolab.store.durable import room_for
    from iolab.targets.writepolicy import check_file_in_dir
    from iolab.traces.writers import export_with_notes

    # before the table is read: a missing directory failed at the end, naming the writer's own
    # temporary file ("No such file or directory: DIR/.x.csv.123-0.partial")
    check_file_in_dir(out, "trace file", "--out", reads=[trace])
    with room_for("the exported trace", out, "run the same `iolab trace export` again"):
        path, notes = export_with_notes(trace, fmt, out)
    console.print(f"wrote {esc(str(path))}", soft_wrap=True)
    for note in notes:  # what the format could not hold as it was
        console.print(f"  note: {esc(note)}", soft_wrap=True)


def _share(text: str, what: str) -> float:
    """A share of all IOs, above 0 % and below 100 %: '3%' or '3' -> 0.03. A bare number is a
    percentage, as in every iolab option and `--set` share ('0.03' is 0.03 %, not 3 %: the rule
    was once 'bare numbers below 1 are fractions', so 0.5 was 50 % and 1 was 1 %)."""
    refuse_fraction_like(what, text)  # '0.5': 0.5 % or the fraction 0.5 (50 %) cannot be told
    t = text.strip()
    try:
        v = float(t.rstrip("%").strip())
    except ValueError:
        v = math.nan
    if math.isnan(v):
        raise IolabError(f"{what}: cannot read {text!r}; give a percentage such as 3 or 3%. Nothing was written.")
    if not 0 < v < 100:
        raise IolabError(
            f"{what}: a share of all IOs from above 0% to below 100%, got {given(v)}%; give one such as 3%. "
            "Nothing was written."
        )
    return v / 100


@trace_app.command("analyze")
def analyze(
    trace: Path = typer.Argument(
        ..., metavar="TRACE", help="IO table (.parquet) from `iolab trace capture` or `iolab trace import`."
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", metavar="DIR", help="Directory for analysis.json, composite.toml, replay.toml and plots/."
    ),
    step: str = typer.Option("5m", "--step", metavar="DURATION", help="Capture step length (SNIA RWSW: 5 minutes)."),
    threshold: str = typer.Option(
        "3%",
        "--threshold",
        metavar="PCT",
        help="Dominant streams: at least this share of all IOs (a percentage: 3 or 3%; up to 1 only with its %, e.g. 0.5%).",
    ),
    process: Optional[str] = typer.Option(None, "--process", metavar="NAME", help="Only IOs of this process."),
    device: Optional[list[str]] = typer.Option(
        None, "--device", metavar="DEVICE", help="Only IOs of this device (repeat for several)."
    ),
    qd: Optional[int] = typer.Option(
        None,
        "--qd",
        help="Queue depth of the workloads (default: the capture's average outstanding IO; needed when the trace has no response times).",
    ),
    threads: int = typer.Option(1, "--threads", help="Threads of the workloads (outstanding IO = threads × QD)."),
    compress: float = typer.Option(
        1.0,
        "--compress",
        help="Replay time compression: 60 turns a 5-minute step into 5 s (each replayed step must last 1 ms to 24 h, as a run takes it).",
    ),
    replay_streams: str = typer.Option(
        "dominant", "--replay-streams", metavar="dominant|all", help="Replay the dominant streams only, or all."
    ),
    max_steps: int = typer.Option(
        100_000,  # traces.analysis.streams.MAX_STEPS (imported where it analyses: this module starts light)
        "--max-steps",
        help="Refuse a trace whose span makes more steps than this (memory, time and file size grow with the steps).",
    ),
):
    """Stream analysis of an IO table (SNIA RWSW): streams, dominant streams, per-step metrics;
    writes the composite and replay workloads for `iolab run multi-wsat|streams-wsat|replay|dirth-rwsw`."""
    from iolab.store.durable import room_for
    from iolab.targets.writepolicy import made_for
    from iolab.traces.analysis import composite, replay
    from iolab.traces.analysis.replaylimits import check_compress
    from iolab.traces.analysis.streams import analyse as run_analysis

    share = _analysis_inputs(trace, out, threshold, qd, threads, compress, max_steps)
    with console.status(f"analysing {esc(str(trace))}"):
        a = run_analysis(
            trace,
            step_s=parse_duration(step, "--step"),
            threshold=share,
            devices=tuple(device or ()),
            process=process,
            max_steps=max_steps,
        )
    # the workloads are built before anything is printed or written: one refused (no stream
    # reaches the threshold, filtered IOs without response times) leaves no analysis.json behind
    w = composite(a, queue_depth=qd, threads=threads)
    plan = replay(a, compress=compress, queue_depth=qd, threads=threads, streams=replay_streams)
    check_compress(a, plan, compress)
    made = not out.exists()
    # made_for: the folders this makes (--out and its missing parents) go again when it is stopped
    # or fails, a stop just after their mkdir too (output_dir before the `with` left them empty)
    with (
        made_for(out, "analysis directory"),
        room_for("the analysis", out, "run the same `iolab trace analyze` again"),
        kept_whole(out, made),
    ):
        written = write_analysis(a, w, plan, out, console)
    # printed once it is on disk: a disk that fills (exit 5, nothing kept) shows no tables on
    # stdout that a user or a script would take for a saved analysis
    console.print(esc(a.summary()), soft_wrap=True)
    console.print(step_table(a))
    for p in written:
        console.print(f"wrote {esc(str(p))}", soft_wrap=True)
    console.print(f"next: iolab run rwsw --workload {esc(shlex.quote(str(out)))} --target …", soft_wrap=True)


def _analysis_inputs(
    trace: Path, out: Path, threshold: str, qd: Optional[int], threads: int, compress: float, max_steps: int
) -> float:
    """Refuse `trace analyze`'s bad options and an output it may not write, before anything is
    analysed; the dominant-stream threshold as a fraction."""
    from iolab.core.runfiles import ANALYSIS_FILE, COMPOSITE_FILE, REPLAY_FILE
    from iolab.core.workload import MAX_QUEUE_DEPTH, MAX_THREADS
    from iolab.targets.writepolicy import check_file, dir_problems, refusal
    from iolab.traces.analysis.streams import MAX_STEPS

    for name, v, most in (
        ("--threads", threads, MAX_THREADS),
        ("--qd", qd, MAX_QUEUE_DEPTH),
        ("--max-steps", max_steps, MAX_STEPS * 10),  # 600,000 steps took 2.1 GB
    ):
        if v is not None and not 1 <= v <= most:
            raise IolabError(f"{name} {v}: give a whole number from 1 to {most:,}. Nothing was written.")
    if not 0 < compress < float("inf"):  # also refuses nan
        raise IolabError(
            f"--compress {as_given(compress)}: give a finite number greater than 0 (e.g. 60). Nothing was written."
        )
    share = _share(threshold, "--threshold")  # refused here, in the form given, not as the analysis's fraction
    if qd is None:
        _need_qd(trace)
    # refused before the analysis, not after it; made only once there is something to write
    # in it (an analysis refused or failed left an empty directory behind)
    if problems := dir_problems(out):
        raise refusal("analysis directory", out, problems)
    for name in (ANALYSIS_FILE, COMPOSITE_FILE, REPLAY_FILE):
        check_file(out / name, "analysis file")
    return share


def _need_qd(trace: Path) -> None:
    """Refuse an analysis without --qd of a trace whose table says it has no response times
    (its footer: a few kilobytes read), before anything is analysed or written: its workloads
    would need the queue depth the trace cannot give."""
    from iolab.traces.table import TraceTable

    if not TraceTable.open(trace).has_latency:
        raise IolabError(
            f"{trace}: the trace has no response times, so its outstanding IO (queue depth) is unknown "
            "and the composite and replay workloads cannot be built from it. Give the queue depth to use "
            "(--qd N). Nothing was analysed or written."
        )
