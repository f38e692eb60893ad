"""Action inputs as the runner names them, outputs as it parses them, and the event file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from runner_oracle import runner_outputs

from replaygate.github import env
from replaygate.github.env import InputError, read_event, read_inputs
from replaygate.results.verdict import FailOn


def test_defaults_when_the_runner_sets_nothing(tmp_path: Path) -> None:
    inputs = read_inputs({"GITHUB_WORKSPACE": str(tmp_path)})
    assert inputs == env.ActionInputs(
        packs=("packs",),
        junit_path="replaygate-junit.xml",
        json_path="replaygate-results.json",
        junit_family="xunit2",
        summary=True,
        annotations=True,
        check_run=False,
        pr_comment=False,
        baseline="",
        fail_on=FailOn.FAILURE,
        shard="",
        comment_author="github-actions[bot]",
        root="",
        merge=(),
        check_run_annotations=1000,
        api_deadline_seconds=60.0,
    )


def test_input_names_follow_the_runner() -> None:
    assert env.input_variable("junit_path") == "INPUT_JUNIT_PATH"
    assert env.input_variable("my input") == "INPUT_MY_INPUT"
    assert env.input_variable("fail-on") == "INPUT_FAIL-ON"  # hyphens survive: hence snake_case


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("False", False),
        ("FALSE", False),
        (" true\n", True),
    ],
)
def test_booleans_are_yaml_core_schema(value: str, expected: bool) -> None:
    assert env.get_bool({"INPUT_CHECK_RUN": value}, "check_run", not expected) is expected


@pytest.mark.parametrize("value", ["yes", "1", "on", "tRUE", "no"])
def test_other_booleans_are_a_one_line_error_naming_the_input(value: str) -> None:
    with pytest.raises(InputError) as caught:
        env.get_bool({"INPUT_PR_COMMENT": value}, "pr_comment", False)
    assert str(caught.value) == f"input 'pr_comment': expected true or false, got {value!r}"


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "INPUT_FAIL_ON",
            "always",
            "input 'fail_on': expected one of failure, never, got 'always'",
        ),
        ("INPUT_SHARD", "3/2", "input 'shard': shard '3/2': K must be between 1 and N"),
        ("INPUT_SHARD", "0/2", "input 'shard': shard '0/2': K must be between 1 and N"),
        ("INPUT_SHARD", "1/two", "input 'shard': shard must look like K/N (for example 2/4)"),
        ("INPUT_SUMMARY", "maybe", "input 'summary': expected true or false, got 'maybe'"),
        (
            "INPUT_CHECK_RUN_ANNOTATIONS",
            "-1",
            "input 'check_run_annotations': expected a whole number, got '-1'",
        ),
        (
            "INPUT_CHECK_RUN_ANNOTATIONS",
            "all",
            "input 'check_run_annotations': expected a whole number, got 'all'",
        ),
        (
            "INPUT_API_DEADLINE_SECONDS",
            "0",
            "input 'api_deadline_seconds': expected a number of seconds above 0, at most 86400, "
            "got '0'",
        ),
        (
            "INPUT_API_DEADLINE_SECONDS",
            "inf",
            "input 'api_deadline_seconds': expected a number of seconds above 0, at most 86400, "
            "got 'inf'",
        ),
        (
            "INPUT_API_DEADLINE_SECONDS",
            "1e10",  # past threading.TIMEOUT_MAX: a thread could not wait that long
            "input 'api_deadline_seconds': expected a number of seconds above 0, at most 86400, "
            "got '1e10'",
        ),
    ],
)
def test_bad_inputs_name_themselves(variable: str, value: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        read_inputs({variable: value})


def test_packs_split_on_newlines_commas_spaces_and_globs_expand(tmp_path: Path) -> None:
    for name in ("packs/a", "packs/b", "more/c"):
        (tmp_path / name).mkdir(parents=True)
    environ = {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_PACKS": "packs/*\nmore/c, missing/*  x"}
    inputs = read_inputs(environ | {"INPUT_SHARD": " 2/3 ", "INPUT_FAIL_ON": "never"})
    assert inputs.packs == ("packs/a", "packs/b", "more/c", "missing/*", "x")
    assert (inputs.shard, inputs.fail_on) == ("2/3", FailOn.NEVER)


def test_outputs_are_heredocs_the_runner_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("earlier<<EOF\nx\nEOF\n")
    values = {"plain": "1", "multi": "a\nb\n\nc", "tricky": "EOF\nghadelimiter_x\n"}
    env.write_outputs(str(path), values)
    written = path.read_text()
    assert runner_outputs(written) == {"earlier": "x", **values}
    delimiters = re.findall(r"<<(ghadelimiter_[0-9a-f-]{36})\n", written)
    assert len(set(delimiters)) == 3, "a fresh random delimiter for every value"


def test_an_output_name_that_could_break_the_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        env.write_outputs(str(tmp_path / "o"), {"a<<b": "x"})


def test_step_summary_appends(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    env.append_step_summary(str(path), "one\n")
    env.append_step_summary(str(path), "two \ud800\n")
    assert path.read_text() == "one\ntwo \\ud800\n"


def write_event(tmp_path: Path, payload: object) -> str:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return str(path)


def pull_request(head: str | None, base: str = "octo/repo") -> dict[str, object]:
    head_repo = {"full_name": head} if head else None
    return {
        "pull_request": {
            "number": 7,
            "head": {"sha": "h" * 40, "repo": head_repo},
            "base": {"sha": "b" * 40, "repo": {"full_name": base}},
        }
    }


@pytest.mark.parametrize("name", ["pull_request", "pull_request_target"])
@pytest.mark.parametrize(
    ("head", "fork"), [("octo/repo", False), ("fork/repo", True), (None, True)]
)
def test_pull_request_events(tmp_path: Path, name: str, head: str | None, fork: bool) -> None:
    environ = {
        "GITHUB_EVENT_NAME": name,
        "GITHUB_SHA": "m" * 40,
        "GITHUB_EVENT_PATH": write_event(tmp_path, pull_request(head)),
    }
    assert read_event(environ) == env.Event(name, "h" * 40, 7, fork)


@pytest.mark.parametrize(
    ("name", "payload", "sha"),
    [
        ("merge_group", {"merge_group": {"head_sha": "g" * 40}}, "g" * 40),
        ("push", {"after": "a" * 40}, "s" * 40),
        ("workflow_dispatch", {}, "s" * 40),
        ("pull_request", "not an object", "s" * 40),
    ],
)
def test_other_events_report_on_their_commit(
    tmp_path: Path, name: str, payload: object, sha: str
) -> None:
    environ = {
        "GITHUB_EVENT_NAME": name,
        "GITHUB_SHA": "s" * 40,
        "GITHUB_EVENT_PATH": write_event(tmp_path, payload),
    }
    event = read_event(environ)
    assert (event.head_sha, event.pr_number) == (sha, None)


def test_a_missing_event_file_is_not_fatal() -> None:
    environ = {"GITHUB_EVENT_NAME": "push", "GITHUB_SHA": "s", "GITHUB_EVENT_PATH": "/nonexistent"}
    assert read_event(environ) == env.Event("push", "s")


# Other scripts' digits pass str.isdigit() and float(): U+0663 (Arabic-Indic), U+FF13
# (fullwidth); isdigit() holds for U+00B2 ('²') too.
@pytest.mark.parametrize("value", ["\u0663", "\uff13", "\u00b2", "1_0", "5 0", "+5", "1e1"])
@pytest.mark.parametrize(
    ("variable", "expected"),
    [
        ("INPUT_API_DEADLINE_SECONDS", "input 'api_deadline_seconds': expected a number of"),
        ("INPUT_CHECK_RUN_ANNOTATIONS", "input 'check_run_annotations': expected a whole number"),
    ],
)
def test_numbers_are_ascii_digits_only(variable: str, expected: str, value: str) -> None:
    with pytest.raises(InputError) as caught:
        read_inputs({variable: value})
    message = str(caught.value)
    assert message.startswith(expected) and message.endswith(f"got {value!r}")


@pytest.mark.parametrize(("value", "seconds"), [("3", 3.0), ("2.5", 2.5), ("0.25", 0.25)])
def test_decimal_seconds_are_accepted(value: str, seconds: float) -> None:
    assert read_inputs({"INPUT_API_DEADLINE_SECONDS": value}).api_deadline_seconds == seconds


@pytest.mark.parametrize("name", ["pull_request", "pull_request_target"])
@pytest.mark.parametrize(
    ("head", "used"), [("octo/repo", True), ("fork/repo", False), (None, False)]
)
def test_the_cache_is_never_used_on_a_forks_pull_request(
    tmp_path: Path, name: str, head: str | None, used: bool
) -> None:
    environ = {
        "INPUT_CACHE": "true",
        "GITHUB_EVENT_NAME": name,
        "GITHUB_EVENT_PATH": write_event(tmp_path, pull_request(head)),
    }
    inputs = read_inputs(environ)
    assert inputs.cache is True
    assert inputs.cache_dir == (env.CACHE_DIR if used else "")


def workflow_run(head: str | None, base: str = "octo/repo") -> dict[str, object]:
    head_repo = {"full_name": head} if head else None
    run = {"event": "pull_request", "head_repository": head_repo, "repository": {"full_name": base}}
    return {"workflow_run": run, "repository": {"full_name": base}}


# A review of a fork's pull request runs in the pull request's cache scope, where the fork's
# own runs save; a workflow_run after a fork's run is on its behalf as pull_request_target is.
@pytest.mark.parametrize(
    ("name", "payload"),
    [
        ("pull_request_review", pull_request),
        ("pull_request_review_comment", pull_request),
        ("workflow_run", workflow_run),
    ],
)
@pytest.mark.parametrize(
    ("head", "used"), [("octo/repo", True), ("fork/repo", False), (None, False)]
)
def test_the_cache_is_never_used_on_other_events_of_a_forks_pull_request(
    tmp_path: Path, name: str, payload: Any, head: str | None, used: bool
) -> None:
    environ = {
        "INPUT_CACHE": "true",
        "GITHUB_EVENT_NAME": name,
        "GITHUB_EVENT_PATH": write_event(tmp_path, payload(head)),
    }
    assert read_inputs(environ).cache_dir == (env.CACHE_DIR if used else "")
    unreadable = {**environ, "GITHUB_EVENT_PATH": str(tmp_path / "missing.json")}
    assert read_inputs(unreadable).cache_dir == ""


@pytest.mark.parametrize("event", ["push", "merge_group", "workflow_dispatch"])
def test_the_cache_is_used_when_asked_on_other_events(tmp_path: Path, event: str) -> None:
    environ = {"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": write_event(tmp_path, {})}
    assert read_inputs(environ).cache_dir == ""
    assert read_inputs({**environ, "INPUT_CACHE": "true"}).cache_dir == env.CACHE_DIR


def test_an_unreadable_event_file_of_a_pull_request_disables_the_cache() -> None:
    environ = {
        "INPUT_CACHE": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": "/nonexistent",
    }
    assert read_inputs(environ).cache_dir == ""


_SAME = {"head": {"repo": {"full_name": "o/r"}}, "base": {"repo": {"full_name": "o/r"}}}
_FORK = {"head": {"repo": {"full_name": "f/r"}}, "base": {"repo": {"full_name": "o/r"}}}


@pytest.mark.parametrize(
    ("name", "payload", "fork"),
    [
        ("push", {}, False),
        ("pull_request", {"pull_request": _SAME}, False),
        ("pull_request", {"pull_request": _FORK}, True),
        ("pull_request_target", {"pull_request": _FORK}, True),
        ("pull_request_review", {"pull_request": _FORK}, True),
        ("pull_request_review_comment", {"pull_request": _SAME}, False),
        ("workflow_run", {"workflow_run": {"head_repository": {"full_name": "f/r"},
                                           "repository": {"full_name": "o/r"}}}, True),
        ("issue_comment", {"issue": {"number": 3}}, False),  # a comment on an issue
        ("issue_comment", {"issue": {"number": 3, "pull_request": {}}}, True),
        ("issue_comment", None, True),  # an event file that cannot be read
    ],
)  # fmt: skip
def test_one_rule_says_which_events_carry_a_forks_pull_request(
    tmp_path: Path, name: str, payload: Any, fork: bool
) -> None:
    """The same answer for the cache (not read) and for record and live runs (refused)."""
    event = tmp_path / "event.json"
    if payload is not None:
        event.write_text(json.dumps(payload))
    environ = {"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(event)}
    assert env.carries_fork_payload(environ) is fork
    assert env.trusts_cache(environ) is not fork
