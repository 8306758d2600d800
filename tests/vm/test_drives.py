"""iolab on emulated NVMe, SATA and SCSI drives under a real Linux kernel (QEMU, real drivers):
what `iolab info` reports against the drive tools, the safety checks, purge, write cache, wear
counters, Ctrl-C and resume, and a run split over two controllers' paths to one namespace.

Everything ran once inside the guest (guest.py, one boot per session, conftest.py); these
tests read what it recorded, so each failure names the device and the check."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.vm]

IOLAB = str(Path(sys.executable).parent / "iolab")
KINDS = ("nvme", "nvme-ns2", "nvme-dual", "nvme-zoned", "sata", "scsi")


def info_fields(text: str) -> dict[str, str]:
    """`iolab info`'s 'name  value' lines."""
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^  (\w+)\s+(.*)$", text, re.M)}


def _json(r: dict) -> dict:
    assert r["rc"] == 0, f"$ {' '.join(r['cmd'])} -> exit {r['rc']}: {r['err']}"
    return json.loads(r["out"])


def _hdparm(text: str, label: str) -> str:
    m = re.search(rf"^\s*{label}:\s*(.*?)\s*$", text, re.M)
    assert m, f"hdparm -I printed no {label!r}"
    return " ".join(m.group(1).split())


def _sg_inq(text: str, label: str) -> str:
    m = re.search(rf"^\s*{label}:\s*(.*?)\s*$", text, re.M)
    assert m, f"sg_inq printed no {label!r}"
    return m.group(1)


@pytest.mark.parametrize("kind", KINDS)
def test_info_is_what_the_drive_reports(guest, kind):
    """`iolab info` on the real driver: identity, capacity, block sizes, rotational, interface,
    each as the drive's own tool (nvme-cli, hdparm, sg3-utils) and lsblk give it."""
    dev = guest.results["devices"][kind]
    got = guest.check(f"identify-{kind}")
    assert got["info"]["rc"] == 0, got["info"]["err"]
    info = info_fields(got["info"]["out"])
    blk = _json(got["tools"]["lsblk"])["blockdevices"][0]
    assert int(info["capacity_bytes"]) == int(blk["size"])
    assert int(info["logical_sector"]) == int(blk["log-sec"])
    assert int(info["physical_sector"]) == int(blk["phy-sec"])
    assert info["interface"] == dev["iface"]
    assert info.get("zoned") == (None if blk["zoned"] == "none" else blk["zoned"])
    if dev["iface"] == "nvme":
        ctrl = _json(got["tools"]["id-ctrl"])
        assert (info["model"], info["serial"], info["firmware"]) == tuple(
            " ".join(ctrl[k].split()) for k in ("mn", "sn", "fr")
        )
        ns = _json(got["tools"]["id-ns"])
        lbaf = ns["lbafs"][ns["flbas"] & 0xF]
        assert int(info["logical_sector"]) == 1 << lbaf["ds"]
        assert int(info["capacity_bytes"]) == ns["nsze"] << lbaf["ds"]
        assert info["write_cache"] == ("enabled" if ctrl["vwc"] & 1 else "disabled")
        assert info["rotational"] == str(bool(int(blk["rota"])))  # the kernel's flag is NVMe's fact
    elif dev["iface"] == "sata":
        text = got["tools"]["hdparm"]["out"]
        assert (info["model"], info["serial"], info["firmware"]) == (
            _hdparm(text, "Model Number"),
            _hdparm(text, "Serial Number"),
            _hdparm(text, "Firmware Revision"),
        )
        # QEMU's ide-hd gives no rotation rate (IDENTIFY word 217): the kernel's '1' is only its default
        assert "Nominal Media Rotation Rate" not in text and "rotational" not in info
    else:
        text = got["tools"]["sg_inq"]["out"]
        assert info["model"] == _sg_inq(text, "Product identification")
        assert info["firmware"] == _sg_inq(text, "Product revision level")
        assert info["serial"] == _sg_inq(text, "Unit serial number")
        m = re.search(r"Logical block length=(\d+) bytes", got["tools"]["sg_readcap"]["out"])
        assert m and int(m.group(1)) == int(info["logical_sector"])
        assert "rotation rate is not reported" in got["tools"]["sg_vpd_bdc"]["out"] and "rotational" not in info


def _refused(guest, serial: str) -> dict:
    """The fleet-refused check's drive whose reported serial is `serial` (guest.py's fleet of the
    drives iolab must refuse: each drive's own `iolab run`, started by the fleet)."""
    c = guest.check("fleet-refused")
    assert c["members"], c["err"][-3000:]
    return next(m for m in c["members"] if m["name"].endswith(f"_{serial}"))


@pytest.mark.parametrize(
    "serial, check", [("IOLABSA2", "partitions"), ("IOLABSC2", "signature"), ("IOLABNV2", "mounted")]
)
def test_unsafe_drive_is_refused_and_left_alone(guest, serial, check):
    """A disk with a partition table, one with a filesystem signature and a mounted namespace:
    refused by the named check before anything is written (their images are bit-identical)."""
    m = _refused(guest, serial)
    assert m["state"] == "refused" and m["exit_code"] != 0, m
    assert "Traceback" not in (m["log"] or "") and "Traceback" not in m["error"]
    assert f"{check}:" in " ".join(m["error"].split()), m["error"]
    assert guest.results["mount"]["rc"] == 0
    for image in ("sata-parted", "scsi-fs", "nvme2-ns1"):
        assert guest.host["sums_after"][image] == guest.host["sums_before"][image], f"{image} was changed"


def test_zoned_namespace_is_refused_with_the_reason(guest):
    """A host-managed zoned namespace takes only sequential writes at each zone's write
    pointer: iolab says so before it purges or writes anything, and no override changes that."""
    c = guest.check("zoned-refused")
    r = c["run"]
    err = " ".join(r["err"].split())
    assert r["rc"] == 3 and "Traceback" not in err + r["out"], err
    assert "zoned" in err and "host-managed" in err, err
    assert c["runs"] == []  # refused before its run directory was made


def _purges(check: dict) -> list[dict]:
    m = check["manifest"]
    assert m is not None, check["run"]["err"] if "run" in check else check
    return m["purges"]


def test_namespace_beside_a_mounted_one(guest):
    """The free namespace of a controller whose other namespace is mounted: the run goes on.
    QEMU's controller formats namespaces one by one (id-ctrl FNA bit 0 is 0), so 'auto' formats
    only the target (a controller that formats all together gets blkdiscard instead); the
    mounted namespace is bit-identical afterwards."""
    c = guest.check("nvme-ns2-run")
    assert c["run"]["rc"] == 0, c["run"]["err"]
    ctrl = _json(guest.check("identify-nvme-ns2")["tools"]["id-ctrl"])
    assert ctrl["fna"] & 1 == 0
    (p,) = _purges(c)
    assert p["ok"] and p["method"] == "nvme-format" and "formatting namespace:2" in p["detail"], p
    assert guest.host["sums_after"]["nvme2-ns1"] == guest.host["sums_before"]["nvme2-ns1"]


@pytest.mark.parametrize(
    "check, method, ok, why",
    [
        ("nvme-run", "nvme-format", True, None),  # id-ctrl OACS bit 1: Format NVM
        ("sata-run", "blkdiscard", True, "does not support the ATA Security feature set"),  # QEMU's IDENTIFY has none
        # QEMU's scsi-hd accepts FORMAT UNIT, then answers TEST UNIT READY with a Hardware Error
        ("scsi-run", "sg-format", False, "'Hardware Error' after FORMAT UNIT"),
    ],
)
def test_purge_by_the_drives_own_command(guest, check, method, ok, why):
    """'auto' picks the drive's own erase where the drive advertises it, records what ran, and
    says why where it falls back or the drive reports failure, on the terminal too."""
    c = guest.check(check)
    assert c["run"]["rc"] == 0, c["run"]["err"]
    (p,) = _purges(c)
    assert p["ok"] == ok and p["method"] == method, p
    if not ok:
        assert any("purge failed" in n for n in c["manifest"]["noncompliance"])
    if method == "nvme-format":
        ctrl = _json(guest.check("identify-nvme")["tools"]["id-ctrl"])
        assert ctrl["oacs"] & 0x2 and ctrl["sanicap"] == 0  # what QEMU 7.2 advertises
    assert "$ " in p["detail"]  # the command that ran, as recorded
    if why:
        assert why in p["detail"] and (p["detail"].startswith("auto:") or not ok)
        assert why in " ".join(c["run"]["out"].split())


def test_unsupported_sanitize_says_so(guest):
    """QEMU 7.2's controller advertises no sanitize action (SANICAP 0): `--purge nvme-sanitize`
    says so, in the manifest and on the terminal, and the run is labelled not from FOB."""
    c = guest.check("nvme-sanitize")
    out = " ".join((c["run"]["out"] + c["run"]["err"]).split())
    assert "SANICAP" in out, out[-2000:]
    m = c.get("manifest") or {}
    (p,) = m["purges"]
    assert not p["ok"] and p["method"] == "nvme-sanitize" and "SANICAP is 0" in p["detail"]
    assert any("purge failed" in n for n in m["noncompliance"])


@pytest.mark.parametrize("check, wanted", [("nvme-run", 0), ("sata-run", 1), ("scsi-run", 0)])
def test_write_cache_switched_and_restored(guest, check, wanted):
    """The profile's write cache (enterprise: off, client: on), read back from the drive while
    the run goes on (nvme get-feature 6, hdparm -W, the SCSI caching page), and the drive's own
    setting back at the end."""
    c = guest.check(check)
    assert c["run"]["rc"] == 0, c["run"]["err"]
    before, during, after = c["wce_before"], [v for v in c["wce_during"] if v is not None], c["wce_after"]
    assert before is not None and during, c
    # the poller's last reading may come after the run put the setting back
    assert wanted in during and set(during) <= {before, wanted}
    assert after == before, f"write cache left {after} (was {before})"
    assert "restored" in c["manifest"]["write_cache"]


def test_ctrl_c_restores_write_cache_and_resume_checks_the_drive(guest):
    """Ctrl-C in the middle of an enterprise run: the drive's write cache is on again; `iolab
    resume` refuses when the run's device path now leads to another drive (by its serial) and
    finishes the run on the drive it started on."""
    c = guest.check("nvme-ctrl-c")
    assert 0 in c["wce_during"], c["wce_during"]
    assert c["rc"] == 130, c["err"]
    assert c["wce_after"] == c["wce_before"] == 1
    assert c["manifest"]["state"] == "interrupted"
    wrong = c["resume_elsewhere"]  # the run's link now points at another namespace
    said = " ".join(wrong["err"].split())
    assert wrong["rc"] != 0 and "Traceback" not in said
    assert "IOLABNV1" in said and "IOLABNV2" in said, said
    r = c["resume"]
    assert r["rc"] == 0, r["err"]
    resumed = c["resumed_manifest"]
    assert resumed["state"] == "complete"
    ident = resumed["target"]["identity"]
    assert ident["serial"] == "IOLABNV1" and ident["model"] == "QEMU NVMe Ctrl"


def test_wear_counters_before_and_after(guest):
    """QEMU's NVMe SMART log counts data units written: each phase's host writes are recorded
    from it; the media counter is not reported (no vendor log), and said so."""
    c = guest.check("nvme-run")
    phases = c["manifest"]["endurance"]
    assert phases, "no write counters recorded"
    for rec in phases.values():
        assert rec["end"]["host_bytes"] >= rec["start"]["host_bytes"]
        assert rec["end"]["media_bytes"] is None
    assert sum(r["end"]["host_bytes"] - r["start"]["host_bytes"] for r in phases.values()) > 0


@pytest.mark.parametrize("check", ["sata-run", "scsi-run"])
def test_wear_not_reported_where_the_drive_has_no_counter(guest, check):
    """QEMU's ATA SMART table has no attribute 241 (LBAs written) and its SCSI disk no write
    error counter log: no counters are recorded, none are made up."""
    c = guest.check(check)
    assert c["run"]["rc"] == 0, c["run"]["err"]
    assert 241 not in (c["smart"].get("ata_attributes") or []) and not c["smart"].get("scsi_write_log")
    assert c["manifest"]["endurance"] == {}


def test_split_over_two_controllers(guest, tmp_path):
    """One namespace behind two controllers (an NVM subsystem, native multipath off): a quick
    throughput run split over both paths completes with per-path figures, and is reported."""
    c = guest.check("dual-run")
    paths = guest.results["devices"]["nvme-dual"]["paths"]
    assert len(paths) == 2
    lost = [line for line in guest.results.get("dmesg", "").splitlines() if re.search(r"nvme\d+: I/O .*timeout", line)]
    if c["run"]["rc"] != 0 and lost:
        # QEMU 7.2 under TCG sometimes never completes an IO on the subsystem's second
        # controller (the kernel aborts it and resets the controller every 30 s): the run must
        # then fail naming the path, and the test cannot show the split figures.
        said = " ".join(c["run"]["err"].split())
        assert "of 2 paths failed" in said and any(f"path {p}" in said for p in paths), said
        pytest.xfail(f"the emulated controller lost IO (guest dmesg: {lost[-1].strip()})")
    assert c["run"]["rc"] == 0, c["run"]["err"][-3000:]
    assert sorted(leg["path"] for leg in c["manifest"]["split"]) == paths
    assert "2 paths" in c["run"]["out"] or all(p in c["run"]["out"] for p in paths)
    run = guest.run_dir(c["manifest"])
    p = subprocess.run([IOLAB, "report", str(run), "--out", str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    (html,) = tmp_path.glob("*.html")
    text = html.read_text()
    assert "Per-Host / Per-Path Breakdown" in text and all(p in text for p in paths)


@pytest.mark.parametrize("check", ["nvme-run", "sata-run", "scsi-run", "dual-run"])
def test_runs_are_reported(guest, check, tmp_path):
    """The quick latency runs and the split throughput run, reported here from their run directories
    (a run directory reports on any machine): the HTML and PDF, with the drive's identity."""
    c = guest.check(check)
    assert c["manifest"], c["run"]["err"][-3000:]
    run = guest.run_dir(c["manifest"])
    p = subprocess.run([IOLAB, "report", str(run), "--out", str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    (html,) = tmp_path.glob("*.html")
    assert list(tmp_path.glob("*.pdf"))
    text = html.read_text()
    facts = c["manifest"]["target"]["facts"]
    assert facts["serial"] and facts["serial"] in text and facts["model"] in text


def test_a_fleets_drives_are_named_by_the_model_and_serial_they_report(guest):
    """Drives the fleet file does not name were named by their node (dev_nvme0n1), which stays with
    the slot: now by the model and serial each reports (sysfs, nvme-cli, hdparm, sg VPD page 80h),
    so a drive's name follows it across runs, slots and hosts. (Each run is refused: the drives
    are the ones iolab must not write.)"""
    from iolab.api.fleetfile import serial_name

    c = guest.check("fleet-refused")
    assert c["members"], c["err"][-3000:]
    told = {d["path"]: d for d in json.loads(c["lsblk"]["out"])["blockdevices"]}
    names = [m["name"] for m in c["members"]]
    assert names == [serial_name(told[m["target"]]["model"], told[m["target"]]["serial"]) for m in c["members"]]
    assert [n.rsplit("_", 1)[1] for n in names] == ["IOLABNV2", "IOLABSA2", "IOLABSC2"], names
    assert {m["state"] for m in c["members"]} == {"refused"} and c["rc"] == 3, c["out"][-3000:]
