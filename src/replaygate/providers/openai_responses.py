"""OpenAI Responses on the wire: POST {base}/responses, ``input`` items and ``function_call``
output items."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replaygate.providers.prompt import (
    Prompt,
    UnsupportedRequest,
    arguments_text,
    check_tool_keys,
    take,
    text_of,
    tool_choice,
)
from replaygate.providers.response import (
    FinishReason,
    MalformedResponse,
    flat_response,
    member,
    tool_call,
)

PATH = "/responses"
_SETTINGS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_output_tokens",
    "max_completion_tokens": "max_output_tokens",
    "top_logprobs": "top_logprobs",
    "store": "store",
    "service_tier": "service_tier",
    "parallel_tool_calls": "parallel_tool_calls",
    "user": "user",
    "metadata": "metadata",
}
_INCOMPLETE: dict[Any, FinishReason] = {
    "max_output_tokens": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
}


def headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# What a tool without parameters gets: the Responses API requires the member.
_NO_PARAMETERS = {"type": "object", "properties": {}}


def _tool(tool: Mapping[str, Any], index: int) -> dict[str, Any]:
    """A function tool, strict only when the fixture says so: the Responses API defaults to
    strict mode (Chat Completions does not), which changes what models answer."""
    check_tool_keys(tool, index, {"strict"}, "openai-responses")
    rendered = {"type": "function", **tool, "strict": tool.get("strict", False)}
    rendered.setdefault("parameters", _NO_PARAMETERS)
    return rendered


def _items(message: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    role = message["role"]
    if role == "tool":
        output = text_of(message.get("content"), where)
        return [
            {
                "type": "function_call_output",
                "call_id": message.get("tool_call_id"),
                "output": output,
            }
        ]
    if role not in ("user", "assistant", "developer", "system"):
        raise UnsupportedRequest(f"{where}: role {role!r} cannot be sent to openai-responses")
    items: list[dict[str, Any]] = []
    if message.get("content") is not None:
        items.append({"role": role, "content": text_of(message["content"], where)})
    for call in message.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, Mapping) else {}
        items.append(
            {
                "type": "function_call",
                "call_id": call.get("id"),
                "name": function.get("name"),
                "arguments": arguments_text(function.get("arguments", {})),
            }
        )
    return items


def _choice(value: Any) -> Any:
    choice = tool_choice(value)
    return {"type": "function", "name": choice.name} if choice.mode == "named" else choice.mode


def build(prompt: Prompt) -> dict[str, Any]:
    settings = dict(prompt.settings)
    choice = settings.pop("tool_choice", None)
    body: dict[str, Any] = {
        "model": prompt.model,
        "input": [
            item for i, m in enumerate(prompt.messages) for item in _items(m, prompt.where(i))
        ],
    }
    if prompt.system:
        body["instructions"] = "\n\n".join(prompt.system)
    if prompt.tools:
        body["tools"] = [_tool(tool, index) for index, tool in enumerate(prompt.tools)]
    if choice is not None:
        body["tool_choice"] = _choice(choice)
    body.update(take(settings, _SETTINGS, "openai-responses"))
    return body


def parse(body: Any) -> dict[str, Any]:
    """The flat response of a ``response`` object. Raises MalformedResponse."""
    if not isinstance(body, Mapping) or not isinstance(body.get("output"), list):
        raise MalformedResponse("no 'output' list")
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[dict[str, Any]] = []
    for index, item in enumerate(body["output"]):
        if not isinstance(item, Mapping):
            raise MalformedResponse(f"output[{index}] is not an object")
        if item.get("type") == "function_call":
            calls.append(
                tool_call(item.get("call_id"), item.get("name"), item.get("arguments"), len(calls))
            )
        elif item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, Mapping) and part.get("type") == "output_text":
                    texts.append(str(part.get("text", "")))
                elif isinstance(part, Mapping) and part.get("type") == "refusal":
                    refusals.append(str(part.get("refusal", "")))
    usage = member(body, "usage")
    return flat_response(
        content="".join(texts) if texts else None,
        refusal="".join(refusals),
        calls=calls,
        finish=_finish(body, calls, refusals),
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        model=body.get("model"),
    )


def _finish(body: Mapping[str, Any], calls: list[Any], refusals: list[str]) -> FinishReason:
    if refusals:
        return FinishReason.REFUSAL
    if body.get("status") == "incomplete":
        details = body.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return _INCOMPLETE.get(reason, FinishReason.OTHER)
    return FinishReason.TOOL_CALLS if calls else FinishReason.STOP
