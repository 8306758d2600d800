"""The registry checks a test's declared functions against TestDef's contract when the test is
registered (issue 34 item 7): a wrong signature fails at registration, naming the test, the
field and the call it must take, not when a comparison or a report first calls it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from iolab.api import registry
from iolab.core.errors import IolabError
from iolab.engines.fio import FioEngine
from iolab.suites.testdef import TestDef


def build(profile, target, workload):
    raise AssertionError("never built here")


def test_a_key_figures_of_the_wrong_signature_fails_at_register():
    wrong = TestDef(
        "wrong-kf", "Wrong", "test", "key figures of two arguments", build, key_figures=lambda runs, extra: ()
    )
    with pytest.raises(IolabError) as e:
        try:
            registry.register(wrong)
        finally:
            registry.unregister("wrong-kf")  # whatever happened, no other test sees it
    text = str(e.value)
    assert "'wrong-kf'" in text and "key_figures" in text and "key_figures(runs) -> tuple[KeyMetric, ...]" in text
    assert "wrong-kf" not in registry.names() and registry.find("wrong-kf") is None  # not half-registered


@pytest.mark.parametrize(
    "field, fn",
    [
        ("build", lambda profile, target: None),  # the workload argument is missing
        ("pages", lambda: None),  # no argument at all
        ("overlays", lambda runs: []),
        ("view", lambda phase, console, *, width: None),  # a keyword it is never given
        ("keep_input", "not a function"),
    ],
)
def test_every_declared_function_is_checked(field, fn):
    fields = {"build": build, field: fn}
    test = TestDef("wrong-field", "Wrong", "test", "one function of the wrong shape", **fields)
    try:
        with pytest.raises(IolabError, match=rf"'wrong-field'.*{field}.*{field}\("):
            registry.register(test)
        assert registry.find("wrong-field") is None
    finally:
        registry.unregister("wrong-field")


def test_a_test_that_keeps_the_contract_registers_whatever_its_names_and_defaults():
    ok = TestDef(
        "right-kf",
        "Right",
        "test",
        "functions that take the contract's arguments",
        lambda p, t, w=None: None,
        key_figures=lambda drives: (),
        view=lambda *args: None,
        overlays=lambda runs, labels, extra=1: [],
    )
    try:
        assert registry.register(ok) is ok and registry.get("right-kf") is ok
    finally:
        registry.unregister("right-kf")


def test_every_built_in_test_keeps_the_contract():
    from iolab.suites.testdef import CONTRACT, contract_problems

    for test in registry.all():
        assert contract_problems(test) == [], test.name
    declared = {name for test in registry.all() for name in CONTRACT if getattr(test, name) is not None}
    assert declared == set(CONTRACT)  # each field of the contract is declared by some built-in test, so checked


class RemoteWithoutClaim:
    """Declares targets on other machines but leaves the claim and the safety checks to the run's
    start, which could only do them on this machine's path of the same name: another drive."""

    capabilities = replace(FioEngine.capabilities, drives=("file",), remote_targets=True, claims_targets=False)


def test_an_engine_declaring_remote_targets_without_claiming_them_is_refused_at_registration(monkeypatch):
    from iolab import engines
    from iolab.targets import Target

    ref = f"{__name__}:RemoteWithoutClaim"
    monkeypatch.setattr(engines, "ENGINES", (ref, *engines.ENGINES))
    with pytest.raises(IolabError) as e:
        engines.engine_class(Target("file", "file:/x", "/x", 1 << 20))
    text = " ".join(str(e.value).split())
    assert ref in text and "remote_targets=True needs claims_targets=True" in text, text
    for remote in (True, False):  # a consistent declaration is registered
        caps = replace(RemoteWithoutClaim.capabilities, remote_targets=remote, claims_targets=True)
        monkeypatch.setattr(RemoteWithoutClaim, "capabilities", caps)
        assert engines.engine_class(Target("file", "file:/x", "/x", 1 << 20)) is RemoteWithoutClaim
