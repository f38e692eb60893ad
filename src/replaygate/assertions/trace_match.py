"""Matching pieces of trace assertions: patterns, args_match, and the rules we are stricter by."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, cast

import regex

from replaygate.assertions import operators
from replaygate.assertions.jsonpath import CompiledPath, PathTooBroad, compile_path
from replaygate.assertions.operators import OPERATORS, CheckError
from replaygate.assertions.values import non_json, short, strict_equal, unwrap


class FieldError(ValueError):
    """A bad value inside a field; ``at`` leads from the field to it (keys and indexes)."""

    def __init__(self, message: str, at: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.at = at


def located(at: str | int, exc: ValueError) -> FieldError:
    """``exc`` as a FieldError one step further from the field's root."""
    return FieldError(str(exc), (at, *getattr(exc, "at", ())))


class Rule(StrEnum):
    """Where replaygate's verdict is deliberately stricter than a peer tool's (docs/traces.md)."""

    ABSENT_ARGUMENT = "absent_argument"
    INLINE_FLAGS = "inline_flags"
    JSON_VALUES = "json_values"
    JSONPATH_KEYS = "jsonpath_keys"
    PATH_FIELDS = "path_fields"
    TILDE = "tilde"
    WINDOWS_PATHS = "windows_paths"
    RELATIVE_ALLOW = "relative_allow_outside"
    TURN_COUNT = "turn_count"
    TOKEN_COUNT = "token_count"
    MAX_TURNS = "max_turns_overrun"
    UNANSWERED_COUNT = "unanswered_count"
    POINTER_KEYS = "pointer_keys"


RULE_TEXT = {
    Rule.ABSENT_ARGUMENT: "a missing argument is absent, not the empty string",
    Rule.INLINE_FLAGS: "inline regex flags mean what they say",
    Rule.JSON_VALUES: "non-string arguments are compared as JSON",
    Rule.JSONPATH_KEYS: "args_match keys starting with $ are JSONPath",
    Rule.PATH_FIELDS: "every tool with a path field is checked",
    Rule.TILDE: "~ in a tool input is the home directory, outside the sandbox",
    Rule.WINDOWS_PATHS: "backslashes separate path steps and C:\\ starts an absolute path",
    Rule.RELATIVE_ALLOW: "relative allow_outside entries resolve against the sandbox",
    Rule.TURN_COUNT: "the turn count is the larger of the recorded and the counted one",
    Rule.TOKEN_COUNT: "the token total is the larger of the recorded and the counted one",
    Rule.MAX_TURNS: "running into max_turns fails the run",
    Rule.POINTER_KEYS: "args_match keys like /a/b (JSON Pointer) or a.b (dot path) are paths",
    Rule.UNANSWERED_COUNT: (
        "unanswered questions are counted per question, at least as many as recorded"
    ),
}

# Rules that only ever turn a pass into a failure, and the one that only turns a failure into a
# pass; the others change what matches, which can go either way.
FAILING_RULES = frozenset(
    {
        Rule.PATH_FIELDS, Rule.TILDE, Rule.WINDOWS_PATHS, Rule.TURN_COUNT, Rule.TOKEN_COUNT,
        Rule.MAX_TURNS, Rule.UNANSWERED_COUNT,
    }
)  # fmt: skip
PASSING_RULES = frozenset({Rule.RELATIVE_ALLOW})

# A flag group other than a leading (?i), (?m) or (?s): ai-tester drops or inverts it.
_FLAG_GROUP = re.compile(r"\(\?([a-zA-Z-]+)[:)]")
_INDEX = re.compile(r"0|[1-9][0-9]*")  # an array index in a JSON Pointer: no sign, no leading 0
_BAD_ESCAPE = re.compile(r"~(?![01])")


def compile_pattern(text: Any, what: str) -> regex.Pattern[str]:
    """A regex compiled once at load (Python ``regex`` syntax); ValueError says why not.

    The regex operator's own preparation: its size is judged before compiling, since a
    counted repeat is copied at compile time (``a{10**9}``).
    """
    if not isinstance(text, str) or not text:
        raise ValueError(f"{what} must be a non-empty string (a regex), got {short(text)}")
    try:
        return cast("regex.Pattern[str]", OPERATORS["regex"].prepare(text))
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None


def flags_differ(pattern: regex.Pattern[str]) -> bool:
    """Whether ai-tester would read this pattern's inline flags differently."""
    for found in _FLAG_GROUP.finditer(pattern.pattern):
        if found.start() > 0 or not set(found.group(1)) <= set("ims"):
            return True
    return False


def search(pattern: regex.Pattern[str], text: str) -> bool:
    try:
        return operators.search(pattern, text) is not None
    except TimeoutError as exc:
        raise CheckError(operators.timed_out(pattern, text, exc)) from None


def json_text(value: Any) -> str:
    """A non-string argument as JSON text: ``{"b":2}``, ``true``, ``1.0``."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class ArgMatch:
    """One ``args_match`` pair: a key (a name, a JSONPath, or the Rust tool's JSON Pointer or
    dot path as ``steps``) and a regex, or a JSON value to equal."""

    key: str
    path: CompiledPath | None
    pattern: regex.Pattern[str] | None
    value: Any = None
    steps: tuple[str, ...] | None = None

    def values(self, arguments: Mapping[str, Any] | None) -> list[Any]:
        if arguments is None:
            return []
        if self.steps is not None:
            return walk_steps(arguments, self.steps)
        if self.path is None:
            return [arguments[self.key]] if self.key in arguments else []
        try:
            return self.path.find(arguments)
        except PathTooBroad as exc:
            raise CheckError(f"args_match {self.key}: {exc}") from None

    def holds(self, arguments: Mapping[str, Any] | None, rules: set[Rule]) -> bool:
        """Whether some value at the key matches; notes the stricter rules the answer used."""
        found = self.values(arguments)
        if self.path is not None:
            rules.add(Rule.JSONPATH_KEYS)
        if self.steps is not None:
            rules.add(Rule.POINTER_KEYS)
        if self.pattern is not None and flags_differ(self.pattern):
            rules.add(Rule.INLINE_FLAGS)
        if not found and self.pattern is not None and search(self.pattern, ""):
            rules.add(Rule.ABSENT_ARGUMENT)
        return any(self._one(value, rules) for value in found)

    def _one(self, value: Any, rules: set[Rule]) -> bool:
        if self.pattern is None:
            return strict_equal(value, self.value)
        if isinstance(value, str):
            return search(self.pattern, value)
        rules.add(Rule.JSON_VALUES)
        return search(self.pattern, json_text(value))

    def describe(self) -> str:
        shown = self.pattern.pattern if self.pattern is not None else json_text(self.value)
        return f"{self.key}={shown}"


def walk_steps(document: Any, steps: tuple[str, ...]) -> list[Any]:
    """The value at a JSON Pointer's or dot path's steps: a step is a member name, or on an
    array a decimal index."""
    node = document
    for step in steps:
        if isinstance(node, Mapping) and step in node:
            node = node[step]
        elif isinstance(node, list) and _INDEX.fullmatch(step) and int(step) < len(node):
            node = node[int(step)]
        else:
            return []
    return [unwrap(node)]


def key_steps(key: str, what: str) -> tuple[str, ...] | None:
    """A JSON Pointer (``/opts/force``) or dot path (``opts.force``) key as its steps; None for
    an argument name. A name holding a dot is written ``$['opts.force']``."""
    if key.startswith("/"):
        if _BAD_ESCAPE.search(key):
            raise ValueError(f"{what}.{key}: '~' in a JSON Pointer must be ~0 or ~1")
        return tuple(s.replace("~1", "/").replace("~0", "~") for s in key[1:].split("/"))
    if "." not in key:
        return None
    steps = tuple(key.split("."))
    if not all(steps):
        message = f"{what}.{key}: a dot path has an empty step (for a name with dots, "
        raise ValueError(message + f"write $['{key}'])")
    return steps


def compile_args(raw: Any, what: str) -> tuple[ArgMatch, ...]:
    """``args_match``: keys are argument names or JSONPath ($...); a string value is a regex,
    any other value is JSON that the argument must equal."""
    if not isinstance(raw, Mapping) or not raw:
        raise ValueError(f"{what} must be a non-empty mapping of argument to regex")
    found = []
    for key, value in raw.items():
        try:
            found.append(_arg(key, value, what))
        except ValueError as exc:
            raise located(key, exc) from None
    return tuple(found)


def _arg(key: Any, value: Any, what: str) -> ArgMatch:
    if not isinstance(key, str) or not key:
        raise ValueError(f"{what}: keys must be argument names, got {short(key)}")
    path, steps = None, None
    if key.startswith("$"):
        try:
            path = compile_path(key)
        except ValueError as exc:
            raise ValueError(f"{what}.{key}: {exc}") from None
    else:
        steps = key_steps(key, what)
    if isinstance(value, str):
        return ArgMatch(key, path, compile_pattern(value, f"{what}.{key}"), steps=steps)
    bad = non_json(value)
    if bad is not None:
        raise ValueError(f"{what}.{key} must be a regex or JSON data, got {bad}: quote it")
    return ArgMatch(key, path, None, value, steps)


def args_hold(
    matches: tuple[ArgMatch, ...], arguments: Mapping[str, Any] | None, rules: set[Rule]
) -> bool:
    # every pair is evaluated (no short cut), so the rules each pair relied on are all noted
    results = [match.holds(arguments, rules) for match in matches]
    return all(results)
