"""A fixture's request taken apart for the providers: system text, messages, tools, settings.

Fixtures are written in Chat Completions' shape (flat or wrapped tools, ``tool_calls`` on
assistant messages, ``tool`` messages); each wire module turns this into its own format.
What a provider cannot express raises UnsupportedRequest, naming the field: nothing is
dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replaygate.loading.identity import normalized_request
from replaygate.loading.json_reader import decode_arguments
from replaygate.loading.normalize import normalize_request

# Of identity's volatile members, these are request parameters and are sent; the others
# (stream: false, stream_options, request_id, timestamp, created) are bookkeeping, never sent.
SENT_VOLATILE = ("user", "metadata")


class UnsupportedRequest(ValueError):
    """The fixture's request holds something the chosen provider cannot express."""


@dataclass(frozen=True, slots=True)
class Prompt:
    model: str
    system: tuple[str, ...]
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]  # flat: name, description, parameters (and extras), in order
    settings: dict[str, Any]
    first: int = 0  # the index of messages[0] in the fixture's request.messages

    def where(self, index: int) -> str:
        """``request.messages[i]`` as the fixture numbers it (system messages included)."""
        return f"request.messages[{index + self.first}]"


@dataclass(frozen=True, slots=True)
class ToolChoice:
    mode: str  # auto, none, required, or named
    name: str | None = None


def prompt_of(request: Any, model: str) -> Prompt:
    """The request as the providers see it: exactly what its identity covers.

    Raises FixtureShapeError (the request's shape) or UnsupportedRequest.
    """
    normalized = normalized_request(request, model)
    if isinstance(request, Mapping) and request.get("stream"):
        raise UnsupportedRequest("request.stream: answers are recorded whole; remove it")
    messages = normalized["messages"]
    written = request.get("messages") if isinstance(request, Mapping) else None
    first = len(written) - len(messages) if isinstance(written, list) else 0  # system messages
    for index, message in enumerate(messages):
        _check_message(message, f"request.messages[{index + first}]")
    return Prompt(
        model,
        _system_texts(normalized["system"]),
        [dict(m) for m in messages],
        _tools_as_written(request),
        {**normalized["settings"], **_passed_on(request)},
        first,
    )


def _tools_as_written(request: Any) -> list[dict[str, Any]]:
    """The tools flat, in the fixture's order: identity sorts them, but the order is part of
    the prompt (models favour earlier tools), so the wire keeps it."""
    document, _ = normalize_request(request)
    return [
        {k: v for k, v in tool.items() if not (k == "type" and v == "function")}
        for tool in document.get("tools", [])
    ]


def _check_message(message: Any, where: str) -> None:
    """A role, and the ids that pair a call with its result: without them a provider either
    refuses the request or pairs results by guesswork."""
    if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
        raise UnsupportedRequest(f"{where}: expected an object with a role")
    if message["role"] == "tool" and not _is_id(message.get("tool_call_id")):
        raise UnsupportedRequest(
            f"{where}: a tool message needs the tool_call_id of the call it answers"
        )
    calls = message.get("tool_calls") if message["role"] == "assistant" else None
    for number, call in enumerate(calls if isinstance(calls, list) else []):
        if isinstance(call, Mapping) and not _is_id(call.get("id")):
            raise UnsupportedRequest(
                f"{where}.tool_calls[{number}]: a tool call needs an id (its result names it)"
            )


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _passed_on(request: Any) -> dict[str, Any]:
    """Volatile members that are sent all the same (identity leaves them out)."""
    if not isinstance(request, Mapping):
        return {}
    return {key: request[key] for key in SENT_VOLATILE if key in request}


def _system_texts(system: Any) -> tuple[str, ...]:
    if system is None:
        return ()
    items = system if isinstance(system, list) else [system]
    texts = []
    for item in items:
        if isinstance(item, Mapping) and item.get("type") == "text":
            item = item.get("text")
        if not isinstance(item, str):
            raise UnsupportedRequest("request.system: expected text or text blocks")
        texts.append(item)
    return tuple(texts)


def text_of(content: Any, where: str) -> str:
    """A message's content as text: a string, or text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, Mapping) else None for p in content]
        if all(isinstance(p, str) for p in parts):
            return "".join(str(p) for p in parts)
    raise UnsupportedRequest(f"{where}: only text content can be sent to this provider")


def arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def arguments_object(arguments: Any, where: str) -> Any:
    if isinstance(arguments, str):
        try:
            return decode_arguments(arguments)
        except ValueError:
            raise UnsupportedRequest(f"{where}: arguments are not valid JSON") from None
    return arguments


def tool_choice(value: Any) -> ToolChoice:
    """``auto``/``none``/``required``/``any`` or a named tool, in any provider's spelling."""
    if isinstance(value, str) and value in ("auto", "none", "required", "any"):
        return ToolChoice("required" if value == "any" else value)
    if isinstance(value, Mapping):
        kind = value.get("type")
        inner = value.get("function")
        name = inner.get("name") if isinstance(inner, Mapping) else value.get("name")
        if kind in ("function", "tool") and isinstance(name, str):
            return ToolChoice("named", name)
        if kind in ("auto", "none", "any"):
            return tool_choice(kind)
    raise UnsupportedRequest(f"request.tool_choice: {value!r} is not a tool choice")


def check_tool_keys(tool: Mapping[str, Any], index: int, extras: set[str], provider: str) -> None:
    """A tool holds name, description, parameters and the ``extras`` this provider has."""
    for key in tool:
        if key not in ("name", "description", "parameters") and key not in extras:
            raise UnsupportedRequest(
                f"request.tools[{index}].{key}: the {provider} provider cannot express it"
            )


def take(settings: dict[str, Any], allowed: Mapping[str, str], provider: str) -> dict[str, Any]:
    """Settings renamed for the provider (``allowed``: fixture name -> wire name); any other
    setting is an error naming it."""
    unknown = sorted(key for key in settings if key not in allowed)
    if unknown:
        raise UnsupportedRequest(f"request.{unknown[0]}: the {provider} provider cannot express it")
    renamed: dict[str, Any] = {}
    for key, value in settings.items():
        if allowed[key] in renamed:  # max_tokens and max_completion_tokens, both given
            raise UnsupportedRequest(f"request.{key}: given twice, as {allowed[key]}")
        renamed[allowed[key]] = value
    return renamed
