"""Fuzz: broken files of every format end in iolab's own error or a (partial) import, never
in a crash. Derandomized and bounded (a few seconds per reader); bench/fuzz_import.py runs
the same generator over a million cases."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iolab.traces import formats, fuzz


def test_every_reader_is_fuzzed():
    assert {fuzz.reader(c) for c in fuzz.cases()} == set(formats.reader_names())


@pytest.mark.parametrize("fmt", list(fuzz.cases()))
def test_broken_input_never_crashes(fmt, tmp_path):
    @settings(
        max_examples=6,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(rnd=st.randoms(use_true_random=False), n=st.integers(1, 80))
    def check(rnd, n):
        data, _ = fuzz.case_file(rnd, fmt, n)
        path = tmp_path / f"case.{fmt}"
        path.write_bytes(fuzz.file_level(rnd, data))
        crash = fuzz.run(path, fmt, tmp_path / "out.parquet")
        assert crash is None, crash

    check()


@pytest.mark.parametrize("fmt", fuzz.text_cases())
def test_each_mangling_alone_never_crashes(fmt, tmp_path):
    """Every kind of line damage, on every seed line, one file per damage kind."""
    import random

    head, body = fuzz.seeds(fmt)
    rng = random.Random(7)
    lines = [fuzz.mangle(rng, body[i % len(body)]) for i in range(200)]
    lines += [body[0].rstrip(b"\n").replace(b"0", v, 1) + b"\n" for v in fuzz.HUGE if v]
    path = tmp_path / f"all.{fmt}"
    path.write_bytes(head + b"".join(lines))
    crash = fuzz.run(path, fmt, tmp_path / "out.parquet")
    assert crash is None, crash
