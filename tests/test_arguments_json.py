"""One decoder for tool-call arguments: every entry point that decodes them keeps its rules."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from replaygate.loading import json_reader
from replaygate.loading.files import MAX_DEPTH
from replaygate.loading.normalize import normalize_response
from replaygate.loading.traces import read_trace
from replaygate.providers.prompt import UnsupportedRequest, arguments_object

REFUSED = "refused"


def nested(levels: int) -> str:
    """An object whose member ``a`` holds ``levels - 1`` more containers: ``levels`` in all."""
    return '{"a": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


def nested_value(levels: int) -> Any:
    """The value of ``nested(levels)``."""
    value: Any = []
    for _ in range(levels - 2):
        value = [value]
    return {"a": value}


def from_normalized_response(text: str) -> Any:
    _, (call,) = normalize_response({"tool_calls": [{"name": "f", "arguments": text}]})
    return REFUSED if call.malformed is not None else dict(call.arguments)


def from_trace(text: str) -> Any:
    message = {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": text}}]}
    (call,) = read_trace({"messages": [message]}).calls
    return REFUSED if call.arguments is None else dict(call.arguments)


def from_provider_prompt(text: str) -> Any:
    try:
        return arguments_object(text, "request.messages[0].tool_calls[0]")
    except UnsupportedRequest:
        return REFUSED


ENTRY_POINTS: list[Callable[[str], Any]] = [
    from_normalized_response,
    from_trace,
    from_provider_prompt,
]


@pytest.fixture(params=["strict only", "past the strict-only start"])
def decoder_phase(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both decoders a process uses: the strict one alone, then msgspec where it agrees."""
    past = request.param != "strict only"
    count = json_reader.STRICT_ONLY_CHARS if past else -sys.maxsize
    monkeypatch.setitem(json_reader._DECODED, "strict_only", count)


# One row per documented rule (docs/contracts.md, "Arguments"): the text and the value every
# entry point makes of it, or REFUSED.
RULES = {
    "NaN": ('{"a": NaN}', REFUSED),
    "Infinity": ('{"a": Infinity}', REFUSED),
    "-Infinity": ('{"a": [-Infinity]}', REFUSED),
    "a number that reads as infinity": ('{"a": 1e999}', REFUSED),
    "an integer of too many digits": ('{"a": ' + "9" * 5000 + "}", REFUSED),
    "nesting at the limit": (nested(MAX_DEPTH), nested_value(MAX_DEPTH)),
    "nesting one level too deep": (nested(MAX_DEPTH + 1), REFUSED),
    "nesting 300 deep": (nested(300), REFUSED),
    "nesting past the interpreter's recursion limit": (nested(5000), REFUSED),
    "a duplicate key": ('{"a": 1, "a": 2}', REFUSED),
    "a duplicate key, nested": ('{"a": {"b": 1, "b": 1}}', REFUSED),
    "a duplicate key written with an escape": ('{"a": 1, "\\u0061": 2}', REFUSED),
    "a key in two objects": ('{"a": {"b": 1}, "c": {"b": 1}}', {"a": {"b": 1}, "c": {"b": 1}}),
    "an escaped lone surrogate, kept": ('{"a": "\\ud800"}', {"a": "\ud800"}),
    "a surrogate pair": ('{"a": "\\ud83d\\ude00"}', {"a": "\U0001f600"}),
    "trailing text": ('{"a": 1} x', REFUSED),
    "a raw control character in a string": ('{"a": "x\ty"}', REFUSED),
    "the empty text, no arguments": ("", {}),
    "plain values": ('{"a": -0.0, "b": [1, 2.5]}', {"a": -0.0, "b": [1, 2.5]}),
    "constants": ('{"a": [true, null, false]}', {"a": [True, None, False]}),
}  # fmt: skip


@pytest.mark.usefixtures("decoder_phase")
@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda entry: entry.__name__)
@pytest.mark.parametrize(("text", "expected"), RULES.values(), ids=RULES.keys())
def test_every_entry_point_decodes_arguments_by_the_documented_rules(
    entry: Callable[[str], Any], text: str, expected: Any
) -> None:
    found = entry(text)
    assert found == expected
    if expected != REFUSED:  # True is not 1, -0.0 is not 0.0
        assert repr(found) == repr(expected)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": NaN}', "arguments are not valid JSON: NaN is not valid JSON"),
        ('{"a": 1, "a": 2}', "arguments are not valid JSON: duplicate key 'a'"),
        (nested(MAX_DEPTH + 1), f"arguments nest deeper than {MAX_DEPTH} levels"),
        (nested(5000), f"arguments nest deeper than {MAX_DEPTH} levels"),
        ("[1", "arguments are not valid JSON: Expecting ',' delimiter: line 1 column 3 (char 2)"),
    ],
)
@pytest.mark.usefixtures("decoder_phase")
def test_a_refusal_says_why(text: str, message: str) -> None:
    with pytest.raises(json_reader.MalformedArguments) as refused:
        json_reader.decode_arguments(text)
    assert str(refused.value) == message
