"""Sharding: a stable, balanced subset of cases for job k of n."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from replaygate.core.errors import UsageError

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True, slots=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def select(self, keys: Sequence[tuple[str, ...]]) -> frozenset[tuple[str, ...]]:
        """Deal the sorted case keys round-robin: shard sizes differ by at most one."""
        ordered = sorted(set(keys))
        return frozenset(key for n, key in enumerate(ordered) if n % self.count == self.index - 1)


def parse_shard(text: str) -> Shard:
    match = _SHARD.fullmatch(text)
    if not match:
        raise UsageError(f"shard must look like K/N (for example 2/4), got {text!r}")
    index, count = int(match[1]), int(match[2])
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"shard {text!r}: K must be between 1 and N, and N at least 1")
    return Shard(index, count)
