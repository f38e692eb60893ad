"""msgspec's fast path gives strict_json's value exactly, or leaves the text to strict_json."""

from __future__ import annotations

import json
import sys
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck
from hypothesis import strategies as st

from replaygate.core.errors import PackError
from replaygate.loading import json_reader, normalize
from replaygate.loading.files import MAX_DEPTH
from replaygate.loading.json_reader import NEEDS_STRICT, fast_value, parse_json, strict_json
from sizes import sized

# Pieces of numbers, strings and layout that one decoder may read differently from the other;
# the ones JSON refuses are rarer, so that most documents get as far as a value.
NUMBERS = st.from_regex(r"\A-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,20})?([eE][-+]?[0-9]{1,3})?\Z")
ODD_NUMBERS = st.sampled_from(
    [
        "-0", "-0.0", "0e0", "1e400", "-1e400", "1e-400", "1E+308", "2.2250738585072011e-308",
        "4.9e-324", "9007199254740993", "9007199254740993.0", "18446744073709551616",
        "-9223372036854775809", "9" * 4300, "9" * 4301, "true", "false", "null",
        "1.", ".5", "+1", "01", "0x1", "1_000", "NaN", "Infinity", "-Infinity", "True", "nul",
    ]
)  # fmt: skip
SAFE_PIECES = [
    "a", "b", ":", "a:b", '\\"', "\\\\", "\\/", "\\n", "\\t", "\\b", "\\f", "\\r", "\\u0041",
    "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00", "\\ud800\\u0041", "\\u0000", "\x7f", "é",
    "😀", "[", "]", "{", "}", ",",
]  # fmt: skip
RISKY_PIECES = [
    "\\u003a", "\\u003A", "\\U0041", "\\x41", "\\u12", "\\", "\x00", "\x1f", "\t", "\n",
    "\ud800", "\ufeff",
]  # fmt: skip
STRING_PIECES = st.sampled_from(SAFE_PIECES * 4 + RISKY_PIECES)
SPACE = st.sampled_from(["", "", " ", "\n", "\r\n", "\t"] * 5 + ["\x0c", "\u00a0"])
EDGES = ["", " ", "\n", " \n\t"] * 4 + ["\x0c", "\u00a0", "\ufeff"]
ENDS = [*EDGES, " x", ",", "]", "\x00", "1"]


def string(pieces: list[str]) -> str:
    return '"' + "".join(pieces) + '"'


STRINGS = st.lists(STRING_PIECES, max_size=6).map(string)
KEYS = st.sampled_from(['"a"', '"b"', '"\\u0061"', '":"', '"a:"', '"\\u003a"']) | STRINGS


@st.composite
def texts(draw: st.DrawFn, depth: int = 0) -> str:
    """JSON text, mostly valid, with duplicate keys, odd numbers, escapes and stray bytes."""
    kind = draw(st.integers(0, 9)) if depth < 5 else 0
    if kind <= 2:
        leaf = draw(st.sampled_from([NUMBERS, NUMBERS, ODD_NUMBERS, STRINGS, STRINGS]))
        return draw(leaf)
    items = draw(st.lists(texts(depth + 1), max_size=4))
    if kind <= 5:
        body = ",".join(f"{draw(SPACE)}{item}" for item in items)
        return "[" + body + draw(st.sampled_from(["]"] * 9 + [",]"]))
    members = [f"{draw(KEYS)}{draw(SPACE)}:{item}" for item in items]
    return "{" + ",".join(members) + draw(st.sampled_from(["}"] * 9 + [",}"]))


@st.composite
def documents(draw: st.DrawFn) -> str:
    nesting = draw(st.sampled_from([0] * 7 + [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1]))
    inner = draw(texts())
    text = "[" * nesting + inner + "]" * nesting
    return draw(st.sampled_from(EDGES)) + text + draw(st.sampled_from(ENDS))


VALID = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


def exact(value: Any) -> Any:
    """The value with every type spelled out: True is not 1, 1.0 is not 1, -0.0 is not 0.0."""
    if type(value) is dict:
        return ("dict", [(exact(key), exact(item)) for key, item in value.items()])
    if type(value) is list:
        return ("list", [exact(item) for item in value])
    return (type(value).__name__, repr(value))


@pytest.fixture(autouse=True)
def past_the_strict_only_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """parse_json as it is once a process has decoded its first MiB: through fast_value."""
    monkeypatch.setitem(json_reader._DECODED, "strict_only", json_reader.STRICT_ONLY_CHARS)


def test_the_first_mib_is_decoded_strictly_then_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(json_reader, "fast_value", lambda text: calls.append(text) or NEEDS_STRICT)
    monkeypatch.setitem(json_reader._DECODED, "strict_only", 0)
    half = json.dumps(["x" * (json_reader.STRICT_ONLY_CHARS // 2)])
    assert parse_json(half, shown="f.json") == parse_json(half, shown="f.json")
    assert calls == []
    assert parse_json("[1]", shown="f.json") == [1]
    assert calls == ["[1]"]


def strict_outcome(text: str) -> Any:
    try:
        return exact(strict_json(text, shown="f.json"))
    except PackError as error:
        return str(error)


def fast_outcome(text: str) -> Any:
    try:
        return exact(parse_json(text, shown="f.json"))
    except PackError as error:
        return str(error)


@sized(3000, text=documents(), suppress=[HealthCheck.too_slow])
def test_fast_path_agrees_with_the_strict_decoder_on_adversarial_text(text: str) -> None:
    fast = fast_value(text)
    if fast is not NEEDS_STRICT:
        assert exact(fast) == exact(strict_json(text, shown="f.json"))
    assert fast_outcome(text) == strict_outcome(text)


@sized(
    3000,
    value=VALID,
    indent=st.sampled_from([None, 1]),
    ascii_only=st.booleans(),
    suppress=[HealthCheck.too_slow],
)
def test_fast_path_decides_valid_json_as_the_strict_decoder_does(
    value: Any, indent: int | None, ascii_only: bool
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    fast = fast_value(text)
    if fast is not NEEDS_STRICT:
        assert exact(fast) == exact(strict_json(text, shown="f.json"))
    assert fast_outcome(text) == strict_outcome(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "b": [2.5, -0.0, true, null, "x:y"], "c": {"d": "\\u00e9\\ud83d\\ude00"}}',
        "[" * MAX_DEPTH + "]" * MAX_DEPTH,
        " 123456789012345678901234567890 \n",
    ],
)
def test_fast_path_decides_plain_json(text: str) -> None:
    assert exact(fast_value(text)) == exact(strict_json(text, shown="f.json"))


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"a": "x:y", "b": {"c": 1, "c": ":"}}',
        '{"a": 1, "a": "\\u003a"}',  # its escaped colon would stand in for the dropped key
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        '{"x": NaN}',
        "1e400",
        "9" * (sys.get_int_max_str_digits() + 1),
        '"\\ud800"',
        "",
    ],
)
def test_fast_path_leaves_questionable_text_to_the_strict_decoder(text: str) -> None:
    assert fast_value(text) is NEEDS_STRICT


def test_fast_path_keeps_to_the_interpreters_integer_digit_limit() -> None:
    """msgspec follows sys.set_int_max_str_digits as int() does, whatever the limit."""
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(1000)
    try:
        assert fast_value("9" * 1000) == int("9" * 1000)
        assert fast_value("9" * 1001) is NEEDS_STRICT
        with pytest.raises(PackError, match="more than 1000 digits"):
            parse_json("9" * 1001, shown="f.json")
    finally:
        sys.set_int_max_str_digits(limit)


# --- tool-call arguments: the same decoder, by the same rule ---


def arguments_outcome(text: str, *, fast: bool) -> Any:
    """What normalize makes of a call's arguments: the value, or why they are malformed."""
    strict_only = json_reader.STRICT_ONLY_CHARS if fast else -sys.maxsize
    with mock.patch.dict(json_reader._DECODED, {"strict_only": strict_only}):
        value, malformed = normalize._arguments(text)
    return malformed or exact(dict(value))


@sized(3000, text=documents() | VALID.map(json.dumps), suppress=[HealthCheck.too_slow])
def test_arguments_decode_as_the_json_module_decodes_them(text: str) -> None:
    assert arguments_outcome(text, fast=True) == arguments_outcome(text, fast=False)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "b": [2.5, -0.0, true, null]}',
        '{"c": {"d": "\\u00e9\\ud83d\\ude00"}, "e": 123456789012345678901234567890}',
        '{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}",  # MAX_DEPTH containers
    ],
)
def test_plain_arguments_are_decoded_by_msgspec(text: str) -> None:
    expected = arguments_outcome(text, fast=False)
    refused = mock.Mock(side_effect=AssertionError("decoded by the json module"))
    with mock.patch.object(json_reader._JSON, "decode", refused):
        assert arguments_outcome(text, fast=True) == expected


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN}',
        '{"a": 1e400}',
        '{"a": "\\ud800"}',
        '{"a": 1, "a": 2}',
        '{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}",  # the strict decoder's depth decides
        '{"a": 1} x',
    ],
)
def test_questionable_arguments_are_left_to_the_strict_decoder(text: str) -> None:
    expected = arguments_outcome(text, fast=False)
    with mock.patch.object(json_reader, "_JSON", wraps=json_reader._JSON) as decoder:
        assert arguments_outcome(text, fast=True) == expected
    assert decoder.decode.call_count == 1


@pytest.mark.parametrize("msgspec_imported", [True, False])
@pytest.mark.parametrize("past_the_start", [True, False])
def test_the_decoder_is_picked_by_the_json_decoded_not_by_what_was_imported(
    monkeypatch: pytest.MonkeyPatch, msgspec_imported: bool, past_the_start: bool
) -> None:
    import msgspec

    if not msgspec_imported:
        monkeypatch.delitem(sys.modules, msgspec.__name__)
    strict_only = json_reader.STRICT_ONLY_CHARS if past_the_start else 0
    monkeypatch.setitem(json_reader._DECODED, "strict_only", strict_only)
    with mock.patch.object(json_reader, "fast_value", wraps=json_reader.fast_value) as fast:
        assert json_reader.decode_arguments('{"a": 1}') == {"a": 1}
    assert fast.call_count == past_the_start
    assert (json_reader.fast_codecs() is not None) == past_the_start
