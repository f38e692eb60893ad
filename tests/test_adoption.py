"""Adopting replaygate as a team would: a fresh git repository, a pack written from the ReplayCI
guide's example shapes, run from the root, a subfolder and from outside; then each usual
mistake made once, with the message the team sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replaygate import cli

PACK_YAML = """\
pack_id: "my-pack"
name: "my-tool-calling-tests"
version: "0.1.0"
schema_version: "v0.1"
provider: "openai"
default_model: "gpt-4o-mini"
paths:
  contracts_dir: "packs/my-pack/contracts"
  golden_dir: "packs/my-pack/golden"
  negative_golden_dir: "packs/my-pack/golden/negative"
contracts:
  - incident_response.yaml
  - search.yaml
"""

INCIDENT = """\
# Does my AI follow the incident response protocol?
tool: multi_tool_call
expect_tools:
  - check_service_health
  - pull_service_logs
  - search_past_incidents
  - create_incident_ticket
tool_order: strict
tool_call_match_mode: strict
pass_threshold: 1.0
expected_tool_calls:
  - name: check_service_health
    argument_invariants:
      - path: $.service_id
        equals: "payment-gateway-us-east-1"
  - name: pull_service_logs
    argument_invariants:
      - path: $.start_time
        exists: true
        type: string
  - name: search_past_incidents
    argument_invariants:
      - path: $.query
        contains: "connection timeout"
  - name: create_incident_ticket
    argument_invariants:
      - path: $.severity
        equals: "P1"
assertions:
  output_invariants:
    - path: $.tool_calls
      length_gte: 4
golden_cases:
  - id: incident_response_success
    input_ref: incident_response.success.json
    expect_ok: true
    provider_modes: ["recorded"]
  - id: incident_response_not_invoked
    input_ref: negative/incident_response.not_invoked.json
    expect_ok: false
    expected_error: "tool_not_invoked"
    provider_modes: ["recorded"]
"""

SEARCH = """\
tool: "search"
assertions:
  output_invariants:
    - path: "$.tool_calls[0].name"
      equals: "search"
    - path: "$.tool_calls[0].arguments.query"
      regex: "(?i)api key"
golden_cases:
  - id: "search_success"
    input_ref: "search.success.json"
    expect_ok: true
"""

SCHEMA = {"type": "object", "properties": {"service_id": {"type": "string"}}}
INCIDENT_CALLS = [
    ("check_service_health", {"service_id": "payment-gateway-us-east-1"}),
    ("pull_service_logs", {"service_id": "payment-gateway-us-east-1", "start_time": "14:23"}),
    ("search_past_incidents", {"query": "connection timeout after 30000ms"}),
    ("create_incident_ticket", {"severity": "P1", "description": "503 errors"}),
]


def boundary(**request: Any) -> dict[str, Any]:
    return {
        "boundary_version": "1.0",
        "provider": "openai",
        "model_id": "gpt-4o-mini",
        "tool_schema_hash": "starter_ir_tool_001",
        "messages_hash": "starter_ir_msg_001",
        "tool_choice_mode": "required",
        "request": {"messages": [{"role": "user", "content": "INCIDENT #IR-0847"}], **request},
    }


def incident_success() -> dict[str, Any]:
    tools = [
        {"name": name, "description": name, "parameters": SCHEMA} for name, _ in INCIDENT_CALLS
    ]
    calls = [
        {"id": f"call_{i}", "name": name, "arguments": args}
        for i, (name, args) in enumerate(INCIDENT_CALLS)
    ]
    return {
        **boundary(tools=tools, tool_choice="required", temperature=0, max_tokens=4096),
        "response": {"success": True, "tool_calls": calls, "content": None},
    }


def incident_not_invoked() -> dict[str, Any]:
    tools = [{"name": "check_service_health", "parameters": SCHEMA}]
    error = {"code": "tool_not_invoked", "message": "Model did not invoke the expected tool"}
    return {
        **boundary(tools=tools, tool_choice="auto", temperature=0, max_tokens=1024),
        "response": {"success": False, "tool_calls": [], "content": "I'll help.", "error": error},
    }


def search_success() -> dict[str, Any]:
    wrapped = {"type": "function", "function": {"name": "search", "parameters": SCHEMA}}
    call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    call["function"]["arguments"] = json.dumps({"query": "rotate an API key"})
    return {
        **boundary(tools=[wrapped], tool_choice="auto", temperature=0),
        "response": {"success": True, "tool_calls": [call], "content": None},
    }


def write(path: Path, content: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2))


def new_repository(top: Path) -> Path:
    """A fresh git repository holding the pack, as a team would write it from the guide."""
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    pack = top / "packs" / "my-pack"
    write(top / ".replayci.yml", 'pack: "./packs/my-pack"\nprovider: openai\nmodel: gpt-4o-mini\n')
    write(pack / "pack.yaml", PACK_YAML)
    write(pack / "nr-allowlist.json", {"version": "1.0", "entries": []})
    write(pack / "contracts/incident_response.yaml", INCIDENT)
    write(pack / "contracts/search.yaml", SEARCH)
    write(pack / "golden/incident_response.success.json", incident_success())
    write(pack / "golden/negative/incident_response.not_invoked.json", incident_not_invoked())
    write(pack / "golden/search.success.json", search_success())
    return top


def replaygate(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run(
        [sys.executable, "-m", "replaygate.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_team_adopts_replaygate_from_the_root_a_subfolder_and_outside(tmp_path: Path) -> None:
    top = new_repository(tmp_path / "repo")
    (tmp_path / "elsewhere").mkdir()
    root_line = f"root: {top.resolve()} (the nearest folder above the pack holding .git)\n"
    runs = {
        "root": replaygate(top, "run"),
        "subfolder": replaygate(top / "packs/my-pack/contracts", "run"),
        "outside": replaygate(tmp_path / "elsewhere", "run", str(top / "packs/my-pack")),
        "replayci flags": replaygate(
            top, "run", "--pack", "packs/my-pack", "--provider", "recorded"
        ),
        "validate": replaygate(top / "packs", "validate"),
    }
    for name, done in runs.items():
        assert (done.returncode, done.stderr) == (0, root_line), (name, done.stdout, done.stderr)
        if name != "validate":
            assert done.stdout.startswith("3 passed, 0 failed, 0 errors, 0 skipped in "), name
    assert runs["validate"].stdout == "1 pack, 2 contracts, 3 cases, 0 problems\n"


PACK = "packs/my-pack"


def edit(relative: str, old: str, new: str) -> Callable[[Path], None]:
    def change(top: Path) -> None:
        path = top / PACK / relative
        text = path.read_text()
        assert old in text, (relative, old)
        path.write_text(text.replace(old, new, 1))

    return change


def rename(relative: str, new: str) -> Callable[[Path], None]:
    return lambda top: (top / PACK / relative).rename(top / PACK / new)


def add(relative: str, content: Any) -> Callable[[Path], None]:
    return lambda top: write(top / PACK / relative, content)


def allowlist(version: str, expiry: str) -> dict[str, Any]:
    entry = {
        "contract_path": "contracts/search.yaml",
        "reason_code": "model_nondeterminism",
        "owner": "team-ml",
        "expiry_date": expiry,
        "rationale": "search wording varies",
    }
    return {"version": version, "entries": [entry]}


SEARCH_FILE = f"{PACK}/contracts/search.yaml"
INCIDENT_FILE = f"{PACK}/contracts/incident_response.yaml"
MISTAKES: dict[str, tuple[Callable[[Path], None], list[str], int, list[str]]] = {
    # name: (the mistake, extra arguments, exit code, lines the output must hold)
    "contract not listed": (
        add("contracts/deploy2.yaml", SEARCH),
        [],
        2,
        [
            f"{PACK}/pack.yaml:11: contracts/deploy2.yaml is in contracts/ but not listed in "
            "pack.yaml `contracts`; list it, or move it out"
        ],
    ),
    "fixture no case names": (
        add("golden/search.old.json", search_success()),
        [],
        0,
        [
            f"{PACK}/golden/search.old.json: warning: no golden case names this fixture; "
            "add a case for it, or remove it",
            "3 passed, 0 failed, 0 errors, 0 skipped, 1 warning in",
        ],
    ),
    "fixture request misspelt": (
        edit("golden/search.success.json", '"request"', '"requst"'),
        [],
        1,
        [
            f"{SEARCH_FILE}:9: {PACK}/golden/search.success.json:8: unknown key 'requst' "
            "(did you mean 'request'?) (case search_success)"
        ],
    ),
    "tool parameters misspelt": (
        edit("golden/incident_response.success.json", '"parameters"', '"paramters"'),
        [],
        1,
        [
            f"{INCIDENT_FILE}:34: {PACK}/golden/incident_response.success.json:19: "
            "request.tools[0]: "
            "unknown key 'paramters' (did you mean 'parameters'?) "
            "(case incident_response_success)"
        ],
    ),
    "unknown schema_version": (
        edit("pack.yaml", '"v0.1"', '"v0.2"'),
        [],
        2,
        [
            f"{PACK}/pack.yaml:4: schema_version: 'v0.2' is not a version this replaygate "
            "knows (known: v0.1)"
        ],
    ),
    "unknown boundary_version": (
        edit("golden/search.success.json", '"1.0"', '"1.1"'),
        [],
        1,
        [
            f"{SEARCH_FILE}:9: {PACK}/golden/search.success.json:2: "
            "boundary_version: '1.1' is not a "
            "version this replaygate knows (known: 1.0) (case search_success)"
        ],
    ),
    "unknown allowlist version": (
        add("nr-allowlist.json", {"version": "2.0", "entries": []}),
        [],
        2,
        [
            f"{PACK}/nr-allowlist.json: version: '2.0' is not a version this replaygate knows "
            "(known: 1.0)"
        ],
    ),
    "required key misspelt": (
        edit("contracts/search.yaml", "expect_ok:", "expect_okk:"),
        [],
        2,
        [f"{SEARCH_FILE}:11: unknown key 'expect_okk' (did you mean 'expect_ok'?)"],
    ),
    "key at the wrong level": (
        edit("contracts/search.yaml", "assertions:\n  output_invariants:", "output_invariants:"),
        [],
        2,
        [f"{SEARCH_FILE}:2: `output_invariants` belongs under `assertions:`, not here"],
    ),
    "library wording": (
        edit("contracts/incident_response.yaml", "tool_order: strict", "tool_order: strictly"),
        [],
        2,
        [f"{INCIDENT_FILE}:8: tool_order: must be one of any, strict, got 'strictly'"],
    ),
    "golden directory misspelt": (
        edit("pack.yaml", 'packs/my-pack/golden"', 'packs/my-pack/goldn"'),
        [],
        2,
        [
            f"{PACK}/pack.yaml:9: paths.golden_dir 'packs/my-pack/goldn' is not a directory: "
            "paths resolve against the repository root"
        ],
    ),
    "golden directory missing": (
        lambda top: (
            edit(
                "pack.yaml",
                PACK_YAML[PACK_YAML.index("paths:") : PACK_YAML.index("contracts:")],
                "",
            )(top),
            rename("golden", "goldn")(top),
        ),
        [],
        2,
        [
            f"{PACK}/pack.yaml: the golden directory {PACK}/golden does not exist (fixtures are "
            "read from the pack's golden/ folder, or from paths.golden_dir); did you mean goldn/? "
            "rename it golden/, or set paths.golden_dir",
            "0 passed, 0 failed, 0 errors, 0 skipped, 1 problem in",
        ],
    ),
    "path relative to the pack": (
        edit("pack.yaml", '"packs/my-pack/contracts"', '"contracts"'),
        [],
        2,
        ["relative to the pack it exists: write 'packs/my-pack/contracts'", "--root sets it"],
    ),
    "pack.yml": (
        rename("pack.yaml", "pack.yml"),
        [],
        2,
        [f"{PACK}/pack.yml: the pack file is named pack.yaml, not pack.yml: rename it"],
    ),
    "one contract": (
        lambda top: None,
        [f"{PACK}/contracts/search.yaml"],
        0,
        ["1 passed, 0 failed, 0 errors, 0 skipped in"],
    ),
    "one case": (
        lambda top: None,
        [f"{INCIDENT_FILE}::incident_response_not_invoked"],
        0,
        ["1 passed, 0 failed, 0 errors, 0 skipped in"],
    ),
    "tab indentation": (
        edit("contracts/search.yaml", "\n    expect_ok: true", "\n\texpect_ok: true"),
        [],
        2,
        [
            f"{SEARCH_FILE}:11: YAML does not allow tabs for indentation; "
            "indent this line with spaces"
        ],
    ),
    "float in exponent form": (
        edit(
            "contracts/search.yaml",
            "golden_cases:",
            "    - path: $.score\n      one_of: [5.0e-12]\n      optional: true\ngolden_cases:",
        ),
        [],
        0,
        ["3 passed, 0 failed, 0 errors, 0 skipped in"],
    ),
    "number meant as text": (
        edit("contracts/search.yaml", 'equals: "search"', "equals: 3.10"),
        [],
        1,
        [
            f"{SEARCH_FILE}:5: $.tool_calls[0].name: 'search' is not equal to 3.1 "
            "[schema_violation]",
        ],
    ),
    "expired allowlist entry": (
        add("nr-allowlist.json", json.dumps(allowlist("1.0", "2020-01-01"), indent=2)),
        [],
        0,
        [
            f"{PACK}/nr-allowlist.json:8: warning: entry 0 (contracts/search.yaml, owner "
            "team-ml) expired on 2020-01-01: it no longer applies, so the contract's cases are "
            "judged normally; renew or remove it",
        ],
    ),
    "the same failure many times": (
        lambda top: (
            add(
                "golden/search.weather.json",
                search_success()
                | {
                    "response": {
                        "tool_calls": [
                            {"name": "search", "arguments": {"query": "weather in Bern"}}
                        ]
                    }
                },
            )(top),
            edit(
                "contracts/search.yaml",
                "    expect_ok: true\n",
                "    expect_ok: true\n"
                + "".join(
                    f'  - id: "weather_{i}"\n    input_ref: "search.weather.json"\n'
                    "    expect_ok: true\n"
                    for i in range(3)
                ),
            )(top),
        ),
        [],
        1,
        [
            f"{SEARCH_FILE}:7: $.tool_calls[0].arguments.query: 'weather in Bern' does not match",
            "... and 2 more cases: same problem",
            "3 passed, 3 failed",
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_each_adoption_mistake_gets_one_clear_message(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mistake, arguments, exit_code, expected = MISTAKES[name]
    top = new_repository(tmp_path / "repo")
    mistake(top)
    monkeypatch.chdir(top)
    code = cli.main(["run", *arguments])
    out = capsys.readouterr().out
    assert code == exit_code, out
    for line in expected:
        assert line in out, (line, out)
    assert "Traceback" not in out and "(and " not in out
