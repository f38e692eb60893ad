"""junit-xml's elements as the text ``ET.tostring(element, encoding="unicode")`` writes.

ElementTree's writer walks the whole tree once for namespaces, then again through a
``write`` call per piece, testing every attribute value for seven characters: it was
most of the JUnit report's cost. junit-xml's elements are simpler than what it
handles (plain tags, text attribute values, no tails, comments or namespaces), so they
are written here in one walk, an attribute value tested with one regular expression.
tests/report/test_junit_text.py holds this writer to ElementTree's output.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable

# ElementTree's escapes (``_escape_attrib``, ``_escape_cdata``), in its order: & first.
_ATTRIBUTE_ESCAPES = (
    ("&", "&amp;"),
    ("<", "&lt;"),
    (">", "&gt;"),
    ('"', "&quot;"),
    ("\r", "&#13;"),
    ("\n", "&#10;"),
    ("\t", "&#09;"),
)
_TEXT_ESCAPES = _ATTRIBUTE_ESCAPES[:3]
_ATTRIBUTE_SPECIAL = re.compile('[&<>"\r\n\t]')
_TEXT_SPECIAL = re.compile("[&<>]")
_attribute_special = _ATTRIBUTE_SPECIAL.search


def element_text(element: ET.Element) -> str:
    """``element`` and everything in it, as ElementTree writes it (``short_empty_elements``)."""
    return start_tag(element.tag, element.attrib.items()) + element_rest(element)


def start_tag(tag: str, attributes: Iterable[tuple[str, str]]) -> str:
    """``<tag name="value" ...``, left open: the caller closes it with ``element_rest``."""
    # the test inline, not in a call: most values have nothing to escape
    return f"<{tag}" + "".join(
        [
            f' {name}="{value if _attribute_special(value) is None else attribute(value)}"'
            for name, value in attributes
        ]
    )


def element_rest(element: ET.Element) -> str:
    """What follows the start tag: `` />`` for an empty element, else ``>``, text, children
    and the end tag."""
    text = element.text
    if not text and not len(element):
        return " />"
    inner = "".join([element_text(child) for child in element])
    return f">{_escaped(text, _TEXT_SPECIAL, _TEXT_ESCAPES) if text else ''}{inner}</{element.tag}>"


def attribute(value: str) -> str:
    """An attribute value escaped as ElementTree escapes it."""
    return _escaped(value, _ATTRIBUTE_SPECIAL, _ATTRIBUTE_ESCAPES)


def _escaped(text: str, special: re.Pattern[str], escapes: tuple[tuple[str, str], ...]) -> str:
    # One search of the text instead of a test per character: most have nothing to escape.
    if special.search(text) is None:
        return text
    for char, reference in escapes:
        text = text.replace(char, reference)
    return text
