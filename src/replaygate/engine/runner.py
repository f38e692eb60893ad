"""Run loaded packs: load each selected case's input and judge it, in order, forked when large."""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from replaygate.core.errors import EXIT_BUG, ReplayGateError
from replaygate.core.model import CaseResult, RunResult
from replaygate.engine.collector import CaseContext
from replaygate.engine.forking import can_fork, flush_output
from replaygate.engine.judge import RECORDED, evaluate_case
from replaygate.engine.transfer import Sent, compact, rebuild
from replaygate.loading import folders
from replaygate.loading.contract import Contract, GoldenCase
from replaygate.loading.fixtures import CaseInput, load_case_input
from replaygate.loading.pack import Loaded, Pack

if TYPE_CHECKING:
    from replaygate.engine.forked import Workers

PARALLEL_MIN_CASES = 2000  # below this, forking costs more than it saves
CHUNK_CASES = 250
CaseKey = tuple[str, str, str]  # pack_id, contract path within the pack, case id
Select = Callable[[CaseKey], bool]
# Where a case's input comes from: its files (recorded mode) or a live provider.
Source = Callable[[Pack, Contract, GoldenCase], CaseInput | str]


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


# What forked workers evaluate: set before the pool forks, so nothing is pickled but results.
_SHARED: list[Work] = []
# In a worker: the file its stdout and stderr (the descriptors too) are written to.
_OUTPUT: list[IO[bytes]] = []


class WorkerDied(ReplayGateError):
    """A worker process was killed: its cases have no result, so the run has none."""

    exit_code = EXIT_BUG


def start_worker() -> None:
    """Leave cancellation to the parent, and keep the job log to the parent alone.

    The parent terminates workers (SIGTERM) in silence. What a worker prints (a library's
    warning, even from C) goes to a file of its own and back to the parent with the
    results: a worker writing to the log itself could open a ``stop-commands`` block
    that nothing closes, and every later annotation would be ignored.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    import tempfile

    # Both files stay open for the worker's lifetime: no context manager fits.
    output = tempfile.TemporaryFile()  # noqa: SIM115
    for fd in (1, 2):
        os.dup2(output.fileno(), fd)
    # line-buffered: Python's lines and the descriptors' writes keep their order
    sys.stdout = sys.stderr = open(  # noqa: SIM115
        1, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False
    )
    _OUTPUT[:] = [output]


def printed() -> str:
    """What this worker printed since the last call."""
    sys.stdout.flush()
    (output,) = _OUTPUT
    output.seek(0)
    text = output.read().decode("utf-8", "backslashreplace")
    output.seek(0)
    output.truncate()
    return text


def _evaluate_range(bounds: tuple[int, int]) -> tuple[list[Sent], str]:
    cases = [compact(item.ctx, _evaluate(item)) for item in _SHARED[bounds[0] : bounds[1]]]
    return cases, printed()


def _can_fork(jobs: int, count: int) -> bool:
    return count >= PARALLEL_MIN_CASES and can_fork(jobs)


def _evaluate_all(work: list[Work], jobs: int, workers: Workers | None) -> list[CaseResult]:
    if workers is not None and workers.forked:  # they hold the contracts: they judge
        return workers.judge(work, _evaluate)
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


def _in_workers(work: list[Work], chunks: list[tuple[int, int]], jobs: int) -> list[CaseResult]:
    """The chunks evaluated by ``jobs`` forked workers, in order; their output re-printed here."""
    import multiprocessing  # only a large run needs these: about 10 ms of every start otherwise
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    flush_output()  # a worker must not inherit, and print again, what is buffered here
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=start_worker)
    cases: list[CaseResult] = []
    try:
        results = pool.map(_evaluate_range, chunks)
        for (start, end), (part, text) in zip(chunks, results, strict=True):
            cases += [rebuild(i.ctx, sent) for i, sent in zip(work[start:end], part, strict=True)]
            sys.stderr.write(text)
    except BrokenProcessPool:
        raise WorkerDied(
            "a worker process stopped abruptly (killed, or out of memory): the run is "
            "incomplete and nothing was reported; run it again, or with --jobs 1"
        ) from None
    except BaseException:  # cancelled: the workers' chunks are of no use now
        for process in list(pool._processes.values()):  # no public way before Python 3.14
            process.terminate()
        raise
    finally:
        pool.shutdown(cancel_futures=True)
    return cases


def run_packs(
    loaded: Loaded,
    env: Mapping[str, str],
    select: Select | None = None,
    *,
    jobs: int = 1,
    source: Source = load_case_input,
    mode: str = RECORDED,
    workers: Workers | None = None,
) -> RunResult:
    """Evaluate every selected case of the loaded packs, in ``jobs`` processes where that pays.

    ``mode`` is ``recorded`` or the live provider's name, for the cases' provider_modes.
    Results come back in pack, contract and case order whatever the number of jobs.
    ``workers``: what loaded the contracts, which judges the cases of those it holds.
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
            cases = tuple(_evaluate_all(work, jobs, workers))
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
