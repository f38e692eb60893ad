"""The pull-request comment's text: new and fixed fingerprints, then the run's totals."""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass

from replaygate.core.model import CaseResult, RunResult, Status
from replaygate.core.places import where
from replaygate.github.comment import MARKER, embed_fingerprints
from replaygate.report.escape import markdown_cell, markdown_code, markdown_text
from replaygate.report.grammar import totals_phrase

MAX_ROWS = 50  # per table; the step summary and the reports have the rest
MAX_EMBEDDED = 2000  # fingerprints carried to the next run (about 30 KB of the 64 KB body)


@dataclass(frozen=True, slots=True)
class Delta:
    """Failing fingerprints against a reference: the baseline, or our previous comment."""

    current: frozenset[str]
    new: tuple[str, ...]
    fixed: tuple[str, ...]


def failing_fingerprints(result: RunResult) -> list[str]:
    """Sorted fingerprints of failed and errored cases (known ones included)."""
    failing = (Status.FAILED, Status.ERROR)
    return sorted({c.fingerprint for c in result.cases if c.status in failing and c.fingerprint})


def delta(result: RunResult, reference: Set[str]) -> Delta:
    current = frozenset(failing_fingerprints(result))
    return Delta(current, tuple(sorted(current - reference)), tuple(sorted(reference - current)))


def render_comment(result: RunResult, change: Delta, against: str) -> str:
    """Marker and embedded fingerprints first, so a cut at the size limit keeps them."""
    embedded = embed_fingerprints(sorted(change.current)[:MAX_EMBEDDED])
    heading = f"### replaygate: {len(change.new)} new, {len(change.fixed)} fixed ({against})"
    lines = [MARKER, embedded, heading, "", f"**{markdown_text(totals_phrase(result))}**", ""]
    lines += _new_table(result, change.new) + _fixed_list(change.fixed)
    return "\n".join(lines) + "\n"


def _new_table(result: RunResult, new: Iterable[str]) -> list[str]:
    cases = {c.fingerprint: c for c in result.cases if c.fingerprint}
    rows = [_row(cases[fingerprint]) for fingerprint in new if fingerprint in cases]
    if not rows:
        return []
    head = ["| fingerprint | classification | case | where |", "|---|---|---|---|"]
    return ["New failures:", "", *head, *rows[:MAX_ROWS], *_more(len(rows)), ""]


def _row(case: CaseResult) -> str:
    failure = case.failures[0] if case.failures else None
    location = where(failure.file, failure.line) if failure else where(case.file, case.line)
    cells = [case.fingerprint or "", case.classification or case.status.value, case.case_id]
    return "| " + " | ".join(markdown_cell(cell) for cell in [*cells, location]) + " |"


def _fixed_list(fixed: tuple[str, ...]) -> list[str]:
    if not fixed:
        return []
    items = [f"- {markdown_code(fingerprint)}" for fingerprint in fixed[:MAX_ROWS]]
    return ["Fixed (no longer failing):", "", *items, *_more(len(fixed)), ""]


def _more(count: int) -> list[str]:
    return ["", f"… and {count - MAX_ROWS} more"] if count > MAX_ROWS else []
