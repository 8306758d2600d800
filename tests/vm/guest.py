"""Runs INSIDE the guest booted by machine.py: every iolab command the VM tests check, against
the emulated drives, with the drive tools' own answers beside them. Writes results.json into
the shared directory given as argv[1]; the host-side tests (test_drives.py) assert on it, so a
failure names the device and the check. Standard library only: it runs with the repository's
venv Python but must not import iolab (the CLI is exercised as users run it, each command a
process of its own).

Each check is recorded whatever happens (a crash becomes its 'error'), and the next runs."""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import threading
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.forkserver import ForkServer  # noqa: E402  # standard library only on this side

OUT = Path(sys.argv[1])
ONLY = set(sys.argv[2:])  # check names to run (all when none are given)
IOLAB = str(Path(sys.executable).parent / "iolab")
# SQLite's WAL needs shared memory the 9p share lacks: runs go to the guest's own /tmp and are
# copied to OUT at the end, for the host to report. Each group of drives has its own runs
# directory below RUNS, so the Ctrl-C check finds the run it started and no two runs at once
# share a database.
RUNS = Path("/tmp/iolab-vm-runs")
RESULTS: dict = {"devices": {}, "checks": {}}
# Each `iolab` start under emulation costs the guest's two CPUs tens of seconds (importing Python's
# standard library, Typer, Rich and iolab, instruction by emulated instruction): the checks' own
# commands are forked from one process that has imported them once (tests/forkserver.py, as the
# host's tests do; IOLAB_TEST_FRESH=1 starts each afresh). The host's tests start `iolab` as users do.
FORKS = ForkServer()


# Every run is as small as iolab allows: one round of 100 ms cells on a 128 MiB namespace (what
# is checked here is the drive's handling, not its speed; each cell's fio start costs the guest
# about a second beside it). The Ctrl-C run's cells are 1 s, so the run is still measuring when
# the signal comes. So are the enterprise-profile runs' (WRITE_THROUGH): with the drive's write
# cache off each write waits for QEMU to flush the host file, and on a loaded host one 512 B
# write at QD 1 outlasted a 100 ms cell (fio completed no IO; CI on a busy machine). Under emulation on a busy machine an IO can wait out the kernel's 30 s NVMe
# timeout (a split round stalled so): the stall watchdog is set above it. The SATA run's cells
# are 1 s too: QEMU's AHCI under TCG on a host at load 7-17 completed no IO in a 100 ms cell
# (3 of its 4 checks failed so once; all passed alone at lower load). The second namespace's
# run and the sanitize run take the default (enterprise) profile too; they are slc-cache runs, a
# purge and one fill (PURGE_ONLY), which no cell time cuts short.
WRITE_THROUGH = "1s"
# What the second namespace's run and the sanitize run are read for is their purge (and that the
# run goes on beside a mounted namespace): slc-cache is a purge and one sequential fill, one fio
# start, where a quick latency run is ten (under emulation each costs the guest's CPUs seconds
# beyond its 1 s cell: 2-5 s a cell in a boot of 2026-12-02).
PURGE_ONLY = "slc-cache"
# Each run's workload-independent preconditioning (WIPC) writes this × its 128 MiB drive before it
# measures, not the spec's 2× (256 MiB; the split throughput run once per block size): no check
# reads what the WIPC leaves on the drive, only that the run preconditions, measures and records
# (the NVMe run's write counters move in every phase). 0.25 still runs it, one fio start as at 2×.
# Every byte is QEMU writing its image file on the host: a boot took 318 CPU-s with 0.25 against
# 347 with 2× (2026-12-02, back to back at load 10-11).
PRECONDITION = "0.25"


def quick(lane: str, cell_time: str = "100ms") -> list[str]:
    return [
        "--quick",
        "--max-rounds",
        "1",
        "--cell-time",
        cell_time,
        "--no-report",
        "--runs-dir",
        str(RUNS / lane),
        "--stall-timeout",
        "5m",
        "--precondition-factor",
        PRECONDITION,
    ]


def sh(argv: list[str], timeout: float = 1800) -> dict:
    """A program's exit status, output and time; `iolab` forked from FORKS (the Ctrl-C check,
    which signals its own `iolab`, and a fleet's drives, which iolab starts, start afresh)."""
    t0 = time.monotonic()
    try:
        if argv[0] == IOLAB and not os.environ.get("IOLAB_TEST_FRESH"):
            p = FORKS.run(argv[1:], dict(os.environ), timeout)
        else:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = 124, str(e.stdout or ""), f"timed out after {timeout} s"
    except FileNotFoundError:
        rc, out, err = 127, "", f"{argv[0]}: not installed"
    return {"cmd": argv, "rc": rc, "out": out, "err": err, "seconds": round(time.monotonic() - t0, 1)}


SAVING = threading.Lock()


def save(check: str | None = None, result: dict | None = None) -> None:
    """Write RESULTS (with a check's result added: the lanes' threads add theirs under the lock)."""
    with SAVING:
        if check:
            RESULTS["checks"][check] = result
        tmp = OUT / "results.json.tmp"
        tmp.write_text(json.dumps(RESULTS, indent=1))
        tmp.replace(OUT / "results.json")


def run_check(name: str, fn) -> None:
    """Record what a check function returns under its name; an exception is recorded too."""
    if ONLY and name not in ONLY:
        return
    t0 = time.monotonic()
    try:
        result = fn()
    except Exception:
        result = {"error": traceback.format_exc()}
    result["seconds"] = round(time.monotonic() - t0, 1)
    print(f"vm-drives: {name} done in {result['seconds']} s", flush=True)
    save(name, result)


def run_lanes(lanes: dict[str, list[tuple[str, object]]]) -> None:
    """Each lane's checks one after another, the lanes side by side: a lane holds the checks of
    the drives it writes, so no two lanes touch one drive. Under emulation most of a check is
    waiting (an emulated IO, a controller reset) and the guest has two CPUs: lanes overlap it."""

    def lane(name: str, checks: list[tuple[str, object]]) -> None:
        for check, fn in checks:
            run_check(check, fn)
        print(f"vm-drives: lane {name} done", flush=True)

    threads = [threading.Thread(target=lane, args=item) for item in lanes.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def nodes_by_serial() -> dict[str, list[str]]:
    """Block devices by the serial their drive reports (sysfs), whole disks only."""
    found: dict[str, list[str]] = {}
    for d in sorted(Path("/sys/class/block").iterdir()):
        if (d / "partition").exists():
            continue
        serial = None
        for f in (d / "device" / "serial", d / "serial"):
            if f.exists():
                serial = f.read_text().strip()
                break
        if serial is None and (d / "device" / "vpd_pg80").exists():
            raw = (d / "device" / "vpd_pg80").read_bytes()[4:]
            serial = raw.decode(errors="replace").strip("\x00 ")
        if serial:
            found.setdefault(serial, []).append(f"/dev/{d.name}")
    return found


def python_from_image(by_serial: dict[str, list[str]]) -> dict:
    """Bind the copies of Python's files on the disk machine.py made over their paths, so every
    `iolab` started from now on reads them from the guest's page cache, not over 9p."""
    spec = OUT / "python.json"
    if not spec.exists():
        return {}
    spec = json.loads(spec.read_text())
    node = (by_serial.get(spec["serial"]) or [None])[0]
    mnt = Path("/tmp/iolab-vm-python")
    mnt.mkdir(exist_ok=True)
    done = {"mount": sh(["mount", "-o", "ro,noload", node, str(mnt)]) if node else {"rc": 1, "err": "no disk"}}
    if done["mount"]["rc"] == 0:
        # mount(2) itself: a `mount --bind` a path (over a hundred) cost a program start
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
        failed = {}
        for path in spec["paths"]:
            if libc.mount(str(mnt / path.lstrip("/")).encode(), path.encode(), None, 4096, None) != 0:  # MS_BIND
                failed[path] = os.strerror(ctypes.get_errno())
        done.update(bound=len(spec["paths"]) - len(failed), failed=failed)
    return done


def manifest_of(out: str) -> dict | None:
    """The manifest of the run a command's output names ('run directory: X' or '→ X')."""
    m = re.search(r"→ (\S+)", out) or re.search(r"run directory: (\S+)", out)
    if not m:
        return None
    p = Path(m.group(1)) / "manifest.json"
    return {"dir": m.group(1), **json.loads(p.read_text())} if p.exists() else None


def new_run(runs_dir: Path, known: set[Path]) -> Path | None:
    """The run directory that is not among `known` (the one a command just started)."""
    runs = set(runs_dir.glob("*")) - known if runs_dir.exists() else set()
    return next(iter(runs)) if runs else None


# --- the drive's own write-cache switch, read back -------------------------------------------


def nvme_wce(node: str) -> int | None:
    r = sh(["nvme", "get-feature", node, "-f", "6"], timeout=60)
    m = re.search(r"Current value:\s*(?:0x)?([0-9a-f]+)", r["out"])  # zero prints without 0x
    return int(m.group(1), 16) & 1 if m else None


def hdparm_wce(node: str) -> int | None:
    m = re.search(r"write-caching\s*=\s*(\d)", sh(["hdparm", "-W", node], timeout=60)["out"])
    return int(m.group(1)) if m else None


def scsi_wce(node: str) -> int | None:
    """WCE as the kernel reads it from the drive's caching mode page: a rescan makes sd read the
    page again (iolab switches it with SCSI commands the kernel does not watch)."""
    dev = Path("/sys/class/block") / Path(node).name / "device"
    try:
        (dev / "rescan").write_text("1")
        cache = next((dev / "scsi_disk").iterdir()) / "cache_type"
        return {"write back": 1, "write through": 0}.get(cache.read_text().strip())
    except (OSError, StopIteration):
        return None


WCE_READERS = {"nvme": nvme_wce, "sata": hdparm_wce, "scsi": scsi_wce}


class Poller:
    """Reads the write cache from the drive every few seconds while a run goes on (not more
    often: each reading starts a tool, which under emulation takes CPU from the other lanes)."""

    def __init__(self, read, node: str):
        self.read, self.node, self.seen, self.stop = read, node, [], threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self.stop.is_set():
            self.seen.append(self.read(self.node))
            self.stop.wait(5)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def counters(node: str, iface: str) -> dict:
    if iface == "nvme":
        r = sh(["nvme", "smart-log", node, "-o", "json"], timeout=60)
        try:
            j = json.loads(r["out"])
        except ValueError:
            return {"raw": r}
        return {"data_units_written": j.get("data_units_written"), "host_write_commands": j.get("host_write_commands")}
    r = sh(["smartctl", "-A", "-l", "error", "-j", node], timeout=60)
    try:
        j = json.loads(r["out"])
    except ValueError:
        return {"raw": r}
    return {
        "ata_attributes": [a.get("id") for a in (j.get("ata_smart_attributes") or {}).get("table", [])],
        "scsi_write_log": ((j.get("scsi_error_counter_log") or {}).get("write")),
    }


def info_each(nodes: list[str]) -> dict[str, dict]:
    """One `iolab info` of every drive (under emulation each `iolab` start costs the guest's CPUs
    tens of seconds), split into each drive's part: its block starts with its node's line."""
    r = sh([IOLAB, "info", *nodes])
    starts = {n: r["out"].find(f"{n} (") for n in nodes}
    found = sorted(i for i in starts.values() if i >= 0)
    parts = {}
    for n, i in starts.items():
        end = next((j for j in found if j > i), len(r["out"]))
        err = "\n".join(line for line in r["err"].splitlines() if n in line)
        parts[n] = {**r, "rc": 0 if i >= 0 else (r["rc"] or 1), "out": r["out"][i:end] if i >= 0 else "", "err": err}
    return parts


def identify(node: str, iface: str, ctrl: str | None, info: dict) -> dict:
    tools = {
        "lsblk": sh(
            ["lsblk", "-J", "-b", "-d", "-o", "NAME,SIZE,MODEL,SERIAL,REV,LOG-SEC,PHY-SEC,ROTA,TRAN,ZONED", node]
        )
    }
    if iface == "nvme":
        tools["id-ctrl"] = sh(["nvme", "id-ctrl", ctrl, "-o", "json"])
        tools["id-ns"] = sh(["nvme", "id-ns", node, "-o", "json"])
        tools["smart-log"] = sh(["nvme", "smart-log", node, "-o", "json"])
    elif iface == "sata":
        tools["hdparm"] = sh(["hdparm", "-I", node])
    else:
        tools["sg_inq"] = sh(["sg_inq", node])
        tools["sg_readcap"] = sh(["sg_readcap", "--long", node])
        tools["sg_vpd_bdc"] = sh(["sg_vpd", "--page=bdc", node])
    return {"info": info, "tools": tools}


def run_watching(argv: list[str], read, node: str) -> dict:
    before = read(node)
    with Poller(read, node) as poll:
        r = sh(argv)
    return {
        "run": r,
        "wce_before": before,
        "wce_during": poll.seen,
        "wce_after": read(node),
        "manifest": manifest_of(r["out"]),
    }


def main() -> None:
    os.environ["COLUMNS"] = "300"  # iolab's lines (run directories) unfolded
    # iolab from this tree's src (on the Python disk), also where the venv's editable install
    # names another checkout (a git worktree sharing a venv): that one would be read over 9p
    os.environ["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
    OUT.mkdir(parents=True, exist_ok=True)
    RUNS.mkdir(exist_ok=True)
    by_serial = nodes_by_serial()
    RESULTS["by_serial"] = by_serial
    RESULTS["python"] = python_from_image(by_serial)
    RESULTS["uname"] = os.uname().release
    devs = RESULTS["devices"]

    def one(serial: str, i: int = 0) -> str | None:
        nodes = by_serial.get(serial) or []
        return nodes[i] if len(nodes) > i else None

    nv, ns2 = one("IOLABNV1"), None
    two = sorted(by_serial.get("IOLABNV2") or [])
    ns1, ns2 = (two + [None, None])[:2]
    dual = sorted(by_serial.get("IOLABDP1") or [])
    devs.update(
        {
            "nvme": {"node": nv, "iface": "nvme"},
            "nvme-ns2": {"node": ns2, "iface": "nvme", "beside": ns1},
            "nvme-dual": {"node": dual[0] if dual else None, "paths": dual, "iface": "nvme"},
            "nvme-zoned": {"node": one("IOLABZN1"), "iface": "nvme"},
            "sata": {"node": one("IOLABSA1"), "iface": "sata"},
            "scsi": {"node": one("IOLABSC1"), "iface": "scsi"},
        }
    )
    save()

    def ctrl_of(node: str) -> str:
        return re.sub(r"n\d+$", "", node)

    infos: dict[str, dict] = {}

    def identify_check(kind: str):
        d = devs[kind]
        return f"identify-{kind}", lambda: identify(
            d["node"],
            d["iface"],
            ctrl_of(d["node"]) if d["iface"] == "nvme" else None,
            # alone when only this check runs; split as info_all's, whose status is the block's (a
            # zoned drive's `info` exits 3, the status of the refusal it prints, and is still read)
            infos.get(d["node"]) or info_each([d["node"]])[d["node"]],
        )

    def info_all():
        infos.update(info_each([d["node"] for d in devs.values() if d.get("node")]))
        return {"nodes": sorted(infos)}

    mnt = Path("/tmp/iolab-vm-mnt")
    mnt.mkdir(exist_ok=True)
    # read-only, so the namespace's image stays bit-identical and the host can checksum it;
    # mounted before the lanes start: the run on its neighbour namespace needs it mounted
    RESULTS["mount"] = sh(["mount", "-o", "ro,noload", ns1, str(mnt)]) if ns1 else None
    ns2_done = threading.Event()

    def fleet_refused():
        """A fleet of three drives iolab must refuse, none named by the fleet file: the mounted
        namespace, the partitioned SATA disk and the SCSI disk with a signature, an NVMe, an ATA
        and a SCSI drive. Each drive's `iolab run` is refused by its own check before it writes
        (the tests check each reason and the images), and the fleet names each drive by the model
        and serial it reports (nvme-cli, hdparm, sg VPD page 80h). One fleet, not a run per
        drive, and no more drives than the three kinds: a fleet's drives start `iolab` afresh
        (not forked), and under emulation each start costs the guest's CPUs tens of seconds."""
        nodes = [ns1, one("IOLABSA2"), one("IOLABSC2")]
        f = Path("/tmp/iolab-vm-fleet.toml")
        f.write_text("".join(f'[[drive]]\ntarget = "{n}"\n' for n in nodes))
        r = sh([IOLAB, "run", "latency", "--fleet", str(f), *quick("fleet")])
        states = sorted((RUNS / "fleet" / "fleets").glob("*/fleet.json"))
        lsblk = sh(["lsblk", "-J", "-d", "-o", "PATH,MODEL,SERIAL", *nodes])
        members = json.loads(states[-1].read_text())["members"] if states else None
        for m in members or []:  # what each drive's `iolab run` printed (its stderr)
            log = states[-1].parent / "drives" / m["name"] / "log.txt"
            m["log"] = log.read_text(errors="replace") if log.exists() else None
        return {**r, "members": members, "lsblk": lsblk}

    def zoned_refused():
        """The host-managed zoned namespace, the fourth drive iolab must refuse: its own `iolab
        run` (forked, as the checks' commands are; an NVMe drive is named in the fleet already)."""
        runs = RUNS / "zoned"
        r = sh([IOLAB, "run", "latency", "-t", devs["nvme-zoned"]["node"], *quick("zoned")])
        return {"run": r, "runs": sorted(str(p) for p in runs.glob("*")) if runs.exists() else []}

    def nvme_run():
        # enterprise profile: write cache disabled during the run; the drive's own purge (format)
        r = run_watching(
            [IOLAB, "run", "latency", "-t", nv, "--profile", "enterprise", *quick("nvme", WRITE_THROUGH)], nvme_wce, nv
        )
        r["smart_after"] = counters(nv, "nvme")
        return r

    def nvme_sanitize():
        # QEMU 7.2 advertises no sanitize action: the explicit method must say so, not skip it
        r = sh([IOLAB, "run", PURGE_ONLY, "-t", nv, "--purge", "nvme-sanitize", *quick("nvme", WRITE_THROUGH)])
        return {"run": r, "manifest": manifest_of(r["out"])}

    def nvme_ctrl_c():
        before = nvme_wce(nv)
        runs = RUNS / "nvme"
        known = set(runs.glob("*"))
        # the run names its drive through a link, which then points at another drive: resume
        # must see that the drive is not the one the run wrote to
        link = Path("/dev/iolab-vm-drive")
        link.unlink(missing_ok=True)
        link.symlink_to(nv)
        p = subprocess.Popen(
            [IOLAB, "run", "latency", "-t", str(link), "--profile", "enterprise", *quick("nvme", "1s")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen, deadline = [], time.monotonic() + 600
        # interrupt once the run has measured a cell (its cache setting is in place by then)
        while time.monotonic() < deadline and p.poll() is None:
            seen.append(nvme_wce(nv))
            run = new_run(runs, known)
            if run and list((run / "raw").glob("main-r01-c00-*.json")):
                break
            time.sleep(3)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=600)
        after = nvme_wce(nv)
        run = manifest_of(out)
        # the other drive is the namespace of this lane's ns2 run, done before this check
        ns2_done.wait(3600)
        link.unlink()
        link.symlink_to(ns2)
        elsewhere = sh([IOLAB, "resume", run["dir"], "--no-report"]) if run else None
        link.unlink()
        link.symlink_to(nv)
        resumed = sh([IOLAB, "resume", run["dir"], "--no-report"]) if run else None
        return {
            "wce_before": before,
            "wce_during": seen,
            "wce_after": after,
            "rc": p.returncode,
            "out": out,
            "err": err,
            "manifest": run,
            "resume_elsewhere": elsewhere,
            "resume": resumed,
            "resumed_manifest": json.loads((Path(run["dir"]) / "manifest.json").read_text()) if run else None,
        }

    def nvme_ns2_run():
        try:
            r = {"run": sh([IOLAB, "run", PURGE_ONLY, "-t", ns2, *quick("ns2", WRITE_THROUGH)])}
        finally:
            ns2_done.set()
        r["manifest"] = manifest_of(r["run"]["out"])
        return r

    def sata_run():
        sata = devs["sata"]["node"]
        # client profile: write cache enabled during the run; switched off first to see it change
        off = sh(["hdparm", "-W0", sata])
        r = run_watching(
            [IOLAB, "run", "latency", "-t", sata, "--profile", "client", *quick("sata", WRITE_THROUGH)],
            hdparm_wce,
            sata,
        )
        return {"set_off": off, **r, "smart": counters(sata, "sata")}

    def scsi_run():
        scsi = devs["scsi"]["node"]
        r = run_watching(
            [IOLAB, "run", "latency", "-t", scsi, "--profile", "enterprise", *quick("scsi", WRITE_THROUGH)],
            scsi_wce,
            scsi,
        )
        return {**r, "smart": counters(scsi, "scsi")}

    def dual_run():
        a, b = (dual + [None, None])[:2]
        # throughput (4 cells at QD32, split by queue depth over the paths), not iops: its 56 cells
        # took 900 s of a 2,330 s boot under emulation, two fio starts each, and the split is the same
        # 1 s cells: with 100 ms ones a path completed no IO in a round once (a fresh clone at load 11-14)
        r = {"run": sh([IOLAB, "run", "throughput", "-t", a, "--paths", f"{a},{b}", *quick("dual", WRITE_THROUGH)])}
        r["manifest"] = manifest_of(r["run"]["out"])
        return r

    if ONLY and "nvme-ns2-run" not in ONLY:
        ns2_done.set()
    # First what only reads: one `iolab info` of every drive and the zoned drive's refusal beside
    # the fleet of refused drives (that is mostly starting `iolab`, CPU the guest's two CPUs
    # share), then each drive's own tools. Then the runs in two lanes: more runs writing at once
    # starve the emulated controllers (IO timeouts, resets) and each run waits longer.
    run_lanes(
        {
            "info": [("info-all", info_all), ("zoned-refused", zoned_refused)],
            "fleet": [("fleet-refused", fleet_refused)],
        }
    )
    run_lanes({"identify": [identify_check(k) for k in devs if devs[k].get("node")]})
    run_lanes(
        {
            # the split throughput run (two purges and WIPCs) is the longest: its lane takes one latency run less
            "nvme": [
                ("nvme-run", nvme_run),
                ("nvme-sanitize", nvme_sanitize),
                ("nvme-ns2-run", nvme_ns2_run),
                ("nvme-ctrl-c", nvme_ctrl_c),
            ],
            "others": [("sata-run", sata_run), ("scsi-run", scsi_run), ("dual-run", dual_run)],
        }
    )

    FORKS.stop()
    RESULTS["dmesg"] = sh(["dmesg"])["out"][-20000:]  # the drivers' view: timeouts, resets
    # one file over the 9p share (machine.boot unpacks it): copied file by file, each a few 9p
    # round trips under emulation, its ~600 files took 100 s of the boot
    with tarfile.open(OUT / "runs.tar.tmp", "w") as tar:
        tar.add(RUNS, arcname="runs")
    (OUT / "runs.tar.tmp").replace(OUT / "runs.tar")
    RESULTS["finished"] = True
    save()


if __name__ == "__main__":
    main()
    # Power off at once: an emulated controller the kernel keeps resetting can hold up a clean
    # shutdown (and a sync) for as long as the host waits. The results are on the share by now.
    Path("/proc/sysrq-trigger").write_text("o")
