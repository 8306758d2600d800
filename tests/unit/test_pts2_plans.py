

def test_pts_all_adds_the_optional_tests_in_spec_order():
    assert [t.name for t in registry.sequence("pts")] == ["iops", "throughput", "latency", "wsat"]
    every = [t.name for t in registry.sequence("pts", everything=True)]
    assert every[:4] == ["iops", "throughput", "latency", "wsat"]
    assert every.index("xsr") < every.index("dirth")
    with pytest.raises(IolabError, match="--all"):
        registry.sequence("iops", everything=True)


def test_sequence_eta_spans_first_steady_state_to_every_round_limit():
    from iolab.progress import sequence_eta

    x = plan("xsr")  # runs to its time budgets: 22 h either way
    assert x.measured_seconds() == (22 * 3600, 22 * 3600)
    d = plan("dirth", settings=(("threads", "1"), ("depths", "1")))
    # PC: 30-min rounds, DV: 5-min pre-write + one 1-min cell; 5 rounds at the earliest, 25 at the latest
    assert d.measured_seconds() == (5 * 1800 + 5 * 360, 25 * 1800 + 25 * 360)
    text = sequence_eta([x, d])
    assert text.startswith("2 tests, ETA 25:00:00 to 37:00:00 of measurement")
    assert "Cross Stimulus Recovery 22:00:00" in text and "DIRTH 3:00:00–15:00:00" in text
