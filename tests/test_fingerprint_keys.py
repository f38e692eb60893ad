"""A failure's fingerprint follows what its assertion says, not where the assertion stands."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from packbuilder import fixture, make_pack
from replaygate.core.model import CaseResult
from replaygate.engine.fingerprint_keys import failure_key
from replaygate.engine.runner import run_packs
from replaygate.loading.contract import Contract
from replaygate.loading.pack import load_packs

NOW = datetime(2026, 11, 26, tzinfo=UTC)
CASES = "golden_cases:\n  - id: case\n    input_ref: ok.json\n    expect_ok: true\n"


def judged(root: Path, contract: str, calls: list[dict[str, object]] | None = None) -> CaseResult:
    make_pack(root, contract=contract, fixtures={"ok.json": fixture(calls, content="sunny")})
    loaded = load_packs(["packs"], cwd=root, root=None, now=NOW)
    assert loaded.problems == ()
    (case,) = run_packs(loaded, {}).cases
    return case


def contract_of(root: Path) -> Contract:
    (pack,) = load_packs(["packs"], cwd=root, root=None, now=NOW).packs
    (contract,) = pack.contracts
    return contract


def output_contract(*invariants: str) -> str:
    lines = "".join(f"    - {item}\n" for item in invariants)
    return f"tool: get_weather\nassertions:\n  output_invariants:\n{lines}" + CASES


FAILING = "{path: $.content, equals: rainy}"
UNRELATED = "{path: $.success, equals: true}"


def test_an_unrelated_assertion_inserted_above_keeps_the_fingerprint(tmp_path: Path) -> None:
    before = judged(tmp_path / "a", output_contract(FAILING))
    after = judged(tmp_path / "b", output_contract(UNRELATED, FAILING))
    assert after.failures[0].locator == "assertions.output_invariants[1]:equals"  # it moved
    assert before.fingerprint is not None
    assert after.fingerprint == before.fingerprint


def test_what_the_assertion_says_makes_the_fingerprint(tmp_path: Path) -> None:
    base = judged(tmp_path / "a", output_contract(FAILING)).fingerprint
    other_value = judged(tmp_path / "b", output_contract(FAILING.replace("rainy", "snowy")))
    other_path = output_contract("{path: $.model, equals: rainy}")
    assert other_value.fingerprint != base
    assert judged(tmp_path / "c", other_path).fingerprint != base


def test_two_identical_assertions_have_distinct_keys_in_contract_order(tmp_path: Path) -> None:
    case = judged(tmp_path / "a", output_contract(FAILING, UNRELATED, FAILING))
    first, second = (failure_key(contract_of(tmp_path / "a"), f.locator) for f in case.failures)
    assert first != second
    again = judged(tmp_path / "b", output_contract(UNRELATED, FAILING, FAILING))
    assert case.fingerprint == again.fingerprint
    keys = [failure_key(contract_of(tmp_path / "b"), f.locator) for f in again.failures]
    assert keys == [first, second]


def test_a_key_holds_no_recorded_value(tmp_path: Path) -> None:
    case = judged(tmp_path, output_contract(FAILING))
    key = failure_key(contract_of(tmp_path), case.failures[0].locator)
    assert "rainy" in key
    assert "sunny" not in key


def calls_contract(*calls: tuple[str, str]) -> str:
    text = "tool: multi_tool_call\nexpected_tool_calls:\n"
    for name, invariant in calls:
        text += f"  - name: {name}\n"
        if invariant:
            text += f"    argument_invariants:\n      - {invariant}\n"
    return text + CASES


def test_an_expected_call_inserted_above_keeps_its_invariants_fingerprint(tmp_path: Path) -> None:
    weather = ("get_weather", "{path: $.city, equals: Bern}")
    calls = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    before = judged(tmp_path / "a", calls_contract(weather), calls)
    more = [{"name": "get_time", "arguments": {}}, *calls]
    after = judged(tmp_path / "b", calls_contract(("get_time", ""), weather), more)
    assert after.failures[0].locator == "expected_tool_calls[1].argument_invariants[0]:equals"
    assert before.fingerprint is not None
    assert after.fingerprint == before.fingerprint


def test_a_missing_call_keeps_its_fingerprint_when_a_call_is_inserted_above(
    tmp_path: Path,
) -> None:
    before = judged(tmp_path / "a", calls_contract(("book", "")), [])
    inserted = calls_contract(("get_time", ""), ("book", ""))
    after = judged(tmp_path / "b", inserted, [{"name": "get_time", "arguments": {}}])
    assert after.failures[0].locator == "expected_tool_calls[1]"
    assert (after.classification, before.classification) == ("tool_not_invoked",) * 2
    assert after.fingerprint == before.fingerprint
