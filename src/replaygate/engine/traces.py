"""A case's trace assertions judged: failures for the collector, outcomes and a weighted score."""

from __future__ import annotations

import dataclasses

from replaygate.assertions.operators import CheckError
from replaygate.assertions.trace import Trace
from replaygate.assertions.trace_assertions import Verdict
from replaygate.assertions.trace_compile import NotEvaluated, TraceAssertion
from replaygate.assertions.trace_match import FAILING_RULES, PASSING_RULES, RULE_TEXT
from replaygate.core.model import AssertionOutcome, AssertionStatus, CaseResult
from replaygate.core.places import where
from replaygate.engine.collector import CaseUndecidable, Collector
from replaygate.loading.fixtures import CaseInput, Recorded
from replaygate.loading.normalize import FixtureShapeError
from replaygate.loading.traces import single_turn


def check_trace(col: Collector, source: CaseInput) -> None:
    """Evaluate the contract's trace assertions on the case's trace; note the unevaluated."""
    contract = col.ctx.contract
    trace = source.trace
    if trace is None and contract.trace_assertions and source.response is not None:
        try:
            trace = single_turn(source.response, source.calls)  # one answer: a one-turn trace
        except FixtureShapeError as exc:
            raise CaseUndecidable(f"{source.looked_in}: {exc}") from None
    if trace is not None:
        for assertion in contract.trace_assertions:
            _check(col, assertion, trace, source.recorded)
    elif contract.trace_assertions:
        raise CaseUndecidable("the contract has trace_assertions but the case has no trace")
    col.outcomes.extend(_not_evaluated(item) for item in contract.not_evaluated)


def _check(
    col: Collector, assertion: TraceAssertion, trace: Trace, recorded: Recorded | None
) -> None:
    try:
        verdict = assertion.evaluate(trace)
    except CheckError as exc:
        place = f"{where(assertion.file, assertion.line)}: {assertion.locator}:{assertion.type}"
        raise CaseUndecidable(f"{place}: {exc}") from None
    if verdict.message is not None:
        locator = f"{assertion.locator}:{assertion.type}"
        col.add(
            verdict.classification,
            f"{assertion.id}: {verdict.message}",
            locator,
            assertion.line,
            operator=assertion.type,
        )
    col.outcomes.append(_outcome(assertion, verdict, recorded))


def _outcome(
    assertion: TraceAssertion, verdict: Verdict, recorded: Recorded | None
) -> AssertionOutcome:
    passed = verdict.message is None
    theirs = _recorded(assertion, passed, recorded)
    return AssertionOutcome(
        assertion.id,
        assertion.type,
        AssertionStatus.PASSED if passed else AssertionStatus.FAILED,
        assertion.weight,
        verdict.message,
        assertion.file,
        assertion.line,
        recorded=theirs,
        differs=_differs(passed, theirs, verdict, recorded.tool if recorded else ""),
        captures=verdict.captures,
    )


def _recorded(assertion: TraceAssertion, passed: bool, recorded: Recorded | None) -> bool | None:
    """The peer's verdict: its own record of the assertion, else, for one we fail, a run it
    recorded as passed (it passed everything it checked, this included)."""
    if recorded is None:
        return None
    if assertion.id in recorded.assertions:
        return recorded.assertions[assertion.id]
    return True if recorded.passed and not passed else None


def _differs(passed: bool, theirs: bool | None, verdict: Verdict, tool: str) -> str | None:
    if theirs is None or theirs == passed:
        return None
    ours = "passes" if passed else "fails"
    said = f"{tool} recorded {'pass' if theirs else 'fail'}, replaygate {ours} it"
    # a rule that can only fail what the peer passes does not explain a pass, and back
    ruled = verdict.rules - (FAILING_RULES if passed else PASSING_RULES)
    if not ruled:
        return f"{said}: no stricter rule explains it (the recorded turns do not support it)"
    rules = "; ".join(f"{rule} ({RULE_TEXT[rule]})" for rule in sorted(ruled))
    return f"{said} by rule {rules}"


def _not_evaluated(item: NotEvaluated) -> AssertionOutcome:
    return AssertionOutcome(
        item.id, item.type, AssertionStatus.NOT_EVALUATED, 0.0, item.reason, item.file, item.line
    )


def weighted_score(outcomes: list[AssertionOutcome]) -> float | None:
    """Weight of the passed assertions over the weight of all evaluated ones."""
    judged = [o for o in outcomes if o.status is not AssertionStatus.NOT_EVALUATED]
    total = sum(o.weight for o in judged)
    if not judged or total == 0:
        return None
    return sum(o.weight for o in judged if o.status is AssertionStatus.PASSED) / total


def with_outcomes(result: CaseResult, outcomes: list[AssertionOutcome]) -> CaseResult:
    if not outcomes:
        return result
    return dataclasses.replace(result, score=weighted_score(outcomes), assertions=tuple(outcomes))
