"""A case result as plain JSON values and back, strictly: the results cache's entry format.

Decoding accepts exactly what encoding writes: every field present, no other key, each value
of its field's type, every number finite. msgspec's strict conversion into the structs below,
which mirror the result types, checks all but the last in C: a warm run decodes thousands of
results. Anything else raises ``BadEntry``, and the cache treats it as a miss.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import fields
from typing import Any, TypeVar

import msgspec

from replaygate.core.model import (
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


class BadEntry(ValueError):
    """A cache entry that does not decode exactly: ignored, never trusted."""


class Strict(msgspec.Struct, forbid_unknown_fields=True):
    """An entry's record: no field has a default, so a missing key is refused like an extra
    one. ``int | float`` keeps a number as written: the reports print 1 and 1.0 differently."""


def strict_record(kind: type[Any]) -> type[Strict]:
    """A record with the fields of the dataclass ``kind``, in its order and of its types
    (none with a default): derived, so that the two cannot drift apart."""
    hints = typing.get_type_hints(kind)
    names = [(field.name, hints[field.name]) for field in dataclasses.fields(kind)]
    record = msgspec.defstruct(f"{kind.__name__}Record", names, bases=(Strict,))
    return typing.cast("type[Strict]", record)


class _Capture(Strict):
    field: str
    value: str
    truncated: bool


class _Problem(Strict):
    file: str
    line: int | None
    message: str


class _Failure(Strict):
    classification: str
    message: str
    locator: str
    file: str
    line: int
    path: str | None
    operator: str | None
    expected: Any  # a JSON value as the file's parser gave it: checked already
    actual: Any


class _Outcome(Strict):
    id: str
    type: str
    status: AssertionStatus
    weight: int | float
    message: str | None
    file: str
    line: int
    recorded: bool | None
    differs: str | None
    captures: tuple[_Capture, ...]


class Result(Strict):
    pack: str
    pack_dir: str
    contract: str
    contract_file: str
    case_id: str
    expect_ok: bool
    expected_error: str | None
    observed_ok: bool | None
    status: Status
    classification: str | None
    fingerprint: str | None
    failures: tuple[_Failure, ...]
    file: str
    line: int
    reason: str | None
    known: bool
    notes: tuple[_Problem, ...]
    score: int | float | None
    assertions: tuple[_Outcome, ...]
    inputs: tuple[str, ...]
    run_id: str | None


# Each struct lists its type's fields in their order (a test holds it): a result is built
# positionally, with the run's own fields (RUN_FIELDS) put in their places.
_FIELDS = Result.__struct_fields__
_FAILURES, _NOTES, _ASSERTIONS = (_FIELDS.index(f) for f in ("failures", "notes", "assertions"))
_DURATION = _FIELDS.index("known")  # duration_s sits before it in a CaseResult


def encode(result: CaseResult) -> dict[str, Any]:
    """``result`` as JSON values, without the fields a hit sets again."""
    return {k: v for k, v in _plain(result).items() if k not in RUN_FIELDS}


def _plain(value: Any) -> Any:
    if isinstance(value, CaseResult | Failure | Problem | AssertionOutcome | Capture):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def convert(data: Any, kind: type[_T]) -> _T:
    """``data`` (JSON values) as ``kind``, strictly. Raises BadEntry."""
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        raise BadEntry(str(exc)) from None


def decode(data: Any, *, order: int, duration_s: float) -> CaseResult:
    """The case result ``data`` holds, placed at ``order``. Raises BadEntry."""
    return built(convert(data, Result), order=order, duration_s=duration_s)


def built(entry: Result, *, order: int, duration_s: float) -> CaseResult:
    """The case result of a decoded entry, placed at ``order``. Raises BadEntry."""
    if not _finite(entry.score):
        raise BadEntry("not a finite number")
    found = msgspec.structs.astuple(entry)
    # most results have no failures, notes or assertions: a warm run decodes thousands
    if entry.failures or entry.notes or entry.assertions:
        found = (
            *found[:_FAILURES],
            tuple(Failure(*msgspec.structs.astuple(f)) for f in entry.failures),
            *found[_FAILURES + 1 : _NOTES],
            tuple(Problem(*msgspec.structs.astuple(n)) for n in entry.notes),
            *found[_NOTES + 1 : _ASSERTIONS],
            tuple(_outcome(outcome) for outcome in entry.assertions),
            *found[_ASSERTIONS + 1 :],
        )
    # positionally, as the fields are declared (_DURATION: where the result's own sit)
    return CaseResult(*(*found[:_DURATION], duration_s, *found[_DURATION:], order))


def _outcome(entry: _Outcome) -> AssertionOutcome:
    if not _finite(entry.weight):
        raise BadEntry("not a finite number")
    captures = tuple(Capture(*msgspec.structs.astuple(c)) for c in entry.captures)
    return AssertionOutcome(*(*msgspec.structs.astuple(entry)[:-1], captures))


def _finite(number: float | None) -> bool:
    # The file's parser refuses NaN, Infinity and 1e400, but an entry handed in as values
    # (tests, a future reader) is checked all the same; an int is finite however large, and
    # math.isfinite would overflow converting one past a float's range.
    return number is None or type(number) is int or math.isfinite(number)
