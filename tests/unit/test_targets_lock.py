"""Claims (one run per target) and the target-kind registry, on real files and lock files in
tmp (no root, no fio)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from iolab import suites, targets
from iolab.api import registry, scaleout
from iolab.core.errors import EngineError, IolabError, RefusedError
from iolab.engines.fio import FioEngine
from iolab.run import resume
from iolab.run.runner import Runner
from iolab.run.runstart import RunOptions, start
from iolab.targets import DeviceFacts, Kind, PurgeOutcome, Target, host, parse_target
from iolab.targets.lock import lock_name


@pytest.fixture(autouse=True)
def lock_dir(tmp_path, monkeypatch):
    d = tmp_path / "locks"
    monkeypatch.setenv("IOLAB_LOCK_DIR", str(d))
    return d


def _file(tmp_path, name="t.img"):
    return parse_target(f"file:{tmp_path}/{name}?size=1MiB")


def _lock_files(lock_dir):
    return sorted(lock_dir.glob("*.lock"))


# --- claims within one process ----------------------------------------------------------------


def test_second_claim_is_refused_naming_the_first_run_then_free_after_release(tmp_path, lock_dir):
    t = _file(tmp_path)
    first = targets.claim(t)
    first.note_run("20260101-000000-iops-first", tmp_path / "runs" / "first")
    with pytest.raises(RefusedError) as e:
        targets.claim(parse_target(t.spec))  # the same target, read again
    msg = str(e.value)
    assert "iolab run 20260101-000000-iops-first" in msg and f"pid {os.getpid()}" in msg
    assert str(t.path) in msg and "\n" not in msg
    [lock] = _lock_files(lock_dir)
    assert json.loads(lock.read_text())["run_id"] == "20260101-000000-iops-first"
    targets.release(t)
    assert _lock_files(lock_dir) == []  # the run's end removes its lock file
    targets.claim(t).release()


def test_another_path_to_the_same_file_is_the_same_claim(tmp_path):
    t = _file(tmp_path)
    (tmp_path / "link.img").symlink_to(tmp_path / "t.img")
    targets.claim(t)
    try:
        with pytest.raises(RefusedError, match="is starting a run on it"):  # no run id noted yet
            targets.claim(parse_target(f"file:{tmp_path}/link.img?size=1MiB"))
    finally:
        targets.release(t)


def test_nbd_is_claimed_by_uri_and_sim_only_when_it_saves(tmp_path):
    nbd = parse_target("nbd://storage.example/disk1?size=1GiB")
    targets.claim(nbd)
    try:
        with pytest.raises(RefusedError):
            targets.claim(parse_target("nbd://storage.example:10809/disk1?size=1GiB"))
        targets.claim(parse_target("nbd://storage.example/disk2?size=1GiB")).release()  # another export
    finally:
        targets.release(nbd)
    sim = Target("sim", "sim:x", "x", 1)
    a, b = targets.claim(sim), targets.claim(Target("sim", "sim:x ", "x", 1))  # private drives: no lock
    a.release(), b.release()
    saving = Target("sim", f"sim:x?save={tmp_path}/s.bin", "x", 1, options=(("save", f"{tmp_path}/s.bin"),))
    targets.claim(saving)
    try:
        with pytest.raises(RefusedError):
            targets.claim(Target("sim", "sim:y", "y", 1, options=(("save", f"{tmp_path}/s.bin"),)))
    finally:
        targets.release(saving)


# --- claims held by another process -------------------------------------------------------------

HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from iolab import targets
    t = targets.parse_target(sys.argv[1])
    targets.claim(t).note_run("RUN-OF-THE-OTHER-PROCESS", Path("/somewhere/runs/x"))
    print("held", flush=True)
    time.sleep(120)
""")


def test_a_claim_held_by_another_process_is_refused_and_freed_when_it_dies(tmp_path):
    t = _file(tmp_path)
    t_path = tmp_path / "t.img"
    t_path.write_bytes(b"")  # exists: the other process also flocks the file itself
    other = subprocess.Popen([sys.executable, "-c", HOLDER, t.spec], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        with pytest.raises(RefusedError) as e:
            targets.claim(t)
        msg = str(e.value)
        assert "iolab run RUN-OF-THE-OTHER-PROCESS" in msg and f"pid {other.pid}" in msg
        assert f"kill {other.pid}" in msg
    finally:
        other.kill()  # no clean-up of its own: the kernel drops its locks
        other.wait()
    targets.claim(t).release()


def test_the_file_itself_is_locked_across_lock_directories(tmp_path, monkeypatch):
    t = _file(tmp_path)
    (tmp_path / "t.img").write_bytes(b"")
    env = dict(os.environ, IOLAB_LOCK_DIR=str(tmp_path / "other-locks"))
    other = subprocess.Popen([sys.executable, "-c", HOLDER, t.spec], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert other.stdout.readline().strip() == "held"
        with pytest.raises(RefusedError, match="another process holds it locked"):
            targets.claim(t)
    finally:
        other.kill()
        other.wait()
    targets.claim(t).release()


def test_a_run_through_a_hard_link_is_refused_naming_the_run_that_holds_the_file(tmp_path):
    t = _file(tmp_path)
    (tmp_path / "t.img").write_bytes(b"")
    os.link(tmp_path / "t.img", tmp_path / "link.img")
    other = subprocess.Popen([sys.executable, "-c", HOLDER, t.spec], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        link = parse_target(f"file:{tmp_path / 'link.img'}?size=1MiB")
        with pytest.raises(RefusedError) as e:
            targets.claim(link)
        msg = " ".join(str(e.value).split())
        assert f"iolab run RUN-OF-THE-OTHER-PROCESS (pid {other.pid}," in msg and f"kill {other.pid}" in msg, msg
    finally:
        other.kill()
        other.wait()
    targets.claim(t).release()


def test_a_file_the_run_creates_is_locked_from_its_creation(tmp_path):
    t = _file(tmp_path)  # absent when claimed
    targets.claim(t)
    try:
        targets.prepare_file(t)
        env = dict(os.environ, IOLAB_LOCK_DIR=str(tmp_path / "other-locks"))
        other = subprocess.run(
            [sys.executable, "-c", HOLDER, t.spec], capture_output=True, text=True, env=env, timeout=60
        )
        assert other.returncode != 0 and "another process holds it locked" in other.stderr
    finally:
        targets.release(t)


# --- the runner: claimed in start(), released however the run ends -------------------------------


class FailingEngine:
    name = "failing"
    capabilities = FioEngine.capabilities  # a local engine: the runner claims the target

    def version(self):
        return "failing-1"

    def prepare(self, target):
        pass

    def purge(self, target, method):
        return PurgeOutcome("none", True, "")

    def set_write_cache(self, target, enabled):
        return "not settable"

    def run(self, target, workload, raw_dir, tag, progress=None):
        raise EngineError("the engine broke")

    def close(self):
        pass


def _plan(t):
    return registry.build_plan("iops", suites.make_profile("enterprise", quick=True, cell_seconds=1.0), t)


def test_runner_holds_the_claim_for_the_run_and_releases_it_when_the_run_fails(tmp_path):
    t = _file(tmp_path)
    engine = FailingEngine()
    store = start(_plan(t), t, engine, RunOptions(purge_method="none"), tmp_path / "runs")
    with pytest.raises(RefusedError, match=f"iolab run {store.manifest.run_id} "):
        start(_plan(t), t, engine, RunOptions(), tmp_path / "runs")
    assert len(list((tmp_path / "runs").iterdir())) == 1  # the refused run left nothing behind
    with pytest.raises(EngineError):
        Runner(_plan(t), t, engine, store, RunOptions(purge_method="none")).run()
    assert targets.held(t) is None
    start(_plan(t), t, engine, RunOptions(), tmp_path / "runs")
    targets.release(t)


def test_resume_claims_the_target_too(tmp_path):
    t = _file(tmp_path)
    engine = FailingEngine()
    store = start(_plan(t), t, engine, RunOptions(purge_method="none"), tmp_path / "runs")
    with pytest.raises(EngineError):
        Runner(_plan(t), t, engine, store, RunOptions(purge_method="none")).run()
    store.close()
    other = subprocess.Popen([sys.executable, "-c", HOLDER, t.spec], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        with pytest.raises(RefusedError, match="iolab run RUN-OF-THE-OTHER-PROCESS"):
            resume.prepare(store.dir, lambda target, **_: engine, registry.build_plan)
    finally:
        other.kill()
        other.wait()
    r, _ = resume.prepare(store.dir, lambda target, **_: engine, registry.build_plan)
    assert targets.held(r.target) is not None  # held until the resumed run ends
    targets.release(r.target)


def test_a_refused_start_releases_its_claim(tmp_path):
    f = tmp_path / "photos.tar"
    f.write_bytes(b"precious" * 300_000)  # big enough for a plan (one WIPC block)
    t = parse_target(f"file:{f}")
    for _ in range(2):  # the second refusal is for the same reason, not "in use"
        with pytest.raises(RefusedError, match="not created by iolab"):
            start(_plan(t), t, FailingEngine(), RunOptions(), tmp_path / "runs")
    assert targets.held(t) is None


class RemoteEngine(FailingEngine):
    capabilities = replace(FioEngine.capabilities, remote_targets=True, claims_targets=True)
    split = [
        {
            "name": "192.0.2.1:8765",
            "path": "/data/x.img",
            "share": 1.0,  # TEST-NET-1: nobody answers
            "host": {"address": "192.0.2.1", "port": 8765, "target": "/data/x.img"},
        }
    ]

    def target_identity(self):
        return {"kind": "hosts", "hosts": {"192.0.2.1:8765": {"not_read": "no SSH access to this host"}}}

    def wear_snapshot(self, record, phase, when):
        return []


def test_a_remote_engine_neither_claims_nor_checks_the_local_path_and_says_so(tmp_path):
    f = tmp_path / "photos.tar"  # refused for a local engine above: here it names the hosts' files
    f.write_bytes(b"precious" * 300_000)
    t = parse_target(f"file:{f}?size=2400000")  # sized: a host reached through fio alone cannot say
    store = start(_plan(t), t, RemoteEngine(), RunOptions(), tmp_path / "runs")
    assert targets.held(t) is None
    assert store.manifest.safety_overrides == []  # the split engine checks the hosts' targets (hostcheck)
    assert store.manifest.split == RemoteEngine.split
    with pytest.raises(EngineError):
        Runner(_plan(t), t, RemoteEngine(), store, RunOptions()).run()
    store.close()
    # resume goes on over the stored hosts (here unreachable), never on the target alone
    with pytest.raises(
        IolabError,
        match=r"/data/x.img on 192.0.2.1:8765: iolab cannot check a target on a host it "
        r"reaches through fio's server only",
    ):
        resume.prepare(store.dir, lambda t, **_: RemoteEngine(), registry.build_plan)
    assert targets.held(t) is None


class ClaimingEngineHere(RemoteEngine):
    """A hosts engine whose every host is this machine's: it claimed the paths it writes, which are
    this machine's, so the run reads the target as a local run does (not through target_identity)."""

    capabilities = replace(FioEngine.capabilities, claims_targets=True)


def test_an_engine_that_claims_targets_of_this_machine_gets_a_local_runs_facts_and_identity(tmp_path):
    from dataclasses import asdict

    from iolab.run.identity import target_identity

    f = tmp_path / "photos.tar"  # refused for a local engine above: the claiming engine checked it
    f.write_bytes(b"precious" * 300_000)
    t = parse_target(f"file:{f}")
    store = start(_plan(t), t, ClaimingEngineHere(), RunOptions(), tmp_path / "runs")
    assert targets.held(t) is None and store.manifest.safety_overrides == []
    assert store.manifest.target["facts"] == asdict(t.facts) and t.facts.sources  # read here
    with pytest.raises(EngineError):
        Runner(_plan(t), t, ClaimingEngineHere(), store, RunOptions()).run()
    m = store.manifest
    assert m.target["identity"] == target_identity(t) and m.target["identity"]["kind"] == "file"
    assert "host_writes" not in m.target
    store.close()


def test_hosts_mode_refuses_a_target_on_a_host_it_cannot_check_unless_allowed(tmp_path):
    from iolab.engines.fio_hosts import host_legs
    from iolab.engines.hostcheck import check_host_legs
    from iolab.engines.hostlist import parse_hosts

    legs = host_legs(parse_target(f"file:{tmp_path}/x.img?size=1MiB"), parse_hosts("198.51.100.7,198.51.100.8"))
    with pytest.raises(
        RefusedError,
        match=r"x.img on 198.51.100.7:8765; .*x.img on 198.51.100.8:8765: iolab cannot check "
        r"a target on a host it reaches through fio's server only.*--allow-unsafe-target",
    ):
        check_host_legs(legs, False, False)
    claims, local, overridden, _ = check_host_legs(legs, True, False)
    assert (
        claims == [] and local == {} and len(overridden) == 2 and "overridden by --allow-unsafe-target" in overridden[0]
    )
    with pytest.raises(IolabError, match="--allow-unsafe-target"):
        scaleout.engine_for_run(
            Target("block", "/dev/sdz", "/dev/sdz", 10**9, DeviceFacts()), None, "198.51.100.7", None, None
        )


# --- the kind registry --------------------------------------------------------------------------


def test_unknown_kind_is_refused_everywhere():
    t = Target("tape", "tape:/dev/st0", "/dev/st0", 10**9, DeviceFacts())
    for call in (
        lambda: targets.check_safe_to_write(t, True, True),
        lambda: targets.claim(t),
        lambda: targets.purge(t, "auto"),
        lambda: targets.set_write_cache(t, False),
    ):
        with pytest.raises(RefusedError, match="its kind 'tape' is not a registered target kind"):
            call()


def _tape_kind(**hooks):
    base = {
        "name": "tape",
        "prefixes": ("tape:",),
        "parse": lambda spec, text: Target("tape", spec, text[5:], 10**9),
        "problems": lambda t: [targets.Problem("rewound", f"{t.path} is not rewound")],
        "claim": lambda t: targets.lock.TargetClaim(t, None),
        "purge": lambda t, m, p=None: PurgeOutcome("erase", True, "mt erase"),
        "write_cache": lambda t, on: "not settable on tapes",
    }
    return Kind(**(base | hooks))


def test_a_kind_without_a_safety_hook_is_not_registered():
    with pytest.raises(ValueError, match="no problems hook"):
        targets.register(_tape_kind(problems=None))
    assert "tape" not in targets.KINDS


def test_a_registered_kind_gets_its_own_hooks(monkeypatch):
    monkeypatch.setitem(targets.KINDS, "tape", _tape_kind())
    t = parse_target("tape:/dev/st0")
    assert (t.kind, t.path) == ("tape", "/dev/st0")
    with pytest.raises(RefusedError, match="rewound: /dev/st0 is not rewound.*--allow-unsafe-target"):
        targets.check_safe_to_write(t)
    assert targets.purge(t, "auto").detail == "mt erase"
    assert targets.set_write_cache(t, True) == "not settable on tapes"


def test_sim_hooks():
    t = Target("sim", "sim:x", "x", 1)
    assert targets.check_safe_to_write(t) == []
    assert "the sim engine switches" in targets.set_write_cache(t, False)
    with pytest.raises(IolabError, match="purged by the sim engine"):
        targets.purge(t, "auto")
    assert targets.KINDS["sim"].simulated and not targets.KINDS["block"].simulated


def test_read_only_nbd_export_is_refused(monkeypatch):
    answers = {}

    def fake(argv, timeout=60.0):
        return host.CommandResult(tuple(argv), answers["rc"], b"", "")

    monkeypatch.setattr(host, "run_command", fake)
    answers["rc"] = 1  # nbdinfo --size cannot reach h: the ?size= given is taken (a fleet host's export)
    t = parse_target("nbd://h/e?size=1GiB")
    answers["rc"] = 0
    assert targets.check_safe_to_write(t) == []
    answers["rc"] = 2
    with pytest.raises(RefusedError, match="read-only: the NBD server exports nbd://h:10809/e read-only"):
        targets.check_safe_to_write(t, True, True)


# --- lock files another user could plant --------------------------------------------------------

VICTIM, ATTACKER = 65534, 65533  # nobody runs iolab; another unprivileged uid plants files
PRECIOUS = b"the user's own data\n"


@pytest.fixture
def victim_home():
    """A directory the victim owns, with a file of theirs in it, and a world-writable /tmp-like
    directory (sticky) for TMPDIR."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run iolab as another user")
    iolab = Path(sys.executable).parent / "iolab"
    reach = subprocess.run(["setpriv", f"--reuid={VICTIM}", f"--regid={VICTIM}", "--clear-groups", "test", "-x", iolab])
    if reach.returncode != 0:  # a checkout in /root (mode 0700 on Debian) is root's alone
        pytest.skip(f"uid {VICTIM} cannot reach {iolab}: a directory above the checkout shuts other users out")
    base = Path(tempfile.mkdtemp(prefix="iolab-lockplant-", dir="/var/tmp"))
    try:
        os.chmod(base, 0o755)
        home, tmp = base / "home", base / "tmp"
        home.mkdir()
        tmp.mkdir()
        os.chmod(tmp, 0o1777)
        (home / "precious.txt").write_bytes(PRECIOUS)
        for p in (home, home / "precious.txt"):
            os.chown(p, VICTIM, VICTIM)
        yield home, tmp
    finally:
        shutil.rmtree(base, ignore_errors=True)


def iolab_as_victim(home: Path, env: dict) -> subprocess.CompletedProcess:
    """`iolab run` on a file target of the victim's, as the victim (the claim comes first, so a
    refused claim ends it at once). One round: a claim taken is all the tests read, and a run to
    steady state measured ~20 cells more (~4 CPU-s)."""
    e = {k: v for k, v in os.environ.items() if k not in ("IOLAB_LOCK_DIR", "TMPDIR")}
    e.update(HOME=str(home), COLUMNS="200", **env)
    argv = [
        str(Path(sys.executable).parent / "iolab"),
        "run",
        "throughput",
        "--target",
        f"file:{home}/t.img?size=16MiB",
        "--quick",
        "--cell-time",
        "100ms",
        "--max-rounds",
        "1",
        "--no-report",
        "--runs-dir",
        str(home / "runs"),
    ]
    return subprocess.run(
        ["setpriv", f"--reuid={VICTIM}", f"--regid={VICTIM}", "--clear-groups", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        env=e,
        cwd=home,
    )


def test_a_lock_directory_another_user_created_is_refused(victim_home):
    home, tmp = victim_home
    planted = tmp / f"iolab-locks-{VICTIM}"  # the fallback name, made first by someone else
    planted.mkdir(mode=0o777)
    os.chmod(planted, 0o777)
    link = planted / lock_name(f"file-{home}/t.img")
    link.symlink_to(home / "precious.txt")
    for p in (planted, link):
        os.lchown(p, ATTACKER, ATTACKER)
    p = iolab_as_victim(home, {"TMPDIR": str(tmp)})
    assert (home / "precious.txt").read_bytes() == PRECIOUS
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert f"owned by uid {ATTACKER}" in p.stderr and "IOLAB_LOCK_DIR" in p.stderr
    assert not (home / "runs").exists()


def test_a_symlink_in_a_shared_lock_directory_is_not_followed(victim_home):
    home, tmp = victim_home  # tmp: root's, sticky and world-writable, as /tmp
    link = tmp / lock_name(f"file-{home}/t.img")
    link.symlink_to(home / "precious.txt")
    p = iolab_as_victim(home, {"IOLAB_LOCK_DIR": str(tmp)})
    assert (home / "precious.txt").read_bytes() == PRECIOUS
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "is a symbolic link" in p.stderr
    assert link.is_symlink() and not (home / "runs").exists()


def test_the_per_user_lock_directory_is_private(victim_home):
    home, tmp = victim_home
    p = iolab_as_victim(home, {"TMPDIR": str(tmp)})
    assert p.returncode == 0, p.stderr
    st = os.lstat(tmp / f"iolab-locks-{VICTIM}")
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (VICTIM, 0o700)


@pytest.mark.parametrize("how", ["another user's directory", "a world-writable directory", "another user's link"])
def test_a_lock_directory_under_a_directory_someone_else_controls_is_refused(victim_home, how):
    # IOLAB_LOCK_DIR was checked at its last component only: a victim-owned locks directory
    # inside one the attacker may rename or replace was taken
    home, tmp = victim_home
    above = tmp / "above"
    above.mkdir()
    (above / "locks").mkdir(mode=0o700)
    os.chown(above / "locks", VICTIM, VICTIM)
    given = above
    if how == "another user's directory":
        os.chown(above, ATTACKER, ATTACKER)
        said = f"the directory {above} on its path is owned by uid {ATTACKER}"
    elif how == "a world-writable directory":
        os.chmod(above, 0o777)  # no sticky bit: anyone may rename locks/
        said = f"the directory {above} on its path is writable by other users (mode 777)"
    else:
        given = tmp / "link"
        given.symlink_to(above)
        os.lchown(given, ATTACKER, ATTACKER)
        said = f"{given} is a symbolic link owned by uid {ATTACKER}"
    p = iolab_as_victim(home, {"IOLAB_LOCK_DIR": str(given / "locks")})
    assert p.returncode == 3 and "Traceback" not in p.stderr, p.stderr
    assert said in " ".join(p.stderr.split()) and "IOLAB_LOCK_DIR" in p.stderr
    assert not (home / "runs").exists() and not any((above / "locks").iterdir())


def test_a_lock_directory_on_a_safe_path_through_a_link_is_taken(victim_home):
    home, tmp = victim_home
    (home / "locks").mkdir(mode=0o700)
    os.chown(home / "locks", VICTIM, VICTIM)
    link = tmp / "my-locks"
    link.symlink_to(home)  # root's link (as /var/run -> /run) to a directory of the victim's
    p = iolab_as_victim(home, {"IOLAB_LOCK_DIR": str(link / "locks")})
    assert p.returncode == 0, p.stderr


def test_a_host_of_this_machine_checks_and_claims_an_nbd_target_by_its_uri(monkeypatch):
    """local_target resolved every leg's path as a file's: an NBD URI became CWD/nbd:/HOST:PORT/E,
    claimed under that name and asked of nbdinfo --can write (which could not ask: no check)."""
    from iolab.engines.fio_hosts import host_legs
    from iolab.engines.hostcheck import check_host_legs
    from iolab.engines.hostlist import parse_hosts

    asked = []

    def fake(argv, timeout=60.0):
        asked.append(argv[-1])
        return host.CommandResult(tuple(argv), 0, b"1073741824\n", "")

    monkeypatch.setattr(host, "run_command", fake)
    legs = host_legs(parse_target("nbd://127.0.0.1:10809/e"), parse_hosts("127.0.0.1:8766"))
    claims, local, _, _ = check_host_legs(legs, False, False)
    try:
        assert [c.target.path for c in claims] == ["nbd://127.0.0.1:10809/e"] == [t.path for t in local.values()]
        assert set(asked) == {"nbd://127.0.0.1:10809/e"}  # the size, then --can write, of the URI itself
    finally:
        for c in claims:
            c.release()
