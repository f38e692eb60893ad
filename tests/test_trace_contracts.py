"""trace_assertions in a contract: run end to end into every report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from packbuilder import make_pack
from replaygate.cli import main
from replaygate.core.fingerprint import fingerprint
from replaygate.report.junit import render_junit
from replaygate.report.markdown import render_markdown
from replaygate.report.text import render_text

CONTRACT = """\
tool: multi_tool_call
trace_assertions:
  - id: status-first
    type: tool_called
    tool: Bash
    call_index: 0
    args_match:
      command: "^git status"
  - id: mentions-done
    type: output_contains
    weight: 3
    pattern: "(?-i)Done"
golden_cases:
  - id: run
    input_ref: run.json
    expect_ok: true
"""

FLAT = {
    "turns": [
        {"tool_calls": [{"id": "1", "name": "Bash", "arguments": {"command": "git status"}}]},
        {"text": "done"},
    ]
}


def run(root: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = root / "r.json"
    code = main(["run", "--root", str(root), "--json", str(out), str(root / "packs"), *extra])
    return code, json.loads(out.read_text())


def test_a_failing_trace_assertion_is_a_located_fingerprinted_failure(tmp_path: Path) -> None:
    make_pack(tmp_path, contract=CONTRACT, fixtures={"run.json": {"response": FLAT}})
    code, results = run(tmp_path)
    (case,) = results["cases"]
    assert code == 1 and case["status"] == "failed"
    assert case["classification"] == "schema_violation"
    assert case["fingerprint"] == fingerprint(
        "p", "contracts/c.yaml", "run", "schema_violation", "trace_assertions[1]:output_contains"
    )
    (failure,) = case["failures"]
    assert (failure["file"], failure["line"]) == ("packs/p/contracts/c.yaml", 9)
    assert failure["message"] == "mentions-done: the final output 'done' does not match '(?-i)Done'"
    assert case["score"] == 0.25
    assert [(a["id"], a["status"], a["weight"]) for a in case["assertions"]] == [
        ("status-first", "passed", 1.0),
        ("mentions-done", "failed", 3.0),
    ]


def test_a_passing_trace_case_scores_one(tmp_path: Path) -> None:
    passing = {"turns": [*FLAT["turns"][:1], {"text": "Done"}]}
    make_pack(tmp_path, contract=CONTRACT, fixtures={"run.json": {"response": passing}})
    code, results = run(tmp_path)
    assert code == 0 and results["cases"][0]["score"] == 1.0


def test_a_single_response_fixture_is_a_single_turn_trace(tmp_path: Path) -> None:
    single = {"success": True, "content": "Done", "tool_calls": [
        {"name": "Bash", "arguments": {"command": "git status --short"}}]}  # fmt: skip
    make_pack(tmp_path, contract=CONTRACT, fixtures={"run.json": {"response": single}})
    code, results = run(tmp_path)
    assert code == 0 and results["cases"][0]["score"] == 1.0


def test_a_regex_timeout_errors_the_case_at_the_assertions_line(tmp_path: Path) -> None:
    contract = CONTRACT.replace('pattern: "(?-i)Done"', 'pattern: "(a|a)+$"')
    slow = {"turns": [{"text": "a" * 40 + "!"}]}
    make_pack(tmp_path, contract=contract, fixtures={"run.json": {"response": slow}})
    code, results = run(tmp_path)
    (case,) = results["cases"]
    assert code == 1 and case["status"] == "error"
    assert case["reason"] == (
        "packs/p/contracts/c.yaml:9: trace_assertions[1]:output_contains:"
        " regex '(a|a)+$' timed out on a 41-character string"
    )


def test_a_bad_trace_assertion_is_a_load_problem_with_its_line(tmp_path: Path) -> None:
    bad = CONTRACT.replace("type: output_contains", "type: output_contain")
    make_pack(tmp_path, contract=bad, fixtures={"run.json": {"response": FLAT}})
    code, results = run(tmp_path)
    assert code == 2
    (problem,) = results["problems"]
    assert (problem["file"], problem["line"]) == ("packs/p/contracts/c.yaml", 10)
    assert "(did you mean 'output_contains'?)" in problem["message"]


def test_every_report_shows_the_score_and_the_failed_assertion(tmp_path: Path) -> None:
    from replaygate.report.json import read_results

    make_pack(tmp_path, contract=CONTRACT, fixtures={"run.json": {"response": FLAT}})
    run(tmp_path)
    result = read_results(str(tmp_path / "r.json"))
    markdown = render_markdown(result)
    assert "Trace cases: weighted score (1)" in markdown
    assert "| failed | ` 0.25 (failed: mentions-done) ` |" in markdown
    junit = render_junit(result)
    assert junit.count("<testcase ") == 1
    assert "score: 0.25 (failed: mentions-done)" in junit
    assert "failed: mentions-done (output_contains)" in junit
    assert "mentions-done: the final output" in render_text(result)


def test_the_documented_trace_contracts_load(tmp_path: Path) -> None:
    from replaygate.loading.pack import load_contract

    docs = Path(__file__).resolve().parents[1]
    blocks = [
        block.split("```", 1)[0]
        for page in ("README.md", "docs/traces.md")
        for block in (docs / page).read_text(encoding="utf-8").split("```yaml\n")[1:]
        if "trace_assertions:" in block.split("```", 1)[0]
    ]
    assert len(blocks) == 2
    for index, text in enumerate(blocks):
        path = tmp_path / f"c{index}.yaml"
        path.write_text(text)
        contract = load_contract(path, tmp_path, tmp_path)
        assert contract.trace_assertions, text
