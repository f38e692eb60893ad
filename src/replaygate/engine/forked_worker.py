"""A forked worker of a large run: it loads a share of the contract files and keeps them,
then judges the cases it is sent (engine/forked.py is the parent's side)."""

from __future__ import annotations

import gc
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaygate.core.errors import PackError
from replaygate.core.model import Problem
from replaygate.engine import runner
from replaygate.engine.collector import CaseContext
from replaygate.engine.judge import evaluate_case
from replaygate.engine.transfer import Sent, compact
from replaygate.loading import folders
from replaygate.loading.contract import CaseFields, Contract, outline
from replaygate.loading.pack import Pack, parse_contract

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

Item = tuple[Path, Pack]  # a contract file and its pack as far as it is loaded
# A case to judge: its contract (item number), its place in it, NR allowlist reason and run
# order.
Task = tuple[int, int, str | None, int]
# A contract as it travels back: its path, file, tool and golden cases' fields.
Outline = tuple[str, str, str, tuple[CaseFields, ...]]

# Set before the fork: what every worker may load, and how it reads a case's input.
ITEMS: list[Item] = []
SETUP: list[tuple[Mapping[str, str], runner.Source, str]] = []
# In a worker: the contracts it loaded, by item number (it is sent no case of another).
_HELD: dict[int, Contract] = {}


def _load_share(bounds: tuple[int, int]) -> list[Outline | list[Problem]]:
    sent: list[Outline | list[Problem]] = []
    for index in range(*bounds):
        try:
            contract = parse_contract(*ITEMS[index])
        except PackError as exc:
            sent.append(exc.problems())
            continue
        _HELD[index] = contract
        sent.append(outline(contract))
    gc.freeze()  # they live as long as this worker: no collection scans them again
    return sent


def _judge(tasks: list[Task]) -> list[Sent]:
    env, source, mode = SETUP[0]
    sent: list[Sent] = []
    for index, number, allowlisted, order in tasks:
        contract, pack = _HELD[index], ITEMS[index][1]
        case = contract.golden_cases[number]
        ctx = CaseContext(pack.pack_id, pack.shown, contract, case, env, allowlisted, mode, order)
        sent.append(compact(ctx, evaluate_case(ctx, source(pack, contract, case))))
    return sent


def serve(conn: Connection, parents: list[Connection]) -> None:
    """A worker: requests in, answers out, until the parent closes its end."""
    for end in parents:  # the parent's ends, inherited: closed, so that its exit is seen
        end.close()
    runner.start_worker()
    with folders.reading():  # each golden directory opened once by this worker
        while True:
            try:
                kind, payload = conn.recv()
            except EOFError:
                return
            try:
                answer: Any = _load_share(payload) if kind == "load" else _judge(payload)
            except BaseException as exc:  # the parent raises it again
                conn.send(("raised", _portable(exc), runner.printed()))
                continue
            conn.send(("done", answer, runner.printed()))


def _portable(exc: BaseException) -> BaseException:
    """``exc`` itself when it survives pickling, else a RuntimeError that names it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # any failure to travel is replaced the same way
        return RuntimeError(f"in a worker: {exc!r}")
    return exc
