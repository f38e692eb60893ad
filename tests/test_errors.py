"""The user-facing error: one located line, and the same line as a problem of the run."""

from __future__ import annotations

from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.core.places import where


def test_a_place_is_file_colon_line_or_the_file_alone() -> None:
    assert where("packs/p/pack.yaml", 3) == "packs/p/pack.yaml:3"
    assert where("packs/p/pack.yaml", None) == "packs/p/pack.yaml"


def test_a_pack_error_becomes_the_same_problems() -> None:
    for line in (7, None):
        error = PackError("packs/p/contracts/c.yaml", line, "unknown key 'toool'")
        (problem,) = error.problems()
        assert problem == Problem("packs/p/contracts/c.yaml", line, "unknown key 'toool'")
        assert str(problem) == str(error)


def test_the_problems_found_with_it_come_along_in_order() -> None:
    second = PackError("c.yaml", 9, "unknown key 'nmae'")
    error = PackError("c.yaml", 3, "unknown key 'tool_s'", also=(second,))
    assert [str(p) for p in error.problems()] == [
        "c.yaml:3: unknown key 'tool_s'",
        "c.yaml:9: unknown key 'nmae'",
    ]
