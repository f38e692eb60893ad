"""Results sent back by forked workers: whatever a case's result holds, the parent gets it back
exactly, compact when it can be."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replaygate.core.model import (
    AssertionOutcome,
    AssertionStatus,
    Capture,
    CaseResult,
    Failure,
    Problem,
    Status,
)
from replaygate.engine.collector import CaseContext
from replaygate.engine.transfer import compact, rebuild
from replaygate.loading.contract import GoldenCase, trace_only_contract

text = st.text(max_size=8)
maybe_text = st.none() | text
number = st.floats(allow_nan=True, allow_infinity=True)
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | number | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
failures = st.builds(
    Failure, text, text, text, text, st.integers(), maybe_text, maybe_text, json_value, json_value
)
outcomes = st.builds(
    AssertionOutcome,
    text,
    text,
    st.sampled_from(AssertionStatus),
    number,
    maybe_text,
    text,
    st.integers(),
    st.none() | st.booleans(),
    maybe_text,
    st.lists(st.builds(Capture, text, text, st.booleans()), max_size=2).map(tuple),
)


def a_context(pack: str, contract: str, case_id: str, line: int, order: int) -> CaseContext:
    case = GoldenCase(case_id, "in.json", True, None, None, line, line + 1)
    tool = trace_only_contract(contract, f"packs/{contract}", "t", {}, golden_cases=(case,))
    return CaseContext(pack, f"packs/{pack}", tool, case, {}, order=order)


contexts = st.builds(
    a_context, st.sampled_from(["p", "q"]), st.sampled_from(["c.yaml", "d.yaml"]),
    st.sampled_from(["c1", "c2"]), st.integers(1, 3), st.integers(0, 2),
)  # fmt: skip


@st.composite
def results_for(draw: st.DrawFn, ctx: CaseContext) -> CaseResult:
    """A result of any shape; its case's fields mostly those of ``ctx``, sometimes not."""
    mine = draw(st.booleans())
    return CaseResult(
        pack=ctx.pack_id if mine else draw(text),
        pack_dir=ctx.pack_dir,
        contract=ctx.contract.path,
        contract_file=ctx.contract.file,
        case_id=ctx.case.id if mine else draw(st.sampled_from(["c1", "c2"])),
        expect_ok=ctx.case.expect_ok if mine else draw(st.booleans()),
        expected_error=ctx.case.expected_error if mine else draw(maybe_text),
        observed_ok=draw(st.none() | st.booleans()),
        status=draw(st.sampled_from(Status)),
        classification=draw(maybe_text),
        fingerprint=draw(maybe_text),
        failures=tuple(draw(st.lists(failures, max_size=2))) if draw(st.booleans()) else (),
        file=ctx.contract.file,
        line=ctx.case.line if mine else draw(st.integers(1, 3)),
        reason=draw(maybe_text),
        duration_s=draw(number),
        known=draw(st.booleans()) if draw(st.booleans()) else False,
        notes=tuple(draw(st.lists(st.builds(Problem, text, st.none() | st.integers(), text)))),
        score=draw(st.none() | number),
        assertions=tuple(draw(st.lists(outcomes, max_size=2))),
        order=ctx.order if mine else draw(st.integers(0, 2)),
    )


@given(st.data())
def test_a_result_comes_back_from_a_worker_exactly(data: st.DataObject) -> None:
    ctx = data.draw(contexts)
    result = data.draw(results_for(ctx))
    # what the worker sends crosses the process boundary as pickle does it
    back = rebuild(ctx, pickle.loads(pickle.dumps(compact(ctx, result))))
    # repr: NaN is not equal to itself, yet it must come back as NaN; the place in the run
    # is the receiver's (a result judged while its contract loaded did not know it)
    assert repr(back) == repr(dataclasses.replace(result, order=ctx.order))


def test_a_plain_result_travels_as_a_tuple_of_scalars() -> None:
    ctx = a_context("p", "c.yaml", "c1", 3, 7)
    plain = rebuild(ctx, (True, "passed", None, None, None, 0.25, None, (), None, ()))
    sent = compact(ctx, plain)
    assert sent == (True, "passed", None, None, None, 0.25, None, (), None, ())
    assert compact(ctx, rebuild(ctx, sent)) == sent
    assert (plain.pack, plain.contract_file, plain.case_id, plain.line, plain.order) == (
        "p", "packs/c.yaml", "c1", 3, 7,
    )  # fmt: skip


def test_a_failed_result_travels_as_tuples_its_failures_too() -> None:
    ctx = a_context("p", "c.yaml", "c1", 3, 7)
    failure = Failure("wrong_tool", "why", "expected_tool_calls[0]", "packs/c.yaml", 4, "$.a")
    failed = dataclasses.replace(
        rebuild(ctx, (False, "failed", "wrong_tool", "f1", None, 0.5, None, (), None, ())),
        failures=(failure,),
    )
    sent = compact(ctx, failed)
    assert isinstance(sent, tuple)
    assert sent[-1] == (
        ("wrong_tool", "why", "expected_tool_calls[0]", "packs/c.yaml", 4, "$.a", None, None, None),
    )
    assert rebuild(ctx, pickle.loads(pickle.dumps(sent))) == failed


OUTCOME = AssertionOutcome("a1", "tool_called", AssertionStatus.PASSED, 1.0, None, "t.yaml", 2)
# Another value of each tuple field's kind; a field of a new kind is for this test to learn.
OTHER_ITEMS: dict[str, tuple[Any, ...]] = {
    "failures": (Failure("schema_violation", "m", "tool_schema.t:type", "packs/c.yaml", 5),),
    "notes": (Problem("packs/p/golden/in.json", 1, "an old recording"),),
    "assertions": (OUTCOME,),
    "inputs": ("packs/p/golden/other.json",),
}


def _other(name: str, value: Any) -> Any:
    """A value of ``value``'s kind that differs from it."""
    if isinstance(value, Status):
        return next(status for status in Status if status is not value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str) or value is None:
        return f"{value}-changed"
    if isinstance(value, tuple):
        return OTHER_ITEMS[name]
    raise AssertionError(f"{name}: a field of a new kind; teach _other a value of it")


def _failed_result(ctx: CaseContext) -> CaseResult:
    failure = ("wrong_tool", "why", "expected_tool_calls[0]", "packs/c.yaml", 4, "$.a", "equals",
               "Bern", "Paris")  # fmt: skip
    return rebuild(ctx, (False, "failed", "wrong_tool", "f1", "r", 0.5, 0.25, ("in.json",), "run1",
                         (failure,)))  # fmt: skip


@pytest.mark.parametrize("name", [field.name for field in dataclasses.fields(CaseResult)])
def test_each_field_of_a_result_comes_back_as_it_was_changed(name: str) -> None:
    # compact decides what to send by naming fields: a field it does not know must not be lost
    ctx = a_context("p", "c.yaml", "c1", 3, 7)
    result = _failed_result(ctx)
    changed = dataclasses.replace(result, **{name: _other(name, getattr(result, name))})
    back = rebuild(ctx, pickle.loads(pickle.dumps(compact(ctx, changed))))
    assert back == dataclasses.replace(changed, order=ctx.order)


@pytest.mark.parametrize("name", [field.name for field in dataclasses.fields(Failure)])
def test_each_field_of_a_failure_comes_back_as_it_was_changed(name: str) -> None:
    ctx = a_context("p", "c.yaml", "c1", 3, 7)
    result = _failed_result(ctx)
    (failure,) = result.failures
    changed_failure = dataclasses.replace(failure, **{name: _other(name, getattr(failure, name))})
    changed = dataclasses.replace(result, failures=(changed_failure,))
    sent = compact(ctx, changed)
    assert isinstance(sent, tuple)  # a failure travels compact, whatever it holds
    assert rebuild(ctx, pickle.loads(pickle.dumps(sent))) == changed
