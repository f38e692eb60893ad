"""Evaluate one golden case: recorded response -> failures -> outcome. No files, no environment."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from replaygate.assertions.regex_time import CaseBudget
from replaygate.core.fingerprint import fingerprint
from replaygate.core.model import CaseResult, Classification, Failure, Problem, Status
from replaygate.engine.call_checks import check_calls
from replaygate.engine.classify import primary, recorded_error_class
from replaygate.engine.collector import CaseContext, CaseUndecidable, Collector, check_invariants
from replaygate.engine.fingerprint_keys import failure_key
from replaygate.engine.scoring import score_case
from replaygate.engine.traces import check_trace, with_outcomes
from replaygate.loading.fixtures import CaseInput

RECORDED = "recorded"
LIVE = "live"
# a case whose answer could not be read was never observed: it can't be an expected failure
UNOBSERVED = frozenset({Classification.RECORDING_NOT_FOUND, Classification.RECORDING_STALE})


def _recorded_error(error: Any) -> tuple[str | None, str]:
    """The recorded error's code (None when it has none) and message."""
    if not isinstance(error, Mapping):
        return None, "the provider returned an error"
    code, message = error.get("code"), error.get("message")
    return (
        code if isinstance(code, str) and code else None,
        message if isinstance(message, str) else "the provider returned an error",
    )


def _observe(col: Collector, source: CaseInput) -> str | None:
    """Collect the failures of a recorded response; returns a recorded error code, if any."""
    ctx = col.ctx
    response = source.response
    if response is None:
        record = f"; record it: {source.record_command}" if source.record_command else ""
        col.add(
            Classification.RECORDING_NOT_FOUND,
            f"no recording at {source.looked_in} and no response in the fixture{record}",
            "recording",
            ctx.case.line,
        )
        return None
    if source.stale is not None:  # never judge an answer to another request
        col.add(
            Classification.RECORDING_STALE,
            f"{source.looked_in} answers an older request ({source.stale}); "
            f"refresh it: {source.record_command}",
            "recording",
            ctx.case.line,
        )
        return None
    if response["success"] is False:
        code, message = _recorded_error(response.get("error"))
        classification = recorded_error_class(code)
        if code is not None and classification != code:
            message += f" (error code {code!r})"
        col.add(
            classification,
            message,
            "response.error",
            ctx.case.line,
            path="$.error",
            actual=response.get("error"),
        )
        return code
    check_calls(col, source.calls, source.schemas)
    check_invariants(col, ctx.contract.output_invariants, response, Classification.PATH_NOT_FOUND)
    check_invariants(
        col, ctx.contract.input_invariants, source.request, Classification.PATH_NOT_FOUND
    )
    check_trace(col, source)
    return None


def evaluate_case(ctx: CaseContext, source: CaseInput | str) -> CaseResult:
    """The outcome of one golden case; ``source`` is its loaded input or why it could not load."""
    started = time.perf_counter()
    excluded = excluded_by_modes(ctx.case.provider_modes, ctx.mode)
    if excluded:
        return _result(ctx, Status.SKIPPED, started, reason=excluded)
    if ctx.case.skip:
        return _result(ctx, Status.SKIPPED, started, reason=ctx.case.skip)
    if isinstance(source, str):
        return _result(ctx, Status.ERROR, started, reason=source)
    if source.skip:
        return _result(ctx, Status.SKIPPED, started, reason=source.skip)
    col = Collector(ctx)
    try:
        with CaseBudget():  # every timed regex search of the case shares one CPU budget
            code = _observe(col, source)
    except CaseUndecidable as exc:
        return _result(ctx, Status.ERROR, started, reason=str(exc))
    if ctx.contract.scoring is None:
        result = _judge(ctx, col.failures, code, started, source, observed_ok=not col.failures)
        return with_outcomes(result, col.outcomes)
    scored = score_case(ctx.contract.scoring, col.failures)
    result = _judge(ctx, col.failures, code, started, source, observed_ok=scored.passed)
    return replace(result, score=scored.score)


def excluded_by_modes(modes: tuple[str, ...] | None, mode: str) -> str | None:
    """Why a case's provider_modes leave out ``mode`` (``recorded`` or a provider's name;
    ``live`` in provider_modes covers every provider)."""
    if modes is None:
        return None
    if mode == RECORDED:
        return None if RECORDED in modes else "provider_modes excludes 'recorded'"
    return None if LIVE in modes or mode in modes else "provider_modes excludes live calls"


def _judge(
    ctx: CaseContext,
    failures: list[Failure],
    code: str | None,
    started: float,
    source: CaseInput,
    *,
    observed_ok: bool,
) -> CaseResult:
    """The case's outcome from its failures (and, for a scored case, its score): status and
    reason first, the result once, with what reading ``source`` noted and read."""
    if observed_ok and not ctx.case.expect_ok:
        failures = [_unexpected_pass(ctx)]
    main = primary(failures) if failures else None
    status, reason = _verdict(ctx, main, observed_ok, code)
    return _result(
        ctx, status, started, failures=failures, observed_ok=observed_ok, main=main,
        reason=reason, notes=source.notes, inputs=source.inputs, run_id=source.run_id,
    )  # fmt: skip


def _unexpected_pass(ctx: CaseContext) -> Failure:
    case = ctx.case
    return Failure(
        Classification.UNEXPECTED_PASS,
        "the recording satisfies the contract, but the case expects a failure"
        + (f" ({case.expected_error})" if case.expected_error else ""),
        "expect_ok",
        ctx.contract.file,
        case.expect_ok_line,
    )


def _verdict(
    ctx: CaseContext, main: Failure | None, observed_ok: bool, code: str | None
) -> tuple[Status, str | None]:
    """The status and its reason (None when the status says it all)."""
    case = ctx.case
    if observed_ok and not case.expect_ok:
        return Status.FAILED, None  # an unexpected pass: no allowlist forgives it
    classification = main.classification if main else None
    if classification in UNOBSERVED and not case.expect_ok:
        return Status.FAILED, "nothing to judge: a case expecting a failure needs its recording"
    if observed_ok if case.expect_ok else case.expected_error in (None, classification):
        return Status.PASSED, None
    reason = None
    if not case.expect_ok:
        reason = f"expected '{case.expected_error}', observed '{classification}'"
    elif code is not None and code in ctx.contract.allowed_errors:
        return Status.SKIPPED, f"allowed error '{code}'"
    if ctx.allowlisted:
        return Status.SKIPPED, f"nr-allowlist: {ctx.allowlisted}"
    return Status.FAILED, reason


def _result(
    ctx: CaseContext,
    status: Status,
    started: float,
    *,
    failures: Sequence[Failure] = (),
    observed_ok: bool | None = None,
    main: Failure | None = None,
    reason: str | None = None,
    notes: tuple[Problem, ...] = (),
    inputs: tuple[str, ...] = (),
    run_id: str | None = None,
) -> CaseResult:
    if main is not None:  # the primary failure first: reporters and annotations lead with it
        failures = [main, *(f for f in failures if f is not main)]
    classification = main.classification if main else None
    fp = (
        fingerprint(
            ctx.pack_id,
            ctx.contract.path,
            ctx.case.id,
            main.classification,
            failure_key(ctx.contract, main.locator),
        )
        if main
        else None
    )
    return ctx.result(
        observed_ok=observed_ok,
        status=status,
        classification=classification,
        fingerprint=fp,
        failures=tuple(failures),
        reason=reason,
        duration_s=time.perf_counter() - started,
        notes=notes,
        inputs=inputs,
        run_id=run_id,
    )
