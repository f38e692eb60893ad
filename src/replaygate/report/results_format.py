"""The results format's JSON Schema, and a document that breaks it told where, in our words."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from replaygate.report.escape import truncate

if TYPE_CHECKING:  # imported where used: rendering results needs no jsonschema
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

SCHEMA_FILE = "results.schema.json"  # beside this module; docs/results.md documents it
_KINDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


@functools.cache
def schema() -> dict[str, Any]:
    from importlib import resources  # with tempfile and random, 3 ms: only a reader needs it

    text = resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@functools.cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator, validators

    # JSON Schema counts 1.0 as an integer; a results file's counts and lines never are floats
    integers = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: type(value) is int
    )
    strict = validators.extend(Draft202012Validator, type_checker=integers)  # type: ignore[no-untyped-call]
    return cast("Draft202012Validator", strict(schema()))


Located = tuple[tuple[str | int, ...], str]  # where in the document, and what is wrong there


def schema_problem(document: Any) -> Located | None:
    """The most relevant violation of the schema, or None."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(document))
    if error is None:
        return None
    explain = _EXPLAIN.get(str(error.validator))
    return tuple(error.absolute_path), explain(error) if explain else error.message


def kind(value: Any) -> str:
    """A parsed JSON value as a message shows it: the value itself when it is short."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return repr(truncate(value, 40))
    return json.dumps(value)


# --- one message per schema keyword the results schema uses, the actual value last --------
# (the stubs type the error's fields as possibly unset; a yielded error always has them)


def _value(error: ValidationError) -> Any:
    return error.validator_value


def _instance(error: ValidationError) -> Any:
    return error.instance


def _type(error: ValidationError) -> str:
    wanted = _value(error)
    names = wanted if isinstance(wanted, list) else [wanted]
    return f"expected {' or '.join(_KINDS[name] for name in names)}, got {kind(_instance(error))}"


def _required(error: ValidationError) -> str:
    missing = next(key for key in _value(error) if key not in _instance(error))
    return f"missing {missing!r}"


def _additional(error: ValidationError) -> str:
    known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
    unknown = sorted(key for key in _instance(error) if key not in known)
    return f"unknown key {kind(unknown[0])}"


def _enum(error: ValidationError) -> str:
    return f"expected one of {', '.join(_value(error))}, got {kind(_instance(error))}"


def _const(error: ValidationError) -> str:
    return f"expected {kind(_value(error))}, got {kind(_instance(error))}"


def _minimum(error: ValidationError) -> str:
    return f"expected {_value(error)} or more, got {kind(_instance(error))}"


def _maximum(error: ValidationError) -> str:
    return f"expected {_value(error)} or less, got {kind(_instance(error))}"


def _pattern(error: ValidationError) -> str:
    return f"expected a string matching {_value(error)}, got {kind(_instance(error))}"


_EXPLAIN: dict[str, Callable[[ValidationError], str]] = {
    "type": _type,
    "required": _required,
    "additionalProperties": _additional,
    "enum": _enum,
    "const": _const,
    "minimum": _minimum,
    "maximum": _maximum,
    "pattern": _pattern,
}
