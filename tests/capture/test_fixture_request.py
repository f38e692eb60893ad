"""An app's request as a fixture's: sent again by `record`, it is the request the app made."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replaygate.capture.fixture_request import NotARequest, fixture_request
from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import prompt_of
from replaygate.providers.wire import WIRES

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}}
ANTHROPIC_TURNS = {
    "model": "claude-haiku-4-5",
    "max_tokens": 256,
    "system": "You are a weather bot.",
    "tools": [{"name": "get_weather", "description": "Weather", "input_schema": WEATHER}],
    "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
    "messages": [
        {"role": "user", "content": "Weather in Bern and Basel?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Bern"}},
                {"type": "tool_use", "id": "t2", "name": "get_weather", "input": {"city": "Basel"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "rain"},
            ],
        },
    ],
    "stream": True,
}
RESPONSES_TURNS = {
    "model": "gpt-4o-mini",
    "instructions": "You are a weather bot.",
    "tools": [{"type": "function", "name": "get_weather", "parameters": WEATHER}],
    "tool_choice": "required",
    "max_output_tokens": 300,
    "input": [
        {"role": "user", "content": "Weather in Bern and Basel?"},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "get_weather",
            "arguments": '{"city": "Bern"}',
        },
        {
            "type": "function_call",
            "call_id": "c2",
            "name": "get_weather",
            "arguments": '{"city": "Basel"}',
        },
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"type": "function_call_output", "call_id": "c2", "output": "rain"},
    ],
}


@pytest.mark.parametrize(
    ("provider", "sent"),
    [(ProviderName.ANTHROPIC, ANTHROPIC_TURNS), (ProviderName.OPENAI_RESPONSES, RESPONSES_TURNS)],
)
def test_a_conversation_with_tool_results_is_sent_again_as_it_was(
    provider: ProviderName, sent: dict[str, Any]
) -> None:
    model, request = fixture_request(provider, sent)
    rebuilt = WIRES[provider].build(prompt_of(request, model))
    expected = {k: v for k, v in sent.items() if k != "stream"}
    if provider == ProviderName.OPENAI_RESPONSES:  # the API's default strictness, said aloud
        expected["tools"] = [{**tool, "strict": True} for tool in expected["tools"]]
    assert json.loads(json.dumps(rebuilt)) == expected


def test_the_fixture_is_in_chat_completions_shape() -> None:
    _, request = fixture_request(ProviderName.ANTHROPIC, ANTHROPIC_TURNS)
    assert request["messages"][1]["tool_calls"] == [
        {"id": "t1", "name": "get_weather", "arguments": {"city": "Bern"}},
        {"id": "t2", "name": "get_weather", "arguments": {"city": "Basel"}},
    ]
    assert [m["role"] for m in request["messages"]] == ["user", "assistant", "tool", "tool"]
    assert request["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert request["parallel_tool_calls"] is False
    assert "stream" not in request and "model" not in request


@pytest.mark.parametrize(
    ("body", "message"),
    [([], "the body is not a JSON object"), ({"messages": []}, "no 'model'"),
     ({"model": "m"}, "no 'messages' list")],
)  # fmt: skip
def test_what_is_no_request_is_said(body: Any, message: str) -> None:
    with pytest.raises(NotARequest, match=message):
        fixture_request(ProviderName.OPENAI, body)


def test_a_responses_tool_sent_without_strict_is_strict_in_the_fixture() -> None:
    """The Responses API makes such a tool strict; a fixture's tool without `strict` is sent
    strict: false, so the fixture must say what the API applied."""
    tools = [{**RESPONSES_TURNS["tools"][0]}, {**RESPONSES_TURNS["tools"][0], "strict": False}]
    _, request = fixture_request(ProviderName.OPENAI_RESPONSES, {**RESPONSES_TURNS, "tools": tools})
    assert [tool["strict"] for tool in request["tools"]] == [True, False]
