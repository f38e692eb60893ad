"""Run loaded packs: load each selected case's input and judge it, in order; a large run's
work shared out to forked processes (replaygate/parallel.py)."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from replaygate import parallel
from replaygate.core.errors import PackError
from replaygate.core.model import CaseResult, Problem, RunResult
from replaygate.engine.collector import CaseContext
from replaygate.engine.judge import RECORDED, evaluate_case
from replaygate.engine.transfer import Sent, compact, rebuild
from replaygate.loading import folders
from replaygate.loading.contract import Contract, GoldenCase, Outline, outline, outline_contract
from replaygate.loading.fixtures import CaseInput, load_case_input
from replaygate.loading.pack import parse_contract
from replaygate.loading.packs import ContractItem, Loaded, Pack

CaseKey = tuple[str, str, str]  # pack_id, contract path within the pack, case id
Select = Callable[[CaseKey], bool]
# Where a case's input comes from: its files (recorded mode) or a live provider.
Source = Callable[[Pack, Contract, GoldenCase], CaseInput | str]
# A case judged while its contract was loaded: its pack's folder, contract path and id.
CaseName = tuple[Path, str, str]


def case_keys(packs: Sequence[Pack]) -> list[CaseKey]:
    return [(p.pack_id, c.path, g.id) for p in packs for c in p.contracts for g in c.golden_cases]


@dataclass(frozen=True, slots=True)
class Work:
    pack: Pack
    ctx: CaseContext
    source: Source = load_case_input


def _work(
    packs: Sequence[Pack], env: Mapping[str, str], select: Select | None, source: Source, mode: str
) -> list[Work]:
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
                    work.append(Work(pack, ctx, source))
                order += 1
    return work


def _evaluate(item: Work) -> CaseResult:
    ctx = item.ctx
    return evaluate_case(ctx, item.source(item.pack, ctx.contract, ctx.case))


def _contract_bytes(work: Sequence[Work]) -> int:
    """The bytes of the contract files whose cases ``work`` judges, the measure of work the
    rule of parallel.py takes; a contract read whole with its cases' inputs (@isdk, other
    tools' files) leaves another process nothing to read, so it does not count."""
    paths = {
        os.path.join(item.pack.root, item.ctx.contract.file)
        for item in work
        if item.ctx.contract.case_inputs is None
    }
    return sum(parallel.file_size(path) for path in paths)


def _evaluate_all(work: list[Work], jobs: int) -> list[CaseResult]:
    """Every case of ``work`` judged, in order; in ``jobs`` processes where that pays."""
    if not parallel.worth_forking(jobs, lambda: _contract_bytes(work)):
        return [_evaluate(item) for item in work]
    shares = parallel.split([1] * len(work), [1] * jobs)

    def judge(bounds: tuple[int, int]) -> list[Sent]:
        return [compact(item.ctx, _evaluate(item)) for item in work[bounds[0] : bounds[1]]]

    answers = parallel.map_shares(judge, shares)
    return [
        rebuild(item.ctx, sent)
        for (start, end), part in zip(shares, answers, strict=True)
        for item, sent in zip(work[start:end], part, strict=True)
    ]


# Contracts loaded before their cases are judged: loading and judging each contract in turn
# costs 6% more CPU at 10k cases (bench/README.md), and all of a share at once holds them
# all (2 MB more at 10k); 64 takes nearly all the gain for a few hundred KB.
LOAD_BATCH = 64
# What a share of contract files comes back as: each file's contract (an outline when it
# was loaded in another process) or its problems, with its selected cases judged by name.
Loading = list[tuple[Contract | Outline | list[Problem], dict[str, Sent]]]


class JudgingLoader:
    """A run's contract loader (a ContractBatch) that judges each contract's selected cases
    as it loads it, in shares over ``jobs`` processes when the files are large enough to pay
    (recorded mode; a run that selects cases by shard loads them all first instead).

    A contract loaded in another process comes back as an outline (what names and selects
    its cases: compiled contracts never travel, unpickling one costs as much as loading
    it), with its cases' results; ``judged`` holds them for ``run_packs``.
    """

    def __init__(self, jobs: int, env: Mapping[str, str], source: Source) -> None:
        self.jobs = jobs
        self.judged: dict[CaseName, Sent] = {}
        self._env, self._source = env, source

    def __call__(self, items: Sequence[ContractItem]) -> list[Contract | list[Problem]]:
        sizes = [parallel.file_size(item.path) for item in items] if self.jobs >= 2 else []
        if not parallel.worth_forking(self.jobs, lambda: sum(sizes)):
            return [_parsed(item) for item in items]
        # every share another process's, this one's left empty: it keeps outlines only, so a
        # large run's peak memory is a share's, not the whole run's
        shares = [(0, 0), *parallel.split(sizes, [1] * self.jobs)]
        parent = os.getpid()
        with folders.reading():  # each golden directory opened once in each process
            answers = parallel.map_shares(
                lambda b: self._load(items[b[0] : b[1]], os.getpid() != parent), shares
            )
        outcomes: list[Contract | list[Problem]] = []
        for (start, end), answer in zip(shares, answers, strict=True):
            for item, (loaded, results) in zip(items[start:end], answer, strict=True):
                contract = outline_contract(*loaded) if isinstance(loaded, tuple) else loaded
                if isinstance(contract, Contract):
                    for case_id, sent in results.items():
                        self.judged[(item.pack.directory, contract.path, case_id)] = sent
                outcomes.append(contract)
        return outcomes

    def _load(self, items: Sequence[ContractItem], elsewhere: bool) -> Loading:
        loaded: Loading = []
        for start in range(0, len(items), LOAD_BATCH):
            batch = items[start : start + LOAD_BATCH]
            for item, contract in zip(batch, [_parsed(item) for item in batch], strict=True):
                if isinstance(contract, list):
                    loaded.append((contract, {}))
                    continue
                results = self._judge(item, contract)
                loaded.append((outline(contract) if elsewhere else contract, results))
        gc.freeze()  # what this process keeps lives to its end: no collection scans it again
        return loaded

    def _judge(self, item: ContractItem, contract: Contract) -> dict[str, Sent]:
        pack = item.pack
        allowlisted = pack.allowlist.get(contract.path)
        judged = {}
        for case in contract.golden_cases:
            if item.selection.wants_case(item.path, case.id):
                ctx = CaseContext(
                    pack.pack_id, pack.shown, contract, case, self._env, allowlisted, RECORDED
                )
                judged[case.id] = compact(ctx, _evaluate(Work(pack, ctx, self._source)))
        return judged


def _parsed(item: ContractItem) -> Contract | list[Problem]:
    try:
        return parse_contract(item.path, item.pack)
    except PackError as exc:
        return exc.problems()


def run_packs(
    loaded: Loaded,
    env: Mapping[str, str],
    select: Select | None = None,
    *,
    jobs: int = 1,
    source: Source = load_case_input,
    mode: str = RECORDED,
    judged: dict[CaseName, Sent] | None = None,
) -> RunResult:
    """Evaluate every selected case of the loaded packs, in ``jobs`` processes where that pays.

    ``mode`` is ``recorded`` or the live provider's name, for the cases' provider_modes.
    Results come back in pack, contract and case order whatever the number of jobs.
    ``judged``: cases judged while their contracts loaded (``JudgingLoader``), taken out of
    it as their results are rebuilt.
    """
    started = time.perf_counter()
    # The contracts live for the whole run: freezing them keeps the collector from
    # re-scanning them on every generation-2 pass while fixtures come and go. No collection
    # first: with few cycles made while loading, a full one cost more than it freed.
    gc.freeze()
    try:
        # each golden directory opened once and each recordings directory listed once
        with folders.reading():
            work = _work(loaded.packs, env, select, source, mode)
            cases = tuple(_judge_rest(work, jobs, judged or {}))
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


def _judge_rest(work: list[Work], jobs: int, judged: dict[CaseName, Sent]) -> list[CaseResult]:
    """The results of ``work`` in order: those ``judged`` already rebuilt for their place in
    the run (and taken out of it), the others judged now."""
    if not judged:
        return _evaluate_all(work, jobs)

    def name(item: Work) -> CaseName:
        return (item.pack.directory, item.ctx.contract.path, item.ctx.case.id)

    fresh = iter(_evaluate_all([item for item in work if name(item) not in judged], jobs))
    # each one taken out as it is rebuilt: its memory holds the results that follow
    return [
        rebuild(item.ctx, judged.pop(key)) if (key := name(item)) in judged else next(fresh)
        for item in work
    ]
