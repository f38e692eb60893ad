"""Check runs against the fake server: batches of 50, limits, no duplicate after a 5xx."""

from __future__ import annotations

from typing import Any

import pytest

from fake_github import FakeGitHub, not_accessible, server_error
from replaygate.github.annotations import Level
from replaygate.github.api import GitHubApi
from replaygate.github.checks import (
    MAX_OUTPUT_BYTES,
    CheckAnnotation,
    create_check_run,
)
from replaygate.github.wire import GitHubApiError
from replaygate.results.verdict import Conclusion

SHA = "0123456789abcdef0123456789abcdef01234567"
RUNS = "/repos/{repo}/check-runs"
ANY_RUN = "/repos/{repo}/check-runs/*"


def _annotations(count: int) -> list[CheckAnnotation]:
    return [
        CheckAnnotation(
            path=f"packs/p/contracts/c{i}.yaml",
            start_line=i + 1,
            end_line=i + 1,
            level=Level.FAILURE,
            message=f"$.a: failure {i} [wrong_tool] (abcdef{i:06d})",
            title=f"wrong_tool (abcdef{i:06d})",
        )
        for i in range(count)
    ]


def _create(api: GitHubApi, annotations: list[CheckAnnotation], **overrides: Any) -> int:
    options: dict[str, Any] = {
        "head_sha": SHA,
        "conclusion": Conclusion.FAILURE,
        "title": "3 failed",
        "summary": "## Summary",
        "annotations": annotations,
    }
    return create_check_run(api, **(options | overrides))


def _messages(run: dict[str, Any]) -> list[str]:
    return [annotation["message"] for annotation in run["annotations"]]


def test_up_to_50_annotations_go_in_one_completed_post(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    run_id = _create(github_api, _annotations(50))
    (post,) = github_server.calls("POST", RUNS)
    assert post.body["status"] == "completed"
    assert post.body["conclusion"] == "failure"
    assert post.body["head_sha"] == SHA
    assert post.body["output"]["title"] == "3 failed"
    assert len(post.body["output"]["annotations"]) == 50
    assert github_server.calls("PATCH") == []
    assert len(github_server.check_runs[run_id]["annotations"]) == 50


def test_more_than_50_annotations_are_patched_in_batches(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    annotations = _annotations(120)
    run_id = _create(github_api, annotations)
    patches = github_server.calls("PATCH", f"/repos/{{repo}}/check-runs/{run_id}")
    assert [len(p.body["output"]["annotations"]) for p in patches] == [50, 20]
    for patch in patches:  # the output object needs its title and summary every time
        assert patch.body["output"]["title"] == "3 failed"
        assert patch.body["output"]["summary"] == "## Summary"
    assert _messages(github_server.check_runs[run_id]) == [a.message for a in annotations]


def test_a_run_without_failures_has_no_annotations(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    run_id = _create(github_api, [], conclusion=Conclusion.SUCCESS)
    (post,) = github_server.calls("POST", RUNS)
    assert post.body["output"]["annotations"] == []
    assert "text" not in post.body["output"]
    assert github_server.check_runs[run_id]["conclusion"] == "success"


def test_title_summary_and_text_are_cut_to_the_limits(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    _create(github_api, [], title="t" * 300, summary="é" * 40_000)
    output = github_server.calls("POST", RUNS)[0].body["output"]
    assert len(output["title"]) == 255 and output["title"].endswith("…")
    assert len(output["summary"].encode("utf-8")) <= MAX_OUTPUT_BYTES
    assert "cut to fit GitHub's size limit" in output["summary"]


def test_annotation_json_is_kept_within_the_documented_limits() -> None:
    annotation = CheckAnnotation(
        path="a.yaml",
        start_line=0,
        end_line=-3,
        level=Level.NOTICE,
        message="m" * 100_000,
        title="t" * 400,
    )
    data = annotation.to_json()
    assert (data["start_line"], data["end_line"]) == (1, 1)
    assert data["annotation_level"] == "notice"
    assert len(data["title"]) == 255
    assert len(data["message"].encode()) <= 65_535 and data["message"].endswith("(cut)")
    bare = CheckAnnotation("a.yaml", 4, 9, Level.NOTICE, "").to_json()
    assert bare == {
        "path": "a.yaml",
        "start_line": 4,
        "end_line": 9,
        "annotation_level": "notice",
        "message": "(no message)",
    }


def test_a_502_after_the_run_was_created_does_not_create_a_second(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    github_server.queue("POST", RUNS, server_error(502, apply=True))
    run_id = _create(github_api, _annotations(60))
    assert list(github_server.check_runs) == [run_id]
    assert len(github_server.calls("POST", RUNS)) == 1
    assert len(github_server.check_runs[run_id]["annotations"]) == 60


def test_a_502_before_the_run_was_created_posts_once_more(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    github_server.queue("POST", RUNS, server_error(502))
    run_id = _create(github_api, _annotations(3))
    assert list(github_server.check_runs) == [run_id]
    assert len(github_server.calls("POST", RUNS)) == 2


def test_a_run_of_the_same_name_from_an_earlier_job_is_not_taken_for_ours(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    earlier = _create(github_api, [])
    github_server.queue("POST", RUNS, server_error(502))
    ours = _create(github_api, _annotations(2))
    assert ours != earlier and len(github_server.check_runs) == 2


def test_after_a_502_every_page_of_the_commits_runs_is_searched_for_ours(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    for _ in range(120):  # earlier jobs and shards: our new run is on the second page
        _create(github_api, [])
    github_server.queue("POST", RUNS, server_error(502, apply=True))
    ours = _create(github_api, _annotations(2))
    assert len(github_server.check_runs) == 121 and len(github_server.calls("POST", RUNS)) == 121
    assert len(github_server.check_runs[ours]["annotations"]) == 2
    listed = github_server.calls("GET", f"/repos/{{repo}}/commits/{SHA}/check-runs")
    assert [(c.query.get("page"), c.query["check_name"]) for c in listed] == [
        (None, "replaygate"),
        ("2", "replaygate"),
    ]


@pytest.mark.parametrize("applied", [True, False])
def test_a_502_on_a_batch_neither_loses_nor_repeats_annotations(
    github_api: GitHubApi, github_server: FakeGitHub, applied: bool
) -> None:
    github_server.queue("PATCH", ANY_RUN, server_error(502, apply=applied))
    annotations = _annotations(130)
    run_id = _create(github_api, annotations)
    assert _messages(github_server.check_runs[run_id]) == [a.message for a in annotations]
    assert len(github_server.calls("PATCH")) == (2 if applied else 3)


def test_a_token_without_checks_write_is_a_permission_error(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    github_server.queue("POST", RUNS, not_accessible())
    with pytest.raises(GitHubApiError, match="403 Resource not accessible") as info:
        _create(github_api, _annotations(1))
    assert info.value.permission_denied
    assert github_server.check_runs == {}


def test_the_fake_rejects_an_invalid_check_run(
    github_api: GitHubApi, github_server: FakeGitHub
) -> None:
    annotation = {
        "path": "/abs.yaml",
        "start_line": 5,
        "end_line": 2,
        "annotation_level": "error",
        "message": "m",
    }
    body = {
        "name": "x",
        "head_sha": "HEAD",
        "status": "completed",
        "output": {"title": "t", "summary": "s", "annotations": [annotation] * 51},
    }
    with pytest.raises(GitHubApiError, match="422 Validation Failed"):
        github_api.request("POST", github_api.repo_path("/check-runs"), json=body)
    (violation,) = github_server.violations
    for expected in ("head_sha", "conclusion is required", "51 items", "start_line", "'error'"):
        assert expected in violation
    github_server.violations.clear()
