"""The action end to end: entrypoint.py in a runner-shaped environment, against a fake GitHub."""

from __future__ import annotations

import json
import os
import re
import signal
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from action_harness import HEAD_SHA, Action, write_pack

from fake_github import BOT, FakeGitHub, not_accessible, rate_limited, server_error
from replaygate.github.comment import MARKER

# The action runs in a Linux container; the harness starts it with a runner's clean environment.
pytestmark = pytest.mark.posix

HOSTILE = [
    "::add-mask::Zurich",
    "::stop-commands::pwned",
    "x\n::error file=evil.py,line=1::injected",
    "y\r::warning::carriage",
    "##[error]legacy",
    "%0A::set-output name=conclusion::success",
    "<img src=x onerror=alert(1)> | **bold** [link](https://evil.example) @octocat",
]


@pytest.fixture
def action(tmp_path: Path) -> Action:
    return Action(tmp_path)


@pytest.fixture
def api_action(tmp_path: Path, github_server: FakeGitHub) -> Action:
    return Action(tmp_path, token=github_server.token, api_url=github_server.url)


def failing_cases(action: Action) -> list[dict[str, Any]]:
    return [c for c in action.results()["cases"] if c["status"] == "failed"]


def expected_annotation(case: dict[str, Any]) -> dict[str, str]:
    failure = case["failures"][0]
    title = f"{case['classification']} ({case['fingerprint']})"
    return {"title": title, "file": failure["file"], "line": str(failure["line"])}


def test_a_passing_run(action: Action) -> None:
    action.copy_packs("weather", "starter")
    step = action.run()
    assert step.code == 0, step.log
    assert step.commands == []
    assert step.outputs["failed"] == "0" and step.outputs["total"] == step.outputs["passed"]
    assert step.outputs["conclusion"] == "success" and step.outputs["fingerprints"] == "[]"
    assert "replaygate" in step.summary
    ET.parse(action.workspace / "replaygate-junit.xml")
    assert action.results()["totals"]["passed"] == int(step.outputs["passed"])


def test_a_failing_run_annotates_each_failure_on_its_contract_line(action: Action) -> None:
    write_pack(action.workspace, ["Zurich", "Basel", "Zurich", "Bern"])
    step = action.run()
    assert step.code == 1, step.log
    cases = failing_cases(action)
    assert [c["case_id"] for c in cases] == ["case_001", "case_003"]
    assert [a.properties for a in step.annotations()] == [expected_annotation(c) for c in cases]
    assert all(
        a.properties["file"] == "packs/gate/contracts/lookup.yaml" for a in step.annotations()
    )
    assert step.outputs["failed"] == "2" and step.outputs["conclusion"] == "failure"
    assert json.loads(step.outputs["fingerprints"]) == sorted(c["fingerprint"] for c in cases)
    assert (step.outputs["junit_path"], step.outputs["json_path"]) == (
        "replaygate-junit.xml",
        "replaygate-results.json",
    )
    assert "'Bern' is not equal to 'Zurich'" in step.summary and "Basel" in step.log


def test_more_failures_than_github_shows(api_action: Action, github_server: FakeGitHub) -> None:
    write_pack(api_action.workspace, [f"City{n}" for n in range(23)])
    step = api_action.run(check_run="true")
    assert step.code == 1
    assert len(step.annotations()) == 10
    assert "13 more failures are not annotated; see replaygate-junit.xml and" in step.log
    assert "13 more failures are not annotated" in step.summary
    (check,) = github_server.check_runs.values()
    assert len(check["annotations"]) == 23 and check["head_sha"] == HEAD_SHA
    assert check["conclusion"] == "failure"


def test_a_fork_pull_request_runs_without_the_cache_and_says_so(tmp_path: Path) -> None:
    action = Action(tmp_path, fork=True)
    action.copy_packs("weather")
    step = action.run(cache="true")
    assert step.code == 0, step.log
    notices = [n.data for n in step.annotations("notice")]
    assert notices == ["the results cache is not used on a pull request from a fork"]


def test_a_fork_pull_request_gets_warnings_not_a_failed_job(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    action = Action(tmp_path, token=github_server.token, api_url=github_server.url, fork=True)
    action.copy_packs("weather")
    github_server.queue("POST", "/repos/{repo}/check-runs", not_accessible())
    github_server.queue("GET", "/repos/{repo}/issues/7/comments", not_accessible())
    step = action.run(check_run="true", pr_comment="true")
    assert step.code == 0, step.log
    warnings = step.annotations("warning")
    assert len(warnings) == 2
    assert all("a pull request from a fork gets a read-only token" in w.data for w in warnings)
    assert step.outputs["conclusion"] == "success" and step.summary
    assert github_server.token not in step.log


def test_a_502_then_success(api_action: Action, github_server: FakeGitHub) -> None:
    write_pack(api_action.workspace, ["Basel"])
    github_server.queue("POST", "/repos/{repo}/check-runs", server_error(502))
    github_server.queue("GET", "/repos/{repo}/issues/7/comments", server_error(502))
    step = api_action.run(check_run="true", pr_comment="true")
    assert step.code == 1 and step.annotations("warning") == [], step.log
    assert len(github_server.check_runs) == 1
    assert len([c for c in github_server.comments[7] if c["user"]["login"] == BOT]) == 1


def test_enterprise_server_api_url_is_respected(tmp_path: Path, github_servers: Any) -> None:
    server = github_servers(prefix="/api/v3")
    action = Action(tmp_path, token=server.token, api_url=server.url)
    action.copy_packs("weather")
    step = action.run(check_run="true")
    assert step.code == 0 and step.annotations("warning") == [], step.log
    assert [r.path for r in server.requests] == ["/repos/octo-org/octo-repo/check-runs"]


def test_a_429_with_retry_after_is_waited_out(
    api_action: Action, github_server: FakeGitHub
) -> None:
    api_action.copy_packs("weather")
    github_server.queue("GET", "/repos/{repo}/issues/7/comments", rate_limited(1))
    step = api_action.run(pr_comment="true")
    assert step.code == 0 and step.annotations("warning") == [], step.log
    # the answered 429 and its retry: the comments are listed once, not again to write
    assert len(github_server.calls("GET", "/repos/{repo}/issues/7/comments")) == 2
    assert len(github_server.comments[7]) == 1


def test_an_existing_comment_is_updated_in_place(
    api_action: Action, github_server: FakeGitHub
) -> None:
    github_server.add_comments(7, 120)  # our comment is on the second page
    ours = github_server.add_comment(7, f"{MARKER}\nold", login=BOT)
    github_server.add_comment(7, f"{MARKER}\nplanted", login="mallory")
    write_pack(api_action.workspace, ["Zurich", "Basel"])
    assert api_action.run(pr_comment="true").code == 1
    fixture = api_action.workspace / "packs/gate/golden/c1.json"
    fixture.write_text(fixture.read_text().replace("Basel", "Zurich"))
    step = api_action.run("2", pr_comment="true")
    assert step.code == 0, step.log
    assert github_server.calls("POST") == []
    assert ours["body"].startswith(MARKER) and "0 new, 1 fixed (since the last run)" in ours["body"]
    assert [c["body"] for c in github_server.comments[7] if c["user"]["login"] == "mallory"] == [
        f"{MARKER}\nplanted"
    ]


def test_malicious_fixture_text_cannot_act_or_inject(
    api_action: Action, github_server: FakeGitHub
) -> None:
    ids = [f"evil_{n}" for n in range(len(HOSTILE))]
    ids[-1] = "<b>id</b> ::error::x"
    write_pack(api_action.workspace, HOSTILE, ids=ids)
    step = api_action.run(pr_comment="true")
    assert step.code == 1
    assert {c.name for c in step.commands} == {"error"}, "only our annotations act"
    assert [a.properties for a in step.annotations()] == [
        expected_annotation(c) for c in failing_cases(api_action)
    ]
    assert all(hostile in step.log for hostile in ("::add-mask::Zurich", "##[error]legacy"))
    assert step.outputs["conclusion"] == "failure"
    for markdown in (step.summary, github_server.comments[7][0]["body"]):
        outside = re.sub(r"(`+) .*? \1", "", markdown)  # code spans show text, never act
        assert "<img" not in outside and "<b>" not in outside and "@octocat" not in outside
    ET.parse(api_action.workspace / "replaygate-junit.xml")


def test_a_baseline_turns_accepted_failures_into_notices(action: Action) -> None:
    write_pack(action.workspace, ["Zurich", "Basel", "Bern"])
    assert action.run().code == 1
    from replaygate.cli import main

    baseline = action.workspace / "replaygate-baseline.json"
    main(["baseline", str(action.workspace / "replaygate-results.json"), "-o", str(baseline)])
    step = action.run("2", baseline="replaygate-baseline.json")
    assert step.code == 0, step.log
    assert step.annotations() == [] and len(step.annotations("notice")) == 2
    assert (step.outputs["known"], step.outputs["failed"], step.outputs["conclusion"]) == (
        "2",
        "2",
        "success",
    )


def test_two_shards_merged_equal_one_run(action: Action) -> None:
    write_pack(action.workspace, ["Zurich", "Basel", "Zurich", "Bern", "Geneva"])
    whole = action.run("whole", json_path="whole.json", annotations="false")
    shards = [
        action.run(
            f"s{k}",
            shard=f"{k}/2",
            json_path=f"shard-{k}.json",
            fail_on="never",
            annotations="false",
            summary="false",
        )
        for k in (1, 2)
    ]
    assert [s.code for s in shards] == [0, 0]
    assert sorted(int(s.outputs["total"]) for s in shards) == [2, 3]
    merged = action.run("merged", merge="shard-*.json", junit_path="merged.xml")
    assert merged.code == whole.code == 1
    ignored = ("json_path", "junit_path")
    assert {k: v for k, v in merged.outputs.items() if k not in ignored} == {
        k: v for k, v in whole.outputs.items() if k not in ignored
    }
    assert len(merged.annotations()) == 3
    assert "merged.xml" in merged.outputs["junit_path"]


def test_a_missing_shard_fails_the_merge(action: Action) -> None:
    write_pack(action.workspace, ["Zurich", "Basel"])
    action.run("s1", shard="1/2", json_path="shard-1.json")
    step = action.run("merged", merge="shard-*.json")
    assert step.code == 2
    assert "shard 2/2 is not in the merge" in step.log


def test_a_bad_input_is_one_error_naming_it(action: Action) -> None:
    step = action.run(check_run="yes")
    assert step.code == 4  # a usage error, as on the command line
    assert [(c.name, c.data) for c in step.commands] == [
        ("error", "input 'check_run': expected true or false, got 'yes'")
    ]


def parse_report(path: Path) -> None:
    if path.suffix == ".json":
        json.loads(path.read_text())
    else:
        ET.parse(path)


def test_sigterm_while_publishing_leaves_whole_reports(tmp_path: Path) -> None:
    """A cancel during the API call: the process stops at once, with the files already whole."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        action = Action(
            tmp_path, token="t", api_url=f"http://127.0.0.1:{listener.getsockname()[1]}"
        )
        write_pack(action.workspace, ["Basel"])
        process = action.start({"check_run": "true"})
        connection, _ = listener.accept()  # the check run request: reports are written by now
        process.send_signal(signal.SIGTERM)
        log, _ = process.communicate(timeout=30)
        connection.close()
    assert process.returncode == 128 + signal.SIGTERM, log
    assert "not published" not in log, "stopped at once, not after the API timed out"
    for name in ("replaygate-junit.xml", "replaygate-results.json"):
        parse_report(action.workspace / name)
    assert not list(action.workspace.glob(".*.tmp"))


def test_sigterm_while_writing_reports_leaves_no_partial_file(tmp_path: Path) -> None:
    """Cancelled as soon as a report's temporary file appears: whole files or none, no leftovers."""
    action = Action(tmp_path)
    write_pack(action.workspace, [f"City{n}" for n in range(2000)])
    process = action.start({})
    deadline = time.monotonic() + 60
    while process.poll() is None and not any(
        name.endswith(".tmp") for name in os.listdir(action.workspace)
    ):
        assert time.monotonic() < deadline
        time.sleep(0.001)
    process.send_signal(signal.SIGTERM)
    log, _ = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGTERM, log[-2000:]
    for name in ("replaygate-junit.xml", "replaygate-results.json"):
        if (action.workspace / name).exists():
            parse_report(action.workspace / name)
    assert not list(action.workspace.glob(".*.tmp"))
