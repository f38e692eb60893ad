"""A pull request's author as the attacker of the action: committed names and files it plants."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from action_harness import ROOT, Action, write_pack

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


def test_a_planted_baseline_behind_a_glob_does_not_turn_the_check_green(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`packs: "*/packs"` and a folder `--baseline=.x` beside a baseline file `.x/packs`."""
    action = Action(tmp_path)
    pack = write_pack(action.workspace, ["Basel"])
    hostile = action.workspace / "--baseline=.x"
    hostile.mkdir()
    pack.parent.rename(hostile / "packs")
    (action.workspace / ".x").mkdir()
    monkeypatch.chdir(action.workspace)
    assert cli_main(["run", "--json=r.json", "--", "--baseline=.x/packs"]) == 1
    assert cli_main(["baseline", "r.json", "-o", ".x/packs"]) == 0
    (action.workspace / "r.json").unlink()
    step = action.run(packs="*/packs")
    assert step.code == 1, step.log
    assert step.outputs["conclusion"] == "failure" and step.outputs["known"] == "0"
