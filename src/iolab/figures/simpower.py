"""A power model for the simulated SSDs: the energy each cell spent, from the flash work the
simulator counted in it, and its average mW, in the power.json shape a metered run has
(figures/power.py) so the report's Power Consumption pages show it, labelled as modelled.

    energy = E_read x NAND page reads + E_prog x NAND pages programmed
           + E_erase x physical block erases + P_active x busy s + P_idle x idle s
           + P_link x transfer s

A NAND operation's energy is VCC x ICC x its time (the preset's t_read_us, t_prog_us,
t_erase_us, so an SLC program costs less than a TLC one); ICC and the controller and link powers
are typical datasheet magnitudes, UNVERIFIED for any real drive (docs/simulator.md, "Power").
Every count comes from the cell's own raw simulator output (raw/<tag>.json: its counters and
the drive it ran on), never from its host workload alone:
- programs: flash_write_bytes / page size (what the flash wrote: host data, GC copies and SLC
  evictions already in it, so GC copies are not added again);
- reads: each host read IO senses at least one page (a 4 KiB read of an 8 KiB page senses the
  whole page), read-modify-writes one page each, GC copies and SLC evictions read what they move;
- erases: the FTL erases a superblock, ftl_block_bytes / (pages_per_block x page size) physical
  blocks at once;
- busy: the seconds of the series with any host IO; idle: the rest of the cell."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from iolab.core.cellschema import CellRow
from iolab.core.errors import IolabError
from iolab.core.safefile import loads_json, read_output
from iolab.figures.power import CellPower, summarise

SOURCE = "simulator power model (UNVERIFIED parameters)"
UNIT = 4096  # the simulator's mapping unit (crates/sim config UNIT): gc/evicted "pages" are these


@dataclass(frozen=True)
class PowerParams:
    """The model's parameters for one drive interface (all UNVERIFIED, docs/simulator.md)."""

    nand_vcc_v: float  # NAND core supply (ONFI VCC)
    icc_read_ma: float  # NAND array current while sensing a page (ICC1)
    icc_prog_ma: float  # ... while programming (ICC2)
    icc_erase_ma: float  # ... while erasing (ICC3)
    active_mw: float  # controller + DRAM while host IO is outstanding
    idle_mw: float  # controller + DRAM with nothing outstanding (no low-power state entered)
    link_mw: float  # the host link's PHYs while moving data


# Per interface: an enterprise SAS drive idles high (no low-power states), a client NVMe drive
# idles lower, an entry SATA drive is smallest. See docs/simulator.md for the magnitudes' sources.
DEFAULTS = {
    "sas": PowerParams(3.3, 25.0, 25.0, 25.0, active_mw=3500.0, idle_mw=2500.0, link_mw=600.0),
    "nvme": PowerParams(3.3, 25.0, 25.0, 25.0, active_mw=1500.0, idle_mw=600.0, link_mw=800.0),
    "sata": PowerParams(3.3, 25.0, 25.0, 25.0, active_mw=900.0, idle_mw=300.0, link_mw=200.0),
}


@dataclass(frozen=True)
class DriveModel:
    """The parameters and the per-operation energies of one simulated drive."""

    interface: str
    params: PowerParams
    page_bytes: int
    blocks_per_erase: float  # physical blocks in one FTL erase
    read_uj: float  # per NAND page read
    prog_uj: float  # per NAND page programmed
    erase_uj: float  # per physical block erased
    link_mbps: float

    def record(self) -> dict:
        """What the manifest and power.json keep: the values used, each with its unit."""
        return {
            "source": SOURCE,
            "interface": self.interface,
            **asdict(self.params),
            "page_bytes": self.page_bytes,
            "blocks_per_erase": self.blocks_per_erase,
            "read_uj_per_page": round(self.read_uj, 4),
            "prog_uj_per_page": round(self.prog_uj, 4),
            "erase_uj_per_block": round(self.erase_uj, 4),
            "link_mbps": self.link_mbps,
        }


def drive_model(drive: Mapping[str, Any]) -> DriveModel | None:
    """The model of the drive a raw result ran on (its "drive" object); None for an HDD."""
    if drive.get("kind") != "ssd":
        return None
    p = dict(drive["params"])
    iface = str(drive.get("interface", "sata"))
    params = DEFAULTS.get(iface, DEFAULTS["sata"])
    page = int(float(p["page_kib"]) * 1024)
    per_block = int(p["pages_per_block"]) * page
    # the operation's time on a TLC/MLC page; an SLC cache page is faster (slc_* params) but
    # the counters do not split programs by cache, so the native timing is used for every page
    v = params.nand_vcc_v
    return DriveModel(
        interface=iface,
        params=params,
        page_bytes=page,
        blocks_per_erase=float(drive["ftl_block_bytes"]) / per_block,
        read_uj=v * params.icc_read_ma * float(p["t_read_us"]) / 1000.0,
        prog_uj=v * params.icc_prog_ma * float(p["t_prog_us"]) / 1000.0,
        erase_uj=v * params.icc_erase_ma * float(p["t_erase_us"]) / 1000.0,
        link_mbps=float(drive["link_mbps"]),
    )


@dataclass(frozen=True)
class CellWork:
    """The flash and host work of one cell, counted from its raw output."""

    seconds: float
    busy_s: float
    page_reads: float
    page_programs: float
    block_erases: float
    host_bytes: float


@dataclass(frozen=True)
class CellRaw:
    """What the model reads of a cell's raw output: small enough to keep for every cell of a run
    (the runner keeps it as each cell ends, so that the model does not read the file again)."""

    drive: Mapping[str, Any]
    counters: Mapping[str, Any]
    read_ios: float
    seconds: float
    busy_s: float


def cell_raw(raw: Mapping[str, Any]) -> CellRaw:
    read_ios = float(raw["read"]["ios"])
    seconds = float(raw["runtime_s"])
    # series rows: t_end_s, read_iops, write_iops, mbps, lat_mean, [lat_max], [span_s]
    busy = 0.0
    prev = 0.0
    for row in raw.get("series", []):
        span = float(row[6]) if len(row) > 6 else float(row[0]) - prev
        prev = float(row[0])
        if float(row[1]) + float(row[2]) > 0:
            busy += span
    if not raw.get("series"):
        busy = seconds if read_ios + float(raw["write"]["ios"]) > 0 else 0.0
    return CellRaw(raw["drive"], raw["counters"], read_ios, seconds, min(busy, seconds))


def kept_raw(raw: Mapping[str, Any]) -> CellRaw | None:
    """cell_raw of a cell's output as the engine parsed it, or None where it lacks what the model
    reads: the model then reads the file, and says what is wrong with it, at the run's end."""
    try:
        return cell_raw(raw)
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def cell_work(raw: Mapping[str, Any] | CellRaw, m: DriveModel) -> CellWork:
    r = raw if isinstance(raw, CellRaw) else cell_raw(raw)
    c = r.counters
    page = m.page_bytes
    host_read = float(c.get("host_read_bytes", 0.0))
    moved = (float(c.get("gc_copied_pages", 0.0)) + float(c.get("slc_evicted_pages", 0.0))) * UNIT
    reads = max(r.read_ios, host_read / page) + float(c.get("rmw_reads", 0.0)) + moved / page
    return CellWork(
        seconds=r.seconds,
        busy_s=r.busy_s,
        page_reads=reads,
        page_programs=float(c.get("flash_write_bytes", 0.0)) / page,
        block_erases=float(c.get("erases", 0.0)) * m.blocks_per_erase,
        host_bytes=host_read + float(c.get("host_write_bytes", 0.0)),
    )


def energy_parts(w: CellWork, m: DriveModel) -> dict[str, float]:
    """Each term's energy in mJ (mW x s)."""
    link_s = min(w.host_bytes / (m.link_mbps * 1e6), w.seconds) if m.link_mbps > 0 else 0.0
    return {
        "nand_read_mj": w.page_reads * m.read_uj / 1000.0,
        "nand_program_mj": w.page_programs * m.prog_uj / 1000.0,
        "nand_erase_mj": w.block_erases * m.erase_uj / 1000.0,
        "controller_active_mj": m.params.active_mw * w.busy_s,
        "controller_idle_mj": m.params.idle_mw * (w.seconds - w.busy_s),
        "link_mj": m.params.link_mw * link_s,
    }


def _raw_of(run_dir: Path, cell: CellRow) -> dict:
    if not cell.raw_files:
        raise IolabError(f"cell {cell.cell_key!r} of phase {cell.phase} has no raw simulator output to model.")
    path = run_dir / cell.raw_files[0]
    try:
        text = read_output(path)  # a FIFO planted there hung the report of a resumed run in open()
    except OSError as e:
        raise IolabError(
            f"cell {cell.cell_key!r} of phase {cell.phase}: its raw simulator output {path} cannot be read "
            f"({e.strerror or e}), so its power cannot be modelled."
        ) from None
    return loads_json(text, f"raw simulator output {path}")


def model_cells(
    run_dir: Path, cells: Sequence[CellRow], kept: Mapping[str, CellRaw] | None = None
) -> tuple[DriveModel | None, list[dict]]:
    """Each cell's modelled power (CellPower fields, plus its work and energy terms). `kept`: the
    cells' raw outputs as the runner kept them (kept_raw), by raw file; the others are read."""
    model: DriveModel | None = None
    out = []
    for c in cells:
        raw = (kept or {}).get(c.raw_files[0]) if c.raw_files else None
        raw = raw or cell_raw(_raw_of(run_dir, c))
        m = drive_model(raw.drive)
        if m is None:
            return None, []
        model = model or m
        w = cell_work(raw, m)
        parts = energy_parts(w, m)
        energy = sum(parts.values())
        label = c.cell_key if c.kind == "measure" else f"{c.kind}: {c.cell_key}"
        avg = energy / w.seconds if w.seconds > 0 else None
        cp = CellPower(c.phase, c.round, c.ordinal, label, c.started, c.ended, 0, 100.0, avg, None, energy, w.seconds)
        out.append(asdict(cp) | {"work": asdict(w), "energy_parts_mj": parts})
    return model, out


def model_document(
    run_id: str, run_dir: Path, cells: Sequence[CellRow], kept: Mapping[str, CellRaw] | None = None
) -> dict | None:
    """power.json for a simulated run (None for an HDD or a run without cells): the shape of
    figures/power.to_document's, with `model` saying which values were used."""
    model, rows = model_cells(run_dir, cells, kept)
    if model is None or not rows:
        return None
    as_cells = [CellPower(**{k: r[k] for k in CellPower.__dataclass_fields__}) for r in rows]
    phases = dict.fromkeys(c.phase for c in as_cells)
    return {
        "run_id": run_id,
        "source": SOURCE,
        "model": model.record(),
        "readings": 0,
        "interval_s": None,
        "gap_s": None,
        "offset_s": 0.0,
        "min_coverage_pct": 100.0,
        "run": asdict(summarise("run", as_cells)),
        "phases": [asdict(summarise(p, [c for c in as_cells if c.phase == p])) for p in phases],
        "cells": rows,
        "source_copy": None,
    }
