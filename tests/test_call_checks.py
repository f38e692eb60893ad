"""What tool-call checks say about each call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packbuilder import CONTRACT, fixture, make_pack
from replaygate.cli import main


def test_each_extra_call_in_strict_mode_names_its_call_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = [{"name": "get_weather", "arguments": {"city": "Bern"}}]
    calls += [{"name": "get_weather", "arguments": {"city": "Bern"}}] * 2
    calls += [{"name": "search", "arguments": {}}] * 3
    contract = CONTRACT.replace(
        "tool: get_weather\n", "tool: get_weather\ntool_call_match_mode: strict\n"
    )
    make_pack(tmp_path, contract=contract, fixtures={"ok.json": fixture(calls)})
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--json", "r.json", "-q"]) == 1
    failures = json.loads(Path("r.json").read_text())["cases"][0]["failures"]
    messages = [failure["message"] for failure in failures]
    assert messages == [
        "one call too many to 'get_weather' at $.tool_calls[1] (tool_call_match_mode: strict)",
        "one call too many to 'get_weather' at $.tool_calls[2] (tool_call_match_mode: strict)",
        "unexpected call to 'search' at $.tool_calls[3] (tool_call_match_mode: strict)",
        "unexpected call to 'search' at $.tool_calls[4] (tool_call_match_mode: strict)",
        "unexpected call to 'search' at $.tool_calls[5] (tool_call_match_mode: strict)",
    ]
    assert {failure["locator"] for failure in failures} == {"tool_call_match_mode"}


def test_a_malformed_call_is_the_one_too_many_in_strict_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Any get_weather call would do, but a malformed one never stands for an expected call:
    # the well-formed call at [1] is the match, the malformed one at [0] is the extra.
    calls = [
        {"name": "get_weather", "arguments": "{not json"},
        {"name": "get_weather", "arguments": {"city": "Bern"}},
    ]
    contract = CONTRACT.replace(
        "tool: get_weather\n", "tool: get_weather\ntool_call_match_mode: strict\n"
    ).replace("    argument_invariants:\n      - path: $.city\n        equals: Bern\n", "")
    make_pack(tmp_path, contract=contract, fixtures={"ok.json": fixture(calls)})
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--json", "r.json", "-q"]) == 1
    failures = json.loads(Path("r.json").read_text())["cases"][0]["failures"]
    too_many = [f["message"] for f in failures if f["message"].startswith("one call too many")]
    assert too_many == [
        "one call too many to 'get_weather' at $.tool_calls[0] (tool_call_match_mode: strict)"
    ]
