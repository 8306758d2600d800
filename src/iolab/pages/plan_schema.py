"""The `plan` part of `iolab plan --json` (api/planinfo.py builds it, cli/planview.py adds the ETA),
declared once here and mounted in outcome_schema.py's document with its $defs."""

from __future__ import annotations

from iolab.pages.schema_parts import INT_OR_NULL, NUM, NUM_OR_NULL, STR_OR_NULL, arr, obj, ref, t

STEP = obj(
    {
        "label": t("string"),
        "read_pct": NUM,
        "block_sizes": arr(t("integer")),
        "threads": t("integer"),
        "queue_depth": t("integer"),
        "seconds": NUM_OR_NULL,  # null: it runs to `bytes`, at the drive's speed
        "ramp_s": NUM,
        "bytes": INT_OR_NULL,
        "rate_iops": INT_OR_NULL,
    }
)
PLANNED_PHASE = obj(
    {
        "name": t("string"),
        "built_from": STR_OR_NULL,  # a phase built during the run: what from (the rest is empty or null)
        "purge": t("boolean"),
        "precondition": arr(ref("planned_step")),
        "cells": arr(
            obj(
                {
                    "key": t("string"),
                    "mix": t("string"),
                    "block_size": t("integer"),
                    "workload": ref("planned_step"),
                    "idle_before_s": NUM_OR_NULL,
                }
            )
        ),
        "tracking": arr(t("string")),
        "max_rounds": INT_OR_NULL,
        "stop_on_steady": t("boolean", "null"),
        "budget_write_bytes": INT_OR_NULL,
        "budget_seconds": NUM_OR_NULL,
        "min_write_bytes": INT_OR_NULL,
        "stop_rule": STR_OR_NULL,
        "round_seconds": NUM,
        "earliest_s": NUM,
        "latest_s": NUM,
    }
)
PLAN_DEFS = {"planned_step": STEP, "planned_phase": PLANNED_PHASE}
PLAN = obj(
    {
        "test": t("string"),
        "target": t("string"),
        "split": STR_OR_NULL,
        "ignored": arr(t("string")),
        "eta": obj(
            {
                "text": t("string"),
                "earliest_s": NUM,
                "expected_latest_s": NUM,
                "at_most_s": NUM,
                "not_estimated": arr(t("string")),
            }
        ),
        "tests": arr(
            obj(
                {
                    "test": t("string"),
                    "title": t("string"),
                    "spec": t("string"),
                    "target": t("string"),
                    "copy_of": STR_OR_NULL,
                    "scaled_by": arr(t("string")),
                    "target_capacity_bytes": t("integer"),
                    "tested_capacity_bytes": t("integer"),
                    "active_range": NUM,
                    "purge_method": t("string"),
                    "purge_does": t("string"),
                    "cell_seconds": NUM,
                    "max_rounds": t("integer"),
                    "max_rounds_from": {"enum": ["profile", "--max-rounds", "not used"]},
                    "steady_rule": t("string"),
                    "steady_window": t("integer"),
                    "steady_min_write_bytes": t("integer"),
                    "compliant": t("boolean"),
                    "noncompliance": arr(t("string")),
                    "ignored_options": t("object"),
                    "parameters": t("object"),
                    "notes": arr(t("string")),
                    "earliest_s": NUM,
                    "latest_s": NUM,
                    "phases": arr(ref("planned_phase")),
                }
            )
        ),
    }
)
