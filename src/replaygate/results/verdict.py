"""Whether a run fails: the exit code of `run` and `merge`, and the action's conclusion."""

from __future__ import annotations

from enum import StrEnum

from replaygate.core.errors import EXIT_CONFIG, EXIT_FAILED, EXIT_OK
from replaygate.core.model import CaseResult, Problem, RunResult, Status


class FailOn(StrEnum):
    FAILURE = "failure"  # a failed (not known) or errored case fails the run
    NEVER = "never"  # report only; a pack that cannot be loaded still fails


class Conclusion(StrEnum):
    """The action's `conclusion` output, in the Checks API's words."""

    SUCCESS = "success"
    FAILURE = "failure"
    NEUTRAL = "neutral"  # failures that do not fail the job (fail_on: never)


def is_blocking(case: CaseResult) -> bool:
    """A case that fails the run: an error, or a failure the baseline does not accept."""
    return case.status is Status.ERROR or (case.status is Status.FAILED and not case.known)


def run_fails(result: RunResult) -> bool:
    """Whether the run fails the check: a blocking case or a problem."""
    return bool(result.problems) or any(is_blocking(case) for case in result.cases)


def conclusion(result: RunResult, fail_on: FailOn) -> Conclusion:
    """Success, failure, or neutral when failures do not fail the job.

    A pack that cannot be loaded is a failure whatever ``fail_on`` says: nothing in it
    was checked.
    """
    if not run_fails(result):
        return Conclusion.SUCCESS
    if result.problems or fail_on is FailOn.FAILURE:
        return Conclusion.FAILURE
    return Conclusion.NEUTRAL


def exit_code(result: RunResult, fail_on: FailOn) -> int:
    """2 when a file could not be loaded, else 1 when the conclusion is failure, else 0."""
    if result.problems:
        return EXIT_CONFIG
    return EXIT_FAILED if conclusion(result, fail_on) is Conclusion.FAILURE else EXIT_OK


_CHECKS_NOTHING = "a run that checks nothing does not pass"


def nothing_judged(result: RunResult) -> tuple[Problem, ...]:
    """One problem on each pack when the run judged no case (each was skipped): a run that
    checks nothing must not pass. None when a case was judged or a problem already fails it."""
    if result.problems or any(case.status is not Status.SKIPPED for case in result.cases):
        return ()
    found = []
    for pack in result.packs:
        cases = [case for case in result.cases if case.pack == pack.pack_id]
        reasons = sorted({case.reason or "skipped" for case in cases})
        count = f"its {len(cases)} case was" if len(cases) == 1 else f"its {len(cases)} cases were"
        why = f" ({'; '.join(reasons[:3])})" if reasons else ""
        message = (
            f"no case was judged: {count} skipped{why}; a run that checks nothing does not pass"
        )
        found.append(Problem(f"{pack.directory}/pack.yaml", None, message))
    return tuple(found)
