"""The matcher's quick answers agree with the full evaluation: holds() with
evaluate_assertion(), the by-name pairing with the augmenting-path matching, one_of's set of
strings with strict equality."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, assume
from hypothesis import strategies as st

from replaygate.assertions.assertion import Assertion, compile_assertion, evaluate_assertion
from replaygate.assertions.holds import holds
from replaygate.assertions.operators import OPERATORS
from replaygate.assertions.values import EmbeddedJson, short, strict_equal
from replaygate.core.errors import PackError
from replaygate.engine.matching import match_any_order, match_calls
from replaygate.loading.yaml_reader import parse_yaml
from sizes import run_sized, sized, sizes

ENV = {"A": "x"}
NAMES = ["a", "b", "xs"]
PATHS = ["$", "$.a", "$.b", "$.a.b", "$.xs", "$.xs[0]", "$.xs[*]", "$.xs[*].a", "$.*", "$..a"]
PATTERNS = ["^x", "[0-9]+$", "a|b", "^$", "(a+)+$"]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-2, 2)
    | st.sampled_from([0.0, 1.0, 1.5, -0.5])
    | st.sampled_from(["", "x", "a", "b", "1", "ab"])
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(NAMES), children, max_size=3)
    ),
    max_leaves=12,
)


def _operand(draw: Any, name: str, depth: int) -> Any:
    nested = st.deferred(lambda: assertions_raw(depth + 1, nested=True))
    strategies: dict[str, Any] = {
        "equals": values,
        "exists": st.booleans(),
        "type": st.sampled_from(
            ["string", "number", "integer", "boolean", "array", "object", "null"]
        ),
        "contains": values,
        "equals_env": st.sampled_from(["A", "B"]),
        "one_of": st.lists(values, min_size=1, max_size=4),
        "regex": st.sampled_from(PATTERNS),
        "gte": st.sampled_from([-1, 0, 1, 1.5]),
        "lte": st.sampled_from([-1, 0, 1, 1.5]),
        "length_gte": st.integers(0, 3),
        "length_lte": st.integers(0, 3),
        "not": nested,
        "each": nested,
        "contains_item": nested,
        "any_of": st.lists(nested, min_size=1, max_size=2),
        "all_of": st.lists(nested, min_size=1, max_size=2),
        "sequence": st.lists(nested, min_size=1, max_size=2),
    }
    return draw(strategies[name])


@st.composite
def assertions_raw(draw: Any, depth: int = 0, *, nested: bool = False) -> dict[str, Any]:
    names = [n for n in OPERATORS if depth < 2 or not OPERATORS[n].nested]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    raw: dict[str, Any] = (
        {} if nested and draw(st.booleans()) else {"path": draw(st.sampled_from(PATHS))}
    )
    raw.update((name, _operand(draw, name, depth)) for name in chosen)
    if draw(st.booleans()):
        raw["optional"] = draw(st.booleans())
    return raw


def _compiled(raw: dict[str, Any]) -> Assertion:
    try:
        return compile_assertion(raw, locator="x", file="c.yaml", line=1, key_lines={})
    except PackError:
        assume(False)
        raise


documents = st.dictionaries(st.sampled_from(NAMES), values, max_size=3).map(
    lambda doc: EmbeddedJson(doc)  # as tool-call arguments are
)
OUTCOMES: Counter[bool] = Counter()


def _agree(raw: dict[str, Any], document: Any) -> None:
    assertion = _compiled(raw)
    expected = not evaluate_assertion(assertion, document, ENV)
    OUTCOMES[expected] += 1
    assert holds(assertion, document, ENV) is expected


@pytest.mark.parametrize("examples", sizes(1500, fast=300))
def test_holds_is_the_full_evaluation_finding_nothing(examples: int) -> None:
    OUTCOMES.clear()
    strategies = {"raw": assertions_raw(), "document": documents}
    fixed = examples < 1500  # the README's run: the same examples every time
    run_sized(_agree, examples, suppress=[HealthCheck.too_slow], fixed=fixed, **strategies)()
    # both answers were tried, each in more than one example in fifteen
    assert min(OUTCOMES[True], OUTCOMES[False]) > examples // 15, OUTCOMES


@sized(500, options=st.lists(scalars | values, min_size=1, max_size=5), actual=scalars | values)
def test_one_of_agrees_with_strict_equality(options: list[Any], actual: Any) -> None:
    prepared = OPERATORS["one_of"].prepare(options)
    found = any(strict_equal(actual, option) for option in options)
    assert (OPERATORS["one_of"].check(actual, prepared, {}) is None) is found


def test_one_of_takes_a_string_subclass_as_its_string() -> None:
    class Text(str):
        pass

    prepared = OPERATORS["one_of"].prepare([Text("low"), "high"])
    assert OPERATORS["one_of"].check("low", prepared, {}) is None
    assert OPERATORS["one_of"].check("mid", prepared, {}) == "'mid' is not one of ['low', 'high']"


@pytest.mark.parametrize("read", [list, lambda items: parse_yaml(json.dumps(items), shown="c")])
def test_a_one_of_failure_shows_the_options_as_given(read: Any) -> None:
    """reprlib shortens a plain list, and shows a list subclass (the YAML reader's) whole."""
    options = read(list(range(25)))
    message = OPERATORS["one_of"].check(99, OPERATORS["one_of"].prepare(options), {})
    assert message == f"99 is not one of {short(options)}"


@sized(
    500,
    names=st.lists(st.sampled_from("abcd"), max_size=4),
    actual=st.lists(st.sampled_from("abcde"), max_size=5),
    fitting=st.sets(st.tuples(st.integers(0, 4), st.integers(0, 5))),
)
def test_any_order_pairing_is_the_maximum_matching(
    names: list[str], actual: list[str], fitting: set[tuple[int, int]]
) -> None:
    def holds_(i: int, j: int) -> bool:
        return (i, j) in fitting

    def fits(i: int, j: int) -> bool:
        return names[i] == actual[j] and holds_(i, j)

    expected = match_any_order(len(names), len(actual), fits)
    assert match_calls(names, actual, holds_, strict_order=False) == expected


@pytest.mark.parametrize(
    "raw",
    [
        {"path": "$.xs[*]", "type": "string"},
        {"path": "$.xs[*]", "optional": True, "type": "integer"},
    ],
)
def test_a_path_matching_too_many_values_never_holds(raw: dict[str, Any]) -> None:
    """The full evaluation makes it an error; a fast yes would pass a call never checked."""
    from replaygate.assertions.jsonpath import MAX_MATCHES

    document = EmbeddedJson({"xs": [1] * (MAX_MATCHES + 1)})
    assertion = _compiled(raw)
    assert evaluate_assertion(assertion, document, ENV)
    assert holds(assertion, document, ENV) is False
