"""JSONPath: compile once, find values; a fast walker for simple paths, jsonpath-ng for the rest."""

from __future__ import annotations

import functools
import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from replaygate.assertions.jsonpath_walk import FilterTooCostly, matches
from replaygate.assertions.values import unwrap

MAX_PATH_LENGTH = 512
MAX_MATCHES = 10_000

# A step of a simple path: a member name (str) or an array index (int).
Step = str | int

# `.name`, `[N]`, `['name']`, `["name"]`; names as jsonpath-ng's lexer reads them unquoted;
# and the wildcard, `[*]` or `.*`.
_SEGMENT = re.compile(
    r"""\.([A-Za-z_][A-Za-z0-9_-]*)|\[(-?[0-9]+)\]|\['([^'\\]*)'\]|\["([^"\\]*)"\]|(\[\*\]|\.\*)"""
)
_RESERVED = frozenset({"where", "wherenot"})  # jsonpath-ng keywords, not names
_MISSING = object()
# The wildcard as a step of a fanned path: every item of a list, every value of a mapping.
EVERY = None


class PathTooBroad(ValueError):
    """find() matched more than MAX_MATCHES values (raised instead of building them all)."""


@dataclass(frozen=True, slots=True)
class CompiledPath:
    """A JSONPath compiled once; ``find`` returns the matched values.

    ``is_collection`` is True for a path that can match several values (a wildcard,
    slice, filter, union or recursive descent), whatever the number of matches.
    """

    text: str
    is_collection: bool
    steps: tuple[Step, ...] | None = field(default=None, repr=False, compare=False)
    expr: Any = field(default=None, repr=False, compare=False)  # a jsonpath_ng JSONPath
    # Steps with wildcards (EVERY), walked without jsonpath-ng: `$.tool_calls[*].name`.
    fanned: tuple[Step | None, ...] | None = field(default=None, repr=False, compare=False)

    def find(self, doc: Any) -> list[Any]:
        """The values the path matches in ``doc``, each passed through values.unwrap.

        Raises PathTooBroad when a collection path matches more than MAX_MATCHES values.
        """
        if self.steps is not None:
            return _walk(doc, self.steps)
        walked = _fan_out(doc, self.fanned) if self.fanned is not None else matches(self.expr, doc)
        try:
            found = list(islice(walked, MAX_MATCHES + 1))
        except FilterTooCostly as exc:
            raise PathTooBroad(f"path not decided: {exc}") from None
        if len(found) > MAX_MATCHES:
            raise PathTooBroad(f"path matched more than {MAX_MATCHES} values")
        return [unwrap(value) for value in found]

    def located(self, doc: Any) -> list[str | None]:
        """The path of each value ``find`` returns, with indexes and names in place of
        wildcards (``$.tool_calls[1].name``); None where it cannot be written."""
        if self.steps is not None:
            return [self.text] if _walk(doc, self.steps) else []
        expr = self.expr if self.expr is not None else _parsed(self.text)
        if "?" in self.text:  # jsonpath-ng decides a filter eagerly: unbounded work
            return []
        return [_written(datum.full_path, "$") for datum in expr.find(doc)]


def _written(node: Any, prefix: str) -> str | None:
    """A jsonpath-ng match path (fields and single indexes) as a JSONPath."""
    from jsonpath_ng import Child, Fields, Index, Root, This

    if isinstance(node, Child):
        left = _written(node.left, prefix)
        return None if left is None else _written(node.right, left)
    if isinstance(node, Root | This):
        return prefix
    if isinstance(node, Fields) and len(node.fields) == 1:
        name = node.fields[0]
        plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and name not in _RESERVED
        return prefix + (f".{name}" if plain else f"[{json.dumps(name)}]")
    indices = getattr(node, "indices", None) or (getattr(node, "index", None),)
    if isinstance(node, Index) and len(indices) == 1 and isinstance(indices[0], int):
        return f"{prefix}[{indices[0]}]"
    return None


def _walk(doc: Any, steps: tuple[Step, ...]) -> list[Any]:
    node = doc
    for step in steps:
        if isinstance(step, int):
            if not isinstance(node, list) or not -len(node) <= step < len(node):
                return []
            node = node[step]
        else:
            node = node.get(step, _MISSING) if isinstance(node, dict) else _MISSING
            if node is _MISSING:
                return []
    return [unwrap(node)]


def _fan_out(node: Any, steps: tuple[Step | None, ...]) -> Iterator[Any]:
    """The values ``steps`` lead to, in jsonpath-ng's order (jsonpath_walk's, one at a time)."""
    if not steps:
        yield node
        return
    step, rest = steps[0], steps[1:]
    if step is EVERY:
        items = node if isinstance(node, list) else node.values() if isinstance(node, dict) else ()
        for item in items:
            yield from _fan_out(item, rest)
        return
    if isinstance(step, int):
        inside = isinstance(node, list) and -len(node) <= step < len(node)
    else:
        inside = isinstance(node, dict) and step in node
    if inside:
        yield from _fan_out(node[step], rest)


@functools.cache
def compile_path(text: str) -> CompiledPath:
    """Compile a JSONPath (cached per text). Raises ValueError with a one-line message."""
    if len(text) > MAX_PATH_LENGTH:
        raise ValueError(f"JSONPath is {len(text)} characters long, more than {MAX_PATH_LENGTH}")
    if not text.startswith("$"):
        raise ValueError(f"JSONPath {text!r} must start with '$'")
    steps = _simple_steps(text)
    if steps is not None and EVERY not in steps:
        return CompiledPath(text, False, steps)  # type: ignore[arg-type]  # no EVERY in it
    if steps is not None:  # jsonpath-ng (a slow import) is left for a failure's located()
        return CompiledPath(text, True, fanned=steps)
    expr = _parse(text)
    _vet(text, expr)
    steps = _ast_steps(expr)
    return CompiledPath(text, steps is None, steps, None if steps is not None else expr)


def _simple_steps(text: str) -> tuple[Step | None, ...] | None:
    """Steps of a `$.a['b'][0]` or `$.a[*].b` chain read without jsonpath-ng, or None."""
    steps: list[Step | None] = []
    pos = 1
    while pos < len(text):
        m = _SEGMENT.match(text, pos)
        if m is None or m[1] in _RESERVED:
            return None
        name, index, single, double, every = m.groups()
        if every:
            steps.append(EVERY)
        else:
            steps.append(int(index) if index is not None else (name or single or double or ""))
        pos = m.end()
    return tuple(steps)


@functools.cache
def _parsed(text: str) -> Any:
    return _parse(text)


@functools.cache
def _parser() -> Any:
    from jsonpath_ng.ext.parser import ExtendedJsonPathParser  # slow import: only when needed

    return ExtendedJsonPathParser()


def _parse(text: str) -> Any:
    parser = _parser()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            expr = parser.parse(text)
    except Exception as exc:  # ply and jsonpath-ng raise assorted types for bad input
        reason = _printable(str(exc)) or type(exc).__name__
        raise ValueError(f"invalid JSONPath {text!r}: {reason}") from None
    if caught:  # deprecated syntax (an unquoted word, '|', '&'): refuse it now
        raise ValueError(f"invalid JSONPath {text!r}: {_printable(str(caught[0].message))}")
    return expr


def _printable(reason: str) -> str:
    """One line: the lexer quotes the offending character raw (an escape, a line break)."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in reason).strip()


def _ast_steps(node: Any) -> tuple[Step, ...] | None:
    """Steps of a parsed path made only of single names and indices, or None."""
    from jsonpath_ng import Child, Fields, Index, Root

    if isinstance(node, Root):
        return ()
    if not isinstance(node, Child):
        return None
    left = _ast_steps(node.left)
    right = node.right
    if left is None:
        return None
    if isinstance(right, Fields) and len(right.fields) == 1:
        return (*left, right.fields[0])
    if isinstance(right, Index) and len(right.indices) == 1:
        return (*left, right.indices[0])
    return None


def _vet(text: str, expr: Any) -> None:
    """Refuse paths whose matches could grow beyond the size of the document."""
    descents = 0
    for node, in_filter in _nodes(text, expr):
        descents += _check_node(text, node, in_filter)
    if descents > 1:
        raise ValueError(f"JSONPath {text!r} has {descents} recursive descents ('..'), at most 1")


def _nodes(text: str, expr: Any) -> list[tuple[Any, bool]]:
    """Every node of the tree with whether it sits in a filter; unknown node types refused."""
    from jsonpath_ng import Child, Descendants, Fields, Index, Root, Slice, This, Wildcard
    from jsonpath_ng.ext.filter import And, Expression, Filter, Or

    # Exact types: `sub`, `split`, `str` and sorting subclass This and must not pass as it.
    leaves = {Root, This, Fields, Index, Slice, Wildcard}
    out: list[tuple[Any, bool]] = []
    stack: list[tuple[Any, bool]] = [(expr, False)]
    while stack:
        node, in_filter = stack.pop()
        out.append((node, in_filter))
        kind = type(node)
        if kind in (Child, Descendants):
            stack += [(node.left, in_filter), (node.right, in_filter)]
        elif kind is Filter:
            stack += [(e, True) for e in node.expressions]
        elif kind in (And, Or):
            stack += [(e, True) for e in node.operands]
        elif kind is Expression:
            stack += [(v, True) for v in (node.target, node.value) if _is_path(v)]
        elif kind not in leaves:
            raise ValueError(f"JSONPath {text!r}: {_feature(node)} is not supported")
    return out


def _check_node(text: str, node: Any, in_filter: bool) -> int:
    """Refuse one node if it is unsafe; return 1 for a recursive descent."""
    from jsonpath_ng import Descendants, Fields, Index, Root, This
    from jsonpath_ng.ext.filter import Expression

    if isinstance(node, Root) and in_filter:
        raise ValueError(f"JSONPath {text!r}: a filter may refer to '@' only, not '$'")
    if isinstance(node, This) and not in_filter:
        raise ValueError(f"JSONPath {text!r}: `this` is not supported")
    if isinstance(node, Expression) and node.op == "=~":
        raise ValueError(f"JSONPath {text!r}: '=~' is not supported; use the regex operator")
    if isinstance(node, Fields | Index):
        items = node.fields if isinstance(node, Fields) else node.indices
        if len(set(items)) != len(items):  # [0,0,0...] would multiply the matches
            raise ValueError(f"JSONPath {text!r} repeats a name or index in a union")
    return 1 if isinstance(node, Descendants) else 0


def _is_path(value: Any) -> bool:
    from jsonpath_ng import JSONPath

    return isinstance(value, JSONPath)


def _feature(node: Any) -> str:
    name = type(node).__name__
    return {"Operation": "arithmetic", "_Union": "'|'", "_Intersect": "'&'"}.get(
        name, f"`{name.lower()}`"
    )
