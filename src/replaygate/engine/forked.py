"""A large run's contracts loaded by forked workers that keep them and judge their cases.

The parent lists the contract files (pack.yaml and the folders), then forks the workers,
each of which loads a share of the files and sends back an outline of each contract: what
names and selects its cases. The parent builds the packs from the outlines exactly as from
loaded contracts (selection, shards, problems in order), then sends each worker the cases
of the contracts it holds, and only those: every contract file is read once, so a file that
changes during the run is judged as the version the outline came from. Compiled contracts
never travel: unpickling one costs as much as loading it (bench/README.md).

A request names its cases by number (contract, case, order, and an NR allowlist reason where
one applies), so it is small unless reasons are long; the parent sends one while a worker
still owes an answer only when it is small: a worker blocked sending a large answer reads
nothing, and a large request sent then would block the parent too.

Shares are cut by the files' bytes, and a worker judges only its own: where the cost of a
byte differs much between packs (long comments in some), one worker can end well before
the other.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from replaygate.core.model import CaseResult, Problem
from replaygate.engine import forked_worker, runner
from replaygate.engine.forked_worker import Item, Outline, Task
from replaygate.engine.forking import can_fork, file_size, flush_output, shares
from replaygate.engine.judge import RECORDED
from replaygate.engine.transfer import rebuild
from replaygate.loading.contract import Contract, outline_contract
from replaygate.loading.pack import Pack, one_by_one, parse_contract

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

# Fewer contracts load here: forking for them costs more than sharing them out saves.
MIN_CONTRACTS = 200
CHUNK_CASES = 250  # cases a worker is sent at a time (at most: a chunk holds one worker's)
# Chunks each worker holds, so that it need not wait for the parent between two: a request
# too large to send early (below) waits until the worker owes nothing.
AHEAD = 2
# A request this size or smaller fits in any socket buffer (4 KiB and up): sent while the
# worker still owes an answer, it cannot block the parent. 250 plain tasks are about 3 KiB.
SMALL_REQUEST = 4096


def _shares(items: Sequence[Item], count: int) -> list[tuple[int, int]]:
    """``count`` runs of items in order, of about the same bytes (cases, roughly)."""
    return shares([file_size(path) for path, _ in items], [1] * count)


@dataclass(slots=True)
class _Worker:
    process: BaseProcess
    conn: Connection
    queue: list[int]  # chunks of its own still to send, first first
    sent: list[int]  # chunks sent, in the order their answers come


class Workers:
    """Loads a run's contracts (a ContractBatch); when it forked to, judges their cases."""

    def __init__(self, jobs: int, env: Mapping[str, str], source: runner.Source) -> None:
        self.jobs = jobs
        self._setup = (env, source, RECORDED)
        self._workers: list[_Worker] = []
        self._held: dict[tuple[Path, str], int] = {}  # (pack folder, contract path) -> item
        self._shares: list[tuple[int, int]] = []  # the items each worker loaded
        self._numbers: dict[int, dict[str, int]] = {}  # item -> its cases' places, by id

    def __call__(self, items: Sequence[Item]) -> list[Contract | list[Problem]]:
        if len(items) < MIN_CONTRACTS or not can_fork(self.jobs):
            return one_by_one(parse_contract)(items)
        self._start(items)
        self._shares = _shares(items, self.jobs)
        for worker, share in zip(self._workers, self._shares, strict=True):
            _send(worker, _pickled(("load", share)))
        sent: list[Outline | list[Problem]] = []
        for worker in self._workers:
            answer, text = self._answer(worker)
            sent += answer
            sys.stderr.write(text)
        return [self._received(index, each, items[index][1]) for index, each in enumerate(sent)]

    def _received(
        self, index: int, sent: Outline | list[Problem], pack: Pack
    ) -> Contract | list[Problem]:
        if isinstance(sent, list):
            return sent
        contract = outline_contract(*sent)
        self._held[(pack.directory, contract.path)] = index
        # as the worker numbers them: a selection later keeps only some of the cases
        self._numbers[index] = {case.id: n for n, case in enumerate(contract.golden_cases)}
        return contract

    def _start(self, items: Sequence[Item]) -> None:
        import multiprocessing  # only a large run needs it: about 10 ms of every start otherwise

        forked_worker.ITEMS[:] = items
        forked_worker.SETUP[:] = [self._setup]
        flush_output()  # a worker must not inherit, and print again, what is buffered here
        context = multiprocessing.get_context("fork")
        try:
            for _ in range(self.jobs):
                conn, theirs = context.Pipe()
                ours = [*(worker.conn for worker in self._workers), conn]
                process = context.Process(
                    target=forked_worker.serve, args=(theirs, ours), daemon=True
                )
                process.start()
                theirs.close()
                self._workers.append(_Worker(process, conn, [], []))
        finally:
            forked_worker.ITEMS.clear()  # the workers have their copies
            forked_worker.SETUP.clear()

    def _answer(self, worker: _Worker) -> tuple[Any, str]:
        """The worker's next answer; its exception raised here, its death a WorkerDied."""
        try:
            kind, answer, text = worker.conn.recv()
        except (EOFError, OSError):
            raise _died() from None
        if kind == "raised":
            sys.stderr.write(text)
            raise answer
        return answer, text

    @property
    def forked(self) -> bool:
        return bool(self._workers)

    def holds(self, pack: Pack, contract: Contract) -> bool:
        """Whether ``contract`` is an outline whose cases the workers judge (not one read
        whole with its cases' inputs: @isdk fixtures, other tools' files)."""
        return contract.case_inputs is None and (pack.directory, contract.path) in self._held

    def judge(
        self, work: Sequence[runner.Work], here: Callable[[runner.Work], CaseResult]
    ) -> list[CaseResult]:
        """Every case of ``work`` judged, in order: the workers' by them, any other ``here``."""
        chunks, owners = self._chunks(work)
        for number, owner in enumerate(owners):
            self._workers[owner].queue.append(number)
        for worker in self._workers:
            for _ in range(AHEAD):
                self._send_next(worker, work, chunks)
        results: list[CaseResult | None] = [None] * len(work)
        for position, item in enumerate(work):
            if not self.holds(item.pack, item.ctx.contract):
                results[position] = here(item)
        self._collect(work, chunks, results)
        return cast("list[CaseResult]", results)

    def _chunks(self, work: Sequence[runner.Work]) -> tuple[list[list[int]], list[int]]:
        """The workers' cases in runs of up to CHUNK_CASES positions, in order, each of one
        worker's contracts; and that worker for each run."""
        chunks: list[list[int]] = []
        owners: list[int] = []
        for position, item in enumerate(work):
            if not self.holds(item.pack, item.ctx.contract):
                continue
            owner = self._owner(item)
            if not chunks or owners[-1] != owner or len(chunks[-1]) == CHUNK_CASES:
                chunks.append([])
                owners.append(owner)
            chunks[-1].append(position)
        return chunks, owners

    def _owner(self, item: runner.Work) -> int:
        index = self._held[(item.pack.directory, item.ctx.contract.path)]
        return next(w for w, (start, end) in enumerate(self._shares) if start <= index < end)

    def _send_next(
        self, worker: _Worker, work: Sequence[runner.Work], chunks: list[list[int]]
    ) -> None:
        """Its next chunk, when it can be sent now without risking a deadlock (see above);
        a large one waits until the worker owes nothing."""
        if not worker.queue:
            return
        number = worker.queue[0]
        tasks = [self._task(work[position]) for position in chunks[number]]
        request = _pickled(("judge", tasks))
        if len(request) > SMALL_REQUEST and worker.sent:
            return
        worker.queue.pop(0)
        _send(worker, request)
        worker.sent.append(number)

    def _task(self, item: runner.Work) -> Task:
        ctx = item.ctx
        index = self._held[(item.pack.directory, ctx.contract.path)]
        # its place among the contract's cases (ids are unique: a duplicate fails the load)
        return index, self._numbers[index][ctx.case.id], ctx.allowlisted, ctx.order

    def _collect(
        self,
        work: Sequence[runner.Work],
        chunks: list[list[int]],
        results: list[CaseResult | None],
    ) -> None:
        """The workers' answers rebuilt into ``results``; what they printed, in case order."""
        from multiprocessing.connection import wait

        texts: dict[int, str] = {}
        shown = 0
        while busy := {w.conn: w for w in self._workers if w.sent}:
            for conn in wait(list(busy)):
                worker = busy[cast("Connection", conn)]
                answer, texts[worker.sent[0]] = self._answer(worker)
                chunk = chunks[worker.sent.pop(0)]
                for position, sent in zip(chunk, answer, strict=True):
                    results[position] = rebuild(work[position].ctx, sent)
                self._send_next(worker, work, chunks)
            while shown in texts:
                sys.stderr.write(texts.pop(shown))
                shown += 1

    def close(self, *, cancelled: bool) -> None:
        """The workers stopped: told to when the run is done, terminated when it is not."""
        for worker in self._workers:
            if cancelled:
                worker.process.terminate()
            worker.conn.close()
        for worker in self._workers:
            worker.process.join()


def _pickled(request: tuple[str, Any]) -> bytes:
    from multiprocessing.reduction import ForkingPickler

    return bytes(ForkingPickler.dumps(request))


def _send(worker: _Worker, request: bytes) -> None:
    """``request`` (pickled) to the worker, which reads it with ``recv``."""
    try:
        worker.conn.send_bytes(request)
    except OSError:  # its end is closed: it died
        raise _died() from None


def _died() -> runner.WorkerDied:
    return runner.WorkerDied(
        "a worker process stopped abruptly (killed, or out of memory): the run is "
        "incomplete and nothing was reported; run it again, or with --jobs 1"
    )


@contextlib.contextmanager
def workers(jobs: int, env: Mapping[str, str], source: runner.Source) -> Iterator[Workers]:
    """What loads the run's contracts and judges their cases; its workers gone at the end."""
    pool = Workers(jobs, env, source)
    try:
        yield pool
    except BaseException:
        pool.close(cancelled=True)
        raise
    pool.close(cancelled=False)
