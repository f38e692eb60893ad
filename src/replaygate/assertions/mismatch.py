"""What a failed check reports, and what a composite operator asks of its nested assertions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Env = Mapping[str, str]
MismatchKind = Literal["path_not_found", "value", "error"]


@dataclass(frozen=True, slots=True)
class Mismatch:
    """Why one check of an assertion did not hold.

    kind "path_not_found": the path matched nothing where a value was needed;
    "value": a value was found and failed the operator;
    "error": the check could not be decided (a regex ran past its time bound).
    ``locator`` names the check (``assertions.output_invariants[0]:all_of[1]:equals``),
    ``line`` is its contract line and ``path`` the JSONPath the value was found at.
    """

    kind: MismatchKind
    operator: str
    message: str
    expected: Any
    actual: Any
    line: int
    locator: str
    path: str


class Nested(Protocol):
    """A nested assertion, as a composite operator (all_of, each, ...) sees it."""

    @property
    def locator(self) -> str: ...

    @property
    def line(self) -> int: ...

    def evaluate(self, value: Any, env: Env) -> list[Mismatch]:
        """The mismatches of the nested assertion against ``value`` (its ``$``)."""
        ...

    def describe(self) -> str:
        """The assertion in a few words, for messages: ``$.name: equals 'search'``."""
        ...


@dataclass(frozen=True, slots=True)
class Located:
    """A composite operator that fails as a whole (no alternative holds), with the line of the
    nested check that explains it best: annotations land there, the message keeps the context."""

    message: str
    line: int


# What an operator's check returns: None when the value passes, a message when it fails,
# or (composite operators) the mismatches of its nested assertions, or a located message.
Outcome = str | Located | list[Mismatch] | None
