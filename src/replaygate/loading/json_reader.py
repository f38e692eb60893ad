"""Strict JSON: files and tool-call arguments, NaN, Infinity, duplicate keys and deep nesting
refused; where a value of a file is, as ``$.a[0]`` and a line."""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TypeVar

from replaygate.core.errors import PackError
from replaygate.loading.files import MAX_DEPTH, MAX_JSON_BYTES, excerpt, read_text

if TYPE_CHECKING:
    import msgspec


class _JsonProblem(ValueError):
    """NaN, Infinity, an out-of-range number or a duplicate key: located by _locate_json_problem."""


def refuse_constant(name: str) -> NoReturn:
    """The one refusal of NaN, Infinity and -Infinity, which Python's json would read."""
    raise _JsonProblem(f"{name} is not valid JSON")


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _JsonProblem(f"duplicate key {excerpt(_first_repeated(pairs))!r}")
    return result


def _first_repeated(pairs: list[tuple[str, Any]]) -> str:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    raise AssertionError("no key repeats")  # the caller has counted one


def finite_float(text: str) -> float:
    """A JSON number as a float, refusing one too large to be anything but infinity (1e999)."""
    value = float(text)
    if math.isinf(value):
        raise _JsonProblem("number out of range")
    return value


_JSON = json.JSONDecoder(
    parse_constant=refuse_constant, parse_float=finite_float, object_pairs_hook=_unique_pairs
)
_JSON_TOKEN = re.compile(
    r"""(?P<string>"[^"\\]*(?:\\.[^"\\]*)*")(?P<colon>\s*:)?
    | (?P<open>[\[{]) | (?P<close>[\]}])
    | (?P<constant>-?Infinity|NaN)
    | (?P<number>-?[0-9]+(?P<fraction>[.eE][-+.eE0-9]*)?)""",
    re.VERBOSE,
)


def load_json(path: Path, *, shown: str) -> Any:
    """The JSON value in ``path`` as plain dicts and lists."""
    return parse_json(read_text(path, shown=shown, max_bytes=MAX_JSON_BYTES), shown=shown)


# Importing msgspec takes 2 ms on a workstation but 30-40 ms in the action's image run under
# the container kit, more than it saves on a small run: a process decodes its first MiB of JSON
# with the strict decoder alone, whose values are the same (tests/test_json_fast.py).
STRICT_ONLY_CHARS = 1 << 20
_DECODED = {"strict_only": 0}  # characters decoded by the strict decoder alone in this process


def parse_json(text: str, *, shown: str) -> Any:
    """The JSON value in ``text``; NaN, Infinity, duplicate keys and deep nesting are refused."""
    value = NEEDS_STRICT if _strict_only(text) else fast_value(text)
    return strict_json(text, shown=shown) if value is NEEDS_STRICT else value


def _strict_only(text: str) -> bool:
    """Whether ``text`` is decoded by the strict decoder alone: the one rule, for files and
    arguments alike, that picks the decoder by how much JSON this process has decoded."""
    if _DECODED["strict_only"] < STRICT_ONLY_CHARS:
        _DECODED["strict_only"] += len(text)
        return True
    return False


class MalformedArguments(ValueError):
    """A tool call's arguments text is not strict JSON; the message says why."""


def decode_arguments(text: str) -> Any:
    """The JSON value of a tool call's arguments text, by the rules of our JSON files: NaN,
    Infinity, numbers out of range, duplicate keys, trailing text and nesting deeper than
    MAX_DEPTH are refused, escaped lone surrogates kept. An empty text is no arguments, {}.
    Whether the value is an object is the caller's question. Raises MalformedArguments.
    """
    text = text or "{}"
    value = NEEDS_STRICT if _strict_only(text) else fast_value(text)
    if value is not NEEDS_STRICT:
        return value
    try:
        value = _JSON.decode(text)
    except RecursionError:  # deeper than the interpreter's limit, so deeper than ours
        raise MalformedArguments(_TOO_DEEP) from None
    except ValueError as exc:
        raise MalformedArguments(f"arguments are not valid JSON: {str(exc)[:120]}") from None
    if too_deep(text, value):  # a fixture's own depth limit does not see inside the string
        raise MalformedArguments(_TOO_DEEP)
    return value


_TOO_DEEP = f"arguments nest deeper than {MAX_DEPTH} levels"


NEEDS_STRICT: Any = object()  # fast_value's answer when only strict_json can decide


def fast_value(text: str) -> Any:
    """The value of ``text`` from msgspec's decoder when it provably equals strict_json's,
    else NEEDS_STRICT.

    msgspec refuses what the strict decoder refuses (NaN, Infinity, numbers that would read as
    infinity, integers of more digits than Python allows, control characters, lone surrogates,
    trailing text) and decodes to the same types and values, except that it keeps the last of
    duplicate keys. A dropped key is seen by counting colons: outside strings a colon ends a
    key, and every colon of a decoded string comes from a colon of the text unless it was
    written ``\\u003a``, so re-encoding gives as many colons as the text exactly when no key
    was dropped. ``tests/test_json_fast.py`` compares the two decoders on generated texts.
    """
    if "\\u003" in text:  # an escaped colon (or digit, or ;<=>?: rare) upsets the count
        return NEEDS_STRICT
    decoder, encoder, reindent, _ = _msgspec()
    try:
        value = decoder.decode(text)
    except (ValueError, RecursionError):  # strict_json names the problem and its line
        return NEEDS_STRICT
    if encoder.encode(value).count(b":") != text.count(":"):
        return NEEDS_STRICT
    return NEEDS_STRICT if _maybe_too_deep(text, reindent) and _depth_exceeds(value) else value


def _maybe_too_deep(text: str, reindent: Callable[[str], str]) -> bool:
    """False when ``text``, which msgspec has decoded, cannot nest deeper than MAX_DEPTH.

    Cheaper than walking the value: msgspec re-indents the text at C speed with one space a
    level, and no string holds a newline, so a value inside L containers starts a line with
    L spaces. A container nested too deep is inside MAX_DEPTH others.
    """
    if text.count("{") + text.count("[") <= MAX_DEPTH:
        return False
    return "\n" + " " * MAX_DEPTH in reindent(text)


class Codecs(NamedTuple):
    """msgspec's codecs, for work whose answer they provably do not change."""

    decoder: msgspec.json.Decoder[Any]
    encoder: msgspec.json.Encoder
    reindent: Callable[[str], str]
    packer: msgspec.msgpack.Encoder


def fast_codecs() -> Codecs | None:
    """msgspec's codecs once this process is past its strict-only start (STRICT_ONLY_CHARS of
    JSON decoded), else None: the same rule as the decoders', whatever was imported before."""
    return None if _DECODED["strict_only"] < STRICT_ONLY_CHARS else _msgspec()


def _value_key(value: Any) -> bytes | None:
    """A key for a parsed JSON value, equal exactly when the values are equal (types, float
    bits and key order kept): its msgpack encoding, once this process is past its strict-only
    start (fast_codecs); None before that, or for a value msgpack cannot write (an integer
    beyond 64 bits, a lone surrogate). Cheaper than any text of the value, for the caches of
    what is learned of a schema that a contract's cases all carry."""
    codecs = fast_codecs()
    if codecs is None:
        return None
    try:
        return codecs.packer.encode(value)
    except (OverflowError, TypeError, ValueError):
        return None


V = TypeVar("V")


def kept(cache: dict[bytes, V], size: int, value: Any, make: Callable[[], V]) -> V:
    """What ``make`` learns of the parsed JSON ``value``, kept in ``cache`` by its
    ``_value_key`` (``size`` values at most: a full cache starts again empty); made anew when
    the value has no key."""
    key = _value_key(value)
    if key is None:
        return make()
    found = cache.get(key)
    if found is None:
        if len(cache) >= size:
            cache.clear()
        found = cache[key] = make()
    return found


@functools.cache
def _msgspec() -> Codecs:
    # Imported on first use: where pydantic is not loaded it brings typing machinery (about
    # 20 ms) to commands that never read JSON.
    import msgspec

    def reindent(text: str) -> str:
        return msgspec.json.format(text, indent=1)

    return Codecs(
        msgspec.json.Decoder(), msgspec.json.Encoder(), reindent, msgspec.msgpack.Encoder()
    )


def strict_json(text: str, *, shown: str) -> Any:
    """parse_json's answer by Python's decoder alone: slower, and it names what it refuses."""
    try:
        value = _JSON.decode(text)
    except json.JSONDecodeError as exc:
        if not text.strip():
            raise PackError(shown, None, "file is empty") from None
        message = f"invalid JSON: {exc.msg} (column {exc.colno})"
        raise PackError(shown, exc.lineno, message) from None
    except (ValueError, RecursionError):  # our refusals, too deep for the C scanner, huge ints
        raise _locate_json_problem(text, shown) from None
    if too_deep(text, value):
        raise _locate_json_problem(text, shown)
    return value


def too_deep(text: str, value: Any) -> bool:
    """Whether ``value``, parsed from ``text``, nests deeper than MAX_DEPTH containers.

    A text with at most MAX_DEPTH opening brackets cannot: two C-speed counts spare most
    fixtures and nearly all tool-call arguments the walk over every container.
    """
    return text.count("{") + text.count("[") > MAX_DEPTH and _depth_exceeds(value)


def _depth_exceeds(value: Any) -> bool:
    level = [value] if type(value) is dict or type(value) is list else []
    for _ in range(MAX_DEPTH):
        below = []
        for container in level:
            for item in container.values() if type(container) is dict else container:
                if type(item) is dict or type(item) is list:
                    below.append(item)
        if not below:
            return False
        level = below
    return True


def _locate_json_problem(text: str, shown: str) -> PackError:
    """The first refused construct in ``text`` (which parses up to it), with its line."""
    open_keys: list[set[str] | None] = []  # per open container: keys seen (objects only)
    line, counted = 1, 0
    for token in _JSON_TOKEN.finditer(text):
        line, counted = line + text.count("\n", counted, token.start()), token.start()
        problem = _json_token_problem(token, open_keys)
        if problem:
            return PackError(shown, line, problem)
    return PackError(shown, None, "invalid JSON")


def _json_token_problem(token: re.Match[str], open_keys: list[set[str] | None]) -> str | None:
    if token["open"]:
        open_keys.append(set() if token["open"] == "{" else None)
        return f"nesting is deeper than {MAX_DEPTH} levels" if len(open_keys) > MAX_DEPTH else None
    if token["close"]:
        open_keys.pop()
    elif token["colon"] and open_keys and (seen := open_keys[-1]) is not None:
        key: str = json.loads(token["string"])
        if key in seen:
            return f"duplicate key {excerpt(key)!r}"
        seen.add(key)
    elif token["constant"]:
        return f"{token['constant']} is not valid JSON; write a number, a string or null"
    elif token["number"] and not token["fraction"] and _too_long(token["number"]):
        return f"invalid JSON: a number has more than {sys.get_int_max_str_digits()} digits"
    elif token["fraction"] and math.isinf(float(token["number"])):
        return f"the number {token['number'][:40]} is out of range (it would read as infinity)"
    return None


_KEY_TOKEN = re.compile(
    r"""(?P<string>"[^"\\]*(?:\\.[^"\\]*)*")(?P<colon>\s*:)?
    | (?P<open>[\[{]) | (?P<close>[\]}]) | (?P<comma>,) | [^\s\[\]{},:"]+  # other scalars""",
    re.VERBOSE,
)


def json_path(loc: Iterable[str | int]) -> str:
    """``$.cases[3].status`` for ``("cases", 3, "status")``."""
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def line_of_key(text: str, loc: tuple[str | int, ...]) -> int | None:
    """The line of the key at ``loc`` (``("request", "tools", 0, "paramters")``) in the JSON
    ``text``, which has parsed; for an array item or the whole document, the line where it
    starts. None when nothing is written there."""
    path: list[str | int | None] = []  # per open container: its current key or item index
    for token in _KEY_TOKEN.finditer(text):
        if token["colon"] and path:
            path[-1] = json.loads(token["string"])
            if tuple(path) == loc:
                return text.count("\n", 0, token.start()) + 1
        elif token["close"]:
            path.pop()
        elif token["comma"]:
            if path and isinstance(path[-1], int):
                path[-1] += 1
        elif not token["colon"]:  # a value starts: an item's, or the document's
            if (not path or isinstance(path[-1], int)) and tuple(path) == loc:
                return text.count("\n", 0, token.start()) + 1
            if token["open"]:
                path.append(0 if token["open"] == "[" else None)
    return None


def _too_long(integer: str) -> bool:
    limit = sys.get_int_max_str_digits()  # 0: no limit
    return 0 < limit < len(integer.lstrip("-"))
