"""One provider call: the fixture's prompt sent, the answer normalised, errors classified.

What comes back is already redacted: a provider can echo a key in an error or an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from threading import Lock
from typing import Any

import requests

from replaygate.providers.deadline import STOPPED, TIMED_OUT, Cut, Cuts, watched_session
from replaygate.providers.errors import (
    ErrorKind,
    error_kind,
    host_port,
    provider_message,
    reply_json,
    unreachable,
)
from replaygate.providers.names import ProviderName
from replaygate.providers.prompt import Prompt
from replaygate.providers.redact import Redactor
from replaygate.providers.response import MalformedResponse, json_value
from replaygate.providers.transport import (
    AnswerTooLarge,
    Policy,
    RateGate,
    asked_wait,
    read_capped,
    status_wait,
    transport_retry,
)
from replaygate.providers.wire import WIRES

MESSAGE_LIMIT = 1000
ANSWER_LIMIT = 32 * 1024 * 1024  # bytes of one answer, read in a stream (docs/recordings.md)
STOPPED_MESSAGE = "stopped (Ctrl-C or SIGTERM) before the provider answered"


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
    key_env: str | None = None  # the variable --api-key-env named, stored for refreshing
    _session: requests.Session | None = None
    _lock: Lock = field(default_factory=Lock)
    _gate: RateGate = field(default_factory=RateGate)
    _cuts: Cuts = field(default_factory=Cuts)
    # between attempts (tests watch it); by default a wait that a stop ends
    sleep: Callable[[float], None] | None = None
    answer_limit: int = ANSWER_LIMIT  # bytes; tests make it small

    def session(self) -> requests.Session:
        with self._lock:
            if self._session is None:
                self._session = watched_session(self.base_url)
            return self._session

    def stop(self) -> None:
        """Cut the requests in flight (Ctrl-C, SIGTERM); later calls fail without sending."""
        self._cuts.stop()

    def call(self, prompt: Prompt, policy: Policy) -> Answer:
        """Send the prompt. Raises UnsupportedRequest before sending anything it cannot express."""
        wire = WIRES[self.name]
        body = wire.build(prompt)
        headers = wire.headers(self.key) if self.key else {}
        url = self.base_url.rstrip("/") + wire.path
        attempt = 0
        while True:
            self._gate.wait(self._cuts.stopped)
            if self._cuts.stopped.is_set():
                return self._failed(ErrorKind.PROVIDER_ERROR, STOPPED_MESSAGE)
            with self._cuts.request(policy.read_s) as cut:
                wait, answer = self._attempt(url, body, headers, policy, attempt, cut)
            if answer is not None:
                return answer
            assert wait is not None  # no answer means another attempt
            self._pause(wait)
            attempt += 1

    def _attempt(
        self,
        url: str,
        body: Any,
        headers: Mapping[str, str],
        policy: Policy,
        attempt: int,
        cut: Cut,
    ) -> tuple[float | None, Answer | None]:
        """One request: (the wait before the next, None), or (None, the answer)."""
        try:
            reply = self.session().post(
                url,
                json=body,
                headers=headers,
                timeout=(policy.connect_s, policy.read_s),
                allow_redirects=False,
                stream=True,  # read here, under the size cap and the deadline
            )
            with reply:
                content = read_capped(reply, self.answer_limit)
        except (requests.RequestException, OSError) as exc:
            return self._no_answer(_cut_or(cut, exc), policy, attempt)
        except AnswerTooLarge as exc:
            return None, self._failed(ErrorKind.PROVIDER_ERROR, str(exc), reply.status_code)
        if cut.why is not None:  # a body read to the connection's end, cut short
            return self._no_answer(cut.why, policy, attempt)
        wait = self._retry_wait(reply, content, policy, attempt)
        return (wait, None) if wait is not None else (None, self._answer(reply, content, policy))

    def _no_answer(
        self, why: Exception | str, policy: Policy, attempt: int
    ) -> tuple[float | None, Answer | None]:
        """A request that got no whole answer: retried when ``retry_on`` names timeouts."""
        if why == STOPPED:
            return None, self._failed(ErrorKind.PROVIDER_ERROR, STOPPED_MESSAGE)
        wait = transport_retry(policy, attempt)
        if wait is not None:
            return wait, None
        return None, self._failed(*_transport_error(why, policy, self.base_url))

    def _pause(self, seconds: float) -> None:
        """Wait between attempts; a stop ends the wait."""
        if self.sleep is not None:
            self.sleep(seconds)
        else:
            self._cuts.stopped.wait(seconds)

    def _retry_wait(
        self, reply: requests.Response, content: bytes, policy: Policy, attempt: int
    ) -> float | None:
        """The wait before sending again, or None: this reply is the answer."""
        if reply.status_code < 400 or _kind(reply, content) is ErrorKind.QUOTA:
            return None
        wait = status_wait(policy, attempt, reply.status_code, reply.headers)
        if wait is not None and policy.respect_retry_after and asked_wait(reply.headers):
            self._gate.hold(wait)  # the others start nothing new before then either
        return wait

    def close(self) -> None:
        if self._session is not None:
            self._session.close()

    def _answer(self, reply: requests.Response, content: bytes, policy: Policy) -> Answer:
        if reply.is_redirect:
            where = reply.headers.get("Location", "(no Location)")
            return self._failed(
                ErrorKind.PROVIDER_ERROR,
                f"HTTP {reply.status_code}: redirected to {where}; replaygate follows no "
                "redirects: check the base URL",
                reply.status_code,
            )
        if reply.status_code >= 300:
            return self._failed(*_status_error(reply, content, policy))
        try:
            body = json_value(content)
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


def _cut_or(cut: Cut, exc: Exception) -> Exception | str:
    """Why a request failed: its Cut's reason when it was cut (the error is only its echo)."""
    return cut.why if cut.why is not None else exc


def _kind(reply: requests.Response, content: bytes) -> ErrorKind:
    return error_kind(reply.status_code, reply_json(content))


def _status_error(
    reply: requests.Response, content: bytes, policy: Policy
) -> tuple[ErrorKind, str, int]:
    status, body = reply.status_code, reply_json(content)
    text = content.decode(reply.encoding or "utf-8", errors="replace")
    message = f"HTTP {status}: {provider_message(body, text)}"
    after = asked_wait(reply.headers)
    if status == 429 and after is not None and after > policy.max_sleep_s:
        message += (
            f" (Retry-After {after:g} s is longer than rate_limits.on_429.max_sleep_seconds "
            f"{policy.max_sleep_s:g}: not retried)"
        )
    return error_kind(status, body), message, status


def _transport_error(why: Exception | str, policy: Policy, base_url: str) -> tuple[ErrorKind, str]:
    if why == TIMED_OUT or isinstance(why, requests.Timeout):
        return ErrorKind.TIMEOUT, (
            f"no whole answer from {host_port(base_url)} within the timeouts "
            f"(connect {policy.connect_s:g} s, total {policy.read_s:g} s)"
        )
    if isinstance(why, (requests.ConnectionError, OSError)):
        return ErrorKind.PROVIDER_ERROR, unreachable(why, base_url)
    # a connection that broke mid-answer (ChunkedEncodingError, ...)
    return ErrorKind.PROVIDER_ERROR, (
        f"the answer from {host_port(base_url)} broke off: {type(why).__name__}"
    )
