"""Which failures get annotated, in which order, located where, cut how."""

from __future__ import annotations

from pathlib import Path

from replaygate.core.model import Problem, Status
from replaygate.github import annotations as notes
from replaygate.github.annotations import Level, collect, select, workspace_path
from sample_results import case, failed, result


def test_order_is_problems_errors_then_classification_precedence_then_location() -> None:
    run = result(
        failed("late", "path_not_found", line=3),
        failed("schema_b", "schema_violation", line=20),
        failed("schema_a", "schema_violation", line=10),
        failed("custom", "rate_limit_exceeded"),  # a recorded error code: with unexpected_error
        failed("wrong", "wrong_tool"),
        case("broken", Status.ERROR, reason="fixture is not JSON"),
        failed("accepted", "wrong_tool", known=True),
        case("fine"),
        problems=(Problem("packs/bad/pack.yaml", 2, "unknown key 'pack_idd'"),),
    )
    found = collect(run)
    titles = [a.title.split(" ")[0] for a in found]
    assert titles == [
        "could",
        "error",
        "rate_limit_exceeded",
        "wrong_tool",
        "schema_violation",
        "schema_violation",
        "path_not_found",
        "wrong_tool",
    ]
    assert [a.line for a in found[4:6]] == [10, 20]
    assert [a.level for a in found].count(Level.NOTICE) == 1
    assert found[-1].message.startswith("known failure (accepted by the baseline): case accepted")


def test_an_annotation_names_case_classification_and_fingerprint() -> None:
    run = result(failed("c1", "schema_violation", line=14))
    (note,) = collect(run)
    assert note == notes.Annotation(
        Level.FAILURE,
        "packs/demo/contracts/triage.yaml",
        14,
        f"schema_violation ({run.cases[0].fingerprint})",
        "case c1 of demo/contracts/triage.yaml\n"
        "packs/demo/contracts/triage.yaml:14: $.city: 'Paris' is not equal to 'Bern' "
        "[schema_violation]",
    )


def test_only_ten_failures_and_ten_notices_are_shown_and_the_rest_counted() -> None:
    cases = [failed(f"f{n:02}", line=n + 1) for n in range(23)]
    cases += [failed(f"k{n:02}", known=True) for n in range(12)]
    selection = select(collect(result(*cases)))
    assert [a.line for a in selection.shown if a.level is Level.FAILURE] == list(range(1, 11))
    assert sum(a.level is Level.NOTICE for a in selection.shown) == 10
    assert selection.omitted == 13


def test_messages_are_cut_at_4096_characters() -> None:
    run = result(failed("huge", message="x" * 10_000))
    (note,) = collect(run)
    assert len(note.message) == notes.MESSAGE_LIMIT
    assert note.message.endswith("(cut: the JUnit and JSON reports have the full message)")


def test_paths_are_mapped_when_the_repository_is_a_workspace_subfolder(tmp_path: Path) -> None:
    workspace = str(tmp_path)
    assert workspace_path("packs/a.yaml", workspace, workspace) == "packs/a.yaml"
    assert workspace_path("packs/a.yaml", str(tmp_path / "repo"), workspace) == "repo/packs/a.yaml"
    assert workspace_path("packs/a.yaml", "/elsewhere", workspace) == "packs/a.yaml"
