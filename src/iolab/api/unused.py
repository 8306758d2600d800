"""Which of the profile options a user gave change nothing in the tests they run: WSAT and XSR
run to a write or time budget, so `--max-rounds` cannot shape them; a test without WIPC has no
`--precondition-factor`. Such an option is ignored, and the run says so before it starts,
rather than leaving the user to believe it took effect.

An option is used when the plan built without it differs in what the runner runs
(core/plan.ignored_options, TestPlan.essence): the phases, the tested capacity, the typed
parameters, the steady-state rule where a phase stops on steady state, and the write cache and
active range the runner reads from the plan's profile (a plan's
`parameters` and `notes` are text for the report, so they do not count). A phase built during
the run (`Deferred`) is compared as its builder, which is never the same twice: such a test is
taken to use every option, so the check can miss an option, never invent one.

The same evidence is kept with each run (api/runs.planned sets TestPlan.ignored_options, the
manifest stores them): a comparison or a check counts an ignored option at the value the run's
plan is the same at, so two WSAT runs that differ only in `--max-rounds` measure the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path

from iolab.api import registry
from iolab.api.runs import built_plan
from iolab.core.plan import Profile, ignored_options
from iolab.targets import Target


def ignored(
    test: str,
    profile: Profile,
    defaults: Profile,
    flags: Mapping[str, str],
    target: Target,
    workload: str | Path | None = None,
    everything: bool = False,
) -> list[str]:
    """One line per given option (`flags`: Profile field -> its command-line flag) that changes
    nothing in some of the tests `iolab run TEST` runs with `profile`; `defaults`: the profile
    without the options given."""
    given = {k: f for k, f in flags.items() if getattr(profile, k) != getattr(defaults, k)}
    if not given:
        return []
    unused: dict[str, list[str]] = {k: [] for k in given}
    tests = registry.sequence(test, everything)
    for t in tests:
        for k in ignored_options(partial(built_plan, t, target, workload), profile, defaults, tuple(given)):
            unused[k].append(t.name)
    out = []
    for k, names in unused.items():
        if not names:
            continue
        if len(tests) == 1:
            out.append(f"{given[k]} changes nothing in {test} (its plan is the same without it): ignored.")
        elif len(names) == len(tests):
            out.append(
                f"{given[k]} changes nothing in any of {test}'s tests (their plans are the same without it): ignored."
            )
        else:
            out.append(
                f"{given[k]} changes nothing in {', '.join(names)} (their plans are the same without it): ignored there."
            )
    return out
