"""Pairing expected calls with actual calls."""

from __future__ import annotations

import pytest

from replaygate.engine.matching import match_calls


def _fits(pairs: set[tuple[int, int]]):  # type: ignore[no-untyped-def]
    return lambda i, j: (i, j) in pairs


def test_any_order_finds_the_crossed_pairing_greedy_would_miss() -> None:
    # expected 0 fits both actual calls, expected 1 only the first: greedy first-fit
    # would give actual 0 to expected 0 and leave expected 1 unmatched.
    holds = _fits({(0, 0), (0, 1), (1, 0)})
    assert match_calls(["search", "search"], ["search", "search"], holds, strict_order=False) == {
        0: 1,
        1: 0,
    }


def test_any_order_requires_equal_names() -> None:
    assert match_calls(["a"], ["b"], lambda i, j: True, strict_order=False) == {}


def test_strict_order_is_an_in_order_subsequence_with_calls_between() -> None:
    pairs = match_calls(["a", "b"], ["a", "x", "b"], lambda i, j: True, strict_order=True)
    assert pairs == {0: 0, 1: 2}


def test_strict_order_reversed_calls_match_only_one() -> None:
    pairs = match_calls(["a", "b"], ["b", "a"], lambda i, j: True, strict_order=True)
    assert len(pairs) == 1


def test_strict_order_skips_a_call_whose_invariants_fail() -> None:
    holds = _fits({(0, 1), (1, 2)})
    pairs = match_calls(["a", "b"], ["a", "a", "b"], holds, strict_order=True)
    assert pairs == {0: 1, 1: 2}


@pytest.mark.parametrize("strict", [True, False])
def test_no_calls_no_pairs(strict: bool) -> None:
    assert match_calls(["a"], [], lambda i, j: True, strict_order=strict) == {}
