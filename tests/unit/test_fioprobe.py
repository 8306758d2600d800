"""The fio server probe's wait: one budget for all attempts, scaled with the machine's load or
set by IOLAB_FIO_PROBE_TIMEOUT, and attempts that fail early tried again (a fake fio here)."""

from __future__ import annotations

import pytest

from iolab.core.errors import EngineError, IolabError
from iolab.engines import fioprobe
from iolab.engines.fioprobe import PROBE_ENV, budget, probe, read_loadavg


def test_the_budget_scales_with_the_load_the_runnable_tasks_and_the_probes_at_once():
    idle = budget(1, environ={}, loadavg=(0.3, 0), ncores=2)
    assert idle.seconds == 20 and PROBE_ENV in idle.why
    # 32 runs starting at once: the 1-minute average still low, the runnable tasks many
    assert budget(1, environ={}, loadavg=(1.0, 32), ncores=2).seconds == 320
    assert budget(1, environ={}, loadavg=(10.0, 1), ncores=2).seconds == 100
    assert budget(16, environ={}, loadavg=(0.0, 0), ncores=2).seconds == 160
    assert budget(1, environ={}, loadavg=(500.0, 0), ncores=2).seconds == 600  # at most 10 minutes
    b = budget(4, environ={}, loadavg=(3.0, 5), ncores=2)
    assert b.seconds == 50 and "load 3.0, 5 tasks runnable, 4 probes at once, on 2 cores" in b.why


def test_the_user_sets_the_budget_and_a_bad_value_is_one_clear_error():
    b = budget(32, environ={PROBE_ENV: "7.5"}, loadavg=(100.0, 100), ncores=2)
    assert (b.seconds, b.why) == (7.5, f"set by {PROBE_ENV}")
    for bad in ("0", "-3", "soon", "inf", "nan"):
        with pytest.raises(IolabError, match=f"{PROBE_ENV}=.*greater than 0"):
            budget(1, environ={PROBE_ENV: bad})


def test_loadavg_is_read_without_the_reader(tmp_path):
    f = tmp_path / "loadavg"
    f.write_text("6.43 4.55 4.13 33/812 12345\n")
    assert read_loadavg(str(f)) == (6.43, 32)
    assert read_loadavg(str(tmp_path / "none")) is None


def fake_fio(tmp_path, fail_first: int, hang: bool = False):
    """A `fio` that says nothing and fails its first `fail_first` calls (or hangs), then reports a version."""
    count = tmp_path / "calls"
    exe = tmp_path / "fio"
    exe.write_text(
        "#!/bin/sh\n"
        f"n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}\n"
        + ("exec sleep 60\n" if hang else "")
        + f'if [ $n -le {fail_first} ]; then echo "fio: connect: Connection reset by peer" >&2; exit 1; fi\n'
        'echo "<h> probe: (groupid=0, jobs=1): err= 0: pid=1: fio=fio-3.33, flags=1"\n'
    )
    exe.chmod(0o755)
    return str(exe), count


def test_a_server_that_fails_its_first_probes_is_asked_again_with_growing_pauses(tmp_path):
    fio, count = fake_fio(tmp_path, fail_first=3)
    pauses: list[float] = []
    p = probe(("10.0.0.2", 8765), fio, fioprobe.Budget(60, "test"), sleep=pauses.append)
    assert (p.version, p.attempts, count.read_text().strip()) == ("fio-3.33", 4, "4")
    assert pauses == [0.5, 1.0, 2.0]


def test_a_server_that_never_answers_is_refused_naming_the_budget_and_the_variable(tmp_path):
    fio, _ = fake_fio(tmp_path, fail_first=10**6)
    with pytest.raises(EngineError) as e:
        probe(("10.0.0.2", 8765), fio, fioprobe.Budget(2, "because"), sleep=lambda s: None)
    said = str(e.value)
    assert "fio server 10.0.0.2:8765 did not report its version" in said and "Connection reset by peer" in said
    assert "the budget 2 s: because" in said and f"{PROBE_ENV}=SECONDS" in said


def test_a_probe_still_running_when_the_budget_ends_is_stopped_and_not_repeated(tmp_path):
    fio, count = fake_fio(tmp_path, fail_first=0, hang=True)
    with pytest.raises(EngineError, match=r"did not finish a 4 KiB probe job within 0.5 s \(1 attempt"):
        probe(("10.0.0.2", 8765), fio, fioprobe.Budget(0.5, "test"), sleep=lambda s: None)
    assert count.read_text().strip() == "1"


def test_the_probe_learns_the_clock_the_server_chose_itself_from_its_time_debug_output(tmp_path):
    """fio's time debug output goes to the server when it follows --client; the server's lines
    start with <its host name>. Only a server's own choice of its CPU clock (3) counts."""
    args = tmp_path / "args"

    def fio_saying(*lines: str) -> str:
        exe = tmp_path / "fio"
        exe.write_text(
            f'#!/bin/sh\necho "$@" > {args}\n'
            'echo "hostname=h, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1"\n'
            + "".join(f"echo '{ln}'\n" for ln in lines)
        )
        exe.chmod(0o755)
        return str(exe)

    b = fioprobe.Budget(30, "test")
    chose = fio_saying("time     77 gettime: clocksource=2", "<h> time     88 gettime: clocksource=3")
    assert probe(("10.0.0.2", 8765), chose, b).clock == "cpu"
    sent = args.read_text().split()
    assert sent.index("--debug=time") > next(i for i, a in enumerate(sent) if a.startswith("--client="))
    assert probe(("10.0.0.2", 8765), fio_saying("<h> time     88 gettime: clocksource=2"), b).clock is None
    assert probe(("10.0.0.2", 8765), fio_saying("time     77 gettime: clocksource=3"), b).clock is None
    assert probe(("10.0.0.2", 8765), fio_saying(), b).clock is None
