"""One provider call: the fixture's prompt sent, the answer normalised, errors classified.

What comes back is already redacted: a provider can echo a key in an error or an answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from threading import Lock
from typing import Any

import requests
from urllib3.exceptions import MaxRetryError, ReadTimeoutError

from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import Prompt
from replaygate.providers.redact import Redactor
from replaygate.providers.response import MalformedResponse, json_value
from replaygate.providers.transport import Policy, RateGate, retry_after, session_for
from replaygate.providers.wire import WIRES

MESSAGE_LIMIT = 1000


class ErrorKind(StrEnum):
    """The classifications provider errors get, as contracts' `allowed_errors` name them."""

    RATE_LIMIT = "rate_limit"
    TIMEOUT = "timeout"
    AUTH_ERROR = "auth_error"
    INVALID_REQUEST = "invalid_request"
    PROVIDER_ERROR = "provider_error"


def error_kind(status: int) -> ErrorKind:
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status in (401, 403):
        return ErrorKind.AUTH_ERROR
    if status >= 500:  # 529: Anthropic's "overloaded"
        return ErrorKind.PROVIDER_ERROR
    return ErrorKind.INVALID_REQUEST


@dataclass(frozen=True, slots=True)
class Answer:
    """A flat response (``success: false`` with ``error`` when the call failed)."""

    response: dict[str, Any]
    status: int | None = None
    body: Any = None  # the raw body of a successful answer, redacted

    @property
    def error(self) -> str | None:
        error = self.response.get("error")
        return error["code"] if isinstance(error, Mapping) else None


@dataclass
class Provider:
    """Calls one provider at one base URL with one key; a Session per retry policy."""

    name: ProviderName
    base_url: str
    key: str | None
    redactor: Redactor
    _sessions: dict[Policy, requests.Session] = field(default_factory=dict)
    _lock: Lock = field(default_factory=Lock)
    _gate: RateGate = field(default_factory=RateGate)

    def _session(self, policy: Policy) -> requests.Session:
        with self._lock:
            if policy not in self._sessions:
                self._sessions[policy] = session_for(policy, self.base_url, self._gate)
            return self._sessions[policy]

    def call(self, prompt: Prompt, policy: Policy) -> Answer:
        """Send the prompt. Raises UnsupportedRequest before sending anything it cannot express."""
        wire = WIRES[self.name]
        body = wire.build(prompt)
        headers = wire.headers(self.key) if self.key else {}
        self._gate.wait()
        try:
            reply = self._session(policy).post(
                self.base_url.rstrip("/") + wire.path,
                json=body,
                headers=headers,
                timeout=(policy.connect_s, policy.read_s),
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            return self._failed(*_transport_error(exc, policy))
        return self._answer(reply, policy)

    def close(self) -> None:
        for session in self._sessions.values():
            session.close()

    def _answer(self, reply: requests.Response, policy: Policy) -> Answer:
        if reply.is_redirect:
            where = reply.headers.get("Location", "(no Location)")
            return self._failed(
                ErrorKind.PROVIDER_ERROR,
                f"HTTP {reply.status_code}: redirected to {where}; replaygate follows no "
                "redirects: check the base URL",
                reply.status_code,
            )
        if reply.status_code >= 300:
            return self._failed(*_status_error(reply, policy))
        try:
            body = json_value(reply.content)
            response = WIRES[self.name].parse(body)
        except ValueError as exc:  # also MalformedResponse
            what = str(exc) if isinstance(exc, MalformedResponse) else "not JSON"
            message = f"the answer does not have the {self.name} shape: {what}"
            return self._failed(ErrorKind.PROVIDER_ERROR, message, reply.status_code)
        return Answer(self.redactor.value(response), reply.status_code, self.redactor.value(body))

    def _failed(self, kind: ErrorKind, message: str, status: int | None = None) -> Answer:
        text = self.redactor.text(message)[:MESSAGE_LIMIT]
        error = {"code": str(kind), "message": text}
        return Answer({"success": False, "content": None, "tool_calls": [], "error": error}, status)


def _provider_message(reply: requests.Response) -> str:
    """The provider's own message (OpenAI and Anthropic both say ``error.message``)."""
    try:
        body = json.loads(reply.content)
    except ValueError:
        return reply.text.strip()
    error = body.get("error") if isinstance(body, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else None
    # whole and unescaped: it is redacted before it is cut (Provider._failed)
    return message if isinstance(message, str) else json.dumps(body, ensure_ascii=False)


def _status_error(reply: requests.Response, policy: Policy) -> tuple[ErrorKind, str, int]:
    status = reply.status_code
    message = f"HTTP {status}: {_provider_message(reply)}"
    after = retry_after(reply.headers.get("Retry-After"))
    if status == 429 and after is not None and after > policy.max_sleep_s:
        message += (
            f" (Retry-After {after:g} s is longer than rate_limits.on_429.max_sleep_seconds "
            f"{policy.max_sleep_s:g}: not retried)"
        )
    return error_kind(status), message, status


def _transport_error(exc: requests.RequestException, policy: Policy) -> tuple[ErrorKind, str]:
    if _is_timeout(exc):
        return ErrorKind.TIMEOUT, (
            f"no answer within the timeouts (connect {policy.connect_s:g} s, "
            f"read {policy.read_s:g} s)"
        )
    return ErrorKind.PROVIDER_ERROR, f"cannot reach the provider: {type(exc).__name__}"


def _is_timeout(exc: requests.RequestException) -> bool:
    if isinstance(exc, requests.Timeout):
        return True
    reason = exc.args[0] if exc.args else None
    return isinstance(reason, MaxRetryError) and isinstance(reason.reason, ReadTimeoutError)
