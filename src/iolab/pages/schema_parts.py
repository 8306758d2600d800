"""The building blocks of the --json schemas (outcome_schema.py, plan_schema.py): JSON Schema
fragments written once, so every document's fields are declared the same way."""

from __future__ import annotations


def t(*types: str) -> dict:
    return {"type": list(types) if len(types) > 1 else types[0]}


def obj(required: dict, optional: dict | None = None) -> dict:
    """An object with these fields (all listed fields required; more may be added later)."""
    return {"type": "object", "required": sorted(required), "properties": {**required, **(optional or {})}}


def arr(items: dict) -> dict:
    return {"type": "array", "items": items}


def ref(name: str) -> dict:
    return {"$ref": f"#/$defs/{name}"}


NUM = t("number")
NUM_OR_NULL = t("number", "null")
STR_OR_NULL = t("string", "null")
INT_OR_NULL = t("integer", "null")
