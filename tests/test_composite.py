"""Composite operators: each passing and failing, nested and at the top level, with lines."""

from __future__ import annotations

from typing import Any

import pytest

from replaygate.assertions.assertion import Assertion, compile_assertion, evaluate_assertion
from replaygate.core.errors import PackError
from replaygate.loading.yaml_reader import parse_yaml

CALLS = {
    "tool_calls": [
        {"name": "search", "arguments": {"q": "flights", "limit": 5}},
        {"name": "lookup", "arguments": {"q": "hotels", "limit": 50}},
        {"name": "book", "arguments": {"id": "F1"}},
    ],
    "severity": "P3",
}


def compile_yaml(text: str) -> Assertion:
    raw = parse_yaml(text, shown="c.yaml")
    return compile_assertion(
        raw, locator="a[0]", file="c.yaml", line=raw.line, key_lines=raw.key_lines
    )


def misses(text: str, doc: Any = CALLS) -> list[tuple[str, int, str, str, str]]:
    """(locator, line, kind, path, message) of each mismatch."""
    found = evaluate_assertion(compile_yaml(text), doc, {})
    return [(m.locator, m.line, m.kind, m.path, m.message) for m in found]


# --- not, any_of, all_of: one value -------------------------------------------------------


def test_not_passes_when_the_nested_assertion_fails() -> None:
    assert misses("path: $.severity\nnot:\n  one_of: [P1, P2]\n") == []


def test_not_fails_on_the_line_of_the_assertion_that_held() -> None:
    text = "path: $.severity\nnot:\n  - equals: P1\n  - equals: P3\n"
    assert misses(text) == [
        (
            "a[0]:not[1]",
            4,
            "value",
            "$.severity",
            "'P3' satisfies equals 'P3', which must not hold",
        )
    ]


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("not: {equals: 1}", True),
        ("not: {exists: true}", True),
        ("not: [{one_of: [1, 2]}, {path: $.b, equals: 3}]", True),
        ("not: {exists: false}", False),
        ("not: {optional: true, equals: 1}", False),
        ("not: {not: {equals: 1}}", False),
        ("not: {any_of: [{equals: 1}, {exists: false}]}", False),
        ("not: {all_of: [{equals: 1}, {exists: false}]}", True),
        ("any_of: [{equals: 1}, {not: {equals: 2}}]", True),
        ("all_of: [{not: {equals: 1}}, {exists: false}]", True),
        ("all_of: [{not: {equals: 1}}, {equals: 2}]", False),
    ],
)
def test_not_holds_on_an_absent_path_unless_its_nested_assertion_does(
    text: str, holds: bool
) -> None:
    found = misses(f"path: $.gone\n{text}\n")
    assert (found == []) is holds, found
    assert all(kind == "path_not_found" for _, _, kind, _, _ in found)


def test_any_of_passes_on_one_alternative() -> None:
    assert misses("path: $.severity\nany_of:\n  - equals: P1\n  - regex: '^P[0-9]$'\n") == []


def test_any_of_failure_names_the_closest_alternative() -> None:
    text = """\
path: $.tool_calls[0].arguments
any_of:
  - path: $.q
    equals: trains
    type: integer
  - path: $.q
    equals: hotels
"""
    [(locator, line, kind, path, message)] = misses(text)
    # on the closest alternative's failing check (`equals: hotels`), not on `any_of:`
    assert (locator, line, kind, path) == ("a[0]:any_of", 7, "value", "$.tool_calls[0].arguments")
    assert message == (
        "no alternative holds; closest is alternative 2 (line 6): "
        "$.q: 'flights' is not equal to 'hotels'"
    )


def test_all_of_reports_every_nested_failure_on_its_own_line() -> None:
    text = """\
path: $.tool_calls[1].arguments
all_of:
  - path: $.q
    equals: hotels
  - path: $.limit
    lte: 10
  - path: $.missing
    exists: true
"""
    assert misses(text) == [
        ("a[0]:all_of[1]:lte", 6, "value", "$.tool_calls[1].arguments.limit",
         "50 is greater than 10"),
        ("a[0]:all_of[2]:exists", 8, "path_not_found", "$.tool_calls[1].arguments.missing",
         "path not found"),
    ]  # fmt: skip


def test_any_of_never_leaks_into_object_matching() -> None:
    """A wrong tool whose arguments match an alternative does not pass (the @isdk bug)."""
    text = """\
path: $.tool_calls
contains_item:
  any_of:
    - contains: {name: delete, arguments: {q: flights, limit: 5}}
    - contains: {name: remove}
"""
    [(locator, line, kind, _, message)] = misses(text)
    assert (locator, line, kind) == ("a[0]:contains_item", 4, "value")
    assert message.startswith("no item satisfies the nested assertions; closest is item 1 of 3")
    right = text.replace("name: delete", "name: search")
    assert misses(right) == []


# --- each, contains_item, sequence: arrays ------------------------------------------------


def test_each_passes_when_every_item_holds() -> None:
    assert misses("path: $.tool_calls\neach:\n  path: $.name\n  type: string\n") == []


def test_each_reports_the_first_item_that_breaks_each_nested_assertion() -> None:
    text = """\
path: $.tool_calls
each:
  - path: $.arguments.q
    type: string
  - path: $.arguments.limit
    lte: 10
  - path: $.name
    not: {equals: book}
"""
    assert misses(text) == [
        ("a[0]:each[0]:type", 4, "path_not_found", "$.tool_calls[2].arguments.q",
         "path not found (item 3 of 3)"),
        ("a[0]:each[1]:lte", 6, "value", "$.tool_calls[1].arguments.limit",
         "50 is greater than 10 (item 2 of 3)"),
        ("a[0]:each[2]:not[0]", 8, "value", "$.tool_calls[2].name",
         "'book' satisfies equals 'book', which must not hold (item 3 of 3)"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("path", "nested", "where"),
    [
        ("$.tool_calls[*].name", "{not: {equals: lookup}}", "$.tool_calls[1].name"),
        (
            "$.tool_calls[*]",
            "{path: $.arguments.limit, lte: 10}",
            "$.tool_calls[1].arguments.limit",
        ),
        ("$..arguments", "{path: $.q, equals: flights}", "$.tool_calls[1].arguments.q"),
        ("$.tool_calls[*].arguments['q']", "{equals: flights}", "$.tool_calls[1].arguments.q"),
    ],
)
def test_each_on_a_collection_path_names_the_item_by_its_own_path(
    path: str, nested: str, where: str
) -> None:
    [found] = misses(f"path: {path}\neach: {nested}\n")
    assert found[3] == where


def test_each_needs_an_array() -> None:
    assert misses("path: $.severity\neach: {type: string}\n") == [
        ("a[0]:each", 2, "value", "$.severity", "'P3' is not an array")
    ]


def test_contains_item_passes_when_one_item_satisfies_all_nested_assertions() -> None:
    text = """\
path: $.tool_calls
contains_item:
  - path: $.name
    equals: lookup
  - path: $.arguments.limit
    gte: 10
"""
    assert misses(text) == []


def test_contains_item_needs_one_item_to_satisfy_them_all() -> None:
    text = """\
path: $.tool_calls
contains_item:
  - path: $.name
    equals: search
  - path: $.arguments.limit
    gte: 10
"""
    [(locator, line, _, _, message)] = misses(text)
    assert (locator, line) == ("a[0]:contains_item", 6)
    assert message == (
        "no item satisfies the nested assertions; closest is item 1 of 3: "
        "$.arguments.limit: 5 is less than 10"
    )
    assert misses("path: $.empty\ncontains_item: {type: string}\n", {"empty": []}) == [
        ("a[0]:contains_item", 2, "value", "$.empty", "[] has no items")
    ]


SEQUENCE = """\
path: $.tool_calls[*].name
sequence:
  - equals: search
  - equals: book
"""


def test_sequence_allows_gaps() -> None:
    assert misses(SEQUENCE) == []


def test_sequence_keeps_the_order() -> None:
    text = SEQUENCE.replace("search", "SWAP").replace("book", "search").replace("SWAP", "book")
    [(locator, line, _, path, message)] = misses(text)
    assert (locator, line, path) == ("a[0]:sequence[1]", 4, "$.tool_calls[*].name")
    assert message == "no item is left after item 3 for step 2"


def test_sequence_never_uses_one_item_twice() -> None:
    text = SEQUENCE + "  - equals: book\n"
    assert misses(text) == [
        ("a[0]:sequence[2]", 5, "value", "$.tool_calls[*].name",
         "no item is left after item 3 for step 3"),
    ]  # fmt: skip


def test_sequence_reports_each_missing_step_and_the_closest_item() -> None:
    text = """\
path: $.tool_calls
sequence:
  - path: $.name
    equals: pay
  - path: $.name
    equals: lookup
  - contains: {name: book, arguments: {id: F2}}
"""
    assert [m[:2] + m[4:] for m in misses(text)] == [
        ("a[0]:sequence[0]", 4,
         "no item satisfies step 1; closest is item 1: $.name: 'search' is not equal to 'pay'"),
        ("a[0]:sequence[2]", 7,
         "no item after item 2 satisfies step 3; closest is item 3: "
         "{'name': 'book', 'arguments': {'id': 'F1'}} does not contain "
         "{'name': 'book', 'arguments': {'id': 'F2'}}"),
    ]  # fmt: skip


# --- nesting, paths, errors ---------------------------------------------------------------


def test_composites_nest_and_keep_their_own_lines() -> None:
    text = """\
path: $
all_of:
  - path: $.tool_calls
    each:
      path: $.name
      any_of:
        - one_of: [search, book]
        - regex: ^look
  - path: $.tool_calls
    contains_item:
      path: $.arguments
      all_of:
        - contains: {id: F1}
        - not: {path: $.q, exists: true}
"""
    assert misses(text) == []
    broken = text.replace("^look", "^LOOK")
    [(locator, line, _, path, message)] = misses(broken)
    assert (locator, line, path) == ("a[0]:all_of[0]:each[0]:any_of", 7, "$.tool_calls[1].name")
    assert message.startswith("no alternative holds; closest is alternative 1 (line 7): 'lookup'")
    assert message.endswith("(item 2 of 3)")


def test_optional_applies_inside_a_nested_assertion() -> None:
    text = "path: $.tool_calls\neach:\n  path: $.arguments.limit\n  optional: true\n  lte: 50\n"
    assert misses(text) == []


def test_an_undecidable_nested_check_errors() -> None:
    doc = {"items": ["a" * 40 + "!", "b"]}
    text = "path: $.items\ncontains_item:\n  regex: '(a|a)+$'\n"
    [(locator, line, kind, _, message)] = misses(text, doc)
    assert (locator, line, kind) == ("a[0]:contains_item[0]:regex", 3, "error")
    assert "timed out" in message


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("path: $.a\nany_of: {equals: 1}\n", 2, "any_of must be a non-empty list of mappings"),
        ("path: $.a\nall_of: []\n", 2, "all_of must be a non-empty list of mappings"),
        ("path: $.a\neach: 3\n", 2, "each must be a mapping of operators or a non-empty list"),
        ("path: $.a\nsequence: [x]\n", 2, "sequence[0] must be a mapping of operators, got 'x'"),
        ("path: $.a\nall_of:\n  - equal: 1\n", 3, "unknown operator 'equal' (did you mean"),
        ("path: $.a\nnot:\n  path: a\n  exists: true\n", 3, "must start with '$'"),
        ("path: $.a\neach:\n  optional: true\n", 3, "assertion has no operator"),
        ("path: $.a\nany_of:\n  - type: str\n", 3, "type must be one of string"),
    ],
)
def test_bad_nested_assertions_are_refused_on_their_line(
    text: str, line: int, message: str
) -> None:
    with pytest.raises(PackError) as info:
        compile_yaml(text)
    assert (info.value.line, message in info.value.message) == (line, True), info.value.message


def test_a_yaml_reading_inside_a_nested_assertion_gets_its_hint() -> None:
    text = "path: $.a\nall_of:\n  - equals: 'no'\n  - equals: no\n"
    assert misses(text, {"a": "no"}) == [
        ("a[0]:all_of[1]:equals", 4, "value", "$.a",
         "'no' is not equal to False; the contract's `no` was read as false; quote it"),
    ]  # fmt: skip


# --- where a composite's failure is located -----------------------------------------------


def test_a_composite_failure_lands_on_the_deepest_failing_check_of_the_closest_branch() -> None:
    text = """\
path: $.tool_calls[1].arguments
any_of:
  - path: $.q
    equals: trains
    type: integer
  - all_of:
      - path: $.q
        equals: hotels
      - any_of:
          - path: $.limit
            lte: 10
          - path: $.limit
            type: string
            lte: 5
"""
    [(locator, line, kind, path, message)] = misses(text)
    # the annotation sits on `lte: 10`, the composite's locator and context stay
    assert (locator, line, kind, path) == ("a[0]:any_of", 11, "value", "$.tool_calls[1].arguments")
    assert message == (
        "no alternative holds; closest is alternative 2 (line 6): "
        "no alternative holds; closest is alternative 1 (line 10): $.limit: 50 is greater than 10"
    )


def test_contains_item_and_sequence_land_on_the_closest_items_failing_check() -> None:
    contains = "path: $.tool_calls\ncontains_item:\n  - path: $.name\n    equals: search\n"
    contains += "  - path: $.arguments.limit\n    gte: 10\n"
    assert [m[:2] for m in misses(contains)] == [("a[0]:contains_item", 6)]
    sequence = "path: $.tool_calls\nsequence:\n  - path: $.name\n    equals: pay\n"
    assert [m[:2] for m in misses(sequence)] == [("a[0]:sequence[0]", 4)]
