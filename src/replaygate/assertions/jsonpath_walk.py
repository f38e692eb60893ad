"""A parsed JSONPath matched lazily, in jsonpath-ng's order: a match limit stops the walk early.

jsonpath-ng's ``find`` builds every match (a context object each) before the caller can
count them: ``$..*`` over a fixture of 2 million items takes over a gigabyte. These
generators yield the same values in the same order, one at a time. Only the node types
that ``jsonpath._vet`` lets through are here. A filter's expressions are decided here too,
lazily (an existence test stops at its first match, a comparison at its first true value),
with jsonpath-ng's comparison rules; jsonpath-ng's own ``find`` of ``@[*][*]`` would build
every grandchild of every candidate. Their work is counted as it goes: past
MAX_FILTER_STEPS (candidates tried and values looked at) the walk stops with
FilterTooCostly.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

MAX_FILTER_STEPS = 1_000_000  # about a second: a filter's candidates and the values they see


class FilterTooCostly(ValueError):
    """A path's filters looked at more than MAX_FILTER_STEPS values."""


class Steps:
    """What a path's filters may still look at, shared by all of them in one ``find``."""

    def __init__(self, limit: int | None = None) -> None:
        self.left = MAX_FILTER_STEPS if limit is None else limit

    def take(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise FilterTooCostly(f"its filters looked at more than {MAX_FILTER_STEPS} values")


Matcher = Callable[[Any, Any, Steps], Iterator[Any]]


def matches(node: Any, value: Any, steps: Steps | None = None) -> Iterator[Any]:
    """The values ``node`` matches in ``value``, as jsonpath-ng's ``find`` orders them."""
    return _MATCHERS[type(node).__name__](node, value, steps or Steps())


def _children(value: Any) -> Iterator[Any]:
    if isinstance(value, list):
        return iter(value)
    if isinstance(value, dict):
        return iter(value.values())
    return iter(())


def _itself(node: Any, value: Any, steps: Steps) -> Iterator[Any]:
    yield value  # `$` outside a filter is the document; `@` inside one is jsonpath-ng's


def _child(node: Any, value: Any, steps: Steps) -> Iterator[Any]:
    for left in matches(node.left, value, steps):
        yield from matches(node.right, left, steps)


def _descendants(node: Any, value: Any, steps: Steps) -> Iterator[Any]:
    """Every node below each left match, pre-order, with the right side matched at each."""
    for start in matches(node.left, value, steps):
        pending = [iter((start,))]
        while pending:
            current = next(pending[-1], _DONE)
            if current is _DONE:
                pending.pop()
                continue
            yield from matches(node.right, current, steps)
            pending.append(_children(current))


def _fields(node: Any, value: Any, steps: Steps) -> Iterator[Any]:
    if isinstance(value, dict):
        yield from (value[name] for name in node.fields if name in value)


def _index(node: Any, value: Any, steps: Steps) -> Iterator[Any]:
    if isinstance(value, list):
        yield from (value[i] for i in node.indices if -len(value) <= i < len(value))


def _slice(node: Any, value: Any, steps: Steps) -> Iterator[Any]:
    if isinstance(value, list) and node.step != 0:
        positions = range(len(value))[node.start : node.end : node.step]
        yield from (value[i] for i in positions)


def _wildcard(node: Any, value: Any, steps: Steps) -> Iterator[Any]:
    return _children(value)


def _filter(node: Any, value: Any, steps: Steps) -> Iterator[Any]:
    for candidate in _children(value):
        steps.take()
        if all(_holds(expression, candidate, steps) for expression in node.expressions):
            yield candidate


def _holds(expression: Any, candidate: Any, steps: Steps) -> bool:
    """Whether a filter expression holds for ``candidate``, as jsonpath-ng decides it."""
    kind = type(expression).__name__
    if kind == "And":
        return all(_holds(operand, candidate, steps) for operand in expression.operands)
    if kind == "Or":
        return any(_holds(operand, candidate, steps) for operand in expression.operands)
    if kind != "Expression":  # a path: an existence test
        return _any(matches(expression, candidate, steps), steps)
    found = matches(expression.target, candidate, steps)
    if expression.op is None or expression.op == "!":
        return _any(found, steps) is (expression.op is None)
    if _is_path(expression.value):
        return _compared_to_query(expression, candidate, steps)
    first = next(found, _DONE)
    if first is _DONE:  # RFC 9535: an empty nodelist equals no value, not even null
        return bool(expression.op == "!=")
    for item in itertools.chain((first,), found):
        steps.take()
        if _compares(expression.op, item, expression.value):
            return True
    return False


def _compared_to_query(expression: Any, candidate: Any, steps: Steps) -> bool:
    """``@.a == @.b``: some value of the target compares true with some value of the other."""
    from jsonpath_ng.ext.filter import EQUALITY_ONLY_OPERATOR_MAP, _compare

    targets = _counted(matches(expression.target, candidate, steps), steps)
    others = _counted(matches(expression.value, candidate, steps), steps)
    if not targets or not others:
        return bool(EQUALITY_ONLY_OPERATOR_MAP[expression.op](not targets and not others))
    for a, b in itertools.product(targets, others):
        steps.take()
        if _compare(expression.op, a, b):
            return True
    return False


def _compares(op: str, value: Any, literal: Any) -> bool:
    """One value against a literal, by jsonpath-ng's rules (RFC 9535's)."""
    from jsonpath_ng.ext.filter import EQUALITY_ONLY_OPERATOR_MAP, _compare

    if literal is None:
        return bool(EQUALITY_ONLY_OPERATOR_MAP[op](value is None))
    if isinstance(value, bool) or isinstance(literal, bool):  # True is never 1
        return bool(EQUALITY_ONLY_OPERATOR_MAP[op](value is literal))
    return bool(_compare(op, value, literal))  # type: ignore[arg-type]  # `=~` is refused


def _any(found: Iterator[Any], steps: Steps) -> bool:
    steps.take()
    return next(found, _DONE) is not _DONE


def _counted(found: Iterator[Any], steps: Steps) -> list[Any]:
    values = []
    for value in found:
        steps.take()
        values.append(value)
    return values


def _is_path(value: Any) -> bool:
    from jsonpath_ng import JSONPath

    return isinstance(value, JSONPath)


_DONE = object()
_MATCHERS: dict[str, Matcher] = {
    "Root": _itself,
    "This": _itself,
    "Child": _child,
    "Descendants": _descendants,
    "Fields": _fields,
    "Index": _index,
    "Slice": _slice,
    "Wildcard": _wildcard,
    "Filter": _filter,
}
