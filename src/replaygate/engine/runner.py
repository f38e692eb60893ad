"""Run loaded packs: load each selected case's input and judge it, in order, forked when large."""

from __future__ import annotations

import contextlib
import gc
import pickle
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from replaygate.engine.collector import CaseContext
from replaygate.engine.judge import RECORDED, evaluate_case
from replaygate.engine.transfer import Sent, compact, rebuild
from replaygate.engine.workers import WorkerDied, mapped, new_pool, printed
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.fixtures import CaseInput, load_case_input
from replaygate.loading.pack import LoadContracts, Loaded, Pack, load_contracts
from replaygate.results.model import CaseResult, Problem, RunResult

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ["WorkerDied", "case_keys", "contract_loader", "long_lived", "run_packs"]

PARALLEL_MIN_CASES = 2000  # below this, forking costs more than it saves
CHUNK_CASES = 250
PARALLEL_MIN_CONTRACTS = 100  # a pack with fewer loads them here: forking would cost more
# Objects allocated between two young collections while a run builds what it keeps to its end.
# CPython's default, 700, makes loading 1,000 contracts trigger full collections that rescan
# every contract loaded so far (bench/README.md: the collector's time fell from 0.35-0.5 s to
# about 0.1 s of a 10k-case run; 50,000 made young collections cost more again).
GC_YOUNG_THRESHOLD = 20_000
CaseKey = tuple[str, str, str]  # pack_id, contract path within the pack, case id
Select = Callable[[CaseKey], bool]
# Where a case's input comes from: its files (recorded mode) or a live provider.
Source = Callable[[Pack, Contract, GoldenCase], CaseInput | str]


def case_keys(packs: Sequence[Pack]) -> list[CaseKey]:
    return [(p.pack_id, c.path, g.id) for p in packs for c in p.contracts for g in c.golden_cases]


@dataclass(frozen=True, slots=True)
class _Work:
    pack: Pack
    ctx: CaseContext
    source: Source = load_case_input


def _work(
    packs: Sequence[Pack], env: Mapping[str, str], select: Select | None, source: Source, mode: str
) -> list[_Work]:
    work = []
    order = 0  # counts every case, selected or not: merged shards sort back into run order
    for pack in packs:
        for contract in pack.contracts:
            allowlisted = pack.allowlist.get(contract.path)
            for case in contract.golden_cases:
                if select is None or select((pack.pack_id, contract.path, case.id)):
                    ctx = CaseContext(
                        pack.pack_id, pack.shown, contract, case, env, allowlisted, mode, order
                    )
                    work.append(_Work(pack, ctx, source))
                order += 1
    return work


def _evaluate(item: _Work) -> CaseResult:
    ctx = item.ctx
    return evaluate_case(ctx, item.source(item.pack, ctx.contract, ctx.case))


# What forked workers evaluate: set before the pool forks, so nothing is pickled but results.
_SHARED: list[_Work] = []


def _evaluate_range(bounds: tuple[int, int]) -> tuple[list[Sent], str]:
    cases = [compact(item.ctx, _evaluate(item)) for item in _SHARED[bounds[0] : bounds[1]]]
    return cases, printed()


def _can_fork(jobs: int, count: int) -> bool:
    # Forking a process that runs threads can deadlock the child: only a plain CLI run forks.
    if jobs < 2 or count < PARALLEL_MIN_CASES or threading.active_count() != 1:
        return False
    import multiprocessing  # only a large run needs it: about 10 ms of every start otherwise

    return "fork" in multiprocessing.get_all_start_methods()


def _evaluate_all(work: list[_Work], jobs: int) -> list[CaseResult]:
    # Cases read whole at load (ai-tester traces, @isdk results) leave workers nothing to read,
    # only results to send back, which costs more than judging them here: only fixtures count.
    if not _can_fork(jobs, sum(item.ctx.contract.case_inputs is None for item in work)):
        return [_evaluate(item) for item in work]
    size = max(CHUNK_CASES, -(-len(work) // (jobs * 8)))
    chunks = [(start, min(start + size, len(work))) for start in range(0, len(work), size)]
    _SHARED[:] = work
    try:
        return _in_workers(work, chunks, jobs)
    finally:
        _SHARED.clear()


def _in_workers(work: list[_Work], chunks: list[tuple[int, int]], jobs: int) -> list[CaseResult]:
    """The chunks evaluated by ``jobs`` forked workers, in order; their output re-printed here."""
    pool = new_pool(jobs)
    try:
        parts = mapped(pool, _evaluate_range, chunks)
    finally:
        pool.shutdown(cancel_futures=True)
    return [
        rebuild(item.ctx, sent)
        for (start, end), part in zip(chunks, parts, strict=True)
        for item, sent in zip(work[start:end], part, strict=True)
    ]


class _ContractLoader:
    """Loads the contracts of a large pack in forked workers; one pool for every pack."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.pool: ProcessPoolExecutor | None = None

    def __call__(
        self, paths: Sequence[Path], pack_dir: Path, root: Path
    ) -> list[Contract | list[Problem]]:
        if len(paths) < PARALLEL_MIN_CONTRACTS or not self._forks():
            return load_contracts(paths, pack_dir, root)
        assert self.pool is not None
        size = -(-len(paths) // (self.jobs * 4))
        tasks = [(paths[i : i + size], pack_dir, root) for i in range(0, len(paths), size)]
        sent = [each for part in mapped(self.pool, _load_range, tasks) for each in part]
        return [
            _received(path, each, pack_dir, root) for path, each in zip(paths, sent, strict=True)
        ]

    def _forks(self) -> bool:
        if self.pool is None and _can_fork(self.jobs, PARALLEL_MIN_CASES):
            self.pool = new_pool(self.jobs)
        return self.pool is not None


# A loaded contract pickled by the worker, the problems that kept it from loading, or None:
# it cannot be pickled, and the parent loads it itself.
_SentContract = bytes | list[Problem] | None


def _load_range(task: tuple[Sequence[Path], Path, Path]) -> tuple[list[_SentContract], str]:
    return [_portable(outcome) for outcome in load_contracts(*task)], printed()


def _portable(outcome: Contract | list[Problem]) -> _SentContract:
    if not isinstance(outcome, Contract):
        return outcome
    try:
        return pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None


def _received(
    path: Path, sent: _SentContract, pack_dir: Path, root: Path
) -> Contract | list[Problem]:
    if isinstance(sent, bytes):
        contract: Contract = pickle.loads(sent)
        return contract
    return load_contracts([path], pack_dir, root)[0] if sent is None else sent


@contextlib.contextmanager
def contract_loader(jobs: int) -> Iterator[LoadContracts]:
    """What loads a pack's contracts: in ``jobs`` forked workers when the pack is large.

    The workers are gone when this ends, before any evaluation forks its own.
    """
    loader = _ContractLoader(jobs)
    try:
        yield loader
    finally:
        if loader.pool is not None:
            loader.pool.shutdown(cancel_futures=True)


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """Collect rarely while a run loads and judges: nearly all it allocates lives to its end.

    What exists already (the imported modules) is frozen: no collection scans it again.
    """
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def run_packs(
    loaded: Loaded,
    env: Mapping[str, str],
    select: Select | None = None,
    *,
    jobs: int = 1,
    source: Source = load_case_input,
    mode: str = RECORDED,
) -> RunResult:
    """Evaluate every selected case of the loaded packs, in ``jobs`` processes where that pays.

    ``mode`` is ``recorded`` or the live provider's name, for the cases' provider_modes.
    Results come back in pack, contract and case order whatever the number of jobs.
    """
    started = time.perf_counter()
    # The contracts live for the whole run: freezing them keeps the collector from
    # re-scanning them on every generation-2 pass while fixtures come and go. No collection
    # first: with few cycles made while loading, a full one cost more than it freed.
    gc.freeze()
    try:
        cases = tuple(_evaluate_all(_work(loaded.packs, env, select, source, mode), jobs))
    finally:
        gc.unfreeze()
    return RunResult(
        cases,
        loaded.problems,
        tuple(p.summary for p in loaded.packs),
        time.perf_counter() - started,
        # a recording's warning once, however many cases share it
        warnings=(*loaded.warnings, *dict.fromkeys(n for case in cases for n in case.notes)),
    )
