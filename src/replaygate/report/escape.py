"""Escaping for every place a report emits untrusted text: XML, GitHub markdown, terminals."""

from __future__ import annotations

import re
from collections.abc import Callable

# Character classes, as regex fragments. Each escaped character is shown as a
# Python-style escape (`\x1b`, `\u202e`) so nothing is dropped silently.
_C0 = "\x00-\x08\x0b\x0c\x0e-\x1f"  # C0 controls except \t \n \r
_C1 = "\x7f-\x9f"  # DEL and C1 controls (0x9b is an 8-bit CSI)
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # reorder the text a reader sees
# Characters that show nothing, so they can hide or smuggle text: every format character
# (Unicode category Cf: zero-width spaces and joiners, tags, ...), variation selectors,
# fillers, and the line and paragraph separators. Tags and variation selectors can carry a
# whole message nobody sees.
_INVISIBLE = (
    "\u00ad\u034f\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200d\u2060-\u2065\u206a-\u206f\u3164\ufe00-\ufe0f\ufeff"
    "\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001345f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff\u2028\u2029"
)
_SURROGATES = "\ud800-\udfff"  # lone surrogates cannot be encoded as UTF-8
_NONCHARACTERS = "\ufffe\uffff"

_UNSAFE = re.compile(f"[{_C0}{_C1}{_BIDI}{_INVISIBLE}{_SURROGATES}{_NONCHARACTERS}]")
_TERMINAL_UNSAFE = re.compile(f"[\t\n\r{_C0}{_C1}{_BIDI}{_INVISIBLE}{_SURROGATES}{_NONCHARACTERS}]")
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
        "#": "&#35;",  # headings (`#123` still links: untrusted text goes in code spans)
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
        # Most text has nothing to escape: a search is cheaper than a substitution finding none.
        # An exact str, as the substitution gives: a subclass's own __format__ or __str__
        # must not reach the reports' f-strings.
        if pattern.search(text) is None:
            return text if type(text) is str else str.__str__(text)
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
    """Our own text for an inline position in GitHub markdown: mid-line, a list item, a cell.

    Markup characters become HTML entities, line breaks become ``<br>``, and
    mentions are broken with a zero-width space. Not for the start of a line,
    where ``-``, ``+``, ``1.`` or ``=`` could still begin a block. Not for untrusted
    text either: GitHub still links a URL or ``#123`` here. That goes in a code span.
    """
    unified = _escape_unsafe(text).replace("\r\n", "\n")
    return unified.translate(_MARKDOWN_ENTITIES)


def markdown_code(text: str, limit: int = 300) -> str:
    """Untrusted text as an inline code span whose fence is longer than any backtick run.

    In code GitHub links nothing (URLs, ``www.``), mentions no one, makes no
    cross-reference (``#1``, ``owner/repo#1``) and reads no markup; characters that
    would hide text are shown as escapes (``\\u200b``); line breaks become spaces.
    Not for table cells: see ``markdown_cell``.
    """
    return _code_span(_code_body(text, limit))


def markdown_cell(text: str, limit: int = 300) -> str:
    """A table cell of untrusted text: ``markdown_code`` with its pipes escaped for the table.

    GFM splits a row at every pipe not escaped by a backslash, inside code too; the
    table unescapes ``\\|`` back to ``|`` in the code. A backslash of the text right
    before a pipe is shown as ``\\x5c``, or it would escape our backslash. Empty text is
    an empty cell.
    """
    if not text:
        return ""
    body = _code_body(text, limit).replace("\\|", "\\x5c|").replace("|", "\\|")
    return _code_span(body)


def _code_body(text: str, limit: int) -> str:
    body = _escape_unsafe(truncate(text, limit)).replace("\r\n", " ").replace("\n", " ")
    return body.replace("\r", " ")


def _code_span(body: str) -> str:
    longest = max((len(run) for run in _BACKTICK_RUN.findall(body)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {body} {fence}"
