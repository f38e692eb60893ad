"""HTTP for provider calls: requests Sessions whose urllib3 Retry carries a contract's rules.

Timeouts, retries and the 429 policy come from the contract. Redirects are never followed,
the environment's proxies and .netrc are never read, and no call goes anywhere but the
configured base URL.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

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

    def wait(self) -> None:
        while True:
            with self._lock:
                delay = self._until - time.monotonic()
            if delay <= 0:
                return
            time.sleep(delay)


class _Retry(Retry):
    """Gives up, rather than sleep longer than ``max_sleep`` on a Retry-After; tells the
    gate when it waits one out."""

    def __init__(
        self, *args: Any, max_sleep: float = 60.0, gate: RateGate | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.max_sleep = max_sleep
        self.gate = gate

    def new(self, **kw: Any) -> _Retry:
        kw.setdefault("max_sleep", self.max_sleep)
        kw.setdefault("gate", self.gate)
        return super().new(**kw)

    def sleep_for_retry(self, response: Any) -> bool:
        after = self.get_retry_after(response)
        if after and self.gate is not None:
            self.gate.hold(after)
        return super().sleep_for_retry(response)

    def get_retry_after(self, response: Any) -> float | None:
        return retry_after(response.headers.get("Retry-After"))

    def increment(self, *args: Any, **kwargs: Any) -> _Retry:
        response = kwargs.get("response")
        if response is not None and self.respect_retry_after_header:
            after = self.get_retry_after(response)
            if after is not None and after > self.max_sleep:
                # urllib3 only names the pool in the message: None is fine there
                raise MaxRetryError(kwargs.get("_pool"), kwargs.get("url") or "", None)  # type: ignore[arg-type]
        return super().increment(*args, **kwargs)


def retry_after(value: str | None) -> float | None:
    """Retry-After in seconds from now: a number of seconds or an HTTP date; None when absent
    or unreadable (then the backoff applies)."""
    return retry_after_seconds(value, time.time())


def _retry(policy: Policy, gate: RateGate) -> _Retry:
    statuses: set[int] = set()
    if RetryOn.RATE_LIMIT in policy.retry_on:
        statuses.add(429)
    if RetryOn.SERVER_ERROR in policy.retry_on:
        statuses.update(range(500, 600))
    timeouts = policy.retries if RetryOn.TIMEOUT in policy.retry_on else 0
    return _Retry(
        total=policy.retries,
        connect=timeouts,
        read=timeouts,
        status=policy.retries,
        other=0,
        redirect=0,
        raise_on_redirect=False,
        raise_on_status=False,
        allowed_methods=frozenset({"POST"}),
        status_forcelist=statuses,
        backoff_factor=policy.backoff_s,
        backoff_max=policy.max_sleep_s,
        respect_retry_after_header=policy.respect_retry_after,
        max_sleep=policy.max_sleep_s,
        gate=gate,
    )


def session_for(policy: Policy, base_url: str, gate: RateGate) -> requests.Session:
    """A Session that retries by ``policy`` and reads nothing from the environment."""
    session = requests.Session()
    session.trust_env = False  # no proxies, .netrc credentials or CA overrides from env
    session.mount(base_url, HTTPAdapter(max_retries=_retry(policy, gate)))
    return session
