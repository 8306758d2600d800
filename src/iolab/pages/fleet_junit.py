"""The fleet report's verdict for automation, from its document (fleet.py): the exit status
(a drive's own failure, a steady state required and not reached, an outlier, a failed criterion
or a regressed group) and the JUnit XML, one test case per drive and check."""

from __future__ import annotations

import signal
from xml.sax.saxutils import escape, quoteattr

from iolab.core.errors import Exit
from iolab.core.steady import STEADY_NOT_APPLICABLE, STEADY_NOT_EVALUATED, STEADY_NOT_REACHED, STEADY_REACHED
from iolab.core.units import human_bytes

STEADY_WORDS: dict[str, str] = {
    STEADY_REACHED: "reached",
    STEADY_NOT_REACHED: "NOT reached",
    STEADY_NOT_EVALUATED: "not evaluated",
    STEADY_NOT_APPLICABLE: "not applicable (the test tracks none)",
}

# a drive the fleet's stop kept from starting, as its verdict and its JUnit `run` case say it
NOT_STARTED_WHY = (
    "not started: the fleet was stopped before this drive began, so it was not tested (neither failed nor "
    "passed); `iolab resume` of the fleet tests it"
)


def interrupted_why(r: dict) -> str:
    """Why a drive whose run a stop ended (part-way, or as it started) has no verdict yet: it is
    not a failure of the drive, and the fleet's resume goes on with it."""
    how = f" ({r['error']})" if r.get("error") else ""
    return (
        f"interrupted{how}: a stop ended its run before it completed, so it is not judged yet (neither failed "
        "nor passed); `iolab resume` of the fleet goes on with it"
    )


def steady_words(state: str | None, not_accepted: str | None, unknown: str = "n/a") -> str:
    """A run's steady state as history, the fleet's pages and `show` word it: a window that passes
    the rule's range and slope but was not accepted (figures/fleet.not_accepted) is "NOT
    accepted" and why, as `show` says it; "NOT reached" read as if its numbers had failed."""
    if state == STEADY_NOT_REACHED and not_accepted is not None:
        why = not_accepted or "the run did not accept it"
        return f"NOT accepted: the window passes the rule's range and slope, but {why}"
    return STEADY_WORDS.get(state or "", unknown)


def facts_text(r: dict) -> str:
    """A drive's model, serial, firmware and capacity in one line, '—' for each its run did not read."""
    cap = r.get("capacity_bytes")
    return (
        f"model {r.get('model') or '—'}, serial {r.get('serial') or '—'}, firmware {r.get('firmware') or '—'}, "
        f"capacity {human_bytes(cap) if isinstance(cap, (int, float)) else '—'}"
    )


def _drive_code(code: object) -> int:
    """A drive that did not complete, as its own process ended: its status, or the shell's code
    for the signal that killed it (kill -9: 137); a drive that says nothing (its run unreadable)
    is bad input, as a run iolab cannot read is."""
    if isinstance(code, int) and code > 0:
        return code
    if isinstance(code, int) and code < 0:
        return 128 - code
    return Exit.BAD_INPUT


def stop_code(stopped_by: str | None) -> int:
    """The shell's code for the signal that stopped a fleet (`stopped_by` in fleet.json): 130
    for Ctrl-C, 143 for SIGTERM."""
    return 128 + int(getattr(signal, stopped_by or "SIGINT", signal.SIGINT))


def exit_code(doc: dict) -> int:
    """A drive that did not complete: its own run's status (the first such, in fleet order; a
    drive never started, or whose run the fleet's stop ended: that stop, which is why it was not
    run to its end); else
    6 when a drive's own run said it did not reach the steady state asked for (`--require-steady`
    reaches every drive's run: its figures are then not the ones asked for, to judge or to
    pass); else 7 (as `iolab check`'s regression) when a drive fails a criterion or is an
    outlier, or a group regressed against the baseline group; else 0."""
    for r in doc["drives"]:
        if r["state"] in ("running", "pending"):
            continue  # not ended yet (a fleet shown while it runs): no status of its own to give
        if r["state"] == "not-started":  # it was 2, bad input, for a drive the fleet's stop kept from running
            return stop_code(doc["fleet"].get("stopped_by"))
        if r["state"] == "interrupted" and doc["fleet"].get("stopped_by"):  # the fleet's stop ended its run
            return stop_code(doc["fleet"]["stopped_by"])
        if r["state"] != "complete":
            return _drive_code(r.get("exit_code"))
    if any(r.get("exit_code") == Exit.NOT_STEADY for r in doc["drives"]):
        return Exit.NOT_STEADY
    s = doc["summary"]
    regressed = any(c["regressions"] for c in (doc.get("groups") or {}).get("comparisons", []))
    return Exit.REGRESSION if s["failing_criteria"] or s["outlier_drives"] or regressed else Exit.OK


def _steady_case(r: dict) -> tuple[str, str]:
    """A complete drive's steady-state case: a failure when its run was asked to reach steady
    state (`--require-steady`: the run's own exit status says it did not), skipped when it was not
    reached or not evaluated but not required (the caveat says it), passed when reached."""
    state = r.get("steady_state") or "unknown"
    msg = f"steady state {steady_words(state, r.get('steady_not_accepted'), state)}"
    if r.get("exit_code") == Exit.NOT_STEADY:
        return f'<failure message={quoteattr(msg + " (--require-steady)")} type="steady-state"/>', msg
    if state != STEADY_REACHED:
        return f"<skipped message={quoteattr(msg + '; not required')}/>", msg
    return "", msg


def _outlier_case(r: dict, doc: dict) -> tuple[str, str]:
    """A complete drive's outlier-rule case: a failure on the figures it strays on; skipped when
    the rule judged none of its figures (fewer drives than the rule needs measured each, or
    extremes only), which a CI system read as a pass; passed, naming how many figures it was
    judged on, otherwise."""
    if r["outliers"]:
        msg = f"outlier on {', '.join(r['outliers'])}"
        return f'<failure message={quoteattr(msg)} type="outlier"/>', msg
    judged = r["outlier_judged"]
    if not judged:
        least = doc["outlier_rule"]["min_drives"]
        msg = (
            f"not judged: the outlier rule judges a figure only when {least} or more drives measured it, "
            "and never an extreme (a maximum latency)"
        )
        return f"<skipped message={quoteattr(msg)}/>", msg
    return "", f"within the fleet on the {len(judged)} figure{'s' if len(judged) > 1 else ''} judged"


def class_names(names: list[str]) -> dict[str, str]:
    """Each name as one part of a JUnit class name: a CI system reads a class name's dots as its
    package path (Jenkins shows `fleet.f1.img` as class `img` of package `fleet.f1`, and a host's
    drive `10.0.0.2_d1.img` under four packages), so its dots become '_' (a name that then meets
    another's gets '_2', '_3', ... in fleet order; each case's output names the drive as given)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        base = cls = name.replace(".", "_")
        n = 1
        while cls in taken:
            n += 1
            cls = f"{base}_{n}"
        out[name] = cls
        taken.add(cls)
    return out


def junit_xml(doc: dict) -> str:
    """One test case per drive and check: its run, the outlier rule, its steady state, each
    spec-sheet criterion. A run that did not complete is an error (the drive could not be judged);
    an outlier, a steady state required and not reached and a failed criterion are failures; a
    criterion the run does not measure or measured but not as the drive's (not judged: a quick
    run, no steady state), and a steady state not reached but not required, are skipped."""
    cases, failures, errors, skipped = [], 0, 0, 0
    classes = class_names([r["name"] for r in doc["drives"]])
    for r in doc["drives"]:
        cls = quoteattr(f"fleet.{classes[r['name']]}")

        def case(name: str, body: str, out: str, cls: str = cls) -> None:
            cases.append(
                f"    <testcase classname={cls} name={quoteattr(name)}>{body}"
                f"<system-out>{escape(out)}</system-out></testcase>"
            )

        ran = r["state"] == "complete"
        stopped = {"not-started": NOT_STARTED_WHY, "interrupted": interrupted_why(r)}
        why = f"{r['name']} ({r['target']} on {r['where']}): " + stopped.get(
            r["state"], r["state"] + (f": {r['error']}" if r.get("error") else "")
        )
        if ran:  # which drive it was: a CI job's reader replaces it by its serial
            why += f"; {facts_text(r)}"
        # A run that did not complete is an <error> (JUnit's "could not be judged": a crash, a
        # refusal, a host that died), not a <failure> (judged and found wanting: an outlier, a
        # missed bound); CI systems count and show the two apart. A drive still running or not
        # yet started (a fleet shown while it runs) is skipped: it has not ended either way; one
        # the fleet's stop kept from starting too, never tested (an <error> read as its crash), and
        # one whose run a stop ended, which the fleet's resume goes on with.
        if r["state"] in ("running", "pending"):
            body = f"<skipped message={quoteattr('not ended yet: ' + why)}/>"
        elif r["state"] in stopped:
            body = f"<skipped message={quoteattr(why)}/>"
        else:
            body = "" if ran else f'<error message={quoteattr(why)} type="run"/>'
        case("run", body, why)
        errors += "<error" in body
        skipped += "<skipped" in body
        if not ran:  # every check still has its case: skipped, as the drive was not measured
            sheet = (doc.get("spec_sheet") or {}).get("criteria", [])
            for name in ("outlier rule", "steady state", *(f"criterion: {c['name']}" for c in sheet)):
                case(name, f"<skipped message={quoteattr('not measured: ' + why)}/>", why)
                skipped += 1
        if ran:
            body, msg = _outlier_case(r, doc)
            case("outlier rule", body, msg)
            failures += "<failure" in body
            skipped += "<skipped" in body
            body, msg = _steady_case(r)
            case("steady state", body, msg)
            failures += "<failure" in body
            skipped += "<skipped" in body
        for v in r["verdicts"]:
            body = ""
            if v["verdict"] == "fail":
                body, failures = f'<failure message={quoteattr(v["why"])} type="criterion"/>', failures + 1
            elif v["verdict"] in ("not-measured", "not-judged"):
                body, skipped = f"<skipped message={quoteattr(v['why'])}/>", skipped + 1
            case(f"criterion: {v['criterion']}", body, v["why"])
    for c in (doc.get("groups") or {}).get("comparisons", []):
        cls = quoteattr(f"fleet.group.{class_names([c['group']])[c['group']]}")
        for f in c["figures"]:
            msg = f"{f['name']}: {f['verdict']} vs group {c['baseline']} ({f['method']})"
            body = f'<failure message={quoteattr(msg)} type="group"/>' if f["name"] in c["regressions"] else ""
            failures += bool(body)
            cases.append(
                f"    <testcase classname={cls} name={quoteattr(f['name'])}>{body}"
                f"<system-out>{escape(msg)}</system-out></testcase>"
            )
    name = quoteattr(f"iolab fleet: {doc['fleet']['name']} ({doc['fleet']['test']})")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites name="iolab fleet" tests="{len(cases)}" failures="{failures}" errors="{errors}">\n'
        f'  <testsuite name={name} tests="{len(cases)}" failures="{failures}" errors="{errors}" skipped="{skipped}">\n'
        + "\n".join(cases)
        + "\n  </testsuite>\n</testsuites>\n"
    )
