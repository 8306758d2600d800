"""The drive's own write counters: parsing recorded `nvme smart-log -o json` and `smartctl -j`
output (written by hand from the formats nvme-cli and smartctl document), and the reading
through targets/host.py, the seam tests fake."""

from __future__ import annotations

import json
import os
import stat

from iolab.targets import host, wear
from iolab.targets.host import CommandResult

NVME = {"critical_warning": 0, "temperature": 310, "avail_spare": 100, "percent_used": 2,
        "data_units_read": 1523412, "data_units_written": 2048000, "host_read_commands": 91233411,
        "host_write_commands": 80012121, "power_cycles": 41, "power_on_hours": 5012}

SATA = {"device": {"name": "/dev/sda", "type": "sat"}, "logical_block_size": 512, "ata_smart_attributes": {
    "revision": 1, "table": [
        {"id": 9, "name": "Power_On_Hours", "value": 98, "raw": {"value": 9120, "string": "9120"}},
        {"id": 241, "name": "Total_LBAs_Written", "value": 99, "raw": {"value": 40000000, "string": "40000000"}},
        {"id": 249, "name": "NAND_Writes_1GiB", "value": 100, "raw": {"value": 31, "string": "31"}}]}}

SATA_233_NO_UNIT = {"logical_block_size": 4096, "ata_smart_attributes": {"table": [
    {"id": 233, "name": "Media_Wearout_Indicator", "raw": {"value": 99}},  # Intel: wear, not writes
    {"id": 241, "name": "Total_LBAs_Written", "raw": {"value": 1000}}]}}

SAS = {"device": {"type": "scsi", "protocol": "SCSI"}, "scsi_error_counter_log": {
    "read": {"gigabytes_processed": "812.331", "total_uncorrected_errors": 0},
    "write": {"gigabytes_processed": "123.456", "total_uncorrected_errors": 0}}}


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


def fake_block_device(monkeypatch, answers):
    calls = []
    blk = os.stat_result((stat.S_IFBLK | 0o660, 0, 0, 1, 0, 0, 0, 0, 0, 0))
    monkeypatch.setattr(host, "stat_or_none", lambda p: blk)

    def run(argv, timeout=None):
        calls.append(tuple(argv))
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
    from iolab.report.char_series import NOT_REPORTED, endurance_pages, endurance_rows
    from iolab.report.rundata import RunData
    from tests.unit.test_report import DriveEngine, record

    run = record(tmp_path / "runs", "mixed-matrix", DriveEngine(), settings=(("qds", "1"), ("write_pcts", "100"),
                                                                               ("pe_cycles", "3000")))
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["endurance"] == {}  # a scripted target has no counters
    assert [r[2] for r in endurance_rows(RunData.load(run, run))] == [NOT_REPORTED] * 2
    manifest["endurance"] = {"mixed": {"start": {"host_bytes": 10**9, "media_bytes": 2 * 10**9, "source": "s"},
                                       "end": {"host_bytes": 5 * 10**9, "media_bytes": 12 * 10**9, "source": "s"}}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    data = RunData.load(run, run)
    rows = endurance_rows(data)
    assert rows[-1] == ("mixed (its purge and preconditioning included)", "4.000 GB", "10.00 GB", "2.50")
    facts = dict(endurance_pages(data)[0].blocks[1].rows)
    assert facts["measured WAF over the run"].startswith("2.50 over 4.000 GB")
