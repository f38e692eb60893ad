"""@isdk scoring of a case: maxScore split over its blocks, `$score` weights, critical parts."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replaygate.assertions.assertion import Assertion
from replaygate.core.errors import PackError
from replaygate.loading.contract import ScoredPart, Scoring
from replaygate.loading.formats.isdk_expect import is_critical, metadata
from replaygate.loading.yaml_reader import YamlMap

DEFAULT_MAX_SCORE = 100.0
UNASSIGNED_BUDGET = 0.1  # @isdk's totalUnassignedWeight: what unweighted parts share when
# the explicit weights leave no room


@dataclass(frozen=True, slots=True)
class Unit:
    """A scored part of a case (`output`, `expect.messages`, ...) and the value it came from."""

    assertion: Assertion
    value: Any  # the @isdk expectation, for its $score / $critical / $meta


def scoring(
    case: YamlMap, units: Sequence[Unit], file: str, critical: Collection[int] = ()
) -> Scoring:
    """The case's scoring; ``critical``: the ids of the expectation mappings marked critical
    (the translator's), whose nested assertions fail the case when they fail."""
    max_score = _number(case, "maxScore", DEFAULT_MAX_SCORE, file)
    enabled = case.get("scoring", False)
    if enabled not in (True, False, "auto"):
        raise _refuse(case, "scoring", "scoring must be true, false or 'auto'", file)
    pass_score = _number(case, "passScore", max_score, file)
    if pass_score > max_score:
        message = (
            f"passScore ({pass_score:g}) is above maxScore ({max_score:g}): no case could pass"
        )
        raise _refuse(case, "passScore", message, file)
    blocks: dict[str, list[Unit]] = {}
    for unit in units:
        blocks.setdefault(unit.assertion.locator.split(".")[0], []).append(unit)
    parts = tuple(
        ScoredPart(unit.assertion.locator, weight / len(blocks), _children(unit.assertion))
        for members in blocks.values()
        for unit, weight in zip(members, _weights(members, max_score, file), strict=True)
    )
    marked = {u.assertion.locator for u in units if is_critical(u.value)}
    for unit in units:
        marked.update(_critical_inside(unit.assertion, critical))
    return Scoring(parts, frozenset(marked), pass_score / max_score if enabled else None)


def _children(assertion: Assertion) -> tuple[str, ...]:
    """The keys or items of an expected object or array (its nested assertions with a path),
    or the members of an `$and`: @isdk scores them in equal shares."""
    if len(assertion.checks) != 1 or assertion.checks[0].operator != "all_of":
        return ()
    nested = assertion.checks[0].prepared
    located = [item for item in nested if item.path.text != "$"]
    return tuple(item.locator for item in (located or nested))


def _weights(units: Sequence[Unit], max_score: float, file: str) -> list[float]:
    """@isdk's weights: 0..1 a confidence, more than 1 points of max(maxScore, largest)."""
    explicit = [_score(unit, file) for unit in units]
    largest = max((s for s in explicit if s is not None), default=0.0)
    scale = max(max_score, largest)
    weights = [None if s is None else (s if s <= 1 else s / scale) for s in explicit]
    given = sum(w for w in weights if w is not None)
    unassigned = weights.count(None)
    room = 1 - given if given < 1 else UNASSIGNED_BUDGET
    filled = [w if w is not None else room / unassigned for w in weights]
    total = sum(filled)
    return [w / total for w in filled] if total > 0 else [1 / len(filled)] * len(filled)


def _score(unit: Unit, file: str) -> float | None:
    value = metadata(unit.value, "score")
    if isinstance(value, Mapping):
        value = value.get("value")
    if value is None:
        return None
    if not _finite(value) or value < 0:
        line = unit.assertion.line
        raise PackError(
            file,
            line,
            f"$score must be a number, 0 or more (penalties are not supported), got {value!r}",
        )
    return float(value)


# Composites that report one failure on their own line for their nested assertions: a
# critical item under one of them is honoured on the composite's assertion.
_REPORTED_WHOLE = frozenset({"contains_item", "any_of"})


def _critical_inside(assertion: Assertion, critical: Collection[int]) -> Iterator[str]:
    """The locators, inside ``assertion``, of the nested assertions made of critical
    expectations (a key, an item, a tool of `expect.tools`, an `$and` member)."""
    for check in assertion.checks:
        if not isinstance(check.prepared, tuple) or not all(
            isinstance(item, Assertion) for item in check.prepared
        ):
            continue
        raw = check.expected if isinstance(check.expected, list) else [check.expected]
        for item, nested in zip(raw, check.prepared, strict=False):
            if id(item) in critical:
                whole = check.operator in _REPORTED_WHOLE
                yield assertion.locator if whole else nested.locator
            yield from _critical_inside(nested, critical)


def _number(case: YamlMap, key: str, default: float, file: str) -> float:
    value = case.get(key, default)
    if not _finite(value) or value <= 0:
        raise _refuse(case, key, f"{key} must be a number above 0, got {value!r}", file)
    return float(value)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _refuse(case: YamlMap, key: str, message: str, file: str) -> PackError:
    return PackError(file, case.key_lines.get(key, case.line), message)
