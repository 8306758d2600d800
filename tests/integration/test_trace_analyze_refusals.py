"""`iolab trace analyze` refusals as a user meets them: nothing is printed as an analysis, and
nothing is left in the output directory, when the command is refused."""

from __future__ import annotations

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
