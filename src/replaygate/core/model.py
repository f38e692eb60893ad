"""Evaluation results: frozen data that every reporter renders and nothing re-evaluates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from replaygate.core.places import where


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # the case could not be evaluated
    SKIPPED = "skipped"


class Classification(StrEnum):
    """Classifications replaygate assigns, in precedence order (first wins).

    A recorded error code (``response.error.code``) that is a short snake_case word
    is the classification (engine/classify.py), so a case's classification is a
    plain ``str`` that is often, but not always, one of these values.
    """

    UNEXPECTED_ERROR = "unexpected_error"
    RECORDING_NOT_FOUND = "recording_not_found"
    # The recording answers a request that has changed since (docs/recordings.md).
    RECORDING_STALE = "recording_stale"
    MALFORMED_ARGUMENTS = "malformed_arguments"
    PATH_ESCAPE = "path_escape"  # a tool call reached a path outside the sandbox
    WRONG_TOOL = "wrong_tool"
    TOOL_NOT_INVOKED = "tool_not_invoked"
    SCHEMA_VIOLATION = "schema_violation"
    PATH_NOT_FOUND = "path_not_found"
    UNANSWERED_QUESTION = "unanswered_question"  # the agent asked what no scripted answer covers
    BUDGET_EXCEEDED = "budget_exceeded"  # more turns or tokens than the trace may use
    # A negative case (expect_ok: false) whose recording satisfied the contract.
    UNEXPECTED_PASS = "unexpected_pass"


PRECEDENCE: tuple[str, ...] = tuple(Classification)


def rank(classification: str) -> int:
    """The classification's place in the precedence, 0 first (docs/contracts.md).

    A recorded error code that is not ours ranks with unexpected_error: the provider said it.
    """
    return PRECEDENCE.index(classification) if classification in PRECEDENCE else 0


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed check, located on the contract line that made it."""

    classification: str
    message: str
    locator: str  # stable, value-free: "expected_tool_calls[1].argument_invariants[0]:one_of"
    file: str  # contract file, relative to the repository root, forward slashes
    line: int
    path: str | None = None  # the JSONPath of the assertion, when there is one
    operator: str | None = None
    expected: Any = None
    actual: Any = None


class AssertionStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_EVALUATED = "not_evaluated"  # needs a judge (an LLM, a sandbox): never counted as passed


@dataclass(frozen=True, slots=True)
class Capture:
    """A tool-call input field echoed back by a passing assertion's ``capture``."""

    field: str
    value: str  # cut to the assertion's capture_max_chars
    truncated: bool


@dataclass(frozen=True, slots=True)
class AssertionOutcome:
    """One trace assertion of a case: its verdict, weight, and the verdict a peer recorded."""

    id: str
    type: str
    status: AssertionStatus
    weight: float
    message: str | None  # why it failed, or why it was not evaluated
    file: str
    line: int
    recorded: bool | None = None  # the pass/fail the peer tool wrote into the trace
    differs: str | None = None  # why our verdict differs from the recorded one
    captures: tuple[Capture, ...] = ()


@dataclass(frozen=True, slots=True)
class CaseResult:
    pack: str  # pack_id
    pack_dir: str  # pack directory relative to the repository root
    contract: str  # contract path within the pack, forward slashes
    contract_file: str  # contract path relative to the repository root
    case_id: str
    expect_ok: bool
    expected_error: str | None
    observed_ok: bool | None  # None when the case was not evaluated
    status: Status
    classification: str | None
    fingerprint: str | None
    failures: tuple[Failure, ...]
    file: str  # contract file (repository-relative) ...
    line: int  # ... and the line of the golden case
    reason: str | None = None  # why skipped, or why errored
    duration_s: float = 0.0
    known: bool = False  # a failure whose fingerprint the baseline accepts: reported, not fatal
    notes: tuple[Problem, ...] = ()  # warnings that do not fail the case (an old recording)
    # 0.0 to 1.0: an @isdk fixture's score, or the weighted share of passed trace assertions
    score: float | None = None
    assertions: tuple[AssertionOutcome, ...] = ()  # trace assertions, in contract order
    # the files the case was judged from, repository-relative: its fixture (and the recording
    # read), an ai-tester trace, a Connexity transcript, an @isdk fixture and its results
    inputs: tuple[str, ...] = ()
    run_id: str | None = None  # the ai-tester run judged (two runs of a scenario: id, id#2)
    order: int = 0  # position in the run of every case of the packs, before any shard selection

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED


@dataclass(frozen=True, slots=True)
class Problem:
    """A file that could not be loaded (or, as a warning, one worth a look): reported, and the
    rest still runs."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{where(self.file, self.line)}: {self.message}"


@dataclass(frozen=True, slots=True)
class PackSummary:
    pack_id: str
    name: str
    directory: str  # relative to the repository root
    contracts: int


@dataclass(frozen=True, slots=True)
class Totals:
    total: int
    passed: int
    failed: int
    errors: int
    skipped: int
    known: int  # failed cases accepted by the baseline (counted in ``failed`` too)


@dataclass(frozen=True, slots=True)
class RunResult:
    cases: tuple[CaseResult, ...]
    problems: tuple[Problem, ...] = ()
    packs: tuple[PackSummary, ...] = ()
    duration_s: float = 0.0
    # {"shard": {"index": 1, "count": 3}}, "root": the repository root results are relative to
    meta: Mapping[str, Any] = field(default_factory=dict)  # read-only: replace() to change
    warnings: tuple[Problem, ...] = ()  # worth a look, never a failure

    @property
    def totals(self) -> Totals:
        counts = {status: 0 for status in Status}
        known = 0
        for case in self.cases:
            counts[case.status] += 1
            known += case.known
        return Totals(
            total=len(self.cases),
            passed=counts[Status.PASSED],
            failed=counts[Status.FAILED],
            errors=counts[Status.ERROR],
            skipped=counts[Status.SKIPPED],
            known=known,
        )
