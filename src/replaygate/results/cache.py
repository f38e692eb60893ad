"""The results cache: a golden case's result reused while its inputs stay byte-identical.

The cache is trusted input to the run, so it is kept to what can be checked: one JSON file of
plain values (never pickle), each entry decoded strictly into the result types, any entry
that does not decode exactly ignored (a miss, rewritten). What a key covers: ``keys.py``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from replaygate.results.cache_codec import BadEntry, decode, encode
from replaygate.results.model import CaseResult, Status

CACHE_FORMAT = 1
CACHE_FILE = f"results-v{CACHE_FORMAT}.json"
# An entry not used by the last KEEP_RUNS runs that wrote the file is dropped: the file
# follows the packs as cases come and go, and stays near the size of the largest run.
KEEP_RUNS = 10
_KEY_CHARS = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class Window:
    """When an entry holds, in seconds since the epoch (None: no bound): a recording's age
    warning changes with the date, not with the files."""

    start: float | None = None
    end: float | None = None

    def holds(self, now: float) -> bool:
        return (self.start is None or self.start <= now) and (self.end is None or now < self.end)


@dataclass
class Store:
    """The entries of one cache file, by key; what this run used or added is kept."""

    # replaygate's code and judging libraries (cache_keys.code_identity): every key covers
    # it, so a file written by other code holds nothing this run could use
    identity: str = ""
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    generation: int = 0
    hits: int = 0
    misses: int = 0
    _used: set[str] = field(default_factory=set)
    _added: bool = False

    def get(self, key: str, now: float, *, order: int) -> CaseResult | None:
        """The cached result for ``key`` placed at ``order``, or None (a miss)."""
        result = self._decoded(key, now, order)
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
            self._used.add(key)
        return result

    def _decoded(self, key: str, now: float, order: int) -> CaseResult | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        try:
            window = _window(entry)
            result = decode(entry["result"], order=order, duration_s=0.0)
        except (BadEntry, KeyError, TypeError):
            return None
        return result if window.holds(now) else None

    def put(self, key: str, result: CaseResult, window: Window) -> bool:
        """Keep ``result`` under ``key`` when it reads back exactly as it is; whether it was."""
        if not storable(result):
            return False
        data = encode(result)
        try:  # a value JSON cannot hold exactly (a date, a tuple, NaN) is not cached
            text = json.dumps(data, allow_nan=False)
            same = decode(json.loads(text), order=result.order, duration_s=result.duration_s)
        except (TypeError, ValueError):
            return False
        if same != result:
            return False
        self.entries[key] = {"result": data, "start": window.start, "end": window.end}
        self._used.add(key)
        self._added = True
        return True

    @property
    def changed(self) -> bool:
        """Whether the file must be written: an entry added, or one left unused. When every
        entry was used and none added, every entry would get the same new generation, which
        keeps them as they are: the file is left alone."""
        return self._added or len(self._used) != len(self.entries)

    def dump(self) -> str:
        """The file's text: this run's entries, and the others not yet too old."""
        generation = self.generation + 1
        kept = {}
        for key, entry in self.entries.items():
            if key in self._used:
                kept[key] = {**entry, "generation": generation}
            elif entry.get("generation", 0) > generation - KEEP_RUNS:
                kept[key] = entry
        body = {
            "cache_format": CACHE_FORMAT,
            "identity": self.identity,
            "generation": generation,
            "entries": kept,
        }
        return json.dumps(body, allow_nan=False, separators=(",", ":"))


def storable(result: CaseResult) -> bool:
    """An errored case is judged again: what made it error (an unreadable file, a regex out
    of time, an unset variable) may be gone next time, and its reason may name it."""
    return result.status is not Status.ERROR and not result.known


def _window(entry: Mapping[str, Any]) -> Window:
    start, end = entry["start"], entry["end"]
    for bound in (start, end):
        if bound is not None and (type(bound) is not float or not math.isfinite(bound)):
            raise BadEntry("not a time")
    return Window(start, end)


def load_store(folder: str, identity: str) -> Store:
    """The cache in ``folder``: empty when it has no file, one that is not a cache file, or
    one written by other code (``identity``): its entries would only weigh on every run."""
    try:
        with open(os.path.join(folder, CACHE_FILE), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return Store(identity)
    if not _is_cache_file(data) or data["identity"] != identity:
        return Store(identity)
    entries = {
        key: entry
        for key, entry in data["entries"].items()
        if _KEY_CHARS.issuperset(key) and len(key) == 64 and _is_entry(entry)
    }
    return Store(identity, entries, data["generation"])


def _is_cache_file(data: Any) -> bool:
    return (
        type(data) is dict
        and data.keys() == {"cache_format", "identity", "generation", "entries"}
        and data["cache_format"] == CACHE_FORMAT
        and type(data["generation"]) is int
        and type(data["entries"]) is dict
    )


def _is_entry(entry: Any) -> bool:
    """An entry of the right shape; its result is decoded strictly when it is used."""
    return (
        type(entry) is dict
        and entry.keys() == {"result", "start", "end", "generation"}
        and type(entry["generation"]) is int
    )
