"""How every message names a place in a file."""

from __future__ import annotations


def where(file: str, line: int | None) -> str:
    """``file:line``, or ``file`` when no line applies."""
    return f"{file}:{line}" if line else file
