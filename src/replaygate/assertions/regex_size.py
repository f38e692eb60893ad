"""How many elements compiling a pattern would build, judged before compiling it.

The regex module copies counted repeats at compile time (``a{10**9}`` would take 260 GB), so
a pattern from a contract or a fixture's tool schema is sized first. Where Python's ``re`` reads
the pattern, its parser gives the exact structure; the regex module's own syntax is read from
the text.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from re import _parser as sre_parse  # type: ignore[attr-defined]  # no public regex parser
from typing import Any

# A flag group that turns on verbose mode, where "#" starts a comment and "(" may be text.
_VERBOSE = re.compile(r"\(\?[a-zA-Z^-]*x")
_REPEATS = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, sre_parse.POSSESSIVE_REPEAT}


def expanded_size(pattern: str) -> int:
    """About how many elements ``regex.compile`` builds for ``pattern``; errs high.

    Raises ValueError for a verbose-mode pattern that ``re`` cannot read: its comments could
    hide the structure from a reading of the text.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "possible nested set" and the like: not ours to say
            parsed = sre_parse.parse(pattern)
    except (re.error, OverflowError, RecursionError):
        if _VERBOSE.search(pattern):
            raise ValueError("verbose mode (?x) needs a pattern Python's re can read") from None
        return _scanned_size(pattern)
    return _parsed_size(parsed)


def _parsed_size(items: Any) -> int:
    total = 0
    for op, arg in items:
        if op in _REPEATS:
            total += max(arg[0], 1) * _parsed_size(arg[2])
        else:
            total += 1 + sum(_parsed_size(sub) for sub in _subpatterns(arg))
    return total


def _subpatterns(arg: Any) -> Iterable[Any]:
    if isinstance(arg, sre_parse.SubPattern):
        yield arg
    elif isinstance(arg, tuple | list):
        for item in arg:
            yield from _subpatterns(item)


_COUNTED = re.compile(r"\{(\d*)(?:,\d*)?\}")  # {m}, {m,}, {m,n}: `regex` copies the atom m times
_GROUP_HEAD = re.compile(r"\?(?:P?<\w*>|<[=!]|[:=!>|]|[\w^-]*:?)")  # (?:, (?P<n>, (?<=, (?i:
_BRACED_ESCAPES = frozenset("NpP")  # \N{WHITE SMILING FACE}, \p{L}: braces that repeat nothing


def _scanned_size(pattern: str) -> int:
    """About how many elements ``regex.compile`` builds for ``pattern``, read from its text.

    For the syntax only the regex module reads (``\\p{L}``, ``[[:alpha:]]``). The reading errs
    high: an unusual construct can only count more. Comment groups are skipped as the engine
    skips them; verbose mode, where ``#`` starts a comment, is refused before this is called.
    """
    sizes, last = [0], [0]  # per open group: its size so far, and the size of its last atom
    position = 0
    while position < len(pattern):
        char = pattern[position]
        repeat = _COUNTED.match(pattern, position) if char == "{" else None
        if repeat:
            count = max(int(repeat[1] or 0), 1)
            sizes[-1] += last[-1] * (count - 1)
            last[-1] *= count
            position = repeat.end()
        elif pattern.startswith("(?#", position):  # a comment: it ends at the first ")"
            close = pattern.find(")", position)
            position = len(pattern) if close < 0 else close + 1
        elif char == "(":
            sizes.append(0)
            last.append(0)
            head = _GROUP_HEAD.match(pattern, position + 1)
            position = head.end() if head else position + 1
        elif char == ")" and len(sizes) > 1:
            inner = sizes.pop()
            last.pop()
            sizes[-1] += inner
            last[-1] = inner
            position += 1
        else:
            position = _atom_end(pattern, position)
            sizes[-1] += 1
            last[-1] = 1
    return sum(sizes)


def _atom_end(pattern: str, start: int) -> int:
    """Where the atom at ``start`` ends: an escape, a character class, or one character."""
    if pattern[start] == "\\":
        braced = pattern[start + 1 : start + 2] in _BRACED_ESCAPES
        if braced and pattern.startswith("{", start + 2):
            close = pattern.find("}", start + 3)
            return len(pattern) if close < 0 else close + 1
        return start + 2
    if pattern[start] == "[":
        return _class_end(pattern, start)
    return start + 1


def _class_end(pattern: str, start: int) -> int:
    position = start + 1
    position += pattern.startswith("^", position)
    position += pattern.startswith("]", position)  # a leading ] is a member
    while position < len(pattern):
        if pattern[position] == "\\":
            position += 2
        elif pattern.startswith("[:", position):  # a POSIX class, [:alpha:]
            close = pattern.find(":]", position + 2)
            position = position + 1 if close < 0 else close + 2
        elif pattern[position] == "]":
            return position + 1
        else:
            position += 1
    return len(pattern)
