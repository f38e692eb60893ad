"""Numbers written in ASCII digits, from inputs, options and HTTP headers (Retry-After).

``str.isdigit()``, ``int()`` and ``float()`` all accept other scripts' digits (U+0663,
U+FF13), and ``isdigit()`` even superscripts ('²'), which ``int()`` then refuses.
"""

from __future__ import annotations

import re
import sys

_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


def whole_number(text: str) -> int:
    """``text`` as a count (0 or more); ValueError saying what was expected."""
    number = whole_or_none(text)
    if number is None and _WHOLE.fullmatch(text):
        raise ValueError(
            f"expected a whole number of at most {sys.get_int_max_str_digits()} digits"
        )
    if number is None:
        raise ValueError("expected a whole number")
    return number


def whole_or_none(text: str) -> int | None:
    """``text`` as a count (0 or more), or None when it is not one (an HTTP header's value),
    nor when it has more digits than ``int()`` converts (it would raise its own ValueError)."""
    if not _WHOLE.fullmatch(text):
        return None
    digits = text.lstrip("0") or "0"
    limit = sys.get_int_max_str_digits()  # 0: no limit
    return None if 0 < limit < len(digits) else int(digits)


def decimal_number(text: str) -> float:
    """``text`` as a number (0 or more) in decimal notation: digits, maybe a point and more."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError("expected a number in decimal notation")
    return float(text)


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """A Retry-After header's wait from ``now`` (seconds since the epoch): a whole number of
    seconds or an HTTP date; None when absent or unreadable."""
    from datetime import UTC  # here: the command line's start-up imports this module
    from email.utils import parsedate_to_datetime

    text = (value or "").strip()
    seconds = whole_or_none(text)
    if seconds is not None:
        return float(seconds)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, OverflowError):  # OverflowError: a year of 12 digits
        return None
    # A date without a zone ("-0000") is in UTC (RFC 5322), not in this machine's zone.
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)
