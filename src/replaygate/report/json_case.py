"""A case of the JSON results file: its object, and its text written without building it.

The cases are nearly all of the file, and most are passed ones with nothing but scalars:
building each one's dict and handing it to the encoder cost three times what writing
its text does. ``case_text`` writes exactly what ``ENCODER.encode(case_object(case))``
writes (tests/report/test_json_case.py holds it to that), and raises the encoder's own
errors where it would raise, so the caller's fallback for those stays the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

from replaygate.core.model import AssertionOutcome, CaseResult, Failure, Status

ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False)  # one, not one a call
_STATUS = {status: encode_basestring_ascii(status.value) for status in Status}


def case_text(case: CaseResult) -> str:
    """The case as ``ENCODER`` writes ``case_object(case)``; a TypeError or ValueError for a
    value this does not write as the encoder would (the caller then asks the encoder)."""
    return (
        f'{{"pack": {_string(case.pack)}, "pack_dir": {_string(case.pack_dir)}, '
        f'"contract": {_string(case.contract)}, '
        f'"contract_file": {_string(case.contract_file)}, "case_id": {_string(case.case_id)}, '
        f'"expect_ok": {_flag(case.expect_ok)}, '
        f'"expected_error": {_optional(case.expected_error)}, '
        f'"observed_ok": {"null" if case.observed_ok is None else _flag(case.observed_ok)}, '
        f'"passed": {_flag(case.passed)}, "status": {_status(case.status)}, '
        f'"classification": {_optional(case.classification)}, '
        f'"fingerprint": {_optional(case.fingerprint)}, "known": {_flag(case.known)}, '
        f'"reason": {_optional(case.reason)}, "file": {_string(case.file)}, '
        f'"line": {_integer(case.line)}, "inputs": {_strings(case.inputs)}, '
        f'"run_id": {_optional(case.run_id)}, "order": {_integer(case.order)}, '
        f'"duration_s": {_number(case.duration_s)}, '
        f'"score": {"null" if case.score is None else _number(case.score)}, '
        f'"failures": {_list(case.failures, failure_object)}, '
        f'"assertions": {_list(case.assertions, assertion_object)}}}'
    )


# The encoder's own function for a string: a TypeError for anything else, and a str
# subclass is written by its text, as the encoder writes it.
_string = encode_basestring_ascii


def _optional(value: str | None) -> str:
    return "null" if value is None else _string(value)


def _status(value: Status) -> str:
    # a StrEnum: a plain str would find its member's text in the table, where the encoder's
    # path (``status.value``) raises
    if type(value) is not Status:
        raise TypeError(f"not a Status: {value!r}")
    return _STATUS[value]


def _flag(value: bool) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise TypeError(f"not a bool: {value!r}")


def _integer(value: int) -> str:
    if type(value) is not int:  # bool and other int subclasses take the encoder's path
        raise TypeError(f"not an int: {value!r}")
    return int.__repr__(value)


def _number(value: float) -> str:
    # finite only: the encoder refuses inf and nan (allow_nan=False), the caller's fallback not
    if type(value) is not float or value - value != 0.0:
        raise ValueError(f"not a finite float: {value!r}")
    return float.__repr__(value)


def _strings(items: tuple[str, ...]) -> str:
    if type(items) is not tuple:  # a list or None takes the encoder's path
        raise TypeError(f"not a tuple: {items!r}")
    return "[" + ", ".join(_string(item) for item in items) + "]"


def _list(items: tuple[Any, ...], item_object: Callable[[Any], dict[str, Any]]) -> str:
    # only the empty tuple: None or another empty value raises on the encoder's path
    if items == ():
        return "[]"
    return ENCODER.encode([item_object(item) for item in items])


def case_object(case: CaseResult) -> dict[str, Any]:
    return {
        "pack": case.pack,
        "pack_dir": case.pack_dir,
        "contract": case.contract,
        "contract_file": case.contract_file,
        "case_id": case.case_id,
        "expect_ok": case.expect_ok,
        "expected_error": case.expected_error,
        "observed_ok": case.observed_ok,
        "passed": case.passed,
        "status": case.status.value,
        "classification": case.classification,
        "fingerprint": case.fingerprint,
        "known": case.known,
        "reason": case.reason,
        "file": case.file,
        "line": case.line,
        "inputs": list(case.inputs),
        "run_id": case.run_id,
        "order": case.order,
        "duration_s": case.duration_s,
        "score": case.score,
        "failures": [failure_object(failure) for failure in case.failures],
        "assertions": [assertion_object(outcome) for outcome in case.assertions],
    }


def assertion_object(outcome: AssertionOutcome) -> dict[str, Any]:
    return {
        "id": outcome.id,
        "type": outcome.type,
        "status": outcome.status.value,
        "weight": outcome.weight,
        "message": outcome.message,
        "file": outcome.file,
        "line": outcome.line,
        "recorded": outcome.recorded,
        "differs": outcome.differs,
        "captures": [
            {"field": c.field, "value": c.value, "truncated": c.truncated} for c in outcome.captures
        ],
    }


def failure_object(failure: Failure) -> dict[str, Any]:
    return {
        "classification": failure.classification,
        "message": failure.message,
        "locator": failure.locator,
        "path": failure.path,
        "operator": failure.operator,
        "expected": failure.expected,
        "actual": failure.actual,
        "file": failure.file,
        "line": failure.line,
    }
