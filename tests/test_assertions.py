"""Assertions: compiling a contract mapping (errors located by line) and evaluating it."""

from __future__ import annotations

from typing import Any

import pytest

from replaygate.assertions.assertion import (
    Assertion,
    Mismatch,
    compile_assertion,
    evaluate_assertion,
)
from replaygate.assertions.values import EmbeddedJson
from replaygate.core.errors import PackError

ARGS = EmbeddedJson({"location": "SF", "days": 3}, '{"location":"SF","days":3}')
RESPONSE: dict[str, Any] = {
    "success": True,
    "content": None,
    "tool_calls": [
        {"id": "c1", "name": "search", "arguments": ARGS},
        {"id": "c2", "name": "book", "arguments": EmbeddedJson({}, "{}")},
    ],
    "empty": [],
    "text": "a" * 40 + "!",
    "score": 0.7,
}


def compile_(raw: dict[str, Any], key_lines: dict[str, int] | None = None) -> Assertion:
    return compile_assertion(
        raw, locator="assertions.output_invariants[0]", file="c.yaml", line=10,
        key_lines=key_lines or {},
    )  # fmt: skip


def evaluate(
    raw: dict[str, Any], doc: Any = RESPONSE, env: dict[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """(kind, operator, message) of each mismatch."""
    found = evaluate_assertion(compile_(raw), doc, env or {})
    return [(m.kind, m.operator, m.message) for m in found]


# --- compile ------------------------------------------------------------------------------

LINES = {"path": 11, "equals": 12, "equal": 12, "type": 13, "optional": 14, "exists": 15}


def test_compile_keeps_locator_lines_and_order() -> None:
    raw = {"path": "$.score", "gte": 0, "lte": 1, "optional": True}
    assertion = compile_(raw, {"path": 11, "gte": 12, "lte": 13, "optional": 14})
    assert assertion.locator == "assertions.output_invariants[0]"
    assert assertion.line == 11
    assert assertion.optional is True
    assert assertion.path.text == "$.score"
    assert [(c.operator, c.expected, c.line) for c in assertion.checks] == [
        ("gte", 0, 12),
        ("lte", 1, 13),
    ]


def test_compile_lines_default_to_the_assertion_line() -> None:
    assertion = compile_({"path": "$.a", "exists": True})
    assert assertion.line == 10
    assert assertion.checks[0].line == 10


@pytest.mark.parametrize(
    ("raw", "line", "message"),
    [
        ({"path": "$.a", "equal": "x"}, 12, "unknown operator 'equal' (did you mean 'equals'?)"),
        ({"path": "$.a", "regexp": "x"}, 10, "unknown operator 'regexp' (did you mean 'regex'?)"),
        ({"path": "$.a", "optinal": True}, 10, "(did you mean 'optional'?)"),
        ({"path": "$.a", "zzz": 1}, 10, "unknown operator 'zzz'"),
        ({"path": "$.a", 1: 1}, 10, "unknown operator 1"),
        ({"equals": "x"}, 10, "assertion has no 'path'"),
        ({"path": 5, "exists": True}, 11, "path must be a string, got 5"),
        ({"path": "tool_calls", "exists": True}, 11, "JSONPath 'tool_calls' must start with '$'"),
        ({"path": "$.a[", "exists": True}, 11, "invalid JSONPath '$.a['"),
        ({"path": "$..a..b", "exists": True}, 11, "has 2 recursive descents"),
        ({"path": "$.a"}, 10, "assertion has no operator; use equals, exists, type"),
        ({"path": "$.a", "optional": True}, 10, "assertion has no operator"),
        ({"path": "$.a", "type": "str"}, 13, "got 'str' (did you mean 'string'?)"),
        ({"path": "$.a", "equals": float("nan")}, 12, "equals must be JSON data, got nan"),
        ({"path": "$.a", "optional": "yes", "exists": True}, 14, "optional must be true or false"),
        ({"path": "$.a", "optional": True, "exists": True}, 15, "optional: true and exists cannot"),
        (
            {"path": "$.a", "exists": False, "type": "string"},
            15,
            "exists: false cannot be combined",
        ),
        ({"path": "$.a", "exists": "true"}, 15, "exists must be true or false, got 'true'"),
        ({"path": "$.a", "regex": "a{1000000000}"}, 10, "is too large"),
        ({"path": "$.a", "regex": "(x"}, 10, "invalid regex '(x': missing )"),
    ],
)
def test_compile_errors(raw: dict[Any, Any], line: int, message: str) -> None:
    with pytest.raises(PackError) as info:
        compile_(raw, LINES)
    assert (info.value.file, info.value.line) == ("c.yaml", line)
    assert message in info.value.message
    assert "\n" not in info.value.message


def test_compile_allows_optional_false_with_exists() -> None:
    assert not compile_({"path": "$.a", "optional": False, "exists": True}).optional


# --- evaluate: a simple path --------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"path": "$.success", "equals": True}, []),
        ({"path": "$.success", "equals": 1}, [("value", "equals", "True is not equal to 1")]),
        ({"path": "$.content", "exists": True}, []),  # null is present
        ({"path": "$.content", "type": "null"}, []),
        ({"path": "$.missing", "exists": True}, [("path_not_found", "exists", "path not found")]),
        ({"path": "$.missing", "exists": False}, []),
        (
            {"path": "$.success", "exists": False},
            [("value", "exists", "True is present, expected no value")],
        ),
        (
            {"path": "$.missing", "type": "string", "length_gte": 1},
            [
                ("path_not_found", "type", "path not found"),
                ("path_not_found", "length_gte", "path not found"),
            ],
        ),
        ({"path": "$.missing", "type": "string", "optional": True}, []),
        (
            {"path": "$.score", "type": "string", "optional": True},
            [("value", "type", "0.7 is not of type 'string'")],
        ),  # a present value must still satisfy the operators
        ({"path": "$.tool_calls", "length_gte": 2, "type": "array"}, []),
        (
            {"path": "$.tool_calls", "length_gte": 4},
            [("value", "length_gte", f"{RESPONSE['tool_calls']!r} has length 2, less than 4")],
        ),
        ({"path": "$.tool_calls[0].name", "contains": "sea"}, []),
        ({"path": "$.score", "gte": 0, "lte": 1}, []),
        (
            {"path": "$.score", "gte": 0.8, "lte": 0.9},
            [("value", "gte", "0.7 is less than 0.8")],
        ),
        (
            {"path": "$.score", "gte": 0, "lte": 0.5},
            [("value", "lte", "0.7 is greater than 0.5")],
        ),
        (
            {"path": "$.text", "gte": 0, "lte": 1},
            [
                ("value", "gte", f"{'a' * 40 + '!'!r} is not a number"),
                ("value", "lte", f"{'a' * 40 + '!'!r} is not a number"),
            ],
        ),
    ],
)
def test_simple_path(raw: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    assert evaluate(raw) == expected


def test_mismatch_carries_expected_actual_and_line() -> None:
    assertion = compile_({"path": "$.tool_calls[0].name", "one_of": ["book"]}, {"one_of": 17})
    [mismatch] = evaluate_assertion(assertion, RESPONSE, {})
    assert mismatch == Mismatch(
        "value",
        "one_of",
        "'search' is not one of ['book']",
        ["book"],
        "search",
        17,
        "assertions.output_invariants[0]:one_of",
        "$.tool_calls[0].name",
    )


def test_exists_false_reports_the_value_found() -> None:
    [mismatch] = evaluate_assertion(compile_({"path": "$.score", "exists": False}), RESPONSE, {})
    assert mismatch.actual == 0.7


# --- evaluate: tool-call arguments as EmbeddedJson ----------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"path": "$.tool_calls[0].arguments.location", "equals": "SF"}, []),
        ({"path": "$.tool_calls[0].arguments.days", "gte": 1, "type": "integer"}, []),
        ({"path": "$.tool_calls[0].arguments", "exists": True, "type": "string"}, []),
        ({"path": "$.tool_calls[0].arguments", "contains": '"location":"SF"'}, []),
        (
            {"path": "$.tool_calls[0].arguments", "type": "object"},
            [("value", "type", '\'{"location":"SF","days":3}\' is not of type \'object\'')],
        ),
        (
            {"path": "$.tool_calls[1].arguments.location", "exists": True},
            [("path_not_found", "exists", "path not found")],
        ),
    ],
)
def test_embedded_arguments(raw: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    assert evaluate(raw) == expected


def test_argument_invariants_see_the_parsed_arguments() -> None:
    assert evaluate({"path": "$.location", "equals": "SF"}, ARGS) == []
    assert evaluate({"path": "$", "equals": ARGS.raw}, ARGS) == []


# --- evaluate: a collection path ----------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"path": "$.tool_calls[*].name", "contains": "search"}, []),
        (
            {"path": "$.tool_calls[*].name", "contains": "pay"},
            [("value", "contains", "['search', 'book'] does not contain 'pay'")],
        ),
        ({"path": "$.tool_calls[*].name", "length_gte": 2, "length_lte": 2}, []),
        (
            {"path": "$.tool_calls[*].name", "length_gte": 3},
            [("value", "length_gte", "['search', 'book'] has length 2, less than 3")],
        ),
        ({"path": "$.tool_calls[*].name", "exists": True}, []),
        (
            {"path": "$.tool_calls[*].name", "exists": False},
            [("value", "exists", "2 values are present, expected none")],
        ),
        ({"path": "$.tool_calls[*].id", "type": "string", "regex": "^c[0-9]$"}, []),
        (
            {"path": "$.tool_calls[*].name", "equals": "search"},
            [("value", "equals", "'book' is not equal to 'search' (match 2 of 2)")],
        ),
        (
            {"path": "$.tool_calls[*].name", "one_of": ["book"], "regex": "^b"},
            [
                ("value", "one_of", "'search' is not one of ['book'] (match 1 of 2)"),
                ("value", "regex", "'search' does not match '^b' (match 1 of 2)"),
            ],
        ),
        ({"path": "$.tool_calls[?(@.name == 'book')].id", "equals": "c2"}, []),
        # zero matches
        ({"path": "$.empty[*]", "exists": False}, []),
        ({"path": "$.empty[*]", "length_lte": 0}, []),
        (
            {"path": "$.empty[*]", "exists": True},
            [("path_not_found", "exists", "path not found")],
        ),
        (
            {"path": "$.empty[*].name", "contains": "search"},
            [("path_not_found", "contains", "[] does not contain 'search'")],
        ),
        (
            {"path": "$.empty[*].name", "equals": "x", "type": "string"},
            [
                ("path_not_found", "equals", "path not found"),
                ("path_not_found", "type", "path not found"),
            ],
        ),
        ({"path": "$.empty[*].name", "equals": "x", "contains": "y", "optional": True}, []),
        (
            {"path": "$.tool_calls[*].name", "equals": "x", "optional": True},
            [("value", "equals", "'search' is not equal to 'x' (match 1 of 2)")],
        ),
    ],
)
def test_collection_path(raw: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    assert evaluate(raw) == expected


def test_collection_contains_reports_the_list_of_matches() -> None:
    assertion = compile_({"path": "$.tool_calls[*].name", "contains": "pay"})
    [mismatch] = evaluate_assertion(assertion, RESPONSE, {})
    assert mismatch.actual == ["search", "book"]


# --- evaluate: errors ---------------------------------------------------------------------


def test_regex_timeout_is_an_error_mismatch() -> None:
    found = evaluate({"path": "$.text", "regex": "(a|a)+$", "length_gte": 1})
    assert found == [("error", "regex", "regex '(a|a)+$' timed out on a 41-character string")]


def test_catastrophic_regex_that_the_engine_handles_is_a_plain_miss() -> None:
    assert evaluate({"path": "$.text", "regex": "(a+)+$"}) == [
        ("value", "regex", f"{'a' * 40 + '!'!r} does not match '(a+)+$'")
    ]


def test_unset_environment_variable_is_an_error_mismatch() -> None:
    raw = {"path": "$.tool_calls[0].name", "equals_env": "TOOL"}
    assert evaluate(raw, env={"TOOL": "search"}) == []
    assert evaluate(raw, env={"TOOL": "book"}) == [
        ("value", "equals_env", "'search' is not equal to environment variable TOOL")
    ]
    assert evaluate(raw) == [("error", "equals_env", "environment variable TOOL is not set")]


def test_too_many_matches_is_an_error_mismatch_per_check() -> None:
    doc = {"items": list(range(10_001))}
    assert evaluate({"path": "$.items[*]", "type": "integer", "exists": True}, doc) == [
        ("error", "type", "path matched more than 10000 values"),
        ("error", "exists", "path matched more than 10000 values"),
    ]
