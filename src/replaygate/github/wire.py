"""The GitHub REST API's wire: its headers and bodies, its errors, what a response says
(Retry-After, a secondary rate limit, the server's message), and which URLs are the API's."""

from __future__ import annotations

import json
import random
from typing import Any
from urllib.parse import urlsplit

import requests

from replaygate import __version__
from replaygate.core.errors import ReplayGateError
from replaygate.core.numerals import retry_after_seconds

API_VERSION = "2022-11-28"
MEDIA_TYPE = "application/vnd.github+json"
USER_AGENT = f"replaygate/{__version__}"
MAX_MESSAGE = 300  # characters of a server message kept in an error
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})


class GitHubApiError(ReplayGateError):
    """A GitHub API call that failed for good; the message is one line, never the token.

    ``status`` is the HTTP status, or None when no response arrived. ``transient``
    says the outcome is unknown (no response, or a 5xx): a create may have happened.
    ``permission_denied`` is a refusal of the token (401, 403, or 404 on a write).
    ``stopped`` says no more requests may go out: the deadline passed (whatever the
    outcome of this one, nothing is to be looked up again).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        method: str = "GET",
        rate_limited: bool = False,
        stopped: bool = False,
    ) -> None:
        super().__init__(message)
        self.status, self.method, self.rate_limited = status, method, rate_limited
        self.stopped = stopped
        self.transient = (status is None or status >= 500) and not stopped
        refused = status in (401, 403) or (status == 404 and method in WRITES)
        self.permission_denied = refused and not rate_limited

    def noted(self, note: str) -> GitHubApiError:
        """The same error with ``note`` appended to its message."""
        return GitHubApiError(
            f"{self}; {note}",
            status=self.status,
            method=self.method,
            rate_limited=self.rate_limited,
            stopped=self.stopped,
        )


class BearerAuth(requests.auth.AuthBase):
    """Sets the token per request, so no netrc entry overrides it and no repr shows it."""

    def __init__(self, token: str) -> None:
        self.token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request

    def __repr__(self) -> str:
        return "BearerAuth(***)"


def equal_jitter(delay: float) -> float:
    return delay / 2 + random.uniform(0, delay / 2)


def clip_utf8(text: str, max_bytes: int, note: str) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes, ending with ``note`` when cut."""
    data = text.encode("utf-8", "replace")
    if len(data) <= max_bytes:
        return text
    room = max(0, max_bytes - len(note.encode("utf-8")))
    return data[:room].decode("utf-8", "ignore") + note


def base_url(api_url: str) -> str:
    parts = urlsplit(api_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query:
        raise GitHubApiError(f"GitHub API: GITHUB_API_URL must be an http(s) URL, got {api_url!r}")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def same_api(base: str, url: str) -> bool:
    """Whether ``url`` is on the API at ``base``: same scheme, host, port and path prefix."""
    mine, theirs = urlsplit(base), urlsplit(url)
    return (
        (theirs.scheme, theirs.netloc) == (mine.scheme, mine.netloc)
        and (theirs.path + "/").startswith(mine.path + "/")
        and ".." not in theirs.path.split("/")
    )


def headers(*, json_body: bool) -> dict[str, str]:
    headers = {"Accept": MEDIA_TYPE, "X-GitHub-Api-Version": API_VERSION, "User-Agent": USER_AGENT}
    if json_body:
        headers["Content-Type"] = "application/json"
    return headers


def encode(body: Any) -> bytes:
    """JSON as UTF-8; a lone surrogate (possible in fixture text) becomes '?', not an error."""
    return json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8", "replace")


def retry_after(response: requests.Response, now: float) -> float | None:
    """Retry-After in seconds: GitHub sends an integer; an HTTP date is honoured too."""
    return retry_after_seconds(response.headers.get("retry-after"), now)


def is_secondary(response: requests.Response) -> bool:
    return "secondary rate limit" in server_message(response).lower()


def server_message(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) else ""


def describe(response: requests.Response) -> str:
    message = server_message(response)[:MAX_MESSAGE]
    return f"{response.status_code} {message or response.reason or 'error'}"
