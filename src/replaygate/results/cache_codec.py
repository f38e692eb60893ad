"""A case result as plain JSON values and back, strictly: the results cache's entry format.

Decoding accepts exactly what encoding writes: every field present, no other key, each value
of its field's type. Anything else raises ``BadEntry``, and the cache treats it as a miss.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
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


def _text(value: Any) -> str:
    if type(value) is not str:
        raise BadEntry("not a string")
    return value


def _flag(value: Any) -> bool:
    if type(value) is not bool:
        raise BadEntry("not true or false")
    return value


def _whole(value: Any) -> int:
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


def _optional(inner: Decode) -> Decode:
    return lambda value: None if value is None else inner(value)


def _many(inner: Decode) -> Decode:
    def decode_list(value: Any) -> tuple[Any, ...]:
        if type(value) is not list:
            raise BadEntry("not a list")
        return tuple(inner(item) for item in value)

    return decode_list


def _choice(kind: Callable[[str], _T]) -> Callable[[Any], _T]:
    def decode_choice(value: Any) -> _T:
        try:
            return kind(_text(value))
        except ValueError:
            raise BadEntry("not one of the values") from None

    return decode_choice


def _of(kind: Callable[..., _T], spec: Mapping[str, Decode]) -> Callable[[Any], _T]:
    return lambda value: _record(kind, spec, value)


_FAILURE: dict[str, Decode] = {
    "classification": _text,
    "message": _text,
    "locator": _text,
    "file": _text,
    "line": _whole,
    "path": _optional(_text),
    "operator": _optional(_text),
    "expected": _json,
    "actual": _json,
}
_PROBLEM: dict[str, Decode] = {"file": _text, "line": _optional(_whole), "message": _text}
_CAPTURE: dict[str, Decode] = {"field": _text, "value": _text, "truncated": _flag}
_OUTCOME: dict[str, Decode] = {
    "id": _text,
    "type": _text,
    "status": _choice(AssertionStatus),
    "weight": _number,
    "message": _optional(_text),
    "file": _text,
    "line": _whole,
    "recorded": _optional(_flag),
    "differs": _optional(_text),
    "captures": _many(_of(Capture, _CAPTURE)),
}
_CASE: dict[str, Decode] = {
    "pack": _text,
    "pack_dir": _text,
    "contract": _text,
    "contract_file": _text,
    "case_id": _text,
    "expect_ok": _flag,
    "expected_error": _optional(_text),
    "observed_ok": _optional(_flag),
    "status": _choice(Status),
    "classification": _optional(_text),
    "fingerprint": _optional(_text),
    "failures": _many(_of(Failure, _FAILURE)),
    "file": _text,
    "line": _whole,
    "reason": _optional(_text),
    "known": _flag,
    "notes": _many(_of(Problem, _PROBLEM)),
    "score": _optional(_number),
    "assertions": _many(_of(AssertionOutcome, _OUTCOME)),
}
