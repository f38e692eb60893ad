"""Data-driven corpus: each tests/cases/<scenario>/ is a tiny repository with expected results."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from replaygate import cli
from replaygate.assertions.operators import OPERATORS as REGISTRY

TESTS = Path(__file__).parent
CASES_DIR = TESTS / "cases"
REPO = TESTS.parent
SCENARIOS = sorted(p.name for p in CASES_DIR.iterdir() if (p / "expected.json").is_file())
CASE_FIELDS = ("status", "classification", "locator")
OPERATORS = (*REGISTRY, "optional")

Key = tuple[str, str]


def run(root: Path, packs: Path, out: Path) -> tuple[int, dict[str, Any]]:
    """Run replaygate in-process on one repository; return the exit code and the JSON results."""
    code = cli.main(["run", "--root", str(root), "--json", str(out), str(packs)])
    return code, json.loads(out.read_text(encoding="utf-8"))


def primary_locator(case: dict[str, Any]) -> str | None:
    """The locator of the failure that gave the case its classification (the first such)."""
    failures = case["failures"]
    named = [f for f in failures if f["classification"] == case["classification"]]
    first = (named or failures or [{"locator": None}])[0]
    locator: str | None = first["locator"]
    return locator


def observed(case: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": case["status"],
        "classification": case["classification"],
        "locator": primary_locator(case),
    }


def by_key(cases: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    return {(case["contract"], case["case_id"]): case for case in cases}


def mismatches(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> dict[str, Any]:
    """Every difference between the expected cases (listed fields only) and the results."""
    want, got = by_key(expected), {k: observed(v) for k, v in by_key(actual).items()}
    diff: dict[str, Any] = {}
    for key in sorted(want.keys() | got.keys()):
        label = "::".join(key)
        if key not in got or key not in want:
            diff[label] = "missing from results" if key not in got else "not expected"
            continue
        fields = [f for f in CASE_FIELDS if f in want[key]]
        wanted = {f: want[key][f] for f in fields}
        seen = {f: got[key][f] for f in fields}
        if wanted != seen:
            diff[label] = {"expected": wanted, "actual": seen}
    return diff


def problem_lines(results: dict[str, Any], key: str = "problems") -> list[str]:
    return [f"{p['file']}:{p['line']}: {p['message']}" for p in results[key]]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = CASES_DIR / scenario
    expected = json.loads((directory / "expected.json").read_text(encoding="utf-8"))
    for name, value in expected.get("env", {}).items():
        monkeypatch.setenv(name, value)
    code, results = run(directory, directory / "packs", tmp_path / "results.json")
    if "cases" in expected:
        assert mismatches(expected["cases"], results["cases"]) == {}
    for fragment in expected.get("problems", []):
        assert any(fragment in line for line in problem_lines(results)), (fragment, results)
    for fragment in expected.get("warnings", []):
        assert any(fragment in line for line in problem_lines(results, "warnings")), fragment
    if "exit_code" in expected:
        assert code == expected["exit_code"]


def test_shipped_packs_pass(tmp_path: Path) -> None:
    """`replaygate run packs` on the examples shipped at the repository root exits 0."""
    code, results = run(REPO, REPO / "packs", tmp_path / "results.json")
    statuses = {(c["pack"], c["case_id"]): c["status"] for c in results["cases"]}
    assert results["problems"] == []
    assert set(statuses.values()) <= {"passed", "skipped"}, statuses
    assert code == 0
    negatives = [c for c in results["cases"] if not c["expect_ok"] and c["status"] == "passed"]
    assert len(negatives) >= 10


def test_every_operator_is_exercised() -> None:
    """Each operator (and the optional modifier) appears in the corpus or the shipped packs."""
    text = "\n".join(
        p.read_text(encoding="utf-8")
        for base in (CASES_DIR, REPO / "packs")
        for p in base.rglob("*.yaml")
    )
    used = set(re.findall(r"^\s+(\w+):", text, flags=re.MULTILINE))
    assert set(OPERATORS) - used == set()
