"""The GitHub REST API over one requests session: headers, retries, rate limits, pagination."""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests

from replaygate.core.numerals import whole_or_none
from replaygate.github.wire import (
    WRITES,
    BearerAuth,
    GitHubApiError,
    base_url,
    describe,
    encode,
    equal_jitter,
    headers,
    is_secondary,
    retry_after,
    same_api,
)

BASE_BACKOFF = 1.0  # seconds before the first retry of a transient failure
RATE_LIMIT_FLOOR = 60.0  # GitHub: with no header to go by, wait at least a minute
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
# No response, or a broken one: worth another attempt (for a read, or an idempotent write).
_TRANSIENT = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)
_log = logging.getLogger(__name__)


class GitHubApi:
    """One repository's REST API, for one token; every request goes through ``_send``.

    With a ``deadline`` (seconds), every request together must end within it from the
    client's creation: one that has no complete response by then is abandoned, and
    later ones are not sent. When GitHub asks for a pause longer than the client will
    wait (a rate limit), no request goes out before the pause is over.
    """

    def __init__(
        self,
        api_url: str,
        token: str,
        repository: str,
        *,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float = 10,
        max_attempts: int = 4,
        max_wait: float = 120,
        jitter: Callable[[float], float] = equal_jitter,
        clock: Callable[[], float] = time.time,
        write_interval: float = 1.0,
        deadline: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._base = base_url(api_url)
        if not token:
            raise GitHubApiError("GitHub API: no token given")
        if not _REPOSITORY.fullmatch(repository):
            raise GitHubApiError(f"GitHub API: repository must be owner/name, got {repository!r}")
        self.repository = repository
        self._session = session or requests.Session()
        self._auth = BearerAuth(token)
        self._sleep, self._jitter, self._clock = sleep, jitter, clock
        self._timeout, self._max_attempts, self._max_wait = timeout, max_attempts, max_wait
        self._write_interval = write_interval
        self._last_write: float | None = None
        self._deadline, self._monotonic = deadline, monotonic
        self._ends_at = None if deadline is None else monotonic() + deadline
        self._quiet_until = 0.0  # clock time before which GitHub wants no request

    def repo_path(self, suffix: str) -> str:
        """``/repos/{owner}/{repo}`` followed by ``suffix`` (which starts with a slash)."""
        return f"/repos/{self.repository}{suffix}"

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
        retry: bool = True,
    ) -> Any:
        """Parsed JSON of ``method path`` (None for an empty body).

        ``retry=False`` is for creates: a connection error, timeout or 5xx is then
        raised at once (the caller looks before creating again). A rate-limit refusal
        is always waited out and retried, as GitHub did not act on the request.
        """
        response = self._send(method, self._base + path, json, params, retry)
        return self._parse(method, path, response)

    def paginate(
        self, path: str, params: Mapping[str, str | int] | None = None, *, key: str = ""
    ) -> Iterator[dict[str, Any]]:
        """Every item of a list endpoint, following ``Link: rel="next"`` on this API only.

        ``key`` names the list in an endpoint whose pages are objects (``check_runs``).
        """
        url: str | None = self._base + path
        query, seen = params, set[str]()
        while url is not None:
            seen.add(url)
            response = self._send("GET", url, None, query, True)
            page = self._parse("GET", path, response)
            if key and isinstance(page, dict):
                page = page.get(key)
            if not isinstance(page, list):
                raise self._error(f"GitHub API GET {path}: the response is not a list")
            yield from (item for item in page if isinstance(item, dict))
            url, query = self._next_url(path, response, seen), None

    def _send(
        self,
        method: str,
        url: str,
        body: Any,
        params: Mapping[str, str | int] | None,
        retry: bool,
    ) -> requests.Response:
        waited = 0.0
        for attempt in range(1, self._max_attempts + 1):
            self._may_send(method, url)
            self._pace(method)
            outcome = self._attempt(method, url, body, params)
            if isinstance(outcome, requests.Response) and outcome.status_code < 400:
                return outcome
            delay, error = self._assess(method, url, outcome, attempt, retry)
            if delay is None:
                raise error.noted(f"after {attempt} attempts") if attempt > 1 else error
            self._may_wait(error, attempt, waited + delay, delay)
            _log.warning(self._redact(f"{error}; retrying in {delay:.1f}s"))
            self._sleep(delay)
            waited += delay
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _may_send(self, method: str, url: str) -> None:
        """Raise, sending nothing, once the deadline has passed or during GitHub's pause."""
        where = f"GitHub API {method} {urlsplit(url).path}"
        if self._ends_at is not None and self._monotonic() >= self._ends_at:
            message = f"{where}: not sent: the {self._deadline:g}s deadline for the GitHub API"
            raise self._error(f"{message} has passed", None, method, stopped=True)
        pause = self._quiet_until - self._clock()
        if pause > 0:
            message = f"{where}: not sent: GitHub asked for no requests for another {pause:.0f}s"
            raise self._error(message, None, method, rate_limited=True)

    def _may_wait(self, error: GitHubApiError, attempt: int, waited: float, delay: float) -> None:
        """Raise instead of waiting ``delay`` for another attempt when that is not to be."""
        if attempt == self._max_attempts:
            problem = f"gave up after {attempt} attempts"
        elif waited > self._max_wait:
            problem = f"gave up rather than wait {delay:.0f}s more"
        elif self._ends_at is not None and self._monotonic() + delay > self._ends_at:
            problem = f"gave up: waiting {delay:.0f}s more would pass the deadline"
        else:
            return
        if error.rate_limited:  # and honour the pause GitHub asked for on every later request
            self._quiet_until = max(self._quiet_until, self._clock() + delay)
        raise error.noted(problem)

    def _attempt(
        self, method: str, url: str, body: Any, params: Mapping[str, str | int] | None
    ) -> requests.Response | requests.RequestException:
        data = None if body is None else encode(body)
        send = functools.partial(
            self._session.request, method, url, params=params, data=data,
            headers=headers(json_body=data is not None), auth=self._auth, timeout=self._timeout,
        )  # fmt: skip
        if self._ends_at is None:
            return _outcome(send)
        return self._by_deadline(send, method, url)

    def _by_deadline(
        self, send: Callable[[], requests.Response], method: str, url: str
    ) -> requests.Response | requests.RequestException:
        """``send()`` given until the deadline; after it, abandoned in its thread.

        The read timeout bounds each read, not a response: a server sending a byte now
        and then would hold the step forever. Nothing is sent after the deadline, so
        the abandoned thread's connection is never used again.
        """
        done: list[requests.Response | requests.RequestException] = []
        bugs: list[Exception] = []

        def run() -> None:
            try:
                done.append(_outcome(send))
            except Exception as bug:  # raised again in the caller's thread, below
                bugs.append(bug)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(max(0.0, (self._ends_at or 0.0) - self._monotonic()))
        if bugs:
            raise bugs[0]
        if not done:
            where = f"GitHub API {method} {urlsplit(url).path}"
            message = f"{where}: no complete response within the {self._deadline:g}s deadline"
            raise self._error(f"{message} for the GitHub API", None, method, stopped=True)
        return done[0]

    def _assess(
        self,
        method: str,
        url: str,
        outcome: requests.Response | requests.RequestException,
        attempt: int,
        retry: bool,
    ) -> tuple[float | None, GitHubApiError]:
        """How long to wait before the next attempt (None: do not retry) and the error."""
        where = f"GitHub API {method} {urlsplit(url).path}"
        if not isinstance(outcome, requests.Response):
            error = self._error(f"{where}: no response ({type(outcome).__name__})", None, method)
            transient = isinstance(outcome, _TRANSIENT)
            return (self._backoff(attempt) if retry and transient else None), error
        rate_wait = self._rate_limit_wait(outcome, attempt)
        if rate_wait is not None:
            message = f"{where}: rate limited ({describe(outcome)})"
            return rate_wait, self._error(message, outcome.status_code, method, rate_limited=True)
        error = self._error(f"{where}: {describe(outcome)}", outcome.status_code, method)
        if outcome.status_code >= 500 and retry:
            return retry_after(outcome, self._clock()) or self._backoff(attempt), error
        return None, error

    def _rate_limit_wait(self, response: requests.Response, attempt: int) -> float | None:
        if response.status_code not in (403, 429):
            return None
        asked = retry_after(response, self._clock())
        if asked is not None:
            return asked
        reset = whole_or_none(response.headers.get("x-ratelimit-reset", ""))
        if response.headers.get("x-ratelimit-remaining") == "0" and reset is not None:
            return max(0.0, reset - self._clock()) + 1
        if response.status_code == 429 or is_secondary(response):
            return RATE_LIMIT_FLOOR * 2.0 ** (attempt - 1)
        return None  # a plain 403: a permission problem, not worth a retry

    def _backoff(self, attempt: int) -> float:
        return self._jitter(BASE_BACKOFF * 2.0 ** (attempt - 1))

    def _pace(self, method: str) -> None:
        """GitHub asks for a second between writes, against secondary rate limits."""
        if method not in WRITES:
            return
        now = self._clock()
        if self._last_write is not None and now - self._last_write < self._write_interval:
            self._sleep(self._write_interval - (now - self._last_write))
        self._last_write = self._clock()

    def _next_url(self, path: str, response: requests.Response, seen: set[str]) -> str | None:
        url = response.links.get("next", {}).get("url")
        if url is None:
            return None
        if not same_api(self._base, url):
            raise self._error(f"GitHub API GET {path}: refusing a next-page link off the API host")
        if url in seen:
            raise self._error(f"GitHub API GET {path}: the next-page link loops")
        return url

    def _parse(self, method: str, path: str, response: requests.Response) -> Any:
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise self._error(f"GitHub API {method} {path}: the response is not JSON") from None

    def _error(
        self,
        message: str,
        status: int | None = None,
        method: str = "GET",
        *,
        rate_limited: bool = False,
        stopped: bool = False,
    ) -> GitHubApiError:
        return GitHubApiError(
            self._redact(message),
            status=status,
            method=method,
            rate_limited=rate_limited,
            stopped=stopped,
        )

    def _redact(self, text: str) -> str:
        """The single place text leaves this class: one printable line, no token.

        Server text ends up in the job log: ``##[`` would make the runner read a command.
        """
        line = " ".join(text.replace(self._auth.token, "***").split()).replace("##[", "## [")
        return "".join(char if char.isprintable() else "?" for char in line)


def _outcome(
    send: Callable[[], requests.Response],
) -> requests.Response | requests.RequestException:
    try:
        return send()
    except requests.RequestException as exc:
        return exc
