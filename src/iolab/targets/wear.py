"""A drive's own write counters (host writes and, where it reports them, media writes), read
before and after each phase so a report can give host vs media writes and the drive's WAF.

NVMe: `nvme smart-log -o json`, data_units_written in units of 1,000 × 512 B (NVMe base
specification, SMART / Health log); media writes are only in vendor logs: the OCP datacenter
SMART extended log (`nvme ocp smart-add-log -o json`, "Physical media units written", in bytes,
as {hi, lo} 64-bit halves or one number), else Intel's additional SMART log (`nvme intel
smart-log-add -j`, nand_bytes_written raw, 1 count = 32 MiB as Intel's data sheets give it);
a drive with neither reports no NVMe media writes ("not reported"). SATA: `smartctl -A -j`, attribute 241
(Total_LBAs_Written, in logical blocks) for host writes and 233 or 249 for NAND writes when
the attribute's name gives its unit (GiB, or 32 MiB); a name without a unit is not guessed.
SAS: `smartctl -A -l error -j`, the write error-counter log's gigabytes processed (10^9 B)
for host writes; no media counter. Files, NBD exports and the simulated drives have none
here (the simulator counts its own flash writes in every result).
"""

from __future__ import annotations

import re
import stat
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from iolab.targets import host

NVME_DATA_UNIT = 512_000
INTEL_NAND_UNIT = 32 << 20
GIB, MIB = 1 << 30, 1 << 20
# A NAND-writes attribute's unit as its name states it (smartctl's drive database names).
_MEDIA_UNITS = ((re.compile(r"32MiB", re.I), 32 * MIB), (re.compile(r"(GiB|GB|_1G)", re.I), GIB))


@dataclass(frozen=True)
class WriteCounters:
    """Bytes written as the drive counts them since manufacture (None: not reported)."""

    host_bytes: int | None
    media_bytes: int | None
    source: str  # the command and fields read, for the report

    def record(self) -> dict:
        return asdict(self)


def _count(v: object) -> int | None:
    """A counter from nvme-cli's JSON: a number, or (nvme-cli 2.x, for the 128-bit counters) a
    string of digits."""
    if isinstance(v, str) and v.strip().isdigit():
        return int(v)
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else None


def parse_nvme_smart_log(text: str) -> WriteCounters | None:
    j = host.json_object(text)
    units = _count(j.get("data_units_written")) if j else None
    if units is None:
        return None
    return WriteCounters(units * NVME_DATA_UNIT, None, "nvme smart-log: data_units_written × 512,000 B")


def parse_ocp_smart_add_log(text: str) -> int | None:
    """Media bytes written from the OCP SMART extended log (C0h), or None."""
    j = host.json_object(text)
    v = j.get("Physical media units written") if j else None
    if isinstance(v, dict):
        hi, lo = v.get("hi"), v.get("lo")
        v = (hi << 64) + lo if isinstance(hi, int) and isinstance(lo, int) and hi >= 0 and lo >= 0 else None
    return int(v) if isinstance(v, int) and v >= 0 else None


def parse_intel_smart_log_add(text: str) -> int | None:
    """Media bytes written from Intel's additional SMART log, or None."""
    j = host.json_object(text)
    stats = (j.get("Device stats") or j) if j else {}
    raw = (stats.get("nand_bytes_written") or {}).get("raw") if isinstance(stats, dict) else None
    return raw * INTEL_NAND_UNIT if isinstance(raw, int) and raw >= 0 else None


# The NVMe vendor logs read for media writes, in order: (command after the device, parser, source).
NVME_VENDOR_LOGS = (
    (
        ("ocp", "smart-add-log"),
        ("-o", "json"),
        parse_ocp_smart_add_log,
        "nvme ocp smart-add-log: Physical media units written (B)",
    ),
    (
        ("intel", "smart-log-add"),
        ("-j",),
        parse_intel_smart_log_add,
        "nvme intel smart-log-add: nand_bytes_written × 32 MiB",
    ),
)


def _nvme_media(path: str, run) -> tuple[int, str] | None:
    for sub, opts, parse, source in NVME_VENDOR_LOGS:
        r = run(["nvme", *sub, path, *opts], timeout=30)
        media = parse(r.text) if r.ok else None
        if media is not None:
            return media, source
    return None


def _raw(attr: dict) -> int | None:
    v = (attr.get("raw") or {}).get("value")
    return int(v) if isinstance(v, int) and v >= 0 else None


def parse_smartctl(text: str) -> WriteCounters | None:
    """SATA attributes or the SAS write counter log from `smartctl -j`; None when neither."""
    j = host.json_object(text)
    if not j:
        return None
    table = {a.get("id"): a for a in (j.get("ata_smart_attributes") or {}).get("table", ()) if isinstance(a, dict)}
    if table:
        given = j.get("logical_block_size")
        lbs = given if isinstance(given, int) else 512
        lbas = _raw(table[241]) if 241 in table else None
        media: int | None = None
        how = ""
        for aid in (249, 233):
            if aid in table and media is None:
                name = str(table[aid].get("name", ""))
                unit = next((u for pat, u in _MEDIA_UNITS if pat.search(name)), None)
                if unit is not None and ("nand" in name.lower() or "flash" in name.lower()):
                    raw = _raw(table[aid])
                    if raw is not None:
                        media, how = raw * unit, f", {aid} {name}"
        if lbas is None and media is None:
            return None
        return WriteCounters(
            None if lbas is None else lbas * lbs, media, f"smartctl: 241 Total_LBAs_Written × {lbs} B{how}"
        )
    gb = ((j.get("scsi_error_counter_log") or {}).get("write") or {}).get("gigabytes_processed")
    try:
        host_bytes = round(float(gb) * 1e9) if gb is not None else None
    except (TypeError, ValueError):
        return None
    if host_bytes is None:
        return None
    return WriteCounters(host_bytes, None, "smartctl: write error counter log, gigabytes processed × 10^9 B")


def read_counters(path: str, run=None) -> WriteCounters | None:
    """The drive's counters now, or None (not a block device, no tool, nothing reported).
    `run`: how to run a command (default here; hosts mode passes one that runs it over SSH,
    having checked there that the path is a block device)."""
    if run is None:
        st = host.stat_or_none(path)
        if st is None or not stat.S_ISBLK(st.st_mode):
            return None
    run = run or host.run_command
    if Path(path).name.startswith("nvme"):
        r = run(["nvme", "smart-log", path, "-o", "json"], timeout=30)
        c = parse_nvme_smart_log(r.text) if r.ok else None
        media = _nvme_media(path, run) if c is not None else None
        return replace(c, media_bytes=media[0], source=f"{c.source}; {media[1]}") if c is not None and media else c
    r = run(["smartctl", "-A", "-l", "error", "-j", path], timeout=30)
    # smartctl's exit status is a bit mask of drive conditions; its JSON is still the answer
    return parse_smartctl(r.text) if not r.missing and r.returncode != 124 else None


def snapshot(endurance: dict, phase: str, when: str, path: str) -> None:
    """Put the counters at `when` ('start' or 'end') of `phase` into the manifest's endurance
    record (nothing when the drive reports none)."""
    c = read_counters(path)
    if c is not None:
        endurance.setdefault(phase, {})[when] = c.record()


def phase_writes(record: dict) -> tuple[int | None, int | None, str] | None:
    """(host bytes, media bytes, source) written during one phase from its two snapshots."""
    a, b = record.get("start"), record.get("end")
    if not a or not b:
        return None

    def delta(k: str) -> int | None:
        return b[k] - a[k] if a.get(k) is not None and b.get(k) is not None else None

    return delta("host_bytes"), delta("media_bytes"), b.get("source", "")
