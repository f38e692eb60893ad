"""Tool-call arguments checked against the JSON Schema ``parameters`` of the request's tools."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema_rs
from jsonschema import exceptions as jsonschema_exceptions
from jsonschema import validators
from referencing import Registry
from referencing.exceptions import NoSuchResource, Unresolvable

from replaygate.assertions.operators import OPERATORS, REGEX_TIMEOUT_S

MAX_ERRORS_PER_CALL = 10
# The cache key of a schema; one encoder, since json.dumps(..., sort_keys=True) builds one per call.
_CANONICAL = json.JSONEncoder(sort_keys=True)


class InvalidToolSchema(ValueError):
    """The fixture's tool schema is not a valid JSON Schema, or a check of it cannot be decided."""


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    try:
        return OPERATORS["regex"].prepare(pattern)
    except ValueError as exc:
        raise InvalidToolSchema(f"invalid JSON Schema: {exc}") from None


def _search(pattern: str, text: str) -> bool:
    """``pattern`` searched in ``text`` with the time bound the regex operator uses.

    jsonschema's own ``pattern`` uses ``re`` with no bound, and a fixture's schema is
    untrusted: a catastrophic pattern must make the case an error, not hang the run.
    """
    try:
        return _compiled(pattern).search(text, timeout=REGEX_TIMEOUT_S) is not None
    except TimeoutError:
        raise InvalidToolSchema(f"pattern {pattern[:80]!r} timed out") from None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield jsonschema_exceptions.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


_BOUNDED = {"pattern": _pattern, "patternProperties": _pattern_properties}


@dataclass(frozen=True, slots=True)
class SchemaViolation:
    keyword: str  # the JSON Schema keyword that failed: required, enum, type, ...
    path: str  # within the arguments, as $.a[0]
    message: str


@dataclass(frozen=True, slots=True)
class _Validators:
    fast: Any  # jsonschema-rs: decides validity in well under a microsecond, or None
    full: Any  # jsonschema: explains each violation (keyword, path, message)


@lru_cache(maxsize=512)
def _validators(schema_text: str) -> _Validators:
    schema = json.loads(schema_text)
    cls = validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema_exceptions.SchemaError as exc:
        raise InvalidToolSchema(f"invalid JSON Schema: {exc.message}") from None
    bounded = validators.extend(cls, _BOUNDED)  # type: ignore[no-untyped-call]  # untyped upstream
    try:  # offline: a fixture's "$ref" must never make us fetch a URL or read a file
        fast = jsonschema_rs.validator_for(schema, validate_formats=False, offline=True)
    except ValueError:  # a construct jsonschema-rs does not take: the full validator decides
        fast = None
    return _Validators(fast, bounded(schema, registry=_OFFLINE))


def _refuse_retrieval(uri: str) -> Any:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs field the stubs miss


# References resolve within the schema itself; anything else is unresolvable, never fetched.
_OFFLINE: Registry[Any] = Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]  # attrs alias


def _json_path(parts: Any) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _error_order(error: Any) -> list[str]:
    return [str(part) for part in error.path]


def violations(
    schema: Mapping[str, Any], arguments: Mapping[str, Any]
) -> Iterator[SchemaViolation]:
    """Schema violations of one call's arguments, in the order of their paths.

    Validators are cached by the schema's canonical text: packs repeat the same
    tool schemas across thousands of fixtures, and building a validator costs far
    more than running one. jsonschema-rs answers "valid?" about 60x faster than
    jsonschema, so jsonschema only runs, to explain, when the answer is no.
    """
    checkers = _validators(_CANONICAL.encode(schema))
    if checkers.fast is not None and checkers.fast.is_valid(arguments):
        return
    try:
        errors = sorted(checkers.full.iter_errors(dict(arguments)), key=_error_order)
    except Unresolvable as exc:
        raise InvalidToolSchema(f"unresolvable reference {str(exc.ref)[:200]!r}") from None
    except RecursionError:
        raise InvalidToolSchema("the schema's references recurse without end") from None
    for error in errors[:MAX_ERRORS_PER_CALL]:
        yield SchemaViolation(str(error.validator), _json_path(error.absolute_path), error.message)
