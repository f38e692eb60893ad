"""Paths that can never match what they are checked on: a field no tool call has
(``$.tool_calls[*].nmae``), an argument no tool schema declares (``$.units``). Such an
assertion passes with ``optional`` or ``not`` whatever the model does, so it is refused."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from replaygate.assertions.values import suggestion
from replaygate.loading.files import excerpt
from replaygate.loading.models import FIXTURE_KEYS, FixtureObject

if TYPE_CHECKING:
    from replaygate.assertions.assertion import Assertion

_O = FixtureObject
# The fields of a normalised tool call (loading/normalize.py): a flat call's keys, with a
# wrapped call's `function` merged in.
CALL_FIELDS = tuple(
    sorted(
        (
            FIXTURE_KEYS[_O.TOOL_CALL]
            | FIXTURE_KEYS[_O.TOOL_CALL_WRAPPER]
            | FIXTURE_KEYS[_O.TOOL_CALL_FUNCTION]
        )
        - {"function"}
    )
)
# Keywords through which a schema may admit properties its `properties` does not list.
_OPEN = frozenset({
    "allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "$recursiveRef", "if", "dependentSchemas",
    "dependencies", "patternProperties", "unevaluatedProperties",
})  # fmt: skip


def _steps(assertion: Assertion) -> tuple[Any, ...]:
    """The path's steps: names, indexes and wildcards (None); () for a path walked otherwise."""
    path = assertion.path
    return path.steps or path.fanned or ()


def response_path_problem(assertion: Assertion) -> str | None:
    """Why an output invariant's path names a field no tool call has, or None."""
    steps = _steps(assertion)
    if len(steps) < 3 or steps[0] != "tool_calls" or isinstance(steps[1], str):
        return None
    field = steps[2]
    if not isinstance(field, str) or field in CALL_FIELDS:
        return None
    return (
        f"{assertion.path.text}: a tool call has no field '{excerpt(field)}'"
        f"{suggestion(field, CALL_FIELDS)}, so the path never matches; its fields are "
        f"{', '.join(CALL_FIELDS)}"
    )


def argument_path_problem(assertion: Assertion, tool: str, schema: Any) -> str | None:
    """Why an argument invariant's path names an argument ``schema`` (the tool's) does not
    declare with ``additionalProperties: false``, or None."""
    node = schema
    for step in _steps(assertion):
        if not isinstance(node, dict):  # parsed JSON: a dict (not the slower abc check)
            return None
        if isinstance(step, int):
            node = node.get("items")
            continue
        declared = node.get("properties")
        if step is None or not isinstance(declared, dict) or not _closed(node):
            return None
        if step not in declared:
            names = sorted(str(name) for name in declared)
            return (
                f"{assertion.path.text}: tool '{excerpt(tool)}' declares no argument "
                f"'{excerpt(step)}'{suggestion(step, names)}, so the path never matches; its "
                f"arguments are {', '.join(names)}"
            )
        node = declared[step]
    return None


def _closed(schema: Mapping[str, Any]) -> bool:
    """Whether the schema's ``properties`` are all the properties it admits: a model may
    send an argument an open schema does not list (and a contract check it)."""
    return schema.get("additionalProperties") is False and _OPEN.isdisjoint(schema)
