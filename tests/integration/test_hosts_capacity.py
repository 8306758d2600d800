"""A target on other hosts is tested at its `?size=`: that is the size tested, never the drive's
capacity, which is what each host says of its target (over ssh) or not known (a host reached
through fio's server alone says nothing). Before, `show`, the report's Capacity and `show
--json`'s capacity_bytes gave the ?size= as the drive's capacity."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import iolab
from .netns import fio_hosts
from .sshd import available, ssh_host

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces")
QUICK = ("--quick", "--cell-time", "200ms", "--max-rounds", "1", "--purge", "none")


def _run_dir(out: str) -> Path:
    return Path(next(ln for ln in out.splitlines() if ln.startswith("run directory: ")).split(": ", 1)[1])


def _shown(run: Path) -> tuple[str, dict]:
    p = iolab("show", str(run))
    assert p.returncode == 0, p.stderr
    j = iolab("show", str(run), "--json")
    assert j.returncode == 0, j.stderr
    return " ".join(p.stdout.split()), json.loads(j.stdout)["runs"][0]["target"]


def _report_capacity(run: Path, out: Path) -> str:
    p = iolab("report", str(run), "--out", str(out))
    assert p.returncode == 0, p.stderr
    [html] = out.glob("*.html")
    text = " ".join(html.read_text().split())
    i = text.index(">Capacity<")
    return text[i : i + 200]


def test_a_host_reached_through_fio_alone_leaves_the_capacity_not_known(scratch):
    with fio_hosts(1) as hosts:
        addr = hosts[0][1]
        target = f"file:{scratch}/h.img?size=16MiB"
        plan = iolab("plan", "latency", *QUICK, "--allow-unsafe-target", "-t", target, "--hosts", addr)
        assert plan.returncode == 0, plan.stderr
        said = " ".join(plan.stdout.split())
        unread = "capacity not known (hosts reached through fio's server only cannot say it; ?size= is the size tested)"
        assert f"target {target}, {unread}" in said, said
        args = ("run", "latency", *QUICK, "--allow-unsafe-target", "--no-report", "-t", target, "--hosts", addr)
        r = iolab(*args, "--runs-dir", str(scratch / "runs"), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    run = _run_dir(r.stdout)
    said, doc = _shown(run)
    assert "(file; model unknown; capacity not known (no host said its target's size), tested 16.78 MB)" in said, said
    assert doc["capacity_bytes"] is None and doc["tested_capacity_bytes"] == 16 << 20
    assert "not known; 16.78 MB tested" in _report_capacity(run, scratch / "report")


@pytest.mark.skipif(not available(), reason="needs sshd and ssh")
def test_an_ssh_host_gives_its_files_size_and_the_size_tested_is_the_smaller_one(scratch):
    runs = scratch / "runs"
    with ssh_host() as host:
        f = host.hosts_file(scratch / "hosts.toml", scratch / "remote.img")
        for size in ("32MiB", "16MiB"):  # the first lays out a 32 MiB file; the second tests its first 16 MiB
            target = f"file:{scratch}/local.img?size={size}"
            r = iolab(
                "run", "latency", *QUICK, "--no-report", "-t", target, "--hosts-file", str(f), "--runs-dir", str(runs)
            )
            assert r.returncode == 0, r.stdout + r.stderr
    run = _run_dir(r.stdout)
    said, doc = _shown(run)
    assert "(file; model unknown; capacity 33.55 MB, tested 16.78 MB)" in said, said
    assert doc["capacity_bytes"] == 32 << 20 and doc["tested_capacity_bytes"] == 16 << 20
    assert "33.55 MB; 16.78 MB tested" in _report_capacity(run, scratch / "report")
