"""publish(): what reaches the log, the summary, the outputs and the API, and what degrades."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from runner_oracle import effective, runner_outputs

from fake_github import BOT, FakeGitHub, not_accessible, secondary_rate_limit
from replaygate.cli import build_parser
from replaygate.core.model import RunResult, Status
from replaygate.github.comment import MARKER
from replaygate.github.publish import SUMMARY_LIMIT, PublishOptions, publish, publish_options
from replaygate.results.baseline import load_baseline
from replaygate.results.verdict import FailOn
from sample_results import case, failed, result

HEAD, MERGE = "a1" * 20, "b2" * 20


def environment(
    tmp_path: Path, server: FakeGitHub | None = None, pr: int | None = 7
) -> dict[str, str]:
    event = tmp_path / "event.json"
    payload = {
        "pull_request": {
            "number": pr,
            "head": {"sha": HEAD, "repo": {"full_name": "o/r"}},
            "base": {"repo": {"full_name": "o/r"}},
        }
    }
    event.write_text(json.dumps(payload))
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_EVENT_NAME": "pull_request" if pr else "push",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_SHA": MERGE,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }
    if server is not None:
        environ |= {
            "GITHUB_API_URL": server.url,
            "GITHUB_REPOSITORY": server.repository,
            "INPUT_GITHUB_TOKEN": server.token,
        }
    return environ


def run_publish(
    run: RunResult, options: PublishOptions, environ: dict[str, str]
) -> tuple[str, list[str]]:
    out = io.StringIO()
    published = publish(run, options, environ, out)
    assert published.failed == []
    return out.getvalue(), published.warnings


def test_a_failing_run_annotates_summarises_and_sets_outputs(tmp_path: Path) -> None:
    run = result(failed("bad", line=14), case("good"), failed("old", known=True))
    options = PublishOptions(junit_path="j.xml", json_path="r.json")
    log, warnings = run_publish(run, options, environment(tmp_path))
    commands = [(c.name, c.properties) for c in effective(log)]
    title = f"schema_violation ({run.cases[0].fingerprint})"
    known_title = f"schema_violation ({run.cases[2].fingerprint})"
    assert commands == [
        ("error", {"title": title, "file": "packs/demo/contracts/triage.yaml", "line": "14"}),
        (
            "notice",
            {"title": known_title, "file": "packs/demo/contracts/triage.yaml", "line": "12"},
        ),
    ]
    assert warnings == []
    assert "1 passed, 2 failed, 0 errors, 0 skipped, 1 known" in log
    outputs = runner_outputs((tmp_path / "output").read_text())
    assert outputs == {
        "total": "3",
        "passed": "1",
        "failed": "2",
        "errors": "0",
        "skipped": "0",
        "known": "1",
        "fingerprints": json.dumps(sorted([run.cases[0].fingerprint, run.cases[2].fingerprint])),
        "junit_path": "j.xml",
        "json_path": "r.json",
        "conclusion": "failure",
    }
    assert "bad" in (tmp_path / "summary.md").read_text()


def test_switches_turn_off_annotations_and_summary(tmp_path: Path) -> None:
    options = PublishOptions(annotations=False, step_summary=False, fail_on=FailOn.NEVER)
    log, _ = run_publish(result(failed("bad")), options, environment(tmp_path))
    assert effective(log) == []
    assert not (tmp_path / "summary.md").exists()
    assert runner_outputs((tmp_path / "output").read_text())["conclusion"] == "neutral"


def test_beyond_ten_failures_the_log_and_summary_say_how_many_more(tmp_path: Path) -> None:
    run = result(*[failed(f"c{n:02}", line=n + 1) for n in range(14)])
    log, _ = run_publish(run, PublishOptions(junit_path="j.xml"), environment(tmp_path))
    assert len(effective(log)) == 10
    assert "4 more failures are not annotated; see j.xml." in log
    assert "4 more failures are not annotated; see j.xml." in (tmp_path / "summary.md").read_text()


def test_the_step_summary_stays_under_one_mebibyte(tmp_path: Path) -> None:
    environ = environment(tmp_path)
    Path(environ["GITHUB_STEP_SUMMARY"]).write_text("earlier step text\n" * 1000)
    run = result(*[failed(f"case-{n:05}", message=f"{n} " + "m" * 300) for n in range(6000)])
    run_publish(run, PublishOptions(), environ)
    size = Path(environ["GITHUB_STEP_SUMMARY"]).stat().st_size
    assert 900_000 < size <= SUMMARY_LIMIT


def test_hostile_fixture_text_never_acts_in_the_log(tmp_path: Path) -> None:
    message = "::add-mask::x\n::error::y\r::warning::z ##[error]w %0A::set-output name=a::b"
    run = result(
        failed(message, message=message), case("::stop-commands::q", Status.ERROR, reason=message)
    )
    log, _ = run_publish(run, PublishOptions(), environment(tmp_path))
    commands = effective(log)
    assert [c.name for c in commands] == ["error", "error"]
    assert all(c.properties["file"] == "packs/demo/contracts/triage.yaml" for c in commands)
    assert commands[0].data.startswith("case ::stop-commands::q of demo/")
    assert all(message in command.data for command in commands), "shown exactly, not acted on"


def test_check_run_on_the_head_sha_with_every_failure_in_batches(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    run = result(*[failed(f"c{n:02}", line=n + 1) for n in range(60)], case("ok"))
    options = PublishOptions(check_run=True)
    log, warnings = run_publish(run, options, environment(tmp_path, github_server))
    assert warnings == []
    (check,) = github_server.check_runs.values()
    assert (check["head_sha"], check["conclusion"], check["name"]) == (
        HEAD,
        "failure",
        "replaygate",
    )
    assert len(check["annotations"]) == 60
    assert len(github_server.calls("PATCH")) == 1  # 50 with the create, 10 appended
    assert len(effective(log)) == 10, "the step still shows its own 10"


def test_check_run_annotations_are_capped_with_a_note_of_how_many_are_left_out(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    run = result(*[failed(f"c{n:04}", line=n + 1) for n in range(1500)])
    options = PublishOptions(check_run=True, check_run_annotations=60, json_path="r.json")
    _, warnings = run_publish(run, options, environment(tmp_path, github_server))
    assert warnings == []
    (check,) = github_server.check_runs.values()
    assert [a["start_line"] for a in check["annotations"]] == list(range(1, 61))  # the first
    assert len(github_server.calls("POST")) + len(github_server.calls("PATCH")) == 2
    summary = check["output"]["summary"]
    assert summary.endswith(
        "\n\n**1440 more annotations are left out of this check run** (the limit is 60); "
        "see r.json.\n"
    )
    assert len(summary.encode("utf-8")) <= 65_535


def test_check_run_annotations_default_to_a_thousand() -> None:
    assert PublishOptions().check_run_annotations == 1000
    parsed = build_parser().parse_args(["run", "--github", "--check-run-annotations", "7"])
    assert publish_options(parsed).check_run_annotations == 7
    assert publish_options(build_parser().parse_args(["run"])).check_run_annotations == 1000


def test_once_rate_limited_for_long_no_other_request_is_sent(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    github_server.queue("POST", "/repos/{repo}/check-runs", secondary_rate_limit(retry_after=600))
    options = PublishOptions(check_run=True, pr_comment=True)
    _, warnings = run_publish(result(failed("a")), options, environment(tmp_path, github_server))
    assert len(github_server.requests) == 1, "the comment must wait as well"
    assert warnings[0].startswith("check run not published: GitHub API POST")
    assert "rate limited" in warnings[0]
    assert warnings[1].startswith("PR comment not published: GitHub API GET")
    assert warnings[1].endswith("not sent: GitHub asked for no requests for another 600s")


def test_checkout_in_a_subfolder_commands_use_workspace_paths_the_api_repository_paths(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    run = result(failed("bad", line=14))
    options = PublishOptions(check_run=True, root=str(tmp_path / "repo"))
    log, warnings = run_publish(run, options, environment(tmp_path, github_server))
    assert warnings == []
    (command,) = effective(log)
    assert command.properties["file"] == "repo/packs/demo/contracts/triage.yaml"
    (check,) = github_server.check_runs.values()
    assert [a["path"] for a in check["annotations"]] == ["packs/demo/contracts/triage.yaml"]


def test_pr_comment_is_created_then_updated_in_place_with_new_and_fixed(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    environ = environment(tmp_path, github_server)
    github_server.add_comment(7, f"{MARKER}\nplanted by someone else", login="mallory")
    first = result(failed("a"), failed("b"))
    assert run_publish(first, PublishOptions(pr_comment=True), environ)[1] == []
    second = result(failed("b"), failed("c"))
    assert run_publish(second, PublishOptions(pr_comment=True), environ)[1] == []
    ours = [c for c in github_server.comments[7] if c["user"]["login"] == BOT]
    assert len(ours) == 1 and len(github_server.calls("POST")) == 1
    body = ours[0]["body"]
    assert body.startswith(MARKER)
    assert "1 new, 1 fixed (since the last run)" in body
    fingerprints = {c.case_id: c.fingerprint or "" for c in (*first.cases, *second.cases)}
    assert (
        fingerprints["c"] in body.split("Fixed")[0] and fingerprints["a"] in body.split("Fixed")[1]
    )


def test_pr_comment_against_the_baseline(tmp_path: Path, github_server: FakeGitHub) -> None:
    run = result(failed("a", known=True), failed("b"))
    accepted = frozenset({run.cases[0].fingerprint or "", "0123456789ab"})
    options = PublishOptions(pr_comment=True, baseline=accepted)
    run_publish(run, options, environment(tmp_path, github_server))
    (comment,) = github_server.comments[7]
    assert "1 new, 1 fixed (against the baseline)" in comment["body"]
    assert "0123456789ab" in comment["body"]


def test_api_refusals_degrade_to_warnings(tmp_path: Path, github_server: FakeGitHub) -> None:
    github_server.queue("POST", "/repos/{repo}/check-runs", not_accessible())
    github_server.queue("GET", "/repos/{repo}/issues/7/comments", not_accessible())
    options = PublishOptions(check_run=True, pr_comment=True)
    log, warnings = run_publish(result(failed("a")), options, environment(tmp_path, github_server))
    assert len(warnings) == 2
    assert warnings[0].startswith("check run not published: GitHub API POST")
    assert "403 Resource not accessible by integration" in warnings[0]
    assert warnings[0].endswith(
        "(check the job's permissions: checks: write, pull-requests: write)"
    )
    assert warnings[1].startswith("PR comment not published:")
    assert [(c.name, c.data) for c in effective(log) if c.name == "warning"] == [
        ("warning", w) for w in warnings
    ]
    assert github_server.token not in log


def test_no_token_and_no_pull_request(tmp_path: Path) -> None:
    options = PublishOptions(check_run=True, pr_comment=True)
    log, warnings = run_publish(result(), options, environment(tmp_path, pr=None))
    assert warnings == ["check run not published: GitHub API: no token given"]
    assert "no pull request in a push run: no comment" in log


def test_options_from_the_command_line(tmp_path: Path) -> None:
    baseline = tmp_path / "b.json"
    baseline.write_text('{"version": 1, "fingerprints": [{"fingerprint": "0123456789ab"}]}')
    args = build_parser().parse_args(
        [
            "run",
            "--github",
            "--no-annotations",
            "--check-run",
            "--junit",
            "j.xml",
            "--baseline",
            str(baseline),
            "--fail-on",
            "never",
            "--root",
            "repo",
        ]
    )
    assert publish_options(args, load_baseline(baseline)) == PublishOptions(
        annotations=False,
        check_run=True,
        junit_path="j.xml",
        fail_on=FailOn.NEVER,
        baseline=frozenset({"0123456789ab"}),
        root="repo",
    )


@pytest.mark.parametrize(
    ("status", "expected"), [(Status.PASSED, "success"), (Status.ERROR, "failure")]
)
def test_conclusion_output(tmp_path: Path, status: Status, expected: str) -> None:
    run_publish(result(case("x", status)), PublishOptions(), environment(tmp_path))
    assert runner_outputs((tmp_path / "output").read_text())["conclusion"] == expected


@pytest.mark.parametrize("ours", [False, True])
def test_pr_comments_are_listed_once_per_run_page_by_page(
    tmp_path: Path, github_server: FakeGitHub, ours: bool
) -> None:
    github_server.add_comments(7, 150, login="reviewer")
    if ours:
        github_server.add_comment(7, f"{MARKER}\nlast run", login=BOT)
    github_server.add_comments(7, 100, login="octocat")
    run_publish(
        result(failed("a")), PublishOptions(pr_comment=True), environment(tmp_path, github_server)
    )
    pages = [
        c.query.get("page") for c in github_server.calls("GET", "/repos/{repo}/issues/7/comments")
    ]
    assert pages == [None, "2", "3"]
    assert len([c for c in github_server.comments[7] if c["user"]["login"] == BOT]) == 1
