"""A golden case under evaluation: its context, and the failures its checks collect."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaygate.assertions.assertion import Assertion, evaluate_assertion
from replaygate.assertions.mismatch import Mismatch
from replaygate.core.model import AssertionOutcome, CaseResult, Classification, Failure
from replaygate.loading.contract import Contract, GoldenCase


@dataclass(frozen=True, slots=True)
class CaseContext:
    pack_id: str
    pack_dir: str
    contract: Contract
    case: GoldenCase
    env: Mapping[str, str]
    allowlisted: str | None = None  # the NR allowlist's reason, when the contract is listed
    mode: str = "recorded"  # or the live provider's name
    order: int = 0  # the case's position among all cases of the run (CaseResult.order)

    def result(self, **verdict: Any) -> CaseResult:
        """A result of this case: what names it from the context, the rest from ``verdict``."""
        return CaseResult(
            pack=self.pack_id,
            pack_dir=self.pack_dir,
            contract=self.contract.path,
            contract_file=self.contract.file,
            case_id=self.case.id,
            expect_ok=self.case.expect_ok,
            expected_error=self.case.expected_error,
            file=self.contract.file,
            line=self.case.line,
            order=self.order,
            **verdict,
        )


class CaseUndecidable(Exception):
    """A check could not be decided (a regex ran out of time): the case errors."""


@dataclass
class Collector:
    """The failures of one case, each stamped with the contract file it points into."""

    ctx: CaseContext
    failures: list[Failure] = field(default_factory=list)
    outcomes: list[AssertionOutcome] = field(default_factory=list)  # trace assertions

    def add(self, classification: str, message: str, locator: str, line: int, **extra: Any) -> None:
        self.failures.append(
            Failure(classification, message, locator, self.ctx.contract.file, line, **extra)
        )

    def mismatch(self, m: Mismatch, *, absent_class: str) -> None:
        if m.kind == "error":
            raise CaseUndecidable(f"{m.locator}: {m.message}")
        classification = (
            absent_class if m.kind == "path_not_found" else Classification.SCHEMA_VIOLATION
        )
        self.add(
            classification,
            m.message,
            m.locator,
            m.line,
            path=m.path,
            operator=m.operator,
            expected=m.expected,
            actual=m.actual,
        )


def check_invariants(
    col: Collector, assertions: Sequence[Assertion], document: Any, absent: str
) -> None:
    for assertion in assertions:
        for m in evaluate_assertion(assertion, document, col.ctx.env):
            col.mismatch(m, absent_class=absent)
