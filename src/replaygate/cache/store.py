"""The results cache: a golden case's result reused while its inputs stay byte-identical.

The cache is trusted input to the run, so it is kept to what can be checked: one JSON file of
plain values (never pickle), each entry decoded strictly into the result types, any entry
that does not decode exactly ignored (a miss, rewritten). What a key covers: ``cache_keys.py``.
Beside the case results, one entry per contract file holds what parsing it told the look-up
(``cache_contracts.py``): an unchanged contract whose cases all hit is never parsed.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from replaygate.cache.codec import BadEntry, Result, Strict, built, convert, decode, encode
from replaygate.core.model import CaseResult, Status

CACHE_FORMAT = 2  # 2: the contracts' entries
CACHE_FILE = f"results-v{CACHE_FORMAT}.json"
# An entry not used by the last KEEP_RUNS runs that wrote the file is dropped: the file
# follows the packs as cases come and go, and stays near the size of the largest run.
KEEP_RUNS = 10
_KEY_CHARS = frozenset("0123456789abcdef")
_ENTRY_KEYS = {"result", "start", "end", "generation"}
_CONTRACT_KEYS = {"env", "cases", "generation"}


# What a case's result names: its pack's id, its contract's path in the pack and file, its id.
Names = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class Window:
    """When an entry holds, in seconds since the epoch (None: no bound): a recording's age
    warning changes with the date, not with the files."""

    start: float | None = None
    end: float | None = None


class _Entry(Strict):
    """A result's entry, decoded when its key is looked up."""

    result: Result
    start: int | float | None  # a whole number is refused: as written, a bound is a float
    end: int | float | None
    generation: int


class _File(Strict):
    """The file: each entry left undecoded (most runs use few, or decode them one at a time
    as they are looked up). A key is not checked here: it is looked up by a digest, so one
    that is not a digest is never found, and is dropped when the file is written again."""

    cache_format: int
    identity: str
    generation: int
    entries: dict[str, msgspec.Raw]
    contracts: dict[str, msgspec.Raw]


_ENTRY = msgspec.json.Decoder(_Entry)
_FILE = msgspec.json.Decoder(_File)


@dataclass
class Store:
    """The entries of one cache file, by key; what this run used or added is kept."""

    # replaygate's code and judging libraries (cache_keys.code_identity): every key covers
    # it, so a file written by other code holds nothing this run could use
    identity: str = ""
    # a result's entry, by its key: as read from the file (undecoded) or put by this run
    entries: dict[str, msgspec.Raw | dict[str, Any]] = field(default_factory=dict)
    # a contract file's entry, by its key (cache_keys.Keys.contract): as read (undecoded:
    # cache_contracts decodes it when used) or put by this run
    contracts: dict[str, msgspec.Raw | dict[str, Any]] = field(default_factory=dict)
    generation: int = 0
    hits: int = 0
    misses: int = 0
    _used: set[str] = field(default_factory=set)
    _used_contracts: set[str] = field(default_factory=set)
    _added: bool = False

    def get(self, key: str, now: float, *, order: int, names: Names) -> CaseResult | None:
        """The cached result for ``key`` placed at ``order``, or None (a miss)."""
        result = self._decoded(key, now, order, names)
        if result is None:
            self.misses += 1
        else:
            self.hit(key)
        return result

    def peek(self, key: str, now: float, order: int, names: Names) -> CaseResult | None:
        """The cached result for ``key`` placed at ``order``, neither counted nor kept: a
        contract's look-up before it is known which of its cases the run selects."""
        return self._decoded(key, now, order, names)

    def has_all(self, keys: list[str]) -> bool:
        """Whether every one of ``keys`` has an entry (decoded or not when it is looked up)."""
        return all(key in self.entries for key in keys)

    def hit(self, key: str) -> None:
        """Count a hit on ``key`` and keep its entry."""
        self.hits += 1
        self._used.add(key)

    def contract(self, key: str) -> msgspec.Raw | dict[str, Any] | None:
        """The contract entry under ``key``, undecoded (cache_contracts decodes it), or None."""
        return self.contracts.get(key)

    def keep_contract(self, key: str) -> None:
        """Keep the contract entry under ``key``: this run used it."""
        self._used_contracts.add(key)

    def put_contract(self, key: str, data: dict[str, Any]) -> None:
        """Keep ``data`` (an entry without its generation) under ``key``; the file is written
        only when that changes an entry."""
        old = _plain({key: self.contracts[key]}, _CONTRACT_KEYS) if key in self.contracts else {}
        if key not in old or any(old[key][name] != value for name, value in data.items()):
            self.contracts[key] = {**data, "generation": self.generation}
            self._added = True
        self._used_contracts.add(key)

    def _decoded(self, key: str, now: float, order: int, names: Names) -> CaseResult | None:
        """The result under ``key`` when it holds at ``now`` and is the result of the case
        ``names`` says: a key covers what a result names, so an entry that names another
        case is not one this run stored, whatever put it there (a miss)."""
        entry = self.entries.get(key)
        if entry is None:
            return None
        try:
            found = _opened(entry)
            if not _holds(found.start, found.end, now) or _names(found.result) != names:
                return None
            return built(found.result, order=order, duration_s=0.0)
        except (BadEntry, RecursionError, OverflowError):  # never a crash: a miss
            return None

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
        entry = {"result": data, "start": window.start, "end": window.end}
        self.entries[key] = {**entry, "generation": self.generation}
        self._used.add(key)
        self._added = True
        return True

    @property
    def changed(self) -> bool:
        """Whether the file must be written: an entry added, or one left unused. When every
        entry was used and none added, every entry would get the same new generation, which
        keeps them as they are: the file is left alone."""
        unused = len(self._used) != len(self.entries)
        return self._added or unused or len(self._used_contracts) != len(self.contracts)

    def dump(self) -> str:
        """The file's text: this run's entries, and the others not yet too old."""
        generation = self.generation + 1
        body = {
            "cache_format": CACHE_FORMAT,
            "identity": self.identity,
            "generation": generation,
            "entries": _kept(_plain(self.entries, _ENTRY_KEYS), self._used, generation),
            "contracts": _kept(
                _plain(self.contracts, _CONTRACT_KEYS), self._used_contracts, generation
            ),
        }
        return json.dumps(body, allow_nan=False, separators=(",", ":"))


def _kept(
    entries: Mapping[str, dict[str, Any]], used: set[str], generation: int
) -> dict[str, dict[str, Any]]:
    """The entries this run used, of ``generation`` now, and the others not yet too old."""
    kept = {}
    for key, entry in entries.items():
        if key in used:
            kept[key] = {**entry, "generation": generation}
        elif entry.get("generation", 0) > generation - KEEP_RUNS:
            kept[key] = entry
    return kept


def storable(result: CaseResult) -> bool:
    """An errored case is judged again: what made it error (an unreadable file, a regex out
    of time, an unset variable) may be gone next time, and its reason may name it."""
    return result.status is not Status.ERROR and not result.known


def _opened(entry: msgspec.Raw | dict[str, Any]) -> _Entry:
    """A result's entry decoded strictly. Raises BadEntry."""
    if isinstance(entry, dict):
        return convert(entry, _Entry)
    try:
        return _ENTRY.decode(entry)
    except msgspec.DecodeError as exc:  # its ValidationError too
        raise BadEntry(str(exc)) from None


def _plain(
    entries: Mapping[str, msgspec.Raw | dict[str, Any]], keys: set[str]
) -> dict[str, dict[str, Any]]:
    """The entries as JSON values, to be written again: those put by this run, and those
    read that have the right shape (``keys``) under a well-formed key (the others are
    dropped)."""
    plain = {}
    for key, entry in entries.items():
        if isinstance(entry, dict):
            plain[key] = entry
            continue
        try:
            found = msgspec.json.decode(entry)
        except (msgspec.DecodeError, RecursionError):
            continue
        if _well_formed(key) and _shaped(found, keys):
            plain[key] = found
    return plain


def _names(result: Result) -> Names:
    return (result.pack, result.contract, result.contract_file, result.case_id)


def _holds(start: float | None, end: float | None, now: float) -> bool:
    """Whether the window an entry's bounds make (a Window as stored) holds at ``now``: from
    its start, until before its end. Raises BadEntry for a bound that is not a finite float."""
    for bound in (start, end):
        if bound is not None and (type(bound) is not float or not math.isfinite(bound)):
            raise BadEntry("not a time")
    return (start is None or start <= now) and (end is None or now < end)


def load_store(folder: str, identity: str) -> Store:
    """The cache in ``folder``: empty when it has no file, one that is not a cache file, or
    one written by other code (``identity``): its entries would only weigh on every run.
    msgspec decodes it (three times as fast as json); it refuses NaN, which this file never
    holds."""
    try:
        with open(os.path.join(folder, CACHE_FILE), "rb") as handle:
            data = _FILE.decode(handle.read())
    except (OSError, ValueError, RecursionError):  # msgspec's errors are ValueErrors
        return Store(identity)
    if data.cache_format != CACHE_FORMAT or data.identity != identity:
        return Store(identity)
    entries: dict[str, msgspec.Raw | dict[str, Any]] = dict(data.entries)
    contracts: dict[str, msgspec.Raw | dict[str, Any]] = dict(data.contracts)
    return Store(identity, entries, contracts, data.generation)


def _well_formed(key: str) -> bool:
    return len(key) == 64 and _KEY_CHARS.issuperset(key)


def _shaped(entry: Any, keys: set[str]) -> bool:
    return type(entry) is dict and entry.keys() == keys and type(entry["generation"]) is int
