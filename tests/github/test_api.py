"""GitHubApi against the fake server: headers, retries, rate limits, pagination, redaction."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
import requests

from fake_github import (
    FakeGitHub,
    Reply,
    dropped,
    not_accessible,
    primary_rate_limit,
    rate_limited,
    secondary_rate_limit,
    server_error,
)
from replaygate.github.api import GitHubApi
from replaygate.github.wire import GitHubApiError, clip_utf8

COMMENTS = "/repos/{repo}/issues/7/comments"


def _path(server: FakeGitHub, path: str = COMMENTS) -> str:
    return path.replace("{repo}", server.repository)


def _client(server: FakeGitHub, sleeps: list[float], **options: object) -> GitHubApi:
    defaults: dict[str, object] = {"jitter": lambda delay: delay, "write_interval": 0}
    return GitHubApi(
        server.url,
        server.token,
        server.repository,
        sleep=sleeps.append,
        **(defaults | options),  # type: ignore[arg-type]
    )


def test_every_request_carries_the_documented_headers(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    github_api.request("POST", _path(github_server), json={"body": "hello"})
    (call,) = github_server.calls("POST", COMMENTS)
    assert call.headers["accept"] == "application/vnd.github+json"
    assert call.headers["authorization"] == f"Bearer {github_server.token}"
    assert call.headers["x-github-api-version"] == "2022-11-28"
    assert call.headers["user-agent"].startswith("replaygate/")
    assert call.headers["content-type"] == "application/json"
    assert call.body == {"body": "hello"}


def test_a_502_is_retried_after_a_second(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.add_comments(7, 2)
    github_server.queue("GET", COMMENTS, server_error(502))
    assert len(github_api.request("GET", _path(github_server))) == 2
    assert github_sleeps == [1.0]
    assert len(github_server.calls("GET", COMMENTS)) == 2


def test_back_off_doubles_until_success(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.queue("GET", COMMENTS, server_error(500), server_error(503), server_error(502))
    assert github_api.request("GET", _path(github_server)) == []
    assert github_sleeps == [1.0, 2.0, 4.0]


def test_gives_up_after_max_attempts(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.queue("GET", COMMENTS, *[server_error(502)] * 4)
    with pytest.raises(GitHubApiError, match="502 Server Error; gave up after 4 attempts") as info:
        github_api.request("GET", _path(github_server))
    assert (info.value.status, info.value.transient) == (502, True)
    assert github_sleeps == [1.0, 2.0, 4.0]


def test_jitter_is_applied_to_back_off(github_server: FakeGitHub) -> None:
    sleeps: list[float] = []
    api = _client(github_server, sleeps, jitter=lambda delay: delay * 0.75)
    github_server.queue("GET", COMMENTS, server_error(502), server_error(502))
    api.request("GET", _path(github_server))
    assert sleeps == [0.75, 1.5]


def test_a_dropped_connection_is_retried(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.queue("GET", COMMENTS, dropped())
    assert github_api.request("GET", _path(github_server)) == []
    assert github_sleeps == [1.0]


def test_429_waits_as_long_as_retry_after_says(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.queue("GET", COMMENTS, rate_limited(retry_after=3), rate_limited(retry_after=1))
    assert github_api.request("GET", _path(github_server)) == []
    assert github_sleeps == [3.0, 1.0]


def test_429_without_a_header_waits_at_least_a_minute(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.queue("GET", COMMENTS, rate_limited(retry_after=None))
    github_api.request("GET", _path(github_server))
    assert github_sleeps == [60.0]


def test_secondary_rate_limit_without_a_header_waits_a_minute(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.queue("POST", COMMENTS, secondary_rate_limit())
    github_api.request("POST", _path(github_server), json={"body": "x"})
    assert github_sleeps == [60.0]
    assert len(github_server.comments[7]) == 1


def test_secondary_rate_limit_honours_retry_after(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.queue("GET", COMMENTS, secondary_rate_limit(retry_after=5))
    github_api.request("GET", _path(github_server))
    assert github_sleeps == [5.0]


def test_secondary_rate_limit_that_persists_gives_up_past_max_wait(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.queue("GET", COMMENTS, secondary_rate_limit(), secondary_rate_limit())
    with pytest.raises(
        GitHubApiError, match=r"rate limited.*gave up rather than wait 120s"
    ) as info:
        github_api.request("GET", _path(github_server))
    assert github_sleeps == [60.0]
    assert info.value.rate_limited and not info.value.permission_denied


def test_a_wait_past_the_deadline_is_not_waited_and_nothing_more_is_sent(
    github_server: FakeGitHub,
) -> None:
    sleeps: list[float] = []
    api = _client(github_server, sleeps, deadline=30)
    github_server.queue("GET", COMMENTS, secondary_rate_limit(retry_after=45))
    with pytest.raises(GitHubApiError, match=r"waiting 45s more would pass the deadline$"):
        api.request("GET", _path(github_server))
    with pytest.raises(GitHubApiError, match=r"not sent: GitHub asked for no requests"):
        api.request("POST", _path(github_server), json={"body": "x"})
    assert sleeps == [] and len(github_server.requests) == 1


def test_past_the_deadline_nothing_is_sent(github_server: FakeGitHub) -> None:
    now = [0.0]
    api = _client(github_server, [], deadline=10, monotonic=lambda: now[0])
    api.request("GET", _path(github_server))
    now[0] = 10.0
    with pytest.raises(
        GitHubApiError, match=r"not sent: the 10s deadline for the GitHub API"
    ) as info:
        api.request("GET", _path(github_server))
    assert info.value.stopped and not info.value.transient
    assert len(github_server.requests) == 1


def test_primary_rate_limit_waits_until_the_reset(github_server: FakeGitHub) -> None:
    sleeps: list[float] = []
    api = _client(github_server, sleeps, clock=lambda: 1_000.0)
    github_server.queue("GET", COMMENTS, primary_rate_limit(reset_epoch=1_030))
    api.request("GET", _path(github_server))
    assert sleeps == [31.0]


def test_primary_rate_limit_an_hour_away_fails_without_waiting(github_server: FakeGitHub) -> None:
    sleeps: list[float] = []
    api = _client(github_server, sleeps, clock=lambda: 1_000.0)
    github_server.queue("GET", COMMENTS, primary_rate_limit(reset_epoch=4_600))
    with pytest.raises(GitHubApiError, match="API rate limit exceeded") as info:
        api.request("GET", _path(github_server))
    assert sleeps == []
    assert (info.value.status, info.value.permission_denied) == (403, False)


@pytest.mark.parametrize(
    ("reply", "method", "denied"),
    [
        (Reply(422, {"message": "Validation Failed"}), "POST", False),
        (Reply(400, {"message": "Problems parsing JSON"}), "POST", False),
        (Reply(401, {"message": "Bad credentials"}), "GET", True),
        (not_accessible(), "POST", True),
        (Reply(404, {"message": "Not Found"}), "POST", True),
        (Reply(404, {"message": "Not Found"}), "GET", False),
    ],
)
def test_other_client_errors_are_not_retried(
    github_api: GitHubApi,
    github_server: FakeGitHub,
    github_sleeps: list[float],
    reply: Reply,
    method: str,
    denied: bool,
) -> None:
    github_server.queue(method, COMMENTS, reply)
    body = {"body": "x"} if method == "POST" else None
    with pytest.raises(GitHubApiError, match=f"{reply.status} {reply.body['message']}$") as info:
        github_api.request(method, _path(github_server), json=body)
    assert (info.value.status, info.value.permission_denied) == (reply.status, denied)
    assert len(github_server.calls(method, COMMENTS)) == 1
    assert github_sleeps == []


def test_retry_false_raises_a_502_at_once(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.queue("POST", COMMENTS, server_error(502, apply=True))
    with pytest.raises(GitHubApiError) as info:
        github_api.request("POST", _path(github_server), json={"body": "x"}, retry=False)
    assert info.value.transient
    assert len(github_server.calls("POST", COMMENTS)) == 1
    assert github_sleeps == []


def test_retry_false_still_waits_out_a_rate_limit(
    github_api: GitHubApi, github_server: FakeGitHub, github_sleeps: list[float]
) -> None:
    github_server.queue("POST", COMMENTS, rate_limited(retry_after=2))
    github_api.request("POST", _path(github_server), json={"body": "x"}, retry=False)
    assert github_sleeps == [2.0]
    assert len(github_server.comments[7]) == 1


def test_writes_are_paced_a_second_apart(github_server: FakeGitHub) -> None:
    sleeps: list[float] = []
    api = _client(github_server, sleeps, clock=lambda: 50.0, write_interval=1.0)
    api.request("GET", _path(github_server))
    api.request("POST", _path(github_server), json={"body": "one"})
    api.request("POST", _path(github_server), json={"body": "two"})
    assert sleeps == [1.0]


def test_the_token_never_reaches_an_error_or_a_log_line(
    github_api: GitHubApi,
    github_server: FakeGitHub,
    caplog: pytest.LogCaptureFixture,
) -> None:
    echo = {"message": f"token\n{github_server.token} rejected\r##[error]x"}
    github_server.queue("GET", COMMENTS, Reply(502, echo), Reply(422, echo))
    with caplog.at_level(logging.WARNING), pytest.raises(GitHubApiError) as info:
        github_api.request("GET", _path(github_server))
    message = str(info.value)
    assert github_server.token not in message
    assert github_server.token not in caplog.text
    assert "*** rejected" in message and "*** rejected" in caplog.text
    assert "\n" not in message and "\r" not in message and "##[" not in message
    assert github_server.token not in repr(github_api.__dict__)


def test_no_response_error_names_the_request_not_the_token(
    github_servers: Callable[..., FakeGitHub],
) -> None:
    server = github_servers()
    server.stop()
    api = _client(server, [])
    with pytest.raises(GitHubApiError, match=r"GET /repos/.*/comments: no response") as info:
        api.request("GET", _path(server))
    assert info.value.status is None and info.value.transient
    assert server.token not in str(info.value)


def test_paginates_every_page_with_the_requested_size(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    github_server.add_comments(7, 250)
    bodies = [c["body"] for c in github_api.paginate(_path(github_server), {"per_page": 100})]
    assert bodies == [f"unrelated comment {i}" for i in range(250)]
    pages = [call.query for call in github_server.calls("GET", COMMENTS)]
    assert pages == [
        {"per_page": "100"},
        {"per_page": "100", "page": "2"},
        {"per_page": "100", "page": "3"},
    ]


def test_paginates_with_the_default_page_size(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    github_server.add_comments(7, 95)
    assert len(list(github_api.paginate(_path(github_server)))) == 95
    assert len(github_server.calls("GET", COMMENTS)) == 4  # 30 a page


def test_enterprise_server_api_url_with_a_path(
    github_servers: Callable[..., FakeGitHub],
) -> None:
    server = github_servers(prefix="/api/v3")
    server.add_comments(7, 45)
    api = _client(server, [])
    assert server.url.endswith("/api/v3")
    assert len(list(api.paginate(_path(server), {"per_page": 20}))) == 45
    assert len(server.calls("GET", COMMENTS)) == 3


def _next_link(url: str) -> Reply:
    return Reply(
        200, [{"id": 1, "body": "x", "user": {"login": "a"}}], {"Link": f'<{url}>; rel="next"'}
    )


@pytest.mark.parametrize(
    "foreign",
    [
        "http://evil.example{prefix}/repos/{repo}/issues/7/comments?page=2",
        "https://{netloc}{prefix}/repos/{repo}/issues/7/comments?page=2",
        "http://{netloc}/elsewhere/repos/{repo}/issues/7/comments?page=2",
        "http://{netloc}{prefix}/../elsewhere?page=2",
    ],
)
def test_a_next_link_off_the_api_is_refused(
    github_servers: Callable[..., FakeGitHub], foreign: str
) -> None:
    server = github_servers(prefix="/api/v3")
    netloc = server.url.split("/")[2]
    url = foreign.format(prefix="/api/v3", repo=server.repository, netloc=netloc)
    server.queue("GET", COMMENTS, _next_link(url))
    api = _client(server, [])
    with pytest.raises(GitHubApiError, match="refusing a next-page link off the API host"):
        list(api.paginate(_path(server)))
    assert len(server.requests) == 1


def test_a_next_link_to_another_port_sends_nothing_there(
    github_servers: Callable[..., FakeGitHub],
) -> None:
    server, elsewhere = github_servers(), github_servers()
    server.queue("GET", COMMENTS, _next_link(f"{elsewhere.url}{_path(server)}?page=2"))
    with pytest.raises(GitHubApiError, match="off the API host"):
        list(_client(server, []).paginate(_path(server)))
    assert elsewhere.requests == []


def test_a_next_link_that_loops_is_refused(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    url = f"{github_server.url}{_path(github_server)}?page=2"
    github_server.queue("GET", COMMENTS, _next_link(url), _next_link(url))
    with pytest.raises(GitHubApiError, match="loops"):
        list(github_api.paginate(_path(github_server)))


def test_a_redirect_to_another_host_does_not_carry_the_token(
    github_servers: Callable[..., FakeGitHub],
) -> None:
    server, elsewhere = github_servers(), github_servers()
    target = f"{elsewhere.url}{_path(server)}"
    server.queue("GET", COMMENTS, Reply(307, {"message": "Moved"}, {"Location": target}))
    with pytest.raises(GitHubApiError, match="401 Bad credentials"):
        _client(server, []).request("GET", _path(server))
    (arrived,) = elsewhere.requests
    assert "authorization" not in arrived.headers
    elsewhere.violations.clear()  # the missing Authorization is the point of this test


def test_the_fake_flags_a_request_without_the_documented_headers(
    github_server: FakeGitHub,
) -> None:
    response = requests.get(f"{github_server.url}{_path(github_server)}", timeout=5)
    assert response.status_code == 401
    assert response.json()["message"] == "Bad credentials"
    headers = {"Authorization": f"Bearer {github_server.token}"}
    response = requests.get(
        f"{github_server.url}{_path(github_server)}", headers=headers, timeout=5
    )
    assert response.status_code == 422
    assert "Accept is" in response.json()["errors"][0]["message"]
    assert len(github_server.violations) == 2
    github_server.violations.clear()


@pytest.mark.parametrize(
    ("url", "repository", "token"),
    [
        ("ftp://api.github.com", "o/r", "t"),
        ("api.github.com", "o/r", "t"),
        ("https://api.github.com", "o/r/x", "t"),
        ("https://api.github.com", "o r", "t"),
        ("https://api.github.com", "o/r", ""),
    ],
)
def test_bad_settings_are_refused(url: str, repository: str, token: str) -> None:
    with pytest.raises(GitHubApiError):
        GitHubApi(url, token, repository)


def test_lone_surrogates_are_sent_as_valid_json(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    github_api.request("POST", _path(github_server), json={"body": "a\ud800b"})
    assert github_server.comments[7][0]["body"] == "a?b"


def test_clip_utf8_counts_bytes_and_never_splits_a_character() -> None:
    assert clip_utf8("short", 10, "…") == "short"
    clipped = clip_utf8("é" * 10, 10, "+")
    assert clipped == "éééé+"
    assert len(clipped.encode()) <= 10


@pytest.mark.parametrize(
    "headers",
    [
        {"Retry-After": "\u00b2"},  # isdigit() holds for '²'; int() and float() refuse it
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "\u00b2"},
        # more digits than int() converts (4300): a ValueError, a traceback, before
        {"Retry-After": "9" * 5000},
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "9" * 5000},
    ],
)
def test_a_header_of_non_ascii_digits_counts_as_absent(
    github_api: GitHubApi,
    github_server: FakeGitHub,
    github_sleeps: list[float],
    headers: dict[str, str],
) -> None:
    github_server.queue("GET", COMMENTS, Reply(429, {"message": "slow down"}, headers))
    assert github_api.request("GET", _path(github_server)) == []
    assert github_sleeps == [60.0]


@pytest.fixture
def tokyo_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone 9 hours east of UTC (a POSIX TZ: no tz database needed)."""
    monkeypatch.setenv("TZ", "JST-9")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("tokyo_time")
@pytest.mark.parametrize("zone", ["GMT", "-0000"])  # -0000: a date in UTC, the zone unknown
def test_a_retry_after_date_is_utc_whatever_the_local_zone(
    github_server: FakeGitHub, zone: str
) -> None:
    sleeps: list[float] = []
    now = datetime(2026, 11, 26, 10, 0, 0, tzinfo=UTC).timestamp()
    api = _client(github_server, sleeps, clock=lambda: now)
    retry_after = {"Retry-After": f"Thu, 26 Nov 2026 10:00:30 {zone}"}
    github_server.queue("GET", COMMENTS, Reply(429, {"message": "slow down"}, retry_after))
    api.request("GET", _path(github_server))
    assert sleeps == [30.0]
