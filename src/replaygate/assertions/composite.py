"""Composite operators: not, any_of, all_of on one value; each, contains_item, sequence on arrays.

Each takes nested assertions (compiled by assertion.py, each with its own line and locator)
and returns the mismatches to report, or a message when the composite fails as a whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from replaygate.assertions.mismatch import Env, Located, Mismatch, Nested, Outcome
from replaygate.assertions.values import short

Found = list[Mismatch]


def nested_list(name: str, *, single: bool = False) -> Callable[[Any], Any]:
    """prepare: a non-empty list of assertion mappings (or, when ``single``, one mapping)."""
    what = (
        "a mapping of operators or a non-empty list of them"
        if single
        else ("a non-empty list of mappings of operators")
    )

    def prepare(value: Any) -> Any:
        if single and isinstance(value, Mapping):
            return [value]
        if not isinstance(value, list) or not value:
            raise ValueError(f"{name} must be {what}, got {short(value)}")
        for index, item in enumerate(value):
            if not isinstance(item, Mapping):
                bad = short(item)
                raise ValueError(f"{name}[{index}] must be a mapping of operators, got {bad}")
        return value

    return prepare


# --- one value ---------------------------------------------------------------------------


def not_(actual: Any, nested: Sequence[Nested], env: Env) -> Outcome:
    found: Found = []
    for item in nested:
        misses = item.evaluate(actual, env)
        if not misses:
            message = f"{short(actual)} satisfies {item.describe()}, which must not hold"
            found.append(_at(item, "not", message, item.describe(), actual))
        found.extend(_errors([misses]))
    return found


def all_of(actual: Any, nested: Sequence[Nested], env: Env) -> Outcome:
    return [m for item in nested for m in item.evaluate(actual, env)]


def any_of(actual: Any, nested: Sequence[Nested], env: Env) -> Outcome:
    results: list[Found] = []
    for item in nested:
        misses = item.evaluate(actual, env)
        if not misses:
            return None  # the OR ends here: each alternative is judged whole
        results.append(misses)
    return _none_holds(
        results,
        "no alternative holds",
        lambda best: f"alternative {best + 1} (line {nested[best].line})",
    )


def _none_holds(results: list[Found], what: str, where: Callable[[int], str]) -> Outcome:
    """Every try missed: an undecidable one errors, else the closest one explains the miss, on
    the line of its first failing check (the deepest: a nested composite's is located too)."""
    errors = _errors(results)
    if errors:
        return errors
    best = _closest(results)
    message = f"{what}; closest is {where(best)}: {_explain(results[best])}"
    return Located(message, results[best][0].line)


# --- arrays ------------------------------------------------------------------------------


def each(actual: Any, nested: Sequence[Nested], env: Env) -> Outcome:
    if not isinstance(actual, list):
        return f"{short(actual)} is not an array"
    found: Found = []
    for item in nested:  # per nested assertion, the first item that breaks it
        for index, element in enumerate(actual):
            misses = item.evaluate(element, env)
            if misses:
                found.extend(_in_item(m, index, len(actual)) for m in misses)
                break
    return found


def contains_item(actual: Any, nested: Sequence[Nested], env: Env) -> Outcome:
    if not isinstance(actual, list):
        return f"{short(actual)} is not an array"
    if not actual:
        return "[] has no items"
    results: list[Found] = []
    for element in actual:
        misses = [m for item in nested for m in item.evaluate(element, env)]
        if not misses:
            return None
        results.append(misses)
    what = "no item satisfies the nested assertions"
    return _none_holds(results, what, lambda best: f"item {best + 1} of {len(actual)}")


def sequence(actual: Any, steps: Sequence[Nested], env: Env) -> Outcome:
    """Each step's first satisfying item after the previous step's: greedy is exact here."""
    if not isinstance(actual, list):
        return f"{short(actual)} is not an array"
    found: Found = []
    cursor = 0
    for number, step in enumerate(steps):
        tried: dict[int, Found] = {}
        for index in range(cursor, len(actual)):
            tried[index] = step.evaluate(actual[index], env)
            if not tried[index]:
                cursor = index + 1
                break
        else:
            found.extend(_errors(list(tried.values())) or [_missing(step, number, cursor, tried)])
    return found


def _missing(step: Nested, number: int, cursor: int, tried: dict[int, Found]) -> Mismatch:
    after = f" after item {cursor}" if cursor else ""
    if not tried:
        message = f"no item is left{after} for step {number + 1}"
        return _at(step, "sequence", message, step.describe(), None)
    indexes = list(tried)
    best = indexes[_closest(list(tried.values()))]
    why = _explain(tried[best])
    message = f"no item{after} satisfies step {number + 1}; closest is item {best + 1}: {why}"
    missing = _at(step, "sequence", message, step.describe(), None)
    return replace(missing, line=tried[best][0].line)  # the closest item's failing check


# --- shared ------------------------------------------------------------------------------


def _at(item: Nested, operator: str, message: str, expected: Any, actual: Any) -> Mismatch:
    """A mismatch located on the nested assertion ``item`` itself."""
    return Mismatch("value", operator, message, expected, actual, item.line, item.locator, "$")


def _in_item(m: Mismatch, index: int, count: int) -> Mismatch:
    path = f"$[{index}]{m.path[1:]}"
    return replace(m, message=f"{m.message} (item {index + 1} of {count})", path=path)


def _errors(results: Sequence[Found]) -> Found:
    """The first undecidable check: a composite that found no passing branch cannot decide."""
    return next(([m] for misses in results for m in misses if m.kind == "error"), [])


def _closest(results: Sequence[Found]) -> int:
    """The branch with the fewest mismatches (the first among equals)."""
    return min(range(len(results)), key=lambda index: len(results[index]))


def _explain(misses: Found) -> str:
    first = misses[0]
    text = first.message if first.path == "$" else f"{first.path}: {first.message}"
    more = len(misses) - 1
    return text + (f" (and {more} more)" if more else "")
