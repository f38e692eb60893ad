"""A scored case (an @isdk fixture): its score, and whether the score passes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replaygate.loading.contract import Scoring
from replaygate.results.model import Failure


@dataclass(frozen=True, slots=True)
class Scored:
    score: float  # 0.0 to 1.0
    passed: bool


def _under(failure: Failure, locator: str) -> bool:
    return failure.locator == locator or failure.locator.startswith(locator + ":")


def score_case(scoring: Scoring, failures: Sequence[Failure]) -> Scored:
    """The shares of the assertions without a failure; a failure outside them scores 0.

    With a pass share, the case passes at that score unless a critical part failed;
    without one, it passes only with no failure at all.
    """
    locators = [locator for locator, _ in scoring.shares]
    if any(not any(_under(f, locator) for locator in locators) for f in failures):
        return Scored(0.0, False)  # no recording, or a recorded error: nothing was checked
    score = sum(share for locator, share in scoring.shares if not _failed(failures, locator))
    score = round(min(max(float(score), 0.0), 1.0), 6)
    if scoring.pass_share is None:
        return Scored(score, not failures)
    critical = any(_failed(failures, locator) for locator in scoring.critical)
    return Scored(score, score >= scoring.pass_share - 1e-9 and not critical)


def _failed(failures: Sequence[Failure], locator: str) -> bool:
    return any(_under(failure, locator) for failure in failures)
