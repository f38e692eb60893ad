"""Tool-call arguments against the request's JSON Schema parameters."""

from __future__ import annotations

import time

import pytest

from replaygate.toolschema import InvalidToolSchema, violations

SCHEMA = {
    "type": "object",
    "required": ["city"],
    "additionalProperties": False,
    "properties": {
        "city": {"type": "string", "minLength": 2},
        "unit": {"enum": ["c", "f"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}


@pytest.mark.parametrize(
    ("arguments", "keyword", "path"),
    [
        ({}, "required", "$"),
        ({"city": 3}, "type", "$.city"),
        ({"city": "B"}, "minLength", "$.city"),
        ({"city": "Bern", "unit": "k"}, "enum", "$.unit"),
        ({"city": "Bern", "days": 30}, "maximum", "$.days"),
        ({"city": "Bern", "days": True}, "type", "$.days"),
        ({"city": "Bern", "tags": ["a", 1]}, "type", "$.tags[1]"),
        ({"city": "Bern", "extra": 1}, "additionalProperties", "$"),
    ],
)
def test_each_kind_of_violation(arguments: dict[str, object], keyword: str, path: str) -> None:
    (found,) = violations(SCHEMA, arguments)
    assert (found.keyword, found.path) == (keyword, path)


def test_valid_arguments_have_no_violation() -> None:
    assert list(violations(SCHEMA, {"city": "Bern", "unit": "c", "days": 3})) == []


def test_an_invalid_schema_is_reported() -> None:
    with pytest.raises(InvalidToolSchema, match="invalid JSON Schema"):
        list(violations({"type": "objekt"}, {}))


def test_a_catastrophic_pattern_is_bounded_in_time() -> None:
    schema = {"properties": {"s": {"type": "string", "pattern": "^(a|a)+$"}}}
    started = time.monotonic()
    with pytest.raises(InvalidToolSchema, match="timed out"):
        list(violations(schema, {"s": "a" * 40 + "!"}))
    assert time.monotonic() - started < 5


def test_pattern_properties_use_the_bounded_search() -> None:
    schema = {"patternProperties": {"^x_": {"type": "integer"}}}
    (found,) = violations(schema, {"x_a": "no", "y": "fine"})
    assert found.keyword == "type" and found.path == "$.x_a"
