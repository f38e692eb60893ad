"""A scored case (an @isdk fixture): its score, and whether the score passes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replaygate.core.model import Failure
from replaygate.loading.contract import ScoredPart, Scoring


@dataclass(frozen=True, slots=True)
class Scored:
    score: float  # 0.0 to 1.0
    passed: bool


def _under(failure: Failure, locator: str) -> bool:
    return failure.locator == locator or failure.locator.startswith(locator + ":")


def score_case(scoring: Scoring, failures: Sequence[Failure]) -> Scored:
    """The parts' shares, each earned whole or by the fraction of its children that hold;
    a failure outside every part (no recording) scores 0.

    With a pass share, the case passes at that score unless a critical part failed;
    without one, it passes only with no failure at all.
    """
    if any(not any(_under(f, part.locator) for part in scoring.parts) for f in failures):
        return Scored(0.0, False)  # no recording, or a recorded error: nothing was checked
    score = sum(part.share * _earned(part, failures) for part in scoring.parts)
    score = round(min(max(float(score), 0.0), 1.0), 6)
    if scoring.pass_share is None:
        return Scored(score, not failures)
    critical = any(_failed(failures, locator) for locator in scoring.critical)
    return Scored(score, score >= scoring.pass_share - 1e-9 and not critical)


def _earned(part: ScoredPart, failures: Sequence[Failure]) -> float:
    mine = [f for f in failures if _under(f, part.locator)]
    if not mine:
        return 1.0
    if not part.children or any(not any(_under(f, c) for c in part.children) for f in mine):
        return 0.0  # the part failed as a whole (an object that is not one, a missing value)
    return sum(not _failed(mine, child) for child in part.children) / len(part.children)


def _failed(failures: Sequence[Failure], locator: str) -> bool:
    return any(_under(failure, locator) for failure in failures)
