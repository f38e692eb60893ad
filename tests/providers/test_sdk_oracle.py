"""The providers' official SDKs as the oracle: every body the wire modules build is a valid
request of the current SDK's types (unknown keys refused); the SDK, asked the same question,
sends the same body and headers to a capture server; and answers built with the SDK's own
response models are parsed as ours are.

The SDKs are test extras, pinned exactly (pyproject.toml): a release that changes a request
type turns these tests red, and Dependabot proposes the release.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types import Message
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat import ChatCompletion
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses import Response
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from fake_providers import BODIES, KEY, FakeProvider
from replaygate.providers.client import Provider
from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import prompt_of
from replaygate.providers.redact import Redactor
from replaygate.providers.transport import Policy
from replaygate.providers.wire import WIRES

Start = Callable[..., FakeProvider]
P = ProviderName
OPENAI_STYLE = (P.OPENAI, P.OPENAI_COMPATIBLE)


def _adapter(params: Any) -> TypeAdapter[Any]:
    # A TypedDict carries its own config; a list of them takes ours, and the nested TypedDicts
    # inherit extra="forbid" (the SDK opts its JSON Schema types back into extra keys).
    return TypeAdapter(list[params], config=ConfigDict(extra="forbid"))


PARAMS = {
    P.OPENAI: _adapter(CompletionCreateParamsNonStreaming),
    P.OPENAI_COMPATIBLE: _adapter(CompletionCreateParamsNonStreaming),
    P.OPENAI_RESPONSES: _adapter(ResponseCreateParamsNonStreaming),
    P.ANTHROPIC: _adapter(MessageCreateParamsNonStreaming),
}


def _forced(value: Any, path: str = "$") -> Any:
    """The validated value with every lazy iterable consumed (pydantic checks ``Iterable``
    members only as they are read). A response model that matched a request union (the
    SDK's unions allow them) must hold no key its model lacks."""
    if isinstance(value, BaseModel):
        if value.model_extra:
            raise ValueError(f"{path}: unknown {sorted(value.model_extra)}")
        return {
            key: _forced(getattr(value, key), f"{path}.{key}") for key in value.model_fields_set
        }
    if isinstance(value, dict):
        return {key: _forced(item, f"{path}.{key}") for key, item in value.items()}
    if isinstance(value, list | tuple | collections.abc.Iterator):
        return [_forced(item, f"{path}[{i}]") for i, item in enumerate(value)]
    return value


def sdk_check(provider: ProviderName, body: dict[str, Any]) -> str | None:
    """None when ``body`` is a valid request of the SDK's types, else why not."""
    try:
        _forced(PARAMS[provider].validate_python([body]))
    except (ValidationError, ValueError) as exc:
        return str(exc)
    return None


SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
CALL = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Bern"}}
WRAPPED = {
    "id": "call_2",
    "type": "function",
    "function": {"name": "get_time", "arguments": '{"zone": "CET"}'},
}
HISTORY = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "weather and time in Bern?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL, WRAPPED]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "9:00"}]},
    {"role": "assistant", "content": "Sunny, 9:00."},
    {"role": "user", "content": [{"type": "text", "text": "and tomorrow?"}]},
]
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}},
    {"name": "get_time", "description": "the time", "input_schema": {"type": "object"}},
    {"name": "no_arguments"},
    {"name": "tight", "strict": True, "parameters": SCHEMA},
]
COMMON: list[dict[str, Any]] = [
    {"messages": [{"role": "user", "content": "hi"}], "temperature": 0, "max_tokens": 64},
    {"messages": HISTORY, "tools": TOOLS, "max_tokens": 256, "top_p": 0.9},
    {"messages": HISTORY[1:2], "tools": TOOLS, "tool_choice": "required", "max_tokens": 9},
    {"messages": HISTORY[1:2], "tools": TOOLS, "tool_choice": "none", "max_tokens": 9},
    {
        "messages": HISTORY[1:2],
        "tools": TOOLS,
        "tool_choice": {"type": "function", "function": {"name": "get_time"}},
        "parallel_tool_calls": False,
        "max_tokens": 9,
    },
    {
        "messages": HISTORY[1:2],
        "tools": TOOLS,
        "tool_choice": {"type": "tool", "name": "get_time"},
        "parallel_tool_calls": True,
        "max_tokens": 9,
        "stream": False,
    },
    {"system": "be brief", "messages": HISTORY[1:2], "max_tokens": 9, "service_tier": "auto"},
]
ONLY: dict[ProviderName, list[dict[str, Any]]] = {
    P.OPENAI: [
        {
            "messages": HISTORY,
            "stop": ["END"],
            "seed": 7,
            "n": 1,
            "user": "u-1",
            "metadata": {"run": "7"},
            "presence_penalty": 0.1,
            "frequency_penalty": 0.1,
            "logit_bias": {"50256": -100},
            "logprobs": True,
            "top_logprobs": 2,
            "response_format": {"type": "json_object"},
            "reasoning_effort": "low",
            "store": False,
            "max_completion_tokens": 99,
        }
    ],
    P.OPENAI_RESPONSES: [
        {
            "messages": HISTORY,
            "user": "u-1",
            "metadata": {"run": "7"},
            "top_logprobs": 2,
            "store": False,
            "max_completion_tokens": 99,
        }
    ],
    P.ANTHROPIC: [
        {
            "messages": HISTORY,
            "max_tokens": 99,
            "stop": "END",
            "metadata": {"user_id": "u-1"},
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [
                {"name": "cached", "input_schema": SCHEMA, "cache_control": {"type": "ephemeral"}}
            ],
        },
        {"messages": HISTORY[1:2], "max_tokens": 9, "stop_sequences": ["A", "B"], "top_k": 5},
    ],
}
ONLY[P.OPENAI_COMPATIBLE] = ONLY[P.OPENAI]
CASES = [(p, r) for p in ProviderName for r in COMMON + ONLY[p]]


@pytest.mark.parametrize(("provider", "request_"), CASES)
def test_every_body_built_is_a_valid_sdk_request(
    provider: ProviderName, request_: dict[str, Any]
) -> None:
    body = WIRES[provider].build(prompt_of(request_, "model-x"))
    assert sdk_check(provider, body) is None


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        (P.ANTHROPIC, {"model": "m", "max_tokens": 1, "messages": [], "temperature": 0}),
        (P.ANTHROPIC, {"model": "m", "max_tokens": 1, "messages": [], "stop_sequences": "END"}),
        (
            P.ANTHROPIC,
            {
                "model": "m",
                "max_tokens": 1,
                "messages": [{"role": "user", "content": [{"type": "text", "text": "", "x": 1}]}],
            },
        ),
        (
            P.OPENAI,
            {
                "model": "m",
                "messages": [],
                "tools": [{"type": "function", "function": {"name": "f", "cache_control": {}}}],
            },
        ),
        (
            P.OPENAI_RESPONSES,
            {"model": "m", "input": [], "tools": [{"type": "function", "name": "f"}]},
        ),
    ],
)
def test_the_oracle_refuses_what_the_api_refuses(provider: ProviderName, body: Any) -> None:
    assert sdk_check(provider, body) is not None


# The same logical question, asked through each SDK as an application would.
QUESTION = {
    "messages": [{"role": "system", "content": "be brief"}, HISTORY[1]],
    "tools": [TOOLS[0], TOOLS[2]],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "max_tokens": 64,
}


def _through_openai_chat(server: FakeProvider) -> None:
    client = openai.OpenAI(api_key=KEY, base_url=server.url, max_retries=0)
    client.chat.completions.create(
        model="model-x",
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": HISTORY[1]["content"]},
        ],
        tools=[
            {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}},
            {"type": "function", "function": {"name": "no_arguments"}},
        ],
        tool_choice="auto",
        parallel_tool_calls=False,
        max_completion_tokens=64,
    )


def _through_openai_responses(server: FakeProvider) -> None:
    client = openai.OpenAI(api_key=KEY, base_url=server.url, max_retries=0)
    client.responses.create(
        model="model-x",
        instructions="be brief",
        input=[{"role": "user", "content": HISTORY[1]["content"]}],
        tools=[
            {"type": "function", "name": "get_weather", "parameters": SCHEMA, "strict": False},
            {
                "type": "function",
                "name": "no_arguments",
                "parameters": {"type": "object", "properties": {}},
                "strict": False,
            },
        ],
        tool_choice="auto",
        parallel_tool_calls=False,
        max_output_tokens=64,
    )


def _through_anthropic(server: FakeProvider) -> None:
    client = anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
    client.messages.create(
        model="model-x",
        system="be brief",
        messages=[{"role": "user", "content": HISTORY[1]["content"]}],
        tools=[
            {"name": "get_weather", "input_schema": SCHEMA},
            {"name": "no_arguments", "input_schema": {"type": "object"}},
        ],
        tool_choice={"type": "auto", "disable_parallel_tool_use": True},
        max_tokens=64,
    )


THROUGH = {
    P.OPENAI: _through_openai_chat,
    P.OPENAI_RESPONSES: _through_openai_responses,
    P.ANTHROPIC: _through_anthropic,
}
# Headers that only say who sent it (the SDK's name, version, platform, retry count).
_CLIENT_HEADERS = ("x-stainless-", "user-agent", "accept", "connection", "host", "content-length")


def _wire_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if not k.startswith(_CLIENT_HEADERS)}


@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDKs' HTTP client reads proxies from the environment; 127.0.0.1 is reached directly."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.mark.parametrize("provider", list(THROUGH))
@pytest.mark.usefixtures("no_proxies")
def test_the_sdk_sends_the_same_body_and_headers(providers: Start, provider: ProviderName) -> None:
    ours, theirs = providers(str(provider)), providers(str(provider))
    policy = Policy(5.0, 5.0, 0, frozenset(), 0.0, True, 5.0)
    client = Provider(provider, ours.base_url, KEY, Redactor.build({}, [KEY]))
    assert client.call(prompt_of(QUESTION, "model-x"), policy).error is None
    THROUGH[provider](theirs)
    assert ours.seen[0].path == theirs.seen[0].path
    assert ours.seen[0].body == theirs.seen[0].body
    assert _wire_headers(ours.seen[0].headers) == _wire_headers(theirs.seen[0].headers)


RESPONSE_MODELS: dict[ProviderName, type[BaseModel]] = {
    P.OPENAI: ChatCompletion,
    P.OPENAI_RESPONSES: Response,
    P.ANTHROPIC: Message,
}


@pytest.mark.parametrize("provider", list(RESPONSE_MODELS))
@pytest.mark.parametrize("content", [None, "Let me look."])
def test_answers_built_with_the_sdks_models_parse_as_ours(
    provider: ProviderName, content: str | None
) -> None:
    calls = [("get_weather", {"city": "Bern"}), ("get_time", {})]
    body = BODIES[str(provider)](calls, content)
    model = RESPONSE_MODELS[provider].model_validate(body)
    assert _forced(model) is not None  # the fake's answers hold no key the SDK lacks
    dumped = model.model_dump(mode="json", exclude_unset=True)
    parsed = WIRES[provider].parse(dumped)
    assert parsed == WIRES[provider].parse(body)
    assert [(c["name"], c["arguments"]) for c in parsed["tool_calls"]] == calls
    assert parsed["content"] == content
    assert parsed["finish_reason"] == "tool_calls"
