"""Connexity test cases in both shapes, with recorded transcripts: what can be checked is."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from replaygate.cli import main
from replaygate.report.json import read_results
from replaygate.report.junit import render_junit
from replaygate.report.text import render_text

DATA = Path(__file__).parent / "data" / "connexity"


def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    shutil.copytree(DATA, tmp_path / "cases")
    return tmp_path


def run(root: Path, *extra: str, target: str = "cases") -> tuple[int, dict[str, Any]]:
    out = root / "r.json"
    code = main(["run", "--root", str(root), "--json", str(out), str(root / target), *extra])
    return code, json.loads(out.read_text())


def by_case(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case["case_id"]: case for case in results["cases"]}


def edit(root: Path, file: str, **changes: Any) -> None:
    path = root / "cases" / file
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data, indent=2))


def key_line(root: Path, file: str, key: str) -> int:
    lines = (root / "cases" / file).read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if f'"{key}"' in text)


def test_the_current_shape_passes_and_its_outcome_is_not_evaluated(tmp_path: Path) -> None:
    _, results = run(repo(tmp_path))
    case = by_case(results)["Duct cleaning booking"]
    assert case["pack"] == "connexity" and case["contract"] == "duct-cleaning.json"
    assert case["status"] == "passed" and case["score"] == 1.0
    statuses = [(a["id"], a["type"], a["status"]) for a in case["assertions"]]
    assert statuses == [
        ("expected_tool_calls[0]", "tool_called", "passed"),
        ("expected_outcomes[0]", "expected_outcome", "not_evaluated"),
    ]
    assert case["assertions"][1]["message"] == (
        "needs a judge: Agent MUST confirm the service area before offering a date"
    )


def test_the_1_0_0_shape_checks_params_as_a_subset_exactly(tmp_path: Path) -> None:
    code, results = run(repo(tmp_path))
    case = by_case(results)["Refund Request — Valid"]
    # Connexity's mock matching would accept 'ord-12345 ' (strip, lower); we do not
    assert code == 1 and case["status"] == "failed"
    assert case["classification"] == "schema_violation"
    (failure,) = case["failures"]
    assert failure["message"] == (
        "expected_tool_calls[0]: no 'lookup_order' with order_id=\"ORD-12345\" "
        "(1 call of it, 0 matching)"
    )
    assert (failure["file"], failure["line"]) == ("cases/refund.json", 17)
    kinds = {a["id"]: a["status"] for a in case["assertions"]}
    assert kinds == {
        "expected_tool_calls[0]": "failed", "max_turns": "passed",
        "refund_initiated": "not_evaluated", "customer_satisfied": "not_evaluated",
    }  # fmt: skip


def test_extra_params_are_ignored_and_null_params_accept_any_call(tmp_path: Path) -> None:
    root = repo(tmp_path)
    edit(
        root, "refund.json", expected_tool_calls=[{"tool": "lookup_order", "expected_params": None}]
    )
    code, results = run(root)
    assert by_case(results)["Refund Request — Valid"]["status"] == "passed"
    call = {"tool": "check_service_area", "expected_params": {"zone": "V4T0A7"}}
    edit(root, "duct-cleaning.json", expected_tool_calls=[call])
    code, results = run(root)
    assert code == 0


def test_a_tool_never_called_and_too_many_turns_fail(tmp_path: Path) -> None:
    root = repo(tmp_path)
    edit(root, "refund.json", max_turns=1, expected_tool_calls=[{"tool": "issue_refund"}])
    _, results = run(root)
    case = by_case(results)["Refund Request — Valid"]
    assert case["classification"] == "tool_not_invoked"
    messages = {a["id"]: a["message"] for a in case["assertions"]}
    assert messages["max_turns"] == "2 turns, more than 1"


def test_only_active_cases_run_and_tag_and_difficulty_filter(tmp_path: Path) -> None:
    root = repo(tmp_path)
    edit(root, "refund.json", status="draft")
    _, results = run(root)
    assert list(by_case(results)) == ["Duct cleaning booking"]
    edit(root, "refund.json", status="active", difficulty="hard")
    _, results = run(root, "--difficulty", "hard")
    assert list(by_case(results)) == ["Refund Request — Valid"]
    _, results = run(root, "--tag", "booking")
    assert list(by_case(results)) == ["Duct cleaning booking"]
    _, results = run(root, "--tag", "refund", "--tag", "booking")
    assert len(results["cases"]) == 2


@pytest.mark.parametrize(
    ("flags", "wanted"),
    [
        (("--tag", "nonexistent"), "tag 'nonexistent'"),
        (("--difficulty", "hard"), "difficulty 'hard'"),
        (("--tag", "booking", "--difficulty", "hard"), "tag 'booking' and difficulty 'hard'"),
    ],
)
def test_a_filter_that_selects_nothing_is_a_problem(
    tmp_path: Path, flags: tuple[str, ...], wanted: str
) -> None:
    code, results = run(repo(tmp_path), *flags)
    assert code == 2 and results["cases"] == []
    assert results["problems"] == [{"file": "cases", "line": None, "message":
        f"no active Connexity test case has {wanted} (tags present: billing, booking, "
        "happy-path, refund; difficulties present: normal)"}]  # fmt: skip


def test_an_unknown_transcript_role_is_an_error_at_its_line(tmp_path: Path) -> None:
    root = repo(tmp_path)
    path = root / "cases" / "refund.transcript.json"
    path.write_text(path.read_text().replace('"role": "assistant"', '"role": "agent"', 1))
    code, results = run(root)
    case = by_case(results)["Refund Request — Valid"]
    assert code == 1 and case["status"] == "error"
    assert case["reason"] == (
        "cases/refund.transcript.json:3: transcript[1].role: unknown role 'agent'"
        " (use assistant, system, tool, user)"
    )


def test_a_missing_transcript_is_an_error_not_a_pass(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "cases" / "refund.transcript.json").unlink()
    code, results = run(root)
    case = by_case(results)["Refund Request — Valid"]
    assert code == 1 and case["status"] == "error"
    assert case["reason"] == "no recorded transcript at cases/refund.transcript.json"


@pytest.mark.parametrize(
    ("changes", "key", "message"),
    [
        ({"name": "x" * 256}, "name", "name: must be 1 to 255 characters, got 256"),
        ({"difficulty": "easy"}, "difficulty", 'difficulty: "easy" is not one of normal, hard'),
        ({"status": "live"}, "status", 'status: "live" is not one of draft, active, archived'),
        ({"first_turn": "bot"}, "first_turn", 'first_turn: "bot" is not one of agent, user'),
        ({"max_turns": 0}, "max_turns", "max_turns"),
        ({"tags": "booking"}, "tags", "tags: expected a list, got 'booking'"),
        ({"expected_tool_calls": [{"tool": "x", "params": {}}]}, "params",
         "unknown key 'params'"),
        ({"persona": "polite"}, "persona", "persona: expected a mapping"),
    ],
)  # fmt: skip
def test_field_constraints_are_load_problems_with_file_and_line(
    tmp_path: Path, changes: dict[str, Any], key: str, message: str
) -> None:
    root = repo(tmp_path)
    edit(root, "duct-cleaning.json", **changes)
    code, results = run(root)
    assert code == 2
    (problem,) = results["problems"]
    where = ("cases/duct-cleaning.json", key_line(root, "duct-cleaning.json", key))
    assert (problem["file"], problem["line"]) == where
    assert message in problem["message"]


def test_a_json_file_of_neither_tool_is_reported(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "cases" / "notes.json").write_text('{"title": "x"}')
    code, results = run(root)
    assert code == 2
    assert results["problems"][0]["message"] == (
        "not an ai-tester trace (schemaVersion) or a Connexity test case (name)"
    )


def test_not_evaluated_criteria_show_in_every_report(tmp_path: Path) -> None:
    root = repo(tmp_path)
    edit(root, "duct-cleaning.json", evaluation_criteria_override="Be <b>strict</b>")
    run(root, "--summary", str(root / "s.md"))
    result = read_results(str(root / "r.json"))
    number = key_line(root, "duct-cleaning.json", "evaluation_criteria_override")
    line = f"cases/duct-cleaning.json:{number}: not evaluated: evaluation_criteria_override"
    assert line in render_text(result)
    assert line in render_junit(result)
    summary = (root / "s.md").read_text().replace("&#95;", "_")
    assert "### Not evaluated, or not as recorded (4)" in summary
    assert "needs a judge: Be <b>strict</b> `" in summary  # shown in code, inert
    assert "<b>" not in re.sub(r"(`+) .*? \1", "", summary)


def test_a_single_test_case_file_is_a_target(tmp_path: Path) -> None:
    code, results = run(repo(tmp_path), target="cases/duct-cleaning.json")
    assert code == 0 and list(by_case(results)) == ["Duct cleaning booking"]


def test_an_unknown_difficulty_is_refused_with_the_valid_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "--difficulty", "easy"]) == 4  # a usage error
    assert "must be one of normal, hard, got 'easy'" in capsys.readouterr().err


def test_a_transcript_symlinked_from_elsewhere_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    root = repo(tmp_path / "repo")
    elsewhere = tmp_path / "other.json"
    elsewhere.write_text((DATA / "refund.transcript.json").read_text())
    transcript = root / "cases" / "refund.transcript.json"
    transcript.unlink()
    transcript.symlink_to(elsewhere)
    code, results = run(root)
    case = by_case(results)["Refund Request — Valid"]
    assert code == 1 and case["status"] == "error"
    assert "transcript 'refund.transcript.json' leaves" in case["reason"]


def test_each_case_names_the_transcript_it_judged(tmp_path: Path) -> None:
    _, results = run(repo(tmp_path))
    judged = {
        (case["contract"], tuple(case["inputs"]), case["run_id"]) for case in results["cases"]
    }
    assert judged == {
        ("duct-cleaning.json", ("cases/duct-cleaning.transcript.json",), None),
        ("refund.json", ("cases/refund.transcript.json",), None),
    }
