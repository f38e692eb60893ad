"""The assertion operators: one registry of small pure functions that explain a miss."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import regex

from replaygate.assertions import composite
from replaygate.assertions.mismatch import Env, Outcome
from replaygate.assertions.regex_size import expanded_size
from replaygate.assertions.regex_time import BudgetSpent, timed_search, untimed_up_to
from replaygate.assertions.values import is_number, non_json, short, strict_equal, suggestion

REGEX_TIMEOUT_S = 0.25  # per search; a longer one is an "error" mismatch
MAX_REGEX_UNITS = 10_000  # `regex` expands counted repeats at compile time (a{10**9}: 260 GB)


class CheckError(Exception):
    """A check that could not be decided (a regex ran too long, an unset variable)."""


class Sees(StrEnum):
    """What an operator's check is given."""

    EACH = "each"  # every match in turn, all must hold; no match is path_not_found
    COLLECTION = "collection"  # the list of matches on a collection path, else as EACH
    MATCHES = "matches"  # the list of matches on any path, even an empty one (exists)


@dataclass(frozen=True, slots=True)
class Operator:
    """One operator: ``prepare`` validates the contract value, ``check`` explains a miss.

    ``check(actual, prepared, env)`` returns None when the value passes, else a message;
    it raises CheckError when it cannot decide. A ``nested`` operator (a composite) takes
    assertions: ``prepare`` returns their mappings, which assertion.py compiles, and
    ``check`` gets them compiled and returns their mismatches.
    """

    name: str
    sees: Sees
    prepare: Callable[[Any], Any]
    check: Callable[[Any, Any, Env], Outcome]
    nested: bool = False


# --- prepare: validate a contract value (ValueError with a one-line message) -------------


def _data(name: str) -> Callable[[Any], Any]:
    def prepare(value: Any) -> Any:
        bad = non_json(value)
        if bad is not None:
            raise ValueError(f"{name} must be JSON data, got {bad}: quote it")
        return value

    return prepare


def _require(name: str, what: str, ok: Callable[[Any], bool]) -> Callable[[Any], Any]:
    def prepare(value: Any) -> Any:
        if not ok(value):
            raise ValueError(f"{name} must be {what}, got {short(value)}")
        return value

    return prepare


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_limit(value: Any) -> bool:
    return is_number(value) and math.isfinite(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_env_name(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) is not None


def _type_name(value: Any) -> Any:
    if not isinstance(value, str) or value not in _TYPES:
        names = ", ".join(_TYPES)
        hint = suggestion(value, _TYPES)
        raise ValueError(f"type must be one of {names}, got {short(value)}{hint}")
    return value


class Options(list[Any]):
    """one_of's options, their strings also in a set (most values checked are strings), and
    the list as given, which a failure shows as before (short() reads a list subclass, as
    the YAML reader's lists are, by its repr)."""

    __slots__ = ("given", "strings")

    def __init__(self, options: list[Any]) -> None:
        super().__init__(options)
        self.given = options
        self.strings = frozenset(option for option in options if isinstance(option, str))


def _options(value: Any) -> Any:
    if not isinstance(value, list) or not value:
        raise ValueError(f"one_of must be a non-empty list, got {short(value)}")
    return Options(_data("one_of")(value))


def _pattern(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"regex must be a string, got {short(value)}")
    return _sized_regex(value)


# Contracts repeat their patterns, and sizing one parses it (most of compiling a contract);
# a refused pattern raises, which lru_cache never keeps, so its message is made afresh.
@functools.lru_cache(maxsize=1024)
def _sized_regex(value: str) -> regex.Pattern[str]:
    try:
        units = expanded_size(value)
        compiled = regex.compile(value) if units <= MAX_REGEX_UNITS else None
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        reason = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(exc))
        raise ValueError(f"invalid regex {short(value)}: {reason}") from None
    if compiled is None:
        limit = f"{units} elements once repeats are expanded, limit {MAX_REGEX_UNITS}"
        raise ValueError(f"regex {short(value)} is too large: {limit}")
    return compiled


# --- check: (actual, prepared, env) -> None or a message, actual value first -------------

_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": is_number,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),  # 1.0 is not
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _equals(actual: Any, expected: Any, env: Env) -> str | None:
    if strict_equal(actual, expected):
        return None
    return f"{short(actual)} is not equal to {short(expected)}"


def _exists(matches: list[Any], wanted: bool, env: Env) -> str | None:
    if wanted and not matches:
        return "path not found"
    if wanted or not matches:
        return None
    if len(matches) == 1:
        return f"{short(matches[0])} is present, expected no value"
    return f"{len(matches)} values are present, expected none"


def _type(actual: Any, name: str, env: Env) -> str | None:
    return None if _TYPES[name](actual) else f"{short(actual)} is not of type {name!r}"


def _contains(actual: Any, needle: Any, env: Env) -> str | None:
    if isinstance(actual, str):
        found = isinstance(needle, str) and needle in actual
    elif isinstance(actual, list):
        found = any(strict_equal(item, needle) for item in actual)
    elif isinstance(actual, dict):
        found = isinstance(needle, dict) and all(
            key in actual and strict_equal(actual[key], value) for key, value in needle.items()
        )
    else:
        return f"{short(actual)} is not a string, array or object"
    return None if found else f"{short(actual)} does not contain {short(needle)}"


def _equals_env(actual: Any, name: str, env: Env) -> str | None:
    if name not in env:
        raise CheckError(f"environment variable {name} is not set")
    if isinstance(actual, str) and actual == env[name]:
        return None
    return f"{short(actual)} is not equal to environment variable {name}"  # never its value


def _one_of(actual: Any, options: Options, env: Env) -> str | None:
    if type(actual) is str and actual in options.strings:  # equal strings: strict_equal's yes
        return None
    if any(strict_equal(actual, option) for option in options):
        return None
    return f"{short(actual)} is not one of {short(options.given)}"


def _regex(actual: Any, pattern: regex.Pattern[str], env: Env) -> str | None:
    if not isinstance(actual, str):
        return f"{short(actual)} is not a string"
    try:
        found = search(pattern, actual)
    except TimeoutError as exc:
        raise CheckError(timed_out(pattern, actual, exc)) from None
    return None if found else f"{short(actual)} does not match {short(pattern.pattern)}"


# an int: ``flags & RegexFlag`` would run the enum's Python __rand__ on every search
_OTHER_SYNTAX = int(
    regex.VERBOSE | regex.FULLCASE | regex.V1 | regex.POSIX | regex.BESTMATCH | regex.ENHANCEMATCH
)


def search(pattern: regex.Pattern[str], text: str) -> regex.Match[str] | None:
    """``pattern`` searched in ``text`` within REGEX_TIMEOUT_S of CPU time (else TimeoutError);
    the bound is left out where regex_time shows the search ends far sooner (its reading of
    the pattern's text assumes none of the flags that change the syntax)."""
    if not pattern.flags & _OTHER_SYNTAX and len(text) <= untimed_up_to(pattern.pattern):
        return pattern.search(text)
    return timed_search(pattern, text, REGEX_TIMEOUT_S)


def timed_out(pattern: regex.Pattern[str], text: str, exc: TimeoutError) -> str:
    """Why a search of ``pattern`` in ``text`` was stopped: its own bound, or the case's budget."""
    said = f"regex {short(pattern.pattern)} timed out on a {len(text)}-character string"
    return f"{said}: {exc}" if isinstance(exc, BudgetSpent) else said


def _gte(actual: Any, limit: float, env: Env) -> str | None:
    if not is_number(actual):
        return f"{short(actual)} is not a number"
    return None if actual >= limit else f"{short(actual)} is less than {limit!r}"


def _lte(actual: Any, limit: float, env: Env) -> str | None:
    if not is_number(actual):
        return f"{short(actual)} is not a number"
    return None if actual <= limit else f"{short(actual)} is greater than {limit!r}"


def _length_gte(actual: Any, limit: int, env: Env) -> str | None:
    if not isinstance(actual, str | list | dict):
        return f"{short(actual)} has no length"
    size = len(actual)
    return None if size >= limit else f"{short(actual)} has length {size}, less than {limit}"


def _length_lte(actual: Any, limit: int, env: Env) -> str | None:
    if not isinstance(actual, str | list | dict):
        return f"{short(actual)} has no length"
    size = len(actual)
    return None if size <= limit else f"{short(actual)} has length {size}, more than {limit}"


_ENV = "the name of an environment variable"
_EACH, _LIST = Sees.EACH, Sees.COLLECTION
_COUNT = "a non-negative integer"

_nested = composite.nested_list
OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in (
        Operator("equals", _EACH, _data("equals"), _equals),
        Operator("exists", Sees.MATCHES, _require("exists", "true or false", _is_bool), _exists),
        Operator("type", _EACH, _type_name, _type),
        Operator("contains", _LIST, _data("contains"), _contains),
        Operator("equals_env", _EACH, _require("equals_env", _ENV, _is_env_name), _equals_env),
        Operator("one_of", _EACH, _options, _one_of),
        Operator("regex", _EACH, _pattern, _regex),
        Operator("gte", _EACH, _require("gte", "a number", _is_limit), _gte),
        Operator("lte", _EACH, _require("lte", "a number", _is_limit), _lte),
        Operator("length_gte", _LIST, _require("length_gte", _COUNT, _is_count), _length_gte),
        Operator("length_lte", _LIST, _require("length_lte", _COUNT, _is_count), _length_lte),
        # composites: their values are nested assertions (composite.py)
        Operator("not", _EACH, _nested("not", single=True), composite.not_, nested=True),
        Operator("any_of", _EACH, _nested("any_of"), composite.any_of, nested=True),
        Operator("all_of", _EACH, _nested("all_of"), composite.all_of, nested=True),
        Operator("each", _LIST, _nested("each", single=True), composite.each, nested=True),
        Operator(
            "contains_item",
            _LIST,
            _nested("contains_item", single=True),
            composite.contains_item,
            nested=True,
        ),
        Operator("sequence", _LIST, _nested("sequence"), composite.sequence, nested=True),
    )
}

# Keys of an assertion that are not operators: `optional: true` skips the operators
# when the path is absent (a present value must still satisfy them).
MODIFIERS = frozenset({"path", "optional"})
