"""Strict keys for fixtures and recordings: each object the format defines (models.py) holds
only its keys, so a misspelt key is reported instead of silently skipping a check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replaygate.loading.models import (
    FIXTURE_KEYS,
    FIXTURE_PLACES,
    BoundaryVersion,
    FixtureObject,
    Loc,
    unknown_key,
    version_problem,
)

_O = FixtureObject
KeyProblem = tuple[Loc, str]  # where (the key itself) and what is wrong
# where a key found at the top level belongs instead: `model` there is its own message
_TOP_PLACES = {name: place for name, place in FIXTURE_PLACES.items() if name != "model"}


def key_problems(
    data: Mapping[str, Any], keys: Mapping[FixtureObject, frozenset[str]] = FIXTURE_KEYS
) -> list[KeyProblem]:
    """Every unknown key of a fixture or recording, and an unknown ``boundary_version``."""
    found: list[KeyProblem] = []
    _check(data, (), keys[_O.FIXTURE], found, _TOP_PLACES)
    if "boundary_version" in data:
        problem = version_problem(data["boundary_version"], BoundaryVersion)
        if problem is not None:
            found.append((("boundary_version",), f"boundary_version: {problem}"))
    request, response = data.get("request"), data.get("response")
    if isinstance(request, Mapping):
        _check(request, ("request",), keys[_O.REQUEST], found)
        for index, tool in _items(request.get("tools")):
            kinds = (_O.TOOL, _O.TOOL_WRAPPER, _O.TOOL_FUNCTION)
            _check_call(tool, ("request", "tools", index), kinds, keys, found)
    if isinstance(response, Mapping):
        _check(response, ("response",), keys[_O.RESPONSE], found)
        for index, call in _items(response.get("tool_calls")):
            kinds = (_O.TOOL_CALL, _O.TOOL_CALL_WRAPPER, _O.TOOL_CALL_FUNCTION)
            _check_call(call, ("response", "tool_calls", index), kinds, keys, found)
        if isinstance(response.get("error"), Mapping):
            _check(response["error"], ("response", "error"), keys[_O.ERROR], found)
    return found


def _items(value: Any) -> list[tuple[int, Mapping[str, Any]]]:
    items = value if isinstance(value, list) else []
    return [(index, item) for index, item in enumerate(items) if isinstance(item, Mapping)]


def _check_call(
    item: Mapping[str, Any],
    loc: Loc,
    kinds: tuple[FixtureObject, FixtureObject, FixtureObject],
    keys: Mapping[FixtureObject, frozenset[str]],
    found: list[KeyProblem],
) -> None:
    """A tool or tool call: flat, or OpenAI-wrapped (``{type, function: {...}}``)."""
    flat, wrapper, function = kinds
    if not isinstance(item.get("function"), Mapping):
        _check(item, loc, keys[flat], found)
        return
    if not keys[wrapper].issuperset(item):  # the places are only needed for a message
        inside = dict.fromkeys(keys[function], "under `function:`")
        _check(item, loc, keys[wrapper], found, {**FIXTURE_PLACES, **inside})
    _check(item["function"], (*loc, "function"), keys[function], found)


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
