"""What each wire module builds from a fixture's request, and what it refuses before sending."""

from __future__ import annotations

from typing import Any

import pytest

from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import UnsupportedRequest, prompt_of
from replaygate.providers.wire import WIRES

ALL = list(ProviderName)
USER = {"role": "user", "content": "weather in Bern?"}
TOOLS = [
    {"name": "zeta", "parameters": {"type": "object", "properties": {}}},
    {"type": "function", "function": {"name": "alpha", "parameters": {"type": "object"}}},
    {"name": "mid", "input_schema": {"type": "object"}},
]


def build(provider: ProviderName, **request: Any) -> dict[str, Any]:
    request = {"messages": [USER], "max_tokens": 64, **request}
    return WIRES[provider].build(prompt_of(request, "model-x"))


def tool_names(provider: ProviderName, body: dict[str, Any]) -> list[str]:
    tools = body["tools"]
    if provider in (ProviderName.OPENAI, ProviderName.OPENAI_COMPATIBLE):
        return [tool["function"]["name"] for tool in tools]
    return [tool["name"] for tool in tools]


def refusal(provider: ProviderName, **request: Any) -> str:
    with pytest.raises(UnsupportedRequest) as caught:
        build(provider, **request)
    return str(caught.value)


@pytest.mark.parametrize("provider", ALL)
def test_tools_go_out_in_the_fixtures_order(provider: ProviderName) -> None:
    assert tool_names(provider, build(provider, tools=TOOLS)) == ["zeta", "alpha", "mid"]


def test_responses_tools_are_not_strict_unless_the_fixture_says_so() -> None:
    tools = [{"name": "loose"}, {"name": "tight", "strict": True, "parameters": {"type": "object"}}]
    body = build(ProviderName.OPENAI_RESPONSES, tools=tools)
    assert body["tools"] == [
        {
            "type": "function",
            "name": "loose",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        },
        {"type": "function", "name": "tight", "parameters": {"type": "object"}, "strict": True},
    ]


@pytest.mark.parametrize("stop", ["END", ["END", "STOP"]])
def test_anthropic_stop_sequences_are_a_list(stop: Any) -> None:
    body = build(ProviderName.ANTHROPIC, stop=stop)
    assert body["stop_sequences"] == ([stop] if isinstance(stop, str) else stop)


def test_anthropic_sends_no_empty_text_beside_tool_calls() -> None:
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Bern"}}
    messages = [
        USER,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    body = build(ProviderName.ANTHROPIC, messages=messages)
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Bern"}}
    ]


def test_anthropic_metadata_other_than_user_id_is_refused() -> None:
    assert build(ProviderName.ANTHROPIC, metadata={"user_id": "u-1"})["metadata"] == {
        "user_id": "u-1"
    }
    message = refusal(ProviderName.ANTHROPIC, metadata={"user_id": "u-1", "run": "7"})
    assert message == "request.metadata.run: anthropic's metadata holds only user_id"


def test_anthropic_tool_choice_none_carries_no_parallel_setting() -> None:
    body = build(ProviderName.ANTHROPIC, tools=TOOLS, tool_choice="none", parallel_tool_calls=False)
    assert body["tool_choice"] == {"type": "none"}
    body = build(ProviderName.ANTHROPIC, tools=TOOLS, tool_choice="auto", parallel_tool_calls=False)
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


@pytest.mark.parametrize(
    "provider",
    [ProviderName.OPENAI, ProviderName.OPENAI_RESPONSES, ProviderName.OPENAI_COMPATIBLE],
)
def test_an_anthropic_cache_control_in_a_tool_is_refused_for_openai(
    provider: ProviderName,
) -> None:
    tools = [TOOLS[0], {"name": "cached", "cache_control": {"type": "ephemeral"}}]
    assert refusal(provider, tools=tools) == (
        f"request.tools[1].cache_control: the {provider} provider cannot express it"
    )


def test_anthropic_keeps_a_tools_cache_control() -> None:
    tools = [{"name": "cached", "cache_control": {"type": "ephemeral"}}]
    body = build(ProviderName.ANTHROPIC, tools=tools)
    assert body["tools"][0]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize("provider", ALL)
def test_a_history_call_without_an_id_is_refused(provider: ProviderName) -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        USER,
        {"role": "assistant", "content": None, "tool_calls": [{"name": "f", "arguments": {}}]},
    ]
    assert refusal(provider, messages=messages) == (
        "request.messages[2].tool_calls[0]: a tool call needs an id (its result names it)"
    )


@pytest.mark.parametrize("provider", ALL)
def test_a_tool_message_without_a_call_id_is_refused(provider: ProviderName) -> None:
    call = {"id": "call_1", "name": "f", "arguments": {}}
    messages = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "content": "done"},
    ]
    assert refusal(provider, messages=messages) == (
        "request.messages[2]: a tool message needs the tool_call_id of the call it answers"
    )


@pytest.mark.parametrize("provider", ALL)
def test_stream_false_is_accepted_and_not_sent(provider: ProviderName) -> None:
    assert "stream" not in build(provider, stream=False)
