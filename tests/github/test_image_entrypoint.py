"""The image's entrypoint beyond the action: arguments run the CLI; files stay the owner's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from action_harness import ENTRYPOINT, Action, write_pack
from runner_oracle import effective

from replaygate import __version__

pytestmark = pytest.mark.posix  # the image is Linux; the runs get a clean environment

RUNNER_UID = RUNNER_GID = 1001  # the `runner` user of GitHub's hosted runners

needs_root = pytest.mark.skipif(
    os.name != "posix" or os.geteuid() != 0, reason="needs root: the workspace is given away"
)


def cli(workspace: Path, *argv: str, **environ: str) -> subprocess.CompletedProcess[str]:
    """The image run with arguments (`docker run IMAGE ARGS...`): no runner variables."""
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(ENTRYPOINT.parent / "src"),
    }
    return subprocess.run(
        [sys.executable, str(ENTRYPOINT), *argv],
        cwd=workspace,
        env=base | environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_version_argument_prints_the_version(tmp_path: Path) -> None:
    completed = cli(tmp_path, "--version")
    assert (completed.returncode, completed.stdout) == (0, f"replaygate {__version__}\n")


def test_arguments_run_the_cli_with_them(tmp_path: Path) -> None:
    write_pack(tmp_path, ["Zurich", "Basel"])
    completed = cli(tmp_path, "run", "packs", "--json", "out/results.json")
    assert completed.returncode == 1, completed.stderr
    assert "'Basel' is not equal to 'Zurich'" in completed.stdout
    assert "::stop-commands::" not in completed.stdout + completed.stderr
    totals = json.loads((tmp_path / "out/results.json").read_text())["totals"]
    assert (totals["passed"], totals["failed"]) == (1, 1)
    assert not (tmp_path / "replaygate-junit.xml").exists(), "the action's defaults do not apply"


def test_a_bad_argument_is_the_cli_error(tmp_path: Path) -> None:
    completed = cli(tmp_path, "run", "--no-such-option")
    direct = subprocess.run(
        [sys.executable, "-m", "replaygate.cli", "run", "--no-such-option"],
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ENTRYPOINT.parent / "src")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == direct.returncode != 0
    assert completed.stderr == direct.stderr and "--no-such-option" in completed.stderr


def test_arguments_inside_a_job_cannot_act_as_workflow_commands(tmp_path: Path) -> None:
    """`uses: docker://IMAGE` with `args:`: the job's log, guarded as the action's."""
    injected = "x\n::error file=evil.py,line=1::injected"
    write_pack(tmp_path, [injected])
    completed = cli(tmp_path, "run", "packs", GITHUB_ACTIONS="true")
    assert completed.returncode == 1
    assert "::error file=evil.py,line=1::injected" in completed.stdout
    assert completed.stdout.startswith("::stop-commands::")
    assert effective(completed.stdout) == []


@pytest.fixture
def runner_tree() -> Iterator[Path]:
    """A job's tree that uid 1001 can reach, as on a hosted runner (pytest's tmp_path cannot)."""
    base = Path(tempfile.mkdtemp(prefix="replaygate-owner-"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base)


def give_away(base: Path) -> None:
    """The runner user owns its tree: the workspace, the file commands, HOME."""
    for path in [base, *base.rglob("*")]:
        os.lchown(path, RUNNER_UID, RUNNER_GID)


def not_runner_owned(workspace: Path) -> list[str]:
    return sorted(
        str(path.relative_to(workspace))
        for path in [workspace, *workspace.rglob("*")]
        if (path.lstat().st_uid, path.lstat().st_gid) != (RUNNER_UID, RUNNER_GID)
    )


@needs_root
def test_the_action_leaves_every_file_and_folder_to_the_workspace_owner(runner_tree: Path) -> None:
    action = Action(runner_tree)
    write_pack(action.workspace, ["Zurich", "Basel"])
    give_away(runner_tree)
    step = action.run(junit_path="reports/deep/junit.xml", json_path="reports/results.json")
    assert step.code == 1, step.log
    assert step.outputs["failed"] == "1" and step.summary, "file commands still written"
    assert (action.workspace / "reports/deep/junit.xml").is_file()
    assert (action.workspace / "reports/results.json").is_file()
    assert not_runner_owned(action.workspace) == []


@needs_root
def test_arguments_too_leave_the_workspace_to_its_owner(runner_tree: Path) -> None:
    workspace = runner_tree / "workspace"
    write_pack(workspace, ["Zurich"])
    give_away(runner_tree)
    completed = cli(
        workspace, "run", "packs", "--junit", "out/junit.xml", GITHUB_WORKSPACE=str(workspace)
    )
    assert completed.returncode == 0, completed.stderr
    assert (workspace / "out/junit.xml").is_file() and not_runner_owned(workspace) == []


@needs_root
def test_a_workspace_that_root_owns_is_written_as_root(tmp_path: Path) -> None:
    """A self-hosted runner running as root: nothing to switch, nothing refused."""
    write_pack(tmp_path, ["Zurich"])
    completed = cli(tmp_path, "run", "packs", "--json", "r.json", GITHUB_WORKSPACE=str(tmp_path))
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "r.json").stat().st_uid == 0


LOADED = """
import json, runpy, sys
report, sys.argv = sys.argv[1], sys.argv[2:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as stop:
    code = stop.code
with open(report, "w") as handle:
    json.dump({"code": code, "modules": sorted(sys.modules)}, handle)
"""


def loaded_modules(action: Action, **inputs: str) -> tuple[int, set[str]]:
    report = action.base / "modules.json"
    subprocess.run(
        [sys.executable, "-c", LOADED, str(report), str(ENTRYPOINT)],
        cwd=action.workspace,
        env=action.environ(inputs, "1"),
        capture_output=True,
        check=True,
        timeout=120,
    )
    found = json.loads(report.read_text())
    return found["code"], set(found["modules"])


def test_a_small_run_without_the_api_loads_neither_http_nor_workers(tmp_path: Path) -> None:
    """Start time matters in every job: what a run does not use is not imported.

    The API client and requests load only to send; the worker pool only for a large run.
    """
    action = Action(tmp_path)
    action.copy_packs("weather", "starter")
    code, modules = loaded_modules(action)
    assert code == 0
    assert {"replaygate.engine.runner", "replaygate.github.publish"} <= modules
    unneeded = {"requests", "urllib3", "replaygate.github.api", "secrets", "multiprocessing"}
    assert not unneeded & modules
    _, with_api = loaded_modules(action, pr_comment="true")
    assert {"requests", "replaygate.github.api"} <= with_api
