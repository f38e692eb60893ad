"""Every operator: what passes, what fails with which message, which contract values it refuses."""

from __future__ import annotations

from typing import Any

import pytest

from replaygate.assertions.operators import (
    MODIFIERS,
    OPERATORS,
    CheckError,
    Sees,
)
from replaygate.assertions.regex_size import _scanned_size, expanded_size
from replaygate.assertions.values import MAX_REPR, short, strict_equal, suggestion


def check(name: str, expected: Any, actual: Any, env: dict[str, str] | None = None) -> str | None:
    op = OPERATORS[name]
    return op.check(actual, op.prepare(expected), env or {})


def test_registry_holds_the_documented_operators() -> None:
    assert list(OPERATORS) == [
        "equals",
        "exists",
        "type",
        "contains",
        "equals_env",
        "one_of",
        "regex",
        "gte",
        "lte",
        "length_gte",
        "length_lte",
        "not",
        "any_of",
        "all_of",
        "each",
        "contains_item",
        "sequence",
    ]
    assert all(name == op.name for name, op in OPERATORS.items())
    assert {n for n, op in OPERATORS.items() if op.sees is Sees.COLLECTION} == {
        "contains",
        "length_gte",
        "length_lte",
        "each",
        "contains_item",
        "sequence",
    }
    assert {n for n, op in OPERATORS.items() if op.nested} == {
        "not",
        "any_of",
        "all_of",
        "each",
        "contains_item",
        "sequence",
    }
    assert [n for n, op in OPERATORS.items() if op.sees is Sees.MATCHES] == ["exists"]
    assert {"path", "optional"} == MODIFIERS
    assert not MODIFIERS & OPERATORS.keys()


@pytest.mark.parametrize(
    ("name", "expected", "actual", "message"),
    [
        ("equals", "P1", "P1", None),
        ("equals", "P1", "P2", "'P2' is not equal to 'P1'"),
        ("equals", 1, 1.0, None),
        ("equals", 1, True, "True is not equal to 1"),
        ("equals", True, 1, "1 is not equal to True"),
        ("equals", 0, False, "False is not equal to 0"),
        ("equals", None, None, None),
        ("equals", None, "", "'' is not equal to None"),
        ("equals", [1, {"a": True}], [1.0, {"a": True}], None),
        (
            "equals",
            [1, {"a": True}],
            [1, {"a": 1}],
            "[1, {'a': 1}] is not equal to [1, {'a': True}]",
        ),
        ("equals", {"a": 1}, {"a": 1, "b": 2}, "{'a': 1, 'b': 2} is not equal to {'a': 1}"),
        ("equals", {"a": 1, "b": 2}, {"a": 1}, "{'a': 1} is not equal to {'a': 1, 'b': 2}"),
        ("equals", {"a": {"b": 2}}, {"a": {}}, "{'a': {}} is not equal to {'a': {'b': 2}}"),
        ("equals", [1, 2], [2, 1], "[2, 1] is not equal to [1, 2]"),
        ("equals", "1", 1, "1 is not equal to '1'"),
        ("type", "string", "x", None),
        ("type", "string", 1, "1 is not of type 'string'"),
        ("type", "number", 1, None),
        ("type", "number", 1.5, None),
        ("type", "number", True, "True is not of type 'number'"),
        ("type", "number", "1", "'1' is not of type 'number'"),
        ("type", "integer", 3, None),
        ("type", "integer", 3.0, "3.0 is not of type 'integer'"),
        ("type", "integer", False, "False is not of type 'integer'"),
        ("type", "boolean", False, None),
        ("type", "boolean", 0, "0 is not of type 'boolean'"),
        ("type", "array", [], None),
        ("type", "array", {}, "{} is not of type 'array'"),
        ("type", "object", {}, None),
        ("type", "object", "{}", "'{}' is not of type 'object'"),
        ("type", "null", None, None),
        ("type", "null", 0, "0 is not of type 'null'"),
        ("contains", "timeout", "connection timeout after 30s", None),
        (
            "contains",
            "Timeout",
            "connection timeout",
            "'connection timeout' does not contain 'Timeout'",
        ),
        ("contains", 5, "503", "'503' does not contain 5"),
        ("contains", "search", ["book", "search"], None),
        ("contains", 1, [True], "[True] does not contain 1"),
        ("contains", {"a": 1}, [{"a": 1}], None),
        ("contains", {"a": 1}, {"a": 1.0, "b": 2}, None),
        ("contains", {"a": 1}, {"a": True}, "{'a': True} does not contain {'a': 1}"),
        # an object needle needs every one of its keys, not just one
        ("contains", {"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 3}, None),
        (
            "contains",
            {"a": 1, "b": 3},
            {"a": 1, "b": 2},
            "{'a': 1, 'b': 2} does not contain {'a': 1, 'b': 3}",
        ),
        ("contains", {"a": 1, "z": 1}, {"a": 1}, "{'a': 1} does not contain {'a': 1, 'z': 1}"),
        ("contains", {"c": 1}, {"a": 1}, "{'a': 1} does not contain {'c': 1}"),
        ("contains", "a", {"a": 1}, "{'a': 1} does not contain 'a'"),
        ("contains", "x", 5, "5 is not a string, array or object"),
        ("contains", "x", None, "None is not a string, array or object"),
        ("one_of", ["CH", "Switzerland"], "CH", None),
        ("one_of", ["P1"], "P2", "'P2' is not one of ['P1']"),
        ("one_of", [1, 2], True, "True is not one of [1, 2]"),
        ("one_of", [1, 2], 2.0, None),
        ("one_of", [None], None, None),
        ("regex", r"^\d{4}-\d{2}-\d{2}", "2026-03-03T14:23:00", None),
        ("regex", "x+", "abc", "'abc' does not match 'x+'"),
        ("regex", "b", "abc", None),  # an unanchored search
        ("regex", "(?i)ABC", "xabcx", None),
        ("regex", "ABC", "xabcx", "'xabcx' does not match 'ABC'"),
        ("regex", "1", 1, "1 is not a string"),
        (
            "regex",
            "(a+)+$",
            "a" * 40 + "!",
            "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' does not match '(a+)+$'",
        ),
        ("gte", 5, 5, None),
        ("gte", 5, 7.5, None),
        ("gte", 5, 3, "3 is less than 5"),
        ("gte", 0, True, "True is not a number"),
        ("gte", 0, "abc", "'abc' is not a number"),
        ("gte", 0.5, None, "None is not a number"),
        ("lte", 5, 5, None),
        ("lte", 5, 7, "7 is greater than 5"),
        ("lte", 1, False, "False is not a number"),
        ("lte", 10, "3", "'3' is not a number"),
        ("length_gte", 2, "ab", None),
        ("length_gte", 3, "ab", "'ab' has length 2, less than 3"),
        ("length_gte", 1, [], "[] has length 0, less than 1"),
        ("length_gte", 1, {"a": 1}, None),
        ("length_gte", 1, 5, "5 has no length"),
        ("length_gte", 0, None, "None has no length"),
        ("length_lte", 2, [1, 2], None),
        ("length_lte", 1, [1, 2], "[1, 2] has length 2, more than 1"),
        ("length_lte", 0, {}, None),
        ("length_lte", 0, True, "True has no length"),
    ],
)
def test_operator(name: str, expected: Any, actual: Any, message: str | None) -> None:
    assert check(name, expected, actual) == message


@pytest.mark.parametrize(
    ("wanted", "matches", "message"),
    [
        (True, ["x"], None),
        (True, [None], None),  # a null value is present
        (True, [], "path not found"),
        (False, [], None),
        (False, ["x"], "'x' is present, expected no value"),
        (False, [1, 2], "2 values are present, expected none"),
    ],
)
def test_exists_sees_the_matches(wanted: bool, matches: list[Any], message: str | None) -> None:
    assert check("exists", wanted, matches) == message


def test_equals_env() -> None:
    env = {"SERVICE": "payment-gateway", "SECRET": "hunter2"}
    assert check("equals_env", "SERVICE", "payment-gateway", env) is None
    message = check("equals_env", "SECRET", "guess", env)
    assert message == "'guess' is not equal to environment variable SECRET"
    assert "hunter2" not in message  # the variable's value never reaches a report
    assert check("equals_env", "PORT", 8443, {"PORT": "8443"}) == (
        "8443 is not equal to environment variable PORT"
    )
    with pytest.raises(CheckError, match=r"^environment variable MISSING is not set$"):
        check("equals_env", "MISSING", "x", env)


def test_catastrophic_regex_is_an_error_not_a_hang() -> None:
    op = OPERATORS["regex"]
    pattern = op.prepare("(a|a)+$")
    with pytest.raises(CheckError, match=r"regex '\(a\|a\)\+\$' timed out on a 41-character"):
        op.check("a" * 40 + "!", pattern, {})


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^[[:alpha:]]+$", "abc", True),  # a POSIX class: in re, a set of [, :, a, l, p, h
        ("^[[:alpha:]]+$", "ab1", False),
        ("^\\p{L}+$", "\u00e9t\u00e9", True),  # a Unicode property: refused by re
        ("^(?>a+)b", "aaab", True),
        ("^\\d$", "\u0663", True),  # any Unicode digit, as in re
        ("^\\N{WHITE SMILING FACE}{2}$", "\u263a\u263a", True),  # an escape's braces
    ],
)
def test_the_documented_dialect_is_the_regex_module_from_validation_to_search(
    pattern: str, text: str, matches: bool
) -> None:
    compiled = OPERATORS["regex"].prepare(pattern)
    assert compiled.pattern == pattern
    assert (OPERATORS["regex"].check(text, compiled, {}) is None) == matches


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("a{1000}", 1000),
        ("(?:(?:x{10}){10}){10}", 1000),
        ("(?P<n>ab){3}", 6),
        ("[{1000}]", 1),  # braces in a class are members
        ("[]{]{3}", 3),
        ("[[:alpha:]]{5}", 5),
        ("\\{1000\\}", 6),
        ("\\p{1000}", 1),
        ("a{2}{3}", 6),
    ],
)
def test_the_size_of_a_pattern_is_read_from_its_text(pattern: str, size: int) -> None:
    assert _scanned_size(pattern) == size


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        # verbose mode: "#" starts a comment, so the "(" after it is text, not a group
        ("(?x)(?:(?:a{1000}#(\n){1000}#(\n){100}", 100_000_000),
        ("(?x)(?:a{1000}#(\n){1000}", 1_000_000),
        # a comment group ends at the first ")": the "(" inside it opens nothing
        ("(?:a{1000}(?#(){1000}", 1_000_000),
        ("\\p{L}(?:a{100}(?#(){1000})", 100_001),
    ],
)
def test_comments_cannot_hide_a_repeat_from_the_size(pattern: str, size: int) -> None:
    assert expanded_size(pattern) >= size


def test_verbose_mode_with_syntax_re_cannot_read_is_refused() -> None:
    with pytest.raises(ValueError, match="verbose mode"):
        OPERATORS["regex"].prepare("(?x)\\p{L}(?:a{1000}#(\n){1000}")


def test_a_pattern_whose_comments_hide_a_huge_repeat_is_too_large() -> None:
    with pytest.raises(ValueError, match="too large: 100000000 elements"):
        OPERATORS["regex"].prepare("(?x)(?:(?:a{1000}#(\n){1000}#(\n){100}")


def test_regex_is_compiled_once_at_prepare() -> None:
    assert OPERATORS["regex"].prepare("a+b") is OPERATORS["regex"].prepare("a+b")
    assert OPERATORS["regex"].prepare("(?i)x").search("X")
    for _ in range(2):  # only what compiles is kept: a refused pattern is refused each time
        with pytest.raises(ValueError, match="too large"):
            OPERATORS["regex"].prepare("a{1000000000}")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("equals", float("nan"), "equals must be JSON data, got nan: quote it"),
        ("equals", {"a": [1, {2: "x"}]}, "equals must be JSON data, got key 2: quote it"),
        ("equals", {None: 1}, "equals must be JSON data, got key None: quote it"),
        ("contains", ("a",), "contains must be JSON data, got ('a',): quote it"),
        ("exists", "yes", "exists must be true or false, got 'yes'"),
        ("exists", 1, "exists must be true or false, got 1"),
        (
            "type",
            "str",
            "type must be one of string, number, integer, boolean, array, object, null, "
            "got 'str' (did you mean 'string'?)",
        ),
        ("type", ["string", "null"], "type must be one of string, number"),
        ("type", "float", "got 'float'"),
        ("one_of", [], "one_of must be a non-empty list, got []"),
        ("one_of", "P1", "one_of must be a non-empty list, got 'P1'"),
        ("one_of", [float("inf")], "one_of must be JSON data, got inf: quote it"),
        ("equals_env", "", "equals_env must be the name of an environment variable, got ''"),
        ("equals_env", "A=B", "equals_env must be the name of an environment variable"),
        ("equals_env", 5, "equals_env must be the name of an environment variable, got 5"),
        ("regex", 5, "regex must be a string, got 5"),
        ("regex", "x(", "invalid regex 'x(': missing ) at position 2"),
        ("regex", "[z-a]", "invalid regex '[z-a]': bad character range at position 4"),
        ("regex", "a{4294967296}", "regex 'a{4294967296}' is too large: 4294967296 elements"),
        ("regex", "a{1,4294967296}", "invalid regex 'a{1,4294967296}': repeat count too big"),
        ("regex", "(" * 2000 + ")" * 2000, "maximum recursion depth exceeded"),
        ("regex", "(?<\x1b>a)", "invalid regex '(?<\\x1b>a)': bad character in group name at"),
        ("regex", "a{1000000000}", "regex 'a{1000000000}' is too large: 1000000000 elements"),
        ("regex", "(?:a{1000}){1000}", "is too large: 1000000 elements once repeats are expanded"),
        ("gte", "5", "gte must be a number, got '5'"),
        ("gte", True, "gte must be a number, got True"),
        ("lte", float("inf"), "lte must be a number, got inf"),
        ("length_gte", -1, "length_gte must be a non-negative integer, got -1"),
        ("length_lte", 2.0, "length_lte must be a non-negative integer, got 2.0"),
        ("length_lte", False, "length_lte must be a non-negative integer, got False"),
    ],
)
def test_prepare_refuses(name: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        OPERATORS[name].prepare(value)
    assert message in str(info.value)
    assert str(info.value).isprintable()  # one line, no raw control characters


def test_huge_repetition_is_refused_before_it_is_compiled() -> None:
    with pytest.raises(ValueError, match="is too large: 1000000000 elements"):
        OPERATORS["regex"].prepare("(?:(?:x{1000}){1000}){1000}")


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        (True, 1, False),
        (1, True, False),
        (False, 0, False),
        (True, True, True),
        (1, 1.0, True),
        ("a", "a", True),
        (None, None, True),
        (None, False, False),
        ([True], [1], False),
        ({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]}, True),
        ({"a": 1}, {"b": 1}, False),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ({"a": 1, "b": 2}, {"a": 1}, False),
        ([1, 2], [1, 2, 3], False),
        ([], {}, False),
        ("1", 1, False),
    ],
)
def test_strict_equal(left: Any, right: Any, equal: bool) -> None:
    assert strict_equal(left, right) is equal


def test_strict_equal_handles_deep_nesting() -> None:
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    assert strict_equal(deep, deep)


def test_short_truncates_long_values() -> None:
    text = short("x" * 1_000_000)
    assert len(text) <= MAX_REPR
    assert len(short({"k" * 500: ["v" * 500] * 500})) <= MAX_REPR
    message = check("equals", "a", "b" * 1_000_000)
    assert message is not None and len(message) < 2 * MAX_REPR
    assert short("a\nb\x1b") == "'a\\nb\\x1b'"


def test_suggestion() -> None:
    assert suggestion("equal", OPERATORS) == " (did you mean 'equals'?)"
    assert suggestion("zzz", OPERATORS) == ""
    assert suggestion(5, OPERATORS) == ""
