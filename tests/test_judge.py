"""One golden case judged, through the loaded pack: outcomes a hand mutation once survived."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from packbuilder import CONTRACT, contract, fixture, golden_case, make_pack
from replaygate.assertions import regex_time
from replaygate.core.model import CaseResult, Status
from replaygate.engine.runner import run_packs
from replaygate.loading.pack import load_packs

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def run(root: Path) -> dict[str, CaseResult]:
    loaded = load_packs(["packs"], cwd=root, root=None, now=NOW)
    assert loaded.problems == ()
    return {c.contract.removeprefix("contracts/"): c for c in run_packs(loaded, {}).cases}


def _invariant(assertion: str, ref: str = "ok.json", kind: str = "output") -> str:
    head = f"tool: get_weather\nassertions:\n  {kind}_invariants:\n    - {assertion}\n"
    return contract(golden_case("case", ref), head=head)


def _bad_schema() -> dict[str, Any]:
    body = fixture()
    body["request"]["tools"][0]["parameters"] = {"type": "objekt"}
    return body


def test_a_case_that_cannot_be_decided_is_one_errored_case(tmp_path: Path) -> None:
    contracts = {
        "regex.yaml": _invariant("{path: $.content, regex: '(a|a)+$'}"),
        "env.yaml": _invariant("{path: $.content, equals_env: REPLAYGATE_UNSET_VARIABLE}"),
        "broad.yaml": _invariant("{path: '$.messages[*].role', type: string}", kind="input"),
        "schema.yaml": _invariant("{path: $.success, equals: true}", "bad_schema.json"),
        "fine.yaml": _invariant("{path: $.success, equals: true}"),
    }
    body = fixture(content="a" * 40 + "!")
    body["request"]["messages"] = [{"role": "user", "content": "weather?"}] * 10_001
    fixtures = {
        "ok.json": body,
        "bad_schema.json": _bad_schema(),
    }
    make_pack(tmp_path, contracts=contracts, fixtures=fixtures)
    found = {name: (case.status, case.reason or "") for name, case in run(tmp_path).items()}
    assert found.pop("fine.yaml") == (Status.PASSED, "")  # the run went on
    assert {status for status, _ in found.values()} == {Status.ERROR}
    assert found["regex.yaml"][1] == (
        "assertions.output_invariants[0]:regex: regex '(a|a)+$' timed out on a 41-character string"
    )
    assert found["env.yaml"][1].endswith(
        "environment variable REPLAYGATE_UNSET_VARIABLE is not set"
    )
    assert found["broad.yaml"][1].endswith(":type: path matched more than 10000 values")
    assert "invalid JSON Schema" in found["schema.yaml"][1]


def test_wrong_tool_is_primary_over_schema_violation_when_both_apply(tmp_path: Path) -> None:
    contract = CONTRACT.replace(
        "tool: get_weather\n", "tool: get_weather\ntool_call_match_mode: strict\n"
    )
    calls = [
        {"name": "get_weather", "arguments": {"city": "Paris"}},  # breaks the invariant
        {"name": "send_email", "arguments": {}},  # a tool the contract does not expect
    ]
    make_pack(tmp_path, contract=contract, fixtures={"ok.json": fixture(calls)})
    case = run(tmp_path)["c.yaml"]
    assert sorted(f.classification for f in case.failures) == ["schema_violation", "wrong_tool"]
    assert (case.status, case.classification) == (Status.FAILED, "wrong_tool")
    assert case.failures[0].classification == "wrong_tool"  # the primary failure leads


def test_the_timed_regex_searches_of_a_case_share_one_cpu_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each search within its own bound, many of them past the case's budget (made tiny here,
    as a pattern of 0.2 s over 300 values would spend 2 s): the case errors, naming the budget
    and the assertion; the run goes on."""
    monkeypatch.setattr(regex_time, "CASE_BUDGET_S", 1e-9, raising=False)
    calls = [{"name": "get_weather", "arguments": {"city": "Paris"}}] * 50
    looked_ahead = "^(?=P).*s$"  # a lookahead: every search is timed
    schema_body = fixture(calls)
    schema_body["request"]["tools"][0]["parameters"]["properties"]["city"]["pattern"] = looked_ahead
    contracts = {
        "regex.yaml": _invariant(
            f"{{path: '$.tool_calls[*].arguments.city', regex: '{looked_ahead}'}}"
        ),
        "schema.yaml": _invariant("{path: $.success, equals: true}", "patterned.json"),
        "fine.yaml": _invariant("{path: $.success, equals: true}"),
    }
    fixtures = {"ok.json": fixture(calls), "patterned.json": schema_body}
    make_pack(tmp_path, contracts=contracts, fixtures=fixtures)
    found = {name: (case.status, case.reason or "") for name, case in run(tmp_path).items()}
    assert found.pop("fine.yaml") == (Status.PASSED, "")
    assert found["regex.yaml"] == (
        Status.ERROR,
        "assertions.output_invariants[0]:regex: regex '^(?=P).*s$' timed out on a "
        "5-character string: the case's regex CPU budget of 1e-09 s is spent (match 1 of 50)",
    )
    assert found["schema.yaml"][0] == Status.ERROR
    assert found["schema.yaml"][1].endswith(
        "timed out: the case's regex CPU budget of 1e-09 s is spent"
    )
