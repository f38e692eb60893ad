"""The escaping primitives, one behaviour a test, plus properties over any text."""

from __future__ import annotations

import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replaygate.report.escape import (
    markdown_cell,
    markdown_code,
    markdown_text,
    terminal_safe,
    truncate,
    visible,
    xml_safe,
)

# Any code point, lone surrogates included.
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()))
XML_CHAR = re.compile("[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")


@pytest.mark.parametrize(
    ("char", "shown"),
    [("\x00", "\\x00"), ("\x1b", "\\x1b"), ("\x9b", "\\x9b"), ("\u202e", "\\u202e"),
     ("\ud800", "\\ud800"), ("\U0010ffff", "\\U0010ffff")],
)  # fmt: skip
def test_visible_writes_a_python_style_escape(char: str, shown: str) -> None:
    assert visible(char) == shown


def test_truncate_keeps_short_text() -> None:
    assert truncate("abc", 3) == "abc"


def test_truncate_says_how_much_was_cut() -> None:
    assert truncate("abcdef", 2) == "ab... [4 more characters]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a\x00b", "a\\x00b"), ("\x1b[31m", "\\x1b[31m"), ("\ud800", "\\ud800"),
     ("\udfff\ud800", "\\udfff\\ud800"), ("\ufffe\uffff", "\\ufffe\\uffff"),
     ("\x7f\x85", "\\x7f\\x85"), ("\u202eabc\u202c", "\\u202eabc\\u202c")],
)  # fmt: skip
def test_xml_safe_escapes_what_xml_cannot_carry_or_junit_xml_drops(
    text: str, expected: str
) -> None:
    assert xml_safe(text) == expected


@given(ANY_TEXT)
def test_xml_and_terminal_escaping_is_each_character_by_itself(text: str) -> None:
    """A text without anything to escape skips the substitution: the result is still what
    escaping each character alone gives, so the shortcut cannot change a byte."""
    for escape in (xml_safe, terminal_safe):
        assert escape(text) == "".join(escape(char) for char in text)


def test_xml_safe_keeps_tabs_line_breaks_markup_and_unicode() -> None:
    text = "a\tb\nc\rd <e> & ]]> é 🚀 \U00010000"
    assert xml_safe(text) == text


@given(ANY_TEXT)
def test_xml_safe_output_is_always_legal_xml_text(text: str) -> None:
    safe = xml_safe(text)
    assert XML_CHAR.fullmatch(safe)
    element = ET.Element("e", {"a": safe})
    element.text = safe
    parsed = ET.fromstring(ET.tostring(element, encoding="utf-8"))
    assert parsed.get("a") == safe
    assert (parsed.text or "") == safe.replace("\r\n", "\n").replace("\r", "\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("\x1b[2J", "\\x1b[2J"), ("a\nb", "a\\x0ab"), ("a\r\n", "a\\x0d\\x0a"),
     ("\t", "\\x09"), ("\x9b31m", "\\x9b31m"), ("\u202eabc", "\\u202eabc"),
     ("\u2066x\u2069", "\\u2066x\\u2069"), ("\u2028", "\\u2028"), ("\ud800", "\\ud800"),
     ("\x07\x08\x7f", "\\x07\\x08\\x7f"), ("\ufffe", "\\ufffe")],
)  # fmt: skip
def test_terminal_safe_escapes_controls_bidi_and_line_breaks(text: str, expected: str) -> None:
    assert terminal_safe(text) == expected


def test_terminal_safe_keeps_printable_unicode() -> None:
    assert terminal_safe("héllo 🚀 [x] ::error:: ##[") == "héllo 🚀 [x] ::error:: ##["


@given(ANY_TEXT)
def test_terminal_safe_output_is_one_printable_encodable_line(text: str) -> None:
    safe = terminal_safe(text)
    safe.encode("utf-8")  # no lone surrogate left
    assert not re.search("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", safe)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a|b", "a&#124;b"), ("<script>", "&lt;script&gt;"), ("&amp;", "&amp;amp;"),
     ("[x](y)", "&#91;x&#93;(y)"), ("![i](u)", "&#33;&#91;i&#93;(u)"),
     ("**b** _e_ ~s~", "&#42;&#42;b&#42;&#42; &#95;e&#95; &#126;s&#126;"),
     ("`c`", "&#96;c&#96;"), ("a\\|b", "a&#92;&#124;b"), ("$x$", "&#36;x&#36;"),
     ("# h", "&#35; h"), ("a\nb\r\nc\rd", "a<br>b<br>c<br>d"),
     ("@everyone @org/team", "@&#8203;everyone @&#8203;org/team"),
     ("\x00\x1b[1m\ud800\u202e", "&#92;x00&#92;x1b&#91;1m&#92;ud800&#92;u202e")],
)  # fmt: skip
def test_markdown_text_escapes_markup_mentions_and_controls(text: str, expected: str) -> None:
    assert markdown_text(text) == expected


def test_markdown_text_keeps_plain_words_and_unicode() -> None:
    assert markdown_text("plain words, 1.5 - é 🚀") == "plain words, 1.5 - é 🚀"


@given(ANY_TEXT)
def test_markdown_text_never_leaves_a_markup_character_or_a_line_break(text: str) -> None:
    escaped = markdown_text(text)
    escaped.encode("utf-8")
    without_entities = re.sub("&#?[0-9a-z]+;|<br>", "", escaped)
    assert not set(without_entities) & set("|<>[]!*_~`\\$#\n\r")
    assert not re.search("@[^\u200b&]", escaped.replace("@&#8203;", ""))


def test_markdown_cell_truncates_before_escaping() -> None:
    assert markdown_cell("|" * 10, limit=2) == "` \\|\\|... [8 more characters] `"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("see https://evil.example/x", "` see https://evil.example/x `"),
     ("www.evil.example", "` www.evil.example `"), ("@octocat @org/team", "` @octocat @org/team `"),
     ("fixes #123 and owner/repo#1", "` fixes #123 and owner/repo#1 `"),
     ("me@evil.example", "` me@evil.example `"), ("a|b", "` a\\|b `"),
     ("a\\|b", "` a\\x5c\\|b `"), ("x`y", "`` x`y ``"), ("a\nb", "` a b `"), ("", ""),
     ("zero\u200bwidth", "` zero\\u200bwidth `"), ("\u202eevil", "` \\u202eevil `"),
     ("tag\U000e0041\U000e007f", "` tag\\U000e0041\\U000e007f `"),
     ("\ufeff\u2060\u00ad\ufe0f\u3164", "` \\ufeff\\u2060\\xad\\ufe0f\\u3164 `")],
)  # fmt: skip
def test_markdown_cell_cannot_link_mention_reference_or_hide(text: str, expected: str) -> None:
    assert markdown_cell(text) == expected


@given(ANY_TEXT)
def test_markdown_cell_is_one_code_span_a_table_cannot_split(text: str) -> None:
    cell = markdown_cell(text)
    if not text:
        assert cell == ""
        return
    fence = re.match("`+", cell)
    assert fence is not None and cell.endswith(" " + fence.group())
    body = cell[len(fence.group()) + 1 : -len(fence.group()) - 1]
    assert all(len(run) != len(fence.group()) for run in re.findall("`+", body))
    # GFM splits a row at a pipe that is not escaped; `\\` is an escaped backslash
    assert not re.search(r"(?<!\\)(?:\\\\)*\|", body.replace("\\|", ""))
    assert "\n" not in cell and "\r" not in cell
    hidden = [char for char in cell if unicodedata.category(char) in INVISIBLE_CATEGORIES]
    assert hidden in ([], ["\t"] * len(hidden))


INVISIBLE_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # a tab is not hidden: it may stay


def test_every_format_character_is_shown_escaped_by_every_escaper() -> None:
    hidden = "".join(
        chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"
    )
    for escaped in (xml_safe(hidden), terminal_safe(hidden), markdown_code(hidden, len(hidden))):
        assert not [char for char in escaped if unicodedata.category(char) == "Cf"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("abc", "` abc `"), ("a`b", "`` a`b ``"), ("``x```", "```` ``x``` ````"),
     ("`", "`` ` ``"), ("", "`  `"), ("a\nb\r\nc", "` a b c `"), ("\x1b", "` \\x1b `")],
)  # fmt: skip
def test_markdown_code_uses_a_fence_longer_than_any_backtick_run(text: str, expected: str) -> None:
    assert markdown_code(text) == expected


@given(ANY_TEXT)
def test_markdown_code_fence_is_never_inside_the_body(text: str) -> None:
    span = markdown_code(text)
    fence = re.match("`+", span)
    assert fence is not None
    body = span[len(fence.group()) + 1 : -len(fence.group()) - 1]
    runs = re.findall("`+", body)
    assert all(len(run) != len(fence.group()) for run in runs)
    assert "\n" not in span


class _Loud(str):
    """A str subclass whose formatting is not its text."""

    def __format__(self, spec: str) -> str:
        return "FMT"

    def __str__(self) -> str:
        return "STR"


@pytest.mark.parametrize("escape", [xml_safe, terminal_safe], ids=lambda f: f.__name__)
@pytest.mark.parametrize("text", ["plain", "needs \x1b escaping"])
def test_an_escaper_returns_an_exact_str_whatever_it_is_given(
    escape: Callable[[str], str], text: str
) -> None:
    """A subclass's own ``__format__`` must not reach the reports' f-strings."""
    escaped = escape(_Loud(text))
    assert type(escaped) is str
    assert f"{escaped}" == escape(text)
