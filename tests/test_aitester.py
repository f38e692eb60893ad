"""ai-tester runs judged offline: scenario and trace pairs, verdicts we overturn, problems."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from replaygate.cli import main

DATA = Path(__file__).parent / "data" / "aitester"
COMPLETE = json.loads((DATA / "trace-1.1.0-complete.json").read_text())
SCENARIO_PATH = "skills/aif-commit/tests/synth.yaml"


def repo(tmp_path: Path, scenario: str | None = None) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "runs").mkdir()
    target = tmp_path / SCENARIO_PATH
    target.parent.mkdir(parents=True)
    text = scenario or (DATA / "basic-feat.yaml").read_text()
    target.write_text(text.replace("scenario: basic-feat-commit", "scenario: synth"))
    return tmp_path


def write_run(root: Path, name: str, trace: dict[str, Any]) -> None:
    (root / "runs" / f"{name}.json").write_text(json.dumps(trace))


def derived(**changes: Any) -> dict[str, Any]:
    """The complete trace with top-level members replaced (``runner`` ones merged)."""
    trace = copy.deepcopy(COMPLETE)
    runner = changes.pop("runner", {})
    trace.update(changes)
    trace["runner"].update(runner)
    return trace


def calls(*inputs: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"index": n, "role": "assistant", "textDeltas": [],
         "toolCalls": [{"id": str(n), "name": name, "input": args, "resultContent": "",
                        "resultIsError": False, "answered": None}]}
        for n, (name, args) in enumerate(inputs)
    ]  # fmt: skip


def run(root: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = root / "r.json"
    code = main(["run", "--root", str(root), "--json", str(out), str(root / "runs"), *extra])
    return code, json.loads(out.read_text())


def assertions(case: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["id"]: item for item in case["assertions"]}


def test_the_complete_trace_passes_every_scenario_assertion(tmp_path: Path) -> None:
    root = repo(tmp_path)
    write_run(root, "complete", COMPLETE)
    code, results = run(root)
    (case,) = results["cases"]
    assert code == 0 and case["status"] == "passed" and case["score"] == 1.0
    assert case["pack"] == "ai-tester" and case["contract"] == SCENARIO_PATH
    assert case["case_id"] == "synth"
    assert list(assertions(case)) == [
        "calls-git-status", "diff-confirm-then-commit", "no-unscoped-bash", "mentions-feat-type",
        "efficient", "stay-in-sandbox", "no_unanswered_questions", "max_turns",
    ]  # fmt: skip
    assert assertions(case)["calls-git-status"]["recorded"] is True


def test_a_missing_command_is_absent_so_we_pass_what_ai_tester_failed(tmp_path: Path) -> None:
    root = repo(tmp_path)
    turns = calls(("Bash", {"command": "git status"}), ("Bash", {"description": "no command"}),
                  ("Bash", {"command": "git diff --cached"}), ("AskUserQuestion", {}),
                  ("Bash", {"command": "git commit -m feat"}))  # fmt: skip
    turns[3]["toolCalls"][0]["answered"] = {"matchedEntryIndex": 0, "chosenLabel": "ok"}
    recorded = [{"id": "no-unscoped-bash", "type": "no_tool_called", "pass": False,
                 "weight": 1, "detail": "matched Bash"}]  # fmt: skip
    write_run(root, "run", derived(turns=turns, assertions=recorded,
                                   scoring={"allPassed": False, "overallPass": False}))  # fmt: skip
    code, results = run(root)
    (case,) = results["cases"]
    assert code == 0 and case["status"] == "passed"
    item = assertions(case)["no-unscoped-bash"]
    assert item["recorded"] is False and item["status"] == "passed"
    assert item["differs"] == (
        "ai-tester recorded fail, replaygate passes it by rule absent_argument "
        "(a missing argument is absent, not the empty string)"
    )


def test_an_inverted_inline_flag_fails_what_ai_tester_passed(tmp_path: Path) -> None:
    scenario = (DATA / "basic-feat.yaml").read_text().replace(r'"\\bfeat\\b"', '"(?-i)FEAT"')
    root = repo(tmp_path, scenario)
    recorded = [{"id": "mentions-feat-type", "type": "output_contains", "pass": True, "weight": 1,
                 "detail": "matched"}]  # fmt: skip
    write_run(root, "run", derived(assertions=recorded))
    code, results = run(root)
    (case,) = results["cases"]
    assert code == 1 and case["classification"] == "schema_violation"
    item = assertions(case)["mentions-feat-type"]
    assert item["differs"].startswith(
        "ai-tester recorded pass, replaygate fails it by rule inline_flags"
    )
    assert case["score"] == pytest.approx(8 / 9)  # weights 1+2+1+1+1+1 and two implicit 1s


def test_a_home_path_escapes_the_sandbox_ai_tester_thought_it_inside(tmp_path: Path) -> None:
    root = repo(tmp_path)
    turns = copy.deepcopy(COMPLETE["turns"])
    read = {"id": "9", "name": "Read", "input": {"file_path": "~/.ssh/id_rsa"},
            "resultContent": "", "resultIsError": False, "answered": None}  # fmt: skip
    turns[0]["toolCalls"].append(read)
    write_run(root, "run", derived(turns=turns))
    code, results = run(root)
    (case,) = results["cases"]
    assert code == 1 and case["classification"] == "path_escape"
    item = assertions(case)["stay-in-sandbox"]
    # the run was recorded as passed, so ai-tester passed this assertion too
    assert item["recorded"] is True and "by rule tilde" in item["differs"]


def test_a_max_turns_overrun_fails_the_run_ai_tester_passed(tmp_path: Path) -> None:
    root = repo(tmp_path)
    write_run(root, "run", derived(runner={"maxTurns": 14, "maxTurnsUserSet": True,
                                           "hitMaxTurns": True}))  # fmt: skip
    code, results = run(root)
    (case,) = results["cases"]
    assert code == 1 and case["classification"] == "budget_exceeded"
    item = assertions(case)["max_turns"]
    assert (item["file"], item["line"]) == (SCENARIO_PATH, 8)
    assert "by rule max_turns_overrun (running into max_turns fails the run)" in item["differs"]


def test_the_token_budget_of_the_trace_is_checked(tmp_path: Path) -> None:
    root = repo(tmp_path)
    trace = derived()
    trace["scenario"]["tokenBudget"] = 50
    write_run(root, "run", trace)
    code, results = run(root)
    (case,) = results["cases"]
    assert code == 1 and case["classification"] == "budget_exceeded"
    assert assertions(case)["token_budget"]["message"] == "60 tokens, more than the budget of 50"


def test_an_unanswered_question_fails(tmp_path: Path) -> None:
    root = repo(tmp_path)
    turns = copy.deepcopy(COMPLETE["turns"])
    turns[2]["toolCalls"][0]["answered"] = None
    write_run(root, "run", derived(turns=turns))
    code, results = run(root)
    assert code == 1 and results["cases"][0]["classification"] == "unanswered_question"


def test_a_recorded_unanswered_count_fails_what_the_calls_do_not_show(tmp_path: Path) -> None:
    root = repo(tmp_path)
    trace = derived()
    trace["toolCallSummary"]["unansweredQuestions"] = 1  # a sub-question of an answered batch
    write_run(root, "run", trace)
    code, results = run(root)
    (case,) = results["cases"]
    assert code == 1 and case["classification"] == "unanswered_question"
    assert assertions(case)["no_unanswered_questions"]["message"] == (
        "1 question(s) to the user had no matching scripted answer"
        " (the trace records 1; its calls show 0)"
    )


def test_a_rule_that_only_fails_does_not_explain_a_pass(tmp_path: Path) -> None:
    root = repo(tmp_path)
    trace = derived(cost={"inputTokens": 1, "outputTokens": 0})  # the turns count 60
    trace["scenario"]["tokenBudget"] = 100
    trace["assertions"].append({"id": "token_budget", "type": "token_budget", "pass": False})
    write_run(root, "run", trace)
    _, results = run(root)
    item = assertions(results["cases"][0])["token_budget"]
    assert item["status"] == "passed"
    # token_count only ever fails a run: it cannot be why we pass what ai-tester failed
    assert item["differs"] == (
        "ai-tester recorded fail, replaygate passes it: no stricter rule explains it"
        " (the recorded turns do not support it)"
    )


def test_a_rust_2_0_0_trace_reads(tmp_path: Path) -> None:
    root = repo(tmp_path)
    runner = {"runtime": "claude", "stoppedReason": "end_turn"}
    trace = derived(schemaVersion="2.0.0", runner=runner, diagnostics=["x"])
    for turn in trace["turns"]:
        del turn["textDeltas"]
        turn["usage"] = None
    trace["skill"]["tokenBudget"] = 1000.0
    write_run(root, "run", trace)
    code, results = run(root)
    assert code == 0, results["cases"][0]["failures"]
    assert "token_budget" in assertions(results["cases"][0])
    trace["runner"]["stoppedReason"] = "max_turns"
    write_run(root, "run", trace)
    code, results = run(root)
    assert code == 1 and results["cases"][0]["classification"] == "budget_exceeded"


def test_runtime_errors_make_the_case_an_error(tmp_path: Path) -> None:
    root = repo(tmp_path)
    write_run(root, "run", derived(errors=[{"kind": "sdk", "message": "stream closed"}]))
    code, results = run(root)
    (case,) = results["cases"]
    assert code == 1 and case["status"] == "error"
    assert case["reason"] == (
        "runs/run.json: the run recorded errors, so it has nothing to judge: sdk: stream closed"
    )


def test_scenarios_dir_finds_a_scenario_by_its_id(tmp_path: Path) -> None:
    root = repo(tmp_path)
    write_run(root, "smoke", json.loads((DATA / "trace-1.1.0-smoke.json").read_text()))
    code, results = run(root)
    assert code == 2
    assert results["problems"] == [{"file": "runs/smoke.json", "line": None, "message":
        "scenario 'synth' not found (no path recorded); pass --scenarios DIR"}]  # fmt: skip
    code, results = run(root, "--scenarios", str(root / "skills"))
    (case,) = results["cases"]
    # the smoke trace records no sandbox, and no_path_escape cannot pass without one
    assert code == 1 and case["classification"] == "path_escape"


def test_a_missing_scenarios_dir_is_a_problem(tmp_path: Path) -> None:
    root = repo(tmp_path)
    write_run(root, "smoke", json.loads((DATA / "trace-1.1.0-smoke.json").read_text()))
    code, results = run(root, "--scenarios", str(root / "scenarioz"))
    assert code == 2
    assert {"file": "scenarioz", "line": None, "message": "--scenarios: no such folder"} in (
        results["problems"]
    )


def test_two_runs_of_one_scenario_are_two_cases(tmp_path: Path) -> None:
    root = repo(tmp_path)
    write_run(root, "a", COMPLETE)
    write_run(root, "b", COMPLETE)
    _, results = run(root)
    assert [case["case_id"] for case in results["cases"]] == ["synth", "synth#2"]
    # each names the trace file it judged and the run's id
    judged = [(case["inputs"], case["run_id"]) for case in results["cases"]]
    assert judged == [(["runs/a.json"], COMPLETE["runId"]), (["runs/b.json"], COMPLETE["runId"])]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda t: t.update(schemaVersion="1.0.0"),
         "runs/run.json: not an ai-tester trace: schemaVersion is '1.0.0'"),
        (lambda t: t["turns"][0]["toolCalls"][0].pop("name"),
         "runs/run.json: ai-tester trace: $.turns[0].toolCalls[0].name: required key is missing"),
        (lambda t: t["runner"].update(turnsUsed="4"),
         "runs/run.json: ai-tester trace: $.runner.turnsUsed: expected an integer, got '4'"),
        (lambda t: t["cost"].update(inputTokens=-500),
         "runs/run.json: ai-tester trace: $.cost.inputTokens: must be at least 0, got -500"),
        (lambda t: t["turns"][0].update(usage={"inputTokens": -1}),
         "runs/run.json: ai-tester trace: $.turns[0].usage.inputTokens: must be at least 0"),
        (lambda t: t["toolCallSummary"].update(unansweredQuestions=-1),
         "runs/run.json: ai-tester trace: $.toolCallSummary.unansweredQuestions: must be at"),
        (lambda t: t["scenario"].update(name="other"),
         "runs/run.json: the run is of scenario 'other', but skills/aif-commit/tests/synth.yaml "
         "holds 'synth'"),
        (lambda t: t["scenario"].update(path="/elsewhere/synth.yaml"),
         "runs/run.json: scenario 'synth' not found at '/elsewhere/synth.yaml'; pass --scenarios"),
    ],
)  # fmt: skip
def test_trace_problems_name_the_file(tmp_path: Path, change: Any, problem: str) -> None:
    root = repo(tmp_path)
    trace = derived()
    change(trace)
    write_run(root, "run", trace)
    code, results = run(root)
    assert code == 2 and results["cases"] == []
    text = [f"{p['file']}: {p['message']}" for p in results["problems"]]
    assert len(text) == 1 and text[0].startswith(problem)


@pytest.mark.parametrize(
    ("edit", "line", "problem"),
    [
        (lambda s: s.replace("    args_match:\n      command: \"^git status\"",
                             "    args_matches:\n      command: \"^git status\""),
         42, "assertions[0].args_matches: unknown key (did you mean 'args_match'?)"),
        (lambda s: s.replace("max_turns: 14", "max_turn: 14"), 8,
         "unknown key 'max_turn' (did you mean 'max_turns'?)"),
        (lambda s: s.replace('command: "^git status"', "command: yes"), 43,
         "`yes` is read as true by YAML; quote it"),
        (lambda s: s.replace('command: "^(?!git )"', 'command: "(?<!"'), 61, "invalid regex"),
        (lambda s: s.replace("type: turn_count_at_most", "type: turn_count"), 68,
         "'turn_count' is not a trace assertion"),
    ],
)  # fmt: skip
def test_scenario_problems_name_file_and_line(
    tmp_path: Path, edit: Any, line: int, problem: str
) -> None:
    root = repo(tmp_path, edit((DATA / "basic-feat.yaml").read_text()))
    write_run(root, "run", COMPLETE)
    code, results = run(root)
    assert code == 2
    (found,) = results["problems"]
    assert (found["file"], found["line"]) == (SCENARIO_PATH, line)
    assert problem in found["message"]


def test_rust_sandbox_assertions_are_not_evaluated_never_passed(tmp_path: Path) -> None:
    scenario = (DATA / "basic-feat.yaml").read_text() + (
        "\n  - id: plan-written\n    type: file_exists\n    path: PLAN.md\n"
    )
    root = repo(tmp_path, scenario)
    write_run(root, "run", COMPLETE)
    code, results = run(root, "--summary", str(root / "s.md"))
    item = assertions(results["cases"][0])["plan-written"]
    assert code == 0 and item["status"] == "not_evaluated" and item["weight"] == 0
    summary = (root / "s.md").read_text().replace("&#95;", "_")
    assert "not evaluated: plan-written (file_exists)" in summary


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ("\n  - type: file_exists\n    path: PLAN.md\n",
         "assertions[6].id: expected a non-empty string, got None"),
        ("\n  - id: efficient\n    type: file_exists\n    path: PLAN.md\n",
         "duplicate assertion id 'efficient' (first at line"),
    ],
)  # fmt: skip
def test_rust_sandbox_assertion_ids_are_checked(tmp_path: Path, extra: str, problem: str) -> None:
    root = repo(tmp_path, (DATA / "basic-feat.yaml").read_text() + extra)
    write_run(root, "run", COMPLETE)
    code, results = run(root)
    (found,) = results["problems"]
    assert code == 2 and found["file"] == SCENARIO_PATH and problem in found["message"]


def test_a_trace_without_a_scenario_name_is_refused(tmp_path: Path) -> None:
    root = repo(tmp_path)
    trace = derived()
    del trace["scenario"]["name"]
    write_run(root, "run", trace)
    code, results = run(root)
    assert code == 2
    assert [p["message"] for p in results["problems"]] == [
        "ai-tester trace: $.scenario.name: required key is missing"
    ]


def test_a_trace_symlinked_from_outside_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    root = repo(tmp_path / "repo")
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps(COMPLETE))
    (root / "runs" / "link.json").symlink_to(outside)
    code, results = run(root)
    assert code == 2 and results["cases"] == []
    (problem,) = results["problems"]
    assert problem["file"] == "runs/link.json" and "through a symlink" in problem["message"]


def test_scenarios_dir_problems_are_reported_once(tmp_path: Path) -> None:
    root = repo(tmp_path)
    copy_of = root / "skills" / "copy.yaml"
    copy_of.write_text((root / SCENARIO_PATH).read_text())
    (root / "skills" / "broken.yaml").write_text("a: [\n")
    (root / "skills" / "_shared.yaml").write_text("a: [\n")  # ai-tester skips `_` files too
    smoke = json.loads((DATA / "trace-1.1.0-smoke.json").read_text())
    write_run(root, "one", smoke)
    write_run(root, "two", smoke)
    code, results = run(root, "--scenarios", str(root / "skills"))
    problems = [(p["file"], p["message"]) for p in results["problems"]]
    assert code == 2 and len(problems) == 2
    assert problems[0][0] == "skills/broken.yaml"
    assert problems[1] == (SCENARIO_PATH, "scenario 'synth' is also in skills/copy.yaml")
    assert len(results["cases"]) == 2
