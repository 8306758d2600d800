"""The JSON Schema of the `--json` documents (outcome.py builds them, check.py builds the
verdicts), declared once here. docs/schema/outcome.schema.json is this dict as written by
`python -m iolab.pages.outcome_schema`; a test holds the file to it and checks real documents
against it. A change that removes or retypes a field raises SCHEMA_VERSION; adding a field
does not (readers ignore fields they do not know)."""

from __future__ import annotations

import json
import sys

from iolab.core.steady import STEADY_STATES
from iolab.pages.fleet import REPORT_SCHEMA
from iolab.pages.outcome import SCHEMA_NAME, SCHEMA_VERSION
from iolab.pages.plan_schema import PLAN, PLAN_DEFS
from iolab.pages.schema_parts import NUM, NUM_OR_NULL, STR_OR_NULL
from iolab.pages.schema_parts import arr as _arr
from iolab.pages.schema_parts import obj as _obj
from iolab.pages.schema_parts import ref as _ref
from iolab.pages.schema_parts import t as _t

DIRECTION = {"enum": ["higher-is-better", "lower-is-better"]}
KIND = {"enum": ["value", "percentile", "extreme"]}

DEFS = {
    "target": _obj(
        {
            "spec": _t("string"),
            "copy_of": STR_OR_NULL,
            "copy_of_capacity_bytes": _t("integer", "null"),
            "kind": _t("string"),
            "vendor": STR_OR_NULL,
            "model": STR_OR_NULL,
            "serial": STR_OR_NULL,
            "firmware": STR_OR_NULL,
            "capacity_bytes": _t("integer", "null"),
            "tested_capacity_bytes": _t("integer", "null"),
            "identity": _t("object"),
        }
    ),
    "tracking": _obj(
        {
            "variable": _t("string"),
            "rounds": _arr(_t("integer")),
            "values": _arr(NUM),
            "average": NUM,
            "range": NUM,
            "range_allowed": NUM,
            "slope": NUM,
            "intercept": NUM,
            "fit_excursion": NUM,
            "fit_allowed": NUM,
            "steady": _t("boolean"),
        },
        {"decides": _t("boolean")},
    ),
    "phase": _obj(
        {
            "name": _t("string"),
            "steady": _t("boolean", "null"),
            "rounds": _t("integer"),
            "window": _arr(_t("integer")),
            "stop_reason": STR_OR_NULL,
            "tracking": _arr(_ref("tracking")),
        },
        # `for_information` added within version 1: the phase runs to its budget whatever `steady` says
        # `not_accepted` added within version 1: why a window that passes the rule was not accepted
        {"audit": _arr(_t("string")), "for_information": _t("boolean"), "not_accepted": STR_OR_NULL},
    ),
    "decision": _obj(
        {
            "phase": _t("string"),
            "rule": _t("object"),
            "outcome": _t("string"),
            "chosen": _t("object"),
            "round": _t("integer", "null"),
            "cell": STR_OR_NULL,
            "text": _t("string"),
        },
        # added within version 1: who decided where not the rule, which judged it (a bisection step)
        {"label": _t("string")},
    ),
    "figure": _obj(
        {
            "name": _t("string"),
            "unit": _t("string"),
            "direction": DIRECTION,
            "value": NUM_OR_NULL,
            "round_values": _arr(NUM),
        },
        # added within version 1: why a figure without a value was not measured (too few IOs), what a
        # value is of where its name may claim more ("steady-part"), its run's steady-state caveats
        {
            "audit": _arr(_t("string")),
            "kind": KIND,
            "unmeasured": _t("string"),
            "note": _t("string"),
            "caveat": _t("boolean"),
            "caveats": _arr(_t("string")),
            "steady_part": _ref("steady_part"),
        },
    ),
    # added within version 1: a "steady-part" figure's part and verdict by the run's rule (consistency.py
    # part_record); `steady` null: too few seconds to judge (no range or excursion); % of the pieces' mean
    "steady_part": _obj(
        {
            "from_s": NUM,
            "seconds": _t("integer"),
            "steady": _t("boolean", "null"),
            "comparison": {"enum": ["inclusive", "strict"]},
        },
        {
            "range_pct": NUM,
            "range_allowed_pct": NUM,
            "excursion_pct": NUM,
            "excursion_allowed_pct": NUM,
            "pieces": _t("integer"),
            "piece_seconds": _t("integer"),
        },
    ),
    "invariant": _obj(
        {
            "name": _t("string"),
            "checks": _t("string"),
            "touches": _arr(_t("string")),
            "status": {"enum": ["pass", "fail", "n/a"]},
            "reason": _t("string"),
            "numbers": _t("object"),
        }
    ),
    "audit": _obj(
        {
            "passed": _t("boolean"),
            "audited": _t("string"),
            "counts": _obj({"pass": _t("integer"), "fail": _t("integer"), "n/a": _t("integer")}),
            "failed": _arr(_t("string")),
            "invariants": _arr(_ref("invariant")),
        },
        {"stored": _t("boolean"), "remade": _arr(_t("string"))},
    ),
    "run": _obj(
        {
            "run_id": _t("string"),
            "path": _t("string"),
            "test": _t("string"),
            "title": _t("string"),
            "state": {"enum": ["running", "complete", "failed", "interrupted"]},
            "error": STR_OR_NULL,
            "started": _t("string"),
            "ended": STR_OR_NULL,
            "compliant": _t("boolean"),
            "noncompliance": _arr(_t("string")),
            "target": _ref("target"),
            "profile": _t("object"),
            "steady_rule": _t("string"),
            "steady_state": {"enum": list(STEADY_STATES)},
            "phases": _arr(_ref("phase")),
            "decisions": _arr(_ref("decision")),
            "figures": _arr(_ref("figure")),
            "reports": _arr(_t("string")),
        },
        # added within version 1 (absent from documents written before it)
        {
            "audit": _ref("audit"),
            "ignored_options": _t("object"),
            "notes": _arr(_t("string")),
            "uid": STR_OR_NULL,
            # TBW and DWPD with the WAF and its basis; null for a run whose test measures no endurance
            "endurance": {
                **_obj(
                    {
                        "waf": NUM,
                        "basis": _t("string"),
                        "short": _t("string"),
                        "tbw_bytes": _t("number", "null"),
                        "dwpd": _t("number", "null"),
                        "warranty_years": _t("number", "null"),
                    }
                ),
                "type": ["object", "null"],
            },
            # what a newer iolab stored in the run that this one does not know (kept, not read)
            "unknown": _arr(_t("string")),
        },
    ),
    "listed_run": _obj(
        {
            "run_id": _t("string"),
            "path": _t("string"),
            "test": _t("string"),
            "target": _t("string"),
            "state": {"enum": ["running", "complete", "failed", "interrupted", "broken"]},
            "started": _t("string"),
            "compliant": _t("boolean"),
            "noncompliance": _arr(_t("string")),
            "problem": STR_OR_NULL,
        },
        {"unknown": _arr(_t("string"))},  # added within version 1, as the run record's
    ),
    # `iolab runs`: a fleet directory under RUNS_DIR/fleets (its drives' runs are in `listed`)
    "listed_fleet": _obj(
        {
            "name": _t("string"),
            "path": _t("string"),
            "test": _t("string"),
            "state": {"enum": ["running", "complete", "interrupted"]},
            "drives": _t("integer"),
            "complete": _t("integer"),
        }
    ),
    "ranking": _obj(
        {
            "labels": _arr(_t("string")),
            "figures": _arr(
                _obj(
                    {
                        "name": _t("string"),
                        "unit": _t("string"),
                        "direction": DIRECTION,
                        "values": _arr(NUM_OR_NULL),
                        "ranks": _arr(_t("integer", "null")),
                        # per label: the key of the caveat (ranking.caveats) that drive's figure carries
                        "caveats": _arr(STR_OR_NULL),
                    },
                    # added within version 1: per label, what that drive's figure is of where its
                    # name may claim more (a DIRTH Mid figure read from Min's cells), else null
                    {"notes": _arr(STR_OR_NULL)},
                )
            ),
            # the caveats figures carry (their run not at steady state, an audit invariant failed for
            # them), each by the key the figures name it with, as the terminal's [a]
            "caveats": _arr(_obj({"key": _t("string"), "text": _t("string")})),
            # what every page of the comparison report says of its runs (forced, non-compliant …), in full
            "comparison_caveats": _arr(_t("string")),
        },
        # added within version 1: the figure notes as the terminal prints them under the ranking
        {"published": _arr(_t("boolean")), "notes": _arr(_t("string"))},
    ),
    "published_figure": _obj(
        {
            "drive": _t("string"),
            "figure": _t("string"),
            "value": NUM,
            "unit": _t("string"),
            "direction": DIRECTION,
            "source": _t("string"),
        }
    ),
    "side": _obj(
        {
            "runs": _arr(_t("string")),
            "mean": NUM_OR_NULL,
            "value": NUM_OR_NULL,
            "samples": _arr(NUM),
            # window-rounds: no longer given (a run's rounds are not run-to-run noise)
            "noise_source": {"enum": ["repeats", "window-rounds", "none"]},
        }
    ),
    "verdict": _obj(
        {
            "name": _t("string"),
            "unit": _t("string"),
            "direction": DIRECTION,
            "kind": KIND,
            "verdict": {
                "enum": [
                    "regression",
                    "within-noise",
                    "within-tolerance",
                    "improvement",
                    "info",
                    "missing",
                    "not-measured",
                    "not-compared",
                ]
            },
            "baseline": _ref("side"),
            "candidate": _ref("side"),
            "change_pct": NUM_OR_NULL,
            "worse_pct": NUM_OR_NULL,
            "noise_pct": NUM_OR_NULL,
            "detectable_pct": NUM_OR_NULL,
            "tolerance_pct": NUM,
            "method": _t("string"),
        },
        # added within version 1: whether noise_pct is the edge of an interval of the logarithms
        # (asymmetric: the worse side's) or of the values (±)
        {"noise_scale": {"enum": ["log", "linear"]}},
    ),
    "check": _obj(
        {
            "passed": _t("boolean"),
            "confidence": NUM,
            "max_regression_pct": NUM,
            "test": _t("string"),
            "differences": _arr(_t("string")),
            "figures": _arr(_ref("verdict")),
            "regressions": _arr(_t("string")),
            "not_steady": _arr(_t("string")),
            "require_steady": _t("boolean"),
            "warnings": _arr(_t("string")),
            "junit": STR_OR_NULL,
        },
        # added within version 1: what figures are of, where their names may claim more; each
        # side's drive models and whether they differ (a check across models is of the drives)
        {
            "notes": _arr(_t("string")),
            "drive_models": _obj(
                {
                    "baseline": _arr(_t("string", "null")),
                    "candidate": _arr(_t("string", "null")),
                    "differ": _t("boolean"),
                }
            ),
        },
    ),
    "repeat": _obj(
        {
            "runs": _t("integer"),
            "repeats": _t("integer"),
            "confidence": NUM,
            "method": _t("string"),
            "figures": _arr(
                _obj(
                    {
                        "test": _t("string"),
                        "name": _t("string"),
                        "unit": _t("string"),
                        "direction": DIRECTION,
                        "values": _arr(NUM),
                        "n": _t("integer"),
                        "mean": NUM_OR_NULL,
                        "stdev": NUM_OR_NULL,
                        "half_width": NUM_OR_NULL,
                        "low": NUM_OR_NULL,
                        "high": NUM_OR_NULL,
                    },
                    # added within version 1; an extreme's half_width, low and high are null; a
                    # geometric interval (`interval`) has a factor (×/÷) and no half_width
                    {
                        "kind": KIND,
                        "interval": {"enum": ["t", "t, clipped at 0", "geometric", "none"]},
                        "geometric_mean": NUM_OR_NULL,
                        "factor": NUM_OR_NULL,
                        # why the runs without a value have none, each once (a percentile of too few IOs)
                        "unmeasured": _arr(_t("string")),
                    },
                )
            ),
        },
        # added within version 1: the runs' steady-state and non-compliance caveats on the means
        {"caveats": _arr(_t("string"))},
    ),
    "history": _obj(
        {
            "figure": _t("string"),
            "unit": _t("string"),
            "direction": DIRECTION,
            "tests": _arr(_t("string")),
            "targets": _arr(
                _obj(
                    {
                        "id": _t("string"),
                        "label": _t("string"),
                        "spec": _t("string"),
                        "serial": STR_OR_NULL,
                        "model": STR_OR_NULL,
                        "identity": _t("object"),
                        "points": _arr(
                            _obj(
                                {
                                    "run_id": _t("string"),
                                    "path": _t("string"),
                                    "started": _t("string"),
                                    "firmware": STR_OR_NULL,
                                    "value": NUM_OR_NULL,
                                },
                                # added within version 1: a document saved before has none of them
                                {
                                    "compliant": _t("boolean"),
                                    "noncompliance": _arr(_t("string")),
                                    "seed": _t("integer", "null"),  # a simulated drive's run of the drive
                                    # what the figure is true of, as fleet's drives carry it
                                    "steady_state": {"enum": [*STEADY_STATES, None]},
                                    # not-reached over windows that pass the rule's numbers: why
                                    # they were not accepted (null: a window failed them)
                                    "steady_not_accepted": STR_OR_NULL,
                                    "audit_failed": _arr(_t("string")),
                                },
                            )
                        ),
                    }
                )
            ),
            "skipped": _arr(_obj({"path": _t("string"), "reason": _t("string")})),
            "html": STR_OR_NULL,
        }
    ),
}

_POWER_SCOPE = _obj(
    {
        "name": _t("string"),
        "cells": _t("integer"),
        "measured": _t("integer"),
        "avg_mw": _t("number", "null"),
        "max_mw": _t("number", "null"),
    }
)
# `iolab power`: a meter's log aligned to a run's cells (figures/power.py); avg/max null: not measured
POWER = _obj(
    {
        "run_id": _t("string"),
        "source": _t("string"),
        "source_copy": _t("string"),
        "readings": _t("integer"),
        "interval_s": NUM,
        "offset_s": NUM,
        "min_coverage_pct": NUM,
        "run": _POWER_SCOPE,
        "phases": _arr(_POWER_SCOPE),
        "cells": _arr(
            _obj(
                {
                    "phase": _t("string"),
                    "round": _t("integer"),
                    "cell": _t("integer"),
                    "label": _t("string"),
                    "started": NUM,
                    "ended": NUM,
                    "readings": _t("integer"),
                    "coverage_pct": NUM,
                    "avg_mw": _t("number", "null"),
                    "max_mw": _t("number", "null"),
                    "energy_mj": NUM,
                    "covered_s": NUM,
                }
            )
        ),
    },
    # the meter log copy's size and digest, by which readers tell it is the log the figures came from;
    # gap_s: the silence a reading does not hold across (power.json written before it was kept has none)
    {"source_copy_bytes": _t("integer"), "source_copy_sha256": _t("string"), "gap_s": NUM},
)

# The commands whose --json prints this document (`sim calibrate --json` prints its own; `fleet`, only its error's).
COMMANDS = ("run", "resume", "show", "compare", "runs", "check", "history", "audit", "power", "plan", "fleet")

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"{SCHEMA_NAME}-{SCHEMA_VERSION}.schema.json",
    "title": "iolab --json output",
    "description": "One document per command: run, resume and show list runs; compare adds a ranking; "
    "runs lists run directories; check adds verdicts per key figure; history one figure across runs; "
    "audit gives each run's self-audit; power a meter log's figures per cell; plan what a run would do; "
    "run --fleet (resume and show of a fleet) adds the fleet report; fleet's is only an error's.",
    **_obj(
        {
            "schema": {"const": SCHEMA_NAME},
            "schema_version": {"const": SCHEMA_VERSION},
            "command": {"enum": list(COMMANDS)},
            "exit_code": _t("integer"),
        },
        {
            "runs": _arr(_ref("run")),
            "baseline": _arr(_ref("run")),
            "listed": _arr(_ref("listed_run")),
            "fleets": _arr(_ref("listed_fleet")),
            "ranking": _ref("ranking"),
            "reports": _arr(_t("string")),
            "check": _ref("check"),
            "history": _ref("history"),
            "published": _arr(_ref("published_figure")),
            "repeat": _ref("repeat"),
            "audits": _arr(
                _obj(
                    {"run_id": _t("string"), "path": _t("string"), "audit": _ref("audit")},
                    {"stored": _t("object", "null")},  # the audit stored at the run's end, if any
                )
            ),
            "power": POWER,
            "plan": PLAN,
            # run --fleet, resume FLEET and show FLEET: the fleet report (docs/fleet.md; `iolab fleet
            # --json` and report.json hold it alone), beside the complete drives' runs
            "fleet_report": _obj(
                {"schema": {"const": REPORT_SCHEMA}, "schema_version": {"const": 1}, "drives": _t("array")}
            ),
            "error": _t("string"),
        },
    ),
    "$defs": DEFS | PLAN_DEFS,
}


def text() -> str:
    return json.dumps(SCHEMA, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(text())
