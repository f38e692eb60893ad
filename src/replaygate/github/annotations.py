"""Which failures to annotate, in what order, and how: titled, located, cut to GitHub's limits."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from replaygate.core.model import CaseResult, Problem, RunResult, Status, rank
from replaygate.report.grammar import failure_line, message_line

MESSAGE_LIMIT = 4096  # characters GitHub keeps of an annotation message
PER_STEP_LIMIT = 10  # annotations of one level a step shows (and 50 a job)
_CUT = "\n… (cut: the JUnit and JSON reports have the full message)"


class Level(StrEnum):
    """Levels in the Checks API's words; workflow commands say error for failure."""

    FAILURE = "failure"
    NOTICE = "notice"


@dataclass(frozen=True, slots=True)
class Annotation:
    level: Level
    file: str  # relative to the workspace root, forward slashes
    line: int | None
    title: str
    message: str


@dataclass(frozen=True, slots=True)
class Selection:
    shown: tuple[Annotation, ...]
    omitted: int  # failures (not known ones) left out by the per-step limit


def workspace_path(path: str, root: str, workspace: str) -> str:
    """A repository-relative ``path`` made relative to the workspace, with forward slashes.

    Results are relative to the repository root; when that root is not the
    workspace (a checkout into a subfolder), annotations need the prefix.
    """
    full = os.path.normpath(os.path.join(os.path.abspath(root), path))
    relative = os.path.relpath(full, os.path.abspath(workspace))
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return path.replace(os.sep, "/")  # outside the workspace: GitHub cannot place it anyway
    return relative.replace(os.sep, "/")


def importance(case: CaseResult) -> tuple[int, int, str, int]:
    """Errors first, then failures by classification precedence, then by file and line."""
    file, line = _location(case)
    if case.status is Status.ERROR:
        return (0, 0, file, line or 0)
    return (1, rank(case.classification or ""), file, line or 0)


def collect(result: RunResult) -> list[Annotation]:
    """Every annotation of the run, most important first: problems, errors, failures, known.

    Paths stay relative to the repository root, as the check-runs API wants them;
    workflow commands take them through ``relocated`` first.
    """
    failing = sorted((c for c in result.cases if _failing(c) and not c.known), key=importance)
    known = sorted((c for c in result.cases if c.known), key=importance)
    found = [_problem(problem) for problem in result.problems]
    found += [_case(case, Level.FAILURE) for case in failing]
    found += [_case(case, Level.NOTICE) for case in known]
    return found


def select(annotations: Sequence[Annotation], limit: int = PER_STEP_LIMIT) -> Selection:
    """The first ``limit`` annotations of each level, and how many failures did not fit."""
    shown = _first(annotations, Level.FAILURE, limit) + _first(annotations, Level.NOTICE, limit)
    failures = sum(1 for a in annotations if a.level is Level.FAILURE)
    return Selection(shown, max(0, failures - limit))


def _first(annotations: Iterable[Annotation], level: Level, limit: int) -> tuple[Annotation, ...]:
    return tuple(a for a in annotations if a.level is level)[:limit]


def _failing(case: CaseResult) -> bool:
    return case.status in (Status.FAILED, Status.ERROR)


def _location(case: CaseResult) -> tuple[str, int | None]:
    """The primary failure's line (the failing assertion), else the golden case's."""
    if case.failures:
        return case.failures[0].file, case.failures[0].line
    return case.file, case.line


def _title(case: CaseResult) -> str:
    label = case.classification or case.status.value
    return f"{label} ({case.fingerprint})" if case.fingerprint else label


def _case(case: CaseResult, level: Level) -> Annotation:
    file, line = _location(case)
    head = f"case {case.case_id} of {case.pack}/{case.contract}"
    if case.known:
        head = f"known failure (accepted by the baseline): {head}"
    details = [failure_line(failure) for failure in case.failures]
    if not details:
        details = [message_line(case.file, case.line, case.reason or case.status.value)]
    return Annotation(level, file, line, _title(case), _cut("\n".join([head, *details])))


def _problem(problem: Problem) -> Annotation:
    message = _cut(problem.message)
    return Annotation(Level.FAILURE, problem.file, problem.line, "could not load", message)


def relocated(annotation: Annotation, root: str, workspace: str) -> Annotation:
    """The annotation with its path relative to the workspace (for workflow commands)."""
    file = workspace_path(annotation.file, root, workspace)
    return Annotation(annotation.level, file, annotation.line, annotation.title, annotation.message)


def _cut(message: str) -> str:
    if len(message) <= MESSAGE_LIMIT:
        return message
    return message[: MESSAGE_LIMIT - len(_CUT)] + _CUT
