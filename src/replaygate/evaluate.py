"""Evaluate one golden case: recorded response -> failures -> outcome. No files, no environment."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaygate.assertions import Assertion, Mismatch, evaluate_assertion
from replaygate.classify import primary, unmatched_call_class
from replaygate.contract import Contract, ExpectedCall, GoldenCase
from replaygate.fingerprint import fingerprint
from replaygate.matching import match_calls
from replaygate.normalize import ToolCall
from replaygate.result import CaseResult, Classification, Failure, Status
from replaygate.toolschema import InvalidToolSchema, violations

RECORDED = "recorded"


@dataclass(frozen=True, slots=True)
class CaseInput:
    """A golden case's normalised request and response, as loaded from its files."""

    request: dict[str, Any]
    schemas: Mapping[str, Mapping[str, Any]]
    response: dict[str, Any] | None  # None: no recording and no embedded response
    calls: tuple[ToolCall, ...]
    looked_in: str  # where a recording was looked for, for recording_not_found


@dataclass(frozen=True, slots=True)
class CaseContext:
    pack_id: str
    pack_dir: str
    contract: Contract
    case: GoldenCase
    env: Mapping[str, str]
    allowlisted: str | None = None  # the NR allowlist's reason, when the contract is listed


class CaseUndecidable(Exception):
    """A check could not be decided (a regex ran out of time): the case errors."""


@dataclass
class _Collector:
    ctx: CaseContext
    failures: list[Failure] = field(default_factory=list)

    def add(self, classification: str, message: str, locator: str, line: int, **extra: Any) -> None:
        self.failures.append(
            Failure(classification, message, locator, self.ctx.contract.file, line, **extra)
        )

    def mismatch(self, assertion: Assertion, m: Mismatch, *, absent_class: str) -> None:
        if m.kind == "error":
            raise CaseUndecidable(f"{assertion.locator}:{m.operator}: {m.message}")
        classification = (
            absent_class if m.kind == "path_not_found" else Classification.SCHEMA_VIOLATION
        )
        self.add(
            classification,
            m.message,
            f"{assertion.locator}:{m.operator}",
            m.line,
            path=assertion.path.text,
            operator=m.operator,
            expected=m.expected,
            actual=m.actual,
        )


def _check_invariants(
    col: _Collector, assertions: Sequence[Assertion], document: Any, absent: str
) -> None:
    for assertion in assertions:
        for m in evaluate_assertion(assertion, document, col.ctx.env):
            col.mismatch(assertion, m, absent_class=absent)


def _malformed(col: _Collector, calls: Sequence[ToolCall]) -> None:
    for index, call in enumerate(calls):
        if call.malformed:
            col.add(
                Classification.MALFORMED_ARGUMENTS,
                f"'{call.name}': {call.malformed}",
                f"tool_calls[{call.name}].arguments",
                col.ctx.case.line,
                path=f"$.tool_calls[{index}].arguments",
                actual=call.arguments,
            )


def _tool_schemas(col: _Collector, calls: Sequence[ToolCall], schemas: Mapping[str, Any]) -> None:
    for index, call in enumerate(calls):
        schema = schemas.get(call.name)
        if schema is None or call.malformed:
            continue
        try:
            found = list(violations(schema, call.arguments))
        except InvalidToolSchema as exc:
            raise CaseUndecidable(f"tool '{call.name}': {exc}") from None
        for v in found:
            col.add(
                Classification.SCHEMA_VIOLATION,
                f"'{call.name}' arguments {v.path}: {v.message}",
                f"tool_schema.{call.name}:{v.keyword}",
                col.ctx.case.line,
                path=f"$.tool_calls[{index}].arguments",
                operator=v.keyword,
            )


class _CallMatcher:
    """Matches expected calls to actual calls and explains every expected call left unmatched."""

    def __init__(self, col: _Collector, calls: Sequence[ToolCall]) -> None:
        self.col = col
        self.calls = calls
        self.expected = col.ctx.contract.expected_calls
        self._cache: dict[tuple[int, int], list[tuple[Assertion, Mismatch]]] = {}

    def mismatches(self, i: int, j: int) -> list[tuple[Assertion, Mismatch]]:
        if (i, j) not in self._cache:
            args = self.calls[j].arguments
            self._cache[(i, j)] = [
                (a, m)
                for a in self.expected[i].invariants
                for m in evaluate_assertion(a, args, self.col.ctx.env)
            ]
        return self._cache[(i, j)]

    def holds(self, i: int, j: int) -> bool:
        return self.calls[j].malformed is None and not self.mismatches(i, j)

    def run(self) -> None:
        contract = self.col.ctx.contract
        names = [call.name for call in self.calls]
        pairs = match_calls(
            [e.name for e in self.expected], names, self.holds, strict_order=contract.strict_order
        )
        leftover = [j for j in range(len(self.calls)) if j not in pairs.values()]
        unmatched = [i for i in range(len(self.expected)) if i not in pairs]
        left_names = {self.calls[j].name for j in leftover}
        # pass_threshold forgives tools that were not called, never a call that was made wrong
        not_called = [i for i in unmatched if self.expected[i].name not in left_names]
        forgiven = set(not_called) if len(not_called) <= contract.allowed_misses else set()
        claimed: set[int] = set()
        for i in unmatched:
            if i not in forgiven:
                self._explain(i, leftover, claimed)
        if contract.strict_match:
            self._extra_calls([j for j in leftover if j not in claimed])

    def _explain(self, i: int, leftover: list[int], claimed: set[int]) -> None:
        expected = self.expected[i]
        same = [j for j in leftover if self.calls[j].name == expected.name and j not in claimed]
        unexpected = [
            self.calls[j].name
            for j in leftover
            if self.calls[j].name not in self.col.ctx.contract.expected_names
        ]
        kind = unmatched_call_class(
            expected.name,
            any_calls=bool(self.calls),
            leftover_names=[self.calls[j].name for j in same],
            unexpected_names=unexpected,
        )
        if kind is Classification.SCHEMA_VIOLATION:
            self._same_name(expected, i, same, claimed)
        elif kind is Classification.WRONG_TOOL:
            called = ", ".join(sorted(set(unexpected)))
            self.col.add(
                kind,
                f"expected a call to '{expected.name}', but the model called {called}",
                expected.locator,
                expected.line,
                expected=expected.name,
                actual=called,
            )
        else:
            why = "no tool was called" if not self.calls else f"'{expected.name}' was not called"
            self.col.add(kind, why, expected.locator, expected.line, expected=expected.name)

    def _same_name(
        self, expected: ExpectedCall, i: int, same: list[int], claimed: set[int]
    ) -> None:
        j = min(
            same, key=lambda j: (self.calls[j].malformed is not None, len(self.mismatches(i, j)))
        )
        claimed.add(j)
        if self.calls[j].malformed:
            return  # already reported as malformed_arguments
        found = self.mismatches(i, j)
        if not found:  # invariants hold: only the order was wrong
            self.col.add(
                Classification.WRONG_TOOL,
                f"'{expected.name}' was called out of order (tool_order: strict)",
                f"{expected.locator}:tool_order",
                expected.line,
                expected=expected.name,
            )
            return
        for assertion, m in found:
            self.col.mismatch(assertion, m, absent_class=Classification.SCHEMA_VIOLATION)

    def _extra_calls(self, extra: list[int]) -> None:
        contract = self.col.ctx.contract
        line = contract.lines.get("tool_call_match_mode", self.col.ctx.case.line)
        for j in extra:
            name = self.calls[j].name
            known = name in contract.expected_names
            why = "one call too many to" if known else "unexpected call to"
            self.col.add(
                Classification.WRONG_TOOL,
                f"{why} '{name}' (tool_call_match_mode: strict)",
                "tool_call_match_mode",
                line,
                actual=name,
            )


def _recorded_error(error: Any) -> tuple[str | None, str]:
    """The recorded error's code (None when it has none) and message."""
    if not isinstance(error, Mapping):
        return None, "the provider returned an error"
    code, message = error.get("code"), error.get("message")
    return (
        code if isinstance(code, str) and code else None,
        message if isinstance(message, str) else "the provider returned an error",
    )


def _observe(col: _Collector, source: CaseInput) -> str | None:
    """Collect the failures of a recorded response; returns a recorded error code, if any."""
    ctx = col.ctx
    response = source.response
    if response is None:
        col.add(
            Classification.RECORDING_NOT_FOUND,
            f"no recording at {source.looked_in} and no response in the fixture",
            "recording",
            ctx.case.line,
        )
        return None
    if response["success"] is False:
        code, message = _recorded_error(response.get("error"))
        col.add(
            code or Classification.UNEXPECTED_ERROR,
            message,
            "response.error",
            ctx.case.line,
            path="$.error",
            actual=response.get("error"),
        )
        return code
    _malformed(col, source.calls)
    _CallMatcher(col, source.calls).run()
    _tool_schemas(col, source.calls, source.schemas)
    _check_invariants(col, ctx.contract.output_invariants, response, Classification.PATH_NOT_FOUND)
    _check_invariants(
        col, ctx.contract.input_invariants, source.request, Classification.PATH_NOT_FOUND
    )
    return None


def evaluate_case(ctx: CaseContext, source: CaseInput | str) -> CaseResult:
    """The outcome of one golden case; ``source`` is its loaded input or why it could not load."""
    started = time.perf_counter()
    case = ctx.case
    if case.provider_modes is not None and RECORDED not in case.provider_modes:
        return _result(ctx, Status.SKIPPED, started, reason="provider_modes excludes 'recorded'")
    if isinstance(source, str):
        return _result(ctx, Status.ERROR, started, reason=source)
    col = _Collector(ctx)
    try:
        code = _observe(col, source)
    except CaseUndecidable as exc:
        return _result(ctx, Status.ERROR, started, reason=str(exc))
    return _judge(ctx, col.failures, code, started)


def _judge(
    ctx: CaseContext, failures: list[Failure], code: str | None, started: float
) -> CaseResult:
    case = ctx.case
    if not failures and not case.expect_ok:
        failures = [
            Failure(
                Classification.UNEXPECTED_PASS,
                "the recording satisfies the contract, but the case expects a failure"
                + (f" ({case.expected_error})" if case.expected_error else ""),
                "expect_ok",
                ctx.contract.file,
                case.expect_ok_line,
            )
        ]
        return _result(ctx, Status.FAILED, started, failures=failures, observed_ok=True)
    observed_ok = not failures
    main = primary(failures) if failures else None
    classification = main.classification if main else None
    passed = observed_ok if case.expect_ok else case.expected_error in (None, classification)
    if passed:
        return _result(
            ctx, Status.PASSED, started, failures=failures, observed_ok=observed_ok, main=main
        )
    reason = None
    if not case.expect_ok:
        reason = f"expected '{case.expected_error}', observed '{classification}'"
    elif code is not None and code in ctx.contract.allowed_errors:
        return _result(
            ctx,
            Status.SKIPPED,
            started,
            failures=failures,
            observed_ok=False,
            main=main,
            reason=f"allowed error '{code}'",
        )
    if ctx.allowlisted:
        return _result(
            ctx,
            Status.SKIPPED,
            started,
            failures=failures,
            observed_ok=observed_ok,
            main=main,
            reason=f"nr-allowlist: {ctx.allowlisted}",
        )
    return _result(
        ctx,
        Status.FAILED,
        started,
        failures=failures,
        observed_ok=observed_ok,
        main=main,
        reason=reason,
    )


def _result(
    ctx: CaseContext,
    status: Status,
    started: float,
    *,
    failures: Sequence[Failure] = (),
    observed_ok: bool | None = None,
    main: Failure | None = None,
    reason: str | None = None,
) -> CaseResult:
    if main is None and failures:
        main = primary(failures)
    if main is not None:  # the primary failure first: reporters and annotations lead with it
        failures = [main, *(f for f in failures if f is not main)]
    classification = main.classification if main else None
    fp = (
        fingerprint(ctx.pack_id, ctx.contract.path, ctx.case.id, main.classification, main.locator)
        if main
        else None
    )
    return CaseResult(
        pack=ctx.pack_id,
        pack_dir=ctx.pack_dir,
        contract=ctx.contract.path,
        contract_file=ctx.contract.file,
        case_id=ctx.case.id,
        expect_ok=ctx.case.expect_ok,
        expected_error=ctx.case.expected_error,
        observed_ok=observed_ok,
        status=status,
        classification=classification,
        fingerprint=fp,
        failures=tuple(failures),
        file=ctx.contract.file,
        line=ctx.case.line,
        reason=reason,
        duration_s=time.perf_counter() - started,
    )
