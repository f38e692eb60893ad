"""The sticky PR comment against the fake server: one comment, ours, updated in place."""

from __future__ import annotations

import pytest

from fake_github import BOT, FakeGitHub, dropped, not_accessible, server_error
from replaygate.github.api import GitHubApi
from replaygate.github.comment import (
    MARKER,
    MAX_BODY_BYTES,
    embed_fingerprints,
    find_comment,
    previous_fingerprints,
    upsert_comment,
)
from replaygate.github.wire import GitHubApiError

PR = 7
COMMENTS = "/repos/{repo}/issues/7/comments"


def _upsert(api: GitHubApi, body: str) -> str:
    existing = find_comment(api, PR, marker=MARKER, author=BOT)
    return upsert_comment(api, PR, body, existing, marker=MARKER, author=BOT)


def _ours(server: FakeGitHub) -> list[str]:
    return [c["body"] for c in server.comments[PR] if c["user"]["login"] == BOT]


@pytest.fixture
def busy_pr(github_server: FakeGitHub) -> FakeGitHub:
    """A PR with 3 pages of other people's comments, one of them planting our marker."""
    github_server.add_comments(PR, 120, login="reviewer")
    github_server.add_comment(PR, f"{MARKER}\nplanted: all contracts pass", login="mallory")
    github_server.add_comments(PR, 100, login="octocat")
    return github_server


def test_created_once_then_updated_in_place_across_three_runs(
    github_api: GitHubApi, busy_pr: FakeGitHub
) -> None:
    first, second = f"{MARKER}\n2 failed", f"{MARKER}\n1 failed"
    assert _upsert(github_api, first) == "created"
    assert _upsert(github_api, second) == "updated"
    assert _upsert(github_api, second) == "unchanged"
    assert _ours(busy_pr) == [second]
    assert len(busy_pr.calls("POST", COMMENTS)) == 1
    assert len(busy_pr.calls("PATCH")) == 1
    planted = [c for c in busy_pr.comments[PR] if c["user"]["login"] == "mallory"]
    assert planted[0]["body"] == f"{MARKER}\nplanted: all contracts pass"


def test_every_page_is_read_to_find_our_comment(github_api: GitHubApi, busy_pr: FakeGitHub) -> None:
    ours = busy_pr.add_comment(PR, f"{MARKER}\nold", login=BOT)
    found = find_comment(github_api, PR, marker=MARKER, author=BOT)
    assert found is not None and found.id == ours["id"]
    assert [c.query.get("page") for c in busy_pr.calls("GET", COMMENTS)] == [None, "2", "3"]


def test_a_marker_planted_by_another_author_is_ignored(
    github_api: GitHubApi, busy_pr: FakeGitHub
) -> None:
    assert find_comment(github_api, PR, marker=MARKER, author=BOT) is None
    assert _upsert(github_api, "report") == "created"
    assert len(_ours(busy_pr)) == 1


def test_without_a_known_author_any_marked_comment_counts(
    github_api: GitHubApi, busy_pr: FakeGitHub
) -> None:
    found = find_comment(github_api, PR, marker=MARKER, author=None)
    assert found is not None and found.author == "mallory"


def test_the_newest_of_several_of_ours_is_preferred(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    github_server.add_comment(PR, f"{MARKER}\nolder", login=BOT)
    newer = github_server.add_comment(PR, f"{MARKER}\nnewer", login=BOT)
    github_server.add_comment(PR, "not marked", login=BOT)
    found = find_comment(github_api, PR, marker=MARKER, author=BOT)
    assert found is not None and (found.id, found.body) == (newer["id"], f"{MARKER}\nnewer")


def test_a_post_that_502s_after_landing_is_not_repeated(
    github_api: GitHubApi, busy_pr: FakeGitHub
) -> None:
    busy_pr.queue("POST", COMMENTS, server_error(502, apply=True))
    assert _upsert(github_api, f"{MARKER}\nreport") == "created"
    assert _ours(busy_pr) == [f"{MARKER}\nreport"]
    assert len(busy_pr.calls("POST", COMMENTS)) == 1


def test_a_post_whose_connection_dropped_before_landing_is_sent_once_more(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    github_server.queue("POST", COMMENTS, dropped())
    assert _upsert(github_api, f"{MARKER}\nreport") == "created"
    assert _ours(github_server) == [f"{MARKER}\nreport"]
    assert len(github_server.calls("POST", COMMENTS)) == 2


def test_a_fork_pr_refusal_is_a_permission_error(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    github_server.queue("POST", COMMENTS, not_accessible())
    with pytest.raises(GitHubApiError) as info:
        _upsert(github_api, "report")
    assert info.value.permission_denied
    assert _ours(github_server) == []


def test_the_body_is_marked_valid_utf8_and_stable_across_runs(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    assert _upsert(github_api, "lone \ud800 surrogate") == "created"
    assert _ours(github_server) == [f"{MARKER}\nlone ? surrogate"]
    assert _upsert(github_api, "lone \ud800 surrogate") == "unchanged"


def test_a_huge_body_is_cut_to_the_size_limit(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    _upsert(github_api, MARKER + "ü" * 40_000)
    (body,) = _ours(github_server)
    assert len(body.encode("utf-8")) <= MAX_BODY_BYTES
    assert body.startswith(MARKER) and "cut to fit" in body


def test_fingerprints_round_trip_through_the_hidden_line() -> None:
    line = embed_fingerprints(["0123456789ab", "abcdef012345", "0123456789ab"])
    assert line == '<!-- replaygate:fingerprints ["0123456789ab", "abcdef012345"] -->'
    assert previous_fingerprints(f"{MARKER}\n{line}\n## report") == {"0123456789ab", "abcdef012345"}
    assert previous_fingerprints(f"{MARKER}\nno data line") == set()


@pytest.mark.parametrize("bad", ["ABCDEF012345", "0123456789a", "0123456789abc", "x-->\n<b>"])
def test_only_fingerprints_can_be_embedded(bad: str) -> None:
    with pytest.raises(ValueError, match="not a fingerprint"):
        embed_fingerprints(["0123456789ab", bad])


@pytest.mark.parametrize(
    "planted",
    [
        '<!-- replaygate:fingerprints ["0123456789ab", "--><script>", 7, "0123456789abcdef"] -->',
        '<!-- replaygate:fingerprints ["0123456789ab", {"a": 1}] -->',
    ],
)
def test_previous_fingerprints_keeps_only_well_formed_values(planted: str) -> None:
    assert previous_fingerprints(planted) == {"0123456789ab"}


def test_previous_fingerprints_survives_broken_json() -> None:
    assert previous_fingerprints('<!-- replaygate:fingerprints ["0123456789ab",] -->') == set()
    assert previous_fingerprints('<!-- replaygate:fingerprints {"a": 1} -->') == set()
