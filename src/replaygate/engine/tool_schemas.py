"""Tool-call arguments checked against the JSON Schema ``parameters`` of the request's tools."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

from replaygate.engine.schema_checkers import InvalidToolSchema, checkers
from replaygate.loading.json_reader import json_path

MAX_ERRORS_PER_CALL = 10
_RECURSES = "the schema's references recurse without end"
_ABSENT = object()
_REFERENCES = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})


@dataclass(frozen=True, slots=True)
class SchemaViolation:
    keyword: str  # the JSON Schema keyword that failed: required, enum, type, ...
    path: str  # within the arguments, as $.a[0]
    message: str


def _node(root: Any, path: Iterable[str | int]) -> Any:
    """The value at ``path`` (keys and indexes) in ``root``, or _ABSENT."""
    node = root
    for part in path:
        if isinstance(node, Mapping) and isinstance(part, str):
            node = node.get(part, _ABSENT)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return _ABSENT
    return node


def _required(value: Any, instance: Any) -> str | None:
    missing = [name for name in value if name not in instance]
    return f"{missing[0]!r} is a required property" if len(missing) == 1 else None


def _type(value: Any, instance: Any) -> str:
    reprs = ", ".join(repr(name) for name in (value if isinstance(value, list) else [value]))
    return f"{instance!r} is not of type {reprs}"


def _enum(value: Any, instance: Any) -> str:
    return f"{instance!r} is not one of {value!r}"


def _minimum(value: Any, instance: Any) -> str:
    return f"{instance!r} is less than the minimum of {value!r}"


def _maximum(value: Any, instance: Any) -> str:
    return f"{instance!r} is greater than the maximum of {value!r}"


# jsonschema's messages for these keywords, word for word (jsonschema/_keywords.py), made from
# the same Python values; each with the kind jsonschema-rs names its violation.
_WORDED: dict[str, tuple[str, Callable[[Any, Any], str | None]]] = {
    "required": ("Required", _required),
    "enum": ("Enum", _enum),
    "type": ("Type", _type),
    "minimum": ("Minimum", _minimum),
    "maximum": ("Maximum", _maximum),
}


def _worded(schema: Any, fast: Any, arguments: Mapping[str, Any]) -> SchemaViolation | None:
    """The one violation jsonschema-rs finds, in jsonschema's words, or None to ask jsonschema.

    Only where the two cannot differ: the default draft for both (no ``$schema``), exactly one
    violation (no order to agree on), of a keyword in _WORDED, reached without a ``$ref``;
    the message made from the values jsonschema would see (the schema's canonical copy, the
    arguments as a plain dict). Importing jsonschema costs a run about 0.1 s, more than all
    of a small pack's checks.
    """
    if not isinstance(schema, dict) or "$schema" in schema:
        return None
    try:
        found = list(islice(fast.iter_errors(arguments), 2))
    except BaseException as exc:  # a pattern's timeout, a recursion: jsonschema reports them
        if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
            raise  # KeyboardInterrupt and the like (PanicException: see violations)
        return None
    if len(found) != 1 or not found[0].schema_path:
        return None
    error = found[0]
    # Through a reference, schema_path may be relative to another resource of the schema.
    if not _REFERENCES.isdisjoint(getattr(error, "evaluation_path", None) or ["$ref"]):
        return None
    kind, words = _WORDED.get(error.schema_path[-1], ("", None))
    value, instance = _node(schema, error.schema_path), _node(dict(arguments), error.instance_path)
    if (
        words is None
        or type(error.kind).__name__ != kind
        or value is _ABSENT
        or instance is _ABSENT
    ):
        return None
    message = words(value, instance)
    path = json_path(error.instance_path)
    return None if message is None else SchemaViolation(error.schema_path[-1], path, message)


def _error_order(error: Any) -> list[str]:
    return [str(part) for part in error.path]


def violations(
    schema: Mapping[str, Any], arguments: Mapping[str, Any]
) -> Iterator[SchemaViolation]:
    """Schema violations of one call's arguments, in the order of their paths.

    Validators are cached (see ``schema_checkers.checkers``): packs repeat the same
    tool schemas across thousands of fixtures, and building a validator costs far
    more than running one. jsonschema-rs answers "valid?" about 60x faster than
    jsonschema, so jsonschema only runs, to explain, when the answer is no.
    """
    found = checkers(schema)
    if found.fast is not None:
        if found.fast.is_valid(arguments):
            return
        worded = _worded(found.schema, found.fast, arguments)
        if worded is not None:
            yield worded
            return
    from referencing.exceptions import Unresolvable

    try:
        errors = sorted(found.full().iter_errors(dict(arguments)), key=_error_order)
    except Unresolvable as exc:
        raise InvalidToolSchema(f"unresolvable reference {str(exc.ref)[:200]!r}") from None
    except RecursionError:
        raise InvalidToolSchema(_RECURSES) from None
    except re.error as exc:  # a keyword we do not take over (unevaluatedProperties) ran `re`
        reason = (
            f"unevaluatedProperties is checked with Python's re, which cannot read a pattern: {exc}"
        )
        raise InvalidToolSchema(f"invalid JSON Schema: {reason}") from None
    except BaseException as exc:
        # The recursion can also hit inside `referencing`'s Rust maps, which turn it into a
        # pyo3 PanicException: a BaseException, so it would escape every handler as a crash.
        if type(exc).__name__ != "PanicException":
            raise
        raise InvalidToolSchema(_RECURSES) from None
    for error in errors[:MAX_ERRORS_PER_CALL]:
        yield SchemaViolation(str(error.validator), json_path(error.absolute_path), error.message)
