"""The action's environment: INPUT_* inputs, the event, $GITHUB_OUTPUT and the step summary."""

from __future__ import annotations

import glob
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from replaygate.core.errors import UsageError
from replaygate.core.numerals import decimal_number, whole_number
from replaygate.report.junit_family import JunitFamily
from replaygate.results.shard import parse_shard
from replaygate.results.verdict import FailOn

DEFAULT_AUTHOR = "github-actions[bot]"  # the workflow token's login; GET /user is refused to it
DEFAULT_CHECK_RUN_ANNOTATIONS = 1000  # 20 requests of 50: a rate limit's worth of writes
DEFAULT_API_DEADLINE = 60.0  # seconds for every request to the API, together
PR_EVENTS = frozenset({"pull_request", "pull_request_target"})
# The events that can carry a fork's pull request (see carries_fork_payload): the one rule
# for the results cache (not read) and for record and live runs (refused)
FORK_EVENTS = PR_EVENTS | {
    "pull_request_review",
    "pull_request_review_comment",
    "workflow_run",
    "issue_comment",
}
# The runner mounts $RUNNER_TEMP/_github_home at /github/home in a Docker action's container:
# actions/cache saves and restores it there as ${{ runner.temp }}/_github_home/.cache/replaygate.
CACHE_DIR = "/github/home/.cache/replaygate"
_TRUE, _FALSE = ("true", "True", "TRUE"), ("false", "False", "FALSE")
_SEPARATORS = re.compile(r"[\s,]+")
_E = TypeVar("_E", bound=StrEnum)


Number = TypeVar("Number", int, float)


class InputError(UsageError):
    """An action input the run cannot use; the message names the input."""


@dataclass(frozen=True, slots=True)
class ActionInputs:
    packs: tuple[str, ...]
    junit_path: str
    json_path: str
    junit_family: JunitFamily
    summary: bool
    annotations: bool
    check_run: bool
    pr_comment: bool
    baseline: str
    fail_on: FailOn
    shard: str
    comment_author: str
    root: str
    merge: tuple[str, ...]  # results files to merge instead of running packs
    scenarios: str = ""  # where ai-tester scenarios live
    check_run_annotations: int = DEFAULT_CHECK_RUN_ANNOTATIONS
    api_deadline_seconds: float = DEFAULT_API_DEADLINE
    cache: bool = False  # the input: reuse results of unchanged cases (see cache_dir)
    cache_dir: str = ""  # where, or "" when not at all: not asked, or a fork's pull request


@dataclass(frozen=True, slots=True)
class Event:
    """What the run is about: the commit to report on and, for a pull request, its number."""

    name: str
    head_sha: str
    pr_number: int | None = None
    fork: bool = False


def input_variable(name: str) -> str:
    """The variable the runner sets for input ``name`` (spaces become underscores)."""
    return "INPUT_" + name.replace(" ", "_").upper()


def get_input(environ: Mapping[str, str], name: str, default: str = "") -> str:
    """An input, trimmed as @actions/core getInput trims it; ``default`` when empty or unset."""
    return environ.get(input_variable(name), "").strip() or default


def get_bool(environ: Mapping[str, str], name: str, default: bool) -> bool:
    """A boolean input read as getBooleanInput reads it (YAML 1.2 core schema)."""
    value = get_input(environ, name)
    if not value:
        return default
    if value in _TRUE or value in _FALSE:
        return value in _TRUE
    raise InputError(f"input '{name}': expected true or false, got {value[:80]!r}")


def get_choice(environ: Mapping[str, str], name: str, kind: type[_E], default: _E) -> _E:
    """An input that must be one of ``kind``'s values; the error lists them."""
    value = get_input(environ, name, default)
    try:
        return kind(value)
    except ValueError:
        valid = ", ".join(kind)
        raise InputError(f"input '{name}': expected one of {valid}, got {value[:80]!r}") from None


def get_shard(environ: Mapping[str, str]) -> str:
    value = get_input(environ, "shard")
    try:
        return str(parse_shard(value)) if value else ""
    except UsageError as error:
        raise InputError(f"input 'shard': {error}") from None


MAX_SECONDS = 86_400


def seconds(text: str) -> float:
    """``text`` as a finite number of seconds above 0; ValueError saying what was expected."""
    try:
        value = decimal_number(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
        # a thread's join() takes nothing longer (threading.TIMEOUT_MAX); a day is plenty
        raise ValueError(f"expected a number of seconds above 0, at most {MAX_SECONDS}")
    return value


def _get_parsed(
    environ: Mapping[str, str], name: str, parse: Callable[[str], Number], default: Number
) -> Number:
    value = get_input(environ, name)
    try:
        return parse(value) if value else default
    except ValueError as problem:
        raise InputError(f"input '{name}': {problem}, got {value[:80]!r}") from None


def split_list(value: str) -> list[str]:
    """Items separated by newlines, commas or spaces (a YAML block list or one line)."""
    return [item for item in _SEPARATORS.split(value) if item]


def expand(patterns: Iterable[str], workspace: str) -> tuple[str, ...]:
    """Globs expanded relative to ``workspace``, in order, without repeats.

    A pattern that matches nothing is kept as written, so that the run reports it.
    """
    found: dict[str, None] = {}
    for pattern in patterns:
        matches = sorted(glob.glob(pattern, root_dir=workspace, recursive=True))
        found.update(dict.fromkeys(matches or [pattern]))
    return tuple(found)


def workspace(environ: Mapping[str, str]) -> str:
    return environ.get("GITHUB_WORKSPACE") or os.curdir


def read_inputs(environ: Mapping[str, str]) -> ActionInputs:
    """The inputs of action.yml (all but github_token: see api_token), validated.

    Raises InputError naming the first bad one.
    """
    root = workspace(environ)
    return ActionInputs(
        packs=expand(split_list(get_input(environ, "packs", "packs")), root),
        junit_path=get_input(environ, "junit_path", "replaygate-junit.xml"),
        json_path=get_input(environ, "json_path", "replaygate-results.json"),
        junit_family=get_choice(environ, "junit_family", JunitFamily, JunitFamily.XUNIT2),
        summary=get_bool(environ, "summary", True),
        annotations=get_bool(environ, "annotations", True),
        check_run=get_bool(environ, "check_run", False),
        pr_comment=get_bool(environ, "pr_comment", False),
        baseline=get_input(environ, "baseline"),
        fail_on=get_choice(environ, "fail_on", FailOn, FailOn.FAILURE),
        shard=get_shard(environ),
        comment_author=get_input(environ, "comment_author", DEFAULT_AUTHOR),
        root=get_input(environ, "root"),
        merge=expand(split_list(get_input(environ, "merge")), root),
        scenarios=get_input(environ, "scenarios"),
        check_run_annotations=_get_parsed(
            environ, "check_run_annotations", whole_number, DEFAULT_CHECK_RUN_ANNOTATIONS
        ),
        api_deadline_seconds=_get_parsed(
            environ, "api_deadline_seconds", seconds, DEFAULT_API_DEADLINE
        ),
        cache=get_bool(environ, "cache", False),
        cache_dir=CACHE_DIR if get_bool(environ, "cache", False) and trusts_cache(environ) else "",
    )


def trusts_cache(environ: Mapping[str, str]) -> bool:
    """Whether the run may read the results cache: not for a fork's pull request, whose
    earlier run could have written the cache it would restore."""
    return not carries_fork_payload(environ)


def carries_fork_payload(environ: Mapping[str, str]) -> bool:
    """Whether the event may be about a fork's pull request, whose code or data the run
    would then act on: the pull request's own events and its reviews when its head
    repository is not the base repository, a workflow_run of another repository's head,
    and a comment on a pull request (its payload does not say where the head is). An event
    of these whose file cannot be read is taken for a fork's."""
    name = environ.get("GITHUB_EVENT_NAME", "")
    if name not in FORK_EVENTS:
        return False
    payload = _load_event(environ.get("GITHUB_EVENT_PATH", ""))
    if name == "issue_comment":
        on_an_issue = isinstance(_dig(payload, "issue"), dict)  # {} when it cannot be read
        return not on_an_issue or _dig(payload, "issue", "pull_request") is not None
    if name == "workflow_run":
        head = _text(payload, "workflow_run", "head_repository", "full_name")
        base = _text(payload, "workflow_run", "repository", "full_name")
    else:
        head = _text(payload, "pull_request", "head", "repo", "full_name")
        base = _text(payload, "pull_request", "base", "repo", "full_name")
    return not head or head != base


def api_token(environ: Mapping[str, str]) -> str:
    """The token for the REST API: the action's input, else GITHUB_TOKEN (for the CLI).

    Read where it is used, never put in ActionInputs or on a command line.
    """
    return get_input(environ, "github_token") or environ.get("GITHUB_TOKEN", "").strip()


def write_outputs(path: str, outputs: Mapping[str, str]) -> None:
    """Append step outputs to $GITHUB_OUTPUT as ``name<<delimiter`` heredocs."""
    with open(path, "a", encoding="utf-8", errors="backslashreplace", newline="\n") as handle:
        for name, value in outputs.items():
            handle.write(_heredoc(name, value))


def _heredoc(name: str, value: str) -> str:
    if not name or any(bad in name for bad in ("<<", "=", "\n", "\r")):
        raise ValueError(f"not an output name: {name!r}")
    import uuid  # only the action writes outputs: a millisecond of every start otherwise

    delimiter = f"ghadelimiter_{uuid.uuid4()}"
    while delimiter in value:  # a value cannot guess a fresh uuid4; be sure all the same
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def append_step_summary(path: str, markdown: str) -> None:
    with open(path, "a", encoding="utf-8", errors="backslashreplace", newline="\n") as handle:
        handle.write(markdown)


def read_event(environ: Mapping[str, str]) -> Event:
    """The event the workflow runs for; an unreadable event file leaves only GITHUB_SHA."""
    name = environ.get("GITHUB_EVENT_NAME", "")
    payload = _load_event(environ.get("GITHUB_EVENT_PATH", ""))
    sha = environ.get("GITHUB_SHA", "")
    if name in PR_EVENTS:
        return _pull_request_event(name, payload, sha)
    if name == "merge_group":
        return Event(name, _text(payload, "merge_group", "head_sha") or sha)
    return Event(name, sha)


def _pull_request_event(name: str, payload: Any, sha: str) -> Event:
    number = _dig(payload, "pull_request", "number")
    head = _text(payload, "pull_request", "head", "repo", "full_name")
    base = _text(payload, "pull_request", "base", "repo", "full_name")
    return Event(
        name,
        _text(payload, "pull_request", "head", "sha") or sha,
        number if isinstance(number, int) and not isinstance(number, bool) else None,
        fork=head != base or not head,  # a deleted fork has no head repository
    )


def _load_event(path: str) -> Any:
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def _dig(payload: Any, *keys: str) -> Any:
    for key in keys:
        payload = payload.get(key) if isinstance(payload, dict) else None
    return payload


def _text(payload: Any, *keys: str) -> str:
    value = _dig(payload, *keys)
    return value if isinstance(value, str) else ""
