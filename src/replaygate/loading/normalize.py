"""Provider-neutral request and response shapes (flat tools and tool calls)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replaygate.assertions.values import EmbeddedJson
from replaygate.loading.json_reader import MalformedArguments, decode_arguments


class FixtureShapeError(ValueError):
    """The request or response does not have the shape a fixture needs; ``loc`` leads from
    the response to the offending value, when a line can be looked up for it."""

    def __init__(self, message: str, loc: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.loc = loc


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: Any  # EmbeddedJson when the arguments are a JSON object, else the raw value
    malformed: str | None  # why the arguments are not a JSON object, or None


def _flat(item: Any, where: str, index: int) -> Mapping[str, Any]:
    """A tool or tool call as {name, ...}: flat, OpenAI-wrapped or Anthropic tool_use."""
    if type(item) is not dict and not isinstance(item, Mapping):  # JSON gives dicts: no ABC
        kind = type(item).__name__
        raise FixtureShapeError(f"{where}[{index}]: expected an object, got {kind}")
    inner = item.get("function")
    if type(inner) is dict or isinstance(inner, Mapping):
        # the wrapper's other keys first, in their order, then the function's, which win
        merged = dict(item)
        del merged["function"]
        merged.pop("type", None)
        merged.update(inner)
        return merged
    if item.get("type") == "tool_use" and "input" in item:
        rest = {k: v for k, v in item.items() if k not in ("input", "type")}
        return {**rest, "arguments": item["input"]}
    return item


def _arguments(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, Mapping):
        return EmbeddedJson(dict(raw)), None
    if not isinstance(raw, str):
        return raw, f"arguments must be a JSON object or a JSON string, got {type(raw).__name__}"
    try:
        parsed = decode_arguments(raw)
    except MalformedArguments as exc:
        return raw, str(exc)
    if not isinstance(parsed, dict):
        return raw, f"arguments must be a JSON object, got {type(parsed).__name__}"
    return EmbeddedJson(parsed, raw), None


def _tool_call(flat: Mapping[str, Any], index: int) -> ToolCall:
    name = flat.get("name")
    if not isinstance(name, str) or not name:
        raise FixtureShapeError(f"response.tool_calls[{index}]: missing tool name")
    arguments, malformed = _arguments(flat.get("arguments", {}))
    return ToolCall(name, arguments, malformed)


def normalize_response(response: Any) -> tuple[dict[str, Any], tuple[ToolCall, ...]]:
    """The document output_invariants see, and the parsed tool calls."""
    if not isinstance(response, Mapping):
        raise FixtureShapeError(f"response: expected an object, got {type(response).__name__}")
    raw_calls = response.get("tool_calls")
    raw_calls = [] if raw_calls is None else raw_calls
    if not isinstance(raw_calls, list):
        raise FixtureShapeError("response.tool_calls: expected a list")
    flats = [_flat(item, "response.tool_calls", index) for index, item in enumerate(raw_calls)]
    calls = tuple(_tool_call(flat, index) for index, flat in enumerate(flats))
    error = response.get("error")
    success = response.get("success", error is None)
    if not isinstance(success, bool):
        raise FixtureShapeError("response.success: expected true or false")
    document = dict(response)
    document.update(
        success=success,
        tool_calls=[
            {**flat, "arguments": call.arguments} for flat, call in zip(flats, calls, strict=True)
        ],
    )
    return document, calls


def normalize_request(request: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document input_invariants see, and the JSON Schema ``parameters`` by tool name."""
    if request is None:
        return {}, {}
    if not isinstance(request, Mapping):
        raise FixtureShapeError(f"request: expected an object, got {type(request).__name__}")
    raw_tools = request.get("tools")
    raw_tools = [] if raw_tools is None else raw_tools
    if not isinstance(raw_tools, list):
        raise FixtureShapeError("request.tools: expected a list")
    tools = [dict(_flat(tool, "request.tools", i)) for i, tool in enumerate(raw_tools)]
    for index, tool in enumerate(tools):  # Anthropic names the schema input_schema
        if "parameters" not in tool and "input_schema" in tool:
            tool["parameters"] = tool.pop("input_schema")
        if "parameters" in tool and not isinstance(tool["parameters"], Mapping):
            kind = type(tool["parameters"]).__name__
            where = f"request.tools[{index}].parameters"
            raise FixtureShapeError(f"{where}: expected an object (a JSON Schema), got {kind}")
    schemas = {
        t["name"]: t["parameters"]
        for t in tools
        if isinstance(t.get("name"), str) and isinstance(t.get("parameters"), Mapping)
    }
    document = dict(request)
    if "tools" in request:
        document["tools"] = tools
    return document, schemas
