"""The flat response every provider's answer is normalised into (docs/recordings.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from replaygate.loading.files import MAX_DEPTH
from replaygate.loading.json_reader import finite_float, refuse_constant, too_deep


class MalformedResponse(ValueError):
    """The provider's body does not have its documented shape."""


class FinishReason(StrEnum):
    STOP = "stop"
    TOOL_CALLS = "tool_calls"
    LENGTH = "length"
    CONTENT_FILTER = "content_filter"
    REFUSAL = "refusal"
    OTHER = "other"


def member(body: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``body[key]`` when it is an object, else an empty one."""
    value = body.get(key)
    return value if isinstance(value, Mapping) else {}


def text_or_none(value: Any) -> str | None:
    """``value`` when it is text, else None: a hostile body's lists and objects look up nothing."""
    return value if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def json_value(text: str | bytes) -> Any:
    """``text`` as JSON, refusing NaN, Infinity and numbers that would read as infinity, as a
    recording's are refused: a check would pass them unchecked (``maximum``, ``type``).
    Nesting deeper than a recording may (MAX_DEPTH) raises MalformedResponse."""
    try:
        value = json.loads(text, parse_constant=refuse_constant, parse_float=finite_float)
    except RecursionError:  # deeper than the interpreter's limit, so deeper than ours
        raise MalformedResponse(_TOO_DEEP) from None
    if too_deep(text if isinstance(text, str) else text.decode("utf-8", "replace"), value):
        raise MalformedResponse(_TOO_DEEP)
    return value


_TOO_DEEP = f"it nests deeper than {MAX_DEPTH} levels"


def tool_call(call_id: Any, name: Any, arguments: Any, index: int) -> dict[str, Any]:
    """One call: arguments parsed when they are a JSON object, else kept as sent."""
    if not isinstance(name, str) or not name:
        raise MalformedResponse(f"tool call {index} has no name")
    if isinstance(arguments, str):
        try:
            parsed = json_value(arguments or "{}")
        except ValueError:
            parsed = None
        arguments = parsed if isinstance(parsed, dict) else arguments
    return {
        "id": call_id if isinstance(call_id, str) else None,
        "name": name,
        "arguments": arguments,
    }


def flat_response(
    *,
    content: Any,
    refusal: Any,
    calls: list[dict[str, Any]],
    finish: FinishReason,
    input_tokens: Any,
    output_tokens: Any,
    model: Any,
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "success": True,
        "content": content if isinstance(content, str) else None,
        "tool_calls": calls,
        "finish_reason": str(finish),
        "usage": {"input_tokens": _count(input_tokens), "output_tokens": _count(output_tokens)},
        "model": model if isinstance(model, str) else None,
    }
    if isinstance(refusal, str) and refusal:
        response["refusal"] = refusal
    return response
