"""Searches without a time bound: only patterns whose backtracking the bound covers, only on
texts short enough, and the same answers as a search with the bound."""

from __future__ import annotations

from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from replaygate.assertions import regex_time
from replaygate.assertions.operators import OPERATORS, REGEX_TIMEOUT_S, CheckError, search
from replaygate.assertions.regex_time import STEPS, untimed_up_to


@pytest.mark.parametrize(
    "pattern",
    [
        "(a+)+$",  # a repeated group: exponential
        "(a|aa)+",
        "(?:ab)*c",
        "(\\w+)\\1",  # a backreference
        "(?=a)b",  # a lookaround
        "(?<!a)b",
        "(?(1)a|b)",
        "(?>a+)b",  # an atomic group: left to the bound, like every group with a repeat
        "a{e<=1}",  # fuzzy matching in the regex module, literal text to re
        "(?:abc){e<=1}",
        "[{]",
        "[{a]",  # a class of two: re keeps it a class (one item becomes a literal)
        "[[:alpha:]]+",  # a POSIX class in the regex module, a class then "]" to re
        "a\\{2}",
        "(?x) a+ ",  # verbose mode
        "(?x: a+ )",
        "\\p{L}+",  # syntax re cannot read
        "(?V1)a",
        "[",
    ],
)
def test_patterns_the_bound_does_not_cover_keep_their_time_bound(pattern: str) -> None:
    assert untimed_up_to(pattern) == -1


@pytest.mark.parametrize(
    ("pattern", "longest"),
    [
        ("^inv_[0-9]+$", 97),
        ("^[0-9]{4}-[0-9]{2}-[0-9]{2}$", 993),
        ("^(foo|bar)[a-z]*$", 75),
        ("a*a*a*a*c", 8),  # polynomial of a high degree: only short texts
        ("", 999),
    ],
)
def test_simple_patterns_search_short_texts_without_a_bound(pattern: str, longest: int) -> None:
    assert untimed_up_to(pattern) == longest


@pytest.mark.parametrize("pattern", ["^inv_[0-9]+$", "^(foo|bar)[a-z]*$", ".*.*x", "a|b|c"])
def test_the_longest_text_is_the_last_under_the_step_budget(pattern: str) -> None:
    regex_time.untimed_up_to.cache_clear()
    longest = untimed_up_to(pattern)
    shape = regex_time._Shape()
    assert regex_time._read(regex_time.sre_parse.parse(pattern), shape)
    size = regex_time.expanded_size(pattern)
    assert (
        regex_time._steps(longest, size, shape)
        <= STEPS
        < regex_time._steps(longest + 1, size, shape)
    )


ELEMENTS = ["a", "b", ".", "[ab]", "[^a]", "\\w", "\\d", "^", "$", "\\b", "(?:a|b)", "(a|ab|b)"]
QUANTIFIERS = ["", "", "*", "+", "?", "*?", "{2}", "{0,3}", "{2,}", "++"]


@st.composite
def simple_patterns(draw: Any) -> str:
    parts = draw(
        st.lists(st.tuples(st.sampled_from(ELEMENTS), st.sampled_from(QUANTIFIERS)), max_size=6)
    )
    # a quantifier after an anchor or a group is not what the bound covers: kept, refused
    return "".join(element + quantifier for element, quantifier in parts)


@settings(max_examples=300, deadline=None)
@given(pattern=simple_patterns(), unit=st.sampled_from(["a", "ab", "ba!", "aab", "1 a"]))
def test_untimed_searches_end_well_within_the_bound_and_agree(pattern: str, unit: str) -> None:
    """At the longest text allowed, an adversarial repetition: the search with the bound (the
    regex module's, in CPU time) never times out, and the operator answers as it does."""
    try:
        compiled = OPERATORS["regex"].prepare(pattern)
    except ValueError:
        return
    longest = untimed_up_to(pattern)
    for text in (
        {(unit * (longest // len(unit) + 1))[:longest], unit * 3, ""} if longest >= 0 else ()
    ):
        bounded = compiled.search(text, timeout=REGEX_TIMEOUT_S) is not None
        assert (OPERATORS["regex"].check(text, compiled, {}) is None) is bounded


def test_a_text_past_the_longest_keeps_the_bound() -> None:
    op = OPERATORS["regex"]
    pattern = op.prepare("\\w*\\w*\\w*\\d")  # cubic backtracking
    assert 0 <= untimed_up_to(pattern.pattern) < 100
    with pytest.raises(CheckError, match=r"timed out on a 3000-character string"):
        op.check("a" * 3000, pattern, {})


def test_the_regex_module_reads_a_brace_re_takes_as_text_as_fuzzy_matching() -> None:
    """Why a literal ``{`` keeps the bound: to the regex module it can start a constraint."""
    assert regex.fullmatch("(?:abc){e<=1}", "abd") is not None
    assert regex_time.sre_parse.parse("(?:abc){e<=1}") is not None  # re: the text {e<=1}


class _Spy:
    """A compiled pattern that records whether a search was given a time bound."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern, self.flags = pattern, flags
        self.timeouts: list[float | None] = []

    def search(self, text: str, timeout: float | None = None) -> None:
        self.timeouts.append(timeout)


@pytest.mark.parametrize(
    ("flags", "text", "timeout"),
    [
        (regex.compile("a").flags, "inv_12", None),
        (regex.compile("(?i)a").flags, "inv_12", None),
        (regex.compile("a").flags, "inv_" + "1" * 200, REGEX_TIMEOUT_S),  # past the longest
        (regex.compile("a", regex.VERBOSE).flags, "inv_12", REGEX_TIMEOUT_S),
        (regex.compile("a", regex.V1).flags, "inv_12", REGEX_TIMEOUT_S),
        (regex.compile("a", regex.FULLCASE | regex.IGNORECASE).flags, "inv_12", REGEX_TIMEOUT_S),
    ],
)
def test_the_bound_is_left_out_only_where_the_pattern_reads_as_re_reads_it(
    flags: int, text: str, timeout: float | None
) -> None:
    spy = _Spy("^inv_[0-9]+$", flags)
    search(spy, text)  # type: ignore[arg-type]  # a stand-in for regex.Pattern
    assert spy.timeouts == [timeout]
