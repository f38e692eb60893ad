"""Fake OpenAI (Chat Completions, Responses) and Anthropic Messages servers on 127.0.0.1.

Each server speaks one provider's wire format: it checks the path, the auth headers and the
request body's shape (violations are collected for the test to assert empty), answers from a
script, and otherwise with a tool call built from the request. Bodies follow the official
SDKs' types and the shapes recorded in their test suites (see the reference notes).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from replaygate.providers.transport import Policy

KEY = "sk-canary-test-KEY-9f8e7d6c5b4a39281706"

ANTHROPIC_VERSION = "2026-10-21"
PATHS = {
    "openai": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "openai-compatible": "/v1/chat/completions",
}


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None  # a JSON value, or bytes sent as they are
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    trickle_s: float = 0.0  # a pause before each byte of the body: a provider sending slowly
    length: int | None = None  # the Content-Length sent when not the body's; -1: none sent


@dataclass(frozen=True)
class Seen:
    path: str
    headers: dict[str, str]
    body: Any
    at: float = 0.0  # time.monotonic() on arrival


def chat_body(
    calls: list[tuple[str, dict[str, Any]]], content: str | None = None
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-ABfvyvfNWKcl7Ohqos4UFrmMs1v4C",
        "object": "chat.completion",
        "created": 1727346166,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "tool_calls": [
                        {
                            "id": f"call_{i}",
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args)},
                        }
                        for i, (name, args) in enumerate(calls)
                    ]
                    or None,
                    "refusal": None,
                },
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 149, "completion_tokens": 60, "total_tokens": 209},
        "system_fingerprint": "fp_b40fb1c6fb",
    }


def responses_body(
    calls: list[tuple[str, dict[str, Any]]], content: str | None = None
) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {
            "type": "function_call",
            "id": f"fc_{i}",
            "call_id": f"call_{i}",
            "name": name,
            "arguments": json.dumps(args),
            "status": "completed",
        }
        for i, (name, args) in enumerate(calls)
    ]
    if content is not None:
        output.insert(
            0,
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": content, "annotations": []}],
            },
        )
    return {
        "id": "resp_67ca09c5efe0819096d0511c92b8c890096610f474011cc0",
        "object": "response",
        "created_at": 1741294021,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "model": "gpt-5.4",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 291,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 23,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 314,
        },
    }


def anthropic_body(
    calls: list[tuple[str, dict[str, Any]]], content: str | None = None
) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
    blocks += [
        {
            "type": "tool_use",
            "id": f"toolu_{i}",
            "name": name,
            "input": args,
            "caller": {"type": "direct"},
        }
        for i, (name, args) in enumerate(calls)
    ]
    return {
        "model": "claude-haiku-4-5-20251001",
        "id": "msg_01QCEBW49MBPHFuFwMDoFtPP",
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 659, "output_tokens": 74, "service_tier": "standard"},
    }


BODIES = {
    "openai": chat_body,
    "openai-compatible": chat_body,
    "openai-responses": responses_body,
    "anthropic": anthropic_body,
}

# Anthropic's error types by status (platform docs, errors page); OpenAI's type/code pairs.
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_OPENAI_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}


def error_body(provider: str, status: int, message: str) -> dict[str, Any]:
    """The error body each provider sends (shape from the SDKs' ErrorResponse types)."""
    if provider == "anthropic":
        return {
            "type": "error",
            "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message},
            "request_id": "req_011CYK5mje9HkutJtmfPzzNC",
        }
    kind, code = _OPENAI_TYPES.get(status, ("server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _chat_messages(body: dict[str, Any]) -> list[str]:
    """Chat Completions: an assistant's tool_calls as {id, type: function, function: {name,
    arguments: a JSON string}}."""
    wrong = []
    for index, message in enumerate(body.get("messages") or []):
        for call in message.get("tool_calls") or [] if isinstance(message, dict) else []:
            function = call.get("function") if isinstance(call, dict) else None
            if (
                not isinstance(function, dict)
                or set(call) != {"id", "type", "function"}
                or call["type"] != "function"
                or set(function) != {"name", "arguments"}
                or not isinstance(function["name"], str)
                or not isinstance(function["arguments"], str)
            ):
                wrong.append(f"messages[{index}].tool_calls: not the chat wire shape: {call}")
    return wrong


def _anthropic_messages(body: dict[str, Any]) -> list[str]:
    """Messages: content blocks of Anthropic's types; tool_use with an id, a name, an input."""
    wrong = []
    for index, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind not in ("text", "image", "document", "tool_use", "tool_result", "thinking"):
                wrong.append(f"messages[{index}]: block type {kind!r} is not Anthropic's")
            if kind == "tool_use" and not (
                isinstance(block.get("id"), str)
                and isinstance(block.get("name"), str)
                and isinstance(block.get("input"), dict)
            ):
                wrong.append(f"messages[{index}]: tool_use without id, name or input object")
    return wrong


MESSAGE_CHECKS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "openai": _chat_messages,
    "openai-compatible": _chat_messages,
    "openai-responses": lambda body: [],
    "anthropic": _anthropic_messages,
}


class FakeProvider:
    """One provider on 127.0.0.1. ``script`` replies first (in order), then ``default``."""

    def __init__(self, provider: str, key: str = KEY) -> None:
        self.provider = provider
        self.key = key
        self.script: deque[Reply] = deque()
        self.seen: list[Seen] = []
        self.violations: list[str] = []
        self.answered: list[tuple[float, int]] = []  # (time.monotonic() when sent, status)
        self.lock = threading.Lock()
        self.calls: list[tuple[str, dict[str, Any]]] | None = None  # None: call the first tool
        self.content: str | None = None
        self.delay_s = 0.0  # of the default replies
        self.stopped = threading.Event()  # ends every delay: no handler outlives its test
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )  # a 0.05 s poll: stop() waits for it, and the tests start hundreds of servers

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def base_url(self) -> str:
        """What --base-url takes: Anthropic's path carries /v1 itself."""
        host = f"http://127.0.0.1:{self._server.server_address[1]}"
        return host if self.provider == "anthropic" else host + "/v1"

    def start(self) -> FakeProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        self._server.shutdown()
        self._server.server_close()

    def _default(self, body: Any) -> Reply:
        calls = self.calls
        if calls is None:
            tools = body.get("tools") or [] if isinstance(body, dict) else []
            first = tools[0] if tools else {}
            name = first.get("name") or first.get("function", {}).get("name", "none")
            calls = [(name, {"city": "Bern"})]
        return Reply(200, BODIES[self.provider](calls, self.content), delay_s=self.delay_s)

    def _check(self, path: str, headers: dict[str, str], body: Any) -> None:
        wrong = []
        if path != PATHS[self.provider]:
            wrong.append(f"path {path}")
        if self.provider == "anthropic":
            if (  # what the anthropic SDK (2.14) sends
                headers.get("authorization") != f"Bearer {self.key}"
                or headers.get("anthropic-version") != ANTHROPIC_VERSION
            ):
                wrong.append("anthropic headers")
            if not isinstance(body, dict) or "max_tokens" not in body or "messages" not in body:
                wrong.append("anthropic body")
        else:
            if headers.get("authorization") != f"Bearer {self.key}":
                wrong.append("authorization header")
            member = "input" if self.provider == "openai-responses" else "messages"
            if not isinstance(body, dict) or member not in body or "model" not in body:
                wrong.append(f"body without {member}/model")
        if headers.get("content-type") != "application/json":
            wrong.append("content-type")
        if isinstance(body, dict):
            wrong += MESSAGE_CHECKS[self.provider](body)
        self.violations += wrong

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                if len(raw) < length:  # the client was killed while sending: nothing to judge
                    return
                body = json.loads(raw) if raw else None
                headers = {k.lower(): v for k, v in self.headers.items()}
                with fake.lock:
                    fake.seen.append(Seen(self.path, headers, body, time.monotonic()))
                    fake._check(self.path, headers, body)
                    reply = fake.script.popleft() if fake.script else fake._default(body)
                fake.stopped.wait(reply.delay_s)
                data = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                if reply.length != -1:  # without it the body ends when the connection does
                    self.send_header("Content-Length", str(reply.length or len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    _send(self.wfile, data, reply.trickle_s, fake.stopped)
                with fake.lock:
                    fake.answered.append((time.monotonic(), reply.status))

        return Handler


def _send(out: Any, data: bytes, trickle_s: float, stopped: threading.Event) -> None:
    """The body at once, or a byte at a time with ``trickle_s`` before each (until stopped)."""
    if not trickle_s:
        out.write(data)
        return
    for index in range(len(data)):
        if stopped.wait(trickle_s):
            return
        out.write(data[index : index + 1])
        out.flush()


def policy(**changes: Any) -> Policy:
    """A transport policy for tests: short connect and read times, no retries, unless changed."""
    values: dict[str, Any] = {
        "connect_s": 5.0,
        "read_s": 5.0,
        "retries": 0,
        "retry_on": frozenset(),
        "backoff_s": 0.0,
        "respect_retry_after": True,
        "max_sleep_s": 5.0,
    }
    return Policy(**{**values, **changes})
