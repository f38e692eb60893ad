"""The exit code and the action's conclusion: one rule, the same answer everywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from packbuilder import fixture, make_pack
from replaygate.results.verdict import Conclusion, FailOn

BAD_CALL = fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])


def run_action_style(tmp_path: Path, *args: str) -> tuple[int, dict[str, str]]:
    """`replaygate run --github` as the action runs it; its exit code and step outputs."""
    output = tmp_path / "github_output"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    environ |= {"GITHUB_WORKSPACE": str(tmp_path), "GITHUB_OUTPUT": str(output)}
    done = subprocess.run(
        [sys.executable, "-m", "replaygate.cli", "run", "--github", *args],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, _outputs(output.read_text(encoding="utf-8"))


def _outputs(text: str) -> dict[str, str]:
    lines, found = text.splitlines(), {}
    for index, line in enumerate(lines):
        if "<<" in line:
            name, _, _ = line.partition("<<")
            found[name] = lines[index + 1]
    return found


@pytest.mark.parametrize(
    ("fail_on", "code", "conclusion"),
    [(FailOn.FAILURE, 2, Conclusion.FAILURE), (FailOn.NEVER, 2, Conclusion.FAILURE)],
)
def test_a_pack_that_cannot_load_fails_whatever_fail_on_says(
    tmp_path: Path, fail_on: FailOn, code: int, conclusion: Conclusion
) -> None:
    make_pack(tmp_path, "good")
    make_pack(tmp_path, "bad", pack_yaml="pack_id: [\n")
    found = run_action_style(tmp_path, "--fail-on", fail_on)
    assert (found[0], found[1]["conclusion"]) == (code, conclusion)


@pytest.mark.parametrize(
    ("fail_on", "code", "conclusion"),
    [(FailOn.FAILURE, 1, Conclusion.FAILURE), (FailOn.NEVER, 0, Conclusion.NEUTRAL)],
)
def test_a_failed_case_follows_fail_on(
    tmp_path: Path, fail_on: FailOn, code: int, conclusion: Conclusion
) -> None:
    make_pack(tmp_path, fixtures={"ok.json": BAD_CALL})
    found = run_action_style(tmp_path, "--fail-on", fail_on)
    assert (found[0], found[1]["conclusion"]) == (code, conclusion)


def test_a_passing_run_succeeds(tmp_path: Path) -> None:
    make_pack(tmp_path)
    found = run_action_style(tmp_path, "--fail-on", "never")
    assert (found[0], found[1]["conclusion"]) == (0, Conclusion.SUCCESS)


def test_fail_on_refuses_other_values_naming_them(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "replaygate.cli", "run", "--fail-on", "sometimes"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 4  # a usage error
    assert "--fail-on: 'sometimes' is not one of failure, never" in done.stderr
