"""The one message grammar and the phrases every renderer shares, before any escaping."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from replaygate.core.model import AssertionStatus, CaseResult, Failure, RunResult, Status
from replaygate.core.places import where

NO_REASON = "no reason given"
_DEFAULT_MESSAGE = {
    Status.FAILED: "the case failed",
    Status.ERROR: "the case could not be evaluated",
}


def message_line(
    file: str,
    line: int | None,
    message: str,
    *,
    path: str | None = None,
    classification: str | None = None,
    fingerprint: str | None = None,
) -> str:
    """``file:line: $.path: message [classification] (fingerprint)``; absent parts left out."""
    parts = [where(file, line), path, message] if path else [where(file, line), message]
    text = ": ".join(parts)
    if classification:
        text += f" [{classification}]"
    if fingerprint:
        text += f" ({fingerprint})"
    return text


def failure_line(failure: Failure) -> str:
    """One failure in the house grammar (the fingerprint belongs to the case)."""
    return message_line(
        failure.file,
        failure.line,
        failure.message,
        path=failure.path,
        classification=failure.classification,
    )


def case_line(case: CaseResult, *, classification: bool = True, fingerprint: bool = True) -> str:
    """A failed or errored case as one line: its primary failure, or its reason."""
    primary = case.failures[0] if case.failures else None
    kind = case.classification or (primary.classification if primary else None)
    return message_line(
        primary.file if primary else case.file,
        primary.line if primary else case.line,
        case_message(case),
        path=primary.path if primary else None,
        classification=kind if classification else None,
        fingerprint=case.fingerprint if fingerprint else None,
    )


def judged_text(case: CaseResult) -> str:
    """``packs/p/golden/a.json, packs/p/recordings/a.recording.json``, or ``runs/b.json (run
    r-2)``: the files a case was judged from, and the peer tool's id of the run."""
    text = ", ".join(case.inputs)
    return text if case.run_id is None else f"{text} (run {case.run_id})"


def case_message(case: CaseResult) -> str:
    """The primary failure's message (with the reason a negative case failed), else the
    case's reason, else a default by status."""
    if case.failures and case.reason and case.status is Status.FAILED:
        return f"{case.failures[0].message} ({case.reason})"
    if case.failures:
        return case.failures[0].message
    return case.reason or _DEFAULT_MESSAGE.get(case.status, case.status.value)


# json.dumps with an option builds an encoder for each call: one, for every value
_VALUE_ENCODER = json.JSONEncoder(ensure_ascii=False)


def value_text(value: Any) -> str:
    """An expected or actual value for humans: JSON where possible, ``repr`` otherwise."""
    try:
        return _VALUE_ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def counted(count: int, noun: str) -> str:
    """``1 problem``, ``2 problems``, ``0 errors``: a count with its noun, plural unless one."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def totals_phrase(result: RunResult) -> str:
    """``12 passed, 1 failed, 0 errors, 2 skipped, 1 known, 1 warning in 0.04s``."""
    totals = result.totals
    text = f"{totals.passed} passed, {totals.failed} failed, {counted(totals.errors, 'error')}"
    text += f", {totals.skipped} skipped"
    if totals.known:
        text += f", {totals.known} known"
    if result.problems:
        text += f", {counted(len(result.problems), 'problem')}"
    if result.warnings:
        text += f", {counted(len(result.warnings), 'warning')}"
    return f"{text} in {result.duration_s:.2f}s"


def skip_reasons(result: RunResult) -> list[tuple[str, int]]:
    """Reasons for skipping with their counts, most frequent first (ties: first seen)."""
    counts = Counter(
        case.reason or NO_REASON for case in result.cases if case.status is Status.SKIPPED
    )
    return counts.most_common()


def assertion_notes(case: CaseResult) -> list[str]:
    """Lines about trace assertions a reader must see even on a passing case: the ones not
    evaluated (they need a judge) and the ones whose verdict differs from the recorded one."""
    notes = []
    for item in case.assertions:
        if item.status is AssertionStatus.NOT_EVALUATED:
            text = f"not evaluated: {item.id} ({item.type}): {item.message}"
            notes.append(message_line(item.file, item.line, text))
        if item.differs:
            notes.append(message_line(item.file, item.line, f"{item.id}: {item.differs}"))
    return notes


def score_text(case: CaseResult) -> str:
    """``0.75 (failed: a, b)``: a trace case's score and the ids of its failed assertions."""
    if case.score is None:
        return "-"
    failed = [a.id for a in case.assertions if a.status is AssertionStatus.FAILED]
    return f"{case.score:.2f}" + (f" (failed: {', '.join(failed)})" if failed else "")
