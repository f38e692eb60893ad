"""The GitHub-flavoured markdown report (the step summary), cut to a byte budget when asked."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from replaygate.core.model import CaseResult, RunResult, Status
from replaygate.core.places import where
from replaygate.report.escape import markdown_cell, markdown_code, markdown_text
from replaygate.report.grammar import (
    assertion_notes,
    case_line,
    judged_text,
    score_text,
    skip_reasons,
    totals_phrase,
)
from replaygate.results.verdict import is_blocking, run_fails

_COUNTED = (Status.PASSED, Status.FAILED, Status.ERROR, Status.SKIPPED)
_PASSING, _FAILING = "\u2705", "\u274c"  # the check mark and cross emoji


@dataclass(frozen=True, slots=True)
class _Section:
    """A heading and table head, then rows; the report is only ever cut between rows."""

    label: str  # what a row is, in the cut note: "failures", "problems" ...
    head: tuple[str, ...]
    rows: tuple[str, ...]
    tail: tuple[str, ...] = ()  # closes what the head opened (</details>), kept in a cut

    @property
    def lines(self) -> tuple[str, ...]:
        return (*self.head, *self.rows, *self.tail)


def render_markdown(
    result: RunResult, *, max_bytes: int | None = None, files_note: str = ""
) -> str:
    """The report; with ``max_bytes``, at most that many UTF-8 bytes, cut at a row boundary.

    A cut report ends with a note saying how many rows were left out and where
    to find them (``files_note``, for example the JUnit and JSON file names).
    """
    headline = _headline(result)
    sections = [section for section in _sections(result) if section.rows]
    full = _join([headline, *(line for section in sections for line in section.lines)])
    if max_bytes is None or _size(full) <= max_bytes:
        return full
    return _cut(headline, sections, max_bytes, files_note)


def _headline(result: RunResult) -> str:
    icon = _FAILING if run_fails(result) else _PASSING
    shard = result.meta.get("shard")
    part = f" (shard {shard['index']}/{shard['count']})" if shard else ""
    return f"## {icon} replaygate{part}: {totals_phrase(result)}"


def _sections(result: RunResult) -> list[_Section]:
    return [
        _packs(result),
        _Section("problems", _heading("Problems", len(result.problems)), _problem_rows(result)),
        _Section("warnings", _heading("Warnings", len(result.warnings)), _warning_rows(result)),
        *_failures(result),
        _traces(result),
        _notes(result),
        _known(result),
        _skipped(result),
    ]


def _heading(title: str, count: int) -> tuple[str, ...]:
    return ("", f"### {title} ({count})", "")


def _table_head(*columns: str, numeric: int = 0) -> tuple[str, ...]:
    rule = ["---"] * (len(columns) - numeric) + ["---:"] * numeric
    return (_row(columns), _row(rule))


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _packs(result: RunResult) -> _Section:
    counts = Counter((case.pack, case.status) for case in result.cases)
    rows = tuple(
        _row(
            [
                markdown_cell(pack.pack_id),
                str(pack.contracts),
                *(str(counts[pack.pack_id, status]) for status in _COUNTED),
            ]
        )
        for pack in result.packs
    )
    head = (
        "",
        *_table_head("pack", "contracts", "passed", "failed", "errors", "skipped", numeric=5),
    )
    return _Section("packs", head, rows)


def _problem_rows(result: RunResult) -> tuple[str, ...]:
    return tuple(
        f"- {markdown_code(where(problem.file, problem.line))} {markdown_code(problem.message)}"
        for problem in result.problems
    )


def _warning_rows(result: RunResult) -> tuple[str, ...]:
    return tuple(
        f"- {markdown_code(where(warning.file, warning.line))} {markdown_code(warning.message)}"
        for warning in result.warnings
    )


def _failures(result: RunResult) -> tuple[_Section, _Section]:
    """A row per group of cases failing alike, then the fingerprints of the grouped ones."""
    shown = [case for case in result.cases if is_blocking(case)]
    groups = _alike(shown)
    columns = ("contract", "case", "classification", "fingerprint", "message", "judged")
    head = (*_heading("Failures", len(shown)), *_table_head(*columns))
    rows = tuple(_failure_row(group) for group in groups)
    grouped = [case for group in groups if len(group) > 1 for case in group]
    return _Section("failures", head, rows), _grouped_fingerprints(grouped)


def _classification(case: CaseResult) -> str:
    return case.classification or ("error" if case.status is Status.ERROR else "")


def _message(case: CaseResult) -> str:
    return case_line(case, classification=False, fingerprint=False)


def _alike(cases: list[CaseResult]) -> list[list[CaseResult]]:
    """Cases grouped by contract, classification, message (which names the line) and score."""
    groups: dict[tuple[str, str, str, str, float | None], list[CaseResult]] = {}
    for case in cases:
        key = (case.pack, case.contract, _classification(case), _message(case), case.score)
        groups.setdefault(key, []).append(case)
    return list(groups.values())


def _failure_row(group: list[CaseResult]) -> str:
    case = group[0]
    many = len(group) > 1
    score = f" (score {case.score:.2f})" if case.score is not None else ""
    return _row(
        [
            markdown_cell(f"{case.pack}/{case.contract}"),
            f"\u00d7 {len(group)} cases{score}" if many else markdown_cell(case.case_id + score),
            markdown_cell(_classification(case)),
            "below" if many else markdown_cell(case.fingerprint or ""),
            markdown_cell(_message(case)),
            "below" if many else markdown_cell(judged_text(case)),
        ]
    )


def _grouped_fingerprints(cases: list[CaseResult]) -> _Section:
    summary = f"Cases and fingerprints of the grouped failures ({len(cases)})"
    opening = ("", f"<details><summary>{summary}</summary>", "")
    head = (*opening, *_table_head("contract", "case", "fingerprint", "judged"))
    rows = tuple(
        _row(
            [
                markdown_cell(f"{case.pack}/{case.contract}"),
                markdown_cell(case.case_id),
                markdown_cell(case.fingerprint or ""),
                markdown_cell(judged_text(case)),
            ]
        )
        for case in cases
    )
    return _Section("grouped fingerprints", head, rows, ("", "</details>"))


def _traces(result: RunResult) -> _Section:
    cases = [case for case in result.cases if case.score is not None]
    columns = ("contract", "case", "status", "score", "judged")
    head = (*_heading("Trace cases: weighted score", len(cases)), *_table_head(*columns))
    rows = tuple(
        _row(
            [
                markdown_cell(f"{case.pack}/{case.contract}"),
                markdown_cell(case.case_id),
                case.status.value,
                markdown_cell(score_text(case)),
                markdown_cell(judged_text(case)),
            ]
        )
        for case in cases
    )
    return _Section("trace cases", head, rows)


def _notes(result: RunResult) -> _Section:
    notes = [(case, note) for case in result.cases for note in assertion_notes(case)]
    head = _heading("Not evaluated, or not as recorded", len(notes))
    rows = tuple(f"- {markdown_code(case.case_id)}: {markdown_code(note)}" for case, note in notes)
    return _Section("notes", head, rows)


def _known(result: RunResult) -> _Section:
    known = [case for case in result.cases if case.known and case.status is Status.FAILED]
    head = (*_heading("Known failures, accepted by the baseline", len(known)),)
    head += _table_head("contract", "case", "fingerprint", "judged")
    rows = tuple(
        _row(
            [
                markdown_cell(f"{case.pack}/{case.contract}"),
                markdown_cell(case.case_id),
                markdown_cell(case.fingerprint or ""),
                markdown_cell(judged_text(case)),
            ]
        )
        for case in known
    )
    return _Section("known failures", head, rows)


def _skipped(result: RunResult) -> _Section:
    reasons = skip_reasons(result)
    total = sum(count for _, count in reasons)
    rows = tuple(f"- {count}: {markdown_code(reason)}" for reason, count in reasons)
    return _Section("skip reasons", _heading("Skipped", total), rows)


def _cut(headline: str, sections: list[_Section], max_bytes: int, files_note: str) -> str:
    """Whole rows while they fit, then the note; the note's room is kept from the start."""
    # headline + "\n", the rows (each + "\n"), then "\n" + note + "\n"
    room = max_bytes - _size(headline) - 1 - _size(_note(sections, files_note)) - 2
    kept: list[str] = []
    omitted: dict[str, int] = {}
    for section in sections:
        taken = _fitting(section, room) if not omitted else 0
        if taken:
            lines = [*section.head, *section.rows[:taken], *section.tail]
            kept += lines
            room -= sum(_size(line) + 1 for line in lines)
        if taken < len(section.rows):
            omitted[section.label] = len(section.rows) - taken
    note = _omission_note(omitted, files_note)
    document = _join([headline, *kept, "", note])
    return document if _size(document) <= max_bytes else _clip(note, max_bytes)


def _fitting(section: _Section, room: int) -> int:
    """How many rows of ``section`` fit in ``room`` bytes with its head (0: none, no head)."""
    room -= sum(_size(line) + 1 for line in (*section.head, *section.tail))
    taken = 0
    for row in section.rows:
        room -= _size(row) + 1
        if room < 0:
            break
        taken += 1
    return taken


def _note(sections: list[_Section], files_note: str) -> str:
    """The longest note this report could need: every row of every section left out."""
    return _omission_note({section.label: len(section.rows) for section in sections}, files_note)


def _omission_note(omitted: dict[str, int], files_note: str) -> str:
    counts = ", ".join(f"{count} more {label}" for label, count in omitted.items())
    see = f"; see {markdown_text(files_note)}" if files_note else ""
    return f"**Report cut to fit:** {counts} not shown{see}."


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _clip(text: str, max_bytes: int) -> str:
    """``text`` cut to ``max_bytes`` UTF-8 bytes without splitting a character."""
    return text.encode("utf-8")[: max(max_bytes, 0)].decode("utf-8", "ignore")
