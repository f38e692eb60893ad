"""A contract file's cache entry: what parsing it told the look-up, so that an unchanged
contract whose cases all hit is never parsed or compiled.

The entry holds the environment variables the contract reads and its golden cases (each
case's key covers them, as ``repr``); it is decoded strictly, like a result, and anything
else is a miss. What the run and its reports need of a contract whose cases all hit is its
path, its file and its cases: each hit's result carries the rest.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec

from replaygate import parallel
from replaygate.cache.codec import BadEntry, Strict, convert, strict_record
from replaygate.cache.keys import Keys, contract_entry_key, env_names
from replaygate.cache.store import Store, load_store
from replaygate.core.model import CaseResult, Problem
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.files import MAX_YAML_BYTES, shown_path
from replaygate.loading.pack import ContractLoader, one_by_one, parse_contract
from replaygate.loading.packs import ContractItem, Pack, contract_path

if TYPE_CHECKING:
    _Case = Strict
else:  # a golden case in a contract's entry: GoldenCase's fields, in its order, as a record
    _Case = strict_record(GoldenCase)


class _Entry(Strict):
    env: tuple[str, ...]
    cases: tuple[_Case, ...]


class _Stored(_Entry):
    """An entry as the cache file holds it."""

    generation: int


_STORED = msgspec.json.Decoder(_Stored)


@dataclass(frozen=True, slots=True)
class Unparsed(Contract):
    """A contract known from its cache entry, not parsed: every case of it hits, so it is
    never judged, and it has no checks."""

    env_names: tuple[str, ...] = ()


def contract_entry(contract: Contract, reads: set[str]) -> dict[str, Any] | None:
    """The entry of a parsed contract that reads the variables ``reads``; None when it
    would not read back exactly."""
    names = sorted(reads)
    cases = [{f.name: getattr(c, f.name) for f in fields(c)} for c in contract.golden_cases]
    data = {"env": names, "cases": cases}
    try:
        plain = json.loads(json.dumps(data, allow_nan=False))
        same = _decoded(plain)
    except (TypeError, ValueError):
        return None
    return plain if same == (tuple(names), contract.golden_cases) else None


def unparsed(entry: msgspec.Raw | dict[str, Any], path: str, file: str) -> Unparsed | None:
    """The contract an entry stands for; None when it does not decode exactly (a miss)."""
    try:
        names, cases = _decoded(entry)
    except BadEntry:
        return None
    return Unparsed(
        path=path, file=file, tool="", expected_calls=(), expected_names=frozenset(),
        allowed_misses=0, strict_order=False, strict_match=False, output_invariants=(),
        input_invariants=(), golden_cases=cases, allowed_errors=frozenset(), lines={},
        env_names=names,
    )  # fmt: skip


def _decoded(
    entry: msgspec.Raw | dict[str, Any],
) -> tuple[tuple[str, ...], tuple[GoldenCase, ...]]:
    """An entry as read from the file (raw) or put by this run, decoded strictly. Raises
    BadEntry."""
    found: _Entry
    if isinstance(entry, dict):
        found = convert({"env": entry["env"], "cases": entry["cases"]}, _Entry)
    else:
        try:
            found = _STORED.decode(entry)
        except (msgspec.DecodeError, RecursionError) as exc:  # its ValidationError too
            raise BadEntry(str(exc)) from None
    # positionally: _Case has GoldenCase's fields in their order
    cases = tuple(GoldenCase(*msgspec.structs.astuple(case)) for case in found.cases)
    return found.env, cases


CaseName = tuple[Path, str, str]  # the pack's folder, the contract's path in it, the case id
# A contract whose entry and every case's result are in the cache: the entry's key and its
# cases' keys, in order (what another process sends back).
HitKeys = tuple[str, list[str]]
# The part of a warm run's contract bytes this process keys and loads itself; another
# process keys the rest meanwhile (reading and hashing the files is most of a warm run),
# and this one decodes every result, the other's too.
OWN_SHARE = 0.4


class WarmContracts:
    """``run --cache``'s contract loader: a contract whose entry and every case hit is not
    parsed (an ``Unparsed``, its cases' results kept for the look-up); any other is parsed,
    and its entry stored. Where forking pays (replaygate/parallel.py), another process
    computes the keys of part of the contracts while this one loads the rest."""

    def __init__(
        self, folder: str, keys: Keys, identity: str, refuse: Callable[[Pack], None], jobs: int
    ) -> None:
        self.now = time.time()  # the time the cached results must hold at
        self.found: dict[CaseName, tuple[str, CaseResult]] = {}
        self.keys = keys
        self._folder, self._identity, self._refuse = folder, identity, refuse
        self._jobs = jobs
        self._store: Store | None = None
        self._checked: set[Path] = set()
        # the run's count of the cases loaded so far: where a hit is likely placed in the run
        # (a selection of cases or a contract that fails to load moves it)
        self._order = 0

    def store(self) -> Store:
        """The cache, read at first use: after its folder is known to be outside the packs'
        repositories (``refuse``)."""
        if self._store is None:
            self._store = load_store(self._folder, self._identity)
        return self._store

    def batch(self, items: Sequence[ContractItem]) -> list[Contract | list[Problem]]:
        """Every contract of the run (a ContractBatch), in order."""
        sizes = [parallel.file_size(item.path) for item in items] if self._jobs >= 2 else []
        if not parallel.worth_forking(self._jobs, lambda: sum(sizes)):
            return one_by_one(self)(items)
        for item in items:  # the cache is read before the fork, so every pack is checked
            self._check(item.pack)
        self.store()
        ours, theirs = parallel.split(sizes, [OWN_SHARE, 1 - OWN_SHARE])
        rest = items[theirs[0] : theirs[1]]

        def share(bounds: tuple[int, int]) -> list[Contract | list[Problem]] | list[HitKeys | None]:
            if bounds == ours:
                return one_by_one(self)(items[ours[0] : ours[1]])
            return [self._hit_keys(item.path, item.pack) for item in rest]

        outcomes, found = parallel.map_shares(share, [ours, theirs])
        return [
            *cast("list[Contract | list[Problem]]", outcomes),
            *one_by_one(self._known(cast("list[HitKeys | None]", found)))(rest),
        ]

    def _known(self, found: list[HitKeys | None]) -> ContractLoader:
        """The loader of the contracts another process keyed, in turn, each with its keys
        when it found them all in the cache; any other is loaded as it would be here."""
        answers = iter(found)

        def load(path: Path, pack: Pack) -> Contract:
            keys = next(answers)
            contract = self._known_hit(path, pack, keys) if keys is not None else None
            if contract is None:
                return self(path, pack)
            self._order += len(contract.golden_cases)
            return contract

        return load

    def __call__(self, path: Path, pack: Pack) -> Contract:
        contract = self._load(path, pack)
        self._order += len(contract.golden_cases)
        return contract

    def _check(self, pack: Pack) -> None:
        """Refuse the cache for ``pack`` (before it is read for the pack's contracts) when it
        lies inside the pack's repository; once a pack, and only for a cached pack."""
        if pack.directory not in self._checked and self.keys.pack(pack) is not None:
            self._refuse(pack)
            self._checked.add(pack.directory)

    def _load(self, path: Path, pack: Pack) -> Contract:
        self._check(pack)
        read = self._read(path, pack)
        if read is None:
            return parse_contract(path, pack)
        pack_key, name, file, raw = read
        key = contract_entry_key(pack_key, name, file, raw)
        warm = self._unparsed(key, pack_key, pack, name, file, raw)
        if warm is not None:
            return warm
        contract = parse_contract(path, pack)
        entry = contract_entry(contract, env_names(contract))
        if entry is not None:
            self.store().put_contract(key, entry)
        return contract

    def _read(self, path: Path, pack: Pack) -> tuple[bytes, str, str, bytes] | None:
        """The pack's key, the contract's name and file, and its bytes; None when the
        contract is parsed without the cache (its pack is not cached, or it cannot be read
        here: it fails as it would uncached)."""
        pack_key = self.keys.pack(pack)
        if pack_key is None:
            return None
        try:
            # sized first, as the parse would: a file it refuses unread (too large, a FIFO
            # that would block) is not read whole here either
            found = os.stat(path)
            if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_YAML_BYTES:
                return None
            raw = path.read_bytes()
        except OSError:
            return None
        name, file = contract_path(path, pack.directory, pack.root), shown_path(path, pack.root)
        return pack_key, name, file, raw

    def _entry(self, key: str, name: str, file: str) -> Unparsed | None:
        data = self.store().contract(key)
        return unparsed(data, name, file) if data is not None else None

    def _unparsed(
        self, key: str, pack_key: bytes, pack: Pack, name: str, file: str, raw: bytes
    ) -> Unparsed | None:
        """The contract of the entry under ``key`` when every case of it hits, else None."""
        contract = self._entry(key, name, file)
        if contract is None:
            return None
        keys = self.keys.cases(pack_key, pack, contract, contract.env_names, raw)
        return self._hits(key, pack, contract, keys) if keys is not None else None

    def _hit_keys(self, path: Path, pack: Pack) -> HitKeys | None:
        """The keys of a contract whose entry and cases' results are all in the cache (the
        process that loads decodes them), else None (it loads it)."""
        read = self._read(path, pack)
        if read is None:
            return None
        pack_key, name, file, raw = read
        key = contract_entry_key(pack_key, name, file, raw)
        contract = self._entry(key, name, file)
        if contract is None:
            return None
        keys = self.keys.cases(pack_key, pack, contract, contract.env_names, raw)
        if keys is None or not self.store().has_all(keys):
            return None
        return key, keys

    def _known_hit(self, path: Path, pack: Pack, found: HitKeys) -> Unparsed | None:
        """The contract of another process's keys when every case of it hits, else None."""
        name, file = contract_path(path, pack.directory, pack.root), shown_path(path, pack.root)
        key, keys = found
        contract = self._entry(key, name, file)
        if contract is None or len(keys) != len(contract.golden_cases):
            return None
        return self._hits(key, pack, contract, keys)

    def _hits(self, key: str, pack: Pack, contract: Unparsed, keys: list[str]) -> Unparsed | None:
        """``contract`` with the results of its cases' ``keys`` kept for the look-up; None
        when one of them is not a hit."""
        store, cases = self.store(), contract.golden_cases
        named = (pack.pack_id, contract.path, contract.file)
        results = [
            store.peek(k, self.now, self._order + n, (*named, case.id))
            for n, (k, case) in enumerate(zip(keys, cases, strict=True))
        ]
        if None in results:
            return None
        store.keep_contract(key)
        for case, case_key, result in zip(cases, keys, results, strict=True):
            found = cast(CaseResult, result)
            self.found[(pack.directory, contract.path, case.id)] = (case_key, found)
        return contract
