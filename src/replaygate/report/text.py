"""The short human summary printed to the terminal."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

from replaygate.core.model import CaseResult, Problem, RunResult, Status
from replaygate.report.escape import terminal_safe, truncate
from replaygate.report.grammar import (
    assertion_notes,
    case_line,
    case_message,
    counted,
    failure_line,
    message_line,
    skip_reasons,
    totals_phrase,
)
from replaygate.results.verdict import run_fails

_LINE_LIMIT = 2000  # characters of one case line before escaping
_MORE_FAILURES = 10  # a case's failures printed after its primary one; the rest are counted
_RED, _YELLOW, _GREEN, _RESET = "\x1b[31m", "\x1b[33m", "\x1b[32m", "\x1b[0m"
_STATUS_COLOUR = {Status.PASSED: _GREEN, Status.SKIPPED: _YELLOW}


class Verbosity(StrEnum):
    QUIET = "quiet"  # load problems, failed or errored cases (alike ones counted), the totals
    NORMAL = "normal"  # and warnings, notes and skip reasons
    VERBOSE = "verbose"  # and warnings, every case with its time, in place of the others


def render_text(
    result: RunResult, *, color: bool = False, verbosity: Verbosity = Verbosity.NORMAL
) -> str:
    """Problems, (warnings,) failed and errored cases, (notes, skip reasons,) the totals line."""
    lines = render_problems(result.problems, color=color)
    if verbosity is Verbosity.QUIET:  # what failed is never hidden: a test tool says so
        lines += _cases(result, color)
    else:
        lines += render_warnings(result.warnings, color=color)
        normal = verbosity is Verbosity.NORMAL
        lines += _cases(result, color) if normal else _timed_cases(result, color)
        lines += [
            _paint(f"{_safe(note)} (case {_safe(case.case_id)})", _YELLOW, color)
            for case in result.cases
            for note in assertion_notes(case)
        ]
        lines += _skip_lines(result, color) if normal else _cache_line(result)
    lines.append(_paint(totals_phrase(result), _totals_colour(result), color))
    return "\n".join(lines) + "\n"


def _skip_lines(result: RunResult, color: bool) -> list[str]:
    return [
        _paint(f"{count} skipped: {_safe(reason)}", _YELLOW, color)
        for reason, count in skip_reasons(result)
    ]


def _cache_line(result: RunResult) -> list[str]:
    """How much of a ``--cache`` run was reused (verbose only: the default output stays put)."""
    counts = result.meta.get("cache")
    if not isinstance(counts, Mapping):
        return []
    return [
        f"cache: {counts['hits']} reused, {counts['misses']} judged anew, "
        f"{counts['uncached']} not cacheable"
    ]


def render_problems(problems: Iterable[Problem], *, color: bool = False) -> list[str]:
    """Load problems, one line each: the same words for `run` and `validate`."""
    return [_paint(_problem(problem), _RED, color) for problem in problems]


def render_warnings(warnings: Iterable[Problem], *, color: bool = False) -> list[str]:
    """Warnings (``file:line: warning: message``), one line each, for `run` and `validate`."""
    return [_paint(_warning(warning), _YELLOW, color) for warning in warnings]


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
        lines += _other_failures(first, color)
        if more:
            noun = "case" if len(more) == 1 else "cases"
            lines.append(_paint(f"... and {len(more):,} more {noun}: same problem", _RED, color))
    return lines


def _same_problem(case: CaseResult) -> tuple[object, ...]:
    """What makes two cases' lines the same problem: all but the case and its fingerprint
    (an errored case without failures is located at its own golden case, so not by line),
    the other failures printed under it included."""
    where = (case.failures[0].file, case.failures[0].line) if case.failures else None
    others = tuple(failure_line(failure) for failure in case.failures[1:])
    return (case.status, case.known, case.classification, where, case_message(case), others)


def _other_failures(case: CaseResult, color: bool) -> list[str]:
    """The case's failures after the primary one, indented, up to a cap; then how many more."""
    colour = _YELLOW if case.known else _RED
    others = case.failures[1:]
    lines = [_paint("  " + _safe(failure_line(f)), colour, color) for f in others[:_MORE_FAILURES]]
    rest = len(others) - _MORE_FAILURES
    if rest > 0:
        lines.append(
            _paint(f"  ... and {counted(rest, 'more failure')} of this case", colour, color)
        )
    return lines


def _problem(problem: Problem) -> str:
    return _safe(message_line(problem.file, problem.line, problem.message))


def _warning(warning: Problem) -> str:
    return _safe(message_line(warning.file, warning.line, f"warning: {warning.message}"))


def _case(case: CaseResult, color: bool, suffix: str = "") -> str:
    known = ", known" if case.known else ""
    score = f", score {case.score:.2f}" if case.score is not None else ""
    text = f"{_safe(case_line(case))} (case {_safe(case.case_id)}{known}{score}){suffix}"
    return _paint(text, _YELLOW if case.known else _RED, color)


def _timed_cases(result: RunResult, color: bool) -> list[str]:
    """Every case with its time: a failed one as usual (its other failures under it), others
    as ``file:line: status``."""
    lines = []
    for case in result.cases:
        took = f" in {case.duration_s:.3f}s"
        if _shown(case):
            lines += [_case(case, color, took), *_other_failures(case, color)]
            continue
        outcome = f"skipped: {case.reason}" if case.reason else case.status.value
        text = f"{_safe(message_line(case.file, case.line, outcome))} (case {_safe(case.case_id)})"
        lines.append(_paint(text + took, _STATUS_COLOUR[case.status], color))
    return lines


def _totals_colour(result: RunResult) -> str:
    return _RED if run_fails(result) else _GREEN


def _safe(text: str) -> str:
    return terminal_safe(truncate(text, _LINE_LIMIT))


def _paint(text: str, colour: str, color: bool) -> str:
    return f"{colour}{text}{_RESET}" if color else text
