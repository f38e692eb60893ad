"""The sticky pull-request comment: found by its hidden marker and its author, edited in place."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from replaygate.core.fingerprint import is_fingerprint

if TYPE_CHECKING:  # the API client (and requests) is imported only when a comment is sent
    from replaygate.github.api import GitHubApi

MARKER = "<!-- replaygate:pr-comment -->"
MAX_BODY_BYTES = 65_535  # GitHub allows 65,536 characters; counted in bytes to be safe
BODY_CUT = "\n\n… (cut to fit GitHub's size limit: the job's step summary has it all)"
_FINGERPRINTS = re.compile(r"<!-- replaygate:fingerprints (\[[^\]\n]*\]) -->")

Outcome = Literal["created", "updated", "unchanged"]


@dataclass(frozen=True, slots=True)
class Comment:
    id: int
    author: str
    body: str


def find_comment(
    api: GitHubApi, issue_number: int, *, marker: str, author: str | None
) -> Comment | None:
    """Our comment: the newest that starts with ``marker`` and, if given, is by ``author``.

    Every page is read: the comment can be anywhere in a long discussion, and a
    marker that someone else planted in their own comment is not ours.
    """
    path = api.repo_path(f"/issues/{issue_number}/comments")
    comments = (_comment(item) for item in api.paginate(path, {"per_page": 100}))
    ours = [c for c in comments if c is not None and _is_ours(c, marker, author)]
    return max(ours, key=lambda comment: comment.id, default=None)


def upsert_comment(
    api: GitHubApi,
    issue_number: int,
    body: str,
    existing: Comment | None,
    *,
    marker: str,
    author: str | None,
) -> Outcome:
    """Edit our comment in place, or create it once; never a second copy.

    ``existing`` is what find_comment returned in this run: the caller has listed the
    pull request's comments already (for the previous run's fingerprints), once.
    """
    from replaygate.github.wire import GitHubApiError

    body = _prepared(body, marker)
    if existing is not None:
        return _update(api, existing, body)
    path = api.repo_path(f"/issues/{issue_number}/comments")
    try:
        api.request("POST", path, json={"body": body}, retry=False)
        return "created"
    except GitHubApiError as error:
        if not error.transient:
            raise
    # The POST may have landed before the connection broke: look before posting again.
    found = find_comment(api, issue_number, marker=marker, author=author)
    if found is None:
        api.request("POST", path, json={"body": body}, retry=False)
    else:
        _update(api, found, body)
    return "created"


def embed_fingerprints(fingerprints: Iterable[str]) -> str:
    """The hidden line that carries this run's failing fingerprints to the next run."""
    values = sorted(set(fingerprints))
    bad = [value for value in values if not is_fingerprint(value)]
    if bad:
        raise ValueError(f"not a fingerprint (12 lowercase hex digits): {bad[0]!r}")
    return f"<!-- replaygate:fingerprints {json.dumps(values)} -->"


def previous_fingerprints(body: str) -> set[str]:
    """The fingerprints embedded in ``body`` by embed_fingerprints; anything else is dropped."""
    match = _FINGERPRINTS.search(body)
    if match is None:
        return set()
    try:
        values = json.loads(match.group(1))
    except ValueError:
        return set()
    items = values if isinstance(values, list) else []
    return {item for item in items if is_fingerprint(item)}


def _update(api: GitHubApi, comment: Comment, body: str) -> Literal["updated", "unchanged"]:
    if comment.body == body:
        return "unchanged"
    path = api.repo_path(f"/issues/comments/{comment.id}")
    api.request("PATCH", path, json={"body": body})  # idempotent: safe to retry
    return "updated"


def _prepared(body: str, marker: str) -> str:
    """The body as GitHub will store it: marker first, valid UTF-8, within the size limit."""
    from replaygate.github.wire import clip_utf8

    if not body.startswith(marker):
        body = f"{marker}\n{body}"
    clean = body.encode("utf-8", "replace").decode("utf-8")
    return clip_utf8(clean, MAX_BODY_BYTES, BODY_CUT)


def _is_ours(comment: Comment, marker: str, author: str | None) -> bool:
    return comment.body.startswith(marker) and (author is None or comment.author == author)


def _comment(item: dict[str, Any]) -> Comment | None:
    user = item.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    comment_id, body = item.get("id"), item.get("body")
    if not (isinstance(comment_id, int) and isinstance(login, str) and isinstance(body, str)):
        return None
    return Comment(id=comment_id, author=login, body=body)
