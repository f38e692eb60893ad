"""The JSON results file (schema_version 1.1): rendering, and loading it back for `merge`."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from replaygate import __version__
from replaygate.core.errors import PackError
from replaygate.core.fingerprint import is_fingerprint
from replaygate.core.model import (
    AssertionOutcome,
    AssertionStatus,
    Capture,
    CaseResult,
    Failure,
    PackSummary,
    Problem,
    RunResult,
    Status,
)
from replaygate.loading.files import read_text
from replaygate.loading.json_reader import json_path, line_of_key, parse_json
from replaygate.report.json_case import ENCODER, case_object, case_text
from replaygate.report.results_format import Located, kind, schema_problem

SCHEMA_VERSION = "1.1"
DEFAULT_PROVIDER = "recorded"
_MAX_DEPTH = 100
MAX_RESULTS_BYTES = 128 * 1024 * 1024  # a shard of about 100,000 failing cases


def render_json(result: RunResult) -> str:
    """The results document (see ``json_chunks``) as one text."""
    return "".join(json_chunks(result))


def json_chunks(result: RunResult) -> Iterator[str]:
    """The results document in pieces, one top-level member a line, one list element a line:
    a writer holds one case's text at a time, not the whole document.

    Each element is encoded by the C encoder (``indent`` would force the
    pure-Python one), so rendering stays fast and linear; ``ensure_ascii`` keeps
    lone surrogates as ``\\ud800`` escapes.
    """
    yield "{\n"
    yield _member("schema_version", SCHEMA_VERSION)
    yield ",\n" + _member("tool", {"name": "replaygate", "version": __version__})
    yield ",\n" + _member("provider", result.meta.get("provider", DEFAULT_PROVIDER))
    yield ",\n" + _member("duration_s", result.duration_s)
    yield ",\n" + _member("totals", _totals(result))
    yield from _list_member("packs", (_dump(_pack(pack)) for pack in result.packs))
    yield from _list_member("problems", (_dump(_problem(item)) for item in result.problems))
    yield from _list_member("warnings", (_dump(_problem(item)) for item in result.warnings))
    yield from _list_member("cases", map(_case, result.cases))
    if "shard" in result.meta:
        yield ",\n" + _member("shard", result.meta["shard"])
    if "run" in result.meta:
        yield ",\n" + _member("run", result.meta["run"])
    yield "\n}\n"


def _member(key: str, value: Any) -> str:
    return f"{_dump(key)}: {_dump(value)}"


def _list_member(key: str, items: Iterable[str]) -> Iterator[str]:
    """``,\\n"key": [`` then one element's text a line, or ``[]`` when there is none."""
    separator = f",\n{_dump(key)}: [\n"
    for item in items:
        yield separator + item
        separator = ",\n"
    yield "\n]" if separator == ",\n" else f",\n{_dump(key)}: []"


def _case(case: CaseResult) -> str:
    try:
        return case_text(case)
    except (TypeError, ValueError, RecursionError):  # what _dump does then, from the start
        return _dump(case_object(case))


def _dump(value: Any) -> str:
    try:
        return ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError):  # a fixture value JSON cannot hold as is
        return ENCODER.encode(_plain(value, _MAX_DEPTH))


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


def load_results(text: str, *, shown: str) -> RunResult:
    """Rebuild a RunResult from a results file; ``shown`` names the file in a PackError."""
    document = parse_json(text, shown=shown)
    problem = _version_problem(document) or schema_problem(document)
    if problem is None:
        result = _result(document)
        problem = _cross_field_problem(document, result)
        if problem is None:
            return result
    path, message = problem
    found = f"not a replaygate results file: {json_path(path)}: {message}"
    raise PackError(shown, line_of_key(text, path), found)


def read_results(path: str) -> RunResult:
    """A results file, read through the hardened reader, or a PackError naming it."""
    text = read_text(Path(path), shown=path, max_bytes=MAX_RESULTS_BYTES)
    return load_results(text, shown=path)


def _version_problem(document: Any) -> Located | None:
    """Checked first: a file of another version has other keys, and would be told so."""
    if not isinstance(document, dict):
        return (), f"expected an object, got {kind(document)}"
    if "schema_version" not in document:
        return (), "missing 'schema_version'"
    version = document["schema_version"]
    if version == SCHEMA_VERSION:
        return None
    return ("schema_version",), f"expected {SCHEMA_VERSION!r}, got {kind(version)}"


def _cross_field_problem(document: dict[str, Any], result: RunResult) -> Located | None:
    """The rules the schema cannot say: how fields of one document agree."""
    for index, case in enumerate(document["cases"]):
        if case["passed"] != (case["status"] == Status.PASSED):
            return ("cases", index, "passed"), f"{kind(case['passed'])} contradicts the status"
        if case["known"] and case["status"] != Status.FAILED:
            return ("cases", index, "known"), "only a failed case can be known"
        if case["fingerprint"] is not None and not is_fingerprint(case["fingerprint"]):
            return ("cases", index, "fingerprint"), "must be 12 lowercase hex digits"
    shard = document.get("shard")
    if shard is not None and shard["index"] > shard["count"]:
        return ("shard",), "index must be between 1 and count"
    if _totals(result) != document["totals"]:
        return ("totals",), "the totals do not match the cases"
    return None


def _result(document: dict[str, Any]) -> RunResult:
    """The RunResult of a document that passed the schema."""
    return RunResult(
        cases=tuple(_case_result(case) for case in document["cases"]),
        problems=tuple(Problem(**problem) for problem in document["problems"]),
        packs=tuple(PackSummary(**pack) for pack in document["packs"]),
        # files written before warnings existed have none
        warnings=tuple(Problem(**warning) for warning in document.get("warnings", [])),
        duration_s=float(document["duration_s"]),
        meta=_meta(document),
    )


def _meta(document: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if document["provider"] != DEFAULT_PROVIDER:
        meta["provider"] = document["provider"]
    if "shard" in document:
        meta["shard"] = dict(document["shard"])
    if "run" in document:
        meta["run"] = dict(document["run"])
    return meta


def _case_result(case: dict[str, Any]) -> CaseResult:
    fields = {key: item for key, item in case.items() if key != "passed"}
    fields["status"] = Status(case["status"])
    fields["duration_s"] = float(case["duration_s"])
    fields["failures"] = tuple(Failure(**failure) for failure in case["failures"])
    fields["assertions"] = tuple(map(_assertion_result, case["assertions"]))
    fields["inputs"] = tuple(case.get("inputs", ()))  # absent from files written before it
    return CaseResult(**fields)


def _assertion_result(item: dict[str, Any]) -> AssertionOutcome:
    fields = {**item, "status": AssertionStatus(item["status"]), "weight": float(item["weight"])}
    fields["captures"] = tuple(Capture(**capture) for capture in item["captures"])
    return AssertionOutcome(**fields)
