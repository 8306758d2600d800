"""The simulated drives' power model (figures/simpower.py) on real simulator rounds: the mW moves
with the workload, programs count what the flash wrote (GC copies once, not host bytes), an
FTL erase is many physical erases, and a run's energy is its cells' energies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iolab import targets
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.engines.sim import SimEngine
from iolab.figures.simpower import DEFAULTS, CellWork, cell_work, drive_model, energy_parts

# A 512 MiB copy of the default drive (as test_sim_engine.py's): same dies, timings and link.
SMALL = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28"


def rnd(read_pct: int, seconds: float = 1.0, **kw) -> Workload:
    return Workload.mix("rnd", read_pct, 4 * KiB, threads=4, queue_depth=8, duration_s=seconds, **kw)


def seq_fill() -> Workload:
    return Workload.mix("seq", 0, 128 * KiB, threads=1, queue_depth=32, bytes_budget=2 * 512 * 2**20)


class Rounds:
    """One drive, rounds run on it in order; each round's raw JSON and modelled mW."""

    def __init__(self, tmp: Path, spec: str = SMALL):
        self.engine, self.target, self.tmp = SimEngine(), targets.parse_target(spec), tmp
        self.engine.prepare(self.target)
        self.n = 0

    def run(self, w: Workload) -> dict:
        self.n += 1
        self.engine.run(self.target, w, self.tmp, f"r{self.n}")
        return json.loads((self.tmp / f"r{self.n}.json").read_text())


def mw(raw: dict) -> float:
    m = drive_model(raw["drive"])
    assert m is not None
    w = cell_work(raw, m)
    return sum(energy_parts(w, m).values()) / w.seconds


def test_the_modelled_mw_moves_with_the_workload(tmp_path):
    r = Rounds(tmp_path)
    r.run(seq_fill())
    reads, writes = r.run(rnd(100)), r.run(rnd(0))
    slow, fast = r.run(rnd(0, 2.0, rate_iops=2000)), r.run(rnd(0, 2.0, rate_iops=8000))
    idle = DEFAULTS["sas"].idle_mw
    assert drive_model(reads["drive"]).interface == "sas"
    # 4K random writes: programs (~95 µJ a page) and GC erases on top of a busy controller
    assert mw(writes) > mw(reads) > idle
    assert mw(writes) > 1.3 * mw(reads)
    # a higher write rate programs more pages per second: more mW (the controller is busy in both)
    assert mw(fast) > mw(slow) + 200
    # no IO at all: the idle power, exactly
    quiet = CellWork(seconds=2.0, busy_s=0.0, page_reads=0, page_programs=0, block_erases=0, host_bytes=0)
    parts = energy_parts(quiet, drive_model(reads["drive"]))
    assert sum(parts.values()) / 2.0 == pytest.approx(idle)


def test_programs_are_what_the_flash_wrote_gc_copies_once(tmp_path):
    """On a full drive random writes copy pages in GC (WAF > 1): the program energy per host byte
    grows by the WAF over a fresh drive's. Counting GC copies again on top of flash_write_bytes, or
    programs from host bytes, breaks the ratio."""
    r = Rounds(tmp_path)
    fresh = r.run(rnd(0, 0.3))
    r.run(seq_fill())
    for _ in range(3):
        r.run(rnd(0, 2.0))
    full = r.run(rnd(0, 2.0))
    m = drive_model(full["drive"])

    def per_host_byte(raw: dict) -> tuple[float, float]:
        c = raw["counters"]
        prog = energy_parts(cell_work(raw, m), m)["nand_program_mj"]
        return prog / c["host_write_bytes"], c["flash_write_bytes"] / c["host_write_bytes"]

    (e_fresh, waf_fresh), (e_full, waf_full) = per_host_byte(fresh), per_host_byte(full)
    assert full["counters"]["gc_copied_pages"] > 0 and waf_full > 1.3 * waf_fresh
    assert e_full / e_fresh == pytest.approx(waf_full / waf_fresh, rel=1e-6)
    # GC moves pages through reads too: the full drive's write round senses pages a fresh one does not
    assert cell_work(full, m).page_reads > cell_work(fresh, m).page_reads
    # in steady state every page programmed was freed by an erase: the physical blocks erased hold
    # what was programmed (an FTL erase counted as one physical block erase would miss this 64-fold)
    w = cell_work(full, m)
    pages_per_block = int(dict(full["drive"]["params"])["pages_per_block"])
    assert w.block_erases * pages_per_block == pytest.approx(w.page_programs, rel=0.25)


def test_an_ftl_erase_is_a_superblock_of_physical_erases(tmp_path):
    raw = Rounds(tmp_path).run(rnd(0, 0.2))
    m = drive_model(raw["drive"])
    p = dict(raw["drive"]["params"])
    assert m.page_bytes == 8 * KiB
    assert m.blocks_per_erase == raw["drive"]["ftl_block_bytes"] / (int(p["pages_per_block"]) * 8 * KiB) > 1
    # 3.3 V x 25 mA x the preset's t_erase_us, per physical block
    assert m.erase_uj == pytest.approx(3.3 * 25 * float(p["t_erase_us"]) / 1000)


def test_hdd_has_no_model(tmp_path):
    raw = Rounds(tmp_path, "sim:sas-15k-hdd?capacity_gb=1").run(rnd(100, 0.2))
    assert drive_model(raw["drive"]) is None


def test_a_fifo_as_a_cells_raw_output_is_refused_not_waited_on(tmp_path):
    """A cell the run did not keep in memory (one stored before a resume) is modelled from its raw
    JSON: a FIFO planted there hung the run's end in open(). It is an IolabError naming the cell."""
    import os
    import threading
    from types import SimpleNamespace

    from iolab.core.errors import IolabError
    from iolab.figures.simpower import model_cells

    (tmp_path / "raw").mkdir()
    os.mkfifo(tmp_path / "raw" / "main-r01-c00.json")
    cell = SimpleNamespace(raw_files=["raw/main-r01-c00.json"], cell_key="100/0 4KiB", phase="main")
    got: list[BaseException] = []

    def model() -> None:
        try:
            model_cells(tmp_path, [cell])
        except BaseException as e:  # noqa: BLE001 - handed to the test's thread
            got.append(e)

    t = threading.Thread(target=model, daemon=True)
    t.start()
    t.join(60)
    if t.is_alive():  # blocked in open(): a writer lets it go, then the test fails
        os.close(os.open(tmp_path / "raw" / "main-r01-c00.json", os.O_WRONLY | os.O_NONBLOCK))
        t.join()
        pytest.fail("model_cells waited on a FIFO")
    assert len(got) == 1 and isinstance(got[0], IolabError), got
    assert "'100/0 4KiB' of phase main" in str(got[0]) and "a FIFO (named pipe), not a regular file" in str(got[0])
