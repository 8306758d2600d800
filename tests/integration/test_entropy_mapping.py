"""Workload.entropy as fio writes it (buffer_compress_percentage = 100 − entropy %, with
refill_buffers): fio writes a file at several entropy settings and zlib compresses what it
wrote; the compressed share must follow the setting."""

from __future__ import annotations

import zlib

import pytest

from iolab.core.units import KiB, MiB
from iolab.core.workload import Workload
from iolab.engines.fio import FioEngine
from iolab.targets import parse_target

pytestmark = pytest.mark.integration


def written_compressibility(scratch, entropy: float) -> float:
    path = scratch / f"e{int(entropy * 100)}.img"
    target = parse_target(f"file:{path}?size=4MiB")
    w = Workload.mix("seq", 0, 64 * KiB, queue_depth=1, entropy=entropy, bytes_budget=4 * MiB)
    engine = FioEngine()
    engine.prepare(target)
    engine.run(target, w, scratch / "raw", f"e{int(entropy * 100)}")
    data = path.read_bytes()[: 4 * MiB]
    return len(zlib.compress(data, 6)) / len(data)


def test_compressed_size_follows_the_entropy_setting(scratch):
    ratios = {e: written_compressibility(scratch, e) for e in (0.0, 0.25, 0.5, 0.75, 1.0)}
    assert ratios[1.0] > 0.99  # random data does not compress
    assert ratios[0.0] < 0.05  # fully compressible data nearly vanishes
    for e, r in ratios.items():
        assert abs(r - e) < 0.08, ratios  # compressed share ≈ entropy
