"""Reads Gemini tool lists as the toolkit sends them and has the google-genai
SDK's own models take them.

Input (stdin): a JSON object, one entry per tool set, each
`{"gemini": {"functionDeclarations": [...]}, "gemini_json_schema": {...}}`
(`Toolkit::to_gemini` and `Toolkit::to_gemini_json_schema`).

For each tool list:
- `types.Tool.model_validate` must accept it. The SDK's models refuse a key
  they do not know (`extra='forbid'`) and a value of the wrong type, at
  every level of every `parameters` schema.
- What the SDK would send back (`model_dump(by_alias=True,
  exclude_none=True)`) must be what went in, so that no key is dropped or
  renamed on the way. Numbers are compared as the doubles the API holds
  them as (`Schema.minimum` is a double there).
- Every `parametersJsonSchema` must be a valid JSON Schema (2020-12) by
  `jsonschema`'s meta-schema.

Prints one line per tool set and every failure; exits 1 if any.
"""

import json
import sys

import jsonschema
from google.genai import types


def as_doubles(value):
    """`value` with every number as a float, the way the API reads it."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):
        return {k: as_doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_doubles(v) for v in value]
    return value


def differences(sent, back, path="$"):
    """Where `back` differs from `sent`, as JSON paths."""
    if isinstance(sent, dict) and isinstance(back, dict):
        out = []
        for key in sorted(set(sent) | set(back)):
            if key not in back:
                out.append(f"{path}.{key}: dropped")
            elif key not in sent:
                out.append(f"{path}.{key}: added as {back[key]!r}")
            else:
                out.extend(differences(sent[key], back[key], f"{path}.{key}"))
        return out
    if isinstance(sent, list) and isinstance(back, list) and len(sent) == len(back):
        out = []
        for i, (a, b) in enumerate(zip(sent, back)):
            out.extend(differences(a, b, f"{path}[{i}]"))
        return out
    if path.endswith(".type") and isinstance(sent, str) and isinstance(back, str):
        # The SDK writes the `Type` enum by its proto name (`STRING` for
        # `string`); the API takes either.
        sent, back = sent.upper(), back.upper()
    return [] if sent == back else [f"{path}: sent {sent!r}, back {back!r}"]


def main():
    sets = json.load(sys.stdin)
    failures = []
    for name, lists in sets.items():
        declarations = 0
        for dialect in ("gemini", "gemini_json_schema"):
            tool = lists[dialect]
            try:
                model = types.Tool.model_validate(tool)
            except Exception as e:  # pydantic.ValidationError, listed in full
                failures.append(f"{name} {dialect}: the SDK refuses it:\n{e}")
                continue
            declarations += len(model.function_declarations or [])
            back = model.model_dump(by_alias=True, exclude_none=True, mode="json")
            for problem in differences(as_doubles(tool), as_doubles(back)):
                failures.append(f"{name} {dialect}: {problem}")
            if dialect == "gemini_json_schema":
                for declaration in tool["functionDeclarations"]:
                    try:
                        jsonschema.Draft202012Validator.check_schema(
                            declaration["parametersJsonSchema"]
                        )
                    except jsonschema.SchemaError as e:
                        failures.append(
                            f"{name} {declaration['name']}: not a valid JSON Schema: {e.message}"
                        )
        print(f"{name}: {declarations} declarations (both lists) taken by google-genai's models")
    for failure in failures:
        print(f"FAIL {failure}")
    if failures:
        sys.exit(1)
    print("google-genai: every declaration taken, nothing dropped or renamed")


if __name__ == "__main__":
    main()
