"""Small RunResults built by hand, for tests of the layers that only format and send results."""

from __future__ import annotations

import hashlib
from typing import Any

from replaygate.results.model import CaseResult, Failure, PackSummary, Problem, RunResult, Status


def fingerprint(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:12]


def failure(
    classification: str = "schema_violation", message: str = "'P2' is not 'P1'", line: int = 12
) -> Failure:
    return Failure(
        classification=classification,
        message=message,
        locator="expected_tool_calls[0].argument_invariants[0]:equals",
        file="packs/demo/contracts/triage.yaml",
        line=line,
        path="$.severity",
        operator="equals",
        expected="P1",
        actual="P2",
    )


def case(
    case_id: str,
    status: Status = Status.PASSED,
    *,
    classification: str | None = None,
    failures: tuple[Failure, ...] = (),
    known: bool = False,
    contract: str = "contracts/triage.yaml",
    reason: str | None = None,
    **extra: Any,
) -> CaseResult:
    failing = status in (Status.FAILED, Status.ERROR)
    return CaseResult(
        pack="demo",
        pack_dir="packs/demo",
        contract=contract,
        contract_file=f"packs/demo/{contract}",
        case_id=case_id,
        expect_ok=True,
        expected_error=None,
        observed_ok=status is Status.PASSED,
        status=status,
        classification=classification,
        fingerprint=fingerprint("demo", contract, case_id) if failing else None,
        failures=failures,
        file=f"packs/demo/{contract}",
        line=40,
        reason=reason,
        known=known,
        **extra,
    )


def failed(case_id: str, classification: str = "schema_violation", **kw: Any) -> CaseResult:
    line = kw.pop("line", 12)
    message = kw.pop("message", "'P2' is not 'P1'")
    failures = (failure(classification, message, line),)
    return case(case_id, Status.FAILED, classification=classification, failures=failures, **kw)


def result(*cases: CaseResult, problems: tuple[Problem, ...] = (), **kw: Any) -> RunResult:
    packs = (PackSummary("demo", "Demo pack", "packs/demo", 1),)
    return RunResult(cases=cases, problems=problems, packs=packs, duration_s=0.5, **kw)
