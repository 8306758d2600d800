"""`iolab power RUN LOG`: a power meter's log kept with a run. The log is checked and aligned
to the run's cells (figures/power.py), copied into the run directory (the raw data behind the
figures) and the aligned figures written to the run's power.json, which the report's Power
Consumption pages read back. Running it again with another log or offset replaces both."""

from __future__ import annotations

import json
import math
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.runfiles import METER_COPY, POWER_FILE
from iolab.core.safefile import read_text
from iolab.core.units import as_given
from iolab.figures.power import MAX_CLOCK_S, MIN_COVERAGE, align, copy_record, parse_meter_log, to_document
from iolab.store.durable import replace_files, room_for
from iolab.store.manifest import manifest_of, resolve_run
from iolab.store.runstore import RunStore
from iolab.store.writer import claim_run


def coverage_refused(shown: str) -> IolabError:
    """The refusal of a minimum coverage (--min-coverage) out of range, `shown` as it was given."""
    return IolabError(f"the minimum coverage must be above 0 % and at most 100 %, not {shown} %.")


def attach(run_ref: str | Path, log: str | Path, offset_s: float = 0.0, min_coverage: float = MIN_COVERAGE) -> dict:
    """Align the meter log to the run's cells and keep both in the run; the power document."""
    if not 0.0 < min_coverage <= 1.0:
        raise coverage_refused(as_given(100 * min_coverage))
    if not math.isfinite(offset_s):
        # else every shifted meter time is NaN or infinite, and the log's first reading is blamed
        raise IolabError(f"the clock offset (--offset) must be a finite number of seconds, not {as_given(offset_s)}.")
    if abs(offset_s) > MAX_CLOCK_S:
        # a meter whose clock was never set counts from 1970 (about 1.7e9 s off), which this takes;
        # past it, adding the offset rounds every reading's time to one value and the log is blamed
        raise IolabError(
            f"the clock offset (--offset) {as_given(offset_s)} s is more than {MAX_CLOCK_S:,.0f} s (about 317 years) "
            "either way; give this machine's clock minus the meter's, in seconds."
        )
    try:
        text = read_text(log, "power meter log", "document")
    except OSError as e:  # missing, unreadable: named as the meter log, not as a bare system error
        raise IolabError(f"power meter log {log}: cannot read it ({e.strerror or e}); nothing was written.") from None
    run_dir = resolve_run(run_ref)
    # it writes into the run: not while another process does (writer.py)
    with room_for("its power figures", run_dir, f"`iolab power {run_dir} {log}`", run_dir), claim_run(run_dir):
        return _attach(run_ref, text, str(log), offset_s, min_coverage)


def _attach(run_ref: str | Path, text: str, log: str, offset_s: float, min_coverage: float) -> dict:
    st = RunStore.open(run_ref)
    try:
        m = manifest_of(st)
        if m.target.get("kind") == "sim":
            raise IolabError(
                f"run {m.run_id} is on a simulated drive ({m.target.get('spec')}): its cells ran in virtual time, "
                "so no meter's log lines up with them."
            )
        if st.writer_alive():
            raise IolabError(f"run {m.run_id} is still being written; attach its power log once it has ended.")
        cells = sorted(st.cells(kind="precondition") + st.cells(kind="measure"), key=lambda c: c.started)
        if not cells:
            raise IolabError(f"run {m.run_id} has no stored cell to align a power log to.")
        meter = parse_meter_log(text, log, offset_s)
        doc = {"run_id": m.run_id, **to_document(meter, align(meter, cells, min_coverage), min_coverage, offset_s)}
        run_dir = st.dir
    finally:
        st.close()
    # beside power.json, not in inputs/: that holds what the run itself started from (resume reads it).
    # The two are one record: both are replaced or neither (a full disk once left the new log beside
    # the old figures), power.json last, as readers go by it. A kill between the two renames
    # leaves the new log beside the old figures: power.json names the log it came from by its
    # size and digest, and readers refuse a pair that disagrees (figures/power.refuse_other_copy).
    data = text.encode()
    doc |= {"source_copy": METER_COPY, **copy_record(data)}
    replace_files(
        [
            (run_dir / METER_COPY, data, "copy of the power meter log"),
            (run_dir / POWER_FILE, json.dumps(doc, indent=1).encode(), "run's power figures"),
        ]
    )
    return doc
