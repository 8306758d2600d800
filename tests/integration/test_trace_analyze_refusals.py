"""`iolab trace analyze` refusals as a user meets them: nothing is printed as an analysis, and
nothing is left in the output directory, when the command is refused."""

from __future__ import annotations

import json
import re
import tomllib

import pytest

from .conftest import fill, iolab, mounted_tmpfs

pytestmark = pytest.mark.integration


def spc_trace(path) -> None:
    """An SPC trace (no response times): 600 IOs over 3 s, RND 4 KiB reads and writes on ASU 0."""
    lines = [f"0,{(i * 7919) % 100000},4096,{'r' if i % 3 else 'w'},{i * 0.005:.6f}" for i in range(600)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def no_response_times(tmp_path):
    spc_trace(tmp_path / "t.spc")
    p = iolab("trace", "import", str(tmp_path / "t.spc"), "--format", "spc", "--out", str(tmp_path / "t.parquet"))
    assert p.returncode == 0, p.stderr + p.stdout
    return tmp_path / "t.parquet"


def test_a_trace_without_response_times_and_no_qd_is_refused_before_the_analysis(no_response_times, tmp_path):
    """The stream tables were printed, then the refusal (exit 2), and analysis.json was left in
    the output directory without composite.toml: a later `run rwsw -w DIR` failed on it."""
    out = tmp_path / "wl"
    p = iolab("trace", "analyze", str(no_response_times), "--step", "1s", "--out", str(out))
    assert p.returncode == 2, p.stdout + p.stderr
    said = " ".join(p.stderr.split())
    assert said.startswith("iolab: ") and "no response times" in said and "--qd N" in said, said
    assert "Traceback" not in p.stderr and "\n\n" not in p.stderr.strip()
    assert "per step" not in p.stdout and "dominant streams" not in p.stdout, p.stdout
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())
    p = iolab("trace", "analyze", str(no_response_times), "--step", "1s", "--qd", "4", "--out", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    assert (out / "analysis.json").is_file() and (out / "composite.toml").is_file()


def test_a_refusal_after_the_analysis_leaves_nothing_written(no_response_times, tmp_path):
    """No stream reaches a 99 % threshold: known only once the trace is analysed, and refused
    then, with analysis.json written before it and left behind."""
    out = tmp_path / "wl"
    p = iolab(
        "trace", "analyze", str(no_response_times), "--step", "1s", "--qd", "4", "--threshold", "99%",
        "--out", str(out),
    )  # fmt: skip
    assert p.returncode == 2, p.stdout + p.stderr
    assert "no stream reaches the dominant threshold" in " ".join(p.stderr.split()), p.stderr
    assert "Traceback" not in p.stderr
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())


def msr_table(tmp_path, name: str, lines: list[tuple[int, int]]):
    """An MSR trace of 4 KiB writes at these (issue time in ns, offset) pairs, 5 µs each,
    imported by `iolab trace import`: the table's path."""
    t0 = 128166372000000000  # FILETIME, 100 ns ticks
    src, table = tmp_path / f"{name}.csv", tmp_path / f"{name}.parquet"
    src.write_text("".join(f"{t0 + t // 100},hm,0,Write,{off},4096,50\n" for t, off in lines))
    p = iolab("trace", "import", str(src), "--out", str(table))
    assert p.returncode == 0, p.stderr + p.stdout
    return table


def test_an_analysis_the_disk_has_no_room_for_prints_no_tables(no_response_times):
    """The stream tables were printed on stdout, then 'disk full ... no part of it is kept' and
    exit 5: a script reading stdout took them for a saved analysis. Now they are printed once
    written, and a disk that fills leaves stdout empty."""
    args = ("trace", "analyze", str(no_response_times), "--step", "1s", "--qd", "4", "--out")
    with mounted_tmpfs("256k") as fs:
        filler = fill(fs)
        p = iolab(*args, str(fs / "wl"))
        assert p.returncode == 5, p.stdout + p.stderr
        said = " ".join(p.stderr.split())
        assert said.startswith("iolab: disk full") and "no part of it is kept" in said, said
        assert p.stdout == "" and "Traceback" not in p.stderr, p.stdout
        assert not (fs / "wl").exists() or not any((fs / "wl").iterdir())
        filler.unlink()
        p = iolab(*args, str(fs / "wl"))
        assert p.returncode == 0, p.stdout + p.stderr
        assert "dominant streams" in p.stdout and "wrote " in p.stdout and (fs / "wl" / "analysis.json").is_file()


def test_a_short_last_step_is_not_the_traces_maximum(tmp_path):
    """4,001 writes at 400 IOPS over 10 s and one more 1 µs later: the last 10 s step was 6 µs
    long (2 IOs), printed as 'max 333,333' IOPS and averaged in (166,867), and replay.toml ran
    it as a 6 µs step. It is now marked partial and left out of the rates and the replay."""
    ios = [(i * 2_500_000, (i * 7919 % 100000) * 4096) for i in range(4001)]
    table = msr_table(tmp_path, "b", [*ios, (4000 * 2_500_000 + 1000, 3 * 4096)])
    out = tmp_path / "wb"
    p = iolab("trace", "analyze", str(table), "--step", "10s", "--out", str(out))
    assert p.returncode == 0, p.stderr + p.stdout
    said = " ".join(p.stdout.split())
    assert "per step IOPS: average over steps 400, max 400" in said, said
    assert "step 1 is partial (6 µs of a 10 s step" in said and "left out of the per-step average" in said, said
    assert "1 (partial)" in said and "replay: 1 step, 10 s (partial last step 1 left out" in said, said
    a = json.loads((out / "analysis.json").read_text())
    assert [s["partial"] for s in a["steps"]] == [False, True]
    assert any("step 1 is partial" in n for n in a["notes"]), a["notes"]
    replay = tomllib.loads((out / "replay.toml").read_text())
    assert [s["index"] for s in replay["step"]] == [0] and replay["replay"]["short"] == [1]
    # the plots draw what the summary counts: the 333,333 IOPS step no longer sets their scale
    svg = (out / "plots" / "stream_map.svg").read_text()
    ticks = [float(t.replace(",", "")) for t in re.findall(r">([0-9][0-9,.]*)</text>", svg)]
    assert "(partial last step 1, 6 µs, left out)" in svg and max(ticks) == 400, ticks


def test_a_trace_shorter_than_a_step_is_not_called_a_maximum(tmp_path):
    """One IO of 10 µs was 'per step IOPS: average over steps 100,000, max 100,000' (here 5 µs)."""
    table = msr_table(tmp_path, "one", [(0, 0)])
    # its replay, the trace's true length, is shorter than a run's shortest step (1 ms): refused,
    # naming the stretch that fits
    p = iolab("trace", "analyze", str(table), "--step", "10s", "--out", str(tmp_path / "w"))
    assert p.returncode == 2 and "give --compress from" in " ".join(p.stderr.split()), p.stderr + p.stdout
    p = iolab("trace", "analyze", str(table), "--step", "10s", "--compress", "0.005", "--out", str(tmp_path / "w"))
    assert p.returncode == 0, p.stderr + p.stdout
    said = " ".join(p.stdout.split())
    assert "per step IOPS: 200,000 (the only step, 5 µs)" in said and "max 200,000" not in said, said
    assert "the only step is partial (5 µs of a 10 s step" in said, said


def test_steps_shorter_than_a_second_keep_their_start_and_length(tmp_path):
    """--step 100ms printed every step's start as whole seconds (0, 0, 0, 0, 0, 1, 1, ...), the
    trace's 4 s as '(4.0 s)' and one IO's 5 µs as '(0.0 s)', its 1 ms replay as '0.0 s', and
    '1 IOs'; the replay line sent the reader to 'the note above', printed below it."""
    table = msr_table(tmp_path, "fine", [(i * 10_000_000, i * 4096) for i in range(401)])
    p = iolab("trace", "analyze", str(table), "--step", "100ms", "--out", str(tmp_path / "w"))
    assert p.returncode == 0, p.stderr + p.stdout
    lines = p.stdout.splitlines()
    [replay] = [i for i, line in enumerate(lines) if line.startswith("replay: ")]
    [note] = [i for i, line in enumerate(lines) if line.startswith("note: step 40 is partial")]
    assert "see the note below" in lines[replay] and replay < note, p.stdout
    starts = {m[0]: m[1] for m in re.findall(r"│\s+(\d+) │\s+([\d.,]+) │", p.stdout)}
    assert starts["0"] == "0" and starts["3"] == "0.3" and starts["39"] == "3.9", starts
    assert "41 steps of 0.1 s (4 s)" in " ".join(p.stdout.split()), p.stdout[:400]
    one = tmp_path / "one.csv"
    one.write_text("128166372000000000,hm,0,Read,0,4096,50\n")
    p = iolab("trace", "import", str(one), "--out", str(tmp_path / "one.parquet"))
    assert p.returncode == 0 and "1 IO from msr" in p.stdout, p.stdout + p.stderr
    args = ("trace", "analyze", str(tmp_path / "one.parquet"), "--compress", "0.005", "--out", str(tmp_path / "w1"))
    p = iolab(*args)
    said = " ".join(p.stdout.split())
    assert p.returncode == 0 and "replay: 1 step, 1 ms" in said and "1 step of 300 s (5 µs)" in said, said


def test_a_long_trace_in_tiny_steps_is_refused_before_allocating(tmp_path):
    """Two reads 30 days apart, --step 1ms: 2.6 billion steps. The walk asked for 41 GB and the
    process aborted (SIGABRT, exit 134, a Rust backtrace); 10 minutes in 1 ms steps took 54 s,
    2.1 GB and wrote a 165 MB analysis.json. Now: refused at once, with the step that fits."""
    day_ns = 86_400 * 10**9
    table = msr_table(tmp_path, "far", [(0, 0), (30 * day_ns, 4096)])
    out = tmp_path / "w"
    p = iolab("trace", "analyze", str(table), "--step", "1ms", "--out", str(out))
    assert p.returncode == 2, p.stdout + p.stderr
    said = " ".join(p.stderr.split())
    assert said.startswith("iolab: ") and "Traceback" not in p.stderr and "\n\n" not in p.stderr.strip(), said
    assert "2,592,000,001 steps, more than the limit of 100,000 (--max-steps" in said, said
    assert "Give --step 26s or longer" in said and "Nothing was analysed or written" in said, said
    assert not out.exists() or not any(out.iterdir())
    # the step it names does fit; a limit below 1 is refused as such
    p = iolab("trace", "analyze", str(table), "--step", "26s", "--out", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "99,693 steps of 26 s" in " ".join(p.stdout.split()), p.stdout[:400]
    p = iolab("trace", "analyze", str(table), "--step", "25s", "--max-steps", "0", "--out", str(out))
    assert p.returncode == 2 and "--max-steps 0: give a whole number from 1" in " ".join(p.stderr.split()), p.stderr


@pytest.mark.parametrize("factor", ["1e9", "0.00001"])
def test_a_compression_that_takes_a_step_out_of_a_runs_limits_is_refused_naming_the_factors_allowed(
    no_response_times, tmp_path, factor
):
    """--compress 1e9 wrote a replay of 1e-09 s steps and recommended it: `iolab plan`/`run`
    refused it only then (a step must last 1 ms to 24 h)."""
    out = tmp_path / "wl"
    p = iolab(
        "trace", "analyze", str(no_response_times), "--step", "1s", "--qd", "4", "--compress", factor, "-o", str(out)
    )
    assert p.returncode == 2, p.stdout + p.stderr
    said = " ".join(p.stderr.split())
    assert said.startswith("iolab: --compress ") and "must last 1 ms to 24 h" in said, said
    assert "Traceback" not in p.stderr and "\n\n" not in p.stderr.strip()
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())
    # the factors it names are accepted, and their replay is one a run takes
    least, most = re.search(r"give --compress from (\S+) to (\S+)\. Nothing", said).groups()  # type: ignore[union-attr]
    for f in (least, most):
        p = iolab(
            "trace", "analyze", str(no_response_times), "--step", "1s", "--qd", "4", "--compress", f, "-o", str(out / f)
        )
        assert p.returncode == 0, p.stdout + p.stderr
        planned = iolab("plan", "replay", "-w", str(out / f), "--quick", "-t", "sim:enterprise-sas?user_gb=0.25")
        assert planned.returncode == 0, planned.stdout + planned.stderr


@pytest.mark.parametrize("second", ["t.spc", "./t.spc", "link.spc", "copy.spc"])
def test_trace_import_refuses_one_file_given_twice(tmp_path, second):
    """`trace import a.csv a.csv` (or a link, or a byte-identical copy) imported every IO twice:
    IOPS and outstanding IO doubled in every figure of the analysis, exit 0."""
    spc_trace(tmp_path / "t.spc")
    (tmp_path / "link.spc").symlink_to("t.spc")
    (tmp_path / "copy.spc").write_bytes((tmp_path / "t.spc").read_bytes())
    (tmp_path / "empty1.spc").write_text("")
    (tmp_path / "empty2.spc").write_text("")
    out = tmp_path / "dup.parquet"
    p = iolab("trace", "import", f"{tmp_path}/t.spc", f"{tmp_path}/{second}", "-f", "spc", "-o", str(out))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stdout + p.stderr
    named = tmp_path / second  # as Path spells it (./ dropped)
    assert said.startswith(f"iolab: {named}: the same ") and "counted twice" in said, said
    assert not out.exists()
    # empty files (an idle CPU's) are no copies of one another
    files = [str(tmp_path / n) for n in ("t.spc", "empty1.spc", "empty2.spc")]
    p = iolab("trace", "import", *files, "-f", "spc", "-o", str(out))
    assert p.returncode == 0 and "600 IOs" in p.stdout, p.stdout + p.stderr


def test_a_device_or_process_the_trace_has_not_is_refused_in_the_users_words(tmp_path):
    """The refusal quoted the query (`no reads or writes matching device IN ('9,9')`) and left
    the user to guess the names the trace holds; it now names the options and lists them."""
    (tmp_path / "t.txt").write_text(
        "  8,16   0  1  0.000000000  100  D   W 0 + 8 [fioA]\n"
        "  8,16   0  2  0.000100000  200  D   R 1000 + 16 [dbB]\n"
        "  8,16   0  3  0.000300000    0  C   W 0 + 8 [0]\n"
        "  8,16   0  4  0.000400000    0  C   R 1000 + 16 [0]\n"
        "  8,16   0  5  0.001000000  100  D   W 8 + 8 [fioA]\n"
        "  8,16   0  6  0.001100000    0  C   W 8 + 8 [0]\n"
    )
    table = tmp_path / "t.parquet"
    p = iolab("trace", "import", str(tmp_path / "t.txt"), "--format", "blkparse", "--out", str(table))
    assert p.returncode == 0, p.stderr
    out = tmp_path / "wl"
    p = iolab(
        "trace", "analyze", str(table), "--out", str(out), "--device", "9,9", "--device", "8,1", "--process", "db"
    )
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stderr and " IN (" not in said, said
    assert said == (
        f"iolab: {table}: no reads or writes match --device 9,9 or 8,1 and --process db; nothing to analyse. "
        "The trace's devices: 8,16 (3 IOs). The trace's processes: fioA (2 IOs), dbB (1 IO)."
    ), said
    assert not out.exists()


@pytest.mark.parametrize("command", ["analyze", "export"])
def test_a_trace_in_its_public_format_given_for_the_io_table_says_to_import_it(tmp_path, command):
    """`iolab trace analyze hm_0.csv` (the trace itself, not its imported table) said only "not a
    readable Parquet file (Invalid Input Error: No magic bytes found ...)", a database's words
    that do not say what the command reads or what to do."""
    spc_trace(tmp_path / "t.spc")
    extra = ["--format", "fio3"] if command == "export" else []
    p = iolab("trace", command, str(tmp_path / "t.spc"), *extra, "--out", str(tmp_path / "out"))
    assert p.returncode == 2, p.stdout + p.stderr
    said = " ".join(p.stderr.split())
    assert said.startswith("iolab: ") and "Traceback" not in said, said
    assert "not a readable Parquet file" in said and "iolab trace import FILE --out TABLE.parquet" in said, said
    assert not (tmp_path / "out").exists()
