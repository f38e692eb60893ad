"""Server-sent event streams assembled into the body the same request would get whole.

The app receives the stream unchanged; the recording holds the assembled body, parsed by the
provider's own ``parse``, so a streamed answer is judged like any other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from replaygate.providers.names import ProviderName
from replaygate.providers.response import MalformedResponse, json_value


def events(stream: bytes) -> Iterator[Any]:
    """The JSON data of each event, in order (``[DONE]`` and comments left out)."""
    text = stream.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    for block in text.split("\n\n"):
        lines = [line[5:] for line in block.split("\n") if line.startswith("data:")]
        data = "\n".join(line[1:] if line.startswith(" ") else line for line in lines)
        if not data or data == "[DONE]":
            continue
        try:
            yield json_value(data)
        except ValueError:
            raise MalformedResponse("an event's data is not JSON") from None


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _chat_call(calls: dict[int, dict[str, Any]], delta: Any) -> None:
    if not isinstance(delta, Mapping):
        return
    index = delta.get("index", len(calls))
    call = calls.setdefault(index, {"id": None, "type": "function", "function": {}})
    if isinstance(delta.get("id"), str):
        call["id"] = delta["id"]
    function = _object(delta.get("function"))
    for key in ("name", "arguments"):
        piece = function.get(key)
        if isinstance(piece, str):
            call["function"][key] = call["function"].get(key, "") + piece


def _chat(stream: bytes) -> dict[str, Any]:
    """Chat Completions chunks: content, refusal and tool-call deltas joined by index."""
    body: dict[str, Any] = {}
    texts: dict[str, str] = {}
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    for chunk in events(stream):
        if not isinstance(chunk, Mapping):
            continue
        body.update({k: chunk[k] for k in ("id", "model", "usage") if chunk.get(k) is not None})
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue  # one answer is recorded: the first choice's
            finish = choice.get("finish_reason") or finish
            delta = _object(choice.get("delta"))
            for key in ("content", "refusal"):
                if isinstance(delta.get(key), str):
                    texts[key] = texts.get(key, "") + delta[key]
            for call in delta.get("tool_calls") or []:
                _chat_call(calls, call)
    message: dict[str, Any] = {"role": "assistant", "content": texts.get("content")}
    if "refusal" in texts:
        message["refusal"] = texts["refusal"]
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return {**body, "object": "chat.completion", "choices": [choice]}


def _responses(stream: bytes) -> dict[str, Any]:
    """Responses events: the final event (completed, incomplete) carries the whole response."""
    final = None
    for event in events(stream):
        if isinstance(event, Mapping) and event.get("type") in (
            "response.completed",
            "response.incomplete",
        ):
            final = event.get("response")
    if not isinstance(final, Mapping):
        raise MalformedResponse("the stream has no response.completed event")
    return dict(final)


def _anthropic_block(blocks: dict[int, dict[str, Any]], event: Mapping[str, Any]) -> None:
    index = event.get("index")
    delta = event.get("delta")
    if not isinstance(index, int) or index not in blocks or not isinstance(delta, Mapping):
        return
    block = blocks[index]
    if delta.get("type") == "text_delta":
        block["text"] = block.get("text", "") + str(delta.get("text", ""))
    elif delta.get("type") == "input_json_delta":
        block["_json"] = block.get("_json", "") + str(delta.get("partial_json", ""))


def _anthropic_input(block: dict[str, Any]) -> dict[str, Any]:
    """A tool_use block's input: the joined JSON text, parsed (kept as text when it is not
    JSON, so the case fails as malformed_arguments, as a whole answer's would)."""
    text = block.pop("_json", None)
    if text is not None:
        try:
            block["input"] = json.loads(text or "{}")
        except ValueError:
            block["input"] = text
    return block


def _anthropic(stream: bytes) -> dict[str, Any]:
    """Messages events: message_start, content blocks with their deltas, message_delta."""
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    for event in events(stream):
        kind = event.get("type") if isinstance(event, Mapping) else None
        if kind == "message_start" and isinstance(event.get("message"), Mapping):
            message = dict(event["message"])
        elif kind == "content_block_start" and isinstance(event.get("content_block"), Mapping):
            blocks[event.get("index", len(blocks))] = dict(event["content_block"])
        elif kind == "content_block_delta":
            _anthropic_block(blocks, event)
        elif kind == "message_delta" and message is not None:
            message.update(event.get("delta") or {})
            usage = _object(event.get("usage"))
            message["usage"] = {**(message.get("usage") or {}), **usage}
    if message is None:
        raise MalformedResponse("the stream has no message_start event")
    message["content"] = [_anthropic_input(blocks[index]) for index in sorted(blocks)]
    return message


ASSEMBLERS: dict[ProviderName, Callable[[bytes], dict[str, Any]]] = {
    ProviderName.OPENAI: _chat,
    ProviderName.OPENAI_COMPATIBLE: _chat,
    ProviderName.OPENAI_RESPONSES: _responses,
    ProviderName.ANTHROPIC: _anthropic,
}


# The event that ends each provider's stream: an SDK may stop reading there, before the
# stream's last bytes, and the answer is whole all the same.
_LAST = {
    ProviderName.OPENAI: b"data: [DONE]",
    ProviderName.OPENAI_COMPATIBLE: b"data: [DONE]",
    ProviderName.OPENAI_RESPONSES: b'"response.completed"',
    ProviderName.ANTHROPIC: b'"message_stop"',
}


def ended(provider: ProviderName, stream: bytes) -> bool:
    """Whether the stream holds its provider's last event."""
    return _LAST[provider] in stream


def assembled(provider: ProviderName, stream: bytes) -> dict[str, Any]:
    """The whole body the stream carried. Raises MalformedResponse."""
    return ASSEMBLERS[provider](stream)
