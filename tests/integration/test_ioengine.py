"""`--ioengine io_uring|libaio|auto`: the fio engine of a run's rounds, chosen on the command
line, written into every job file and recorded in the manifest."""

from __future__ import annotations

import json

import pytest

from iolab.core.ioengines import AUTO_IOENGINE
from iolab.engines.fio_job import async_ioengine

from .conftest import iolab

pytestmark = pytest.mark.integration


def engines_in(job_files: str) -> set[str]:
    return {line.split("=", 1)[1] for line in job_files.splitlines() if line.startswith("ioengine=")}


@pytest.mark.parametrize("choice", ["libaio", "io_uring"])
def test_fio_job_writes_the_ioengine_asked_for(scratch, choice):
    if choice == "io_uring" and async_ioengine("fio") != "io_uring":
        pytest.skip("io_uring does not work on this host")
    p = iolab("fio-job", "iops", "-t", f"file:{scratch}/x.img?size=16MiB", "--quick", "--ioengine", choice)
    assert p.returncode == 0, p.stderr
    assert engines_in(p.stdout) == {choice}


def test_auto_on_a_file_follows_the_rule(scratch):
    # the rule, measured with bench/overhead.py: libaio on files (docs/real-drives.md)
    assert AUTO_IOENGINE["file"] == "libaio"
    for given in (("--ioengine", "auto"), ()):  # auto is also what a run gets without the option
        p = iolab("fio-job", "iops", "-t", f"file:{scratch}/x.img?size=16MiB", "--quick", *given)
        assert p.returncode == 0, p.stderr
        assert engines_in(p.stdout) == {"libaio"}


@pytest.mark.parametrize(
    "command",
    [
        ("fio-job", "iops", "-t", "file:{d}/x.img?size=16MiB"),
        ("run", "iops", "-t", "file:{d}/x.img?size=16MiB", "--runs-dir", "{d}"),
        ("resume", "r", "--runs-dir", "{d}"),
    ],
)
def test_an_unknown_ioengine_is_one_paragraph_and_exit_2(scratch, command):
    p = iolab(*(a.format(d=scratch) for a in command), "--ioengine", "bogus")
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert "--ioengine 'bogus'" in err and "io_uring, libaio or auto" in err
    assert "Traceback" not in err and "\n\n" not in err
    assert not (scratch / "x.img").exists() and not any(scratch.iterdir())


def test_the_simulator_refuses_an_ioengine(scratch):
    p = iolab("run", "iops", "-t", "sim:enterprise-sas", "--quick", "--ioengine", "libaio", "--runs-dir", str(scratch))
    assert p.returncode == 2 and "runs on the simulator" in p.stderr and "Traceback" not in p.stderr
    assert not any(scratch.iterdir())


def test_a_run_with_libaio_completes_and_its_manifest_records_it(scratch):
    runs = scratch / "runs"
    p = iolab(
        "run",
        "throughput",
        "-t",
        f"file:{scratch}/d.img?size=16MiB",
        "--quick",
        "--cell-time",
        "200ms",
        "--max-rounds",
        "1",
        "--no-report",
        "--ioengine",
        "libaio",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr + p.stdout
    assert "fio ioengine: libaio" in p.stdout
    [run] = [d for d in runs.iterdir() if (d / "manifest.json").exists()]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["state"] == "complete" and manifest["versions"]["ioengine"] == "libaio"
    jobs = "\n".join(f.read_text() for f in (run / "raw").rglob("*.fio"))
    assert engines_in(jobs) == {"libaio"}


def test_resume_goes_on_with_the_runs_own_ioengine_unless_told(scratch):
    if async_ioengine("fio") != "io_uring":
        pytest.skip("io_uring does not work on this host")
    from .test_resume import run_and_kill

    runs = scratch / "runs"
    spec = f"file:{scratch}/target.img?size=64MiB"
    # 3 rounds: the resume still measures what is left of round 2 and a whole round 3 (the engine
    # of its jobs is what is read, not a steady-state window, which 5 rounds filled at 18 cells more)
    base = ("latency", "--cell-time", "200ms", "--max-rounds", "3", "-t", spec)
    # io_uring is not what auto takes: a resume that fell back to auto would write libaio jobs
    run = run_and_kill(scratch, runs, "main-r02-c02", (*base, "--ioengine", "io_uring"))
    res = iolab("resume", str(run), "--no-report", timeout=900)
    assert res.returncode == 0, res.stderr + res.stdout
    assert engines_in("\n".join(f.read_text() for f in (run / "raw").rglob("*.fio"))) == {"io_uring"}
    assert json.loads((run / "manifest.json").read_text())["versions"]["ioengine"] == "io_uring"


def test_resume_with_another_ioengine_says_so_and_records_it(scratch):
    if async_ioengine("fio") != "io_uring":
        pytest.skip("io_uring does not work on this host")
    from .test_resume import run_and_kill

    runs = scratch / "runs"
    run = run_and_kill(scratch, runs, "main-r02-c02", rounds=3)  # auto: libaio on a file; no window read
    res = iolab("resume", str(run), "--no-report", "--ioengine", "io_uring", timeout=900)
    assert res.returncode == 0, res.stderr + res.stdout
    assert "fio ioengine io_uring from here on (the rounds before used libaio)" in res.stdout, res.stdout[:600]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["versions"]["ioengine"] == "io_uring"
    assert any("the rounds before used libaio" in n for n in manifest["notes"])
    assert engines_in("\n".join(f.read_text() for f in (run / "raw").rglob("*.fio"))) == {"libaio", "io_uring"}
