"""Classification rules: why an expected call went unmatched, and which failure is primary."""

from __future__ import annotations

import re
from collections.abc import Sequence

from replaygate.core.model import Classification, Failure, rank

MAX_CODE_CHARS = 40
_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


def recorded_error_class(code: str | None) -> Classification | str:
    """The classification of a recorded provider error with ``code``.

    The code itself (``rate_limit_exceeded``) when it is a short snake_case word;
    otherwise unexpected_error. A code is text from the recording: as a classification
    it becomes an annotation title and a summary cell, where a URL, a mention or an
    invisible character must not go. The judge keeps any other code in the message.
    """
    if code is not None and len(code) <= MAX_CODE_CHARS and _SNAKE_CASE.fullmatch(code):
        return code
    return Classification.UNEXPECTED_ERROR


def unmatched_call_class(
    name: str, *, any_calls: bool, leftover_names: Sequence[str], unexpected_names: Sequence[str]
) -> Classification:
    """Why an expected call to ``name`` found no partner, judged by the actual calls left over.

    tool_not_invoked when there were no calls at all, or no leftover call of that
    name and none to an unexpected tool; wrong_tool when some call went to a tool
    the contract does not expect; schema_violation when a leftover call of that
    name failed its argument invariants (decided by the caller, which has them).
    """
    if not any_calls:
        return Classification.TOOL_NOT_INVOKED
    if name in leftover_names:
        return Classification.SCHEMA_VIOLATION
    if unexpected_names:
        return Classification.WRONG_TOOL
    return Classification.TOOL_NOT_INVOKED


def primary(failures: Sequence[Failure]) -> Failure:
    """The failure that names the case: highest precedence, first in contract order."""
    return min(failures, key=lambda failure: rank(failure.classification))
