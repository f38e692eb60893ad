"""Text from a PR in the step summary and the PR comment: it cannot link, mention or hide."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from action_harness import Action, fixture, write_pack

from fake_github import FakeGitHub

# Case ids and a recorded error code as a PR author could write them.
LINKING = [
    "see https://evil.example/x",
    "www.evil.example",
    "ping @octocat and @org/team",
    "closes #123",
    "owner/repo#1",
    "mail me@evil.example",
]
HIDING = ["zero\u200bwidth", "\u202eevil", "tag\U000e0041\U000e0042", "bom\ufeffjoin\u2060"]
ERROR_CODE = "Call https://evil.example @octocat #1"


@pytest.fixture
def api_action(tmp_path: Path, github_server: FakeGitHub) -> Action:
    return Action(tmp_path, token=github_server.token, api_url=github_server.url)


def outside_code(markdown: str) -> str:
    return re.sub(r"(`+) .*? \1", "", markdown)


def with_error(pack: Path, index: int, code: str) -> None:
    data = fixture("Basel")
    data["response"] = {"success": False, "tool_calls": [], "error": {"code": code}}
    (pack / "golden" / f"c{index}.json").write_text(json.dumps(data))


def test_pr_text_in_the_summary_and_comment_cannot_link_mention_or_hide(
    api_action: Action, github_server: FakeGitHub
) -> None:
    ids = LINKING + HIDING + ["coded"]
    pack = write_pack(api_action.workspace, ["Basel"] * len(ids), ids=ids)
    with_error(pack, len(ids) - 1, ERROR_CODE)
    step = api_action.run(pr_comment="true")
    assert step.code == 1, step.log
    comment = github_server.comments[7][0]["body"]
    for markdown in (step.summary, comment):
        outside = outside_code(markdown)
        for token in ("https://", "www.", "@octocat", "@org", "#123", "#1", "@evil"):
            assert token not in outside, (token, markdown)
        assert not [char for char in markdown if unicodedata.category(char) == "Cf"]
        assert "zero\\u200bwidth" in markdown and "tag\\U000e0041\\U000e0042" in markdown


def test_a_recorded_error_code_is_a_classification_only_as_a_snake_case_word(
    api_action: Action,
) -> None:
    pack = write_pack(api_action.workspace, ["Basel"] * 3, ids=["odd", "plain", "long"])
    with_error(pack, 0, ERROR_CODE)
    with_error(pack, 1, "rate_limit_exceeded")
    with_error(pack, 2, "x" * 41)
    step = api_action.run()
    cases = {case["case_id"]: case for case in api_action.results()["cases"]}
    assert [cases[name]["classification"] for name in ("odd", "plain", "long")] == [
        "unexpected_error",
        "rate_limit_exceeded",
        "unexpected_error",
    ]
    assert f"(error code {ERROR_CODE!r})" in cases["odd"]["failures"][0]["message"]
    titles = {a.properties["title"].split(" (")[0] for a in step.annotations()}
    assert titles == {"unexpected_error", "rate_limit_exceeded"}


def test_pr_text_in_check_run_annotations_cannot_hide(
    api_action: Action, github_server: FakeGitHub
) -> None:
    """The check run's annotation messages and titles escape what the summary escapes."""
    write_pack(api_action.workspace, HIDING, ids=HIDING)
    step = api_action.run(check_run="true")
    assert step.code == 1, step.log
    [run] = github_server.check_runs.values()
    annotations = run["annotations"]
    assert len(annotations) == len(HIDING)
    texts = [a["message"] + a.get("title", "") for a in annotations]
    for text in texts:
        assert not [char for char in text if unicodedata.category(char) == "Cf"], text
    joined = "\n".join(texts)
    assert "zero\\u200bwidth" in joined and "\\u202eevil" in joined
    assert "tag\\U000e0041\\U000e0042" in joined
