"""Strict keys for fixtures and recordings: each object the format defines (models.py) holds
only its keys, so a misspelt key is reported instead of silently skipping a check."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from replaygate.loading.json_reader import kept
from replaygate.loading.model_errors import Loc, unknown_key, version_problem
from replaygate.loading.models import (
    FIXTURE_KEYS,
    FIXTURE_PLACES,
    BoundaryVersion,
    FixtureObject,
)
from replaygate.loading.schema_keywords import unknown_keywords

_O = FixtureObject
# How close an unknown top-level key must be to a missing key of the format to be taken for
# its misspelling (`requst` is 0.92; `request_id`, another recorder's, is 0.82).
MISSPELT = 0.85
KeyProblem = tuple[Loc, str]  # where (the key itself) and what is wrong
# where a key found at the top level belongs instead: `model` there is its own message
_TOP_PLACES = {name: place for name, place in FIXTURE_PLACES.items() if name != "model"}


def key_problems(
    data: Mapping[str, Any], keys: Mapping[FixtureObject, frozenset[str]] = FIXTURE_KEYS
) -> list[KeyProblem]:
    """Every unknown key of a fixture or recording, and an unknown ``boundary_version``."""
    found: list[KeyProblem] = []
    top = keys[_O.FIXTURE]
    if not top.issuperset(data):  # other recorders' metadata is a warning (top_level_extras)
        refused = {k: v for k, v in data.items() if not _metadata(k, top, data)}
        _check(refused, (), top, found, _TOP_PLACES)
    if "boundary_version" in data:
        problem = version_problem(data["boundary_version"], BoundaryVersion)
        if problem is not None:
            found.append((("boundary_version",), f"boundary_version: {problem}"))
    request, response = data.get("request"), data.get("response")
    if type(request) is dict or isinstance(request, Mapping):  # JSON gives dicts: no ABC
        _check(request, ("request",), keys[_O.REQUEST], found)
        _check_calls(request.get("tools"), ("request", "tools"), _TOOLS, keys, found)
        _check_schemas(request.get("tools"), ("request", "tools"), found)
    if type(response) is dict or isinstance(response, Mapping):
        _check(response, ("response",), keys[_O.RESPONSE], found)
        _check_calls(response.get("tool_calls"), ("response", "tool_calls"), _CALLS, keys, found)
        if isinstance(response.get("error"), Mapping):
            _check(response["error"], ("response", "error"), keys[_O.ERROR], found)
    return found


def top_level_extras(
    data: Mapping[str, Any], keys: Mapping[FixtureObject, frozenset[str]] = FIXTURE_KEYS
) -> list[KeyProblem]:
    """The top-level keys the format knows nowhere (``recorded_at``, ``latency_ms``, which
    other recorders write), each with its message: warned about, not refused. A key of
    another object of the format (``tools``) is misplaced, and key_problems refuses it."""
    here = keys[_O.FIXTURE]
    if here.issuperset(data):
        return []
    return [((key,), unknown_key(str(key), here, {})) for key in data if _metadata(key, here, data)]


def _metadata(key: str, here: frozenset[str], data: Mapping[str, Any]) -> bool:
    """Whether a top-level key is another recorder's metadata: no key of the format, and
    not the misspelling of one the file lacks (``requst`` without ``request``; ``request_id``
    beside ``request`` is metadata)."""
    if key in here or key in FIXTURE_PLACES:
        return False
    lacking = [name for name in here if name not in data]
    return not difflib.get_close_matches(key, lacking, n=1, cutoff=MISSPELT)


_TOOLS = (_O.TOOL, _O.TOOL_WRAPPER, _O.TOOL_FUNCTION)
_CALLS = (_O.TOOL_CALL, _O.TOOL_CALL_WRAPPER, _O.TOOL_CALL_FUNCTION)


def _check_calls(
    items: Any,
    loc: Loc,
    kinds: tuple[FixtureObject, FixtureObject, FixtureObject],
    keys: Mapping[FixtureObject, frozenset[str]],
    found: list[KeyProblem],
) -> None:
    """The tools or tool calls: each flat, or OpenAI-wrapped (``{type, function: {...}}``)."""
    if not isinstance(items, list):
        return
    flat, wrapper, function = keys[kinds[0]], keys[kinds[1]], keys[kinds[2]]
    for index, item in enumerate(items):
        if type(item) is not dict and not isinstance(item, Mapping):
            continue
        inner = item.get("function")
        if type(inner) is not dict and not isinstance(inner, Mapping):
            if not flat.issuperset(item):  # nearly every item: its loc is never built
                _check(item, (*loc, index), flat, found)
            continue
        if not wrapper.issuperset(item):  # the places are only needed for a message
            inside = dict.fromkeys(function, "under `function:`")
            _check(item, (*loc, index), wrapper, found, {**FIXTURE_PLACES, **inside})
        if not function.issuperset(inner):
            _check(inner, (*loc, index, "function"), function, found)


def _check_schemas(tools: Any, loc: Loc, found: list[KeyProblem]) -> None:
    """The keywords of each tool's schema (flat ``parameters`` or ``input_schema``, or
    OpenAI-wrapped ``function.parameters``)."""
    if not isinstance(tools, list):
        return
    # a contract's cases carry the same tools: each list of them is walked once, known by
    # its key (json_reader.kept)
    problems = kept(_TOOLS_WALKED, _KEPT, tools, lambda: _schema_problems(tools))
    if problems:  # rare: the places are built for a message only
        found += [((*loc, *inside), message) for inside, message in problems]


# Lists of tools whose problems are kept: cases are read contract by contract, so a list's
# uses come together (more held 1 MB at 10k cases and saved nothing).
_KEPT = 64
_TOOLS_WALKED: dict[bytes, list[KeyProblem]] = {}


def _schema_problems(tools: list[Any]) -> list[KeyProblem]:
    """The unknown keywords of the tools' schemas, each where it is in ``tools``."""
    found: list[KeyProblem] = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            continue
        inner = tool.get("function")
        holder: Mapping[str, Any] = inner if isinstance(inner, Mapping) else tool
        at = (index, "function") if holder is inner else (index,)
        for key in ("parameters", "input_schema"):
            found += [
                ((*at, key, *inside), message)
                for inside, message in unknown_keywords(holder.get(key))
            ]
    return found


def _check(
    obj: Mapping[str, Any],
    loc: Loc,
    here: frozenset[str],
    found: list[KeyProblem],
    places: Mapping[str, str] = FIXTURE_PLACES,
) -> None:
    if here.issuperset(obj):  # nearly every object: one C-level pass over its keys
        return
    for key in obj:
        if key not in here:
            elsewhere = {name: place for name, place in places.items() if name not in here}
            found.append(((*loc, key), unknown_key(str(key), here, elsewhere)))
