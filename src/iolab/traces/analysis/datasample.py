"""The data of the blocks a capture saw written: compressibility and duplicate blocks (RWSW Fig. 10).

    sample_written_data(device, table, max_bytes) -> DataSample   (and the file beside the table)
    load_sample(table_path) -> (DataSample | None, note | None)

A trace holds addresses, not data, so the data is read back from the captured device once
the capture has ended: the write ranges of the trace are merged, the 4 KiB blocks wholly
inside them (aligned to 4 KiB on the device) are the population, and up to `max_bytes` of
them are read (all when they fit, otherwise distinct blocks chosen uniformly at random
with a fixed seed, read in address order). Blocks only partly written are never read: the
rest of such a block is data the workload did not write. The device is opened O_RDONLY:
nothing is written to it.

Each block is compressed alone with zstd (a drive that compresses does so per logical
block, not across them) and hashed (BLAKE2b, 128 bits) to count duplicates. What is read is
the device's content after the capture: a block written during the capture and again after
it shows the later data.

The result goes into `<table>.data.json` beside the trace table, with the table's size,
modification time and row count: `analyse` takes it into the analysis only while the
table is the one it was sampled for (a table written again over the same path drops it).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np

from iolab.core.errors import IolabError
from iolab.targets.writepolicy import output_file
from iolab.traces.analysis.streamstats import DataSample
from iolab.traces.table import TraceTable, connect

BLOCK = 4096
ZSTD_LEVEL = 3  # zstd's default level
READ_MAX = 1 << 20  # bytes per read of adjacent sampled blocks
SEED = 0


def sidecar(table_path: str | Path) -> Path:
    p = Path(table_path)
    return p.with_name(p.name + ".data.json")


def written_ranges(table: TraceTable) -> np.ndarray:
    """The trace's writes as merged, sorted [start, end) byte ranges, shape (k, 2)."""
    con = connect(threads=1)
    try:
        c = con.execute(
            f"SELECT offset_bytes AS s, offset_bytes + size_bytes AS e FROM {table.scan_sql()}"
            " WHERE op = 'write' AND size_bytes > 0 AND offset_bytes IS NOT NULL ORDER BY s"
        ).fetchnumpy()
    finally:
        con.close()
    s, e = np.asarray(c["s"], np.int64), np.asarray(c["e"], np.int64)
    if not len(s):
        return np.empty((0, 2), np.int64)
    reach = np.maximum.accumulate(e)  # the furthest end so far: a start past it opens a new range
    new = np.r_[True, s[1:] > reach[:-1]]
    first = np.flatnonzero(new)
    ends = reach[np.r_[first[1:] - 1, len(s) - 1]]
    return np.stack([s[first], ends], axis=1)


def whole_blocks(ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first block, block count) of the aligned blocks wholly inside each range."""
    first = -(-ranges[:, 0] // BLOCK)
    count = np.maximum(ranges[:, 1] // BLOCK - first, 0)
    return first, count


def choose_blocks(ranges: np.ndarray, max_bytes: int, seed: int = SEED) -> tuple[np.ndarray, int]:
    """Sorted distinct block numbers to read (at most max_bytes of them) and the population size."""
    first, count = whole_blocks(ranges)
    total = int(count.sum())
    k = min(total, max_bytes // BLOCK)
    if k == total:
        picks = np.arange(total, dtype=np.int64)
    else:
        picks = np.sort(np.random.default_rng(seed).choice(total, size=k, replace=False))
    # the i-th block of the population lies in the range whose cumulative count passes i
    cum = np.cumsum(count)
    r = np.searchsorted(cum, picks, side="right")
    return first[r] + picks - (cum[r] - count[r]), total


def sample_device(device: str | Path, ranges: np.ndarray, max_bytes: int, seed: int = SEED) -> DataSample:
    """Read the chosen blocks of `device` (O_RDONLY) and measure them (see the module docstring)."""
    import zstandard

    blocks, population = choose_blocks(ranges, max_bytes, seed)
    zc = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    zero = bytes(BLOCK)
    seen: set[bytes] = set()
    compressed = dups = zeros = 0
    try:
        fd = os.open(device, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as e:
        raise IolabError(f"{device}: cannot open it to read the written data back ({e.strerror or e}).") from None
    try:
        # runs of adjacent blocks, each read in pieces of at most READ_MAX bytes
        breaks = np.flatnonzero(np.diff(blocks) != 1) + 1
        for run in np.split(blocks, breaks) if len(blocks) else []:
            for j in range(0, len(run), READ_MAX // BLOCK):
                b0, n = int(run[j]), min(READ_MAX // BLOCK, len(run) - j)
                buf = os.pread(fd, n * BLOCK, b0 * BLOCK)
                if len(buf) != n * BLOCK:
                    raise IolabError(
                        f"{device}: reading the written data back stopped at byte {b0 * BLOCK + len(buf):,}, inside "
                        "the range the trace wrote: is this the device that was captured?"
                    )
                for i in range(0, len(buf), BLOCK):
                    block = buf[i : i + BLOCK]
                    compressed += len(zc.compress(block))
                    zeros += block == zero
                    h = hashlib.blake2b(block, digest_size=16).digest()
                    if h in seen:
                        dups += 1
                    else:
                        seen.add(h)
    except OSError as e:
        raise IolabError(f"{device}: cannot read the written data back ({e.strerror or e}).") from None
    finally:
        os.close(fd)
    return DataSample(
        block_size=BLOCK,
        written_bytes=int((ranges[:, 1] - ranges[:, 0]).sum()),
        written_blocks=population,
        blocks=len(blocks),
        zstd_level=ZSTD_LEVEL,
        compressed_bytes=compressed,
        duplicate_blocks=dups,
        zero_blocks=int(zeros),
    )


def _identity(table: TraceTable) -> dict:
    st = table.path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "rows": table.rows}


def sample_written_data(device: str | Path, table: TraceTable, max_bytes: int) -> DataSample:
    """Sample the data `table`'s writes left on `device` and keep the result beside the table."""
    sample = sample_device(device, written_ranges(table), max_bytes)
    doc = {"table": _identity(table), "device": str(device), "sample": asdict(sample)}
    with output_file(sidecar(table.path), "data sample file") as path:
        path.write_text(json.dumps(doc, indent=1) + "\n")
    return sample


def load_sample(table: TraceTable) -> tuple[DataSample | None, str | None]:
    """The data sample kept beside `table` (None: none), and a note when one was left out."""
    p = sidecar(table.path)
    if not p.is_file():
        return None, None
    try:
        doc = json.loads(p.read_text())
        if doc["table"] != _identity(table):
            return None, f"{p.name} was sampled for an earlier table at this path: its data figures are left out"
        return DataSample(**doc["sample"]), None
    except (OSError, ValueError, KeyError, TypeError) as e:
        return None, f"{p.name} could not be read ({type(e).__name__}): the data figures are left out"
