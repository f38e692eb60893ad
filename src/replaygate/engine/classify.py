"""Classification rules: why an expected call went unmatched, and which failure is primary."""

from __future__ import annotations

from collections.abc import Sequence

from replaygate.results.model import Classification, Failure, rank


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
