"""The shape of a results document (schema 1.0), checked field by field while loading it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from replaygate.report.escape import truncate
from replaygate.results.model import Status

Check = tuple[Callable[[Any], bool], str]
_STATUSES = frozenset(Status)  # the members compare equal to their string values
_HEX12 = re.compile("[0-9a-f]{12}")
_STR: Check = (lambda v: isinstance(v, str), "a string")
_OPT_STR: Check = (lambda v: v is None or isinstance(v, str), "a string or null")
_INT: Check = (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer")
_COUNT: Check = (lambda v: _INT[0](v) and v >= 0, "an integer, 0 or more")
_LINE: Check = (lambda v: _INT[0](v) and v >= 1, "a line number, 1 or more")
_OPT_LINE: Check = (lambda v: v is None or _LINE[0](v), "a line number or null")
_SECONDS: Check = (
    lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0,
    "a number of seconds, 0 or more",
)
_BOOL: Check = (lambda v: isinstance(v, bool), "a boolean")
_OPT_BOOL: Check = (lambda v: v is None or isinstance(v, bool), "a boolean or null")
_ARRAY: Check = (lambda v: isinstance(v, list), "an array")
OBJECT: Check = (lambda v: isinstance(v, dict), "an object")
_ANY: Check = (lambda v: True, "any value")
_FINGERPRINT: Check = (
    lambda v: v is None or (isinstance(v, str) and _HEX12.fullmatch(v) is not None),
    "12 lowercase hex digits or null",
)
_STATUS: Check = (lambda v: isinstance(v, str) and v in _STATUSES, f"one of {', '.join(Status)}")

TOP = {
    "schema_version": _STR, "tool": OBJECT, "provider": _STR, "duration_s": _SECONDS,
    "totals": OBJECT, "packs": _ARRAY, "problems": _ARRAY, "cases": _ARRAY,
}  # fmt: skip
TOP_OPTIONAL = {"shard": OBJECT, "warnings": _ARRAY}
TOOL = {"name": _STR, "version": _STR}
TOTALS = dict.fromkeys(["total", "passed", "failed", "errors", "skipped", "known"], _COUNT)
PACK = {"pack_id": _STR, "name": _STR, "directory": _STR, "contracts": _COUNT}
PROBLEM = {"file": _STR, "line": _OPT_LINE, "message": _STR}
SHARD = {"index": _INT, "count": _INT}
CASE = {
    "pack": _STR, "pack_dir": _STR, "contract": _STR, "contract_file": _STR, "case_id": _STR,
    "expect_ok": _BOOL, "expected_error": _OPT_STR, "observed_ok": _OPT_BOOL, "passed": _BOOL,
    "status": _STATUS, "classification": _OPT_STR, "fingerprint": _FINGERPRINT, "known": _BOOL,
    "reason": _OPT_STR, "file": _STR, "line": _LINE, "duration_s": _SECONDS, "failures": _ARRAY,
}  # fmt: skip
FAILURE = {
    "classification": _STR, "message": _STR, "locator": _STR, "path": _OPT_STR,
    "operator": _OPT_STR, "expected": _ANY, "actual": _ANY, "file": _STR, "line": _LINE,
}  # fmt: skip


class Invalid(Exception):
    """The document is JSON but not a results file; the message says where and why."""


def check_object(
    value: Any, fields: dict[str, Check], where: str, optional: dict[str, Check] | None = None
) -> dict[str, Any]:
    """``value`` checked to be an object with exactly ``fields`` (and maybe ``optional``)."""
    if not isinstance(value, dict):
        raise Invalid(f"{where}: expected an object, got {kind(value)}")
    extra = optional or {}
    if value.keys() != fields.keys():
        _check_keys(value, fields, extra, where)
    for key, item in value.items():
        check, wanted = fields[key] if key in fields else extra[key]
        if not check(item):
            raise Invalid(f"{where}.{key}: expected {wanted}, got {kind(item)}")
    return value


def _check_keys(
    value: dict[str, Any], fields: dict[str, Check], optional: dict[str, Check], where: str
) -> None:
    missing = [key for key in fields if key not in value]
    if missing:
        raise Invalid(f"{where}: missing {missing[0]!r}")
    unknown = sorted(key for key in value if key not in fields and key not in optional)
    if unknown:
        raise Invalid(f"{where}: unknown key {unknown[0]!r}")


def kind(value: Any) -> str:
    """A parsed JSON value as a message shows it: the value itself when it is short."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return repr(truncate(value, 40))
    return json.dumps(value)
