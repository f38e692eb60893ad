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
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, cast

import msgspec

from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.files import MAX_YAML_BYTES, shown_path
from replaygate.loading.pack import Pack, contract_path, parse_contract
from replaygate.results.cache import Store, load_store
from replaygate.results.cache_codec import BadEntry, Strict, convert
from replaygate.results.cache_keys import Keys, contract_entry_key, env_names
from replaygate.results.model import CaseResult


class _Case(Strict):
    """A golden case in a contract's entry (mirrors ``GoldenCase``)."""

    id: str
    input_ref: str
    expect_ok: bool
    expected_error: str | None
    provider_modes: tuple[str, ...] | None
    line: int
    expect_ok_line: int
    skip: str | None


class _Entry(Strict):
    env: tuple[str, ...]
    cases: tuple[_Case, ...]


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


def unparsed(entry: dict[str, Any], path: str, file: str) -> Unparsed | None:
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


def _decoded(entry: dict[str, Any]) -> tuple[tuple[str, ...], tuple[GoldenCase, ...]]:
    found = convert({"env": entry["env"], "cases": entry["cases"]}, _Entry)
    cases = tuple(GoldenCase(**msgspec.structs.asdict(case)) for case in found.cases)
    return found.env, cases


CaseName = tuple[Path, str, str]  # the pack's folder, the contract's path in it, the case id


class WarmContracts:
    """``run --cache``'s contract loader: a contract whose entry and every case hit is not
    parsed (an ``Unparsed``, its cases' results kept for the look-up); any other is parsed,
    and its entry stored."""

    def __init__(
        self, folder: str, keys: Keys, identity: str, refuse: Callable[[Pack], None]
    ) -> None:
        self.now = time.time()  # the time the cached results must hold at
        self.found: dict[CaseName, tuple[str, CaseResult]] = {}
        self.keys = keys
        self._folder, self._identity, self._refuse = folder, identity, refuse
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

    def __call__(self, path: Path, pack: Pack) -> Contract:
        contract = self._load(path, pack)
        self._order += len(contract.golden_cases)
        return contract

    def _load(self, path: Path, pack: Pack) -> Contract:
        pack_key = self.keys.pack(pack)
        if pack_key is None:
            return parse_contract(path, pack)
        if pack.directory not in self._checked:
            self._refuse(pack)
            self._checked.add(pack.directory)
        try:
            # sized first, as the parse would: a file it refuses unread (too large, a FIFO
            # that would block) is not read whole here either
            found = os.stat(path)
            if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_YAML_BYTES:
                return parse_contract(path, pack)
            raw = path.read_bytes()
        except OSError:  # it fails as it would uncached
            return parse_contract(path, pack)
        name, file = contract_path(path, pack.directory, pack.root), shown_path(path, pack.root)
        key = contract_entry_key(pack_key, name, file, raw)
        warm = self._unparsed(key, pack_key, pack, name, file, raw)
        if warm is not None:
            return warm
        contract = parse_contract(path, pack)
        entry = contract_entry(contract, env_names(contract))
        if entry is not None:
            self.store().put_contract(key, entry)
        return contract

    def _unparsed(
        self, key: str, pack_key: bytes, pack: Pack, name: str, file: str, raw: bytes
    ) -> Unparsed | None:
        """The contract of the entry under ``key`` when every case of it hits, else None."""
        store = self.store()
        data = store.contract(key)
        contract = unparsed(data, name, file) if data is not None else None
        if contract is None:
            return None
        keys = self.keys.cases(pack_key, pack, contract, contract.env_names, raw)
        results = [store.peek(k, self.now, self._order + n) for n, k in enumerate(keys or ())]
        if keys is None or None in results:
            return None
        store.keep_contract(key)
        for case, case_key, result in zip(contract.golden_cases, keys, results, strict=True):
            self.found[(pack.directory, name, case.id)] = (case_key, cast(CaseResult, result))
        return contract
