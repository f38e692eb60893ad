"""A tool schema's validators, built once and cached by the schema's canonical text:
jsonschema-rs decides, jsonschema explains, both with patterns in the regex operator's
dialect and time bound."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from functools import cache, lru_cache
from typing import Any

import jsonschema_rs

from replaygate.assertions.operators import OPERATORS, search
from replaygate.assertions.regex_time import BudgetSpent
from replaygate.loading.json_reader import kept

# A schema's canonical text: what its validators are built from, and their cache key (see
# checkers). One encoder, since json.dumps(..., sort_keys=True) builds one per call.
_CANONICAL = json.JSONEncoder(sort_keys=True)
_CHECKERS: dict[bytes, Validators] = {}  # a schema's msgpack encoding -> its validators
_MAX_CHECKERS = 512  # as many as _validators keeps: this holds only references to them


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
        return search(_compiled(pattern), text) is not None
    except BudgetSpent as exc:
        raise InvalidToolSchema(f"pattern {pattern[:80]!r} timed out: {exc}") from None
    except TimeoutError:
        raise InvalidToolSchema(f"pattern {pattern[:80]!r} timed out") from None


def _is_pattern(instance: object) -> bool:
    """The meta-schema's "regex" format, in our dialect (jsonschema's own asks ``re``)."""
    return not isinstance(instance, str) or _compiled(instance) is not None


@cache
def _schema_formats() -> Any:
    from jsonschema import FormatChecker

    formats = FormatChecker()
    formats.checks("regex", raises=InvalidToolSchema)(_is_pattern)
    return formats


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    """jsonschema's own, with the patternProperties keys searched in our dialect, one by one."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = sorted(
        (key for key in instance if key not in properties)
        if not patterns
        else (
            k for k in instance if k not in properties and not any(_search(p, k) for p in patterns)
        )
    )
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif allowed is False and extras:
        shown = ", ".join(repr(extra) for extra in extras)
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            listed = ", ".join(repr(pattern) for pattern in sorted(patterns))
            yield ValidationError(f"{shown} {verb} not match any of the regexes: {listed}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({shown} {verb} unexpected)"
            )


_BOUNDED = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


class Validators:
    """The two validators of one tool schema; the explaining one is built only when needed.

    jsonschema-rs meta-validates a schema as it compiles it (in microseconds), so jsonschema's
    own ``check_schema`` (about a millisecond) runs only where jsonschema-rs refuses the schema
    or a pattern is one our regex dialect does not take: there the two could disagree, and
    jsonschema's verdict and message are the ones the case reports. jsonschema-rs runs
    ``pattern`` through _DialectPattern, in our dialect (not ECMA-262, where ``\\d`` is 0-9 only),
    so one dialect decides and explains a pattern; a schema with ``patternProperties``, which a
    keyword of ours cannot descend into, is decided by jsonschema alone.
    """

    __slots__ = ("_full", "fast", "schema")

    def __init__(self, schema: Any, fast: Any) -> None:
        self.schema = schema  # the canonical copy (sorted keys), which jsonschema sees
        self.fast = fast  # jsonschema-rs: decides validity in well under a microsecond, or None
        self._full: Any = None

    def full(self) -> Any:
        """jsonschema's validator, with the time-bounded pattern keywords: explains violations."""
        if self._full is None:
            self._full = _bounded_class(_draft_class(self.schema))(self.schema, registry=_offline())
        return self._full


def _draft_class(schema: Any) -> Any:
    from jsonschema import validators

    if isinstance(schema, dict) and not isinstance(schema.get("$schema", ""), str):
        # jsonschema would crash on it (it looks the value up as a URI)
        raise InvalidToolSchema("invalid JSON Schema: $schema must be a string (a draft's URI)")
    return validators.validator_for(schema)


@cache  # one per draft: extending builds a new class every time
def _bounded_class(cls: Any) -> Any:
    from jsonschema import validators

    return validators.extend(cls, _BOUNDED)  # type: ignore[no-untyped-call]  # untyped upstream


def _check_schema(schema: Any) -> None:
    from jsonschema import exceptions

    try:
        _draft_class(schema).check_schema(schema, format_checker=_schema_formats())
    except exceptions.SchemaError as exc:
        raise InvalidToolSchema(f"invalid JSON Schema: {exc.message}") from None


def _patterns(node: Any) -> Iterator[str]:
    """Every string that could be a pattern of the schema (more is harmless: see _validators)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            elif key == "patternProperties" and isinstance(value, dict):
                yield from value
            yield from _patterns(value)
    elif isinstance(node, list):
        for item in node:
            yield from _patterns(item)


def _dialect_takes(patterns: Iterable[str]) -> bool:
    """Whether the regex operator's dialect takes every pattern (its size limit included)."""
    try:
        for pattern in patterns:
            _compiled(pattern)
    except InvalidToolSchema:
        return False
    return True


class _DialectPattern:
    """jsonschema-rs's ``pattern`` keyword, searched in our dialect with the time bound.

    Any exception makes jsonschema-rs call the instance invalid; jsonschema then explains
    the violation, or raises the timeout as the case's error.
    """

    __slots__ = ("_pattern",)

    def __init__(self, parent_schema: Any, value: str, schema_path: Any) -> None:
        self._pattern = value

    def validate(self, instance: Any) -> None:
        if isinstance(instance, str) and not _search(self._pattern, instance):
            raise ValueError("no match")


def _has_pattern_properties(node: Any) -> bool:
    if isinstance(node, dict):
        return "patternProperties" in node or any(map(_has_pattern_properties, node.values()))
    return isinstance(node, list) and any(map(_has_pattern_properties, node))


# About 11 KB a compiled schema. Cases are judged contract by contract and a contract's
# fixtures share its tools, so a schema's uses come close together: 512 holds them (on the
# realistic corpus, 983 schemas, as fast as 4,096 and 8 MB less at --jobs 1).
@lru_cache(maxsize=512)
def _validators(schema_text: str) -> Validators:
    schema = json.loads(schema_text)
    try:  # offline: a fixture's "$ref" must never make us fetch a URL or read a file
        fast = jsonschema_rs.validator_for(
            schema, validate_formats=False, offline=True, keywords={"pattern": _DialectPattern}
        )
    except ValueError:  # refused: jsonschema's check decides; a construct it takes is its to run
        _check_schema(schema)
        return Validators(schema, None)
    if not _dialect_takes(_patterns(schema)):
        _check_schema(schema)
    return Validators(schema, None if _has_pattern_properties(schema) else fast)


def checkers(schema: Mapping[str, Any]) -> Validators:
    """The validators of a schema, built from its canonical text.

    Every call of every case asks, and most schemas were seen before: the schema's key
    (json_reader.kept) finds them at a fraction of the cost of writing that text.
    """
    return kept(_CHECKERS, _MAX_CHECKERS, schema, lambda: _validators(_CANONICAL.encode(schema)))


def _refuse_retrieval(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs field the stubs miss


@lru_cache(maxsize=1)
def _offline() -> Any:
    """References resolve within the schema itself; anything else is unresolvable, never fetched."""
    from referencing import Registry

    return Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]  # attrs alias
