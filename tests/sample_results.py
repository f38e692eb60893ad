"""Small RunResults for tests of the layers that only format and send results.

Every case and failure starts as one the engine made (engine_results.py), renamed.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from engine_results import engine_cases, engine_failure
from replaygate.core.model import CaseResult, Failure, PackSummary, Problem, RunResult, Status

FILE = "packs/demo/contracts/triage.yaml"


def fingerprint(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:12]


def failure(
    classification: str = "schema_violation", message: str | None = None, line: int = 12
) -> Failure:
    """The engine's failure of that classification, placed in the demo contract."""
    found = engine_failure(classification)
    return replace(found, file=FILE, line=line, message=message or found.message)


_KIND = {
    Status.PASSED: "passed",
    Status.FAILED: "schema_violation",
    Status.ERROR: "error",
    Status.SKIPPED: "skipped",
}


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
    """The engine's case of that status, renamed; a failed one gets ``failures``."""
    found = engine_cases()[_KIND[status]]
    return replace(
        found,
        pack="demo",
        pack_dir="packs/demo",
        contract=contract,
        contract_file=f"packs/demo/{contract}",
        case_id=case_id,
        classification=classification,
        fingerprint=fingerprint("demo", contract, case_id) if status is Status.FAILED else None,
        failures=failures,
        file=f"packs/demo/{contract}",
        line=40,
        reason=reason or found.reason,
        known=known,
        **({"order": 0} | extra),
    )


def failed(case_id: str, classification: str = "schema_violation", **kw: Any) -> CaseResult:
    line = kw.pop("line", 12)
    message = kw.pop("message", None)
    failures = (failure(classification, message, line),)
    return case(case_id, Status.FAILED, classification=classification, failures=failures, **kw)


def result(*cases: CaseResult, problems: tuple[Problem, ...] = (), **kw: Any) -> RunResult:
    packs = (PackSummary("demo", "Demo pack", "packs/demo", 1),)
    return RunResult(cases=cases, problems=problems, packs=packs, duration_s=0.5, **kw)
