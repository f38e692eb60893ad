"""One provider call: the fixture's prompt sent, the answer normalised, errors classified.

What comes back is already redacted: a provider can echo a key in an error or an answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from threading import Lock
from typing import Any

import requests

from replaygate.providers.errors import ErrorKind, error_kind, provider_message, reply_json
from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import Prompt
from replaygate.providers.redact import Redactor
from replaygate.providers.response import MalformedResponse, json_value
from replaygate.providers.transport import (
    Policy,
    RateGate,
    asked_wait,
    session_for,
    status_wait,
    transport_retry,
)
from replaygate.providers.wire import WIRES

MESSAGE_LIMIT = 1000


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
    """Calls one provider at one base URL with one key, retrying by the contract's policy."""

    name: ProviderName
    base_url: str
    key: str | None
    redactor: Redactor
    _session: requests.Session | None = None
    _lock: Lock = field(default_factory=Lock)
    _gate: RateGate = field(default_factory=RateGate)
    sleep: Callable[[float], None] = time.sleep  # between attempts (tests watch it)

    def session(self) -> requests.Session:
        with self._lock:
            if self._session is None:
                self._session = session_for(self.base_url)
            return self._session

    def call(self, prompt: Prompt, policy: Policy) -> Answer:
        """Send the prompt. Raises UnsupportedRequest before sending anything it cannot express."""
        wire = WIRES[self.name]
        body = wire.build(prompt)
        headers = wire.headers(self.key) if self.key else {}
        attempt = 0
        while True:
            self._gate.wait()
            try:
                reply = self.session().post(
                    self.base_url.rstrip("/") + wire.path,
                    json=body,
                    headers=headers,
                    timeout=(policy.connect_s, policy.read_s),
                    allow_redirects=False,
                )
            except requests.RequestException as exc:
                wait = transport_retry(policy, attempt)
                if wait is None:
                    return self._failed(*_transport_error(exc, policy))
            else:
                wait = self._retry_wait(reply, policy, attempt)
                if wait is None:
                    return self._answer(reply, policy)
                reply.close()
            self.sleep(wait)
            attempt += 1

    def _retry_wait(self, reply: requests.Response, policy: Policy, attempt: int) -> float | None:
        """The wait before sending again, or None: this reply is the answer."""
        if reply.status_code < 400 or _kind(reply) is ErrorKind.QUOTA:
            return None
        wait = status_wait(policy, attempt, reply.status_code, reply.headers)
        if wait is not None and policy.respect_retry_after and asked_wait(reply.headers):
            self._gate.hold(wait)  # the others start nothing new before then either
        return wait

    def close(self) -> None:
        if self._session is not None:
            self._session.close()

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


def _kind(reply: requests.Response) -> ErrorKind:
    return error_kind(reply.status_code, reply_json(reply.content))


def _status_error(reply: requests.Response, policy: Policy) -> tuple[ErrorKind, str, int]:
    status, body = reply.status_code, reply_json(reply.content)
    message = f"HTTP {status}: {provider_message(body, reply.text)}"
    after = asked_wait(reply.headers)
    if status == 429 and after is not None and after > policy.max_sleep_s:
        message += (
            f" (Retry-After {after:g} s is longer than rate_limits.on_429.max_sleep_seconds "
            f"{policy.max_sleep_s:g}: not retried)"
        )
    return error_kind(status, body), message, status


def _transport_error(exc: requests.RequestException, policy: Policy) -> tuple[ErrorKind, str]:
    if isinstance(exc, requests.Timeout):  # urllib3 retries nothing: no MaxRetryError to open
        return ErrorKind.TIMEOUT, (
            f"no answer within the timeouts (connect {policy.connect_s:g} s, "
            f"read {policy.read_s:g} s)"
        )
    return ErrorKind.PROVIDER_ERROR, f"cannot reach the provider: {type(exc).__name__}"
