"""The subset of JSON Schema (2020-12) that docs/schema/outcome.schema.json uses, checked
strictly: type, const, enum, required, properties, items and local $ref. Any other keyword
in the schema is an error here, so the schema cannot grow a rule this check ignores. The tests
check real documents with it; `iolab check` and `compare` check a saved document before reading
it (a run record missing `state` was a KeyError traceback)."""

from __future__ import annotations

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
KNOWN = {
    "$schema",
    "$id",
    "title",
    "description",
    "$defs",
    "type",
    "const",
    "enum",
    "required",
    "properties",
    "items",
    "$ref",
}


def _is(value, t: str) -> bool:
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[t])


def errors(value: object, schema: dict, root: dict | None = None, where: str = "$") -> list[str]:
    root = root or schema
    unknown = set(schema) - KNOWN
    if unknown:
        return [f"{where}: schema keyword(s) {sorted(unknown)} not supported by this check"]
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(value, root["$defs"][name], root, where)
    out = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(value, t) for t in types):
            return [f"{where}: {value!r:.60} is not {' or '.join(types)}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        out += [f"{where}: missing {k!r}" for k in schema.get("required", ()) if k not in value]
        for k, sub in schema.get("properties", {}).items():
            if k in value:
                out += errors(value[k], sub, root, f"{where}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            out += errors(v, schema["items"], root, f"{where}[{i}]")
    return out
