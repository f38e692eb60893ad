"""One precedence of classifications, the one docs/contracts.md documents, used everywhere."""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path

import pytest

from replaygate.core.model import PRECEDENCE, Failure, Status, rank
from replaygate.engine.classify import primary
from replaygate.github.annotations import importance
from sample_results import case, failed

DOCS = Path(__file__).resolve().parents[1] / "docs" / "contracts.md"


def documented_precedence() -> list[str]:
    section = DOCS.read_text(encoding="utf-8").split("## Classifications", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"^\d+\. `([a-z_]+)`", section, flags=re.MULTILINE)


def _failure(classification: str, line: int) -> Failure:
    return Failure(classification, "m", f"loc{line}", "packs/p/contracts/c.yaml", line)


def test_the_code_ranks_in_the_documented_order() -> None:
    documented = documented_precedence()
    assert len(documented) == 12
    assert list(PRECEDENCE) == documented
    assert [rank(name) for name in documented] == list(range(len(documented)))


def test_a_recorded_error_code_ranks_with_unexpected_error() -> None:
    assert rank("rate_limit") == rank("unexpected_error") == 0


def _ordered_pairs() -> list[tuple[str, str]]:
    """Every pair (earlier, later) of the documented order, a recorded code standing first."""
    return list(combinations(["rate_limit", *documented_precedence()[1:]], 2))


@pytest.mark.parametrize(("earlier", "later"), _ordered_pairs())
def test_the_engine_and_the_annotations_agree_on_every_pair(earlier: str, later: str) -> None:
    assert primary([_failure(later, 1), _failure(earlier, 2)]).classification == earlier
    cases = [failed("b", later, line=5), failed("a", earlier, line=5)]
    assert [c.classification for c in sorted(cases, key=importance)] == [earlier, later]


def test_equal_rank_keeps_contract_order() -> None:
    found = primary([_failure("rate_limit", 1), _failure("unexpected_error", 2)])
    assert found.line == 1


def test_errors_are_annotated_before_any_failure() -> None:
    error = case("e", Status.ERROR, reason="fixture is not JSON")
    assert sorted([failed("f", "rate_limit"), error], key=importance)[0] is error
