"""Secrets out of everything we write or print: the one redaction rule (docs/recordings.md).

Applied to a whole document at the single point where a recording is written, and to what
a provider call returns before anyone sees it. Always on; a pack's ``redact:`` paths add to it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

from replaygate.assertions.jsonpath import compile_path

REDACTED = "[redacted]"
SECRET_ENV_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET")
# Shorter values would redact ordinary words and numbers all over a response.
MIN_SECRET_LENGTH = 8
_SECRET_KEY = re.compile(
    r"(proxy[-_]?)?authorization|(x[-_]?)?api[-_]?key|token|secret", re.IGNORECASE
)
_KEY_SHAPE = r"sk-[A-Za-z0-9_*-]{8,}"


@dataclass(frozen=True, slots=True)
class Redactor:
    """Scrubs secret-named keys, secret values and key-shaped strings from JSON values."""

    values: tuple[str, ...]  # secret values, longest first
    pattern: re.Pattern[str]

    @classmethod
    def build(cls, environ: Mapping[str, str], keys: Iterable[str] = ()) -> Redactor:
        """From the keys a run uses and the environment's *_KEY, *_TOKEN, *_SECRET values."""
        found = [*keys, *(v for k, v in environ.items() if k.upper().endswith(SECRET_ENV_SUFFIXES))]
        return cls._of(found)

    @classmethod
    def _of(cls, found: Iterable[str], named: Iterable[str] = ()) -> Redactor:
        """``named``: values a pack's paths point at, redacted whatever their length."""
        secrets = {v for v in found if len(v) >= MIN_SECRET_LENGTH}
        values = secrets | set(named)
        # inside JSON text, as dumped with and without ensure_ascii
        values |= {json.dumps(v, ensure_ascii=a)[1:-1] for v in values for a in (False, True)}
        long_enough = secrets | {v for v in named if len(v) >= MIN_SECRET_LENGTH}
        values |= {form for v in long_enough for form in encodings(v)}
        ordered = tuple(sorted(values, key=len, reverse=True))
        alternatives = [re.escape(v) for v in ordered] + [_KEY_SHAPE]
        return cls(ordered, re.compile("|".join(alternatives)))

    def with_paths(self, document: Any, paths: Iterable[str]) -> Redactor:
        """This redactor plus every string that ``paths`` (JSONPaths) name in ``document``."""
        extra = [
            text
            for path in paths
            for found in compile_path(path).find(document)
            for text in _strings(found)
        ]
        return self._of(self.values, extra) if extra else self

    def text(self, text: str) -> str:
        return self.pattern.sub(REDACTED, text)

    def value(self, value: Any) -> Any:
        """A copy of a JSON value with every secret replaced by ``[redacted]``."""
        kind = type(value)  # exact types first: this walks every recorded body
        if kind is str:
            return self.pattern.sub(REDACTED, value)
        if kind is dict or isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                secret_named = _SECRET_KEY.fullmatch(str(key))
                out[self._key(key, out)] = REDACTED if secret_named else self.value(item)
            return out
        if kind is list or kind is tuple:
            return [self.value(item) for item in value]
        return self.text(value) if isinstance(value, str) else value

    def _key(self, key: Any, taken: Mapping[Any, Any]) -> Any:
        """The key redacted too (a secret can be a key); suffixed when it would collide."""
        clean = self.text(key) if isinstance(key, str) else key
        if clean not in taken:
            return clean
        number = 2
        while f"{clean} ({number})" in taken:
            number += 1
        return f"{clean} ({number})"


def encodings(secret: str) -> set[str]:
    """The forms a provider may echo ``secret`` in: upper and lower case, URL-encoded (either
    hex case, ``+`` for spaces), every character JSON ``\\u``-escaped (either hex case), and
    base64, standard and URL-safe, at each of the three alignments it can have inside a
    longer base64 text (``Basic`` credentials, a token)."""
    forms = {secret.upper(), secret.lower()}
    for quoted in (quote(secret, safe=""), quote_plus(secret, safe="")):
        forms |= {quoted, re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), quoted)}
    forms |= {"".join(f"\\u{ord(c):{case}}" for c in secret) for case in ("04x", "04X")}
    raw = secret.encode()
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + raw).decode()
        # only the characters made from the secret's bits alone, never the neighbours'
        core = encoded[-(-8 * shift // 6) : (8 * (shift + len(raw))) // 6]
        forms |= {core, core.translate(_URLSAFE)}
    return {form for form in forms if form}


_URLSAFE = str.maketrans("+/", "-_")


def not_text(document: Any, paths: Iterable[str]) -> list[str]:
    """Warnings for ``paths`` that point at a number, a boolean or null: only text is redacted,
    so those values are written as they are (the value itself is not shown)."""
    warnings = []
    for path in paths:
        kinds = sorted(
            {_KINDS.get(type(found), "value") for found in compile_path(path).find(document)}
            - {"text", "object", "array"}
        )
        if kinds:
            warnings.append(
                f"redact: {path} points at {' and '.join(kinds)}, which is not text: "
                "written as it is"
            )
    return warnings


_KINDS = {
    str: "text",
    dict: "object",
    list: "array",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []
