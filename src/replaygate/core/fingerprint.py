"""Stable failure fingerprints: a failure keeps its fingerprint across re-recordings and edits."""

from __future__ import annotations

import hashlib
import re

DIGITS = 12  # hex digits kept of the SHA-256
_FORMAT = re.compile(f"[0-9a-f]{{{DIGITS}}}")
SEPARATOR = "\x1f"  # ASCII unit separator: cannot occur in YAML keys or case ids by accident


def fingerprint(
    pack_id: str, contract: str, case_id: str, classification: str, locator: str
) -> str:
    """First 12 hex digits of SHA-256 over the identifying fields, joined by U+001F.

    No values, recording ids, times or line numbers go in (see docs/fingerprints.md).
    """
    text = SEPARATOR.join((pack_id, contract, case_id, classification, locator))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGITS]


def is_fingerprint(value: object) -> bool:
    """Whether ``value`` has the form of a fingerprint: 12 lowercase hex digits."""
    return isinstance(value, str) and _FORMAT.fullmatch(value) is not None
