"""The fingerprint recipe documented in docs/fingerprints.md."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

from replaygate.core.fingerprint import DIGITS, fingerprint, is_fingerprint
from replaygate.report.results_format import schema

PARTS = (
    "starter",
    "contracts/a.yaml",
    "case-1",
    "schema_violation",
    "expected_tool_calls[0].argument_invariants[1]:equals",
)


def test_matches_the_documented_recipe() -> None:
    expected = hashlib.sha256("\x1f".join(PARTS).encode()).hexdigest()[:12]
    assert fingerprint(*PARTS) == expected
    assert re.fullmatch(r"[0-9a-f]{12}", expected)


def test_every_part_counts() -> None:
    base = fingerprint(*PARTS)
    for index in range(len(PARTS)):
        changed = list(PARTS)
        changed[index] += "x"
        assert fingerprint(*changed) != base


def test_separator_prevents_ambiguous_joins() -> None:
    assert fingerprint("ab", "c", "d", "e", "f") != fingerprint("a", "bc", "d", "e", "f")


def test_doc_example_runs_and_prints_what_replaygate_computes() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "fingerprints.md").read_text()
    code = doc.split("```python", 1)[1].split("```", 1)[0]
    printed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    expected = fingerprint(
        "starter",
        "contracts/incident_response.yaml",
        "incident_response_success",
        "schema_violation",
        "expected_tool_calls[check_service_health].argument_invariants"
        '[$.service_id equals "payment-gateway-us-east-1"]:equals',
    )
    assert printed == expected + "\n"


def test_one_format_is_checked_everywhere_and_documented_in_the_schema() -> None:
    pattern = schema()["$defs"]["case"]["properties"]["fingerprint"]["pattern"]
    assert pattern == f"^[0-9a-f]{{{DIGITS}}}$"
    assert is_fingerprint(fingerprint(*PARTS))
    for bad in ("0123456789AB", "0123456789a", "0123456789abc", 123456789012, None):
        assert not is_fingerprint(bad)
