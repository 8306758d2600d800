"""An NBD target's ?size= against the export's real size, through the `iolab` command and a real
nbdkit server: fio's nbd engine wraps offsets at the export's end, so a larger ?size= would
make the run test (and precondition) less than it reports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import free_port, iolab, wait_listening

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not (shutil.which("nbdkit") and shutil.which("nbdinfo")), reason="needs nbdkit and nbdinfo"),
]

MiB = 1 << 20
QUICK = ["--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report"]


@pytest.fixture
def export_64m(scratch: Path):
    """A 64 MiB nbdkit memory export on a Unix socket (its URI without ?size=)."""
    sock = scratch / "nbd.sock"
    server = subprocess.Popen(
        ["nbdkit", "-f", "-U", str(sock), "memory", "64M"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 10
        while not sock.exists():
            assert time.monotonic() < deadline, "nbdkit did not start"
            time.sleep(0.05)
        yield f"nbd+unix:///?socket={sock}"
    finally:
        server.terminate()
        server.wait()


def test_a_size_larger_than_the_export_is_refused(export_64m, scratch):
    runs = scratch / "runs"
    p = iolab("run", "latency", *QUICK, "-t", f"{export_64m}&size=128MiB", "--runs-dir", str(runs))
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2, said
    assert "larger than the export" in said and f"{64 * MiB:,} bytes" in said and "Traceback" not in said
    assert not runs.exists(), "a refused target leaves no run behind"


@pytest.mark.parametrize(("size", "tested"), [("32MiB", 32 * MiB), (None, 64 * MiB)])
def test_a_smaller_size_limits_the_tested_range_and_none_tests_the_whole_export(export_64m, scratch, size, tested):
    spec = export_64m + (f"&size={size}" if size else "")
    p = iolab("run", "latency", *QUICK, "-t", spec, "--json", "--runs-dir", str(scratch / "runs"))
    assert p.returncode == 0, p.stderr
    (run,) = json.loads(p.stdout)["runs"]
    assert run["target"]["tested_capacity_bytes"] == tested
    manifest = json.loads((Path(run["path"]) / "manifest.json").read_text())
    assert manifest["target"]["facts"]["capacity_bytes"] == 64 * MiB  # the export's own size, as its server said


@pytest.fixture
def tcp_export():
    """A 64 MiB nbdkit memory export on this machine's 127.0.0.1 at a free port: (the port)."""
    port = free_port()
    server = subprocess.Popen(
        ["nbdkit", "-f", "-i", "127.0.0.1", "-p", str(port), "memory", "64M"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(server, port, "nbdkit")
        yield port
    finally:
        server.terminate()
        server.wait()


# A run's claim on a target, held by another process until its stdin closes.
HOLD = (
    "import sys; from iolab import targets; targets.claim(targets.parse_target(sys.argv[1])); "
    "print('held', flush=True); sys.stdin.read()"
)


def test_one_export_under_two_names_is_one_target(tcp_export, scratch):
    # The lock was keyed by the URI's text: a run on nbd://localhost:PORT went ahead beside one on
    # nbd://127.0.0.1:PORT, and -t with both ran two runs on the export and compared it with itself.
    port = tcp_export
    first = f"nbd://127.0.0.1:{port}"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, first], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        # nbdkit listens on 127.0.0.1 alone: [::1] is a loopback spelling too, given ?size= not to ask it
        for other in (f"nbd://localhost:{port}/", f"nbd://LOCALHOST:{port}", f"nbd://[::1]:{port}?size=64MiB"):
            p = iolab("run", "latency", *QUICK, "-t", other, "--runs-dir", str(scratch / "runs"))
            said = " ".join((p.stdout + p.stderr).split())
            assert p.returncode == 3, (other, said)
            assert f"another iolab process (pid {holder.pid})" in said and "Traceback" not in said, said
        assert not (scratch / "runs").exists()
    finally:
        holder.communicate(b"")
    # given twice to one `iolab run`: refused before either run starts
    p = iolab(
        "run", "latency", *QUICK, "-t", first, "-t", f"nbd://localhost:{port}", "--runs-dir", str(scratch / "runs")
    )
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "are one drive" in said and f"NBD export nbd://localhost:{port}/" in said, said
    assert not (scratch / "runs").exists()
    # the claim is free again once its holder ended
    p = iolab("run", "latency", *QUICK, "-t", f"nbd://localhost:{port}", "--runs-dir", str(scratch / "runs"))
    assert p.returncode == 0, p.stdout + p.stderr


def _own_address() -> str | None:
    """A non-loopback IPv4 address of this machine's interfaces (eth0's, a veth's), if any."""
    out = subprocess.run(["ip", "-o", "-4", "addr", "show", "scope", "global"], capture_output=True, text=True)
    found = [line.split()[3].split("/")[0] for line in out.stdout.splitlines() if len(line.split()) > 3]
    return found[0] if found else None


def test_an_export_through_this_machines_own_address_is_one_target_with_its_loopback(tcp_export, scratch):
    # nbd://127.0.0.1:P and nbd://<eth0's address>:P were two endpoints, so two runs could write an
    # export served on every address at once; an address of this machine is keyed as localhost too
    own = _own_address()
    if own is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    first, other = f"nbd://127.0.0.1:{tcp_export}", f"nbd://{own}:{tcp_export}?size=64MiB"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, first], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        p = iolab("run", "latency", *QUICK, "-t", other, "--runs-dir", str(scratch / "runs"))
        said = " ".join((p.stdout + p.stderr).split())
        assert p.returncode == 3 and f"another iolab process (pid {holder.pid})" in said, said
    finally:
        holder.communicate(b"")
    p = iolab("run", "latency", *QUICK, "-t", first, "-t", other, "--runs-dir", str(scratch / "runs"))
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "are one drive" in said and f"NBD export nbd://localhost:{tcp_export}/" in said, said
    assert not (scratch / "runs").exists()


def test_a_remote_hosts_export_is_never_sized_by_this_machines_server(tcp_export):
    """nbd://127.0.0.1 of a host's fio is that host's loopback: this machine's server of the same
    address (64 MiB) is another export, and its answer neither refuses nor sizes the host's."""
    spec, host = f"nbd://127.0.0.1:{tcp_export}/", "198.51.100.7"  # TEST-NET-2: no server there
    # a host reached through fio's server only: its target unchecked, as `run` needs it said
    p = iolab(
        "plan", "latency", "--quick", "-t", f"{spec}?size=128MiB", "--hosts", host, "--allow-unsafe-target", "--json"
    )
    assert p.returncode == 0, p.stdout + p.stderr
    (planned,) = json.loads(p.stdout)["plan"]["tests"]
    assert planned["target_capacity_bytes"] == 128 * MiB  # the host's own size, as given
    p = iolab("plan", "latency", "--quick", "-t", spec, "--hosts", host, "--allow-unsafe-target")
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2, said
    assert f"the export's size is needed, and iolab cannot ask host {host}:8765" in said and "Give the size" in said, (
        said
    )
    # the same spec of this machine's run is this machine's export: sized (and refused) here
    p = iolab("plan", "latency", "--quick", "-t", f"{spec}?size=128MiB")
    assert p.returncode == 2 and "larger than the export" in " ".join(p.stderr.split()), p.stderr


def test_plan_records_the_purge_an_nbd_export_cannot_have_as_the_run_does(export_64m, scratch):
    """plan said "compliant: yes" while the run recorded "purge failed (auto): not from FOB"."""
    args = ["latency", *QUICK, "-t", export_64m, "--runs-dir", str(scratch / "runs")]
    plan = iolab("plan", *args, "--json")
    assert plan.returncode == 0, plan.stderr
    (planned,) = json.loads(plan.stdout)["plan"]["tests"]
    assert "purge failed (auto): not from FOB" in planned["noncompliance"] and planned["compliant"] is False
    text = iolab("plan", *args)
    assert "compliant     no:" in text.stdout and "purge failed (auto): not from FOB" in text.stdout
    p = iolab("run", *args, "--json")
    assert p.returncode == 0, p.stderr
    (run,) = json.loads(p.stdout)["runs"]
    manifest = json.loads((Path(run["path"]) / "manifest.json").read_text())
    assert manifest["noncompliance"] == planned["noncompliance"], "the run records what plan said, once"
    assert manifest["compliant"] is False
    # --purge none: no purge to fail (its own entry instead)
    none = json.loads(iolab("plan", *args, "--purge", "none", "--json").stdout)["plan"]["tests"][0]
    assert "no purge (--purge none)" in none["noncompliance"]
    assert not any(n.startswith("purge failed") for n in none["noncompliance"])
