"""A request's identity: sha256 over canonical JSON, whole and part by part (docs/recordings.md).

The parts form a table, like the operators: each has a name, how to take it from the
normalised request, and the words that say it changed. A recording stores the identity of
the request it answered; comparing part by part says what changed since.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from replaygate.loading.normalize import FixtureShapeError, normalize_request

HASH_PREFIX = "sha256:"
# Fields that change from call to call without changing the question asked.
VOLATILE_KEYS = frozenset(
    {"user", "metadata", "stream", "stream_options", "request_id", "timestamp", "created"}
)
# Request members that are not settings: each is a part of its own.
_NOT_SETTINGS = frozenset({"messages", "tools", "system", "model"})


class Part(StrEnum):
    """The parts of a request identity, in the order a change is reported."""

    MESSAGES = "messages"
    TOOLS = "tools"
    SYSTEM_PROMPT = "system prompt"
    MODEL = "model"
    SETTINGS = "settings"


def _integral(value: Any) -> Any:
    """Integral floats as integers (``0.0`` is ``0``), at any depth; bools stay bools."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is dict or isinstance(value, Mapping):
        return {key: _integral(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [_integral(item) for item in value]
    return value


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, non-ASCII kept, integral floats as integers."""
    return json.dumps(_integral(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_of(value: Any) -> str:
    """``sha256:`` and the hex digest of the value's canonical JSON (UTF-8)."""
    digest = hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
    return HASH_PREFIX + digest


def _system(request: Mapping[str, Any], messages: list[Any]) -> tuple[Any, list[Any]]:
    """The system prompt (``system``, or the leading system messages) and the other messages."""
    leading = 0
    while leading < len(messages) and _role(messages[leading]) == "system":
        leading += 1
    contents = [message.get("content") for message in messages[:leading]]
    if "system" in request:
        if contents:
            raise FixtureShapeError(
                "request: a system prompt is given both in 'system' and as a system message"
            )
        return request["system"], messages
    if not contents:
        return None, messages
    return (contents[0] if len(contents) == 1 else contents), messages[leading:]


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, Mapping) else None


def _tools(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    tools = [
        {k: v for k, v in tool.items() if not (k == "type" and v == "function")}
        for tool in document.get("tools", [])
    ]
    return sorted(tools, key=lambda tool: str(tool.get("name", "")))


def normalized_request(request: Any, model: str) -> dict[str, Any]:
    """The request as identity sees it: messages, system, tools (flat, by name), model, settings.

    Raises FixtureShapeError when the request does not have a fixture request's shape.
    """
    document, _ = normalize_request(request)
    messages = document.get("messages", [])
    if not isinstance(messages, list):
        raise FixtureShapeError("request.messages: expected a list")
    system, rest = _system(document, messages)
    settings = {
        key: value
        for key, value in document.items()
        if key not in _NOT_SETTINGS and key not in VOLATILE_KEYS
    }
    return {
        "messages": rest,
        "system": system,
        "tools": _tools(document),
        "model": model,
        "settings": settings,
    }


def _hashed(name: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda normalized: sha256_of(normalized[name])


def _system_hash(normalized: Mapping[str, Any]) -> str | None:
    return None if normalized["system"] is None else sha256_of(normalized["system"])


@dataclass(frozen=True, slots=True)
class _PartRule:
    key: str  # the member of the stored identity
    value: Callable[[Mapping[str, Any]], Any]


PARTS: dict[Part, _PartRule] = {
    Part.MESSAGES: _PartRule("messages_hash", _hashed("messages")),
    Part.TOOLS: _PartRule("tool_schema_hash", _hashed("tools")),
    Part.SYSTEM_PROMPT: _PartRule("system_prompt_hash", _system_hash),
    Part.MODEL: _PartRule("model", lambda normalized: normalized["model"]),
    Part.SETTINGS: _PartRule("settings", lambda normalized: _integral(normalized["settings"])),
}


@dataclass(frozen=True, slots=True)
class Identity:
    """The identity of one request: its hash and its parts, as a recording stores them."""

    request_hash: str
    parts: Mapping[str, Any]  # stored key (messages_hash, ..., model, settings) -> value

    def as_json(self) -> dict[str, Any]:
        return {"request_hash": self.request_hash, **self.parts}

    def changed(self, stored: Mapping[str, Any]) -> list[Part]:
        """The parts that differ between this request and a stored identity."""
        return [
            part
            for part, rule in PARTS.items()
            if canonical_json(stored.get(rule.key)) != canonical_json(self.parts[rule.key])
        ]


def request_identity(request: Any, model: str) -> Identity:
    """The identity of a fixture's request sent to ``model``. Raises FixtureShapeError."""
    normalized = normalized_request(request, model)
    parts = {rule.key: rule.value(normalized) for rule in PARTS.values()}
    return Identity(sha256_of(normalized), parts)


def describe_changes(parts: list[Part]) -> str:
    """``messages and model changed``."""
    names = [str(part) for part in parts]
    text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{text} changed"
