"""Recorded responses as traces: OpenAI messages, Anthropic blocks, flat turns, one response."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from replaygate.assertions.trace import ASSISTANT, Trace, TraceCall, Turn
from replaygate.assertions.values import suggestion
from replaygate.loading.json_reader import MalformedArguments, decode_arguments
from replaygate.loading.models import TRACE_KEYS
from replaygate.loading.normalize import FixtureShapeError, ToolCall
from replaygate.loading.usage import usage

TURN_ROLES = ("assistant", "system", "tool", "user")  # flat turns, Connexity transcripts
MESSAGE_ROLES = (*TURN_ROLES, "developer", "function")  # OpenAI's message roles besides
_FLAT_TURN_KEYS = frozenset({"role", "text", "tool_calls", "usage"})
_FLAT_CALL_KEYS = frozenset({"id", "name", "arguments", "result", "is_error"})
Located = tuple[Sequence[str], tuple[str | int, ...]]  # the roles allowed, where the turn is


def is_trace(response: Any) -> bool:
    """A whole run rather than one answer: a message list, ``{messages: [...]}`` or ``{turns}``."""
    if isinstance(response, list):
        return True
    return isinstance(response, Mapping) and ("messages" in response or "turns" in response)


def arguments(raw: Any) -> Mapping[str, Any] | None:
    """Arguments as an object, or None when they are not a JSON object (malformed)."""
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, str):
        try:
            parsed = decode_arguments(raw)
        except MalformedArguments:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _call(item: Any, where: str, results: Mapping[str, tuple[Any, bool]]) -> TraceCall:
    if not isinstance(item, Mapping):
        raise FixtureShapeError(f"{where}: expected a tool call object")
    inner = item.get("function")
    flat = {**item, **inner} if isinstance(inner, Mapping) else item
    name = flat.get("name")
    if not isinstance(name, str) or not name:
        raise FixtureShapeError(f"{where}: missing tool name")
    raw = flat.get("input", flat.get("arguments", {}))
    call_id = flat.get("id") if isinstance(flat.get("id"), str) else None
    result, is_error = results.get(call_id or "", (flat.get("result"), False))
    return TraceCall(name, arguments(raw), call_id, result, bool(flat.get("is_error", is_error)))


def _result_text(content: Any) -> Any:
    """A tool result: a string, or the text of its text blocks with other blocks as JSON."""
    if not isinstance(content, list):
        return content
    parts = [
        block["text"]
        if isinstance(block, Mapping) and block.get("type") == "text"
        else json.dumps(block)
        for block in content
    ]
    return "\n".join(str(part) for part in parts)


def _results(messages: Sequence[Any]) -> dict[str, tuple[Any, bool]]:
    """Tool results by call id: OpenAI ``tool`` messages and Anthropic ``tool_result`` blocks."""
    found: dict[str, tuple[Any, bool]] = {}
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        if message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str):
            found[message["tool_call_id"]] = (message.get("content"), False)
        blocks = message.get("content")
        for block in blocks if isinstance(blocks, list) else ():
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                result = (_result_text(block.get("content")), block.get("is_error") is True)
                found[str(block.get("tool_use_id"))] = result
    return found


def _content(content: Any, where: str) -> tuple[str, list[Any]]:
    """The text of a message's content and its Anthropic ``tool_use`` blocks."""
    if content is None or isinstance(content, str):
        return content or "", []
    if not isinstance(content, list):
        raise FixtureShapeError(f"{where}.content: expected a string or a list of blocks")
    texts, uses = [], []
    for index, block in enumerate(content):
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise FixtureShapeError(f"{where}.content[{index}]: expected a block with a 'type'")
        if block["type"] in ("text", "output_text") and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block["type"] == "tool_use":
            uses.append(block)
    return "\n".join(texts), uses


def _role(role: Any, roles: Sequence[str], where: str, loc: tuple[str | int, ...]) -> str:
    if role not in roles:
        hint = suggestion(role, roles) or f" (use {', '.join(roles)})"
        raise FixtureShapeError(f"{where}.role: unknown role {role!r}{hint}", (*loc, "role"))
    return str(role)


def _message_turn(
    message: Any, where: str, results: Mapping[str, tuple[Any, bool]], at: Located
) -> Turn:
    if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
        raise FixtureShapeError(f"{where}: expected a message object with a 'role'", at[1])
    _role(message["role"], at[0], where, at[1])
    text, uses = _content(message.get("content"), where)
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise FixtureShapeError(f"{where}.tool_calls: expected a list")
    calls = [_call(c, f"{where}.tool_calls[{i}]", results) for i, c in enumerate(raw_calls)]
    calls += [_call(u, f"{where}.content", results) for u in uses]
    return Turn(message["role"], text, tuple(calls), usage(message.get("usage"), f"{where}.usage"))


def _final(turns: Sequence[Turn]) -> str:
    return next((t.text for t in reversed(turns) if t.role == ASSISTANT and t.text), "")


def from_messages(
    messages: Sequence[Any],
    where: str,
    loc: tuple[str | int, ...] = (),
    roles: Sequence[str] = MESSAGE_ROLES,
) -> Trace:
    """The turns of a message list at ``loc`` (keys and indexes, for a line) in the response."""
    results = _results(messages)
    turns = tuple(
        _message_turn(m, f"{where}[{i}]", results, (roles, (*loc, i)))
        for i, m in enumerate(messages)
    )
    return Trace(turns, _final(turns))


def _flat_turn(raw: Any, where: str, loc: tuple[str | int, ...]) -> Turn:
    if not isinstance(raw, Mapping):
        raise FixtureShapeError(f"{where}: expected a turn object")
    _known(raw, _FLAT_TURN_KEYS, where)
    role, text = raw.get("role", ASSISTANT), raw.get("text", "")
    if not isinstance(role, str) or not isinstance(text, str):
        raise FixtureShapeError(f"{where}: role and text must be strings")
    _role(role, TURN_ROLES, where, loc)
    raw_calls = raw.get("tool_calls", [])
    if not isinstance(raw_calls, list):
        raise FixtureShapeError(f"{where}.tool_calls: expected a list")
    for index, call in enumerate(raw_calls):
        if isinstance(call, Mapping):
            _known(call, _FLAT_CALL_KEYS, f"{where}.tool_calls[{index}]")
            if not isinstance(call.get("is_error", False), bool):
                message = f"{where}.tool_calls[{index}].is_error: expected true or false"
                raise FixtureShapeError(message)
    calls = tuple(_call(c, f"{where}.tool_calls[{i}]", {}) for i, c in enumerate(raw_calls))
    return Turn(role, text, calls, usage(raw.get("usage"), f"{where}.usage"))


def _known(raw: Mapping[str, Any], keys: frozenset[str], where: str) -> None:
    unknown = sorted(str(key) for key in raw if key not in keys)
    if unknown:
        raise FixtureShapeError(
            f"{where}: unknown key {unknown[0]!r} (use {', '.join(sorted(keys))})"
        )


def from_flat(raw_turns: Any) -> Trace:
    if not isinstance(raw_turns, list):
        raise FixtureShapeError("response.turns: expected a list")
    turns = tuple(
        _flat_turn(t, f"response.turns[{i}]", ("turns", i)) for i, t in enumerate(raw_turns)
    )
    return Trace(turns, _final(turns))


def read_trace(response: Any) -> Trace:
    """The trace of a response that ``is_trace``, with its recorded final output and sandbox."""
    if isinstance(response, list):
        return from_messages(response, "response")
    both = [key for key in ("turns", "messages", "tool_calls", "content") if key in response]
    if len(both) > 1:
        message = f"response: {both[0]} and {both[1]} cannot be combined (a trace holds its "
        raise FixtureShapeError(message + "calls and text in its turns or messages)")
    if "turns" in response:
        trace = from_flat(response["turns"])
    elif isinstance(response["messages"], list):
        trace = from_messages(response["messages"], "response.messages", ("messages",))
    else:
        raise FixtureShapeError("response.messages: expected a list")
    return _recorded_extras(trace, response)


def _recorded_extras(trace: Trace, response: Mapping[str, Any]) -> Trace:
    final, sandbox = response.get("final_output"), response.get("sandbox")
    if final is not None and not isinstance(final, str):
        raise FixtureShapeError("response.final_output: expected a string")
    if sandbox is not None and not isinstance(sandbox, str):
        raise FixtureShapeError("response.sandbox: expected a string")
    final = trace.final_output if final is None else final
    # the run's own total is a recorded figure: the budget takes the larger, never the sum
    total = usage(response.get("usage"), "response.usage")
    return Trace(trace.turns, final, sandbox, tokens=total.total if total else None)


def legacy_response(response: Any, trace: Trace) -> dict[str, Any]:
    """What single-response contracts see of a trace: every call of every turn, in order,
    the final output as ``content``, and the response's other keys as recorded."""
    rest = dict(response) if isinstance(response, Mapping) else {}
    for key in TRACE_KEYS:
        rest.pop(key, None)
    calls = [_legacy_call(call) for call in trace.calls]
    return {**rest, "tool_calls": calls, "content": trace.final_output}


def _legacy_call(call: TraceCall) -> dict[str, Any]:
    flat: dict[str, Any] = {"name": call.name}
    if call.id is not None:
        flat["id"] = call.id
    # malformed arguments stay malformed for the classification of the case
    flat["arguments"] = call.arguments if call.arguments is not None else "<not a JSON object>"
    return flat


def single_turn(document: Mapping[str, Any], calls: Sequence[ToolCall]) -> Trace:
    """A one-answer response as a trace of one assistant turn."""
    content = document.get("content")
    text = content if isinstance(content, str) else ""
    ids = [flat.get("id") for flat in document.get("tool_calls", [])]
    traced = tuple(
        TraceCall(
            call.name,
            call.arguments if call.malformed is None else None,
            ident if isinstance(ident, str) else None,
        )
        for call, ident in zip(calls, ids, strict=True)
    )
    turn = Turn(ASSISTANT, text, traced, usage(document.get("usage"), "response.usage"))
    return Trace((turn,), text)
