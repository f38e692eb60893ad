"""Results as the engine makes them: one small repository run once, its cases kept by kind.

Tests of the layers that only render or send results start from these, changing names and
counts with ``dataclasses.replace``, so that no failure has a shape the engine never gives.
"""

from __future__ import annotations

import dataclasses
import functools
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from packbuilder import fixture, golden_case, make_pack
from replaygate.core.model import CaseResult, Failure, Status
from replaygate.engine.runner import run_packs
from replaygate.loading.pack import load_packs

CONTRACT = """\
tool: multi_tool_call
expected_tool_calls:
  - name: get_weather
    argument_invariants:
      - path: $.city
        equals: Bern
assertions:
  output_invariants:
    - path: $.content
      exists: true
golden_cases:
"""
# case id -> (fixture, extra lines of the golden case); each makes one kind of outcome
CASES: dict[str, tuple[Any, str]] = {
    "passed": (fixture(content="ok"), ""),
    "schema_violation": (
        fixture([{"name": "get_weather", "arguments": {"city": "Paris"}}], content="ok"),
        "",
    ),
    "wrong_tool": (fixture([{"name": "lookup", "arguments": {}}], content="ok"), ""),
    "tool_not_invoked": (fixture([], content="ok"), ""),
    "path_not_found": (fixture(), ""),
    "unexpected_error": (fixture([], success=False, error={"message": "overloaded"}), ""),
    "error": ("{ not json", ""),
    "skipped": (fixture(), "    provider_modes: [live]\n"),
}


@functools.cache
def engine_cases() -> dict[str, CaseResult]:
    """The outcome of each case of CASES, by case id; durations fixed at 0.001 s."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        golden = "".join(
            golden_case(name, f"{name}.json", more=extra) for name, (_, extra) in CASES.items()
        )
        fixtures = {f"{name}.json": data for name, (data, _) in CASES.items()}
        make_pack(root, "demo", contract=CONTRACT + golden, fixtures=fixtures)
        loaded = load_packs(["packs"], cwd=root, root=None, now=datetime.now(UTC))
        assert loaded.problems == (), loaded.problems
        cases = run_packs(loaded, {}).cases
    found = {case.case_id: dataclasses.replace(case, duration_s=0.001) for case in cases}
    _check_kinds(found)
    return found


def _check_kinds(found: dict[str, CaseResult]) -> None:
    for name, case in found.items():
        if name in ("passed", "error", "skipped"):
            assert case.status.value == name, (name, case)
        else:
            assert (case.status, case.classification) == (Status.FAILED, name), (name, case)


def engine_failure(classification: str) -> Failure:
    """The engine's primary failure of that classification; a recorded error code not ours
    takes the shape of a recorded error, as the engine gives it."""
    cases = engine_cases()
    if classification in cases and cases[classification].failures:
        return cases[classification].failures[0]
    recorded = cases["unexpected_error"].failures[0]
    return dataclasses.replace(recorded, classification=classification)
