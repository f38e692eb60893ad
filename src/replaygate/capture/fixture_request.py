"""A request as an app sent it, turned into a fixture's request (Chat Completions' shape).

The inverse of the wire modules' ``build``: ``record`` can send the fixture again to the same
provider, and its identity is the identity of what the app asked. Members this does not know
are kept as they are (they are settings, and identity covers them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from replaygate.providers.names import ProviderName

# Never part of a fixture: how the answer travels, not the question asked.
_TRANSPORT = ("model", "stream", "stream_options")


class NotARequest(ValueError):
    """The body is not a request of the provider's shape (no model, no messages)."""


def _chat(body: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(body.get("messages"), list):
        raise NotARequest("no 'messages' list")
    return {key: value for key, value in body.items() if key not in _TRANSPORT}


def _flat_tool(tool: Any) -> Any:
    if not isinstance(tool, Mapping) or tool.get("type", "function") != "function":
        return tool  # a built-in tool (web search, ...): kept as sent
    flat = {key: value for key, value in tool.items() if key not in ("type", "input_schema")}
    if "input_schema" in tool:
        flat["parameters"] = tool["input_schema"]
    return flat


def _response_item(item: Any) -> dict[str, Any]:
    """One Responses input item as a Chat Completions message."""
    if not isinstance(item, Mapping):
        raise NotARequest("an input item is not an object")
    kind = item.get("type", "message")
    if kind == "function_call":
        call = {"id": item.get("call_id"), "name": item.get("name")}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{**call, "arguments": item.get("arguments")}],
        }
    if kind == "function_call_output":
        return {"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")}
    return {key: value for key, value in item.items() if key != "type"}


def _merged_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive function_call items are one assistant turn, as Chat Completions writes it."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        previous = merged[-1] if merged else None
        joins = previous is not None and previous.get("tool_calls") and message.get("tool_calls")
        if joins and previous is not None:
            previous["tool_calls"] = [*previous["tool_calls"], *message["tool_calls"]]
        else:
            merged.append(message)
    return merged


def _responses(body: Mapping[str, Any]) -> dict[str, Any]:
    given = body.get("input")
    items = [{"role": "user", "content": given}] if isinstance(given, str) else given
    if not isinstance(items, list):
        raise NotARequest("no 'input'")
    system = body.get("instructions")
    messages = [{"role": "system", "content": system}] if isinstance(system, str) else []
    messages += _merged_calls([_response_item(item) for item in items])
    request: dict[str, Any] = {"messages": messages}
    renamed = {"max_output_tokens": "max_tokens", "instructions": None, "input": None}
    for key, value in body.items():
        if key in _TRANSPORT or (key in renamed and renamed[key] is None):
            continue
        request[renamed.get(key) or key] = value
    if "tools" in request and isinstance(request["tools"], list):
        request["tools"] = [_strict_as_applied(_flat_tool(tool)) for tool in request["tools"]]
    return request


def _strict_as_applied(tool: Any) -> Any:
    """A Responses function tool with the strictness the API applied: a tool sent without
    ``strict`` is strict there, while a fixture's tool without it is sent ``strict: false``
    (docs/recordings.md), so the fixture says it."""
    if isinstance(tool, dict) and "name" in tool and "strict" not in tool:
        return {**tool, "strict": True}
    return tool


def _anthropic_message(message: Any) -> list[dict[str, Any]]:
    """An Anthropic turn as Chat Completions messages: tool_use blocks become ``tool_calls``,
    tool_result blocks ``tool`` messages; other blocks stay content blocks."""
    if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
        return [dict(message)] if isinstance(message, Mapping) else []
    blocks = [block for block in message["content"] if isinstance(block, Mapping)]
    results = [
        {"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": b.get("content")}
        for b in blocks
        if b.get("type") == "tool_result"
    ]
    calls = [
        {"id": b.get("id"), "name": b.get("name"), "arguments": b.get("input")}
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    rest = [b for b in blocks if b.get("type") not in ("tool_result", "tool_use")]
    out = [*results]
    if rest or calls or not results:
        turn: dict[str, Any] = {"role": message.get("role"), "content": rest or None}
        out.append({**turn, "tool_calls": calls} if calls else turn)
    return out


def _anthropic_choice(value: Any, request: dict[str, Any]) -> Any:
    if not isinstance(value, Mapping):
        return value
    if value.get("disable_parallel_tool_use") is True:
        request["parallel_tool_calls"] = False
    kind = value.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": value.get("name")}}
    return {"any": "required"}.get(str(kind), kind)


def _anthropic(body: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(body.get("messages"), list):
        raise NotARequest("no 'messages' list")
    request: dict[str, Any] = {}
    for key, value in body.items():
        if key in _TRANSPORT:
            continue
        if key == "messages":
            value = [m for message in value for m in _anthropic_message(message)]
        elif key == "tools" and isinstance(value, list):
            value = [_flat_tool(tool) for tool in value]
        elif key == "tool_choice":
            value = _anthropic_choice(value, request)
        request[key] = value
    return request


_CONVERT: dict[ProviderName, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    ProviderName.OPENAI: _chat,
    ProviderName.OPENAI_COMPATIBLE: _chat,
    ProviderName.OPENAI_RESPONSES: _responses,
    ProviderName.ANTHROPIC: _anthropic,
}


def fixture_request(provider: ProviderName, body: Any) -> tuple[str, dict[str, Any]]:
    """The model the app named and the request a fixture holds. Raises NotARequest."""
    if not isinstance(body, Mapping):
        raise NotARequest("the body is not a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise NotARequest("no 'model'")
    return model, _CONVERT[provider](body)


def streamed(body: Any) -> bool:
    """Whether the app asked for an event stream (SSE) rather than one JSON body."""
    return isinstance(body, Mapping) and body.get("stream") is True
