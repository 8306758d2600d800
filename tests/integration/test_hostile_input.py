"""Hostile input through the installed `iolab` command: a value that could start a new line or
section in a fio job file, numbers too large for the engines, binary or corrupt input files,
empty values, and a multi-target run whose child is refused. Each ends with a non-zero exit
and a one-paragraph message, no traceback, nothing written."""

from __future__ import annotations

import gzip
import json
import os
import shlex
import shutil
from pathlib import Path

import pytest

from iolab.core.errors import IolabError
from iolab.core.workload import Workload
from iolab.engines.fio_job import build_job
from iolab.targets import Target

from .conftest import iolab, saved_sim_state

INJECT = "victim.dat\n[global]\nexec_prerun=touch PWNED"


def files_under(d: Path) -> set[Path]:
    return set(d.rglob("*"))


def refused(p, d: Path, before: set[Path], code: int = 2) -> str:
    text = p.stderr + p.stdout
    assert p.returncode == code, text
    assert "Traceback" not in text, text
    assert "\n\n" not in p.stderr.strip(), f"more than one paragraph:\n{p.stderr}"
    assert files_under(d) == before, f"files appeared: {sorted(files_under(d) - before)}"
    return " ".join(p.stderr.split())


def test_a_newline_in_a_target_never_reaches_fio(scratch):
    # fio runs in the round's raw directory: PWNED would appear there, in a target file
    # named after the whole spec that the safety checks examined.
    (scratch / "x").mkdir()
    before = files_under(scratch)
    p = iolab(
        "run",
        "latency",
        "--quick",
        "--cell-time",
        "1s",
        "--max-rounds",
        "1",
        "--no-report",
        "--runs-dir",
        str(scratch / "runs"),
        "-t",
        f"file:{scratch}/x/{INJECT}?size=4MiB",
        timeout=300,
    )
    err = refused(p, scratch, before)
    assert "control character" in err and not list(scratch.rglob("PWNED"))


@pytest.mark.parametrize(
    "value",
    [
        f"file:{{d}}/{INJECT}?size=4MiB",
        "file:{d}/a\rb?size=4MiB",
        "file:{d}/a\x1bb?size=4MiB",
        "file:{d}/a\tb?size=4MiB",
    ],
)
def test_fio_job_refuses_control_characters_in_a_target(scratch, value):
    before = files_under(scratch)
    p = iolab("fio-job", "iops", "--quick", "-t", value.format(d=scratch))
    assert "control character" in refused(p, scratch, before)


@pytest.mark.parametrize("name", ["a;b.dat", "a#b.dat", "a${HOME}b.dat", "trail.dat "])
def test_a_path_fio_would_read_as_another_is_refused(scratch, name):
    # fio reads ';' and '#' as a comment, expands '$' and drops trailing blanks: the job would
    # name a file the safety checks never examined.
    before = files_under(scratch)
    p = iolab("fio-job", "iops", "--quick", "-t", f"file:{scratch}/{name}?size=4MiB")
    err = refused(p, scratch, before)
    assert "fio" in err and "Nothing was run or written" in err


def test_a_path_with_a_space_is_written_as_it_is(scratch):
    p = iolab("fio-job", "iops", "--quick", "-t", f"file:{scratch}/a b.dat?size=4MiB")
    assert p.returncode == 0, p.stderr
    assert f"filename={scratch}/a b.dat\n" in p.stdout


@pytest.mark.parametrize("path", [f"/tmp/{INJECT}", "/tmp/a;b", "/tmp/a#b", "/tmp/$HOME", "/tmp/a\x85b", "/tmp/a "])
def test_the_job_writer_refuses_a_value_fio_would_read_differently(path):
    # Whatever checked the value before, no value can start a line or section of the job.
    w = Workload.mix("rnd", 100, 4096, duration_s=1)
    with pytest.raises(IolabError, match="fio job option filename"):
        build_job(Target("file", "file:/tmp/t", path, 1 << 30), w, "t", "libaio")


def test_the_job_writer_refuses_a_comment_that_would_end_its_line():
    w = Workload.mix("rnd", 100, 4096, duration_s=1)
    with pytest.raises(IolabError, match="fio job comment"):
        build_job(Target("file", "file:/tmp/x\n[global]", "/tmp/x", 1 << 30), w, "t", "libaio")


def test_a_control_character_in_a_hosts_file_field_is_refused(scratch):
    hosts = scratch / "hosts.toml"
    hosts.write_text('[[host]]\naddress = "127.0.0.1"\ntarget = "/tmp/x\\n[global]\\nexec_prerun=touch PWNED"\n')
    before = files_under(scratch)
    p = iolab("fio-job", "iops", "--quick", "-t", f"file:{scratch}/t.img?size=4MiB", "--hosts-file", str(hosts))
    err = refused(p, scratch, before)
    assert "line 1" in err and "'target'" in err and "control character" in err


BAD = [
    # item: a newline in --set, an argument or a host list
    ("run iops --set 'steps=1\n[global]'", "control character"),
    ("run iops --hosts '127.0.0.1\n[x]' -t file:{d}/h.img?size=16MiB", "control character"),
    ("run iops --tested-by 'me\x1b[31m'", "control character"),
    # numbers too large for the engines (an OverflowError, and a run directory, before)
    ("run iops -t file:{d}/t.img?size=99999999999999999999999TiB", "8 EiB or more"),
    ("run dirth --set threads=99999999999999999999", "from 1 to 4,096"),
    ("run dirth --set threads=5000", "thread counts from 1 to 4,096"),
    ("run latency-bound --set threads=99999999999999999999", "from 1 to 4,096"),
    ("run iops --max-rounds 99999999999999999999999", "from 1 to 1,000"),
    (
        "run iops --cell-time 9999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "999999999999999999999999999999999999999999",
        "too long",
    ),
    ("run iops --precondition-factor 1e300", "at most 1,000"),
    ("run wsat --wsat-capacity-multiple 1e300", "at most 1,000"),
    ("run iops --rwsw-min-writes inf", "from 0 to 1,000"),
    ("trace analyze {d}/table.parquet -o {d}/an --threads 0", "--threads 0"),
    ("trace analyze {d}/table.parquet -o {d}/an --compress nan", "--compress nan"),
    ("trace analyze {d}/table.parquet -o {d}/an --qd 99999999999999999999", "from 1 to 65,536"),
    ("sim calibrate {d}/runs --rounds 99999999999999999999", "from 1 to 1,000"),
    # empty values once meant something (the default, a local run, the current directory)
    ("run iops --cell-time ''", "--cell-time: the value is empty"),
    ("run iops --cell-time=", "--cell-time: the value is empty"),
    ("run iops --hosts '' -t file:{d}/h.img?size=16MiB", "--hosts: the value is empty"),
    ("run iops --paths '' -t file:{d}/h.img?size=16MiB", "--paths: the value is empty"),
    ("run iops --runs-dir ''", "--runs-dir: the value is empty"),
    ("run iops --capacity-limit ''", "--capacity-limit: the value is empty"),
    ("tests ''", "argument 2 (TEST): the value is empty"),  # the one command said to list everything for it
    ("tests -- ''", "argument 3 (TEST): the value is empty"),  # it was named after '--', as if an option
    # after an option that takes no value (or is none of the command's), it was named as its value:
    # "--json: the value is empty"
    ("tests --json ''", "argument 3 (TEST): the value is empty; give a value or leave it out."),
    ("show --json ''", "argument 3 (RUN): the value is empty"),
    ("run iops -q ''", "argument 4: the value is empty"),  # one argument more than run takes
    ("tests --json 'a\tb'", "argument 3 (TEST) 'a\\tb': holds a control character"),
    # the same path twice is one port, not two (the legs shared a name, and a file, before)
    (
        "run iops --paths file:{d}/h.img?size=16MiB,file:{d}/h.img?size=16MiB -t file:{d}/h.img?size=16MiB",
        "name the same path",
    ),
    (
        "run iops --paths file:{d}/h.img?size=16MiB,file:{d}/./h.img?size=16MiB -t file:{d}/h.img?size=16MiB",
        "name the same path",
    ),
    # a binary hosts file (UnicodeDecodeError before)
    ("run iops --hosts-file {d}/binary -t file:{d}/h.img?size=16MiB", "not a text file"),
    # a corrupt or cut gzip trace (zlib.error traceback, or "Aborted." with exit 1, before)
    ("trace import {d}/bad.csv.gz -o {d}/o.parquet", "cannot be read"),
    ("trace import {d}/cut.csv.gz -o {d}/o.parquet", "cannot be read"),
    ("trace import {d}/bad.csv.gz -f msr -o {d}/o.parquet", "cannot read"),
    ("trace import {d}/bad.csv.gz -f msr --skip-bad-lines -o {d}/o.parquet", "cannot read"),
    ("trace import {d}/cut.csv.gz -f msr --skip-bad-lines -o {d}/o.parquet", "cannot read"),
]


def hostile_files(d: Path) -> None:
    """The input files the BAD lines name."""
    (d / "binary").write_bytes(bytes(range(256)) * 4)
    good = gzip.compress(b"".join(b"%d,h,0,Read,%d,4096,10\n" % (i, i * 4096) for i in range(2000)))
    (d / "bad.csv.gz").write_bytes(good[:30] + bytes(range(200, 255)) + good[85:])
    (d / "cut.csv.gz").write_bytes(good[:25])
    (d / "table.parquet").write_bytes(TABLE)


def _table() -> bytes:
    """An IO table of a small MSR trace (imported once, by the installed command)."""
    import tempfile

    with tempfile.TemporaryDirectory() as t:
        src = Path(t) / "t.csv"
        src.write_text(
            "".join(
                f"{128166372000000000 + i * 20000},h,0,{'Read' if i % 3 else 'Write'},{i % 512 * 4096},4096,150\n"
                for i in range(500)
            )
        )
        p = iolab("trace", "import", str(src), "-f", "msr", "-o", f"{t}/t.parquet")
        assert p.returncode == 0, p.stderr
        return Path(f"{t}/t.parquet").read_bytes()


TABLE = b""


@pytest.mark.parametrize("line,says", BAD)
def test_a_hostile_command_line_is_refused_in_one_paragraph(scratch, line, says, monkeypatch):
    global TABLE
    TABLE = TABLE or _table()
    hostile_files(scratch)
    monkeypatch.chdir(scratch)  # --runs-dir '' once meant the current directory
    before = files_under(scratch)
    args = [a.format(d=scratch) for a in shlex.split(line)]
    if args[0] == "run":
        args += ["--quick", "--no-report"]
    p = iolab(*args, env={"IOLAB_RUNS": str(scratch / "runs")}, timeout=120)  # before: some ran
    assert says in refused(p, scratch, before)


def test_a_refused_target_among_several_gives_its_message_and_exit_code(scratch):
    foreign = scratch / "foreign.img"
    foreign.write_bytes(os.urandom(1 << 20))  # someone's data: no iolab mark
    runs = scratch / "runs"
    p = iolab(
        "run",
        "iops",
        "--quick",
        "--no-report",
        "--runs-dir",
        str(runs),
        "-t",
        f"file:{foreign}",
        "-t",
        f"file:{scratch}/none/x.img?size=4MiB",
        timeout=300,
    )
    text = p.stdout + p.stderr
    assert p.returncode == 3, text
    assert "Traceback" not in text, text
    assert f"[file:{foreign}] iolab: Refusing to write" in text
    assert "(exit 3)" in text and "(exit 2)" in text
    assert not runs.exists() or not any(runs.iterdir())


@pytest.mark.parametrize(
    "field,says",
    [
        # fio loaded the library into its (root) server and ran its constructor; exec ran a program
        ('ioengine = "external:{d}/lib.so"', "field 'ioengine'"),
        ('ioengine = "exec"', "field 'ioengine'"),
        ('ioengine = "auto"', "field 'ioengine'"),
        ('target = "{d}/a;b.img"', "field 'target'"),
        ('target = "{d}/${{HOME}}.img"', "field 'target'"),
        ('ssh = "-oProxyCommand=touch {d}/PWNED"', "field 'ssh'"),
    ],
)
def test_a_hosts_file_field_gets_the_command_lines_rules(scratch, field, says):
    hosts = scratch / "hosts.toml"
    hosts.write_text(f'[[host]]\naddress = "127.0.0.1"\n{field.format(d=scratch)}\n')
    before = files_under(scratch)
    p = iolab("fio-job", "iops", "--quick", "-t", f"file:{scratch}/t.img?size=4MiB", "--hosts-file", str(hosts))
    err = refused(p, scratch, before)
    assert says in err and "line 1" in err and "external:" not in p.stdout


def test_the_hosts_files_engines_are_the_command_lines():
    from iolab.core.ioengines import JOB_IOENGINES
    from iolab.engines.hostlist import HOST_IOENGINES

    assert HOST_IOENGINES == JOB_IOENGINES


def test_the_job_writer_names_no_engine_outside_its_list():
    w = Workload.mix("rnd", 100, 4096, duration_s=1)
    with pytest.raises(IolabError, match="ioengine 'external:/x.so'"):
        build_job(Target("file", "file:/tmp/x", "/tmp/x", 1 << 30), w, "t", "external:/x.so")


# -- special files: a FIFO or a device where iolab reads a file ------------------------------------


QUICK_SIM_RUN = ("run", "iops", "--quick", "--no-report", "-t", "sim:enterprise-sas?user_gb=1")  # a few seconds


@pytest.fixture(scope="module")
def a_run(tmp_path_factory) -> Path:
    """One finished quick run on a small simulated drive (a few seconds)."""
    runs = tmp_path_factory.mktemp("hostile-runs")
    p = iolab(*QUICK_SIM_RUN, "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    (run,) = runs.iterdir()
    return run


def fifo_run(a_run: Path, scratch: Path) -> tuple[Path, str]:
    """A copy of a_run whose manifest.json is a FIFO nobody writes: (runs directory, run id)."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "fifo-run")
    (runs / "fifo-run" / "manifest.json").unlink()
    os.mkfifo(runs / "fifo-run" / "manifest.json")
    return runs, "fifo-run"


FIFO_COMMANDS = [
    "show {run}",
    "export {run} -o {d}/ex",
    "report {run} --out {d}/rep",
    "resume {run}",
    "check {run} --baseline {good}",
    "check {good} --baseline {run}",
]


@pytest.mark.parametrize("line", FIFO_COMMANDS)
def test_a_fifo_manifest_is_refused_not_waited_on(a_run, scratch, line):
    runs, run = fifo_run(a_run, scratch)
    shutil.copytree(a_run, runs / "good")
    args = [a.format(run=run, d=scratch, good="good") for a in shlex.split(line)]
    before = files_under(scratch)
    p = iolab(*args, "--runs-dir", str(runs), timeout=60)  # before: blocked in open() for ever
    err = refused(p, scratch, before)
    assert "manifest.json: is a FIFO (named pipe), not a regular file" in err


def test_a_fifo_raw_output_is_called_so_not_waited_on(a_run, scratch):
    """A cell's raw engine output replaced by a FIFO hung `iolab show` and `iolab audit` in open()
    (the audit reads again an output no longer as its cell stored it)."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "fifo-raw")
    raw = sorted((runs / "fifo-raw" / "raw").glob("*-r01-*.json"))[0]
    raw.unlink()
    os.mkfifo(raw)
    p = iolab("audit", "fifo-raw", "--runs-dir", str(runs), timeout=60)
    assert p.returncode == 8 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert f"raw output raw/{raw.name} is unreadable (a FIFO (named pipe), not a regular file)" in p.stdout, p.stdout
    p = iolab("show", "fifo-raw", "--runs-dir", str(runs), timeout=60)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "audit: " in p.stdout and "1 failed" in p.stdout, p.stdout


def test_runs_and_history_list_a_fifo_manifests_run_as_broken(a_run, scratch):
    runs, run = fifo_run(a_run, scratch)
    p = iolab("runs", "--runs-dir", str(runs), "--json", timeout=60)
    assert p.returncode == 0, p.stderr
    (listed,) = json.loads(p.stdout)["listed"]
    assert listed["state"] == "broken" and "FIFO" in listed["problem"]
    p = iolab("history", "RND 4KiB R/W 100/0 IOPS", "--runs-dir", str(runs), timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr


def test_watch_answers_beside_a_fifo_manifest(a_run, scratch):
    import http.client
    import socket
    import subprocess
    import time

    from .conftest import IOLAB

    runs, run = fifo_run(a_run, scratch)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*IOLAB, "watch", str(runs), "--port", str(port)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "iolab watch did not start listening"
                time.sleep(0.2)
        for path in ("/api/runs", f"/api/runs/{run}"):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)  # before: no answer, ever
            c.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
            r = c.getresponse()
            body = r.read()
            c.close()
            assert r.status == 200 and b"FIFO" in body, (r.status, body[:300])
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("what", ["fifo", "/dev/zero", "big"])
def test_a_hosts_file_that_is_not_a_small_regular_file_is_refused(scratch, what):
    path = scratch / "hosts.toml"
    if what == "fifo":
        os.mkfifo(path)
    elif what == "big":  # a regular file over the cap, a sparse one
        with open(path, "wb") as f:
            f.truncate(64 << 20)
    else:
        path = Path(what)
    before = files_under(scratch)
    t = f"file:{scratch}/t.img?size=4MiB"
    p = iolab("fio-job", "iops", "--quick", "-t", t, "--hosts-file", str(path), timeout=60)
    err = refused(p, scratch, before)  # before: blocked for ever; /dev/zero grew to 1.14 GB in 8 s
    assert {"fifo": "is a FIFO", "/dev/zero": "is a character device", "big": "larger than 4 MiB"}[what] in err


def test_a_sim_state_fifo_is_refused_and_no_run_is_left(scratch):
    os.mkfifo(scratch / "state")
    before = files_under(scratch)
    t = f"sim:enterprise-sas?load={scratch}/state"
    p = iolab("run", "iops", "--no-report", "--runs-dir", str(scratch / "runs"), "-t", t, timeout=60)
    err = refused(p, scratch, before)  # before: blocked for ever, the run marked running
    assert "the saved state (load=)" in err and "is a FIFO" in err


@pytest.mark.parametrize("damage", ["flipped", "padded"])
def test_a_sim_state_changed_on_disk_is_refused_and_no_run_is_left(scratch, damage):
    """A saved state with 5 bytes flipped in its body loaded and ran (exit 0): the drive then
    measured a state no drive was ever in."""
    state = saved_sim_state(scratch)
    body = bytearray(state.read_bytes())
    if damage == "flipped":
        for i in range(5):
            body[len(body) // 2 + 97 * i] ^= 0x40
    else:
        body += b"\0" * 8
    state.write_bytes(bytes(body))
    before = files_under(scratch)
    t = f"sim:enterprise-sas?user_gb=0.25&load={state}"
    p = iolab("run", "latency", "--quick", "--no-report", "--runs-dir", str(scratch / "runs"), "-t", t, timeout=60)
    err = refused(p, scratch, before)
    assert "its contents do not match the checksum saved with them" in err, err


@pytest.mark.parametrize("kind", ["tolerances", "workload", "baseline", "trace", "trace-msr"])
def test_a_fifo_given_as_an_input_file_is_refused(a_run, scratch, kind):
    f = scratch / ("in.json" if kind == "baseline" else "in.toml")
    os.mkfifo(f)
    args = {
        "tolerances": ["check", str(a_run), "--baseline", str(a_run), "--tolerances", str(f)],
        "workload": ["run", "replay", "--quick", "--no-report", "-w", str(f), "--runs-dir", str(scratch / "r")],
        "baseline": ["check", str(a_run), "--baseline", str(f)],
        # blocked for ever in open() before (detecting the format), or read as an MSR trace
        "trace": ["trace", "import", str(f), "-o", str(scratch / "t.parquet")],
        "trace-msr": ["trace", "import", str(f), "-f", "msr", "-o", str(scratch / "t.parquet")],
    }[kind]
    before = files_under(scratch)
    p = iolab(*args, timeout=60)
    err = refused(p, scratch, before)
    assert str(f) in err


# -- Ctrl-C while the command starts --------------------------------------------------------------

READY = """import os
fd = os.environ.pop("IOLAB_TEST_READY_FD", None)
if fd:  # Python's own start-up is over: from here on, what runs is the iolab command
    os.write(int(fd), b"r")
    os.close(int(fd))
"""


@pytest.mark.parametrize("delay", [0.03, 0.06, 0.1, 0.15, 0.2, 0.3, 0.45, 0.6])
def test_ctrl_c_while_a_run_starts_exits_130_without_a_traceback(scratch, delay):
    # Ctrl-C in the first 0.6 s (the imports, then the run before its own handlers) gave a
    # KeyboardInterrupt traceback. The moment is counted from the end of Python's own start-up
    # (a sitecustomize on the child's path says when), whose Ctrl-C is Python's, not iolab's, and
    # the child's SIGINT is set to the default here, as a shell sets it, whatever ran this test.
    import signal
    import subprocess
    import time

    from .conftest import IOLAB

    (scratch / "site").mkdir()
    (scratch / "site" / "sitecustomize.py").write_text(READY)
    r, w = os.pipe()
    env = dict(os.environ, IOLAB_TEST_READY_FD=str(w))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(scratch / "site"), os.environ.get("PYTHONPATH")]))
    runs = scratch / "runs"
    proc = subprocess.Popen(
        [*IOLAB, *QUICK_SIM_RUN, "--runs-dir", str(runs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        pass_fds=(w,),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    os.close(w)
    try:
        assert os.read(r, 1) == b"r", "the child never finished Python's start-up"
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(r)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, err)  # -2 only if it had already ended
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    for m in runs.glob("*/manifest.json"):  # a run it had started is kept as interrupted, not running
        assert json.loads(m.read_text())["state"] != "running", m.read_text()


def test_ctrl_c_inside_a_trace_query_exits_130_without_a_traceback(scratch):
    """DuckDB takes a Ctrl-C that lands in one of its queries for itself: it raised
    RuntimeError('Query interrupted') in place of the KeyboardInterrupt, so `iolab trace import`
    stopped with a traceback and exit 1. The signal is sent once DuckDB's worker threads run (the
    import's parse is one query of about a second here); sent after it, it is an ordinary Ctrl-C."""
    import signal
    import subprocess
    import time

    from .conftest import IOLAB

    filetime_1970 = 116444736000000000
    trace, out = scratch / "big.csv", scratch / "big.parquet"
    trace.write_text(
        "".join(
            f"{filetime_1970 + i * 1000},web,0,{'Read' if i % 3 else 'Write'},{i * 4096},4096,500\n"
            for i in range(400_000)
        )
    )
    proc = subprocess.Popen(
        [*IOLAB, "trace", "import", str(trace), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while len(os.listdir(f"/proc/{proc.pid}/task")) < 4 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, err)  # -2 only if it had already ended
    assert "Traceback" not in err and "Query interrupted" not in err, err
    if proc.returncode == 130:
        assert err.strip() == "interrupted" and not out.exists(), err


# -- input that raised a Python exception: one paragraph and exit 2 instead ----------------------

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "line,says",
    [
        # a run whose manifest.json nests 100,000 deep (RecursionError in each, before)
        ("runs --runs-dir {runs}", None),
        ("history 'RND 4KiB R/W 100/0 IOPS' --runs-dir {runs}", "no complete runs"),
        ("show deep --runs-dir {runs}", "nested more than 64 levels"),
        ("export deep -o {d}/ex --runs-dir {runs}", "nested more than 64 levels"),
        ("report deep --out {d}/rep --runs-dir {runs}", "nested more than 64 levels"),
        ("resume deep --runs-dir {runs}", "nested more than 64 levels"),
        ("check {good} --baseline {d}/deep.json", "nested more than 64 levels"),
        ("check {good} --baseline {d}/nostate.json", "missing 'state'"),  # KeyError, before
        ("run replay --quick --no-report -w {d}/binary.toml --runs-dir {d}/r", "not an iolab workload file"),
        ("watch {runs} --port 99999", "--port 99999 is not a TCP port"),  # OverflowError, before
        ("watch {runs} --port -1", "--port -1 is not a TCP port"),
    ],
)
def test_input_that_raised_an_exception_gets_one_paragraph(a_run, scratch, line, says):
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "deep")
    (runs / "deep" / "manifest.json").write_text(DEEP)
    (scratch / "deep.json").write_text('{"schema": "iolab-outcome", "schema_version": 1, "runs": ' + DEEP + "}")
    p = iolab("show", str(a_run), "--json")
    doc = json.loads(p.stdout)
    del doc["runs"][0]["state"]
    (scratch / "nostate.json").write_text(json.dumps(doc))
    (scratch / "binary.toml").write_bytes(bytes(range(256)) * 64)
    before = files_under(scratch)
    p = iolab(*[a.format(d=scratch, runs=runs, good=a_run) for a in shlex.split(line)], timeout=120)
    if says is None:  # `runs` lists the run as broken and goes on
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        assert "nested more than 64 levels" in " ".join(p.stdout.split()), p.stdout
    else:
        assert says in refused(p, scratch, before)


def test_a_hard_link_planted_in_a_run_directory_is_not_written_through(scratch):
    # files inside a run directory are taken as the run's own products (older reports carry no
    # mark), so a hard link planted at an export's path had the export written into the file it
    # names: another name, outside the run, of someone's data
    runs = scratch / "runs"
    r = iolab(
        "run", "latency", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report",
        "-t", "sim:enterprise-sas?user_gb=0.25", "--runs-dir", str(runs),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    [run] = list(runs.iterdir())
    assert iolab("export", str(run)).returncode == 0
    first = sorted((run / "export").iterdir())[0]
    precious = scratch / "precious.txt"
    precious.write_text("someone's data\n")
    first.unlink()
    os.link(precious, first)
    before = files_under(scratch)
    said = refused(iolab("export", str(run)), scratch, before, code=3)
    assert "has 2 hard links" in said and first.name in said
    assert precious.read_text() == "someone's data\n"


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("started", 12345, "field 'started' is 12345, not a string"),
        ("target", "sim:foo", "field 'target' is \"sim:foo\", not an object"),
        ("run_id", ["x"], "field 'run_id' is [\"x\"], not a string"),
        ("plan", None, "field 'plan' is null, not an object"),
        ("state", "bogus", "field 'state' is \"bogus\", not one of running, complete, failed, interrupted"),
    ],
)
def test_a_manifest_field_of_the_wrong_type_names_the_field_and_breaks_only_its_run(a_run, scratch, field, value, says):
    """Before: `runs` exited 1 for the whole directory (a TypeError), show/report/audit/export with
    an AttributeError, and show/runs --json printed documents that failed their schema."""
    from ..schema_lite import errors

    schema = json.loads((Path(__file__).parents[2] / "docs/schema/outcome.schema.json").read_text())
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "good")
    shutil.copytree(a_run, runs / "bad")
    m = json.loads((runs / "bad" / "manifest.json").read_text())
    (runs / "bad" / "manifest.json").write_text(json.dumps({**m, field: value, "uid": "bad"}))
    stored = (runs / "bad" / "manifest.json").read_bytes()
    p = iolab("runs", "--runs-dir", str(runs), "--json", timeout=60)
    doc = json.loads(p.stdout)
    assert p.returncode == 0 and errors(doc, schema) == [], p.stderr
    listed = {r["path"]: r for r in doc["listed"]}
    assert listed[str(runs / "bad")]["state"] == "broken" and says in listed[str(runs / "bad")]["problem"]
    assert listed[str(runs / "good")]["state"] == "complete"
    assert iolab("runs", "--runs-dir", str(runs), timeout=60).returncode == 0
    for line in ("show bad", "show bad --json", "report bad --out {d}/rep", "audit bad", "export bad -o {d}/ex"):
        before = files_under(scratch)
        p = iolab(*[a.format(d=scratch) for a in shlex.split(line)], "--runs-dir", str(runs), timeout=60)
        assert says in refused(p, scratch, before), line
        if "--json" in line:
            assert errors(json.loads(p.stdout), schema) == []
    assert (runs / "bad" / "manifest.json").read_bytes() == stored  # nothing stored is changed


def test_text_in_a_numeric_results_column_is_refused_naming_it(a_run, scratch):
    import sqlite3

    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "bad")
    with sqlite3.connect(runs / "bad" / "results.db") as db:
        db.execute("UPDATE cells SET lat_mean_us='abc' WHERE round >= 1")
    before = files_under(scratch)
    p = iolab("show", "bad", "--runs-dir", str(runs), timeout=60)  # before: a TypeError in the figures
    assert "table cells" in (said := refused(p, scratch, before)) and "column 'lat_mean_us' holds 'abc'" in said


@pytest.mark.parametrize("value", ["", " "])
@pytest.mark.parametrize("line", ["run latency --quick --no-report -t sim:enterprise-sas?user_gb=0.25", "runs"])
def test_an_empty_iolab_runs_is_refused_like_an_empty_runs_dir(scratch, monkeypatch, line, value):
    # before: Path('') is the current directory: `run` stored its run wherever the job stood and
    # `runs` listed that directory ("no runs", exit 0)
    monkeypatch.chdir(scratch)
    before = files_under(scratch)
    p = iolab(*shlex.split(line), env={"IOLAB_RUNS": value}, timeout=120)
    assert "$IOLAB_RUNS is set but empty" in refused(p, scratch, before)


@pytest.mark.parametrize(
    "line",
    [
        "show *",
        "show **",
        "show ***/..",
        "report **",
        "resume *",
        "audit *",
        "export * -o {d}/ex",
        "check {good} --baseline *",
        "show {part}?",  # a glob's ? matched any character of an id
    ],
)
def test_a_run_reference_is_text_not_a_pattern(a_run, scratch, line):
    """Before: the reference went into Path.glob, so `*` (what a shell passes on when `iolab
    report *` matches no file) ended every run-finding command in a traceback (ValueError: '**'
    can only be an entire path component), and `?` matched any character."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / a_run.name)
    part = a_run.name[:7]  # 2026120 of 20261201-...: `2026120?` globbed to the run
    before = files_under(scratch)
    args = [a.format(d=scratch, good=a_run, part=part) for a in shlex.split(line)]
    said = refused(iolab(*args, env={"IOLAB_RUNS": str(runs)}, timeout=120), scratch, before)
    assert "no such run directory" in said and "not a pattern" in said, said


def test_a_part_of_a_run_id_names_the_one_run_that_contains_it(a_run, scratch):
    # documented in the README ("A command that takes a RUN ..."): a part of an id, as text
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "20260101-000000-latency-one")
    shutil.copytree(a_run, runs / "20260101-000000-wsat-two")
    env = {"IOLAB_RUNS": str(runs)}
    p = iolab("show", "wsat", "--json", env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["runs"][0]["path"] == str(runs / "20260101-000000-wsat-two")
    before = files_under(scratch)
    said = refused(iolab("show", "000000", env=env, timeout=120), scratch, before)
    assert "is ambiguous" in said and "latency-one" in said and "wsat-two" in said
