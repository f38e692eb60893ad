"""Hypothesis strategies for results full of hostile text, for the reports' differential tests."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from replaygate.core.model import (
    AssertionOutcome,
    AssertionStatus,
    Capture,
    CaseResult,
    Failure,
    Problem,
    RunResult,
    Status,
)

# What breaks a format or a reader: markup, CDATA ends, quotes, line breaks, controls, ESC,
# bidi and invisible characters, lone surrogates, noncharacters, non-ASCII.
PIECES = st.sampled_from(
    [
        "]]>", "<", ">", "&", '"', "'", "&amp;", "</testcase>", "\r\n", "\r", "\n", "\t",
        "\x00", "\x07", "\x1b[31m", "\x7f", "\x9b", "\u202e", "\u2066", "\u200b", "\ufeff",
        "\ud800", "\udfff", "\ufffe", "é", "☃", "😀", "|", "`", "@x", "\\", "a", " ",
    ]
)  # fmt: skip
SHORT = st.lists(PIECES | st.text(max_size=4), max_size=8).map("".join)
# long enough for every limit: an attribute's 1,000 characters, a value's 2,000
LONG = st.builds(lambda piece, count: piece * count, PIECES, st.integers(300, 2200))
TEXT = SHORT | LONG
NAME = st.sampled_from(["", "a", "p/q.yaml", "x.yml"]) | SHORT
LINE = st.integers(0, 10**6)
# Values of a fixture; the non-finite floats, tuples and odd keys are for the JSON fallback.
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=2).map(tuple)
        | st.dictionaries(SHORT | st.integers() | st.booleans(), inner, max_size=3)
    ),
    max_leaves=6,
)
# a case's duration and score: mostly ordinary, sometimes what JSON cannot hold
SECONDS = st.floats(0, 1e4) | st.sampled_from([0.0, 0.0005, 0.0015, 1e-9, 12345.6789])
SCORE = st.none() | st.floats(0, 1) | st.sampled_from([math.nan, math.inf])

FAILURES = st.builds(
    Failure,
    classification=TEXT,
    message=TEXT,
    locator=TEXT,
    file=NAME,
    line=LINE,
    path=st.none() | TEXT,
    operator=st.none() | TEXT,
    expected=VALUES,
    actual=VALUES,
)
ASSERTIONS = st.builds(
    AssertionOutcome,
    id=SHORT,
    type=SHORT,
    status=st.sampled_from(AssertionStatus),
    weight=st.floats(0, 10),
    message=st.none() | TEXT,
    file=NAME,
    line=LINE,
    recorded=st.none() | st.booleans(),
    differs=st.none() | TEXT,
    captures=st.lists(st.builds(Capture, SHORT, TEXT, st.booleans()), max_size=2).map(tuple),
)


@st.composite
def cases(draw: st.DrawFn, pack: str, contract: str) -> CaseResult:
    """A case of the contract, of any status; a passed one mostly plain, as most are."""
    status = draw(st.sampled_from(Status))
    plain = status is Status.PASSED and draw(st.booleans())
    return CaseResult(
        pack=pack,
        pack_dir=draw(NAME),
        contract=contract,
        contract_file=draw(NAME),
        case_id=draw(TEXT),
        expect_ok=draw(st.booleans()),
        expected_error=draw(st.none() | TEXT),
        observed_ok=draw(st.none() | st.booleans()),
        status=status,
        classification=draw(st.none() | TEXT),
        fingerprint=draw(st.none() | st.text("0123456789abcdef", min_size=12, max_size=12)),
        failures=() if plain else tuple(draw(st.lists(FAILURES, max_size=2))),
        file=draw(NAME),
        line=draw(LINE),
        reason=draw(st.none() | TEXT),
        duration_s=draw(SECONDS),
        known=status is Status.FAILED and draw(st.booleans()),
        score=None if plain else draw(SCORE),
        assertions=() if plain else tuple(draw(st.lists(ASSERTIONS, max_size=2))),
        order=draw(st.integers(0, 10**6)),
    )


@st.composite
def results(draw: st.DrawFn) -> RunResult:
    """Cases of a few contracts, interleaved as a run's may be, and maybe load problems."""
    contracts = draw(st.lists(st.tuples(NAME, NAME), min_size=1, max_size=3))
    found = [draw(cases(*draw(st.sampled_from(contracts)))) for _ in range(draw(st.integers(0, 6)))]
    problems = st.builds(Problem, NAME, st.none() | LINE, TEXT)
    return RunResult(
        cases=tuple(found),
        problems=tuple(draw(st.lists(problems, max_size=2))),
        duration_s=draw(SECONDS),
    )
