"""A parsed JSONPath matched lazily, in jsonpath-ng's order: a match limit stops the walk early.

jsonpath-ng's ``find`` builds every match (a context object each) before the caller can
count them: ``$..*`` over a fixture of 2 million items takes over a gigabyte. These
generators yield the same values in the same order, one at a time. Only the node types
that ``jsonpath._vet`` lets through are here; a filter's own expressions stay
jsonpath-ng's (they see one candidate at a time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Matcher = Callable[[Any, Any], Iterator[Any]]


def matches(node: Any, value: Any) -> Iterator[Any]:
    """The values ``node`` matches in ``value``, as jsonpath-ng's ``find`` orders them."""
    return _MATCHERS[type(node).__name__](node, value)


def _children(value: Any) -> Iterator[Any]:
    if isinstance(value, list):
        return iter(value)
    if isinstance(value, dict):
        return iter(value.values())
    return iter(())


def _itself(node: Any, value: Any) -> Iterator[Any]:
    yield value  # `$` outside a filter is the document; `@` inside one is jsonpath-ng's


def _child(node: Any, value: Any) -> Iterator[Any]:
    for left in matches(node.left, value):
        yield from matches(node.right, left)


def _descendants(node: Any, value: Any) -> Iterator[Any]:
    """Every node below each left match, pre-order, with the right side matched at each."""
    for start in matches(node.left, value):
        pending = [iter((start,))]
        while pending:
            current = next(pending[-1], _DONE)
            if current is _DONE:
                pending.pop()
                continue
            yield from matches(node.right, current)
            pending.append(_children(current))


def _fields(node: Any, value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield from (value[name] for name in node.fields if name in value)


def _index(node: Any, value: Any) -> Iterator[Any]:
    if isinstance(value, list):
        yield from (value[i] for i in node.indices if -len(value) <= i < len(value))


def _slice(node: Any, value: Any) -> Iterator[Any]:
    if isinstance(value, list) and node.step != 0:
        positions = range(len(value))[node.start : node.end : node.step]
        yield from (value[i] for i in positions)


def _wildcard(node: Any, value: Any) -> Iterator[Any]:
    return _children(value)


def _filter(node: Any, value: Any) -> Iterator[Any]:
    for candidate in _children(value):
        if all(expression.find(candidate) for expression in node.expressions):
            yield candidate


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
