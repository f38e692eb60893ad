"""`replaygate observe`'s proxy, driven by the official SDKs against a fake upstream."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import jsonschema
import openai
import pytest
from sdk_calls import ASK, ENV_SECRET, anthropic_client, chat, messages, openai_client

from fake_providers import KEY, Reply, error_body
from replaygate.capture.core import Outcome
from replaygate.loading.boundary import boundary_changes
from replaygate.loading.identity import request_identity
from replaygate.providers.prompt import prompt_of
from replaygate.providers.wire import WIRES

PROVIDERS = ["openai", "openai-responses", "anthropic", "openai-compatible"]
STREAMING = ["openai", "openai-responses", "anthropic"]
SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "recording.schema.json").read_text()
)
TWO_CALLS = [("get_weather", {"city": "Bern"}), ("get_time", {"zone": "Europe/Zurich"})]

Start = Callable[..., Any]


def _written(observed: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one fixture and its recording."""
    observed.settle()
    [fixture_path] = observed.fixtures()
    recording_path = (
        observed.pack
        / "recordings"
        / "observed"
        / fixture_path.name.replace(".json", ".recording.json")
    )
    return json.loads(fixture_path.read_text()), json.loads(recording_path.read_text())


def _no_secret_on_disk(observed: Any) -> None:
    for path in observed.files():
        text = path.read_text()
        assert KEY not in text, path
        assert "env-secret-value" not in text, path


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_answer_is_passed_on_and_captured(observe: Start, provider: str) -> None:
    observed = observe(provider)
    observed.upstream.calls = TWO_CALLS  # parallel tool calls
    assert ASK[provider](observed.url) == TWO_CALLS
    fixture, recording = _written(observed)
    assert observed.fixtures()[0].name.startswith("get_weather-")
    jsonschema.validate(recording, SCHEMA)
    response = recording["response"]
    assert [(c["name"], c["arguments"]) for c in response["tool_calls"]] == TWO_CALLS
    identity = request_identity(fixture["request"], fixture["model_id"])
    assert recording["identity"] == identity.as_json()
    assert boundary_changes(fixture) == {}  # the boundary hashes are the request's
    assert fixture["provider"] == provider
    assert observed.capture.tally.counts[Outcome.CAPTURED] == 1
    assert observed.capture.tally.tools == {"get_weather": 1}
    _no_secret_on_disk(observed)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_fixture_sends_again_what_the_app_sent(observe: Start, provider: str) -> None:
    """`record` can ask the provider again: the fixture builds the app's own request."""
    observed = observe(provider)
    ASK[provider](observed.url)
    fixture, _ = _written(observed)
    sent = observed.upstream.seen[0].body
    prompt = prompt_of(fixture["request"], fixture["model_id"])
    rebuilt = WIRES[observed.capture.provider].build(prompt)
    if isinstance(sent.get("input"), str):  # Responses' short form of one user message
        sent["input"] = [{"role": "user", "content": sent["input"]}]
    assert json.loads(json.dumps(rebuilt)) == {**sent, **_same_tools(sent, rebuilt)}


def _same_tools(sent: dict[str, Any], rebuilt: dict[str, Any]) -> dict[str, Any]:
    """Tools are compared as identity sees them (sorted by name, flat)."""
    return {"tools": rebuilt["tools"]} if "tools" in sent else {}


@pytest.mark.parametrize("provider", STREAMING)
def test_a_stream_is_passed_on_and_recorded_assembled(observe: Start, provider: str) -> None:
    observed = observe(provider)
    observed.upstream.calls = TWO_CALLS
    assert ASK[provider](observed.url, stream=True) == TWO_CALLS
    _, recording = _written(observed)
    jsonschema.validate(recording, SCHEMA)
    calls = [(c["name"], c["arguments"]) for c in recording["response"]["tool_calls"]]
    assert calls == TWO_CALLS
    assert recording["response"]["finish_reason"] == "tool_calls"
    assert recording["response"]["usage"]["output_tokens"] is not None
    assert observed.upstream.seen[0].body["stream"] is True  # the app's request, unchanged
    _no_secret_on_disk(observed)


def test_a_stream_reaches_the_app_event_by_event(observe: Start) -> None:
    """The upstream holds its stream after the first event: the app has that event already."""
    observed = observe("openai")
    observed.upstream.gate = gate = threading.Event()
    stream = openai_client(observed.url).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    first = next(iter(stream))
    assert first.choices[0].delta.role == "assistant"
    assert not observed.fixtures()  # not recorded before the stream is whole
    gate.set()
    list(stream)
    observed.settle()
    assert len(observed.fixtures()) == 1


def test_no_secret_reaches_the_disk(observe: Start) -> None:
    """The app's own key (of no known shape) and an *_TOKEN variable's value, both in the
    question and the answer: every file holds neither."""
    app_key = "app-key-of-no-known-shape-4711"
    observed = observe("openai", key=app_key)
    observed.upstream.calls = [("get_weather", {"city": f"Bern {ENV_SECRET} {app_key}"})]
    client = openai.OpenAI(api_key=app_key, base_url=f"{observed.url}/v1", max_retries=0)
    chat(client, question=f"Weather? key {app_key}, token {ENV_SECRET}")
    observed.settle()
    assert len(observed.fixtures()) == 1
    for path in observed.files():
        text = path.read_text()
        assert app_key not in text and ENV_SECRET not in text, path
        assert "[redacted]" in text


def test_the_same_request_twice_is_one_fixture(observe: Start) -> None:
    observed = observe("openai")
    client = openai_client(observed.url)
    chat(client)
    chat(client)
    chat(client, question="Weather in Basel?")
    observed.settle()
    assert len(observed.fixtures()) == 2
    counts = observed.capture.tally.counts
    assert (counts[Outcome.CAPTURED], counts[Outcome.DEDUPLICATED]) == (2, 1)


@pytest.mark.parametrize(
    ("provider", "status", "error"),
    [
        ("openai", 429, openai.RateLimitError),
        ("openai", 500, openai.InternalServerError),
        ("openai-responses", 400, openai.BadRequestError),
        ("anthropic", 529, anthropic.InternalServerError),
        ("anthropic", 401, anthropic.AuthenticationError),
    ],
)
def test_an_upstream_error_is_passed_on_and_not_recorded(
    observe: Start, provider: str, status: int, error: type[Exception]
) -> None:
    observed = observe(provider)
    body = error_body(provider, status, "slow down")
    observed.upstream.script.append(Reply(status, body, {"x-request-id": "req_1"}))
    with pytest.raises(error) as raised:
        ASK[provider](observed.url)
    assert raised.value.status_code == status  # type: ignore[attr-defined]
    expected = body if provider == "anthropic" else body["error"]  # as each SDK keeps it
    assert raised.value.body == expected  # type: ignore[attr-defined]
    assert raised.value.response.headers["x-request-id"] == "req_1"  # type: ignore[attr-defined]
    observed.settle()
    assert observed.fixtures() == []
    assert observed.capture.tally.counts[Outcome.ERROR] == 1


def test_an_unreachable_upstream_is_an_error_the_app_sees(observe: Start) -> None:
    observed = observe("anthropic")
    observed.upstream.stop()
    with pytest.raises(anthropic.InternalServerError) as raised:
        ASK["anthropic"](observed.url)
    assert raised.value.status_code == 502
    observed.settle()
    assert observed.fixtures() == []
    assert observed.capture.tally.counts[Outcome.ERROR] == 1


def test_other_paths_are_passed_through_unrecorded(observe: Start) -> None:
    observed = observe("openai")
    observed.upstream.script.append(Reply(200, {"object": "list", "data": []}))
    client = openai_client(observed.url)
    page = client.post("/embeddings", body={"model": "m", "input": "x"}, cast_to=object)
    assert page == {"object": "list", "data": []}
    assert observed.upstream.seen[0].path == "/v1/embeddings"
    observed.upstream.violations.clear()  # the fake knows only its provider's path
    observed.settle()
    assert observed.fixtures() == []


def test_eight_requests_are_served_at_once(observe: Start) -> None:
    """The upstream answers none until all eight are in flight: a proxy that served one at
    a time would never get there (the barrier breaks after its timeout)."""
    observed = observe("anthropic")
    observed.upstream.barrier = threading.Barrier(8, timeout=20)
    client = anthropic_client(observed.url)
    questions = [f"Weather in town {n}?" for n in range(8)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda q: messages(client, question=q), questions))
    assert results == [[("get_weather", {"city": "Bern"})]] * 8
    assert observed.upstream.peak == 8
    observed.settle()
    assert len(observed.fixtures()) == 8


def test_a_bad_content_length_is_a_400_not_a_traceback(
    observe: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    observed = observe("openai")
    host, port = observed.server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n"
        )
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 400 ")
    observed.settle()
    assert observed.upstream.seen == []
    assert "Traceback" not in capsys.readouterr().err
