"""Tool-call checks of one case: malformed arguments, expected calls paired and explained."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from replaygate.assertions.assertion import evaluate_assertion
from replaygate.assertions.holds import holds
from replaygate.assertions.mismatch import Mismatch
from replaygate.core.model import Classification
from replaygate.engine.classify import unmatched_call_class
from replaygate.engine.collector import CaseUndecidable, Collector
from replaygate.engine.matching import match_calls
from replaygate.engine.schema_checkers import InvalidToolSchema
from replaygate.engine.tool_schemas import violations
from replaygate.loading.contract import ExpectedCall
from replaygate.loading.normalize import ToolCall
from replaygate.loading.paths import argument_path_problem


def _malformed(col: Collector, calls: Sequence[ToolCall]) -> None:
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


def _tool_schemas(col: Collector, calls: Sequence[ToolCall], schemas: Mapping[str, Any]) -> None:
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

    def __init__(self, col: Collector, calls: Sequence[ToolCall]) -> None:
        self.col = col
        self.calls = calls
        self.expected = col.ctx.contract.expected_calls
        self._cache: dict[tuple[int, int], list[Mismatch]] = {}
        self._holds: dict[tuple[int, int], bool] = {}  # the in-order matcher asks again

    def mismatches(self, i: int, j: int) -> list[Mismatch]:
        if (i, j) not in self._cache:
            args = self.calls[j].arguments
            self._cache[(i, j)] = [
                m
                for a in self.expected[i].invariants
                for m in evaluate_assertion(a, args, self.col.ctx.env)
            ]
        return self._cache[(i, j)]

    def holds(self, i: int, j: int) -> bool:
        """Whether call ``j`` can stand for expected call ``i``; a no is explained by
        ``mismatches`` only where it is reported."""
        known = self._holds.get((i, j))
        if known is None:
            call, env = self.calls[j], self.col.ctx.env
            known = call.malformed is None and all(
                holds(a, call.arguments, env) for a in self.expected[i].invariants
            )
            self._holds[(i, j)] = known
        return known

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
        for m in found:
            self.col.mismatch(m, absent_class=Classification.SCHEMA_VIOLATION)

    def _extra_calls(self, extra: list[int]) -> None:
        contract = self.col.ctx.contract
        line = contract.lines.get("tool_call_match_mode", self.col.ctx.case.line)
        for j in extra:
            name = self.calls[j].name
            known = name in contract.expected_names
            why = "one call too many to" if known else "unexpected call to"
            self.col.add(
                Classification.WRONG_TOOL,
                f"{why} '{name}' at $.tool_calls[{j}] (tool_call_match_mode: strict)",
                "tool_call_match_mode",
                line,
                actual=name,
            )


def _argument_paths(col: Collector, schemas: Mapping[str, Any]) -> None:
    """An argument invariant whose path the tool's schema says cannot exist errors the case:
    with ``optional`` or under ``not`` it would pass whatever the model does."""
    for expected in col.ctx.contract.expected_calls:
        schema = schemas.get(expected.name)
        for invariant in expected.invariants if schema is not None else ():
            problem = argument_path_problem(invariant, expected.name, schema)
            if problem is not None:
                raise CaseUndecidable(f"line {invariant.line}: {problem}")


def check_calls(col: Collector, calls: Sequence[ToolCall], schemas: Mapping[str, Any]) -> None:
    """Every tool-call check of a successful response, in the order failures are reported."""
    _argument_paths(col, schemas)
    _malformed(col, calls)
    _CallMatcher(col, calls).run()
    _tool_schemas(col, calls, schemas)
