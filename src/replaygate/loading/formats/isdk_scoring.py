"""@isdk scoring of a case: maxScore split over its blocks, `$score` weights, critical parts."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replaygate.assertions.assertion import Assertion
from replaygate.core.errors import PackError
from replaygate.loading.contract import ScoredPart, Scoring
from replaygate.loading.yaml_reader import YamlMap

DEFAULT_MAX_SCORE = 100.0
UNASSIGNED_BUDGET = 0.1  # @isdk's totalUnassignedWeight: what unweighted parts share when
# the explicit weights leave no room


@dataclass(frozen=True, slots=True)
class Unit:
    """A scored part of a case (`output`, `expect.messages`, ...) and the value it came from."""

    assertion: Assertion
    value: Any  # the @isdk expectation, for its $score / $critical / $meta


def scoring(case: YamlMap, units: Sequence[Unit], file: str) -> Scoring:
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
    for unit in units:
        _refuse_nested_critical(unit.value, unit.assertion.line, file, top=True)
    critical = frozenset(u.assertion.locator for u in units if _critical(u.value))
    return Scoring(parts, critical, pass_score / max_score if enabled else None)


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
    value = _metadata(unit.value, "score")
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


def _critical(value: Any) -> bool:
    score = _metadata(value, "score")
    return _metadata(value, "critical") is True or (
        isinstance(score, Mapping) and score.get("critical") is True
    )


def _refuse_nested_critical(value: Any, line: int, file: str, *, top: bool = False) -> None:
    """A critical mark below a part's top level: replaygate scores parts only, so it is
    refused rather than ignored."""
    line = getattr(value, "line", None) or line
    if isinstance(value, list):
        lines = getattr(value, "item_lines", [])
        for index, item in enumerate(value):
            _refuse_nested_critical(item, lines[index] if index < len(lines) else line, file)
    if not isinstance(value, Mapping):
        return
    lines = getattr(value, "key_lines", {})
    if not top and _critical(value):
        where = next((lines[k] for k in ("$critical", "$meta", "$score") if k in lines), line)
        message = "$critical is honoured only on a part (output, expect.output, expect.messages"
        raise PackError(file, where, message + ", expect.tools), not inside one")
    for key, item in value.items():  # $expect: X is still the part itself
        _refuse_nested_critical(item, lines.get(key, line), file, top=top and key == "$expect")


def _metadata(value: Any, name: str) -> Any:
    if not isinstance(value, Mapping):
        return None
    meta = value.get("$meta")
    if isinstance(meta, Mapping) and name in meta:
        return meta[name]
    return value.get(f"${name}")


def _number(case: YamlMap, key: str, default: float, file: str) -> float:
    value = case.get(key, default)
    if not _finite(value) or value <= 0:
        raise _refuse(case, key, f"{key} must be a number above 0, got {value!r}", file)
    return float(value)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _refuse(case: YamlMap, key: str, message: str, file: str) -> PackError:
    return PackError(file, case.key_lines.get(key, case.line), message)
