"""A fake provider on 127.0.0.1 that also streams: FakeProvider's answers as each provider's
server-sent events (shapes from the official SDKs' stream types and their test suites).

``gate``: when set to an Event, the stream stops after its first event until the test sets
it, so a test can see the first event reach the app before the upstream sends the rest.
``barrier``: every request waits there before it is answered (concurrency).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from fake_providers import FakeProvider, Seen


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


def chat_events(body: dict[str, Any]) -> Iterator[bytes]:
    base = {
        "id": body["id"],
        "object": "chat.completion.chunk",
        "created": 1,
        "model": body["model"],
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse({**base, "choices": [choice]})

    message = body["choices"][0]["message"]
    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in _halves(message["content"] or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or []):
        head = {"index": index, "id": call["id"], "type": "function"}
        yield chunk(
            {
                "tool_calls": [
                    {**head, "function": {"name": call["function"]["name"], "arguments": ""}}
                ]
            }
        )
        for piece in _halves(call["function"]["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, body["choices"][0]["finish_reason"])
    yield _sse({**base, "choices": [], "usage": body["usage"]})
    yield b"data: [DONE]\n\n"


def responses_events(body: dict[str, Any]) -> Iterator[bytes]:
    number = iter(range(1000))
    start = {**body, "status": "in_progress", "output": []}
    yield _sse(
        {"type": "response.created", "sequence_number": next(number), "response": start},
        "response.created",
    )
    for index, item in enumerate(body["output"]):
        if item["type"] != "function_call":
            continue
        added = {
            "type": "response.output_item.added",
            "output_index": index,
            "sequence_number": next(number),
            "item": {**item, "arguments": "", "status": "in_progress"},
        }
        yield _sse(added, added["type"])
        for piece in _halves(item["arguments"]):
            delta = {
                "type": "response.function_call_arguments.delta",
                "item_id": item["id"],
                "output_index": index,
                "sequence_number": next(number),
                "delta": piece,
            }
            yield _sse(delta, delta["type"])
    done = {"type": "response.completed", "sequence_number": next(number), "response": body}
    yield _sse(done, done["type"])


def anthropic_events(body: dict[str, Any]) -> Iterator[bytes]:
    start = {
        **body,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": body["usage"]["input_tokens"], "output_tokens": 1},
    }
    yield _sse({"type": "message_start", "message": start}, "message_start")
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _halves(block["text"])]
        else:
            opened = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            text = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _halves(text)]
        yield _sse(
            {"type": "content_block_start", "index": index, "content_block": opened},
            "content_block_start",
        )
        yield b'event: ping\ndata: {"type": "ping"}\n\n'
        for delta in deltas:
            yield _sse(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
        yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
    delta = {"stop_reason": body["stop_reason"], "stop_sequence": None}
    usage = {"output_tokens": body["usage"]["output_tokens"]}
    yield _sse({"type": "message_delta", "delta": delta, "usage": usage}, "message_delta")
    yield _sse({"type": "message_stop"}, "message_stop")


EVENTS = {
    "openai": chat_events,
    "openai-compatible": chat_events,
    "openai-responses": responses_events,
    "anthropic": anthropic_events,
}


class StreamingUpstream(FakeProvider):
    """FakeProvider, answering ``stream: true`` requests with events sent one write each."""

    def __init__(self, provider: str, key: str) -> None:
        self.gate: threading.Event | None = None
        self.barrier: threading.Barrier | None = None
        self.in_flight = 0
        self.peak = 0
        super().__init__(provider, key)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _check(self, path: str, headers: dict[str, str], body: Any) -> None:
        """As FakeProvider checks, but anthropic 2.x sends its key as a bearer token and a
        newer anthropic-version: what the app sends is passed on as it is."""
        before = len(self.violations)
        super()._check(path, headers, body)
        keyed = (
            headers.get("authorization") == f"Bearer {self.key}"
            or headers.get("x-api-key") == self.key
        )
        if self.provider == "anthropic" and keyed and headers.get("anthropic-version"):
            self.violations[before:] = [
                v for v in self.violations[before:] if v != "anthropic headers"
            ]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        whole = super()._handler()
        fake = self

        class Handler(whole):  # type: ignore[misc,valid-type]
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                with fake.lock:
                    fake.in_flight += 1
                    fake.peak = max(fake.peak, fake.in_flight)
                try:
                    if fake.barrier is not None:
                        fake.barrier.wait()
                    self._answer()
                finally:
                    with fake.lock:
                        fake.in_flight -= 1

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                body = json.loads(raw) if raw else None
                if not (isinstance(body, dict) and body.get("stream") is True) or fake.script:
                    socket_file, self.rfile = self.rfile, _Replay(raw)  # type: ignore[assignment]
                    try:
                        return super().do_POST()
                    finally:
                        self.rfile = socket_file  # the next request on this connection
                headers = {k.lower(): v for k, v in self.headers.items()}
                with fake.lock:
                    fake.seen.append(Seen(self.path, headers, body, time.monotonic()))
                    fake._check(self.path, headers, body)
                    whole_body = fake._default(body).body
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    for number, event in enumerate(EVENTS[fake.provider](whole_body)):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                        self.wfile.flush()
                        if number == 0 and fake.gate is not None:
                            fake.gate.wait(timeout=30)
                    self.wfile.write(b"0\r\n\r\n")

        return Handler


class _Replay:
    """The request body, read again by FakeProvider's own handler."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def read(self, size: int = -1) -> bytes:
        data, self._data = self._data, b""
        return data
