"""`iolab trace analyze` refusals as a user meets them: nothing is printed as an analysis, and
nothing is left in the output directory, when the command is refused."""

from __future__ import annotations

import re

import pytest

from .conftest import iolab

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
