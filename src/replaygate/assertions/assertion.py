"""Compiled assertions (path + operators) and their evaluation against a document."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from replaygate.assertions.jsonpath import CompiledPath, PathTooBroad, compile_path
from replaygate.assertions.mismatch import Env, Located, Mismatch, MismatchKind
from replaygate.assertions.operators import MODIFIERS, OPERATORS, CheckError, Operator, Sees
from replaygate.assertions.values import short, suggestion, yaml_reading
from replaygate.core.errors import PackError

_NONE: Mapping[Any, str] = {}  # no surprises: a mapping or list not read from YAML


@dataclass(frozen=True, slots=True)
class Check:
    """One operator of an assertion, with its prepared expected value."""

    operator: str
    expected: Any  # as written in the contract (reported to users)
    prepared: Any  # what the operator function uses (a compiled regex, a type set, ...)
    line: int
    surprise: Surprise | None = None  # the value was read from a plain scalar YAML reads oddly


@dataclass(frozen=True, slots=True)
class Surprise:
    """How YAML read an operator's value ("the contract's `3.10` was read as the number 3.1;
    quote it"), and the check prepared with the text as written, quoted: a failure that the
    quoted value would pass gets the hint."""

    hint: str
    quoted: Any


@dataclass(frozen=True, slots=True)
class Assertion:
    locator: str  # "assertions.output_invariants[0]"; a check appends ":<operator>"
    path: CompiledPath
    checks: tuple[Check, ...]
    optional: bool
    line: int  # the line of the assertion's "path:" key (of the mapping, when nested)

    def evaluate(self, value: Any, env: Env) -> list[Mismatch]:
        return evaluate_assertion(self, value, env)

    def describe(self) -> str:
        checks = ", ".join(f"{check.operator} {short(check.expected)}" for check in self.checks)
        return checks if self.path.text == "$" else f"{self.path.text}: {checks}"


def compile_assertion(
    raw: Mapping[str, Any],
    *,
    locator: str,
    file: str,
    line: int,
    key_lines: Mapping[str, int],
    nested: bool = False,
) -> Assertion:
    """Validate one assertion mapping and compile its path and operators.

    A ``nested`` assertion (inside a composite operator) has a path relative to the value
    the composite checks, ``$`` when it has none. Raises PackError at the line of the
    offending key (``line`` when it has none).
    """
    found: list[PackError] = []  # every problem of the assertion, each on its line
    for key in raw:
        if key not in OPERATORS and key not in MODIFIERS:
            hint = suggestion(key, [*OPERATORS, *MODIFIERS])
            found.append(
                PackError(file, key_lines.get(key, line), f"unknown operator {key!r}{hint}")
            )
    path_line = key_lines.get("path", line)
    path = _collected(
        found, _compile_path, {"path": "$", **raw} if nested else raw, file, line, path_line
    )
    optional = raw.get("optional", False)
    if not isinstance(optional, bool):
        message = f"optional must be true or false, got {short(optional)}"
        found.append(PackError(file, key_lines.get("optional", line), message))
    checks = tuple(
        _collected(found, _compile_check, key, value, file, key_lines.get(key, line), raw, locator)
        for key, value in raw.items()
        if key in OPERATORS
    )
    if found:
        raise joined(found)
    assert path is not None
    compiled = tuple(check for check in checks if check is not None)
    _check_combination(compiled, optional is True, file, line)
    return Assertion(locator, path, compiled, optional is True, path_line)


T = TypeVar("T")


def _collected(found: list[PackError], step: Callable[..., T], *args: Any) -> T | None:
    """``step(*args)``, or None with its problems added to ``found``."""
    try:
        return step(*args)
    except PackError as exc:
        found.extend(exc.each())
        return None


def joined(found: Sequence[PackError]) -> PackError:
    """One PackError that reports every problem of ``found``, in order."""
    first, *rest = [each for error in found for each in error.each()]
    return PackError(first.file, first.line, first.message, also=tuple(rest))


def _compile_path(raw: Mapping[str, Any], file: str, line: int, path_line: int) -> CompiledPath:
    if "path" not in raw:
        raise PackError(file, line, "assertion has no 'path'")
    text = raw["path"]
    if not isinstance(text, str):
        raise PackError(file, path_line, f"path must be a string, got {short(text)}")
    try:
        return compile_path(text)
    except ValueError as exc:
        raise PackError(file, path_line, str(exc)) from None


def _compile_check(
    name: str, value: Any, file: str, line: int, raw: Mapping[str, Any], locator: str
) -> Check:
    op = OPERATORS[name]
    written = _written(raw, name)
    hint = _hint(written) if written else ""
    try:
        prepared = op.prepare(value)
    except ValueError as exc:
        # a value YAML read as a number, boolean or date: the reading is the whole story
        raise PackError(file, line, f"{name}: {hint}" if hint else str(exc)) from None
    if op.nested:
        prepared = _compile_nested(prepared, f"{locator}:{name}", file, line)
    return Check(name, value, prepared, line, _surprise(name, value, written, hint))


Written = list[tuple[int | None, str, Any]]  # list index (None: the value), text, value read


def _hint(written: Written) -> str:
    return "; ".join(
        f"the contract's `{text}` was read as {yaml_reading(read)}; quote it"
        for _, text, read in written
    )


def _written(raw: Mapping[str, Any], key: str) -> Written:
    """The operator value, or the items of its list, that YAML read surprisingly; the loader
    keeps their text in ``surprises`` beside the mapping or list that holds them."""
    value = raw[key]
    text = getattr(raw, "surprises", _NONE).get(key)
    items = getattr(value, "surprises", _NONE)
    if not text and not items:  # the common case, answered without building lists
        return []
    found: Written = [(None, text, value)] if text else []
    return found + [(index, text, value[index]) for index, text in items.items()]


def _surprise(name: str, value: Any, written: Written, hint: str) -> Surprise | None:
    if not written:
        return None
    quoted = list(value) if isinstance(value, list) else value
    for index, text, _ in written:
        if index is None:
            quoted = text
        else:
            quoted[index] = text
    try:
        return Surprise(hint, OPERATORS[name].prepare(quoted))
    except ValueError:
        return None  # written as text, the value would not be accepted either: no hint


def _compile_nested(items: list[Any], locator: str, file: str, line: int) -> tuple[Assertion, ...]:
    """The nested assertions of a composite, ``<locator>[i]`` each, on their own lines."""
    return tuple(
        compile_assertion(
            item,
            locator=f"{locator}[{index}]",
            file=file,
            line=getattr(item, "line", None) or line,
            key_lines=getattr(item, "key_lines", {}),
            nested=True,
        )
        for index, item in enumerate(items)
    )


def _check_combination(checks: tuple[Check, ...], optional: bool, file: str, line: int) -> None:
    """Refuse assertions that no value could pass, or that say nothing."""
    if not checks:
        raise PackError(file, line, f"assertion has no operator; use {', '.join(OPERATORS)}")
    exists = next((check for check in checks if check.operator == "exists"), None)
    if exists is not None and optional:
        raise PackError(file, exists.line, "optional: true and exists cannot be combined")
    if exists is not None and exists.prepared is False and len(checks) > 1:
        message = "exists: false cannot be combined with other operators"
        raise PackError(file, exists.line, message)


def evaluate_assertion(assertion: Assertion, document: Any, env: Env) -> list[Mismatch]:
    """The mismatches of one assertion against ``document`` (empty when it holds).

    A path that matches nothing fails each operator with a "path_not_found" mismatch of
    its own (exists: true included), except with ``optional: true``, which skips them;
    exists: false passes. An operator that must hold for every match of a collection path
    reports the first match that fails. A path that matches more than MAX_MATCHES values,
    a regex past its time bound and an unset environment variable are "error" mismatches.
    """
    try:
        matches = assertion.path.find(document)
    except PathTooBroad as exc:
        return [_mismatch(assertion, c, "error", str(exc), None) for c in assertion.checks]
    found: list[Mismatch] = []
    for check in assertion.checks:
        op = OPERATORS[check.operator]
        if matches or not assertion.optional:  # exists never comes with optional
            more = _evaluate_check(assertion, check, op, matches, env)
            if op.sees is Sees.COLLECTION and op.nested and assertion.path.is_collection:
                more = _own_paths(assertion, more, document)
            found.extend(more)
    return found


def _own_paths(assertion: Assertion, found: list[Mismatch], document: Any) -> list[Mismatch]:
    """An item of the matches, ``$.calls[*].name[1]``, by its own path: ``$.calls[1].name``."""
    outer = assertion.path.text
    if not any(m.path.startswith(outer + "[") for m in found):
        return found
    located = assertion.path.located(document)
    return [replace(m, path=_item_path(m.path, outer, located)) for m in found]


def _item_path(path: str, outer: str, located: list[str | None]) -> str:
    """``<outer>[i]<rest>`` (the i-th match of a collection path) as the match's own path."""
    match = re.fullmatch(r"\[(\d+)\](.*)", path[len(outer) :], re.DOTALL)
    if not path.startswith(outer) or match is None:
        return path
    index = int(match.group(1))
    own = located[index] if index < len(located) else None
    return path if own is None else own + match.group(2)


def _evaluate_check(
    assertion: Assertion, check: Check, op: Operator, matches: list[Any], env: Env
) -> list[Mismatch]:
    is_collection = assertion.path.is_collection
    if op.sees is Sees.MATCHES or (op.sees is Sees.COLLECTION and is_collection):
        kind: MismatchKind = "value" if matches else "path_not_found"
        found = _run(assertion, check, op, matches, kind, env)
        if not is_collection:  # report the value, not a list of one
            return [replace(m, actual=matches[0] if matches else None) for m in found]
        return found
    if not matches:
        if _holds_when_absent(check):  # not: {equals: x} on no value: there is no x there
            return []
        return [_mismatch(assertion, check, "path_not_found", "path not found", None)]
    for index, value in enumerate(matches):
        found = _run(assertion, check, op, value, "value", env)
        if found and is_collection:
            suffix = f" (match {index + 1} of {len(matches)})"
            return [replace(m, message=m.message + suffix) for m in found]
        if found:
            return found
    return []


def holds_when_absent(assertion: Assertion) -> bool:
    """Whether the assertion holds where its value is absent (the path matched nothing)."""
    return assertion.optional or all(_holds_when_absent(check) for check in assertion.checks)


def _holds_when_absent(check: Check) -> bool:
    """``exists: false``; ``not`` of what fails on an absent value; all_of and any_of of
    what holds on one. Every other operator needs a value."""
    nested = check.prepared
    if check.operator == "exists":
        return check.prepared is False
    if check.operator == "not":
        return not any(holds_when_absent(item) for item in nested)
    if check.operator == "all_of":
        return all(holds_when_absent(item) for item in nested)
    if check.operator == "any_of":
        return any(holds_when_absent(item) for item in nested)
    return False


def _run(
    assertion: Assertion, check: Check, op: Operator, actual: Any, kind: MismatchKind, env: Env
) -> list[Mismatch]:
    try:
        outcome = op.check(actual, check.prepared, env)
    except CheckError as exc:
        return [_mismatch(assertion, check, "error", str(exc), actual)]
    if outcome is None:
        return []
    if isinstance(outcome, str):
        surprise = check.surprise
        if surprise is not None and _passes(op, actual, surprise.quoted, env):
            outcome = f"{outcome}; {surprise.hint}"
        return [_mismatch(assertion, check, kind, outcome, actual)]
    if isinstance(outcome, Located):  # the composite's own failure, on its nested check's line
        return [
            replace(_mismatch(assertion, check, kind, outcome.message, actual), line=outcome.line)
        ]
    outer = assertion.path.text  # nested paths are relative to the value checked here
    return [replace(m, path=outer + m.path[1:]) for m in outcome]


def _passes(op: Operator, actual: Any, prepared: Any, env: Env) -> bool:
    try:
        return op.check(actual, prepared, env) is None
    except CheckError:
        return False


def _mismatch(
    assertion: Assertion, check: Check, kind: MismatchKind, message: str, actual: Any
) -> Mismatch:
    locator = f"{assertion.locator}:{check.operator}"
    return Mismatch(
        kind, check.operator, message, check.expected, actual, check.line, locator,
        assertion.path.text,
    )  # fmt: skip
