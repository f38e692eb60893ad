"""The wording shared by every report: values as humans read them."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import strategies as st

from replaygate.report.grammar import value_text
from sizes import sized

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@sized(100, JSON_VALUES)
def test_a_value_is_written_as_json_dumps_writes_it(value: Any) -> None:
    """One shared encoder, the same text as a call of json.dumps: non-ASCII kept, keys in
    their order, NaN and infinities as JavaScript names."""
    assert value_text(value) == json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("value", [{1j: 2}, {(1,): 2}, b"x", {1, 2}])
def test_a_value_json_cannot_write_is_its_repr(value: Any) -> None:
    assert value_text(value) == repr(value)


def test_non_ascii_and_nan_are_written_as_they_are() -> None:
    assert value_text({"é": [math.nan, "ü"]}) == '{"é": [NaN, "ü"]}'
