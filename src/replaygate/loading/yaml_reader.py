"""YAML loading, the only `import yaml`: keeps source lines, refuses what would surprise or harm."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

import yaml
from yaml.events import (
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode
from yaml.reader import ReaderError

from replaygate.assertions.values import yaml_reading
from replaygate.core.errors import PackError
from replaygate.loading.files import MAX_DEPTH, MAX_YAML_BYTES, excerpt, read_text

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # PyYAML built without libyaml: same events, about 9x slower
    # a different class under the same name, which is the point of the fallback
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

_TAG = "tag:yaml.org,2002:"
_STR = _TAG + "str"
_SCALAR_TAGS = {_TAG + name for name in ("str", "int", "float", "bool", "null", "timestamp")}
_SCALAR_TAGS.add(_TAG + "binary")
_MAP_TAGS = {None, "!", _TAG + "map"}
_SEQ_TAGS = {None, "!", _TAG + "seq"}
_KINDS = {"int": "integer", "float": "number", "bool": "boolean", "timestamp": "date"}
_NO_KEY = object()  # a mapping frame waiting for its next key
# plain scalar text -> its value and surprise: what _scalar returns, a function of the text
# alone, kept for values that are never changed in place or compared by identity (not NaN)
_PLAIN_READINGS: dict[str, tuple[Any, str | None]] = {}
_KEPT_TYPES = {str, bool, int, type(None)}
_SHORT = 40  # longer texts are rarely repeated
_MAX_REMEMBERED = 20_000  # at most about 2 MB


class YamlMap(dict[Any, Any]):
    """A YAML mapping with its line, the line of each key and the text of surprising values."""

    __slots__ = ("key_lines", "line", "surprises")

    # dict.__new__ already made it empty: no super().__init__(), a call per mapping saved
    def __init__(self, line: int) -> None:
        self.line = line
        self.key_lines: dict[Any, int] = {}
        self.surprises: dict[Any, str] = {}


class YamlSeq(list[Any]):
    """A YAML sequence with its line, the line of each item and the text of surprising items."""

    __slots__ = ("item_lines", "line", "surprises")

    def __init__(self, line: int) -> None:  # as YamlMap: list.__new__ made it empty
        self.line = line
        self.item_lines: list[int] = []
        self.surprises: dict[int, str] = {}


class _Loader(_BaseLoader):
    """libyaml's parser and the YAML 1.1 resolver, building YamlMap/YamlSeq from events.

    Building from events rather than from libyaml's node graph is what makes the limits
    safe: composing the graph recurses in C and crashes the process on deep nesting, and an
    alias is seen where it is written, before anything is expanded.
    """

    def __init__(self, text: str, shown: str) -> None:
        super().__init__(text)
        self.shown = shown

    def document(self) -> Any:
        self.get_event()  # StreamStartEvent
        if self.check_event(StreamEndEvent):
            raise PackError(self.shown, None, "file is empty")
        self.get_event()  # DocumentStartEvent
        value = self._value()
        self.get_event()  # DocumentEndEvent
        if self.check_event(DocumentStartEvent):
            line = _line(self.peek_event())
            message = "a second YAML document starts here; a file holds only one"
            raise PackError(self.shown, line, message)
        return value

    def _value(self) -> Any:
        # The loop runs once per event (a contract has hundreds): names bound locally, and
        # the common scalar read inline: quoted, plain with no pattern for its first character
        # (resolve() would call it a string), or plain and read before.
        get_event, remembered = self.get_event, _PLAIN_READINGS.get
        patterned = self.yaml_implicit_resolvers
        parent: Any = None  # the innermost open YamlMap or YamlSeq
        key: Any = _NO_KEY  # its pending key, when a mapping
        outer: list[tuple[Any, Any]] = []  # the enclosing ones, with theirs
        while True:
            event: Any = get_event()
            kind = type(event)
            line = event.start_mark.line + 1
            surprise = None
            if kind is ScalarEvent:
                value = event.value
                if event.tag is not None:
                    value, surprise = self._scalar(event, line)
                elif event.implicit[0] and value[:1] in patterned:
                    value, surprise = remembered(value) or self._scalar(event, line)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                opened = self._open(event, line, parent, key, len(outer))
                outer.append((parent, key))
                parent, key = opened, _NO_KEY
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                value, line = parent, parent.line
                parent, key = outer.pop()
            else:
                raise PackError(self.shown, line, "YAML aliases (*name) are not supported")
            if parent is None:
                return value
            if type(parent) is YamlSeq:
                parent.item_lines.append(line)
                if surprise is not None:
                    parent.surprises[len(parent)] = surprise
                parent.append(value)
            elif key is not _NO_KEY:
                parent[key] = value
                if surprise is not None:
                    parent.surprises[key] = surprise
                key = _NO_KEY
            elif value in parent.key_lines:
                self._duplicate(parent, value, line)
            else:
                parent.key_lines[value] = line
                key = value

    def _open(self, event: Any, line: int, parent: Any, key: Any, depth: int) -> YamlMap | YamlSeq:
        """A new mapping or list inside ``parent`` (None: the document), ``depth`` levels in."""
        is_map = type(event) is MappingStartEvent
        if type(parent) is YamlMap and key is _NO_KEY:
            message = "a mapping key must be a plain value, not a mapping or a list"
            raise PackError(self.shown, line, message)
        if event.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
            raise PackError(self.shown, line, f"YAML tag {_show_tag(event.tag)!r} is not supported")
        if depth >= MAX_DEPTH:
            raise PackError(self.shown, line, f"nesting is deeper than {MAX_DEPTH} levels")
        return YamlMap(line) if is_map else YamlSeq(line)

    def _duplicate(self, mapping: YamlMap, key: Any, line: int) -> NoReturn:
        first = mapping.key_lines[key]
        shown_key = excerpt(key) if isinstance(key, str) else key
        raise PackError(self.shown, line, f"duplicate key {shown_key!r} (first at line {first})")

    def _scalar(self, event: Any, line: int) -> tuple[Any, str | None]:
        text: str = event.value
        tag = event.tag
        plain = tag is None or tag == "!"
        if plain:
            if not event.implicit[0]:
                return text, None  # quoted: always a string
            # this loader has no path resolvers: the tag is a function of the text alone
            tag = self.resolve(ScalarNode, text, event.implicit)  # type: ignore[no-untyped-call]
        if tag == _STR or tag == _TAG + "value":  # '=' is the text "=" (as PyYAML)
            return _remembered(text, (text, None)) if plain else (text, None)
        if tag == _TAG + "merge":
            raise PackError(self.shown, line, "YAML merge keys (<<) are not supported")
        if tag not in _SCALAR_TAGS:
            raise PackError(self.shown, line, f"YAML tag {_show_tag(tag)!r} is not supported")
        value = self._construct(tag, event, line)
        if not plain:
            return value, None
        return _remembered(text, (value, text if _surprising(text, value) else None))

    def _construct(self, tag: str, event: Any, line: int) -> Any:
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            return self.yaml_constructors[tag](self, node)
        except (ValueError, OverflowError, yaml.YAMLError) as exc:
            kind = _KINDS.get(tag.removeprefix(_TAG), tag.removeprefix(_TAG))
            reason = str(exc).split(";")[0].splitlines()[0]
            message = f"{excerpt(event.value)!r} is not a valid {kind} ({reason})"
            raise PackError(self.shown, line, message) from None


def _remembered(text: str, reading: tuple[Any, str | None]) -> tuple[Any, str | None]:
    """``reading``, kept for the next time ``text`` is read when it is short (keys and flags
    repeat) and of a kept type."""
    kept = type(reading[0]) in _KEPT_TYPES
    if kept and len(text) <= _SHORT and len(_PLAIN_READINGS) < _MAX_REMEMBERED:
        _PLAIN_READINGS[text] = reading
    return reading


def _line(event: Any) -> int:
    return int(event.start_mark.line) + 1


def _show_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_TAG) if tag.startswith(_TAG) else tag


def _surprising(text: str, value: Any) -> bool:
    """Whether YAML 1.1 reads the plain scalar ``text`` as something its author may not mean."""
    if isinstance(value, bool):
        return text.lower() not in ("true", "false")
    if isinstance(value, int):
        return text.removeprefix("+") != str(value)  # 012, 0x1f, 1_000, 1:30
    if isinstance(value, float):
        if not math.isfinite(value):
            return False  # .inf and .nan are only ever written on purpose
        written = text.lower().removeprefix("+").replace("-.", "-0.")
        written = "0" + written if written.startswith(".") else written
        return written != repr(value)  # 3.10 (3.1), 1.50, 1_000.5, 1:30.5
    return isinstance(value, date)  # dates and date-times


def describe_surprise(text: str, value: Any) -> str:
    """The hint for a value that YAML read differently from how it was written."""
    reading = yaml_reading(value)
    if isinstance(value, bool):
        return f"`{text}` is read as {reading} by YAML; quote it ('{text}') if you mean the text"
    return f"`{text}` is read as {reading}; quote it ('{text}') to keep it as text"


def load_yaml(path: Path, *, shown: str) -> Any:
    """The one YAML document in ``path``: YamlMap, YamlSeq or a scalar."""
    return parse_yaml(read_text(path, shown=shown, max_bytes=MAX_YAML_BYTES), shown=shown)


def parse_yaml(text: str, *, shown: str) -> Any:
    """The one YAML document in ``text``; every problem is a PackError naming ``shown``."""
    loader = _Loader(text, shown)
    try:
        return loader.document()
    except yaml.YAMLError as exc:
        raise _yaml_problem(exc, text, shown) from None
    finally:
        loader.dispose()


def reads_as_text(text: str) -> bool:
    """Whether ``text`` written as a plain (unquoted) scalar reads back as that same text,
    alone and inside a flow list, where ``,``, ``[``, ``]`` and a leading ``?`` mean more."""
    try:
        alone, listed = parse_yaml(text, shown=""), parse_yaml(f"[{text}]", shown="")
    except PackError:
        return False
    return isinstance(alone, str) and alone == text and listed == [text]


def _yaml_problem(exc: yaml.YAMLError, text: str, shown: str) -> PackError:
    if isinstance(exc, ReaderError):
        return _reader_problem(exc, text, shown)
    if not isinstance(exc, yaml.MarkedYAMLError):
        return PackError(shown, None, _one_line(str(exc)))
    mark = exc.problem_mark or exc.context_mark
    line: int | None = mark.line + 1 if mark else None
    tabbed = _tab_indented(text, line) if line is not None else None
    if tabbed is not None:
        message = "YAML does not allow tabs for indentation; indent this line with spaces"
        return PackError(shown, tabbed, message)
    message = exc.problem or exc.context or "invalid YAML"
    if exc.problem and exc.context:
        context = exc.context
        if exc.context_mark and exc.context_mark.line + 1 != line:
            context += f" at line {exc.context_mark.line + 1}"
        message = f"{exc.problem} ({context})"
    return PackError(shown, line, _one_line(message))


def _tab_indented(text: str, line: int) -> int | None:
    """``line`` (1-based) or the line before it when a tab is in its indentation, else None."""
    lines = text.splitlines()
    for number in (line, line - 1):
        row = lines[number - 1] if 0 < number <= len(lines) else ""
        if "\t" in row[: len(row) - len(row.lstrip(" \t"))]:
            return number
    return None


def _reader_problem(exc: ReaderError, text: str, shown: str) -> PackError:
    """A character YAML refuses; libyaml gives a byte offset, so find the character itself."""
    code = exc.character if isinstance(exc.character, int) else ord(exc.character)
    line = text.count("\n", 0, max(text.find(chr(code)), 0)) + 1
    return PackError(shown, line, f"{exc.reason} (U+{code:04X})")


def _one_line(message: str) -> str:
    return " ".join(message.split())


def line_of(data: Any, loc: Sequence[str | int]) -> int | None:
    """The line of the deepest node ``loc`` reaches: a key's line, or an item's line.

    Parts that match nothing are skipped: pydantic puts union member names into locations.
    """
    line = getattr(data, "line", None)
    for container, part in _walk(data, loc):
        if isinstance(container, YamlMap):
            line = container.key_lines[part]
        else:
            line = container.item_lines[part]
    return line


def surprise_at(data: Any, loc: Sequence[str | int]) -> str | None:
    """The original text of the scalar at ``loc`` when YAML read it surprisingly."""
    steps = _walk(data, loc)
    if not steps:
        return None
    container, part = steps[-1]
    return container.surprises.get(part)


def value_at(data: Any, loc: Sequence[str | int]) -> Any:
    """The value of the deepest node ``loc`` reaches (``data`` itself when none)."""
    steps = _walk(data, loc)
    if not steps:
        return data
    container, part = steps[-1]
    return container[part]


def walk_maps(data: Any) -> Iterator[YamlMap]:
    """Every YamlMap in ``data``, outermost first, in document order."""
    pending = [data]
    while pending:
        node = pending.pop()
        if isinstance(node, YamlMap):
            yield node
            pending.extend(reversed(node.values()))
        elif isinstance(node, YamlSeq):
            pending.extend(reversed(node))


def _walk(data: Any, loc: Sequence[str | int]) -> list[tuple[YamlMap | YamlSeq, Any]]:
    steps: list[tuple[YamlMap | YamlSeq, Any]] = []
    node = data
    for part in loc:
        in_map = type(node) is YamlMap and part in node.key_lines
        if in_map or (type(node) is YamlSeq and type(part) is int and 0 <= part < len(node)):
            steps.append((node, part))
            node = node[part]
    return steps
