"""`run --cache DIR`: results reused for the cases whose inputs did not change, the rest judged."""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from replaygate.cache.contracts import Unparsed, WarmContracts
from replaygate.cache.keys import Keys, code_identity
from replaygate.cache.store import CACHE_FILE, Store
from replaygate.core.errors import ReplayGateError, UsageError
from replaygate.core.model import CaseResult, Problem, RunResult
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.files import find_repository_root
from replaygate.loading.packs import Loaded, Pack

if TYPE_CHECKING:  # the engine is imported only when a case is judged
    from replaygate.engine.runner import CaseKey, Select

    Pending = dict[CaseKey, tuple[str, Pack, GoldenCase]]  # a miss: its key, pack and case


def refuse_inside_repository(folder: str, loaded: Loaded, cwd: Path) -> None:
    """A cache is trusted input: one a pull request could commit is refused."""
    refuse_inside(folder, loaded.roots, (cwd, *(p.directory for p in loaded.packs)))


def refuse_inside(folder: str, roots: Iterable[Path], folders: Iterable[Path]) -> None:
    """Refuse a cache folder inside one of the ``roots`` or the git repository of one of
    the ``folders``."""
    if not folder:
        raise UsageError("--cache: give a folder outside the repository")
    where = Path(os.path.realpath(folder))
    inside = [Path(os.path.realpath(root)) for root in roots]
    # the git repositories too: --root may name a folder inside one
    found = [find_repository_root(start) for start in folders]
    inside += [repository for repository in found if repository is not None]
    for root in inside:
        if where.is_relative_to(root):
            raise UsageError(
                f"--cache {folder}: the folder is inside the repository {root}; keep the "
                "cache outside it (the run trusts it, and a commit could change it)"
            )


def warm_contracts(
    folder: str, env: Mapping[str, str], model: str | None, jobs: int
) -> WarmContracts:
    """The contract loader of a cached run (load before ``run_cached``); ``jobs`` of two or
    more lets it fork a helper."""
    identity = code_identity()
    cwd = Path.cwd()

    def refuse(pack: Pack) -> None:  # before the cache is read for this pack's contracts
        refuse_inside(folder, [pack.root], [cwd, pack.directory])

    return WarmContracts(folder, Keys(env, model, identity), identity, refuse, jobs)


def run_cached(
    folder: str,
    warm: WarmContracts,
    loaded: Loaded,
    env: Mapping[str, str],
    select: Select | None,
    *,
    jobs: int,
    model: str | None,
    write: Callable[[Path, str], None],
) -> RunResult:
    """The run of ``loaded`` (its contracts loaded by ``warm``), with the cached results of
    unchanged cases, the others' inputs read for ``model`` (``--model``); the cache file
    rewritten by ``write`` (whole or not at all) when that changes it."""
    refuse_inside_repository(folder, loaded, Path.cwd())
    clock = time.perf_counter()
    store = warm.store()
    hits, pending, selected = _look_up(store, warm, loaded, select)
    if len(hits) == selected:  # nothing to judge: the engine's import is a tenth of the run
        rest = RunResult((), loaded.problems, tuple(p.summary for p in loaded.packs))
    else:
        from replaygate.engine.runner import run_packs
        from replaygate.loading.fixtures import load_case_input

        source = functools.partial(load_case_input, model=model)
        rest = run_packs(
            loaded, env, lambda key: key not in hits and (select is None or select(key)),
            jobs=jobs, source=source,
        )  # fmt: skip
    _store(store, warm.keys, pending, rest.cases, (warm.now, time.time()))
    saved = _save(store, folder, write)
    cases = tuple(sorted((*rest.cases, *hits.values()), key=lambda case: case.order))
    counts = {"hits": store.hits, "misses": store.misses, "uncached": len(cases) - len(hits)}
    counts["uncached"] -= store.misses
    return dataclasses.replace(
        rest,
        cases=cases,
        duration_s=time.perf_counter() - clock,
        # a recording's warning once, however many cases share it, in case order
        warnings=(
            *loaded.warnings,
            *dict.fromkeys(n for case in cases for n in case.notes),
            *saved,
        ),
        meta={**rest.meta, "cache": counts},
    )


def _save(store: Store, folder: str, write: Callable[[Path, str], None]) -> tuple[Problem, ...]:
    """Write the cache when it changed; a cache that cannot be written costs only the next
    run's time, so it is a warning and the run still reports."""
    if not store.changed:
        return ()
    path = Path(folder) / CACHE_FILE
    try:
        write(path, store.dump())
    except ReplayGateError as exc:
        reason = str(exc).removeprefix(f"cannot write {path}: ")
        return (
            Problem(str(path), None, f"the cache was not saved ({reason}); results are the same"),
        )
    return ()


def _look_up(
    store: Store, warm: WarmContracts, loaded: Loaded, select: Select | None
) -> tuple[dict[CaseKey, CaseResult], Pending, int]:
    """The selected cases' cached results, the keys of those to judge and store, and how
    many cases are selected."""
    hits: dict[CaseKey, CaseResult] = {}
    pending: Pending = {}
    order = selected = 0  # as the runner counts: every case, selected or not
    for pack in loaded.packs:
        for contract in pack.contracts:
            for case in contract.golden_cases:
                name = (pack.pack_id, contract.path, case.id)
                if select is None or select(name):
                    _look_up_case(store, warm, (pack, contract, case), order, hits, pending)
                    selected += 1
                order += 1
    return hits, pending, selected


def _look_up_case(
    store: Store,
    warm: WarmContracts,
    item: tuple[Pack, Contract, GoldenCase],
    order: int,
    hits: dict[CaseKey, CaseResult],
    pending: Pending,
) -> None:
    pack, contract, case = item
    name = (pack.pack_id, contract.path, case.id)
    if isinstance(contract, Unparsed):  # every case of it hit while loading
        hit_key, result = warm.found[(pack.directory, contract.path, case.id)]
        store.hit(hit_key)
        # placed while loading where the run was likely to place it: a copy only if not
        hits[name] = result if result.order == order else dataclasses.replace(result, order=order)
        return
    key = warm.keys.case(pack, contract, case)
    names = (pack.pack_id, contract.path, contract.file, case.id)
    found = store.get(key, warm.now, order=order, names=names) if key is not None else None
    if found is not None:
        hits[name] = found
    elif key is not None:
        pending[name] = (key, pack, case)


def _store(
    store: Store,
    keys: Keys,
    pending: Pending,
    cases: tuple[CaseResult, ...],
    times: tuple[float, float],
) -> None:
    for case in cases:
        miss = pending.get((case.pack, case.contract, case.case_id))
        if miss is None:
            continue
        key, pack, golden = miss
        window = keys.window(pack, golden, *times)
        if window is not None:
            store.put(key, case, window)
