"""HTTP for provider calls: a requests Session, and when to retry by a contract's rules.

Timeouts, retries and the 429 policy come from the contract. Redirects are never followed,
the environment's proxies and .netrc are never read, and no call goes anywhere but the
configured base URL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import requests

from replaygate.core.numerals import retry_after_seconds
from replaygate.loading.contract import Contract


class RetryOn(StrEnum):
    """What `retries.retry_on` may name."""

    RATE_LIMIT = "429"
    SERVER_ERROR = "5xx"
    TIMEOUT = "timeout"


class BadPolicy(ValueError):
    """A contract's retry settings cannot be applied."""


@dataclass(frozen=True, slots=True)
class Policy:
    connect_s: float
    read_s: float
    retries: int
    retry_on: frozenset[RetryOn]
    backoff_s: float
    respect_retry_after: bool
    max_sleep_s: float


def policy_of(contract: Contract) -> Policy:
    """The contract's timeouts, retries and rate_limits.on_429. Raises BadPolicy."""
    try:
        retry_on = frozenset(RetryOn(item) for item in contract.retries.retry_on)
    except ValueError:
        valid = ", ".join(repr(str(item)) for item in RetryOn)
        raise BadPolicy(f"retries.retry_on may hold {valid}") from None
    total_s = contract.timeouts.total_ms / 1000
    return Policy(
        connect_s=min(contract.timeouts.connect_ms / 1000, total_s),
        read_s=total_s,
        retries=contract.retries.max_attempts,
        retry_on=retry_on,
        backoff_s=contract.retries.backoff_ms / 1000,
        respect_retry_after=contract.on_429.respect_retry_after,
        max_sleep_s=contract.on_429.max_sleep_seconds,
    )


class RateGate:
    """Shared by the requests in flight: when one is told to wait (a 429's Retry-After),
    the others start nothing new until that time either."""

    def __init__(self) -> None:
        self._until = 0.0
        self._lock = threading.Lock()

    def hold(self, seconds: float) -> None:
        with self._lock:
            self._until = max(self._until, time.monotonic() + seconds)

    def wait(self, stopped: threading.Event) -> None:
        """Until the time asked for, or until ``stopped`` is set."""
        while not stopped.is_set():
            with self._lock:
                delay = self._until - time.monotonic()
            if delay <= 0:
                return
            stopped.wait(delay)


def retry_after(value: str | None) -> float | None:
    """Retry-After in seconds from now: a number of seconds or an HTTP date; None when absent
    or unreadable (then the backoff applies)."""
    return retry_after_seconds(value, time.time())


def asked_wait(headers: Mapping[str, str]) -> float | None:
    """The wait the server asked for, in seconds: ``retry-after-ms`` (OpenAI's and
    Anthropic's, more precise) before ``Retry-After``, as their SDKs read them."""
    millis = headers.get("retry-after-ms")
    if millis is not None and millis.isascii() and millis.isdigit() and len(millis) < 10:
        return int(millis) / 1000
    return retry_after(headers.get("Retry-After"))


def _named(policy: Policy, status: int) -> bool:
    """Whether ``retry_on`` names this status: only what it names is retried."""
    if status == 429:
        return RetryOn.RATE_LIMIT in policy.retry_on
    return status >= 500 and RetryOn.SERVER_ERROR in policy.retry_on


def status_wait(
    policy: Policy, attempt: int, status: int, headers: Mapping[str, str]
) -> float | None:
    """How long to wait before retrying a reply with this status, or None: not retried.

    ``attempt`` counts the retries made so far. The server's ``x-should-retry: false`` is
    obeyed (``true`` widens nothing: only what ``retry_on`` names is retried); its
    Retry-After is waited out when the contract respects it, and a longer one than
    ``max_sleep`` is not waited for at all. Otherwise ``backoff_ms``, doubled per retry.
    """
    if attempt >= policy.retries or not _named(policy, status):
        return None
    if headers.get("x-should-retry") == "false":
        return None
    asked = asked_wait(headers) if policy.respect_retry_after else None
    if asked is not None:
        return asked if asked <= policy.max_sleep_s else None
    return backoff(policy, attempt)


def backoff(policy: Policy, attempt: int) -> float:
    """``backoff_ms`` before the first retry, doubled before each next one, at most
    ``max_sleep``."""
    return min(policy.backoff_s * 2.0**attempt, policy.max_sleep_s)


def transport_retry(policy: Policy, attempt: int) -> float | None:
    """The wait before retrying a call that got no answer (a timeout, a dropped connection),
    or None when ``retry_on`` does not name ``timeout`` or the retries are spent."""
    if attempt >= policy.retries or RetryOn.TIMEOUT not in policy.retry_on:
        return None
    return backoff(policy, attempt)


class AnswerTooLarge(Exception):
    """An answer longer than the cap: not read further."""


CHUNK = 64 * 1024


def read_capped(reply: requests.Response, limit: int) -> bytes:
    """The reply's body, decoded, read in chunks; raises AnswerTooLarge past ``limit`` bytes
    (a declared Content-Length past it is refused before reading)."""
    declared = reply.headers.get("Content-Length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise AnswerTooLarge(_too_large(limit))
    chunks, size = [], 0
    for chunk in reply.iter_content(CHUNK):
        size += len(chunk)
        if size > limit:
            raise AnswerTooLarge(_too_large(limit))
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int) -> str:
    size = f"{limit // 2**20} MiB" if limit % 2**20 == 0 else f"{limit} bytes"
    return f"the answer is larger than the cap on an answer ({size}): not read further"
