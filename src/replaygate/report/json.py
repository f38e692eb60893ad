"""The JSON results file (schema_version 1.0): rendering, and loading it back for `merge`."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from replaygate import __version__
from replaygate.errors import PackError
from replaygate.report import json_shape as shape
from replaygate.results.model import CaseResult, Failure, PackSummary, Problem, RunResult, Status

SCHEMA_VERSION = "1.0"
DEFAULT_PROVIDER = "recorded"
_MAX_DEPTH = 100
_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False)  # one, not one a call
_T = TypeVar("_T")


def render_json(result: RunResult) -> str:
    """The results document: one top-level member a line, one list element a line.

    Each element is encoded by the C encoder (``indent`` would force the
    pure-Python one), so rendering stays fast and linear; ``ensure_ascii`` keeps
    lone surrogates as ``\\ud800`` escapes.
    """
    members = [
        _member("schema_version", SCHEMA_VERSION),
        _member("tool", {"name": "replaygate", "version": __version__}),
        _member("provider", result.meta.get("provider", DEFAULT_PROVIDER)),
        _member("duration_s", result.duration_s),
        _member("totals", _totals(result)),
        _list_member("packs", map(_pack, result.packs)),
        _list_member("problems", map(_problem, result.problems)),
        _list_member("warnings", map(_problem, result.warnings)),
        _list_member("cases", map(_case, result.cases)),
    ]
    if "shard" in result.meta:
        members.append(_member("shard", result.meta["shard"]))
    return "{\n" + ",\n".join(members) + "\n}\n"


def _member(key: str, value: Any) -> str:
    return f"{_dump(key)}: {_dump(value)}"


def _list_member(key: str, items: Iterable[Any]) -> str:
    body = ",\n".join(map(_dump, items))
    return f"{_dump(key)}: [\n{body}\n]" if body else f"{_dump(key)}: []"


def _dump(value: Any) -> str:
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError):  # a fixture value JSON cannot hold as is
        return _ENCODER.encode(_plain(value, _MAX_DEPTH))


def _plain(value: Any, depth: int) -> Any:
    """``value`` within JSON's limits: string keys, lists, finite numbers, bounded depth."""
    if depth == 0:
        return "<nested too deeply>"
    if isinstance(value, dict):
        return {str(key): _plain(item, depth - 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item, depth - 1) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "nan", "inf", "-inf"
    if value is None or isinstance(value, (str, int, float)):
        return value
    return str(value)


def _totals(result: RunResult) -> dict[str, int]:
    return dataclasses.asdict(result.totals)


def _pack(pack: PackSummary) -> dict[str, Any]:
    return {
        "pack_id": pack.pack_id,
        "name": pack.name,
        "directory": pack.directory,
        "contracts": pack.contracts,
    }


def _problem(problem: Problem) -> dict[str, Any]:
    return {"file": problem.file, "line": problem.line, "message": problem.message}


def _case(case: CaseResult) -> dict[str, Any]:
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
        "duration_s": case.duration_s,
        "failures": [_failure(failure) for failure in case.failures],
    }


def _failure(failure: Failure) -> dict[str, Any]:
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


def load_results(text: str, *, shown: str) -> RunResult:
    """Rebuild a RunResult from a results file; ``shown`` names the file in a PackError."""
    try:
        return _result(json.loads(text, parse_constant=_reject_constant))
    except json.JSONDecodeError as error:
        message = f"invalid JSON: {error.msg} (column {error.colno})"
        raise PackError(shown, error.lineno, message) from None
    except RecursionError:
        raise PackError(shown, None, "invalid JSON: nested too deeply") from None
    except shape.Invalid as error:
        raise PackError(shown, None, f"not a replaygate results file: {error}") from None


def read_results(path: str) -> RunResult:
    """A results file, or a PackError naming it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise PackError(path, None, f"cannot read the results: {error.strerror}") from None
    except UnicodeDecodeError:
        raise PackError(path, None, "the results file is not UTF-8 text") from None
    return load_results(text, shown=path)


def _reject_constant(name: str) -> Any:
    raise shape.Invalid(f"{name} is not a JSON number")


def _result(value: Any) -> RunResult:
    version = value.get("schema_version") if isinstance(value, dict) else None
    if version != SCHEMA_VERSION:  # checked first: another version has other keys
        found = shape.kind(version)
        raise shape.Invalid(f"$.schema_version: expected {SCHEMA_VERSION!r}, got {found}")
    document = shape.check_object(value, shape.TOP, "$", optional=shape.TOP_OPTIONAL)
    shape.check_object(document["tool"], shape.TOOL, "$.tool")
    document.setdefault("warnings", [])  # files written before warnings existed have none
    result = RunResult(
        cases=_items(document, "cases", _case_result),
        problems=_items(document, "problems", _problem_result),
        packs=_items(document, "packs", _pack_summary),
        warnings=_items(document, "warnings", _problem_result),
        duration_s=float(document["duration_s"]),
        meta=_meta(document),
    )
    if _totals(result) != shape.check_object(document["totals"], shape.TOTALS, "$.totals"):
        raise shape.Invalid("$.totals: the totals do not match the cases")
    return result


def _items(
    parent: dict[str, Any], key: str, build: Callable[[Any, str], _T], where: str = "$"
) -> tuple[_T, ...]:
    return tuple(build(item, f"{where}.{key}[{index}]") for index, item in enumerate(parent[key]))


def _meta(document: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if document["provider"] != DEFAULT_PROVIDER:
        meta["provider"] = document["provider"]
    if "shard" in document:
        shard = shape.check_object(document["shard"], shape.SHARD, "$.shard")
        if not 1 <= shard["index"] <= shard["count"]:
            raise shape.Invalid("$.shard: index must be between 1 and count")
        meta["shard"] = {"index": shard["index"], "count": shard["count"]}
    return meta


def _pack_summary(value: Any, where: str) -> PackSummary:
    return PackSummary(**shape.check_object(value, shape.PACK, where))


def _problem_result(value: Any, where: str) -> Problem:
    return Problem(**shape.check_object(value, shape.PROBLEM, where))


def _case_result(value: Any, where: str) -> CaseResult:
    case = shape.check_object(value, shape.CASE, where)
    if case["passed"] != (case["status"] == Status.PASSED):
        raise shape.Invalid(f"{where}.passed: {json.dumps(case['passed'])} contradicts the status")
    if case["known"] and case["status"] != Status.FAILED:
        raise shape.Invalid(f"{where}.known: only a failed case can be known")
    fields = {key: item for key, item in case.items() if key != "passed"}
    fields["status"] = Status(case["status"])
    fields["duration_s"] = float(case["duration_s"])
    fields["failures"] = _items(case, "failures", _failure_result, where)
    return CaseResult(**fields)


def _failure_result(value: Any, where: str) -> Failure:
    return Failure(**shape.check_object(value, shape.FAILURE, where))
