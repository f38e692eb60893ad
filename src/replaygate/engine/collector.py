"""A golden case under evaluation: its context, and the failures its checks collect."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaygate.assertions.assertion import Assertion, evaluate_assertion
from replaygate.assertions.mismatch import Mismatch
from replaygate.core.model import (
    AssertionOutcome,
    CaseResult,
    Classification,
    Failure,
    Problem,
    Status,
)
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

    def result(
        self,
        *,
        observed_ok: bool | None,
        status: Status,
        classification: str | None,
        fingerprint: str | None,
        failures: tuple[Failure, ...],
        reason: str | None,
        duration_s: float,
        notes: tuple[Problem, ...] = (),
        score: float | None = None,
        inputs: tuple[str, ...] = (),
        run_id: str | None = None,
    ) -> CaseResult:
        """A result of this case: what names it from the context, the verdict from the
        arguments (named, not forwarded: every case's result is built here, some twice)."""
        contract, case = self.contract, self.case
        return CaseResult(
            pack=self.pack_id,
            pack_dir=self.pack_dir,
            contract=contract.path,
            contract_file=contract.file,
            case_id=case.id,
            expect_ok=case.expect_ok,
            expected_error=case.expected_error,
            observed_ok=observed_ok,
            status=status,
            classification=classification,
            fingerprint=fingerprint,
            failures=failures,
            file=contract.file,
            line=case.line,
            reason=reason,
            duration_s=duration_s,
            notes=notes,
            score=score,
            inputs=inputs,
            run_id=run_id,
            order=self.order,
        )

    def named(self, result: CaseResult) -> bool:
        """Whether ``result`` names this case and its place as ``result()`` names them.

        The same fields as ``result()`` takes from the context, compared rather than built
        (a result sent from a worker is asked, 10,000 times in a large run): the test that
        changes each field of a result in turn (tests/test_transfer.py) fails if they part.
        """
        contract, case = self.contract, self.case
        return (
            result.pack == self.pack_id
            and result.pack_dir == self.pack_dir
            and result.contract == contract.path
            and result.contract_file == contract.file
            and result.case_id == case.id
            and result.expect_ok == case.expect_ok
            and result.expected_error == case.expected_error
            and result.file == contract.file
            and result.line == case.line
            and result.order == self.order
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
