"""The drive's own write counters: parsing recorded `nvme smart-log -o json` and `smartctl -j`
output (written by hand from the formats nvme-cli and smartctl document), and the reading
through targets/host.py, the seam tests fake."""

from __future__ import annotations

import json
import os
import stat

from iolab.targets import host, wear
from iolab.targets.host import CommandResult

NVME = {
    "critical_warning": 0,
    "temperature": 310,
    "avail_spare": 100,
    "percent_used": 2,
    "data_units_read": 1523412,
    "data_units_written": 2048000,
    "host_read_commands": 91233411,
    "host_write_commands": 80012121,
    "power_cycles": 41,
    "power_on_hours": 5012,
}

SATA = {
    "device": {"name": "/dev/sda", "type": "sat"},
    "logical_block_size": 512,
    "ata_smart_attributes": {
        "revision": 1,
        "table": [
            {"id": 9, "name": "Power_On_Hours", "value": 98, "raw": {"value": 9120, "string": "9120"}},
            {"id": 241, "name": "Total_LBAs_Written", "value": 99, "raw": {"value": 40000000, "string": "40000000"}},
            {"id": 249, "name": "NAND_Writes_1GiB", "value": 100, "raw": {"value": 31, "string": "31"}},
        ],
    },
}

SATA_233_NO_UNIT = {
    "logical_block_size": 4096,
    "ata_smart_attributes": {
        "table": [
            {"id": 233, "name": "Media_Wearout_Indicator", "raw": {"value": 99}},  # Intel: wear, not writes
            {"id": 241, "name": "Total_LBAs_Written", "raw": {"value": 1000}},
        ]
    },
}

SAS = {
    "device": {"type": "scsi", "protocol": "SCSI"},
    "scsi_error_counter_log": {
        "read": {"gigabytes_processed": "812.331", "total_uncorrected_errors": 0},
        "write": {"gigabytes_processed": "123.456", "total_uncorrected_errors": 0},
    },
}


def test_nvme_data_units_are_thousands_of_512_byte_units():
    c = wear.parse_nvme_smart_log(json.dumps(NVME))
    assert c.host_bytes == 2048000 * 512_000 and c.media_bytes is None
    assert wear.parse_nvme_smart_log(json.dumps({"temperature": 300})) is None
    assert wear.parse_nvme_smart_log("not json") is None


def test_sata_host_lbas_and_nand_writes_with_their_unit():
    c = wear.parse_smartctl(json.dumps(SATA))
    assert c.host_bytes == 40000000 * 512
    assert c.media_bytes == 31 * (1 << 30)
    assert "249 NAND_Writes_1GiB" in c.source


def test_an_attribute_without_a_stated_unit_is_not_read_as_media_writes():
    c = wear.parse_smartctl(json.dumps(SATA_233_NO_UNIT))
    assert c.host_bytes == 1000 * 4096 and c.media_bytes is None


def test_sas_write_gigabytes_processed():
    c = wear.parse_smartctl(json.dumps(SAS))
    assert c.host_bytes == 123_456_000_000 and c.media_bytes is None
    assert wear.parse_smartctl(json.dumps({"device": {"type": "scsi"}})) is None


def fake_block_device(monkeypatch, answers, vendor=None):
    """answers: (exit status, JSON) of smart-log / smartctl, in call order; vendor: the same per
    NVMe vendor plugin ("ocp", "intel"), which otherwise fail as on a drive without the log."""
    calls = []
    blk = os.stat_result((stat.S_IFBLK | 0o660, 0, 0, 1, 0, 0, 0, 0, 0, 0))
    monkeypatch.setattr(host, "stat_or_none", lambda p: blk)
    vendor = vendor or {}

    def run(argv, timeout=None):
        calls.append(tuple(argv))
        if argv[0] == "nvme" and argv[1] in ("ocp", "intel"):
            out = vendor[argv[1]].pop(0) if vendor.get(argv[1]) else (1, {})
        else:
            out = answers.pop(0)
        return CommandResult(tuple(argv), out[0], json.dumps(out[1]).encode(), "")

    monkeypatch.setattr(host, "run_command", run)
    return calls


def test_snapshots_around_a_phase_give_its_writes(monkeypatch):
    later = dict(NVME, data_units_written=NVME["data_units_written"] + 10)
    calls = fake_block_device(monkeypatch, [(0, NVME), (0, later)])
    record: dict = {}
    wear.snapshot(record, "write", "start", "/dev/nvme0n1")
    wear.snapshot(record, "write", "end", "/dev/nvme0n1")
    assert calls[0] == ("nvme", "smart-log", "/dev/nvme0n1", "-o", "json")
    assert wear.phase_writes(record["write"])[:2] == (10 * 512_000, None)


# nvme-cli 2.x JSON of the OCP datacenter SMART extended log (C0h) and of Intel's additional
# SMART log (written by hand from the plugins' printers)
OCP = {
    "Physical media units written": {"hi": 0, "lo": 527805403860992},
    "Physical media units read": {"hi": 0, "lo": 467772386381824},
    "Bad user nand blocks - Raw": 0,
}
INTEL = {
    "Device stats": {
        "program_fail_count": {"normalized": 100, "raw": 0},
        "nand_bytes_written": {"normalized": 100, "raw": 3000},
        "host_bytes_written": {"normalized": 100, "raw": 1500},
    }
}


def test_nvme_vendor_logs_give_media_writes():
    assert wear.parse_ocp_smart_add_log(json.dumps(OCP)) == 527805403860992
    assert (
        wear.parse_ocp_smart_add_log(json.dumps({"Physical media units written": {"hi": 1, "lo": 5}})) == (1 << 64) + 5
    )
    assert wear.parse_ocp_smart_add_log(json.dumps({"Physical media units written": 77})) == 77  # newer: one number
    assert wear.parse_ocp_smart_add_log(json.dumps({"Physical media units written": {"lo": 5}})) is None
    assert wear.parse_intel_smart_log_add(json.dumps(INTEL)) == 3000 * 32 * (1 << 20)
    assert wear.parse_intel_smart_log_add(json.dumps({"Device stats": {}})) is None
    assert wear.parse_intel_smart_log_add("Error: not an Intel drive") is None


def test_nvme_media_writes_from_the_first_vendor_log_the_drive_has(monkeypatch):
    calls = fake_block_device(
        monkeypatch,
        [(0, NVME), (0, NVME), (0, NVME)],
        {"ocp": [(0, OCP), (1, {}), (1, {})], "intel": [(0, INTEL), (1, {})]},
    )
    c = wear.read_counters("/dev/nvme0n1")
    assert (c.host_bytes, c.media_bytes) == (2048000 * 512_000, 527805403860992)
    assert "ocp smart-add-log" in c.source and not any(a[1] == "intel" for a in calls)
    c = wear.read_counters("/dev/nvme0n1")  # no OCP log: Intel's
    assert c.media_bytes == 3000 * 32 * (1 << 20) and "intel smart-log-add" in c.source
    assert calls[-1] == ("nvme", "intel", "smart-log-add", "/dev/nvme0n1", "-j")
    c = wear.read_counters("/dev/nvme0n1")  # neither: host writes only, media not guessed
    assert c.host_bytes == 2048000 * 512_000 and c.media_bytes is None and "ocp" not in c.source


def test_smartctl_answers_even_with_a_nonzero_status(monkeypatch):
    # smartctl's exit status is a bit mask (e.g. 4: a SMART command failed); the JSON still holds
    calls = fake_block_device(monkeypatch, [(4, SATA), (127, {})])
    assert wear.read_counters("/dev/sda").host_bytes == 40000000 * 512
    assert calls[0][:2] == ("smartctl", "-A")
    assert wear.read_counters("/dev/sda") is None  # smartctl not installed


def test_no_counters_for_files(tmp_path):
    f = tmp_path / "x.img"
    f.write_bytes(b"")
    record: dict = {}
    wear.snapshot(record, "write", "start", str(f))
    assert record == {} and wear.phase_writes({"start": {"host_bytes": 1}}) is None


def test_the_endurance_page_uses_the_drive_counters_where_reported(tmp_path):
    from iolab.pages.report.char_endurance import NOT_REPORTED, endurance_pages, endurance_rows
    from iolab.pages.report.rundata import RunData
    from tests.unit.test_report import DriveEngine, record

    run = record(
        tmp_path / "runs",
        "mixed-matrix",
        DriveEngine(),
        settings=(("qds", "1"), ("write_pcts", "100"), ("pe_cycles", "3000")),
    )
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["endurance"] == {}  # a scripted target has no counters
    assert [r[2] for r in endurance_rows(RunData.load(run, run))] == [NOT_REPORTED] * 2
    manifest["endurance"] = {
        "mixed": {
            "start": {"host_bytes": 10**9, "media_bytes": 2 * 10**9, "source": "s"},
            "end": {"host_bytes": 5 * 10**9, "media_bytes": 12 * 10**9, "source": "s"},
        }
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    data = RunData.load(run, run)
    rows = endurance_rows(data)
    assert rows[-1] == ("mixed (its purge and preconditioning included)", "4.000 GB", "10.00 GB", "2.50")
    facts = dict(endurance_pages(data)[0].blocks[1].rows)
    assert facts["WAF the ratings rest on"].startswith(
        "2.50 over 4.000 GB host writes; basis: the drive's own counters"
    )


def test_simulated_presets_carry_their_rating_and_the_options_override_it(tmp_path):
    import dataclasses

    from iolab.pages.report.char_endurance import endurance_pages
    from iolab.pages.report.rundata import RunData
    from iolab.targets.sim_facts import describe_target
    from tests.unit.test_report import DriveEngine, record, target

    _, sas = describe_target("enterprise-sas", {})
    assert (sas.rated_pe_cycles, sas.warranty_years) == (30_000, 5.0)
    _, hdd = describe_target("sas-15k-hdd", {})
    assert (hdd.rated_pe_cycles, hdd.warranty_years) == (None, None)  # no flash

    def facts(settings, **rating):
        tgt = target()
        tgt = dataclasses.replace(tgt, facts=dataclasses.replace(tgt.facts, **rating))
        run = record(
            tmp_path / f"runs{len(list(tmp_path.iterdir()))}",
            "mixed-matrix",
            DriveEngine(),
            tgt,
            settings=(("qds", "1"), ("write_pcts", "100"), *settings),
        )
        return dict(endurance_pages(RunData.load(run, run))[0].blocks[1].rows)

    f = facts((), rated_pe_cycles=3000, warranty_years=5.0)
    assert f["rated P/E cycles"] == "3,000 (source: preset)" and f["warranty"] == "5 years (source: preset)"
    f = facts((("pe_cycles", "1000"), ("warranty_years", "3")), rated_pe_cycles=3000, warranty_years=5.0)
    assert (
        f["rated P/E cycles"] == "1,000 (source: --pe-cycles)" and f["warranty"] == "3 years (source: --warranty-years)"
    )
    f = facts(())  # a drive that states no rating: nothing is assumed
    assert f["rated P/E cycles"].startswith("not reported") and f["TBW = flash capacity × P/E ÷ WAF"].startswith(
        "not reported"
    )
