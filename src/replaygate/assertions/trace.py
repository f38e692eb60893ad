"""The trace model: an agent run as ordered turns of text, tool calls and token usage."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ASSISTANT = "assistant"


@dataclass(frozen=True, slots=True)
class Usage:
    input: int = 0
    output: int = 0
    cache_creation: int = 0
    cache_read: int = 0
    reported: int = 0  # the total the provider reported, which may count more kinds

    @property
    def total(self) -> int:
        counted = self.input + self.output + self.cache_creation + self.cache_read
        return max(counted, self.reported)


@dataclass(frozen=True, slots=True)
class TraceCall:
    name: str
    arguments: Mapping[str, Any] | None  # None: the recorded arguments are not a JSON object
    id: str | None = None
    result: Any = None
    is_error: bool = False
    answered: bool | None = None  # a question to the user: whether a scripted answer matched

    @property
    def questions(self) -> int:
        """The questions the call asks: a batch (``questions: [...]``) asks each of its items."""
        batch = self.arguments.get("questions") if self.arguments is not None else None
        return len(batch) if isinstance(batch, list) and batch else 1


@dataclass(frozen=True, slots=True)
class Turn:
    role: str  # "assistant", "user", "system" or "tool"
    text: str = ""
    calls: tuple[TraceCall, ...] = ()
    usage: Usage | None = None


@dataclass(frozen=True, slots=True)
class Trace:
    """A whole run. ``turns_used``, ``tokens`` and ``sandbox`` are what the recorder said, if
    anything; the properties below prefer the stricter of recorded and counted."""

    turns: tuple[Turn, ...]
    final_output: str
    sandbox: str | None = None
    turns_used: int | None = None
    tokens: int | None = None
    stopped_at_cap: bool = False  # the recorder stopped the run at its max_turns
    unanswered: int | None = None  # the questions the recorder counted as unanswered
    calls: tuple[TraceCall, ...] = field(init=False)  # every call of every turn, in order

    def __post_init__(self) -> None:
        # every assertion walks the calls: flattened once (the dataclass is frozen)
        object.__setattr__(self, "calls", tuple(c for turn in self.turns for c in turn.calls))

    @property
    def turn_count(self) -> int:
        counted = sum(turn.role == ASSISTANT for turn in self.turns)
        return max(counted, self.turns_used or 0)

    @property
    def total_tokens(self) -> int:
        counted = sum(turn.usage.total for turn in self.turns if turn.usage is not None)
        return max(counted, self.tokens or 0)
