"""A `--hosts` run whose host is this machine's own fio server (started by the user, as
`fio --server=ip:127.0.0.1,PORT`) gets a local run's purge, as the README says a host of this
machine gets a local run's treatment; a host of another machine (a network namespace) is still
not purged from here."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from iolab.store.runstore import RunStore

from .conftest import _scratch_dir, fio_server, free_port, iolab, killed_at
from .netns import fio_hosts

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")
QUICK = ("--quick", "--cell-time", "200ms", "--max-rounds", "1", "--no-report")


def _run(runs: Path, target: str, hosts: str, *extra: str) -> RunStore:
    r = iolab("run", "latency", *QUICK, *extra, "--target", target, "--hosts", hosts, "--runs-dir", str(runs))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    (run,) = runs.iterdir()
    return RunStore.open(run)


@pytest.fixture(scope="module")
def run_on_127():
    """One run through the user's fio server at 127.0.0.1, read by the purge test and the
    target facts test (the same command for both): (its scratch directory, its manifest)."""
    with _scratch_dir() as scratch, fio_server() as (_, port):
        yield scratch, port, _run(scratch / "runs", f"file:{scratch}/t.img?size=16MiB", f"127.0.0.1:{port}").manifest


def test_a_fio_server_of_this_machine_gets_a_local_runs_purge(run_on_127):
    # "purge FAILED: the targets are on other hosts": the purge took 127.0.0.1 for another host
    scratch, port, first = run_on_127
    by_name = _run(scratch / "runs-localhost", f"file:{scratch}/t.img?size=16MiB", f"localhost:{port}").manifest
    for m in (first, by_name):
        assert m.state == "complete" and m.purges, m.purges
        assert all(p["method"] == "file" and p["ok"] for p in m.purges), m.purges
        assert not any("purge failed" in n for n in m.noncompliance), m.noncompliance
        assert not any(n.startswith("started for this run") for n in m.notes)  # the user's server ran it


def test_a_fio_server_of_this_machine_gets_a_local_runs_target_facts_and_a_true_note(run_on_127):
    # the report said "nothing is read on this machine (its path of the same name is not what the
    # hosts write)" and showed empty target facts, though the host's path is this machine's
    scratch, _, m = run_on_127
    local = _local(scratch, f"file:{scratch}/t.img?size=16MiB")
    # all but the file's size, read as each run starts: the first run made the file
    same = [k for k in m.target["facts"] if k != "capacity_bytes"]
    assert [m.target["facts"][k] for k in same] == [local.target["facts"][k] for k in same], m.target["facts"]
    assert m.target["facts"]["sources"] and m.target["facts"]["backing_device"], m.target["facts"]
    assert m.target["identity"]["kind"] == "file" and m.target["identity"] == local.target["identity"]
    assert "host_writes" not in m.target and m.endurance.keys() == local.endurance.keys(), m.endurance
    assert not any("nothing is read on this machine" in n for n in m.notes), m.notes
    assert any(
        n.startswith("target identity, facts and the drive's write counters: read on this machine") for n in m.notes
    )


def test_a_hosts_runs_raw_json_is_fios_json_with_the_clients_lines_beside_it_and_audits(run_on_127):
    # each round's raw/NAME.json began with fio's client lines ("127.0.0.1:PORT rnd: (g=0): ..."),
    # so `jq . raw/NAME.json` failed on the file iolab calls the round's raw JSON
    scratch, port, _ = run_on_127
    (run,) = (scratch / "runs").iterdir()
    outputs = sorted((run / "raw").glob("*.json"))
    assert outputs
    for p in outputs:
        assert isinstance(json.loads(p.read_text()), dict), p  # json.loads, not a fallback reader
    logs = sorted((run / "raw").glob("*.client.log"))
    assert [p.name.removesuffix(".client.log") for p in logs] == [p.stem for p in outputs]
    assert all(": (g=0): rw=" in p.read_text() for p in logs), [
        p.read_text() for p in logs
    ]  # "<host> NAME: (g=0): rw=..."
    ran = iolab("audit", str(run))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # a run stored before the split (the client's lines first in its .json) still audits whole
    old = scratch / "old-layout"
    shutil.copytree(run, old)
    for p in sorted((old / "raw").glob("*.client.log")):
        kept = p.with_name(p.name.replace(".client.log", ".json"))
        kept.write_text(p.read_text() + kept.read_text())
        p.unlink()
    assert any(not _parses((old / "raw" / p.name).read_text()) for p in outputs)
    ran = iolab("audit", str(old))
    assert ran.returncode == 0, ran.stdout + ran.stderr


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _local(scratch: Path, target: str):
    r = iolab("run", "latency", *QUICK, "--target", target, "--runs-dir", str(scratch / "local"))
    assert r.returncode == 0, r.stdout + r.stderr
    (run,) = (scratch / "local").iterdir()
    return RunStore.open(run).manifest


def test_two_hosts_of_this_machine_writing_two_files_purge_both(scratch, fio_server_here):
    # each host its own target (a hosts file): each file is a drive of this machine of its own
    hosts, other = scratch / "hosts.toml", free_port()
    hosts.write_text(
        f'[[host]]\naddress = "127.0.0.1"\nport = {fio_server_here}\ntarget = "{scratch}/a.img"\n'
        f'[[host]]\naddress = "127.0.0.2"\nport = {other}\ntarget = "{scratch}/b.img"\n'
    )
    r = iolab(
        "run",
        "latency",
        *QUICK,
        "--target",
        f"file:{scratch}/a.img?size=16MiB",
        "--hosts-file",
        str(hosts),
        "--runs-dir",
        str(scratch / "runs"),
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    (run,) = (scratch / "runs").iterdir()
    m = RunStore.open(run).manifest
    assert m.purges and all(p["method"] == "file" and p["ok"] for p in m.purges), m.purges
    for p in m.purges:
        assert f"{scratch}/a.img: $ fallocate" in p["detail"] and f"{scratch}/b.img: $ fallocate" in p["detail"], p
    # each host's write cache recorded as a local run records its target's (it said only that the
    # run left them as they were, and the report's Write cache rows could not say what they were)
    files = "not settable on files (the filesystem and page cache decide; fio uses direct IO)"
    assert m.write_cache == (
        "not changed: a hosts run leaves each host's write cache as it is; each host's: "
        f"127.0.0.1:{fio_server_here}: {files}; 127.0.0.2:{other}: {files}"
    ), m.write_cache


def test_a_fio_server_of_another_machine_is_still_not_purged(scratch):
    port = free_port()
    with fio_hosts(1, port) as [(_, address)]:
        # its target cannot be checked from here: the test answers for it (its own scratch file)
        m = _run(
            scratch / "runs", f"file:{scratch}/t.img?size=16MiB", f"{address}:{port}", "--allow-unsafe-target"
        ).manifest
    assert m.purges and not any(p["ok"] for p in m.purges), m.purges
    assert all("the targets are on other hosts" in p["detail"] for p in m.purges), m.purges
    assert any("nothing is read on this machine" in n for n in m.notes) and not m.target["facts"]["sources"]


def test_resume_on_a_host_of_this_machine_checks_the_target_as_a_local_run(scratch, fio_server_here):
    """The run stored its target's identity as a local run's (every host is this machine's), but
    `iolab resume` took any --hosts run for one on other hosts: it compared no identity and noted
    "the targets are on other hosts". Another file at the same path is now refused, as locally."""
    import json

    target = scratch / "t.img"
    store = _run(scratch / "runs", f"file:{target}?size=16MiB", f"127.0.0.1:{fio_server_here}")
    run = store.dir
    store.close()
    manifest = json.loads((run / "manifest.json").read_text())
    manifest.update(
        state="interrupted", ended=None, error="killed (as by SIGKILL)", audit={}
    )  # what a killed run stores
    (run / "manifest.json").write_text(json.dumps(manifest))
    target.rename(scratch / "moved-away.img")  # kept, so its inode cannot be reused at once
    target.write_bytes((scratch / "moved-away.img").read_bytes())  # same path and size, another inode
    for name in os.listxattr(scratch / "moved-away.img"):  # and iolab's mark: only the drive differs
        os.setxattr(target, name, os.getxattr(scratch / "moved-away.img", name))
    res = iolab("resume", str(run), "--no-report", timeout=300)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stdout + res.stderr
    assert "not the one the run wrote" in res.stderr and "inode" in res.stderr, res.stderr
    # the run's own file back: it goes on, as a local run's, and says nothing of other hosts
    (scratch / "moved-away.img").replace(target)
    res = iolab("resume", str(run), "--no-report", timeout=300)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stdout + res.stderr
    resumed = [n for n in RunStore.open(run).manifest.notes if n.startswith("resumed: ")]
    assert resumed and not any("on the run's hosts" in n for n in resumed), resumed


def test_resume_checks_each_host_of_this_machine_on_its_own_path(scratch, fio_server_here):
    """A hosts file gives each host of this machine its own path: the run stored -t's identity
    alone, so `iolab resume` took another file at the second host's path for the run's drive, and
    never asked whether that path was written after the run stopped. Each host's target is stored
    now and checked, and the run goes on once the file is the run's again."""
    hosts, other = scratch / "hosts.toml", free_port()
    hosts.write_text(
        f'[[host]]\naddress = "127.0.0.1"\nport = {fio_server_here}\ntarget = "{scratch}/a.img"\n'
        f'[[host]]\naddress = "127.0.0.2"\nport = {other}\ntarget = "{scratch}/b.img"\n'
    )
    runs = scratch / "runs"
    # two rounds: killed as the second starts (a round is stored), the resume runs the phase again
    args = ["--quick", "--cell-time", "200ms", "--max-rounds", "2", "--no-report"]
    args += ["--target", f"file:{scratch}/a.img?size=16MiB", "--hosts-file", str(hosts), "--runs-dir", str(runs)]
    killed_at(["run", "latency", *args], runs, "*/raw/main-r02-*")
    (run,) = runs.iterdir()
    legs = RunStore.open(run).manifest.target["leg_identities"]
    assert [(v["kind"], v["path"]) for v in legs.values()] == [
        ("file", f"{scratch}/a.img"),
        ("file", f"{scratch}/b.img"),
    ]
    b, kept = scratch / "b.img", scratch / "b-moved-away.img"
    b.rename(kept)  # kept, so its inode cannot be reused at once
    b.write_bytes(kept.read_bytes())  # same path and size, another inode
    for name in os.listxattr(kept):  # and iolab's mark: only the drive differs
        os.setxattr(b, name, os.getxattr(kept, name))
    res = iolab("resume", str(run), "--no-report", timeout=300)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stdout + res.stderr
    said = " ".join(res.stderr.split())
    assert "a host's target is not the one the run wrote" in said and "127.0.0.2" in said and "inode" in said, said
    kept.replace(b)
    # the run's own file, written after the run stopped (as two minutes on): its state is not the run's
    later = time.time() + 120
    os.utime(b, (later, later))
    res = iolab("resume", str(run), "--no-report", timeout=300)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stdout + res.stderr
    m = RunStore.open(run).manifest
    assert m.state == "complete"
    assert any("the target was written after the run stopped" in n for n in m.notes), m.notes


REMOTE = "198.51.100.7"  # TEST-NET-2: reached through a fio server alone; nothing is asked there
UNSAFE = ("--hosts", REMOTE, "--allow-unsafe-target")  # nothing can check a target there


def _read_on_the_host_alone(here: str, there: str, what: str, tool: str, size_here: int) -> None:
    """`here` names something of this machine, `there` (with ?size=64MiB) something the host alone
    has: for a host reached through fio's server alone neither is read here, so `here` is refused
    for its size and `there` planned at its ?size=; without --hosts `here` is read here."""
    import json

    p = iolab("plan", "latency", "--quick", "-t", here, *UNSAFE)
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and f"the {what}'s size is needed, and iolab cannot ask host {REMOTE}:8765" in said, said
    assert f"Give the size, e.g. {here}?size=8GiB" in said and f"with {tool}" in said, said
    p = iolab("plan", "latency", "--quick", "-t", there, *UNSAFE, "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    (planned,) = json.loads(p.stdout)["plan"]["tests"]
    assert planned["target_capacity_bytes"] == 64 << 20
    # the run does not purge another machine's target, and its plan says so (it named the purge of
    # this machine's kind of target: blkdiscard, or the file's deallocation)
    assert planned["purge_does"] == "not done: the targets are on other hosts; iolab does not purge them (purge " \
        "each host's target before the run)", planned["purge_does"]  # fmt: skip
    p = iolab("plan", "latency", "--quick", "-t", here, "--allow-unsafe-target", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["plan"]["tests"][0]["target_capacity_bytes"] == size_here


def test_a_remote_hosts_file_is_never_read_on_this_machine(scratch):
    # a host's file: path names that host's file, but it was parsed here: this machine's file of
    # the same name sized the run, and a directory that exists only on the host was refused
    here = scratch / "same-name.img"
    here.write_bytes(b"\0" * (4 << 20))  # this machine's 4 MiB file of that name
    _read_on_the_host_alone(f"file:{here}", "file:/only-on-the-host/t.img?size=64MiB", "file", "stat", 4 << 20)
    p = iolab("plan", "latency", "--quick", "-t", "file:t.img?size=64MiB", *UNSAFE)
    assert p.returncode == 2 and "needs an absolute path" in " ".join(p.stderr.split()), p.stderr


def test_a_remote_hosts_device_is_never_read_on_this_machine(scratch, loop_device):
    # a host's /dev/NAME names that host's device, but it was read here: this machine's device of the
    # same name sized the run, a node missing here was refused, and ?size= was refused outright
    _read_on_the_host_alone(loop_device, "/dev/only-on-the-host?size=64MiB", "device", "lsblk", 256 << 20)
    # unchecked there, so refused without the override, as any target of such a host
    p = iolab("plan", "latency", "--quick", "-t", "/dev/only-on-the-host?size=64MiB", "--hosts", REMOTE)
    assert p.returncode == 3 and "cannot check a target on a host" in " ".join(p.stderr.split()), p.stderr


def _small_loop(scratch: Path):
    """A 32 MiB loop device of this machine: (its node, the command that detaches it)."""
    import subprocess

    img = scratch / "small.img"
    img.write_bytes(b"")
    os.truncate(img, 32 << 20)
    node = subprocess.run(["losetup", "-f", "--show", str(img)], check=True, capture_output=True, text=True)
    return node.stdout.strip(), ["losetup", "-d", node.stdout.strip()]


def test_a_host_of_this_machine_has_its_own_device_or_export_sized_here(scratch, loop_device):
    # a host of this machine's address with a path of its own (a hosts file's `target`) had the
    # spec's path read instead: its own 32 MiB device was planned (and written) at the spec's
    # 256 MiB, and its own export at the spec's export's size, past its end (fio wraps offsets)
    import json
    import shutil
    import subprocess

    from .conftest import wait_listening

    def capacity(*args: str, field: str = "target_capacity_bytes") -> int:
        p = iolab("plan", "latency", "--quick", "--hosts-file", str(hosts), "--json", *args)
        assert p.returncode == 0, p.stdout + p.stderr
        return json.loads(p.stdout)["plan"]["tests"][0][field]

    def entry(target: str, port: int | None = None) -> str:
        return f'[[host]]\naddress = "127.0.0.1"\nport = {port or free_port()}\ntarget = "{target}"\n'

    hosts = scratch / "hosts.toml"
    small, detach = _small_loop(scratch)
    try:
        hosts.write_text(entry(small))
        assert capacity("-t", loop_device) == 32 << 20
        hosts.write_text(entry(small) + f'[[host]]\naddress = "127.0.0.1"\nport = {free_port()}\n')
        p = iolab("plan", "latency", "--quick", "--hosts-file", str(hosts), "-t", loop_device)
        said = " ".join((p.stdout + p.stderr).split())
        assert p.returncode == 2 and "the hosts' targets differ in size" in said, said
        assert f"({small}): {32 << 20:,} bytes" in said and f"Give ?size= of at most {32 << 20:,} bytes" in said, said
        # the first 16 MiB of each host's device tested (the plan's capacity is the drive's, 63a21201)
        assert capacity("-t", f"{loop_device}?size=16MiB", field="tested_capacity_bytes") == 16 << 20
    finally:
        subprocess.run(detach, capture_output=True)
    if not (shutil.which("nbdkit") and shutil.which("nbdinfo")):
        return
    servers, ports = [], []
    try:
        for size in ("64M", "32M"):
            ports.append(free_port())
            servers.append(
                subprocess.Popen(
                    ["nbdkit", "-f", "-i", "127.0.0.1", "-p", str(ports[-1]), "memory", size],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            wait_listening(servers[-1], ports[-1], "nbdkit")
        hosts.write_text(entry(f"nbd://127.0.0.1:{ports[1]}/"))
        assert capacity("-t", f"nbd://127.0.0.1:{ports[0]}/") == 32 << 20
        p = iolab(
            "plan", "latency", "--quick", "--hosts-file", str(hosts), "-t", f"nbd://127.0.0.1:{ports[0]}/?size=48MiB"
        )
        said = " ".join((p.stdout + p.stderr).split())
        assert p.returncode == 2 and "larger than the export" in said and f"{32 << 20:,} bytes" in said, said
    finally:
        for s in servers:
            s.terminate()
            s.wait()
