"""Anthropic Messages on the wire: POST {base}/v1/messages, ``system`` apart, ``tool_use``
blocks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replaygate.providers.prompt import (
    Prompt,
    UnsupportedRequest,
    arguments_object,
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
    text_or_none,
    tool_call,
)

PATH = "/v1/messages"
# What the current anthropic SDK (2.14) sends, and its Authorization: Bearer; a recording
# stores it (api_version).
API_VERSION = "2026-10-21"
# Sampling settings the current Messages API no longer takes (the anthropic SDK's
# MessageCreateParams has none): advisory, so they are left out, and `record` says so once.
LEFT_OUT = frozenset({"temperature", "top_p", "top_k"})
_SETTINGS = {
    "max_tokens": "max_tokens",
    "stop": "stop_sequences",
    "stop_sequences": "stop_sequences",
    "thinking": "thinking",
    "service_tier": "service_tier",
    "metadata": "metadata",
}
_FINISH: dict[Any, FinishReason] = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "tool_use": FinishReason.TOOL_CALLS,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "refusal": FinishReason.REFUSAL,
}


def headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "anthropic-version": API_VERSION}


def _blocks(message: Mapping[str, Any], where: str) -> Any:
    """Text (a string), or content blocks followed by a ``tool_use`` block per call."""
    content, calls = message.get("content"), message.get("tool_calls") or []
    listed = isinstance(content, list) and all(isinstance(b, Mapping) for b in content)
    blocks: list[dict[str, Any]] = []
    if listed and isinstance(content, list):  # (narrowed for the type checker)
        blocks += [_block(block, f"{where}.content[{i}]") for i, block in enumerate(content)]
    elif content is not None:
        text = text_of(content, where)
        if text or not calls:  # the API refuses an empty text block beside tool_use blocks
            blocks.append({"type": "text", "text": text})
    for index, call in enumerate(calls):
        blocks.append(_tool_use(call, f"{where}.tool_calls[{index}]"))
    if not listed and len(blocks) == 1 and blocks[0]["type"] == "text":
        return blocks[0]["text"]
    return blocks


def _block(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An Anthropic content block as written; OpenAI's image parts are not one."""
    if block.get("type") == "image_url":
        raise UnsupportedRequest(
            f"{where}: an image_url part cannot be sent to anthropic; write an Anthropic "
            "image block instead"
        )
    return dict(block)


def _tool_use(call: Any, where: str) -> dict[str, Any]:
    function = call.get("function", call) if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        raise UnsupportedRequest(f"{where}: expected an object with a name")
    return {
        "type": "tool_use",
        "id": call.get("id"),
        "name": function.get("name"),
        "input": arguments_object(function.get("arguments", {}), where),
    }


def _messages(prompt: Prompt) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, message in enumerate(prompt.messages):
        where = prompt.where(index)
        role = message["role"]
        if role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id"),
                "content": text_of(message.get("content"), where),
            }
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)  # results of parallel calls: one user turn
            else:
                out.append({"role": "user", "content": [block]})
        elif role in ("user", "assistant"):
            out.append({"role": role, "content": _blocks(message, where)})
        else:
            raise UnsupportedRequest(f"{where}: role {role!r} cannot be sent to anthropic")
    return out


def _choice(value: Any, parallel: Any) -> dict[str, Any]:
    choice = tool_choice(value if value is not None else "auto")
    kinds = {"auto": "auto", "none": "none", "required": "any", "named": "tool"}
    rendered: dict[str, Any] = {"type": kinds[choice.mode]}
    if choice.name:
        rendered["name"] = choice.name
    if parallel is False and choice.mode != "none":  # tool_choice none has no such member
        rendered["disable_parallel_tool_use"] = True
    return rendered


def _stop_sequences(value: Any) -> list[str]:
    """``stop`` in OpenAI's spelling (one string or a list) as Anthropic's list."""
    sequences = [value] if isinstance(value, str) else value
    if not isinstance(sequences, list) or not all(isinstance(s, str) for s in sequences):
        raise UnsupportedRequest("request.stop: expected text or a list of texts")
    return sequences


def _metadata(value: Any) -> Any:
    """Anthropic's metadata holds ``user_id`` alone; the API refuses anything else."""
    if not isinstance(value, Mapping):
        raise UnsupportedRequest("request.metadata: expected an object")
    for key in value:
        if key != "user_id":
            raise UnsupportedRequest(
                f"request.metadata.{key}: anthropic's metadata holds only user_id"
            )
    return value


def build(prompt: Prompt) -> dict[str, Any]:
    settings = {k: v for k, v in prompt.settings.items() if k not in LEFT_OUT}
    choice, parallel = settings.pop("tool_choice", None), settings.pop("parallel_tool_calls", None)
    if "max_tokens" not in settings:
        raise UnsupportedRequest("request.max_tokens: anthropic needs it; add it to the fixture")
    body: dict[str, Any] = {"model": prompt.model, "messages": _messages(prompt)}
    if prompt.system:
        body["system"] = "\n\n".join(prompt.system)
    if prompt.tools:
        body["tools"] = [_tool(tool, index) for index, tool in enumerate(prompt.tools)]
    if choice is not None or parallel is not None:
        body["tool_choice"] = _choice(choice, parallel)
    body.update(take(settings, _SETTINGS, "anthropic"))
    if "stop_sequences" in body:
        body["stop_sequences"] = _stop_sequences(body["stop_sequences"])
    if "metadata" in body:
        body["metadata"] = _metadata(body["metadata"])
    return body


def _tool(tool: Mapping[str, Any], index: int) -> dict[str, Any]:
    check_tool_keys(tool, index, {"strict", "cache_control"}, "anthropic")
    rendered = {k: v for k, v in tool.items() if k != "parameters"}
    rendered["input_schema"] = tool.get("parameters", {"type": "object"})
    return rendered


def parse(body: Any) -> dict[str, Any]:
    """The flat response of a ``message``. Raises MalformedResponse."""
    if not isinstance(body, Mapping) or not isinstance(body.get("content"), list):
        raise MalformedResponse("no 'content' list")
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for index, block in enumerate(body["content"]):
        if not isinstance(block, Mapping):
            raise MalformedResponse(f"content[{index}] is not an object")
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            calls.append(
                tool_call(block.get("id"), block.get("name"), block.get("input"), len(calls))
            )
    usage = member(body, "usage")
    finish = _FINISH.get(text_or_none(body.get("stop_reason")), FinishReason.OTHER)
    return flat_response(
        content="".join(texts) if texts else None,
        refusal="".join(texts) if finish is FinishReason.REFUSAL else None,
        calls=calls,
        finish=finish,
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        model=body.get("model"),
    )
