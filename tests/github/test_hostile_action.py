"""A pull request's author as the attacker of the action: committed names and files it plants."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from action_harness import MERGE_SHA, ROOT, Action, write_pack

from replaygate.cli import build_parser
from replaygate.cli import main as cli_main
from replaygate.github import env

pytestmark = pytest.mark.posix  # folder names with `=` and a leading `-`

sys.path.insert(0, str(ROOT))
from entrypoint import arguments  # noqa: E402  (the image's entrypoint is not a module of src/)

OPTION_NAMES = ["--baseline=.x", "--root=..", "--no-annotations", "-v", "--provider=openai"]


@pytest.mark.parametrize("name", OPTION_NAMES)
@pytest.mark.parametrize(("input_name", "pattern", "inside"), [
    ("packs", "*/packs", "packs"), ("merge", "*/r.json", "r.json"),
])  # fmt: skip
def test_a_folder_named_like_an_option_is_a_path(
    tmp_path: Path, name: str, input_name: str, pattern: str, inside: str
) -> None:
    (tmp_path / name).mkdir()
    (tmp_path / name / inside).write_text("")
    environ = {"GITHUB_WORKSPACE": str(tmp_path), f"INPUT_{input_name.upper()}": pattern}
    parsed = build_parser().parse_args(arguments(env.read_inputs(environ)))
    named = parsed.results if input_name == "merge" else parsed.paths
    assert named == [f"{name}/{inside}"]
    assert (parsed.baseline, parsed.root, parsed.annotations) == (None, None, True)
    assert parsed.verbosity.name == "NORMAL"
    assert getattr(parsed, "provider", "recorded") == "recorded"


@pytest.fixture
def action(tmp_path: Path) -> Action:
    return Action(tmp_path)


def test_a_planted_baseline_behind_a_glob_does_not_turn_the_check_green(
    action: Action, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`packs: "*/packs"` matching the real `app/packs` and a committed folder
    `--baseline=.x/packs`, beside a hidden baseline file `.x/packs` that lists the failure."""
    pack = write_pack(action.workspace, ["Basel"])
    (action.workspace / "app").mkdir()
    pack.parent.rename(action.workspace / "app" / "packs")
    write_pack(action.workspace / "--baseline=.x", ["Zurich"], name="decoy")  # it passes
    (action.workspace / ".x").mkdir()
    monkeypatch.chdir(action.workspace)
    assert cli_main(["run", "--json=r.json", "app/packs"]) == 1
    assert cli_main(["baseline", "r.json", "-o", ".x/packs"]) == 0
    (action.workspace / "r.json").unlink()
    step = action.run(packs="*/packs")
    assert step.code == 1, step.log
    assert step.outputs["conclusion"] == "failure" and step.outputs["known"] == "0"


def _shards(action: Action, count: int = 2) -> None:
    for k in range(1, count + 1):
        step = action.run(f"s{k}", shard=f"{k}/{count}", json_path=f"shards/results-{k}.json")
        assert step.code in (0, 1), step.log


def test_a_committed_set_of_shard_results_is_refused_naming_the_file(action: Action) -> None:
    """The pull request commits an all-passing set where the merge job looks for results."""
    write_pack(action.workspace, ["Zurich", "Zurich"])
    _shards(action)
    subprocess.run(["git", "init", "-q", str(action.workspace)], check=True)
    subprocess.run(["git", "-C", str(action.workspace), "add", "shards"], check=True)
    step = action.run("merged", merge="shards/results-*.json")
    assert step.code == 2, step.log
    assert "shards/results-1.json: tracked by git" in step.log


def test_results_of_another_run_are_refused_naming_the_file(action: Action) -> None:
    """All-passing results from an earlier run (or written elsewhere, identity and all)."""
    write_pack(action.workspace, ["Zurich", "Zurich"])
    _shards(action)
    action.run_id = "4243"
    step = action.run("merged", merge="shards/results-*.json")
    assert step.code == 2, step.log
    assert "shards/results-1.json: written by workflow run 4242 attempt 1" in step.log
    assert "not by 4243 attempt 1" in step.log


def test_results_written_outside_a_workflow_run_are_refused(
    action: Action, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_pack(action.workspace, ["Zurich", "Zurich"])
    monkeypatch.chdir(action.workspace)
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    for k in (1, 2):
        assert cli_main(["run", f"--shard={k}/2", f"--json=results-{k}.json"]) == 0
    step = action.run("merged", merge="results-*.json")
    assert step.code == 2, step.log
    assert "results-1.json: written outside this workflow run" in step.log


def test_an_earlier_attempt_of_the_same_run_is_merged_a_later_one_not(action: Action) -> None:
    """Re-running failed jobs keeps the other shards' results of the first attempt."""
    write_pack(action.workspace, ["Zurich", "Basel"])
    _shards(action)
    action.run_attempt = "2"
    assert action.run("merged", merge="shards/results-*.json").code == 1
    assert action.results()["run"] == {"id": "4242", "attempt": "2", "sha": MERGE_SHA}
    action.run_attempt = "3"
    assert action.run("s2", shard="2/2", json_path="shards/results-2.json").code in (0, 1)
    action.run_attempt = "2"
    step = action.run("merged", merge="shards/results-*.json")
    assert step.code == 2 and "results-2.json: written by workflow run 4242 attempt 3" in step.log
