"""A case result sent back by a forked worker: only what the parent cannot rebuild itself.

The parent holds every case's context (pack, contract, case, order), so a result travels as
a tuple of ten values, its failures as tuples of their fields: pickled several times smaller
and faster than the dataclasses. A result that does not fit (notes, trace assertions,
anything the context would not rebuild exactly) travels whole.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from replaygate.core.model import CaseResult, Failure, Status
from replaygate.engine.collector import CaseContext

# A Failure's fields, in their order.
FailureFields = tuple[str, str, str, str, int, str | None, str | None, Any, Any]
# observed_ok, status, classification, fingerprint, reason, duration_s, score, inputs, run_id,
# failures
Compact = tuple[
    bool | None,
    str,
    str | None,
    str | None,
    str | None,
    float,
    float | None,
    tuple[str, ...],
    str | None,
    tuple[FailureFields, ...],
]
Sent = Compact | CaseResult
_STATUS = {status.value: status for status in Status}  # cheaper than calling the enum


def rebuild(ctx: CaseContext, sent: Sent) -> CaseResult:
    """The result ``sent`` stands for, for the case of ``ctx``."""
    if isinstance(sent, CaseResult):  # judged where its place in the run was not known
        return sent if sent.order == ctx.order else dataclasses.replace(sent, order=ctx.order)
    (
        observed_ok,
        status,
        classification,
        fingerprint,
        reason,
        duration_s,
        score,
        inputs,
        run_id,
        failed,
    ) = sent
    return ctx.result(
        observed_ok=observed_ok,
        status=_STATUS[status],
        classification=classification,
        fingerprint=fingerprint,
        failures=tuple(Failure(*fields) for fields in failed),
        reason=reason,
        duration_s=duration_s,
        score=score,
        inputs=inputs,
        run_id=run_id,
    )


def compact(ctx: CaseContext, result: CaseResult) -> Sent:
    """What to send for ``result``: its compact form when that rebuilds it exactly, which is
    when ``ctx`` named it (``CaseContext.named``) and it holds nothing the form leaves out
    (notes, trace assertions, a baseline's verdict). tests/test_transfer.py changes each
    field of a result and of a failure in turn: a field added to either is carried here or
    sends the result whole, or that test fails."""
    if result.notes or result.assertions or result.known or not ctx.named(result):
        return result
    return (
        result.observed_ok,
        result.status.value,
        result.classification,
        result.fingerprint,
        result.reason,
        result.duration_s,
        result.score,
        result.inputs,
        result.run_id,
        tuple(
            (f.classification, f.message, f.locator, f.file, f.line, f.path, f.operator,
             f.expected, f.actual)
            for f in result.failures
        ),
    )  # fmt: skip
