"""A case result as plain JSON values and back, strictly: the results cache's entry format.

Decoding accepts exactly what encoding writes: every field present, no other key, each value
of its field's type. Anything else raises ``BadEntry``, and the cache treats it as a miss.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
from enum import StrEnum
from typing import Any, TypeVar

from replaygate.results.model import (
    AssertionOutcome,
    AssertionStatus,
    Capture,
    CaseResult,
    Failure,
    Problem,
    Status,
)

# Set again on every hit: where the case sits in this run, and how long this run spent on it.
RUN_FIELDS = frozenset({"order", "duration_s"})
_T = TypeVar("_T")
Decode = Callable[[Any], Any]


class BadEntry(ValueError):
    """A cache entry that does not decode exactly: ignored, never trusted."""


def encode(result: CaseResult) -> dict[str, Any]:
    """``result`` as JSON values, without the fields a hit sets again."""
    return {k: v for k, v in _plain(result).items() if k not in RUN_FIELDS}


def _plain(value: Any) -> Any:
    if isinstance(value, CaseResult | Failure | Problem | AssertionOutcome | Capture):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def decode(data: Any, *, order: int, duration_s: float) -> CaseResult:
    """The case result ``data`` holds, placed at ``order``. Raises BadEntry."""
    return _record(CaseResult, _CASE, data, order=order, duration_s=duration_s)


def _record(kind: Callable[..., _T], spec: Mapping[str, Decode], data: Any, **run: Any) -> _T:
    if type(data) is not dict or data.keys() != spec.keys():
        raise BadEntry(f"not a {getattr(kind, '__name__', 'record')}")
    return kind(**{name: decode_field(data[name]) for name, decode_field in spec.items()}, **run)


def text(value: Any) -> str:
    if type(value) is not str:
        raise BadEntry("not a string")
    return value


def flag(value: Any) -> bool:
    if type(value) is not bool:
        raise BadEntry("not true or false")
    return value


def whole(value: Any) -> int:
    if type(value) is not int:
        raise BadEntry("not a whole number")
    return value


def _number(value: Any) -> int | float:
    # int or float as written: the reports print 1 and 1.0 differently
    if type(value) is not int and type(value) is not float:
        raise BadEntry("not a number")
    return value


def _json(value: Any) -> Any:
    """A JSON value as json.loads gives it: checked already by the parser."""
    return value


def optional(inner: Decode) -> Decode:
    return lambda value: None if value is None else inner(value)


def many(inner: Decode) -> Decode:
    def decode_list(value: Any) -> tuple[Any, ...]:
        if type(value) is not list:
            raise BadEntry("not a list")
        # most lists of a result are empty: a warm run decodes thousands of results
        return tuple(inner(item) for item in value) if value else ()

    return decode_list


def _choice(kind: type[StrEnum]) -> Decode:
    members = {member.value: member for member in kind}  # faster than calling the enum

    def decode_choice(value: Any) -> StrEnum:
        try:
            return members[text(value)]
        except KeyError:
            raise BadEntry("not one of the values") from None

    return decode_choice


def of(kind: Callable[..., _T], spec: Mapping[str, Decode]) -> Callable[[Any], _T]:
    return lambda value: _record(kind, spec, value)


_FAILURE: dict[str, Decode] = {
    "classification": text,
    "message": text,
    "locator": text,
    "file": text,
    "line": whole,
    "path": optional(text),
    "operator": optional(text),
    "expected": _json,
    "actual": _json,
}
_PROBLEM: dict[str, Decode] = {"file": text, "line": optional(whole), "message": text}
_CAPTURE: dict[str, Decode] = {"field": text, "value": text, "truncated": flag}
_OUTCOME: dict[str, Decode] = {
    "id": text,
    "type": text,
    "status": _choice(AssertionStatus),
    "weight": _number,
    "message": optional(text),
    "file": text,
    "line": whole,
    "recorded": optional(flag),
    "differs": optional(text),
    "captures": many(of(Capture, _CAPTURE)),
}
_CASE: dict[str, Decode] = {
    "pack": text,
    "pack_dir": text,
    "contract": text,
    "contract_file": text,
    "case_id": text,
    "expect_ok": flag,
    "expected_error": optional(text),
    "observed_ok": optional(flag),
    "status": _choice(Status),
    "classification": optional(text),
    "fingerprint": optional(text),
    "failures": many(of(Failure, _FAILURE)),
    "file": text,
    "line": whole,
    "reason": optional(text),
    "known": flag,
    "notes": many(of(Problem, _PROBLEM)),
    "score": optional(_number),
    "assertions": many(of(AssertionOutcome, _OUTCOME)),
}
