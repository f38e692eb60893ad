"""Numbers written in ASCII digits, from inputs, options and HTTP headers.

``str.isdigit()``, ``int()`` and ``float()`` all accept other scripts' digits (U+0663,
U+FF13), and ``isdigit()`` even superscripts ('²'), which ``int()`` then refuses.
"""

from __future__ import annotations

import re

_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


def whole_number(text: str) -> int:
    """``text`` as a count (0 or more); ValueError saying what was expected."""
    number = whole_or_none(text)
    if number is None:
        raise ValueError("expected a whole number")
    return number


def whole_or_none(text: str) -> int | None:
    """``text`` as a count (0 or more), or None when it is not one (an HTTP header's value)."""
    return int(text) if _WHOLE.fullmatch(text) else None


def decimal_number(text: str) -> float:
    """``text`` as a number (0 or more) in decimal notation: digits, maybe a point and more."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError("expected a number in decimal notation")
    return float(text)
