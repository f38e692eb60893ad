"""Trace assertions compiled at load: fields checked, regexes and paths compiled, lines kept."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replaygate.assertions.trace import Trace
from replaygate.assertions.trace_assertions import COMMON_FIELDS, KEYWORDS, Verdict
from replaygate.assertions.trace_fields import Spec
from replaygate.assertions.values import is_number, short, suggestion
from replaygate.core.errors import PackError


@dataclass(frozen=True, slots=True)
class TraceAssertion:
    id: str
    type: str  # a KEYWORDS name
    spec: Spec
    weight: float
    locator: str  # "trace_assertions[2]"; failures append ":<type>"
    file: str
    line: int

    def evaluate(self, trace: Trace) -> Verdict:
        """Raises CheckError when it cannot decide (a regex ran out of time)."""
        return KEYWORDS[self.type].check(trace, self.spec)


@dataclass(frozen=True, slots=True)
class NotEvaluated:
    """A criterion that needs a judge (an LLM, a sandbox): reported, never passed."""

    id: str
    type: str
    reason: str
    file: str
    line: int


def _lines(raw: Any) -> Mapping[Any, int]:
    return getattr(raw, "key_lines", {})


def compile_trace_assertion(
    raw: Any, *, locator: str, file: str, line: int, types: Mapping[str, str] | None = None
) -> TraceAssertion:
    """One assertion mapping (id, type, weight, the type's fields); PackError on the key's line.

    ``types`` renames a peer's type names to ours (ai-tester's are ours already).
    """
    if not isinstance(raw, Mapping):
        raise PackError(file, line, f"{locator}: expected a mapping with 'id' and 'type'")
    at = _lines(raw)
    name = raw.get("type")
    name = (types or {}).get(name, name) if isinstance(name, str) else name
    if name not in KEYWORDS:
        hint = suggestion(name, KEYWORDS)
        known = ", ".join(KEYWORDS)
        message = f"{locator}.type: {short(name)} is not a trace assertion{hint}; use {known}"
        raise PackError(file, at.get("type", line), message)
    keyword = KEYWORDS[name]
    spec = {
        key: _field(keyword.fields, key, value, f"{locator}.{key}", file, at.get(key, line))
        for key, value in raw.items()
        if key not in COMMON_FIELDS
    }
    missing = sorted(keyword.required - spec.keys())
    if missing:
        raise PackError(file, line, f"{locator}: {name} needs '{missing[0]}'")
    if keyword.one_of and len(keyword.one_of & spec.keys()) != 1:
        choices = " or ".join(f"'{key}'" for key in sorted(keyword.one_of))
        raise PackError(file, line, f"{locator}: {name} needs exactly one of {choices}")
    return TraceAssertion(
        _id(raw.get("id"), locator, file, at.get("id", line)),
        name,
        spec,
        _weight(raw.get("weight", 1), locator, file, at.get("weight", line)),
        locator,
        file,
        line,
    )


def _field(fields: Mapping[str, Any], key: Any, value: Any, what: str, file: str, line: int) -> Any:
    if key not in fields:
        hint = suggestion(key, [*fields, *COMMON_FIELDS])
        raise PackError(file, line, f"{what}: unknown key{hint}")
    try:
        return fields[key](value, what)
    except ValueError as exc:
        raise PackError(file, _line_at(value, getattr(exc, "at", ()), line), str(exc)) from None


def _line_at(node: Any, at: tuple[str | int, ...], line: int) -> int:
    """The line of the value ``at`` leads to inside a YAML field (as deep as lines are known)."""
    for part in at:
        lines = getattr(node, "item_lines" if isinstance(part, int) else "key_lines", None)
        known = range(len(lines)) if isinstance(lines, list) else (lines or {})
        if part not in known:
            break
        line, node = lines[part], node[part]  # type: ignore[index]  # known above
    return int(line)


def _id(value: Any, locator: str, file: str, line: int) -> str:
    if not isinstance(value, str) or not value:
        raise PackError(
            file, line, f"{locator}.id: expected a non-empty string, got {short(value)}"
        )
    return value


def _weight(value: Any, locator: str, file: str, line: int) -> float:
    if not is_number(value) or not 0 < value < float("inf"):
        message = f"{locator}.weight: expected a number above 0, got {short(value)}"
        raise PackError(file, line, message)
    return float(value)


def compile_trace_assertions(
    raw_items: Any, prefix: str, file: str, line: int
) -> tuple[TraceAssertion, ...]:
    """A list of assertions; ids must be unique within it."""
    if raw_items is None:
        return ()
    if not isinstance(raw_items, list):
        raise PackError(file, line, f"{prefix}: expected a list of assertions")
    item_lines = getattr(raw_items, "item_lines", [])
    compiled: list[TraceAssertion] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(raw_items):
        at = item_lines[index] if index < len(item_lines) else line
        assertion = compile_trace_assertion(item, locator=f"{prefix}[{index}]", file=file, line=at)
        if assertion.id in seen:
            message = (
                f"duplicate assertion id '{assertion.id}' (first at line {seen[assertion.id]})"
            )
            raise PackError(file, at, message)
        seen[assertion.id] = at
        compiled.append(assertion)
    return tuple(compiled)
