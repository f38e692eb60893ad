"""Stable failure fingerprints: a failure keeps its fingerprint across re-recordings and edits."""

from __future__ import annotations

import hashlib

SEPARATOR = "\x1f"  # ASCII unit separator: cannot occur in YAML keys or case ids by accident


def fingerprint(
    pack_id: str, contract: str, case_id: str, classification: str, locator: str
) -> str:
    """First 12 hex digits of SHA-256 over the identifying fields, joined by U+001F.

    No values, recording ids, times or line numbers go in (see docs/fingerprints.md).
    """
    text = SEPARATOR.join((pack_id, contract, case_id, classification, locator))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
