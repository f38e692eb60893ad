"""The short human summary printed to the terminal."""

from __future__ import annotations

from replaygate.report.escape import terminal_safe, truncate
from replaygate.report.grammar import (
    assertion_notes,
    case_line,
    case_message,
    message_line,
    skip_reasons,
    totals_phrase,
)
from replaygate.results.model import CaseResult, Problem, RunResult, Status
from replaygate.results.verdict import run_fails

_LINE_LIMIT = 2000  # characters of one case line before escaping
_RED, _YELLOW, _GREEN, _RESET = "\x1b[31m", "\x1b[33m", "\x1b[32m", "\x1b[0m"


def render_text(result: RunResult, *, color: bool = False) -> str:
    """Problems, failed and errored cases, skip reasons, then the totals line."""
    lines = [_paint(_problem(problem), _RED, color) for problem in result.problems]
    lines += [_paint(_warning(warning), _YELLOW, color) for warning in result.warnings]
    lines += _cases(result, color)
    lines += [
        _paint(f"{_safe(note)} (case {_safe(case.case_id)})", _YELLOW, color)
        for case in result.cases
        for note in assertion_notes(case)
    ]
    lines += [
        _paint(f"{count} skipped: {_safe(reason)}", _YELLOW, color)
        for reason, count in skip_reasons(result)
    ]
    lines.append(_paint(totals_phrase(result), _totals_colour(result), color))
    return "\n".join(lines) + "\n"


def _shown(case: CaseResult) -> bool:
    return case.status in (Status.FAILED, Status.ERROR)


def _cases(result: RunResult, color: bool) -> list[str]:
    """Failed and errored cases; a case with the same problem as an earlier one is counted
    under it ("... and 9,998 more cases: same problem") instead of printed again."""
    groups: dict[tuple[object, ...], list[CaseResult]] = {}
    for case in result.cases:
        if _shown(case):
            groups.setdefault(_same_problem(case), []).append(case)
    lines = []
    for first, *more in groups.values():
        lines.append(_case(first, color))
        if more:
            noun = "case" if len(more) == 1 else "cases"
            lines.append(_paint(f"... and {len(more):,} more {noun}: same problem", _RED, color))
    return lines


def _same_problem(case: CaseResult) -> tuple[object, ...]:
    """What makes two cases' lines the same problem: all but the case and its fingerprint
    (an errored case without failures is located at its own golden case, so not by line)."""
    where = (case.failures[0].file, case.failures[0].line) if case.failures else None
    return (case.status, case.known, case.classification, where, case_message(case))


def _problem(problem: Problem) -> str:
    return _safe(message_line(problem.file, problem.line, problem.message))


def _warning(warning: Problem) -> str:
    return _safe(message_line(warning.file, warning.line, f"warning: {warning.message}"))


def _case(case: CaseResult, color: bool) -> str:
    known = ", known" if case.known else ""
    score = f", score {case.score:.2f}" if case.score is not None else ""
    text = f"{_safe(case_line(case))} (case {_safe(case.case_id)}{known}{score})"
    return _paint(text, _YELLOW if case.known else _RED, color)


def _totals_colour(result: RunResult) -> str:
    return _RED if run_fails(result) else _GREEN


def _safe(text: str) -> str:
    return terminal_safe(truncate(text, _LINE_LIMIT))


def _paint(text: str, colour: str, color: bool) -> str:
    return f"{colour}{text}{_RESET}" if color else text
