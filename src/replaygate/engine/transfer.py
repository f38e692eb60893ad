"""A case result sent back by a forked worker: only what the parent cannot rebuild itself.

The parent holds every case's context (pack, contract, case, order), so a plain result
travels as a tuple of nine values, pickled ten times smaller and faster than the
dataclass. A result that does not fit (failures, notes, trace assertions, anything the
context would not rebuild exactly) travels whole.
"""

from __future__ import annotations

import dataclasses

from replaygate.core.model import CaseResult, Status
from replaygate.engine.collector import CaseContext

# observed_ok, status, classification, fingerprint, reason, duration_s, score, inputs, run_id
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
]
Sent = Compact | CaseResult


def rebuild(ctx: CaseContext, sent: Sent) -> CaseResult:
    """The result ``sent`` stands for, for the case of ``ctx``."""
    if isinstance(sent, CaseResult):  # judged where its place in the run was not known
        return sent if sent.order == ctx.order else dataclasses.replace(sent, order=ctx.order)
    observed_ok, status, classification, fingerprint, reason, duration_s, score, inputs, run_id = (
        sent
    )
    return ctx.result(
        observed_ok=observed_ok,
        status=Status(status),
        classification=classification,
        fingerprint=fingerprint,
        failures=(),
        reason=reason,
        duration_s=duration_s,
        score=score,
        inputs=inputs,
        run_id=run_id,
    )


def compact(ctx: CaseContext, result: CaseResult) -> Sent:
    """What to send for ``result``: its compact form when that rebuilds it exactly."""
    sent = (
        result.observed_ok,
        result.status.value,
        result.classification,
        result.fingerprint,
        result.reason,
        result.duration_s,
        result.score,
        result.inputs,
        result.run_id,
    )
    return sent if rebuild(ctx, sent) == result else result
