"""The Python hook: the official SDKs with `replaygate.capture`'s http_client, no proxy."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest
from capture_pack import empty_pack
from sdk_calls import WEATHER, chat, messages
from streaming_upstream import StreamingUpstream

import replaygate.capture as rc
from fake_providers import KEY, Reply, error_body
from replaygate.capture.core import Capture, Exchange, Outcome

TWO_CALLS = [("get_weather", {"city": "Bern"}), ("get_time", {"zone": "Europe/Zurich"})]


@pytest.fixture
def pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return empty_pack(tmp_path)


@pytest.fixture
def upstream(request: pytest.FixtureRequest) -> Iterator[StreamingUpstream]:
    server = StreamingUpstream(getattr(request, "param", "openai"), KEY).start()
    server.calls = TWO_CALLS
    yield server
    server.stop()
    assert server.violations == []


def _recordings(pack: Path) -> list[dict[str, Any]]:
    paths = sorted((pack / "recordings" / "observed").glob("*.recording.json"))
    return [json.loads(path.read_text()) for path in paths]


def _calls(recording: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(c["name"], c["arguments"]) for c in recording["response"]["tool_calls"]]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_records_through_its_own_client(
    pack: Path, upstream: StreamingUpstream, stream: bool
) -> None:
    client = rc.http_client(pack=pack, provider="openai")
    assert isinstance(client, httpx2.Client)  # openai 3.x is built on httpx2
    app = openai.OpenAI(api_key=KEY, base_url=f"{upstream.origin}/v1", http_client=client)
    assert chat(app, stream=stream) == TWO_CALLS
    [recording] = _recordings(pack)
    assert _calls(recording) == TWO_CALLS
    assert upstream.seen[0].body.get("stream", False) is stream  # sent as the app made it


@pytest.mark.parametrize("upstream", ["anthropic"], indirect=True)
@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_takes_the_client_and_records(
    pack: Path, upstream: StreamingUpstream, stream: bool
) -> None:
    client = rc.http_client(pack=pack, provider="anthropic")
    app = anthropic.Anthropic(api_key=KEY, base_url=upstream.origin, http_client=client)
    assert messages(app, stream=stream) == TWO_CALLS
    [recording] = _recordings(pack)
    assert _calls(recording) == TWO_CALLS
    for path in pack.rglob("*.json"):
        assert KEY not in path.read_text()


def _writers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The threads each exchange is taken (and its files written) on, as it happens."""
    writers: list[int] = []
    take = Capture.take

    def noted(capture: Capture, exchange: Exchange) -> Outcome:
        writers.append(threading.get_ident())
        return take(capture, exchange)

    monkeypatch.setattr(Capture, "take", noted)
    return writers


def test_the_async_client_records_a_stream_off_the_event_loop(
    pack: Path, upstream: StreamingUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the recording's files are written on a worker thread, never the loop's: the app's
    # other tasks go on meanwhile
    writers = _writers(monkeypatch)

    async def app() -> list[str]:  # the loop runs on this thread
        client = rc.async_http_client(pack=pack, provider="openai")
        assert isinstance(client, httpx2.AsyncClient)
        sdk = openai.AsyncOpenAI(api_key=KEY, base_url=f"{upstream.origin}/v1", http_client=client)
        tool = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
        chunks = await sdk.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Weather?"}],
            tools=[tool],
            stream=True,
        )
        names = [
            call.function.name
            async for chunk in chunks
            for choice in chunk.choices
            for call in choice.delta.tool_calls or []
            if call.function and call.function.name
        ]
        await sdk.close()
        return names

    assert asyncio.run(app()) == ["get_weather", "get_time"]
    [recording] = _recordings(pack)
    assert _calls(recording) == TWO_CALLS
    assert len(writers) == 1 and writers[0] != threading.get_ident()


def test_an_async_connection_error_reaches_the_app_and_is_taken_off_the_loop(
    pack: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers = _writers(monkeypatch)
    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]

    async def app() -> None:
        client = rc.async_http_client(pack=pack, provider="openai")
        sdk = openai.AsyncOpenAI(
            api_key=KEY, base_url=f"http://127.0.0.1:{port}/v1", http_client=client, max_retries=0
        )
        with pytest.raises(openai.APIConnectionError):
            await sdk.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Weather?"}]
            )
        await sdk.close()

    asyncio.run(app())
    assert _recordings(pack) == []
    assert len(writers) == 1 and writers[0] != threading.get_ident()


def test_an_sdk_built_on_httpx_gets_an_httpx_client(
    pack: Path, upstream: StreamingUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Older SDK releases require httpx: the client is httpx's, and records the same."""
    requires = importlib.metadata.requires
    monkeypatch.setattr(
        importlib.metadata,
        "requires",
        lambda name: ["httpx<1,>=0.23.0"] if name == "openai" else requires(name),
    )
    client = rc.http_client(pack=pack, provider="openai")
    assert isinstance(client, httpx.Client)
    app = openai.OpenAI(api_key=KEY, base_url=f"{upstream.origin}/v1", http_client=client)
    assert chat(app, stream=True) == TWO_CALLS
    assert _calls(_recordings(pack)[0]) == TWO_CALLS


def test_an_error_reaches_the_app_and_is_not_recorded(
    pack: Path, upstream: StreamingUpstream
) -> None:
    upstream.script.append(Reply(429, error_body("openai", 429, "slow down")))
    client = rc.http_client(pack=pack, provider="openai")
    app = openai.OpenAI(
        api_key=KEY, base_url=f"{upstream.origin}/v1", http_client=client, max_retries=0
    )
    with pytest.raises(openai.RateLimitError, match="slow down"):
        chat(app)
    assert _recordings(pack) == []


def test_a_gzipped_answer_is_recorded_as_the_app_reads_it(
    pack: Path, upstream: StreamingUpstream
) -> None:
    import gzip

    from fake_providers import chat_body

    body = gzip.compress(json.dumps(chat_body(TWO_CALLS)).encode())
    upstream.script.append(Reply(200, body, {"Content-Encoding": "gzip"}))
    app = openai.OpenAI(
        api_key=KEY,
        base_url=f"{upstream.origin}/v1",
        http_client=rc.http_client(pack=pack, provider="openai"),
    )
    assert chat(app) == TWO_CALLS
    assert _calls(_recordings(pack)[0]) == TWO_CALLS


# The example of docs/observe.md: capture while the app's own tests run.
@pytest.fixture
def captured_openai(pack: Path, upstream: StreamingUpstream) -> Iterator[openai.OpenAI]:
    client = rc.http_client(pack=pack, provider="openai")
    with openai.OpenAI(api_key=KEY, base_url=f"{upstream.origin}/v1", http_client=client) as app:
        yield app


def test_a_fixture_captures_while_the_tests_run(captured_openai: openai.OpenAI, pack: Path) -> None:
    chat(captured_openai)
    chat(captured_openai)  # the same request: one fixture
    assert len(list((pack / "golden" / "observed").glob("*.json"))) == 1


@pytest.mark.parametrize(
    ("pack_name", "provider", "message"),
    [
        (
            "packs/p",
            "gemini",
            "provider 'gemini': must be one of openai, openai-responses, anthropic, "
            "openai-compatible",
        ),
        ("packs/none", "openai", "packs/none: no pack.yaml: observe writes into a pack"),
    ],
)
def test_a_wrong_pack_or_provider_is_said_when_the_client_is_made(
    pack: Path, pack_name: str, provider: str, message: str
) -> None:
    from replaygate.core.errors import ReplayGateError

    with pytest.raises(ReplayGateError) as raised:
        rc.http_client(pack=pack_name, provider=provider)
    assert str(raised.value) == message
