"""The README's commands run as written: every shell line, and the transcript of a failure."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from packbuilder import fixture, make_pack

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, flags=re.DOTALL)
SHELL = ("sh", "bash", "shell")

# Commands the tests cannot run, each with its reason; any other README command must run.
NOT_RUN_HERE = {
    "pip install .": "builds in an isolated environment, which downloads setuptools",
    "pipx install replaygate": "installs the released package from PyPI",
    "pip install -c requirements.lock -e '.[test]'": "downloads the test dependencies",
    "python -m pytest": "it is this test suite",
    # the quick start's flow on an app of the reader's; tests/capture runs it on a fake one
    "replaygate observe packs/my-app --provider openai": "serves until Ctrl-C",
    "OPENAI_BASE_URL=http://127.0.0.1:8787/v1 python my_app.py": "the reader's app",
    "replaygate infer packs/my-app/recordings/observed -o packs/my-app/contracts/": "needs the "
    "captures of the reader's app",
    "replaygate run packs/my-app": "the reader's pack",
}


def shell_commands() -> list[str]:
    lines = [line for lang, body in BLOCKS if lang in SHELL for line in body.splitlines()]
    return [part.strip() for line in lines for part in line.split("&&") if part.strip()]


def transcripts() -> list[tuple[str, list[str]]]:
    """``$ command`` lines of the untyped blocks, each with the output shown under it."""
    found: list[tuple[str, list[str]]] = []
    for lang, body in BLOCKS:
        for line in body.splitlines() if not lang else []:
            if line.startswith("$ "):
                found.append((line[2:], []))
            elif found:
                found[-1][1].append(line)
    return found


def _environment() -> dict[str, str]:
    """This interpreter's scripts first, so `replaygate`, `ruff` and `mypy` are the tested ones."""
    scripts = str(Path(sys.executable).parent)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return environ | {"PATH": scripts + os.pathsep + environ.get("PATH", "")}


def test_every_command_runs_here_or_says_why_not() -> None:
    commands = shell_commands()
    assert len(commands) >= 5
    assert set(NOT_RUN_HERE) <= set(commands), "a reason for a command the README dropped"


@pytest.mark.parametrize("command", [c for c in shell_commands() if c not in NOT_RUN_HERE])
def test_a_readme_command_succeeds(command: str) -> None:
    done = subprocess.run(
        command,
        shell=True,
        cwd=ROOT,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_the_failure_transcript_is_what_replaygate_prints(tmp_path: Path) -> None:
    ((command, shown),) = transcripts()
    make_pack(
        tmp_path,
        fixtures={"ok.json": fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}])},
    )
    done = subprocess.run(
        command,
        shell=True,
        cwd=tmp_path,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    timeless = re.sub(r" in [0-9.]+s$", " in Xs", done.stdout, flags=re.MULTILINE)
    assert timeless.splitlines() == [re.sub(r" in [0-9.]+s$", " in Xs", line) for line in shown]
    assert done.returncode == 1


def synopsis() -> dict[str, list[str]]:
    """The CLI block: each `replaygate <command>` with the options listed under it."""
    block = next(body for lang, body in BLOCKS if not lang and body.startswith("replaygate "))
    found: dict[str, list[str]] = {}
    command = ""
    for line in block.splitlines():
        words = line.split()
        if words[0] == "replaygate":
            command = words[1]
            found.setdefault(command, [])
        elif words[0].startswith("--"):  # the option column; the description may quote others
            found[command].append(words[0])
    return found


def test_the_cli_synopsis_names_real_commands_and_options() -> None:
    listed = synopsis()
    assert {"run", "validate", "merge", "baseline", "--version"} <= listed.keys()
    for command, options in listed.items():
        args = ["--help"] if command == "--version" else [command, "--help"]
        done = subprocess.run(
            ["replaygate", *args], env=_environment(), capture_output=True, text=True, check=True
        )
        assert all(option in done.stdout for option in options), (command, options)
