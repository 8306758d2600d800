"""A simulated drive's parameters as a firmware engineer sets them, from the command line: a
saved state loads only into the drive it was saved from, impossible values are refused naming
the parameter (never a crash), and the documented defaults are the presets' own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pypdf import PdfReader

from .conftest import iolab, saved_sim_state
from .test_hostile_input import files_under, refused
from .test_review_labels import only_run, page_text

pytestmark = pytest.mark.integration
ROOT = Path(__file__).parents[2]


def test_a_state_loads_only_into_a_drive_of_the_parameters_it_was_saved_with(scratch):
    """A state saved from enterprise-sas loaded into `...&t_prog_us=5000&gc=fifo` ran the saved
    drive (greedy, 1,150 µs programs: every figure the same as without them, exit 0) while the
    run recorded the target's parameters."""
    state = saved_sim_state(scratch)
    runs = scratch / "runs"
    other = f"sim:enterprise-sas?user_gb=0.25&load={state}&t_prog_us=5000&gc=fifo"
    for cmd in ("plan", "run"):
        p = iolab(cmd, "latency", "--quick", "--runs-dir", str(runs), "-t", other)
        err = " ".join(p.stderr.split())
        assert p.returncode == 2, p.stdout + p.stderr
        assert "saved from a drive with t_prog_us=1150, gc=greedy, not t_prog_us=5000, gc=fifo" in err, err
    assert not runs.exists()
    # the same drive, its parameters written another way, still loads
    same = f"sim:enterprise-sas?user_gb=.250&gc=greedy&load={state}"
    p = iolab("plan", "latency", "--quick", "--runs-dir", str(runs), "-t", same)
    assert p.returncode == 0, p.stdout + p.stderr


def _documented_defaults() -> dict[str, dict[str, str]]:
    """docs/simulator.md's "Mechanism parameters and defaults" table: {preset: {param: value}}.
    A row names one parameter or several (`a` × `b`, `a` / `b`), each cell as many values, or
    one that says the mechanism is off (its first parameter's value); "(off)" states none."""
    text = (ROOT / "docs/simulator.md").read_text()
    table = text.split("## Mechanism parameters and defaults", 1)[1].split("\n\n", 2)[1]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()]
    presets, out = rows[0][1:-1], {}
    for row in rows[2:]:
        names = re.findall(r"`([a-z_]+)`", row[0])
        for preset, cell in zip(presets, row[1:-1], strict=True):
            values = [re.sub(r"\s*\(.*\)", "", v).replace(",", "") for v in re.split(r" × | / ", cell)]
            for name, value in zip(names, values, strict=False):
                if value:
                    out.setdefault(preset, {})[name] = value
    return out


def test_the_documented_mechanism_defaults_are_the_presets_own():
    """The table gave entry-sata-compress's gc_start_pct as 0; the preset starts GC at 10 %
    (a change made for its QD1 write tail after a sequential fill), which `iolab sim presets`
    shows."""
    documented = _documented_defaults()
    assert set(documented) == {"enterprise-sas", "entry-sata-compress", "client-nvme-slc"}, documented
    for preset, values in documented.items():
        p = iolab("sim", "presets", preset)
        assert p.returncode == 0, p.stderr
        shown = dict(re.findall(r"│ ([a-z_]+) +│ ([^ │]+)", p.stdout))
        wrong = {k: (v, shown.get(k)) for k, v in values.items() if float(v) != float(shown[k])}
        assert not wrong, f"{preset}: documented, shown: {wrong}"


@pytest.mark.parametrize(
    ("target", "says"),
    [
        # the run aborted allocating 34 GB (buffer) or 885 GB (a per-second series), exit 134
        ("sim:enterprise-sas?user_gb=0.25&buffer_kib=1e300", "buffer_kib=1e300 must be at most 1048576 (1 GiB)"),
        ("sim:enterprise-sas?user_gb=0.25&overhead_us=1e300", "overhead_us=1e300 must be at most 3600000000"),
        ("sim:sata-7200-hdd?capacity_gb=0.5&cache_mib=1e300", "cache_mib=1e300 must be at most 4096 (4 GiB)"),
        # never ended / wrapped the clock and printed the default drive's figures, exit 0
        ("sim:enterprise-sas?user_gb=0.25&link_mbps=1e-300", "link_mbps=1e-300 must be at least 1 MB/s"),
        ("sim:enterprise-sas?user_gb=0.25&channel_mbps=1e-300", "channel_mbps=1e-300 must be at least 1 MB/s"),
        ("sim:sata-7200-hdd?capacity_gb=0.5&rpm=1e-300", "rpm=1e-300 must be at least 0.01666"),
        # "greater than zero", then rounded to a read of 0 ns
        ("sim:enterprise-sas?user_gb=0.25&t_read_us=1e-9", "t_read_us=1e-9 must be at least 0.001 (a nanosecond)"),
        # a share past its bound says it is one, as a size's bound says its size
        ("sim:enterprise-sas?user_gb=0.25&time_spread_pct=95", "time_spread_pct=95 must be at most 90 (a percentage)"),
    ],
)
def test_an_impossible_time_rate_or_buffer_is_refused_before_the_run(scratch, target, says):
    before = files_under(scratch)
    p = iolab(
        "run", "latency", "--quick", "--no-report", "--runs-dir", str(scratch / "runs"), "-t", target, timeout=120
    )
    err = refused(p, scratch, before)  # exit 2, one paragraph, no run directory
    assert says in err and "backtrace" not in err, err


def test_a_drive_too_small_for_the_slc_cache_given_names_the_cache():
    """user_gb=8&slc_gb=0.5 on client-nvme-slc (without slc_gb, or with 0.1, the drive is
    taken) was told only that user_gb=8 is too small: the cache the user asked for is what
    takes the spare blocks, and lowering it is the other way out."""
    p = iolab("plan", "iops", "--quick", "-t", "sim:client-nvme-slc?user_gb=8&slc_gb=0.5")
    said = " ".join(p.stderr.split())
    assert p.returncode == 2, p.stdout + p.stderr
    assert "the smallest user_gb it takes here is 16, or lower slc_gb=0.5, which takes spare blocks" in said, said
    p = iolab("plan", "iops", "--quick", "-t", "sim:client-nvme-slc?user_gb=8&slc_gb=0.1")
    assert p.returncode == 0, p.stdout + p.stderr


def _qd1_write_us(scratch: Path, target: str, *cache: str) -> float:
    """ART of QD1 RND 4 KiB writes of a quick latency run on `target`, in µs."""
    p = iolab(
        "run", "latency", "--quick", "--no-report", "--json", "--runs-dir", str(scratch / "runs"), "-t", target, *cache
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    figures = json.loads(p.stdout)["runs"][0]["figures"]
    return next(f["value"] for f in figures if f["name"] == "ART RND 4KiB R/W 0/100")


def test_a_drive_without_a_write_buffer_acknowledges_a_write_once_its_page_is_programmed(scratch):
    """buffer_kib=0 (write-through) acknowledged a 4 KiB write after its quarter of a 16 KiB
    page's program: 355.6 µs at QD1, against 1,218 µs for the same drive with its cache off
    and no power-loss protection, where one program takes 1,150 µs."""
    shown = dict(re.findall(r"│ ([a-z_]+) +│ ([0-9.]+)", iolab("sim", "presets", "enterprise-sas").stdout))
    t_prog = float(shown["t_prog_us"])
    through = _qd1_write_us(scratch, "sim:enterprise-sas?buffer_kib=0", "--write-cache", "on")
    cache_off = _qd1_write_us(scratch, "sim:enterprise-sas?plp=off", "--write-cache", "off")
    assert through > t_prog, (through, t_prog)
    # the report's Write cache row says what the setting did: nothing, the drive writes through
    run = only_run(scratch / "reported", "latency", "--quick", "-t", "sim:enterprise-sas?buffer_kib=0")
    report = page_text(run / "report" / f"{run.name}.html")
    assert "disabled, no effect (no write buffer: acknowledged once programmed)" in report, report[:3000]
    assert abs(through / cache_off - 1) < 0.05, (through, cache_off)


def test_an_slc_drive_shows_the_over_provisioning_gc_has_beside_all_the_flash(scratch):
    """client-nvme-slc's model line said 'OP 14.8%': its 20 SLC-mode blocks counted as spare at
    their TLC size, while GC has the main area's 9.7 %. A drive without an SLC cache has one
    figure, the same for both. The quick copy's SLC cache is 7 whole blocks of its 147 (the
    drive's 20 of 456), a larger share, so GC has 9.4 %: the figure shown is the copy's,
    the full-size drive's beside it (it read 9.4 % alone, where `info` of the preset says 9.7 %).
    The report shows the model whole in the Vendor / model row and, where its line has room, in
    every page's header, HTML and PDF alike (cut at 48 characters, it read 'OP 9.4% for GC, …')."""
    p = iolab("info", "sim:client-nvme-slc", "sim:enterprise-sas", "sim:client-nvme-slc?slc_gb=0")
    assert p.returncode == 0, p.stdout + p.stderr
    said = " ".join(p.stdout.split())
    assert "model sim SSD client-nvme-slc, OP 9.7% for GC, 14.8% with the SLC cache " in said, said
    assert "model sim SSD enterprise-sas, OP 28.0% " in said, said
    # without its cache the client drive's spare is all GC's: one figure, as the flash says
    assert re.search(r"model sim SSD client-nvme-slc, OP 14\.\d% firmware", said), said
    run = only_run(scratch / "runs", "latency", "--quick", "-t", "sim:client-nvme-slc")
    model = "iolab sim SSD client-nvme-slc, OP 9.4% for GC (9.7% at full size), 14.8% with the SLC cache"
    report = page_text(run / "report" / f"{run.name}.html")
    assert f"Vendor / model {model} " in report, report[:3000]
    assert report.count(f"Device: {model} Tested by") == report.count("Tested by"), report[:3000]
    [pdf] = (run / "report").glob("*.pdf")
    pages = [" ".join(pg.extract_text().split()) for pg in PdfReader(pdf).pages]
    assert all(f"Device: {model} Tested by" in pg for pg in pages), pages[0][:600]
    assert f"Vendor / model {model}" in pages[0], pages[0]


@pytest.mark.parametrize(
    ("target", "says"),
    [
        # each was taken and changed nothing: the run's figures labelled with a drive that never ran
        ("sim:enterprise-sas?compress_floor=0.5", "compress_floor=0.5 acts only with compression=on"),
        ("sim:enterprise-sas?gc=fifo&gc_choices=8", "gc_choices=8 acts only with gc=greedy"),
        ("sim:client-nvme-slc?gc_pass_ms=100", "gc_pass_ms=100 acts only with gc_pass_period_ms above 0"),
        ("sim:client-nvme-slc?gc_switch_every=8", "gc_switch_every=8 acts only with gc_switch_us above 0"),
        ("sim:enterprise-sas?bg_gc=off&bg_burst_ms=10", "bg_burst_ms=10 acts only with bg_period_ms above 0"),
        ("sim:enterprise-sas?bg_gc=off&bg_reserve_pct=10", "bg_reserve_pct=10 acts only with bg_gc=on"),
        ("sim:enterprise-sas?bg_gc=off&idle_ms=1", "idle_ms=1 acts only with bg_gc=on or an SLC cache"),
        ("sim:enterprise-sas?slc_prog_us=150", "slc_prog_us=150 acts only with an SLC cache (slc_gb above 0"),
        ("sim:enterprise-sas?buffer_kib=0&pace_pct=50", "pace_pct=50 acts only with a write buffer (buffer_kib"),
        ("sim:enterprise-sas?buffer_kib=0&plp=on", "plp=on acts only with a write buffer (buffer_kib"),
    ],
)
def test_a_parameter_set_where_it_cannot_act_is_refused_naming_what_makes_it_act(scratch, target, says):
    before = files_under(scratch)
    p = iolab("run", "latency", "--quick", "--no-report", "--runs-dir", str(scratch / "runs"), "-t", target)
    err = refused(p, scratch, before)  # exit 2, one paragraph, no run directory
    assert says in err and "change nothing" in err, err


def test_presets_keep_values_for_mechanisms_they_have_off_and_a_parameter_with_its_mechanism_is_taken():
    """client-nvme-slc keeps a GC pass length with no pass, entry-sata-compress no SLC cache's
    times: presets are not judged, only what the user sets (here with what makes it act, or at
    a value that asks for nothing)."""
    for target in (
        "sim:client-nvme-slc",
        "sim:client-nvme-slc?user_gb=1",
        "sim:entry-sata-compress",
        "sim:enterprise-sas?compression=on&compress_floor=0.5&op=0.4",
        "sim:client-nvme-slc?gc_pass_period_ms=1000&gc_pass_ms=100",
        "sim:enterprise-sas?gc=fifo&gc_choices=0",
        "sim:enterprise-sas?bg_gc=off&bg_period_ms=0",
    ):
        p = iolab("plan", "latency", "--quick", "-t", target)
        assert p.returncode == 0, target + p.stdout + p.stderr
