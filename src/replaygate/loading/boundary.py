"""A fixture's boundary hash fields (messages_hash, ...): what `replaygate hash` writes.

A field holding a ``sha256:`` value (or null) is ours to keep up to date; any other
string is a hand-written placeholder (``starter_ir_tool_001``) and is left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replaygate.loading.identity import HASH_PREFIX, request_identity

BOUNDARY_KEYS = ("messages_hash", "tool_schema_hash", "system_prompt_hash")
_ABSENT = object()


def _ours(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.startswith(HASH_PREFIX))


def boundary_changes(fixture: Mapping[str, Any]) -> dict[str, Any]:
    """The boundary fields that are missing or out of date, with their new values.

    Raises FixtureShapeError when the request cannot be normalised.
    """
    parts = request_identity(fixture.get("request"), model="").parts
    changes: dict[str, Any] = {}
    for key in BOUNDARY_KEYS:
        have, want = fixture.get(key, _ABSENT), parts[key]
        if have is _ABSENT and want is None:
            continue  # no system prompt, no field: nothing to say
        if (have is _ABSENT or _ours(have)) and have != want:
            changes[key] = want
    return changes


def with_changes(fixture: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """The fixture with ``changes`` applied; new fields go before ``request``, order kept."""
    updated: dict[str, Any] = {}
    new = {key: value for key, value in changes.items() if key not in fixture}
    for key, value in fixture.items():
        if key == "request":
            updated.update(new)
            new = {}
        updated[key] = changes.get(key, value)
    updated.update(new)
    return updated
