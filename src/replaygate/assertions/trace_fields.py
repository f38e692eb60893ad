"""Fields of trace assertions: each checked and prepared once, at load (ValueError says why)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from replaygate.assertions.trace_match import compile_args, located
from replaygate.assertions.values import is_number, short

Spec = Mapping[str, Any]  # an assertion's prepared fields


def text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string, got {short(value)}")
    return value


def texts(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a list of strings, got {short(value)}")
    return tuple(text(item, f"{what}[{index}]") for index, item in enumerate(value))


def count(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what} must be an integer, 0 or more, got {short(value)}")
    return value


def positive(value: Any, what: str) -> int:
    if count(value, what) == 0:
        raise ValueError(f"{what} must be an integer, 1 or more, got 0")
    return int(value)


def amount(value: Any, what: str) -> float:
    if not is_number(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a number above 0, got {short(value)}")
    return float(value)


def step(value: Any, what: str) -> Spec:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be a mapping with 'tool', got {short(value)}")
    unknown = [key for key in value if key not in _STEP_FIELDS]
    if unknown:
        raise ValueError(f"{what}: unknown key {short(unknown[0])} (use tool, args_match, capture)")
    if "tool" not in value:
        raise ValueError(f"{what}: 'tool' is required")
    prepared = {}
    for key, item in value.items():
        try:
            prepared[key] = _STEP_FIELDS[key](item, f"{what}.{key}")
        except ValueError as exc:
            raise located(key, exc) from None
    return prepared


def steps(value: Any, what: str) -> tuple[Spec, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{what} must be a non-empty list of steps, got {short(value)}")
    found = []
    for index, item in enumerate(value):
        try:
            found.append(step(item, f"{what}[{index}]"))
        except ValueError as exc:
            raise located(index, exc) from None
    return tuple(found)


_STEP_FIELDS: dict[str, Callable[[Any, str], Any]] = {
    "tool": text,
    "args_match": compile_args,
    "capture": texts,
}
