"""The user-facing error: one located line, and the same line as a problem of the run."""

from __future__ import annotations

import ast
import errno
import itertools
import signal
from pathlib import Path

import replaygate
from replaygate.core.errors import (
    EXIT_CANCELLED,
    PackError,
    cannot_write,
    exit_on_signal,
)
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


def test_a_run_a_signal_stopped_exits_as_a_shell_reports_it() -> None:
    assert (EXIT_CANCELLED, exit_on_signal(signal.SIGINT)) == (130, 130)
    assert exit_on_signal(signal.SIGTERM) == 143


def test_a_file_that_cannot_be_written_is_said_one_way() -> None:
    refused = IsADirectoryError(errno.EISDIR, "Is a directory")
    assert cannot_write("out/r.json", refused) == "cannot write out/r.json: Is a directory"
    assert cannot_write("$GITHUB_OUTPUT", OSError("odd")) == "cannot write $GITHUB_OUTPUT: odd"


# --- one home each: a rule written out again elsewhere is found here ---

SOURCES = [
    *sorted(Path(replaygate.__file__).parent.rglob("*.py")),
    Path(replaygate.__file__).parents[2] / "entrypoint.py",
]


def _shown(path: Path) -> str:
    return path.name if path.name == "entrypoint.py" else path.as_posix().split("src/")[-1]


def _exit_code_literals(tree: ast.AST) -> list[int]:
    """Lines that write a signal's exit code (130, 143) as a number."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value in (130, 143)
    ]


def _inline_places(tree: ast.AST) -> list[int]:
    """Lines of f-strings that write ``file:line`` themselves: a text ending in ":" followed
    by a value named ``line`` (``f"{file}:{line}"``, ``f":{line}"``)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.JoinedStr):
            continue
        for before, after in itertools.pairwise(node.values):
            if (
                isinstance(before, ast.Constant)
                and str(before.value).endswith(":")
                and isinstance(after, ast.FormattedValue)
                and ast.unparse(after.value).split(".")[-1] == "line"
            ):
                found.append(node.lineno)
    return found


def test_exit_codes_and_places_are_written_in_one_place_each() -> None:
    homes = {
        _exit_code_literals: "replaygate/core/errors.py",
        _inline_places: "replaygate/core/places.py",
    }
    found = [
        f"{_shown(path)}:{line}: {rule.__name__}"
        for path in SOURCES
        for rule, home in homes.items()
        if _shown(path) != home
        for line in rule(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []
