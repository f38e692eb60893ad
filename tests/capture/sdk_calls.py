"""An app's calls, made with the official SDKs: each returns the tool calls the app saw."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import openai

from fake_providers import KEY

WEATHER = {
    "type": "object",
    "required": ["city"],
    "properties": {"city": {"type": "string"}},
}
SYSTEM = "You are a weather bot."
ENV_SECRET = "env-secret-value-0123456789"  # an *_TOKEN variable's value: never on disk
Calls = list[tuple[str, Any]]


def openai_client(base: str, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY, base_url=f"{base}/v1", max_retries=0, **options)


def anthropic_client(base: str, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=base, max_retries=0, **options)


def chat(client: openai.OpenAI, question: str = "Weather in Bern?", stream: bool = False) -> Calls:
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    options: dict[str, Any] = {"model": "gpt-4o-mini", "messages": messages, "tools": [tool]}
    if not stream:
        message = client.chat.completions.create(temperature=0, **options).choices[0].message
        return [
            (c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []
        ]
    calls: dict[int, list[str]] = {}
    chunks = client.chat.completions.create(
        temperature=0, stream=True, stream_options={"include_usage": True}, **options
    )
    for chunk in chunks:
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or []:
                entry = calls.setdefault(delta.index, ["", ""])
                entry[0] += delta.function.name or "" if delta.function else ""
                entry[1] += delta.function.arguments or "" if delta.function else ""
    return [(name, json.loads(args)) for name, args in calls.values()]


def responses(
    client: openai.OpenAI, question: str = "Weather in Bern?", stream: bool = False
) -> Calls:
    tool = {"type": "function", "name": "get_weather", "parameters": WEATHER, "strict": False}
    options: dict[str, Any] = {
        "model": "gpt-4o-mini",
        "instructions": SYSTEM,
        "input": question,
        "tools": [tool],
    }
    if stream:
        final = None
        for event in client.responses.create(stream=True, **options):
            if event.type == "response.completed":
                final = event.response
        assert final is not None
        output = final.output
    else:
        output = client.responses.create(**options).output
    return [(i.name, json.loads(i.arguments)) for i in output if i.type == "function_call"]


def messages(
    client: anthropic.Anthropic, question: str = "Weather in Bern?", stream: bool = False
) -> Calls:
    tool = {"name": "get_weather", "input_schema": WEATHER}
    options: dict[str, Any] = {
        "model": "claude-haiku-4-5",
        "max_tokens": 256,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": question}],
        "tools": [tool],
    }
    if stream:
        with client.messages.stream(**options) as events:
            final = events.get_final_message()
    else:
        final = client.messages.create(**options)
    return [(b.name, b.input) for b in final.content if b.type == "tool_use"]


ASK: dict[str, Callable[..., Calls]] = {
    "openai": lambda base, **kw: chat(openai_client(base), **kw),
    "openai-compatible": lambda base, **kw: chat(openai_client(base), **kw),
    "openai-responses": lambda base, **kw: responses(openai_client(base), **kw),
    "anthropic": lambda base, **kw: messages(anthropic_client(base), **kw),
}
