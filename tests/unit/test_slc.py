"""The SLC cache's cliff in a fill's per-second MB/s (analysis/slc.py), on hand-made series."""

from __future__ import annotations

import random

import pytest

from iolab.figures.slc import change_point, find_cache, widths, written_gb

# The client preset's fill as the simulator wrote it (its 8 GB copy's cache, 20 GB written):
# the cache runs out 0.3 s into the third second, then folding dips below the TLC rate.
CLIENT_T = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 12.044]
CLIENT = [3496, 3497, 1978, 1311, 401, 1807, 1310, 1310, 795, 1415, 1311, 1310, 1313]


def test_the_cache_is_read_within_the_second_it_ran_out():
    c = find_cache(CLIENT_T, CLIENT, 0.75)
    assert c.found and c.size_gb == pytest.approx(8.06, abs=0.01)  # 2 whole seconds would say 7.0, 3 say 9.0
    assert (c.in_cache_mbps, c.post_cache_mbps) == (3496, 1310.5)  # the seconds either side of the cliff
    assert c.cliff_s == pytest.approx(2.305, abs=0.01)
    assert c.written_gb == pytest.approx(20.0, abs=0.01)
    assert c.text().startswith("SLC cache 8.06 GB: 3,496 MB/s until 2.3 s, then 1,310 MB/s (37%)")


@pytest.mark.parametrize("seconds", [2.0, 2.5, 5.25, 30.0])
def test_a_cache_of_any_length_is_found_to_its_size(seconds):
    rng = random.Random(7)
    fast, slow = 3000.0, 900.0
    t, r = [], []
    for i in range(int(seconds) + 40):
        inside = min(max(seconds - i, 0.0), 1.0)  # the share of this second spent in the cache
        t.append(i + 1.0)
        r.append((inside * fast + (1 - inside) * slow) * rng.uniform(0.97, 1.03))
    c = find_cache(t, r, 0.75)
    assert c.size_gb == pytest.approx(seconds * fast / 1000, rel=0.05)


def test_a_drive_at_one_rate_has_no_cache():
    rng = random.Random(3)
    flat = [500 * rng.uniform(0.9, 1.1) for _ in range(60)]
    c = find_cache([i + 1.0 for i in range(60)], flat, 0.75, fill_of_drive=1.0)
    assert not c.found and c.size_gb is None and c.in_cache_mbps is None
    assert c.post_cache_mbps == pytest.approx(500, rel=0.1)  # the rate it kept
    assert c.text().startswith("no cache found")


@pytest.mark.parametrize("share", [None, 0.5])
def test_one_rate_over_part_of_the_drive_is_no_rate_after_a_cache(share):
    # the fill may have stayed within a cache larger than it: its rate is not "post-cache"
    rng = random.Random(3)
    flat = [500 * rng.uniform(0.9, 1.1) for _ in range(60)]
    c = find_cache([i + 1.0 for i in range(60)], flat, 0.75, fill_of_drive=share)
    assert c.post_cache_mbps is None and c.median_mbps == pytest.approx(500, rel=0.1)
    assert "no rate after a cache is measured" in c.text(), c.text()


def test_a_dip_that_recovers_is_no_cliff():
    r = [1000.0] * 10 + [300.0] * 3 + [1000.0] * 10
    c = find_cache([i + 1.0 for i in range(len(r))], r, 0.75)
    assert not c.found, c


def test_a_cliff_needs_two_whole_seconds_before_it():
    # a first second faster than the rest (a DRAM buffer, the start of a file) is no SLC cache
    c = find_cache([1.0, 2.0, 3.0, 4.0, 5.0], [2000.0, 800.0, 810.0, 790.0, 800.0], 0.75)
    assert not c.found and "did not drop after the first intervals" in c.reason


def test_too_short_a_fill_says_so():
    c = find_cache([0.25], [1074.0], 0.75)
    assert not c.found and c.reason.startswith("1 interval measured") and c.written_gb == pytest.approx(0.2685)


def test_a_partial_last_interval_counts_by_its_length():
    assert widths([1.0, 2.0, 2.5]) == [1.0, 1.0, 0.5]
    assert written_gb([1.0, 2.0, 2.5], [1000.0, 1000.0, 1000.0]) == pytest.approx([1.0, 2.0, 2.5])
    assert change_point([1.0, 1.0, 1.0, 1.0], [9.0, 9.0, 1.0, 1.0]) == 2
