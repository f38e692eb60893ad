"""Contracts compiled for evaluation: expected calls, assertions, golden cases, with lines."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replaygate.core.errors import PackError
from replaygate.loading.models import ContractModel, On429Model, RetriesModel, TimeoutsModel
from replaygate.loading.paths import response_path_problem

if TYPE_CHECKING:  # the assertion language is imported where a contract is compiled: a warm
    # cached run whose contracts are known from the cache compiles none (regex alone is 10 ms)
    from replaygate.assertions.assertion import Assertion
    from replaygate.assertions.trace_compile import NotEvaluated, TraceAssertion

MULTI_TOOL = "multi_tool_call"


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    name: str
    invariants: tuple[Assertion, ...]
    locator: str  # "expected_tool_calls[1]", "expect_tools[0]" or "tool"
    line: int


@dataclass(frozen=True, slots=True)
class GoldenCase:
    id: str
    input_ref: str
    expect_ok: bool
    expected_error: str | None
    provider_modes: tuple[str, ...] | None
    line: int
    expect_ok_line: int
    skip: str | None = None  # why the case is skipped whatever the mode (@isdk `skip`, `only`)


@dataclass(frozen=True, slots=True)
class ScoredPart:
    """An assertion that earns ``share`` of the score: all of it when nothing under it fails,
    else the fraction of its ``children`` (nested assertions, equal shares) that hold."""

    locator: str
    share: float
    children: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scoring:
    """How a case scores (an @isdk fixture): its parts' shares sum to 1.

    ``pass_share`` is the score a case needs to pass; None: passing means no failure at all.
    A failure under a ``critical`` assertion fails the case whatever its score.
    """

    parts: tuple[ScoredPart, ...]
    critical: frozenset[str]
    pass_share: float | None


@dataclass(frozen=True, slots=True)
class Contract:
    path: str  # within the pack, forward slashes
    file: str  # relative to the repository root
    tool: str
    expected_calls: tuple[ExpectedCall, ...]
    expected_names: frozenset[str]
    allowed_misses: int  # expected calls that may go unmatched (pass_threshold)
    strict_order: bool
    strict_match: bool
    output_invariants: tuple[Assertion, ...]
    input_invariants: tuple[Assertion, ...]
    golden_cases: tuple[GoldenCase, ...]
    allowed_errors: frozenset[str]
    lines: Mapping[str, int]  # line of top-level keys, for contract-level failures
    scoring: Scoring | None = None
    # inputs read with the contract (an @isdk fixture's results), by case id: a CaseInput,
    # or why the case cannot be evaluated; None: each case names its fixture file
    case_inputs: Mapping[str, object] | None = None
    # how live provider calls are made (no effect in recorded mode)
    timeouts: TimeoutsModel = field(default_factory=TimeoutsModel.defaults)
    retries: RetriesModel = field(default_factory=RetriesModel.defaults)
    on_429: On429Model = field(default_factory=On429Model.defaults)
    trace_assertions: tuple[TraceAssertion, ...] = ()
    not_evaluated: tuple[NotEvaluated, ...] = ()  # criteria a judge would have to decide


def trace_only_contract(
    path: str,
    file: str,
    tool: str,
    raw: Any,
    *,
    golden_cases: tuple[GoldenCase, ...] = (),
    trace_assertions: tuple[TraceAssertion, ...] = (),
    not_evaluated: tuple[NotEvaluated, ...] = (),
) -> Contract:
    """A contract that only checks whole traces (a peer tool's scenario or test case):
    no expected calls, no invariants, nothing allowed to go unmatched."""
    return Contract(
        path=path,
        file=file,
        tool=tool,
        expected_calls=(),
        expected_names=frozenset(),
        allowed_misses=0,
        strict_order=False,
        strict_match=False,
        output_invariants=(),
        input_invariants=(),
        golden_cases=golden_cases,
        allowed_errors=frozenset(),
        lines=dict(_lines(raw)),
        trace_assertions=trace_assertions,
        not_evaluated=not_evaluated,
    )


def _lines(raw: Any) -> Mapping[Any, int]:
    return getattr(raw, "key_lines", {})


def _line(raw: Any, default: int) -> int:
    return int(getattr(raw, "line", default) or default)


def _item_line(seq: Any, index: int, default: int) -> int:
    lines = getattr(seq, "item_lines", None)
    return lines[index] if lines and index < len(lines) else default


def _compile_list(
    raw_items: Any,
    prefix: str,
    file: str,
    default_line: int,
    found: list[PackError],
    *,
    shapes: bool = True,
) -> tuple[Assertion, ...]:
    """The list's assertions; each one's problems added to ``found`` (every one reported).
    ``shapes``: whether an item that is no mapping is a problem here (not where the model's
    validation reports it already)."""
    from replaygate.assertions.assertion import compile_assertion

    compiled = []
    for index, item in enumerate(raw_items if isinstance(raw_items, list) else ()):
        line = _item_line(raw_items, index, default_line)
        if not isinstance(item, Mapping):
            if shapes:
                message = f"{prefix}[{index}]: expected a mapping with 'path'"
                found.append(PackError(file, line, message))
            continue
        try:
            compiled.append(
                compile_assertion(
                    item,
                    locator=f"{prefix}[{index}]",
                    file=file,
                    line=_line(item, line),
                    key_lines=_lines(item),
                )
            )
        except PackError as exc:
            found.extend(exc.each())
    return tuple(compiled)


def assertion_problems(raw: Any, file: str) -> list[PackError]:
    """The problems of every assertion of a contract whose keys or types are wrong (its model
    did not validate): reported with those, rather than after they are fixed."""
    found: list[PackError] = []
    if not isinstance(raw, Mapping):
        return found
    raw_calls = raw.get("expected_tool_calls")
    for index, call in enumerate(raw_calls if isinstance(raw_calls, list) else ()):
        if isinstance(call, Mapping):
            line = _line(call, _item_line(raw_calls, index, 1))
            prefix = f"expected_tool_calls[{index}].argument_invariants"
            _compile_list(call.get("argument_invariants"), prefix, file, line, found, shapes=False)
    sections = raw.get("assertions")
    if isinstance(sections, Mapping):
        _outputs(sections.get("output_invariants"), file, _line(raw, 1), found, shapes=False)
        prefix = "assertions.input_invariants"
        _compile_list(
            sections.get("input_invariants"), prefix, file, _line(raw, 1), found, shapes=False
        )
    return found + list(_duplicate_cases(raw.get("golden_cases"), file).values())


def _outputs(
    raw_items: Any, file: str, line: int, found: list[PackError], *, shapes: bool = True
) -> tuple[Assertion, ...]:
    """The output invariants, and a problem for each path naming a field no tool call has."""
    outputs = _compile_list(
        raw_items, "assertions.output_invariants", file, line, found, shapes=shapes
    )
    for assertion in outputs:
        problem = response_path_problem(assertion)
        if problem is not None:
            found.append(PackError(file, assertion.line, problem))
    return outputs


def _duplicate_cases(raw_cases: Any, file: str) -> dict[int, PackError]:
    """The golden cases (by index) whose id an earlier case has."""
    seen: dict[str, int] = {}
    found: dict[int, PackError] = {}
    for index, case in enumerate(raw_cases if isinstance(raw_cases, list) else ()):
        ident = case.get("id") if isinstance(case, Mapping) else None
        if not isinstance(ident, str):
            continue
        line = _line(case, _item_line(raw_cases, index, 1))
        if ident in seen:
            message = f"duplicate golden case id '{ident}' (first at line {seen[ident]})"
            found[index] = PackError(file, line, message)
        else:
            seen[ident] = line
    return found


def _expected_calls(
    model: ContractModel, raw: Mapping[str, Any], file: str, found: list[PackError]
) -> list[ExpectedCall]:
    """expected_tool_calls in order, then expect_tools not already covered, else the single tool."""
    calls: list[ExpectedCall] = []
    raw_calls = raw.get("expected_tool_calls") or []
    for index, call in enumerate(model.expected_tool_calls or ()):
        raw_call = raw_calls[index]
        line = _line(raw_call, _item_line(raw_calls, index, 1))
        invariants = _compile_list(
            raw_call.get("argument_invariants"),
            f"expected_tool_calls[{index}].argument_invariants",
            file,
            line,
            found,
        )
        calls.append(ExpectedCall(call.name, invariants, f"expected_tool_calls[{index}]", line))
    uncovered = [call.name for call in calls]
    raw_tools = raw.get("expect_tools") or []
    for index, name in enumerate(model.expect_tools or ()):
        if name in uncovered:
            uncovered.remove(name)
            continue
        line = _item_line(raw_tools, index, _lines(raw).get("expect_tools", 1))
        calls.append(ExpectedCall(name, (), f"expect_tools[{index}]", line))
    if not calls and model.tool != MULTI_TOOL:
        calls.append(ExpectedCall(model.tool, (), "tool", _lines(raw).get("tool", 1)))
    return calls


def _allowed_misses(model: ContractModel) -> int:
    if not model.expect_tools:
        return 0
    count = len(model.expect_tools)
    # 1e-9 absorbs float noise: 0.66 * 3 must ask for 2 calls, not 1.98 -> 2 anyway, 2/3*3 -> 2.
    return count - math.ceil(model.pass_threshold * count - 1e-9)


def _golden_cases(
    model: ContractModel, raw: Mapping[str, Any], file: str, found: list[PackError]
) -> tuple[GoldenCase, ...]:
    raw_cases = raw.get("golden_cases") or []
    cases: list[GoldenCase] = []
    duplicates = _duplicate_cases(raw_cases, file)
    found += duplicates.values()
    for index, case in enumerate(model.golden_cases):
        raw_case = raw_cases[index]
        line = _line(raw_case, _item_line(raw_cases, index, 1))
        if index in duplicates:
            continue
        if case.expect_ok and case.expected_error:
            found.append(
                PackError(
                    file,
                    _lines(raw_case).get("expected_error", line),
                    f"golden case '{case.id}': expected_error is set but expect_ok is true",
                )
            )
        modes = tuple(case.provider_modes) if case.provider_modes is not None else None
        cases.append(
            GoldenCase(
                case.id,
                case.input_ref,
                case.expect_ok,
                case.expected_error,
                modes,
                line,
                _lines(raw_case).get("expect_ok", line),
            )
        )
    return tuple(cases)


def compile_contract(
    model: ContractModel, raw: Mapping[str, Any], *, path: str, file: str
) -> Contract:
    """Build the evaluable contract; raises PackError with every problem, located by line."""
    found: list[PackError] = []
    if model.tool == MULTI_TOOL and not (
        model.expect_tools or model.expected_tool_calls or model.trace_assertions
    ):
        found.append(
            PackError(
                file,
                _lines(raw).get("tool", 1),
                "tool: multi_tool_call needs expect_tools, expected_tool_calls or trace_assertions",
            )
        )
    contract = _compiled(model, raw, path, file, found)
    if found:
        first, *rest = sorted(found, key=lambda error: error.line or 0)
        raise PackError(first.file, first.line, first.message, also=tuple(rest))
    return contract


def _compiled(
    model: ContractModel, raw: Mapping[str, Any], path: str, file: str, found: list[PackError]
) -> Contract:
    from replaygate.assertions.trace_compile import compile_trace_assertions

    calls = _expected_calls(model, raw, file, found)
    raw_assertions = raw.get("assertions") or {}
    first_line = _line(raw, 1)
    try:
        traces = compile_trace_assertions(
            raw.get("trace_assertions"),
            "trace_assertions",
            file,
            _lines(raw).get("trace_assertions", first_line),
        )
    except PackError as exc:
        found.extend(exc.each())
        traces = ()
    outputs = _outputs(raw_assertions.get("output_invariants"), file, first_line, found)
    return Contract(
        path=path,
        file=file,
        tool=model.tool,
        expected_calls=tuple(calls),
        expected_names=frozenset(call.name for call in calls) | {model.tool},
        allowed_misses=_allowed_misses(model),
        strict_order=model.tool_order == "strict",
        strict_match=model.tool_call_match_mode == "strict",
        output_invariants=outputs,
        input_invariants=_compile_list(
            raw_assertions.get("input_invariants"),
            "assertions.input_invariants",
            file,
            first_line,
            found,
        ),
        golden_cases=_golden_cases(model, raw, file, found),
        allowed_errors=frozenset(model.allowed_errors),
        lines=dict(_lines(raw)),
        timeouts=model.timeouts or TimeoutsModel.defaults(),
        retries=model.retries or RetriesModel.defaults(),
        on_429=(model.rate_limits.on_429 if model.rate_limits else None) or On429Model.defaults(),
        trace_assertions=traces,
    )


# A golden case as it travels from a worker: its fields in order.
CaseFields = tuple[str, str, bool, str | None, tuple[str, ...] | None, int, int, str | None]


# A contract as it travels from a worker: its path, file, tool and cases.
Outline = tuple[str, str, str, tuple[CaseFields, ...]]


def outline(contract: Contract) -> Outline:
    """What another process sends back of a contract it loaded and judged: what names and
    selects its cases (plain tuples: pickled several times faster than the dataclasses)."""
    cases = tuple(
        (c.id, c.input_ref, c.expect_ok, c.expected_error, c.provider_modes, c.line,
         c.expect_ok_line, c.skip)
        for c in contract.golden_cases
    )  # fmt: skip
    return contract.path, contract.file, contract.tool, cases


def outline_contract(path: str, file: str, tool: str, cases: tuple[CaseFields, ...]) -> Contract:
    """This process's copy of a contract another process loaded and judged (its results
    come with it, engine/runner.py): its cases, nothing to check."""
    return trace_only_contract(
        path, file, tool, {}, golden_cases=tuple(GoldenCase(*case) for case in cases)
    )
