"""Run entrypoint.py as the runner runs a Docker action: clean environment, workspace as cwd."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from runner_oracle import Command, effective, runner_outputs

from packbuilder import contract, golden_case

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "entrypoint.py"
ACTION_INPUTS: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
HEAD_SHA, MERGE_SHA = "1a" * 20, "2b" * 20
REPOSITORY = "octo-org/octo-repo"


@dataclass
class Action:
    """One job's workspace and runner files; ``run`` is one step using the action."""

    base: Path
    token: str = ""
    api_url: str = "http://127.0.0.1:9"  # nothing listens: any unexpected call fails fast
    event_name: str = "pull_request"
    fork: bool = False
    pr_number: int = 7
    run_id: str = "4242"  # GITHUB_RUN_ID: every step of the job is part of one workflow run
    run_attempt: str = "1"
    workspace: Path = field(init=False)

    def __post_init__(self) -> None:
        self.workspace = self.base / "workspace"
        self.temp = self.base / "runner_temp"
        for folder in (self.workspace, self.temp / "_runner_file_commands", self.base / "home"):
            folder.mkdir(parents=True, exist_ok=True)

    def environ(self, inputs: dict[str, str], step: str) -> dict[str, str]:
        files = self.temp / "_runner_file_commands"
        event = self.temp / "event.json"
        event.write_text(json.dumps(self.event()))
        environ = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.base / "home"),
            "PYTHONPATH": str(ROOT / "src"),  # this checkout, whatever is installed
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_SHA": MERGE_SHA,
            "GITHUB_RUN_ID": self.run_id,
            "GITHUB_RUN_ATTEMPT": self.run_attempt,
            "GITHUB_REF": f"refs/pull/{self.pr_number}/merge",
            "GITHUB_API_URL": self.api_url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_STEP_SUMMARY": str(files / f"step_summary_{step}"),
            "GITHUB_OUTPUT": str(files / f"set_output_{step}"),
            "GITHUB_ENV": str(files / f"set_env_{step}"),
            "RUNNER_TEMP": str(self.temp),
        }
        return environ | self.input_variables(inputs)

    def input_variables(self, inputs: dict[str, str]) -> dict[str, str]:
        """Every declared input, as the runner sets them: given values, else the defaults."""
        unknown = set(inputs) - set(ACTION_INPUTS)
        assert not unknown, f"not inputs of action.yml: {unknown}"
        values = {name: str(spec.get("default", "")) for name, spec in ACTION_INPUTS.items()}
        values["github_token"] = self.token
        values |= inputs
        return {f"INPUT_{name.replace(' ', '_').upper()}": value for name, value in values.items()}

    def event(self) -> dict[str, Any]:
        if self.event_name != "pull_request":
            return {"after": MERGE_SHA}
        head = "someone/octo-repo" if self.fork else REPOSITORY
        return {
            "number": self.pr_number,
            "pull_request": {
                "number": self.pr_number,
                "head": {"sha": HEAD_SHA, "repo": {"full_name": head}},
                "base": {"sha": "3c" * 20, "repo": {"full_name": REPOSITORY}},
            },
        }

    def start(
        self, inputs: dict[str, str], step: str = "1", *, python: tuple[str, ...] = ()
    ) -> subprocess.Popen[str]:
        """The entrypoint in a new process; ``python``: options before it (``-c``, code)."""
        return subprocess.Popen(
            [sys.executable, *(python or (str(ENTRYPOINT),))],
            cwd=self.workspace,
            env=self.environ(inputs, step),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # the runner reads both streams the same way
            text=True,
            encoding="utf-8",
        )

    def run(self, step: str = "1", **inputs: str) -> Step:
        process = self.start(inputs, step)
        log, _ = process.communicate(timeout=120)
        return self.step(step, process.returncode, log)

    def step(self, step: str, code: int, log: str) -> Step:
        files = self.temp / "_runner_file_commands"
        output_file = files / f"set_output_{step}"
        summary = files / f"step_summary_{step}"
        return Step(
            code=code,
            log=log,
            commands=effective(log),
            outputs=runner_outputs(output_file.read_text()) if output_file.exists() else {},
            summary=summary.read_text() if summary.exists() else "",
        )

    def copy_packs(self, *names: str) -> None:
        for name in names:
            shutil.copytree(ROOT / "packs" / name, self.workspace / "packs" / name)

    def results(self, path: str = "replaygate-results.json") -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.workspace / path).read_text())
        return loaded


@dataclass(frozen=True)
class Step:
    code: int
    log: str
    commands: list[Command]
    outputs: dict[str, str]
    summary: str

    def annotations(self, name: str = "error") -> list[Command]:
        return [command for command in self.commands if command.name == name]


def fixture(city: str) -> dict[str, Any]:
    tool = {
        "name": "lookup",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    call = {"id": "call_1", "name": "lookup", "arguments": {"city": city}}
    return {
        "boundary_version": "1.0",
        "provider": "openai",
        "model_id": "gpt-4o-mini",
        "tool_choice_mode": "auto",
        "request": {"messages": [{"role": "user", "content": "Where?"}], "tools": [tool]},
        "response": {"success": True, "tool_calls": [call], "content": None},
    }


def write_pack(
    workspace: Path, cities: list[str], *, name: str = "gate", ids: list[str] | None = None
) -> Path:
    """A pack whose contract wants city Zurich: each other city is a failing case."""
    pack = workspace / "packs" / name
    (pack / "contracts").mkdir(parents=True)
    (pack / "golden").mkdir()
    (pack / "pack.yaml").write_text(
        f'pack_id: "{name}"\nname: "{name}"\nversion: "0.1.0"\n'
        'schema_version: "v0.1"\nprovider: "openai"\n'
    )
    cases = []
    for index, city in enumerate(cities):
        case_id = ids[index] if ids else f"case_{index:03}"
        (pack / "golden" / f"c{index}.json").write_text(json.dumps(fixture(city)))
        shown = json.dumps(case_id, ensure_ascii=False)  # YAML cannot read a surrogate pair
        cases.append(golden_case(shown, f"c{index}.json"))
    head = (
        "tool: lookup\nassertions:\n  output_invariants:\n"
        '    - path: $.tool_calls[0].arguments.city\n      equals: "Zurich"\n'
    )
    (pack / "contracts" / "lookup.yaml").write_text(contract(*cases, head=head))
    return pack
