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

The evidence is found once, where the run's plans are built (api/runs.planned sets
TestPlan.ignored_options), and kept with each run (the manifest stores it): a comparison or a
check counts an ignored option at the value the run's plan is the same at, so two WSAT runs
that differ only in `--max-rounds` measure the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from iolab.core.plan import TestPlan


def ignored(test: str, plans: Sequence[TestPlan], flags: Mapping[str, str]) -> list[str]:
    """One line per option of `flags` (Profile field -> its command-line flag) that changes nothing
    in some of `plans`, the plans `iolab run TEST` runs as api.runs.planned built them: each
    records the options given that its plan is the same without (so a plan is not built again
    to say so)."""
    unused = {k: [p.test for p in plans if k in p.ignored_options] for k in flags}
    out = []
    for k, names in unused.items():
        if not names:
            continue
        if len(plans) == 1:
            out.append(f"{flags[k]} changes nothing in {test} (its plan is the same without it): ignored.")
        elif len(names) == len(plans):
            out.append(
                f"{flags[k]} changes nothing in any of {test}'s tests (their plans are the same without it): ignored."
            )
        else:
            out.append(
                f"{flags[k]} changes nothing in {', '.join(names)} (their plans are the same without it): ignored there."
            )
    return out
