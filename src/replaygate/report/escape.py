"""Escaping for every place a report emits untrusted text: XML, GitHub markdown, terminals."""

from __future__ import annotations

import re
from collections.abc import Callable

# Character classes, as regex fragments. Each escaped character is shown as a
# Python-style escape (`\x1b`, `\u202e`) so nothing is dropped silently.
_C0 = "\x00-\x08\x0b\x0c\x0e-\x1f"  # C0 controls except \t \n \r
_C1 = "\x7f-\x9f"  # DEL and C1 controls (0x9b is an 8-bit CSI)
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # reorder the text a reader sees
_SURROGATES = "\ud800-\udfff"  # lone surrogates cannot be encoded as UTF-8
_NONCHARACTERS = "\ufffe\uffff"

_UNSAFE = re.compile(f"[{_C0}{_C1}{_BIDI}{_SURROGATES}{_NONCHARACTERS}]")
_TERMINAL_UNSAFE = re.compile(f"[\t\n\r{_C0}{_C1}{_BIDI}\u2028\u2029{_SURROGATES}{_NONCHARACTERS}]")
_BACKTICK_RUN = re.compile("`+")

# Entities, not backslash escapes: entities are never markdown syntax, and they
# also work inside table cells and around raw HTML.
_MARKDOWN_ENTITIES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "|": "&#124;",  # table cell delimiter
        "\\": "&#92;",
        "`": "&#96;",
        "*": "&#42;",
        "_": "&#95;",
        "~": "&#126;",
        "[": "&#91;",  # links and images
        "]": "&#93;",
        "!": "&#33;",
        "#": "&#35;",  # headings; `#123` still autolinks, which is harmless
        "$": "&#36;",  # GitHub math
        "@": "@&#8203;",  # a zero-width space after @ stops @user and @org/team mentions
        "\n": "<br>",
        "\r": "<br>",
    }
)

_TRUNCATED = "... [{} more characters]"


def truncate(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + _TRUNCATED.format(len(text) - limit)


def visible(char: str) -> str:
    """One character as a visible Python-style escape: ``\\x1b``, ``\\u202e``."""
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _escaper(pattern: re.Pattern[str]) -> Callable[[str], str]:
    def escape(text: str) -> str:
        return pattern.sub(lambda match: visible(match.group()), text)

    return escape


_escape_unsafe = _escaper(_UNSAFE)
_escape_terminal_unsafe = _escaper(_TERMINAL_UNSAFE)


def xml_safe(text: str) -> str:
    """Text that XML 1.0 can carry: illegal characters, C1 controls and bidi controls escaped.

    C1 controls and bidi controls are legal XML, but junit-xml deletes some of
    them and the others reorder or hide text in a report viewer.
    """
    return _escape_unsafe(text)


def terminal_safe(text: str) -> str:
    """One line that cannot move the cursor, recolour or reorder a terminal.

    Escapes ESC (so no ANSI sequence survives), every C0 and C1 control
    including tab and line breaks, bidi controls and lone surrogates.
    """
    return _escape_terminal_unsafe(text)


def markdown_text(text: str) -> str:
    """Text for an inline position in GitHub markdown: mid-line, a list item or a table cell.

    Markup characters become HTML entities, line breaks become ``<br>``, and
    mentions are broken with a zero-width space. Not for the start of a line,
    where ``-``, ``+``, ``1.`` or ``=`` could still begin a block.
    """
    unified = _escape_unsafe(text).replace("\r\n", "\n")
    return unified.translate(_MARKDOWN_ENTITIES)


def markdown_cell(text: str, limit: int = 300) -> str:
    """A table cell: ``text`` truncated to ``limit`` characters and escaped."""
    return markdown_text(truncate(text, limit))


def markdown_code(text: str, limit: int = 300) -> str:
    """An inline code span whose fence is longer than any backtick run in ``text``.

    Not for table cells (a pipe inside a code span still splits the cell there).
    Inside code, markup and mentions are inert; line breaks become spaces.
    """
    body = _escape_unsafe(truncate(text, limit)).replace("\r\n", " ").replace("\n", " ")
    body = body.replace("\r", " ")
    longest = max((len(run) for run in _BACKTICK_RUN.findall(body)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {body} {fence}"
