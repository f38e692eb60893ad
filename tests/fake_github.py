"""A fake GitHub REST API on 127.0.0.1 that checks every request against the documented shapes."""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeGuard
from urllib.parse import parse_qsl, urlencode, urlsplit

TOKEN = "ghs_FAKEtoken0123456789abcdefghijklmnopq"
REPOSITORY = "octo-org/octo-repo"
BOT = "github-actions[bot]"
DOCS = "https://docs.github.com/rest"


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it; ``path`` is without the API prefix or query."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names in lower case
    body: Any  # parsed JSON, or None


@dataclass(frozen=True)
class Reply:
    """A scripted answer. ``apply``: do the request's work first (a 502 after the create)."""

    status: int
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    apply: bool = False
    drop: bool = False  # close the connection without answering: a connection error


def server_error(status: int = 502, *, apply: bool = False) -> Reply:
    return Reply(status, {"message": "Server Error"}, apply=apply)


def dropped(*, apply: bool = False) -> Reply:
    return Reply(0, drop=True, apply=apply)


def rate_limited(retry_after: int | None = 1) -> Reply:
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return Reply(429, {"message": "Too Many Requests", "documentation_url": DOCS}, headers)


def secondary_rate_limit(retry_after: int | None = None) -> Reply:
    message = "You have exceeded a secondary rate limit. Please wait a few minutes."
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return Reply(403, {"message": message, "documentation_url": DOCS}, headers)


def primary_rate_limit(reset_epoch: int) -> Reply:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset_epoch)}
    return Reply(403, {"message": "API rate limit exceeded", "documentation_url": DOCS}, headers)


def not_accessible() -> Reply:
    """What the workflow token gets on a fork's pull request, or without the permission."""
    return Reply(
        403, {"message": "Resource not accessible by integration", "documentation_url": DOCS}
    )


Response = tuple[int, Any, dict[str, str]]
Handler = Callable[["FakeGitHub", re.Match[str], Recorded], Response]


class FakeGitHub:
    """Check runs and issue comments, stateful; faults scripted per method and path.

    Every request is recorded in ``requests``; every departure from the REST API's
    documented contract is answered as GitHub would (401/400/422/404) and listed in
    ``violations`` (the pytest fixture fails the test when any remain).
    """

    def __init__(
        self,
        *,
        token: str = TOKEN,
        repository: str = REPOSITORY,
        bot: str = BOT,
        prefix: str = "",
    ) -> None:
        self.token, self.repository, self.bot, self.prefix = token, repository, bot, prefix
        self.requests: list[Recorded] = []
        self.violations: list[str] = []
        self.check_runs: dict[int, dict[str, Any]] = {}
        self.comments: dict[int, list[dict[str, Any]]] = defaultdict(list)
        self._replies: dict[tuple[str, str], deque[Reply]] = defaultdict(deque)
        self._ids = iter(range(1001, 10**9))
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _RequestHandler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self  # type: ignore[attr-defined]  # read back by _RequestHandler
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """The API URL to give as GITHUB_API_URL."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}{self.prefix}"

    def start(self) -> FakeGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- scripting and seeding -------------------------------------------------------

    def queue(self, method: str, path: str, *replies: Reply) -> None:
        """Answer the next requests to ``method path`` with ``replies``, in order.

        "{repo}" in ``path`` is expanded; ``*`` matches anything (``check-runs/*``).
        """
        self._replies[(method, path.replace("{repo}", self.repository))].extend(replies)

    def add_comment(self, issue: int, body: str, login: str = "octocat") -> dict[str, Any]:
        comment_id = next(self._ids)
        html_url = f"https://github.com/{self.repository}/pull/{issue}#issuecomment-{comment_id}"
        user = {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"}
        comment = {"id": comment_id, "body": body, "user": user, "html_url": html_url}
        self.comments[issue].append(comment)
        return comment

    def add_comments(self, issue: int, count: int, login: str = "octocat") -> None:
        for index in range(count):
            self.add_comment(issue, f"unrelated comment {index}", login)

    def calls(self, method: str | None = None, path: str | None = None) -> list[Recorded]:
        """The recorded requests, filtered by method and by path ("{repo}" is expanded)."""
        wanted = None if path is None else path.replace("{repo}", self.repository)
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and (wanted is None or r.path == wanted)
        ]

    # --- request handling --------------------------------------------------------------

    def handle(
        self, method: str, target: str, headers: Mapping[str, str], raw: bytes
    ) -> Response | None:
        """The response to one request, or None to drop the connection."""
        parts = urlsplit(target)
        inside = parts.path.startswith(self.prefix + "/")
        path = parts.path.removeprefix(self.prefix) if inside else parts.path
        try:
            body, bad_json = _parse(raw), False
        except ValueError:
            body, bad_json = None, True
        record = Recorded(method, path, dict(parse_qsl(parts.query)), dict(headers), body)
        with self._lock:
            self.requests.append(record)
            if bad_json:
                return self._refuse(400, f"{method} {path}: the body is not UTF-8 JSON", [])
            if not inside:
                return self._refuse(404, f"{method} {path}: outside {self.prefix}", [])
            return self._answer(record, raw)

    def _answer(self, record: Recorded, raw: bytes) -> Response | None:
        where = f"{record.method} {record.path}"
        if record.headers.get("authorization") != f"Bearer {self.token}":
            return self._refuse(401, f"{where}: Authorization is not 'Bearer <token>'", [])
        route = _route(record)
        if route is None:
            return self._refuse(404, f"{where}: no such endpoint", [])
        handler, match = route
        if match.groupdict().get("repo", self.repository) != self.repository:
            return self._refuse(404, f"{where}: not the repository {self.repository}", [])
        problems = header_problems(record, raw, self.token)
        problems += body_problems(handler.__name__, record.body)
        if problems:
            return self._refuse(422, f"{where}: {'; '.join(problems)}", problems)
        return self._scripted(record, handler, match)

    def _scripted(
        self, record: Recorded, handler: Handler, match: re.Match[str]
    ) -> Response | None:
        queued = [
            replies
            for (method, pattern), replies in self._replies.items()
            if method == record.method and replies and fnmatchcase(record.path, pattern)
        ]
        if not queued:
            return handler(self, match, record)
        reply = queued[0].popleft()
        if reply.apply:
            handler(self, match, record)
        return None if reply.drop else (reply.status, reply.body, dict(reply.headers))

    def _refuse(self, status: int, violation: str, problems: list[str]) -> Response:
        self.violations.append(violation)
        messages = {400: "Problems parsing JSON", 401: "Bad credentials", 403: "Forbidden"}
        messages[404] = "Not Found"
        body: dict[str, Any] = {"message": messages.get(status, "Validation Failed")}
        if problems:
            body["errors"] = [
                {"resource": "Request", "code": "invalid", "message": p} for p in problems
            ]
        body["documentation_url"] = DOCS
        return status, body, {}

    # --- endpoints ------------------------------------------------------------------------

    def create_check_run(self, match: re.Match[str], record: Recorded) -> Response:
        run_id = next(self._ids)
        body = record.body
        run = {
            key: body.get(key)
            for key in ("name", "head_sha", "status", "conclusion", "external_id")
        }
        html_url = f"https://github.com/{self.repository}/runs/{run_id}"
        run.update(id=run_id, html_url=html_url, output={}, annotations=[])
        self.check_runs[run_id] = run
        self._apply_output(run, body.get("output"))
        return 201, self._run_json(run), {}

    def update_check_run(self, match: re.Match[str], record: Recorded) -> Response:
        run = self.check_runs.get(int(match.group("id")))
        if run is None:
            return self._refuse(404, f"PATCH {record.path}: no such check run", [])
        run.update({k: v for k, v in record.body.items() if k in ("status", "conclusion", "name")})
        self._apply_output(run, record.body.get("output"))
        return 200, self._run_json(run), {}

    def get_check_run(self, match: re.Match[str], record: Recorded) -> Response:
        run = self.check_runs.get(int(match.group("id")))
        if run is None:
            return self._refuse(404, f"GET {record.path}: no such check run", [])
        return 200, self._run_json(run), {}

    def list_check_runs(self, match: re.Match[str], record: Recorded) -> Response:
        name = record.query.get("check_name")
        runs = [
            self._run_json(run)
            for run in self.check_runs.values()
            if run["head_sha"] == match.group("ref") and name in (None, run["name"])
        ]
        items, links = self._page(runs, record)
        return 200, {"total_count": len(runs), "check_runs": items}, links

    def list_comments(self, match: re.Match[str], record: Recorded) -> Response:
        comments = sorted(self.comments[int(match.group("number"))], key=lambda c: c["id"])
        items, links = self._page(comments, record)
        return 200, items, links

    def create_comment(self, match: re.Match[str], record: Recorded) -> Response:
        return 201, self.add_comment(int(match.group("number")), record.body["body"], self.bot), {}

    def update_comment(self, match: re.Match[str], record: Recorded) -> Response:
        comment_id = int(match.group("id"))
        found = [c for cs in self.comments.values() for c in cs if c["id"] == comment_id]
        if not found:
            return self._refuse(404, f"PATCH {record.path}: no such comment", [])
        if found[0]["user"]["login"] != self.bot:
            return self._refuse(403, f"PATCH {record.path}: edits another user's comment", [])
        found[0]["body"] = record.body["body"]
        return 200, found[0], {}

    def get_user(self, match: re.Match[str], record: Recorded) -> Response:
        self.violations.append("GET /user: refused to the workflow token, never to be called")
        return not_accessible().status, not_accessible().body, {}

    def _apply_output(self, run: dict[str, Any], output: Any) -> None:
        if not isinstance(output, dict):
            return
        run["output"].update({k: output[k] for k in ("title", "summary", "text") if k in output})
        run["annotations"].extend(output.get("annotations", []))

    def _run_json(self, run: dict[str, Any]) -> dict[str, Any]:
        output = {**run["output"], "annotations_count": len(run["annotations"])}
        return {k: v for k, v in run.items() if k != "annotations"} | {"output": output}

    def _page(self, items: list[Any], record: Recorded) -> tuple[list[Any], dict[str, str]]:
        """The page of ``items`` the query asks for (30 by default, at most 100) and its
        Link header, whose URLs keep the request's other parameters, as GitHub's do."""
        per_page = min(max(_int(record.query.get("per_page"), 30), 1), 100)
        page = max(_int(record.query.get("page"), 1), 1)
        last = max(1, -(-len(items) // per_page))
        kept = {k: v for k, v in record.query.items() if k not in ("per_page", "page")}
        return items[(page - 1) * per_page : page * per_page], self._link(
            record.path, kept, per_page, page, last
        )

    def _link(
        self, path: str, query: dict[str, str], per_page: int, page: int, last: int
    ) -> dict[str, str]:
        pages = {"first": 1, "prev": page - 1, "next": page + 1, "last": last}
        links = [
            f"<{self.url}{path}?{urlencode({**query, 'per_page': per_page, 'page': number})}>; "
            f'rel="{rel}"'
            for rel, number in pages.items()
            if 1 <= number <= last and (rel in ("next", "prev") or number != page)
        ]
        return {"Link": ", ".join(links)} if last > 1 else {}


_REPO = r"/repos/(?P<repo>[^/]+/[^/]+)"
ROUTES: list[tuple[str, re.Pattern[str], Handler]] = [
    ("POST", re.compile(rf"{_REPO}/check-runs"), FakeGitHub.create_check_run),
    ("PATCH", re.compile(rf"{_REPO}/check-runs/(?P<id>\d+)"), FakeGitHub.update_check_run),
    ("GET", re.compile(rf"{_REPO}/check-runs/(?P<id>\d+)"), FakeGitHub.get_check_run),
    ("GET", re.compile(rf"{_REPO}/commits/(?P<ref>[^/]+)/check-runs"), FakeGitHub.list_check_runs),
    ("GET", re.compile(rf"{_REPO}/issues/(?P<number>\d+)/comments"), FakeGitHub.list_comments),
    ("POST", re.compile(rf"{_REPO}/issues/(?P<number>\d+)/comments"), FakeGitHub.create_comment),
    ("PATCH", re.compile(rf"{_REPO}/issues/comments/(?P<id>\d+)"), FakeGitHub.update_comment),
    ("GET", re.compile(r"/user"), FakeGitHub.get_user),
]


def _route(record: Recorded) -> tuple[Handler, re.Match[str]] | None:
    for method, pattern, handler in ROUTES:
        match = pattern.fullmatch(record.path)
        if match is not None and method == record.method:
            return handler, match
    return None


def _parse(raw: bytes) -> Any:
    return json.loads(raw.decode("utf-8")) if raw else None


def _int(value: str | None, default: int) -> int:
    return int(value) if value is not None and value.isdigit() else default


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stalls

    def _serve(self) -> None:
        fake: FakeGitHub = self.server.fake  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        response = fake.handle(self.command, self.path, headers, raw)
        if response is None:
            self.close_connection = True
            return
        status, body, extra = response
        data = b"" if body is None else json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the recorded requests are the log."""


# --- what the REST API documents for each request ----------------------------------------

STATUSES = frozenset({"queued", "in_progress", "completed"})
CONCLUSIONS = frozenset(
    {"success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"}
)
LEVELS = frozenset({"notice", "warning", "failure"})
RUN_KEYS = frozenset(
    {"name", "details_url", "external_id", "status", "started_at", "conclusion", "completed_at"}
) | {"output", "actions"}
OUTPUT_KEYS = frozenset({"title", "summary", "text", "annotations", "images"})
ANNOTATION_KEYS = frozenset(
    {"path", "start_line", "end_line", "start_column", "end_column", "annotation_level"}
) | {"message", "title", "raw_details"}
SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def header_problems(record: Recorded, raw: bytes, token: str) -> list[str]:
    headers, problems = record.headers, []
    if headers.get("accept") != "application/vnd.github+json":
        problems.append(f"Accept is {headers.get('accept')!r}, not application/vnd.github+json")
    if headers.get("x-github-api-version") != "2022-11-28":
        problems.append("X-GitHub-Api-Version is not 2022-11-28")
    if not headers.get("user-agent"):
        problems.append("no User-Agent (GitHub refuses requests without one)")
    if record.method in ("POST", "PATCH") and not isinstance(record.body, dict):
        problems.append("the body is not a JSON object")
    if raw and not headers.get("content-type", "").startswith("application/json"):
        problems.append(f"Content-Type is {headers.get('content-type')!r}, not application/json")
    if token in raw.decode("utf-8", "replace") + record.path + repr(record.query):
        problems.append("the token is in the URL or the body")
    return problems


def body_problems(endpoint: str, body: Any) -> list[str]:
    rule = BODY_RULES.get(endpoint)
    return [] if rule is None or not isinstance(body, dict) else rule(body)


def _create_run(body: dict[str, Any]) -> list[str]:
    problems = _unknown(body, RUN_KEYS | {"head_sha"}, "") + _text(body, "name", "")
    if not SHA.fullmatch(str(body.get("head_sha", ""))):
        problems.append(f"head_sha {body.get('head_sha')!r} is not a commit SHA")
    if body.get("status") == "completed" and "conclusion" not in body:
        problems.append("conclusion is required with status completed")
    return problems + _run(body)


def _update_run(body: dict[str, Any]) -> list[str]:
    return _unknown(body, RUN_KEYS, "") + _run(body)


def _run(body: dict[str, Any]) -> list[str]:
    problems = []
    if body.get("status", "completed") not in STATUSES:
        problems.append(f"status {body.get('status')!r} is not one of {sorted(STATUSES)}")
    if body.get("conclusion", "success") not in CONCLUSIONS:
        problems.append(f"conclusion {body.get('conclusion')!r} is not allowed")
    return problems + (_output(body["output"]) if "output" in body else [])


def _output(output: Any) -> list[str]:
    if not isinstance(output, dict):
        return ["output is not an object"]
    problems = _unknown(output, OUTPUT_KEYS, "output.")
    problems += _text(output, "title", "output.") + _text(output, "summary", "output.")
    problems += _too_long(output, "title", "output.", chars=255)
    problems += _too_long(output, "summary", "output.", size=65_535)
    problems += _too_long(output, "text", "output.", size=65_535)
    annotations = output.get("annotations", [])
    if not isinstance(annotations, list):
        return [*problems, "output.annotations is not a list"]
    if len(annotations) > 50:
        problems.append(f"output.annotations has {len(annotations)} items (at most 50)")
    for index, annotation in enumerate(annotations):
        problems += _annotation(annotation, f"output.annotations[{index}].")
    return problems


def _annotation(item: Any, where: str) -> list[str]:
    if not isinstance(item, dict):
        return [f"{where} is not an object"]
    problems = _unknown(item, ANNOTATION_KEYS, where)
    problems += _text(item, "path", where) + _text(item, "message", where)
    start, end = item.get("start_line"), item.get("end_line")
    if not (_is_int(start) and _is_int(end) and 1 <= start <= end):
        problems.append(f"{where}start_line/end_line {start!r}/{end!r}: need 1 <= start <= end")
    if ("start_column" in item or "end_column" in item) and start != end:
        problems.append(f"{where}columns are only allowed when start_line == end_line")
    if item.get("annotation_level") not in LEVELS:
        problems.append(f"{where}annotation_level {item.get('annotation_level')!r} not allowed")
    if str(item.get("path", "")).startswith("/") or "\\" in str(item.get("path", "")):
        problems.append(f"{where}path must be relative to the repository root, with slashes")
    problems += _too_long(item, "title", where, chars=255)
    problems += _too_long(item, "message", where, size=65_536)
    return problems + _too_long(item, "raw_details", where, size=65_536)


def _comment(body: dict[str, Any]) -> list[str]:
    problems = _unknown(body, frozenset({"body"}), "") + _text(body, "body", "")
    return problems + _too_long(body, "body", "", chars=65_536)


def _unknown(item: dict[str, Any], allowed: frozenset[str], where: str) -> list[str]:
    return [f"{where}{key} is not a documented field" for key in sorted(set(item) - allowed)]


def _text(item: dict[str, Any], key: str, where: str) -> list[str]:
    value = item.get(key)
    return [] if isinstance(value, str) and value else [f"{where}{key} is required (a string)"]


def _too_long(
    item: dict[str, Any], key: str, where: str, *, chars: int = 0, size: int = 0
) -> list[str]:
    value = item.get(key)
    if not isinstance(value, str):
        return []
    if chars and len(value) > chars:
        return [f"{where}{key} has {len(value)} characters (at most {chars})"]
    if size and len(value.encode("utf-8", "replace")) > size:
        return [f"{where}{key} has more than {size} bytes"]
    return []


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


BODY_RULES: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "create_check_run": _create_run,
    "update_check_run": _update_run,
    "create_comment": _comment,
    "update_comment": _comment,
}
