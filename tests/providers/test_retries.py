"""Provider errors as the contract sees them: quota apart from rate limits, retries only of
what `retry_on` names, waits as the server and `backoff_ms` ask, compatible servers' messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fake_providers import KEY, FakeProvider, Reply, error_body
from replaygate.providers.client import Answer, Provider
from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import prompt_of
from replaygate.providers.redact import Redactor
from replaygate.providers.transport import Policy, RetryOn

Start = Callable[..., FakeProvider]
REQUEST = {"messages": [{"role": "user", "content": "weather?"}], "max_tokens": 16}
EVERYTHING = frozenset(RetryOn)
QUOTA_OPENAI = {
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "param": None,
        "code": "insufficient_quota",
    }
}
BILLING_ANTHROPIC = {
    "type": "error",
    "error": {"type": "billing_error", "message": "Your credit balance is too low."},
}


def call(server: FakeProvider, **changes: Any) -> tuple[Answer, list[float]]:
    values: dict[str, Any] = {
        "connect_s": 5.0,
        "read_s": 5.0,
        "retries": 3,
        "retry_on": EVERYTHING,
        "backoff_s": 0.1,
        "respect_retry_after": True,
        "max_sleep_s": 30.0,
    }
    sleeps: list[float] = []
    name = ProviderName(server.provider)
    provider = Provider(name, server.base_url, KEY, Redactor.build({}, [KEY]), sleep=sleeps.append)
    answer = provider.call(prompt_of(REQUEST, "model-x"), Policy(**{**values, **changes}))
    provider.close()
    return answer, sleeps


@pytest.mark.parametrize(
    ("name", "status", "body"),
    [
        ("openai", 429, QUOTA_OPENAI),
        ("anthropic", 400, BILLING_ANTHROPIC),
        ("anthropic", 402, BILLING_ANTHROPIC),
    ],
)
def test_out_of_quota_is_its_own_class_and_never_retried(
    providers: Start, name: str, status: int, body: Any
) -> None:
    server = providers(name)
    server.script.append(Reply(status, body, {"Retry-After": "1"}))
    answer, sleeps = call(server)
    assert answer.error == "quota_exceeded" and len(server.seen) == 1 and sleeps == []
    assert answer.response["error"]["message"].startswith(f"HTTP {status}: ")


def test_the_first_retry_waits_the_backoff_doubled_after(providers: Start) -> None:
    server = providers("anthropic")
    server.script.extend(
        [Reply(status, error_body("anthropic", status, "x")) for status in (500, 529, 429)]
    )
    answer, sleeps = call(server, backoff_s=0.1)
    assert answer.error is None and len(server.seen) == 4
    assert sleeps == [0.1, 0.2, 0.4]


def test_the_backoff_is_capped_at_max_sleep(providers: Start) -> None:
    server = providers("openai")
    server.script.extend([Reply(503, error_body("openai", 503, "busy"))] * 3)
    _, sleeps = call(server, backoff_s=1.0, max_sleep_s=1.5)
    assert sleeps == [1.0, 1.5, 1.5]


@pytest.mark.parametrize("status", [429, 413])
def test_only_what_retry_on_names_is_retried(providers: Start, status: int) -> None:
    server = providers("openai")
    server.script.append(Reply(status, error_body("openai", status, "wait"), {"Retry-After": "1"}))
    answer, sleeps = call(server, retry_on=frozenset({RetryOn.SERVER_ERROR}))
    assert answer.error is not None and len(server.seen) == 1 and sleeps == []


def test_retry_after_ms_is_read_before_retry_after(providers: Start) -> None:
    server = providers("openai")
    headers = {"retry-after-ms": "250", "Retry-After": "3"}
    server.script.append(Reply(429, error_body("openai", 429, "slow down"), headers))
    answer, sleeps = call(server)
    assert answer.error is None and sleeps == [0.25]


def test_retry_after_is_waited_out_instead_of_the_backoff(providers: Start) -> None:
    server = providers("anthropic")
    server.script.append(
        Reply(529, error_body("anthropic", 529, "overloaded"), {"Retry-After": "2"})
    )
    _, sleeps = call(server)
    assert sleeps == [2.0]


def test_x_should_retry_false_is_obeyed(providers: Start) -> None:
    server = providers("anthropic")
    server.script.append(
        Reply(503, error_body("anthropic", 503, "no"), {"x-should-retry": "false"})
    )
    answer, sleeps = call(server)
    assert answer.error == "provider_error" and len(server.seen) == 1 and sleeps == []


def test_x_should_retry_true_widens_nothing(providers: Start) -> None:
    server = providers("anthropic")
    server.script.append(
        Reply(409, error_body("anthropic", 409, "busy"), {"x-should-retry": "true"})
    )
    answer, _ = call(server)
    assert answer.error == "invalid_request" and len(server.seen) == 1


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ({"error": "model 'llama9' not found"}, "model 'llama9' not found"),  # Ollama
        ({"object": "error", "message": "bad token", "type": "BadRequestError"}, "bad token"),
        ({"detail": "Not authenticated"}, "Not authenticated"),  # FastAPI
        (
            {"detail": [{"loc": ["body", "model"], "msg": "Field required", "type": "missing"}]},
            "Field required",
        ),
        ({"unexpected": 1}, '{"unexpected": 1}'),
    ],
)
def test_compatible_servers_error_messages_are_shown(
    providers: Start, body: Any, shown: str
) -> None:
    server = providers("openai-compatible")
    server.script.append(Reply(404, body))
    answer, _ = call(server)
    assert answer.response["error"]["message"] == f"HTTP 404: {shown}"
