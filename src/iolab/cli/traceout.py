"""What `iolab trace analyze` shows and how it leaves its directory when writing fails."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path


def step_table(a):
    """The per-step figures of an analysis (the first and last 10 steps of a long trace)."""
    from rich.table import Table

    from iolab.core.units import num

    t = Table(title="per step (the Self-Test figures)", title_justify="left")
    for col in ("step", "start s", "IOPS", "MB/s", "read %", "OIO avg / max", "RT avg / max µs"):
        t.add_column(col, justify="right")

    def f(v, fmt):
        return "—" if v is None else format(v, fmt)

    shown = a.steps if len(a.steps) <= 30 else a.steps[:10] + a.steps[-10:]
    for s in shown:
        if len(a.steps) > 30 and s is a.steps[-10]:
            t.add_row("…", *[""] * 6)
        t.add_row(
            f"{s.index}{' (partial)' if s.partial else ''}",
            num(s.start_s, trim=True),  # a step of 100 ms starts at 0.3 s, not "0"
            f(s.iops, ",.0f"),
            f(s.mbps, ",.1f"),
            f(s.read_pct, ".1f"),
            f"{f(s.oio_avg, ',.2f')} / {f(s.oio_max, ',')}",
            f"{f(s.rt_avg_us, ',.0f')} / {f(s.rt_max_us, ',.0f')}",
        )
    return t


def write_analysis(a, w, plan, out: Path, console) -> list[Path]:
    """Write analysis.json, the composite `w` and replay `plan` workloads and the plots; say what
    the workloads hold on `console`. The files written, in order."""
    from rich.markup import escape as esc

    from iolab.core.runfiles import ANALYSIS_FILE, COMPOSITE_FILE, REPLAY_FILE
    from iolab.core.units import counted, human_span
    from iolab.pages.report.stream_plots import write_all
    from iolab.targets.writepolicy import output_file
    from iolab.traces.analysis import save_composite

    # each written beside its name, which it then takes (output_file): the names are the files
    with output_file(out / ANALYSIS_FILE, "analysis file") as path:
        a.save(path)
    with output_file(out / COMPOSITE_FILE, "analysis file") as path:
        save_composite(w, path, a)
    with output_file(out / REPLAY_FILE, "analysis file") as path:
        plan.save(path)
    written = [out / ANALYSIS_FILE, out / COMPOSITE_FILE, out / REPLAY_FILE]
    written += list(write_all(a, out / "plots").values())
    console.print(
        esc(
            f"composite: {', '.join(f'{s.label()} {s.share * 100:.1f} %' for s in w.streams)}; "
            f"TC {w.threads} × QD {w.queue_depth}"
        ),
        soft_wrap=True,
    )
    console.print(
        f"replay: {counted(len(plan.steps), 'step')}, {human_span(plan.duration_s)}"
        + (
            f" ({counted(len(plan.skipped), 'step')} without IOs of the replayed streams left out)"
            if plan.skipped
            else ""
        )
        + (f" (partial last step {plan.short[0]} left out: see the note below)" if plan.short else "")
    )
    return written


@contextmanager
def kept_whole(out: Path, made: bool) -> Iterator[None]:
    """An analysis that fails or is stopped while written (a full disk, Ctrl-C) leaves none of its
    files: a 0-byte analysis.json, or one without its composite.toml, is what `run rwsw -w DIR`
    would read next. A directory this command made goes whole; in one that was there, the
    workload files and plots go, and plots/ too when this command made it (a stop while the
    plots were drawn left it empty). The cleanup holds a second Ctrl-C until it is done."""
    from iolab.core.runfiles import ANALYSIS_FILE, COMPOSITE_FILE, REPLAY_FILE
    from iolab.core.stopdefer import stop_deferred
    from iolab.pages.report.stream_plots import PLOTS

    plots = out / "plots"
    plots_made = not os.path.lexists(plots)
    try:
        yield
    except BaseException:
        with stop_deferred():
            if made:
                shutil.rmtree(out, ignore_errors=True)
            else:
                for path in [out / n for n in (ANALYSIS_FILE, COMPOSITE_FILE, REPLAY_FILE)] + [
                    plots / f"{n}.svg" for n in PLOTS
                ]:
                    path.unlink(missing_ok=True)
                if plots_made:
                    with suppress(OSError):  # not empty: a file that is not this analysis's stays
                        plots.rmdir()
        raise
