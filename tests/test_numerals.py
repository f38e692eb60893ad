"""Numbers in ASCII digits: a count of more digits than int() converts is refused, not raised."""

from __future__ import annotations

import sys

import pytest

from replaygate.core.numerals import retry_after_seconds, whole_number, whole_or_none

LIMIT = sys.get_int_max_str_digits()  # 0: none
TOO_LONG = "9" * (LIMIT + 1)
pytestmark = pytest.mark.skipif(LIMIT == 0, reason="int() converts any number of digits here")


def test_a_count_of_more_digits_than_int_converts_is_no_count() -> None:
    assert whole_or_none(TOO_LONG) is None
    assert retry_after_seconds(TOO_LONG, 0.0) is None
    with pytest.raises(ValueError, match=r"^expected a whole number of at most \d+ digits$"):
        whole_number(TOO_LONG)


def test_leading_zeros_do_not_count_against_the_digit_limit() -> None:
    assert whole_or_none("0" * 5000 + "7") == 7


@pytest.mark.parametrize(
    "date",
    [
        "Jan 1 99999999999 0:0:0",
        "Thu, 26 Nov 18446744073709551616 10:00:30 GMT",
        "Thu, 1 Jan 2026 0:0:0 +99999999999999999999",
    ],
)
def test_a_retry_after_date_too_large_for_a_datetime_counts_as_absent(date: str) -> None:
    assert retry_after_seconds(date, 0.0) is None  # OverflowError, a traceback, before
