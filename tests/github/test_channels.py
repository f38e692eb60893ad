"""Each channel goes out on its own: one that fails is an error naming it, the others still go."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from action_harness import Action, Step, write_pack
from runner_oracle import effective

from fake_github import FakeGitHub


@pytest.fixture
def api_action(tmp_path: Path, github_server: FakeGitHub) -> Action:
    return Action(tmp_path, token=github_server.token, api_url=github_server.url)


def step_errors(step: Step) -> list[tuple[str | None, str]]:
    """The errors that are not on a file: ours about the run, with their titles."""
    return [
        (c.properties.get("title"), c.data)
        for c in step.annotations()
        if "file" not in c.properties
    ]


def test_a_directory_at_the_json_path_fails_only_the_json_report(
    api_action: Action, github_server: FakeGitHub
) -> None:
    write_pack(api_action.workspace, ["Zurich", "Basel"])
    (api_action.workspace / "replaygate-results.json").mkdir()
    step = api_action.run(check_run="true", pr_comment="true")
    assert step.code == 2, step.log
    assert step_errors(step) == [
        ("replaygate", "JSON report not written: cannot write replaygate-results.json: "
         "Is a directory")
    ]  # fmt: skip
    assert len(step.annotations()) == 2  # and the failing case, on its line
    assert step.outputs["failed"] == "1" and "Basel" in step.summary
    ET.parse(api_action.workspace / "replaygate-junit.xml")
    assert len(github_server.check_runs) == 1 and len(github_server.comments[7]) == 1


def test_a_full_disk_under_the_step_summary_fails_only_the_summary(
    api_action: Action, github_server: FakeGitHub
) -> None:
    write_pack(api_action.workspace, ["Zurich", "Basel"])
    summary = api_action.temp / "_runner_file_commands" / "step_summary_1"
    summary.symlink_to("/dev/full")
    process = api_action.start({"check_run": "true", "pr_comment": "true"})
    log, _ = process.communicate(timeout=120)
    summary.unlink()  # reading /dev/full never ends
    step = api_action.step("1", process.returncode, log)
    assert step.code == 2, step.log
    assert step_errors(step) == [
        (
            "replaygate",
            "step summary not written: cannot write $GITHUB_STEP_SUMMARY: No space left on device",
        )
    ]
    assert step.outputs["failed"] == "1" and step.outputs["conclusion"] == "failure"
    assert api_action.results()["totals"]["failed"] == 1
    assert len(github_server.check_runs) == 1 and len(github_server.comments[7]) == 1


def test_an_unwritable_output_file_fails_only_the_outputs(api_action: Action) -> None:
    write_pack(api_action.workspace, ["Zurich"])
    (api_action.temp / "_runner_file_commands" / "set_output_1").mkdir()
    process = api_action.start({})
    log, _ = process.communicate(timeout=120)
    assert process.returncode == 2, log
    assert [(c.name, c.data) for c in effective(log)] == [
        ("error", "outputs not written: cannot write $GITHUB_OUTPUT: Is a directory")
    ]
    summary = api_action.temp / "_runner_file_commands" / "step_summary_1"
    assert "1 passed" in summary.read_text()
    assert api_action.results()["totals"]["passed"] == 1


def test_a_report_through_a_committed_symlink_is_not_written_outside(
    api_action: Action, tmp_path: Path
) -> None:
    write_pack(api_action.workspace, ["Zurich"])
    outside = tmp_path / "outside"
    outside.mkdir()
    (api_action.workspace / "reports").symlink_to(outside)
    step = api_action.run(json_path="reports/results.json")
    assert step.code == 2, step.log
    assert step_errors(step) == [
        (
            "replaygate",
            "JSON report not written: report 'reports/results.json' leaves the working "
            "directory through a symlink",
        )
    ]
    assert list(outside.iterdir()) == []
    assert step.outputs["passed"] == "1" and "1 passed" in step.summary
    ET.parse(api_action.workspace / "replaygate-junit.xml")
