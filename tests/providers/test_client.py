"""Provider calls against fake servers speaking each real wire format."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fake_providers import KEY, FakeProvider, Reply, error_body, policy
from replaygate.providers.client import MESSAGE_LIMIT, Provider
from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import UnsupportedRequest, prompt_of
from replaygate.providers.redact import Redactor
from replaygate.providers.transport import RetryOn

Start = Callable[..., FakeProvider]
ALL = [str(name) for name in ProviderName]
TOOLS = [
    {"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
]
REQUEST = {
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather and time in Bern?"},
    ],
    "tools": TOOLS,
    "tool_choice": "required",
    "parallel_tool_calls": True,
    "temperature": 0,
    "max_tokens": 256,
}


def client(server: FakeProvider, key: str = KEY) -> Provider:
    return Provider(ProviderName(server.provider), server.base_url, key, Redactor.build({}, [key]))


def call(server: FakeProvider, request: Any = None, **changes: Any) -> Any:
    prompt = prompt_of(request or REQUEST, "model-x")
    return client(server).call(prompt, policy(**changes))


@pytest.mark.parametrize("name", ALL)
def test_parallel_tool_calls_come_back_flat(providers: Start, name: str) -> None:
    server = providers(name)
    server.calls = [("get_weather", {"city": "Bern"}), ("get_time", {"zone": "Europe/Zurich"})]
    answer = call(server)
    assert answer.error is None
    assert [(c["name"], c["arguments"]) for c in answer.response["tool_calls"]] == server.calls
    assert all(c["id"] for c in answer.response["tool_calls"])
    assert answer.response["finish_reason"] == "tool_calls"
    assert answer.response["usage"]["input_tokens"] > 0
    assert answer.status == 200


@pytest.mark.parametrize("name", ALL)
def test_a_text_answer_has_content_and_no_calls(providers: Start, name: str) -> None:
    server = providers(name)
    server.calls, server.content = [], "It is sunny."
    answer = call(server)
    assert (answer.response["content"], answer.response["tool_calls"]) == ("It is sunny.", [])
    assert answer.response["finish_reason"] == "stop"


def test_chat_completions_request_shape(providers: Start) -> None:
    server = providers("openai")
    call(server)
    body = server.seen[0].body
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather", "get_time"]
    assert all(t["type"] == "function" for t in body["tools"])
    assert body["tool_choice"] == "required"
    assert body["max_completion_tokens"] == 256 and body["parallel_tool_calls"] is True
    assert body["model"] == "model-x"


def test_compatible_servers_get_max_tokens(providers: Start) -> None:
    server = providers("openai-compatible")
    call(server)
    assert server.seen[0].body["max_tokens"] == 256


def test_responses_request_shape(providers: Start) -> None:
    server = providers("openai-responses")
    call(server)
    body = server.seen[0].body
    assert body["instructions"] == "be brief"
    assert body["input"] == [{"role": "user", "content": "weather and time in Bern?"}]
    assert body["tools"][1] == {
        "type": "function",
        "name": "get_time",
        "parameters": {"type": "object"},
        "strict": False,
    }
    assert body["max_output_tokens"] == 256


def test_anthropic_request_shape(providers: Start) -> None:
    server = providers("anthropic")
    request = {
        **REQUEST,
        "parallel_tool_calls": False,
        "tool_choice": {"type": "function", "function": {"name": "get_time"}},
    }
    call(server, request)
    body = server.seen[0].body
    assert body["system"] == "be brief"
    assert body["messages"] == [{"role": "user", "content": "weather and time in Bern?"}]
    assert body["tools"][0] == {
        "name": "get_weather",
        "description": "Weather",
        "input_schema": {"type": "object"},
    }
    assert body["tool_choice"] == {
        "type": "tool",
        "name": "get_time",
        "disable_parallel_tool_use": True,
    }


def test_a_conversation_with_tool_results_converts_for_anthropic(providers: Start) -> None:
    server = providers("anthropic")
    messages = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Bern"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    call(server, {"messages": messages, "tools": TOOLS, "max_tokens": 10})
    sent = server.seen[0].body["messages"]
    assert sent[1]["content"] == [
        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Bern"}}
    ]
    assert sent[2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "sunny"}],
    }


@pytest.mark.parametrize(
    ("name", "request_", "field"),
    [
        ("openai", {**REQUEST, "top_k": 5}, "request.top_k"),
        ("openai-responses", {**REQUEST, "seed": 1}, "request.seed"),
        (
            "anthropic",
            {k: v for k, v in REQUEST.items() if k != "max_tokens"},
            "request.max_tokens",
        ),
        (
            "anthropic",
            {**REQUEST, "messages": [{"role": "developer", "content": "x"}]},
            "request.messages[0]",
        ),
    ],
)
def test_what_a_provider_cannot_express_is_an_error_before_sending(
    providers: Start, name: str, request_: Any, field: str
) -> None:
    server = providers(name)
    with pytest.raises(UnsupportedRequest, match="^" + re.escape(field)):
        call(server, request_)
    assert server.seen == []


@pytest.mark.parametrize("name", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request"),
        (401, "auth_error"),
        (403, "auth_error"),
        (429, "rate_limit"),
        (500, "provider_error"),
        (503, "provider_error"),
        (529, "provider_error"),
    ],
)
def test_error_statuses_map_to_classifications(
    providers: Start, name: str, status: int, kind: str
) -> None:
    server = providers(name)
    server.script.append(Reply(status, error_body(name, status, "the provider's own words")))
    answer = call(server)
    assert answer.response["success"] is False
    assert answer.response["error"] == {
        "code": kind,
        "message": f"HTTP {status}: the provider's own words",
    }


def test_an_auth_error_that_echoes_the_key_is_redacted(providers: Start) -> None:
    server = providers("openai")
    message = f"Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com."
    server.script.append(Reply(401, error_body("openai", 401, message)))
    answer = call(server)
    assert KEY not in json.dumps(answer.response)
    assert answer.response["error"]["message"].startswith(
        "HTTP 401: Incorrect API key provided: [redacted]."
    )


def test_a_long_message_is_cut(providers: Start) -> None:
    server = providers("anthropic")
    server.script.append(Reply(400, error_body("anthropic", 400, "x" * 5000)))
    assert len(call(server).response["error"]["message"]) == MESSAGE_LIMIT


def test_429_is_retried_after_retry_after(providers: Start) -> None:
    server = providers("anthropic")
    server.script.append(
        Reply(429, error_body("anthropic", 429, "slow down"), {"Retry-After": "1"})
    )
    answer = call(server, retries=2, retry_on=frozenset({RetryOn.RATE_LIMIT}))
    assert answer.error is None and len(server.seen) == 2


def test_a_retry_after_of_non_ascii_digits_counts_as_absent(providers: Start) -> None:
    server = providers("openai")
    server.script.append(  # isdigit() holds for '²'; float() refuses it
        Reply(429, error_body("openai", 429, "slow down"), {"Retry-After": "\u00b2"})
    )
    answer = call(server, retries=2, retry_on=frozenset({RetryOn.RATE_LIMIT}))
    assert answer.error is None and len(server.seen) == 2


def test_a_retry_after_of_more_digits_than_int_converts_counts_as_absent(
    providers: Start,
) -> None:
    server = providers("openai")
    server.script.append(
        Reply(429, error_body("openai", 429, "slow down"), {"Retry-After": "9" * 5000})
    )
    answer = call(server, retries=2, retry_on=frozenset({RetryOn.RATE_LIMIT}))
    assert answer.error is None and len(server.seen) == 2


def test_a_retry_after_past_max_sleep_is_not_waited_for(providers: Start) -> None:
    server = providers("openai")
    server.script.append(
        Reply(429, error_body("openai", 429, "Rate limit reached"), {"Retry-After": "120"})
    )
    answer = call(server, retries=3, retry_on=frozenset({RetryOn.RATE_LIMIT}), max_sleep_s=2.0)
    assert answer.error == "rate_limit" and len(server.seen) == 1
    assert (
        "Retry-After 120 s is longer than rate_limits.on_429.max_sleep_seconds 2"
        in (answer.response["error"]["message"])
    )


def test_5xx_is_retried_only_when_retry_on_says_so(providers: Start) -> None:
    server = providers("openai")
    server.script.extend([Reply(503, error_body("openai", 503, "busy"))] * 2)
    assert call(server, retries=2).error == "provider_error"
    assert call(server, retries=2, retry_on=frozenset({RetryOn.SERVER_ERROR})).error is None
    assert len(server.seen) == 3


def test_a_slow_answer_is_a_timeout(providers: Start) -> None:
    server = providers("openai-responses")
    server.script.append(Reply(200, {}, delay_s=1.5))
    answer = call(server, read_s=0.3)
    assert answer.error == "timeout"
    assert "total 0.3 s" in answer.response["error"]["message"]


def test_a_slow_answer_is_retried_on_timeout(providers: Start) -> None:
    server = providers("openai")
    server.script.append(Reply(200, {}, delay_s=1.5))
    answer = call(server, read_s=0.5, retries=1, retry_on=frozenset({RetryOn.TIMEOUT}))
    assert answer.error is None and len(server.seen) == 2


def test_a_redirect_is_never_followed(providers: Start) -> None:
    server, elsewhere = providers("openai"), providers("openai")
    server.script.append(Reply(307, {}, {"Location": elsewhere.url + "/chat/completions"}))
    answer = call(server)
    assert answer.error == "provider_error"
    assert f"redirected to {elsewhere.url}/chat/completions" in answer.response["error"]["message"]
    assert elsewhere.seen == []


@pytest.mark.parametrize("name", ALL)
def test_a_malformed_body_is_a_provider_error(providers: Start, name: str) -> None:
    server = providers(name)
    server.script.extend([Reply(200, b"<html>oops</html>"), Reply(200, {"unexpected": True})])
    first, second = call(server), call(server)
    assert first.error == second.error == "provider_error"
    assert "not JSON" in first.response["error"]["message"]
    assert f"does not have the {name} shape" in second.response["error"]["message"]


def test_invalid_arguments_are_kept_as_sent(providers: Start) -> None:
    server = providers("openai")
    body = server._default(REQUEST).body
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"city": '
    server.script.append(Reply(200, body))
    assert call(server).response["tool_calls"][0]["arguments"] == '{"city": '


PEER = Path(__file__).resolve().parents[1] / "data" / "providers"


@pytest.mark.parametrize(
    ("name", "kind", "start"),
    [
        (
            "error-429-rate-limit.json",
            "rate_limit",
            "HTTP 429: This request would exceed your organization's rate limit",
        ),
        (
            "error-400-invalid-request.json",
            "invalid_request",
            "HTTP 400: messages.0.content.1: unexpected `tool_use_id`",
        ),
    ],
)
def test_anthropic_error_bodies_as_the_sdk_recorded_them(
    providers: Start, name: str, kind: str, start: str
) -> None:
    recorded = json.loads((PEER / name).read_text())
    server = providers("anthropic")
    server.script.append(
        Reply(recorded["status_code"], recorded["body"], {"x-should-retry": "false"})
    )
    answer = call(server)
    assert answer.error == kind
    assert answer.response["error"]["message"].startswith(start)


def test_a_retry_after_date_past_max_sleep_is_not_waited_for(providers: Start) -> None:
    server = providers("anthropic")
    server.script.append(
        Reply(
            429,
            error_body("anthropic", 429, "busy"),
            {"Retry-After": "Wed, 21 Oct 2099 07:28:00 GMT"},
        )
    )
    answer = call(server, retries=2, retry_on=frozenset({RetryOn.RATE_LIMIT}), max_sleep_s=2.0)
    assert answer.error == "rate_limit" and len(server.seen) == 1
    assert (
        "is longer than rate_limits.on_429.max_sleep_seconds 2"
        in answer.response["error"]["message"]
    )


def test_user_and_metadata_are_sent_though_identity_leaves_them_out(providers: Start) -> None:
    server = providers("openai")
    call(
        server,
        {**REQUEST, "user": "u-1", "metadata": {"run": "7"}, "stream": False, "request_id": "r"},
    )
    body = server.seen[0].body
    assert (body["user"], body["metadata"]) == ("u-1", {"run": "7"})
    assert "stream" not in body and "request_id" not in body


@pytest.mark.parametrize("name", ["openai", "openai-responses", "anthropic"])
def test_a_refusal_is_normalised(providers: Start, name: str) -> None:
    server = providers(name)
    text = "I can't help with that."
    bodies = {
        "openai": {**server._default(REQUEST).body},
        "openai-responses": {
            "object": "response",
            "status": "completed",
            "model": "gpt-5.4",
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "refusal", "refusal": text}],
                }
            ],
        },
        "anthropic": {
            "type": "message",
            "model": "claude",
            "stop_reason": "refusal",
            "content": [{"type": "text", "text": text}],
            "usage": {},
        },
    }
    if name == "openai":
        message = bodies["openai"]["choices"][0]["message"]
        message.update(content=None, tool_calls=None, refusal=text)
        bodies["openai"]["choices"][0]["finish_reason"] = "stop"
    server.script.append(Reply(200, bodies[name]))
    response = call(server).response
    assert (response["refusal"], response["finish_reason"], response["tool_calls"]) == (
        text,
        "refusal",
        [],
    )


FLAT_CALL = {"id": "c1", "name": "get_weather", "arguments": {"city": "Bern"}}


@pytest.mark.parametrize("name", ["openai", "openai-compatible"])
def test_flat_assistant_calls_go_out_in_the_chat_wire_shape(providers: Start, name: str) -> None:
    server = providers(name)
    messages = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [FLAT_CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    call(server, {"messages": messages, "tools": TOOLS})
    assert server.seen[0].body["messages"][1]["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Bern"}'},
        }
    ]


def test_calls_beside_anthropic_content_blocks_become_tool_use_blocks(providers: Start) -> None:
    server = providers("anthropic")
    messages = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Let me look."}],
            "tool_calls": [FLAT_CALL],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    call(server, {"messages": messages, "tools": TOOLS, "max_tokens": 10})
    assert server.seen[0].body["messages"][1]["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Bern"}},
    ]


def test_an_openai_image_part_is_refused_for_anthropic(providers: Start) -> None:
    server = providers("anthropic")
    image = {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}}
    messages = [{"role": "user", "content": [{"type": "text", "text": "what?"}, image]}]
    with pytest.raises(UnsupportedRequest) as raised:
        call(server, {"messages": messages, "max_tokens": 10})
    assert str(raised.value) == (
        "request.messages[0].content[1]: an image_url part cannot be sent to anthropic; "
        "write an Anthropic image block instead"
    )
    assert server.seen == []


@pytest.mark.parametrize("written", ['{"city": NaN}', '{"n": Infinity}', '{"n": -1e999}'])
def test_arguments_that_are_not_json_are_kept_as_sent(providers: Start, written: str) -> None:
    # As a recording's are: NaN and Infinity would pass a maximum or a type check unchecked.
    server = providers("openai")
    body = server._default(REQUEST).body
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = written
    server.script.append(Reply(200, body))
    assert call(server).response["tool_calls"][0]["arguments"] == written


@pytest.mark.parametrize("written", [b"NaN", b"-Infinity", b"1e400"])
def test_a_body_with_a_number_json_does_not_have_is_not_json(
    providers: Start, written: bytes
) -> None:
    server = providers("anthropic")
    text = json.dumps(server._default(REQUEST).body)
    body = re.sub(r'"input": \{[^}]*\}', '"input": {"n": ' + written.decode() + "}", text, count=1)
    assert written.decode() in body
    server.script.append(Reply(200, body.encode()))
    answer = call(server)
    assert answer.error == "provider_error"
    assert "not JSON" in answer.response["error"]["message"]
