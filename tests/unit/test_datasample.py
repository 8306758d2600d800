"""The written data of a capture read back (compressibility, duplicate blocks), on a file whose
content is known block by block, and its way into the stream analysis."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
import zstandard

from iolab.traces.analysis import datasample as ds
from iolab.traces.analysis.streams import analyse
from iolab.traces.analysis.streamstats import NO_DATA, StreamAnalysis
from iolab.traces.table import table_from_rows

B = 4096


def known_image(path, rng):
    """64 blocks: 0-7 and 40-63 random (never written by the trace below), 8-23 zeros,
    24-31 eight distinct random blocks, 32-39 blocks 24-27 repeated twice."""
    blocks = [rng.integers(0, 256, B, dtype=np.uint8).tobytes() for _ in range(64)]
    for b in range(8, 24):
        blocks[b] = bytes(B)
    for i, b in enumerate(range(32, 40)):
        blocks[b] = blocks[24 + i % 4]
    path.write_bytes(b"".join(blocks))
    return blocks


def test_ratios_of_known_content_and_only_whole_written_blocks(tmp_path):
    blocks = known_image(tmp_path / "img", np.random.default_rng(5))
    rows = [(i, "d", "write", b * B, B, "p", 10.0) for i, b in enumerate(range(8, 40))]
    rows += [
        (40, "d", "write", 50 * B + 512, B, "p", 10.0),  # covers no whole block: never read
        (41, "d", "write", 8 * B, 2 * B, "p", 10.0),  # written twice: still counted once
        (42, "d", "read", 60 * B, B, "p", 10.0),  # a read: not written data
    ]
    t = table_from_rows(rows, tmp_path / "t.parquet")
    assert ds.written_ranges(t).tolist() == [[8 * B, 40 * B], [50 * B + 512, 51 * B + 512]]
    s = ds.sample_written_data(tmp_path / "img", t, 1 << 30)
    assert (s.written_bytes, s.written_blocks, s.blocks) == (32 * B + B, 32, 32)
    # 15 zero blocks after the first, 8 repeats of blocks 24-27
    assert (s.zero_blocks, s.duplicate_blocks) == (16, 15 + 8)
    assert s.duplicate_share == pytest.approx(23 / 32)
    zc = zstandard.ZstdCompressor(level=3)
    assert s.compressed_bytes == sum(len(zc.compress(blocks[b])) for b in range(8, 40))
    assert 1.9 < s.compression_ratio < 2.05  # half zeros, half random
    assert "zstd -3 compresses them 1.99:1" in s.text() and "71.9 % of the blocks duplicate" in s.text()


def test_a_bounded_sample_reads_distinct_blocks_inside_the_ranges_read_only(tmp_path, monkeypatch):
    # every block different (its number written in it): any duplicate is a block read twice
    img = tmp_path / "img"
    img.write_bytes(b"".join(b.to_bytes(8, "little") * (B // 8) for b in range(4096)))
    ranges = np.array([[3 * B + 100, 900 * B], [1000 * B, 1000 * B + 3 * B], [2000 * B, 4000 * B]], np.int64)
    picked, population = ds.choose_blocks(ranges, 500 * B)
    assert population == (900 - 4) + 3 + 2000
    assert len(picked) == 500 and len(np.unique(picked)) == 500
    inside = (
        ((picked >= 4) & (picked < 900)) | ((picked >= 1000) & (picked < 1003)) | ((picked >= 2000) & (picked < 4000))
    )
    assert inside.all()
    flags = []
    real_open = os.open
    monkeypatch.setattr(ds.os, "open", lambda p, f, *a: flags.append(f) or real_open(p, f, *a))
    before = hashlib.sha256(img.read_bytes()).digest()
    s = ds.sample_device(img, ranges, 500 * B)
    assert flags and all(f & os.O_ACCMODE == os.O_RDONLY for f in flags)
    assert hashlib.sha256(img.read_bytes()).digest() == before
    assert (s.blocks, s.written_blocks, s.duplicate_blocks, s.zero_blocks) == (
        500,
        population,
        0,
        1 if 0 in picked else 0,
    )
    assert "at random" in s.text() and "in the sample" in s.text()


def test_the_sample_goes_into_the_analysis_only_for_its_own_table(tmp_path):
    known_image(tmp_path / "img", np.random.default_rng(1))
    rows = [(i, "d", "write", b * B, B, "p", 10.0) for i, b in enumerate(range(8, 40))]
    t = table_from_rows(rows, tmp_path / "t.parquet")
    plain = analyse(t)
    assert plain.data is None and f"written data (compressibility, duplicates): {NO_DATA}" in plain.summary()
    assert "data" not in json.loads(plain.save(tmp_path / "plain.json").read_text())  # the file format as before
    sample = ds.sample_written_data(tmp_path / "img", t, 1 << 20)
    a = analyse(t)
    assert a.data == sample and sample.text() in a.summary()
    assert StreamAnalysis.load(a.save(tmp_path / "a.json")).data == sample
    # the same path written again with another trace: the sample is not this table's
    t2 = table_from_rows(rows[:5], tmp_path / "t.parquet")
    b = analyse(t2)
    assert b.data is None and any("sampled for an earlier table" in n for n in b.notes)


def test_the_self_test_page_says_what_the_written_data_is_like(tmp_path):
    from iolab.pages.report.model import Text
    from iolab.pages.report.rwsw_selftest import selftest_from

    known_image(tmp_path / "img", np.random.default_rng(1))
    t = table_from_rows(
        [(i, "d", "write", b * B, B, "p", 10.0) for i, b in enumerate(range(8, 40))], tmp_path / "t.parquet"
    )

    def text(a):
        page = selftest_from(a, "src")[0]
        return " ".join(p for blk in page.blocks if isinstance(blk, Text) for p in blk.paragraphs)

    assert f"Written data (compressibility, duplicates): {NO_DATA}." in text(analyse(t))
    sample = ds.sample_written_data(tmp_path / "img", t, 1 << 20)
    assert "W" + sample.text()[1:] + "." in text(analyse(t))


def test_a_stop_as_the_sample_is_written_leaves_none_the_next_refuses(tmp_path, monkeypatch):
    """The sample beside a captured trace was written in place, then marked: a stop between the two
    left an unmarked file that the next capture to the same table refused as someone's data. It is
    written aside now (writepolicy.output_file); stopped just after the write, the name holds
    nothing, and the next sample is written."""
    from iolab.targets import writepolicy
    from iolab.targets.files import read_mark

    known_image(tmp_path / "img", np.random.default_rng(5))
    t = table_from_rows([(0, "d", "write", 8 * B, 8 * B, "p", 10.0)], tmp_path / "t.parquet")

    def stopped(*args, **kwargs):  # whichever follows the write: its mark, or its rename into place
        raise KeyboardInterrupt

    monkeypatch.setattr(writepolicy, "mark_written", stopped)
    monkeypatch.setattr(writepolicy, "put_in_place", stopped)
    with pytest.raises(KeyboardInterrupt):
        ds.sample_written_data(tmp_path / "img", t, 1 << 20)
    assert not ds.sidecar(t.path).exists() and sorted(p.name for p in tmp_path.iterdir()) == ["img", "t.parquet"]
    monkeypatch.undo()
    assert ds.sample_written_data(tmp_path / "img", t, 1 << 20).written_blocks == 8
    assert read_mark(str(ds.sidecar(t.path))) == ("output", "data sample file")
