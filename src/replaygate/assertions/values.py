"""JSON values: strict equality, type checks and short reprs for messages."""

from __future__ import annotations

import datetime
import difflib
import itertools
import json
import math
import reprlib
from collections.abc import Iterable
from typing import Any

MAX_REPR = 200


class _Repr(reprlib.Repr):
    def repr_dict(self, x: dict[Any, Any], level: int) -> str:  # keys in document order
        if not x or level <= 0:
            return "{...}" if x else "{}"
        pairs = itertools.islice(x.items(), self.maxdict)
        items = [f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}" for k, v in pairs]
        return "{" + ", ".join(items + ["..."] * (len(x) > self.maxdict)) + "}"

    repr_EmbeddedJson = repr_dict  # tool-call arguments nested in a reported value


_REPR = _Repr()
_REPR.maxstring = _REPR.maxother = MAX_REPR
_REPR.maxlist = _REPR.maxdict = 20
_REPR.maxlevel = 6


def short(value: Any) -> str:
    """repr() cut to about MAX_REPR characters, so a 1 MB string does not flood a report."""
    text = _REPR.repr(value)
    return text if len(text) <= MAX_REPR else text[: MAX_REPR - 3] + "..."


def suggestion(word: object, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest choice, or ''."""
    close = difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def yaml_reading(value: Any) -> str:
    """What YAML read a plain scalar as, for a hint: ``false``, ``the number 3.1``, ``a date``."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, datetime.datetime):
        return "a date and time"
    if isinstance(value, datetime.date):
        return "a date"
    if is_number(value):
        return f"the number {value!r}"
    return repr(value)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def strict_equal(left: Any, right: Any) -> bool:
    """JSON equality: True is not 1, 1 equals 1.0, arrays and objects compared deeply."""
    pairs = [(left, right)]
    while pairs:
        a, b = pairs.pop()
        if isinstance(a, bool) or isinstance(b, bool):
            if a is not b:
                return False
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return False
            pairs.extend(zip(a, b, strict=True))
        elif isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                return False
            pairs.extend((value, b[key]) for key, value in a.items())
        elif isinstance(a, list | dict) or isinstance(b, list | dict) or a != b:
            return False
    return True


def non_json(value: Any) -> str | None:
    """repr of the first part of ``value`` that is not JSON data (a YAML date, NaN), or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            bad_keys = [key for key in item if not isinstance(key, str)]
            if bad_keys:
                return f"key {short(bad_keys[0])}"
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif not _json_scalar(item):
            return short(item)
    return None


def _json_scalar(item: Any) -> bool:
    if isinstance(item, float):
        return math.isfinite(item)
    return item is None or isinstance(item, str | int)


class EmbeddedJson(dict[str, Any]):
    """A JSON object parsed from a JSON string (tool-call arguments).

    JSONPath traversal descends into it as an object, while a path that ends on
    it sees the JSON text (``raw``): arguments are a JSON string in results.
    Arguments recorded as an object get their text only when someone asks.
    """

    __slots__ = ("_raw",)

    def __init__(self, parsed: dict[str, Any], raw: str | None = None) -> None:
        super().__init__(parsed)
        self._raw = raw

    @property
    def raw(self) -> str:
        if self._raw is None:
            self._raw = json.dumps(self, ensure_ascii=False, separators=(",", ":"))
        return self._raw


def unwrap(value: Any) -> Any:
    """The value a path that ends on ``value`` reports (the raw JSON text for arguments)."""
    if isinstance(value, EmbeddedJson):
        return value.raw
    return value
