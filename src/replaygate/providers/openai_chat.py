"""OpenAI Chat Completions on the wire: POST {base}/chat/completions (also compatible servers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replaygate.providers.prompt import (
    Prompt,
    UnsupportedRequest,
    arguments_text,
    check_tool_keys,
    take,
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

PATH = "/chat/completions"
_SETTINGS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_completion_tokens",
    "parallel_tool_calls": "parallel_tool_calls",
    "user": "user",
    "metadata": "metadata",
    "stop": "stop",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "response_format": "response_format",
    "reasoning_effort": "reasoning_effort",
    "max_completion_tokens": "max_completion_tokens",
    "n": "n",
    "logit_bias": "logit_bias",
    "logprobs": "logprobs",
    "top_logprobs": "top_logprobs",
    "store": "store",
    "service_tier": "service_tier",
}
# Compatible servers (vLLM, Ollama, LiteLLM ...) know the older name of the token limit.
_COMPATIBLE_SETTINGS = {**_SETTINGS, "max_tokens": "max_tokens"}
_FINISH: dict[Any, FinishReason] = {
    "stop": FinishReason.STOP,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "length": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
}


def headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _tool(tool: Mapping[str, Any], index: int, provider: str) -> dict[str, Any]:
    check_tool_keys(tool, index, {"strict"}, provider)
    return {"type": "function", "function": dict(tool)}


def _choice(value: Any) -> Any:
    choice = tool_choice(value)
    if choice.mode == "named":
        return {"type": "function", "function": {"name": choice.name}}
    return choice.mode


def _message(message: dict[str, Any], where: str) -> dict[str, Any]:
    """An assistant message's calls in the wire's shape (fixtures may write them flat)."""
    calls = message.get("tool_calls")
    if message["role"] != "assistant" or not calls:
        return message
    if not isinstance(calls, list):
        raise UnsupportedRequest(f"{where}.tool_calls: expected a list")
    return {**message, "tool_calls": [_wire_call(c, where, i) for i, c in enumerate(calls)]}


def _wire_call(call: Any, where: str, number: int) -> dict[str, Any]:
    function = call.get("function", call) if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        raise UnsupportedRequest(f"{where}.tool_calls[{number}]: expected an object with a name")
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {
            "name": function.get("name"),
            "arguments": arguments_text(function.get("arguments", {})),
        },
    }


def build(prompt: Prompt, *, compatible: bool = False) -> dict[str, Any]:
    settings = dict(prompt.settings)
    choice = settings.pop("tool_choice", None)
    provider = "openai-compatible" if compatible else "openai"
    body: dict[str, Any] = {
        "model": prompt.model,
        "messages": [{"role": "system", "content": text} for text in prompt.system]
        + [_message(message, prompt.where(i)) for i, message in enumerate(prompt.messages)],
    }
    if prompt.tools:
        body["tools"] = [_tool(tool, i, provider) for i, tool in enumerate(prompt.tools)]
    if choice is not None:
        body["tool_choice"] = _choice(choice)
    body.update(take(settings, _COMPATIBLE_SETTINGS if compatible else _SETTINGS, provider))
    if body.get("n", 1) != 1:
        raise UnsupportedRequest("request.n: one answer is recorded per case; remove n")
    return body


def parse(body: Any) -> dict[str, Any]:
    """The flat response of a chat.completion body. Raises MalformedResponse."""
    if not isinstance(body, Mapping) or not isinstance(body.get("choices"), list):
        raise MalformedResponse("no 'choices' list")
    if not body["choices"] or not isinstance(body["choices"][0], Mapping):
        raise MalformedResponse("'choices' is empty")
    choice = body["choices"][0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise MalformedResponse("choices[0] has no 'message'")
    calls = [_call(item, i) for i, item in enumerate(message.get("tool_calls") or [])]
    refusal = message.get("refusal")
    finish = (
        FinishReason.REFUSAL if refusal else _FINISH.get(text_or_none(choice.get("finish_reason")))
    )
    usage = member(body, "usage")
    return flat_response(
        content=message.get("content"),
        refusal=refusal,
        calls=calls,
        finish=finish or FinishReason.OTHER,
        input_tokens=usage.get("prompt_tokens"),
        output_tokens=usage.get("completion_tokens"),
        model=body.get("model"),
    )


def _call(item: Any, index: int) -> dict[str, Any]:
    function = item.get("function") if isinstance(item, Mapping) else None
    if not isinstance(function, Mapping):
        raise MalformedResponse(f"tool_calls[{index}] has no 'function'")
    return tool_call(item.get("id"), function.get("name"), function.get("arguments"), index)
