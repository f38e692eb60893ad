"""What several recordings of one request agree on: tools, their order, argument rules."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from replaygate.core.errors import ReplayGateError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")  # a key a `.name` JSONPath step can hold
_RESERVED = frozenset({"where", "wherenot"})  # JSONPath keywords, not names
_SCALARS = frozenset({"string", "integer", "number", "boolean"})
# What a recording holds where a secret was (providers/redact.py writes it; this layer may
# not import that one, and tests/test_infer.py holds the two equal).
REDACTED = "[redacted]"


class Tier(StrEnum):
    """ReplayCI's confidence tiers by sample count."""

    LOW = "low"  # fewer than 5 samples
    MEDIUM = "medium"  # 5 to 9
    HIGH = "high"  # 10 or more


def tier(samples: int) -> Tier:
    if samples >= 10:
        return Tier.HIGH
    return Tier.MEDIUM if samples >= 5 else Tier.LOW


@dataclass(frozen=True, slots=True)
class Sample:
    """One recording: the fixture it comes from and its tool calls (name, parsed arguments)."""

    input_ref: str
    calls: tuple[tuple[str, Mapping[str, Any]], ...]


@dataclass(frozen=True, slots=True)
class Rule:
    """One inferred assertion: a path, its operators in writing order, the samples behind it."""

    path: str
    operators: dict[str, Any]
    samples: int


@dataclass(frozen=True, slots=True)
class CallRule:
    name: str
    rules: tuple[Rule, ...]


@dataclass(frozen=True, slots=True)
class Inferred:
    tool: str  # the one expected tool, or multi_tool_call
    strict_order: bool  # two or more samples, all with the same tools in the same order
    calls: tuple[CallRule, ...]
    samples: int


def infer(samples: Sequence[Sample]) -> Inferred:
    """The contract every sample satisfies; ReplayGateError when they share no tool call."""
    sequences = [tuple(name for name, _ in sample.calls) for sample in samples]
    names = _stable_calls(sequences)
    if not names:
        raise ReplayGateError("the recordings have no tool call in common: nothing to infer")
    calls = tuple(
        CallRule(name, _rules([_nth_call(s, name, nth) for s in samples]))
        for name, nth in _numbered(names)
    )
    tool = names[0] if len(names) == 1 else "multi_tool_call"
    strict = len(names) > 1 and len(samples) > 1 and len(set(sequences)) == 1
    return Inferred(tool, strict, calls, len(samples))


def _stable_calls(sequences: Sequence[tuple[str, ...]]) -> list[str]:
    """The calls of every sample (each name as often as its fewest), in the first one's order."""
    fewest = Counter(sequences[0])
    for sequence in sequences[1:]:
        fewest &= Counter(sequence)
    names = []
    for name in sequences[0]:
        if fewest[name]:
            fewest[name] -= 1
            names.append(name)
    return names


def _numbered(names: Sequence[str]) -> list[tuple[str, int]]:
    seen: Counter[str] = Counter()
    numbered = []
    for name in names:
        numbered.append((name, seen[name]))
        seen[name] += 1
    return numbered


def _nth_call(sample: Sample, name: str, nth: int) -> Mapping[str, Any]:
    return [args for called, args in sample.calls if called == name][nth]


def _rules(arguments: Sequence[Mapping[str, Any]]) -> tuple[Rule, ...]:
    values: dict[str, list[Any]] = {}
    for args in arguments:
        _collect(args, "$", values)
    rules = (_rule(path, found, len(arguments)) for path, found in values.items())
    return tuple(rule for rule in rules if rule is not None)


def _collect(obj: Mapping[str, Any], prefix: str, values: dict[str, list[Any]]) -> None:
    """Every value under ``obj`` by JSONPath; keys no simple path can name are left out."""
    for key, value in obj.items():
        step = _step(key)
        if step is None:
            continue
        path = prefix + step
        values.setdefault(path, []).append(value)
        if isinstance(value, Mapping):
            _collect(value, path, values)


def _step(key: str) -> str | None:
    if _NAME.fullmatch(key) and key not in _RESERVED:
        return f".{key}"
    return None if "'" in key or "\\" in key else f"['{key}']"


def _rule(path: str, found: list[Any], samples: int) -> Rule | None:
    ops: dict[str, Any] = {"exists": True} if len(found) == samples else {"optional": True}
    kinds = {_type(value) for value in found}
    if kinds == {"integer", "number"}:
        kinds = {"number"}
    if len(kinds) == 1:
        kind = kinds.pop()
        ops["type"] = kind
        ops.update(_bounds(kind, found))
    if list(ops) == ["optional"]:
        return None  # present in some samples, with no type in common: nothing to say
    return Rule(path, ops, len(found))


def _bounds(kind: str, found: list[Any]) -> dict[str, Any]:
    if kind == "string" and any(REDACTED in value for value in found):
        return {}  # a secret's stand-in: its text and length are not the live value's
    if kind in _SCALARS and _repeats(found):
        return {"one_of": list(dict.fromkeys(found))}
    if len(found) < 2:  # one value is no range
        return {}
    if kind in ("integer", "number"):
        return {"gte": min(found), "lte": max(found)}
    if kind in ("string", "array"):
        lengths = [len(value) for value in found]
        ops: dict[str, Any] = {"length_gte": min(lengths), "length_lte": max(lengths)}
        return ops | _items(found) if kind == "array" else ops
    return {}


def _repeats(found: list[Any]) -> bool:
    """Every value was seen at least twice (True and 1 are different values)."""
    counts = Counter((type(value), value) for value in found)
    return len(found) >= 2 and min(counts.values()) >= 2


def _items(arrays: list[Any]) -> dict[str, Any]:
    kinds = {_type(item) for array in arrays for item in array}
    if kinds == {"integer", "number"}:
        kinds = {"number"}
    return {"each": {"type": kinds.pop()}} if len(kinds) == 1 else {}


def _type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "null" if value is None else "object"
