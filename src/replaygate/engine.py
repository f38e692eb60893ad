"""Run loaded packs: load each selected case's input and evaluate it, pack by pack."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from replaygate.evaluate import CaseContext, evaluate_case
from replaygate.fixtures import load_case_input
from replaygate.pack import Pack, find_packs, load_pack
from replaygate.result import CaseResult, Problem, RunResult

CaseKey = tuple[str, str, str]  # pack_id, contract path within the pack, case id
Select = Callable[[CaseKey], bool]


@dataclass(frozen=True, slots=True)
class Loaded:
    packs: tuple[Pack, ...]
    problems: tuple[Problem, ...]


def _root_for(pack_file: Path, root: Path | None, cwd: Path) -> Path:
    if root is not None:
        return root
    from replaygate.files import find_repository_root

    return find_repository_root(pack_file.parent) or cwd


def load_packs(targets: Sequence[str], *, cwd: Path, root: Path | None, now: datetime) -> Loaded:
    """Every pack under ``targets``; problems collected, the packs that load still load."""
    pack_files, problems = find_packs(targets, cwd)
    packs: list[Pack] = []
    seen: dict[str, str] = {}
    for pack_file in pack_files:
        pack, found = load_pack(pack_file, _root_for(pack_file, root, cwd).resolve(), now)
        problems.extend(found)
        if pack is None:
            continue
        if pack.pack_id in seen:
            problems.append(
                Problem(
                    f"{pack.shown}/pack.yaml",
                    None,
                    f"pack_id '{pack.pack_id}' is already used by {seen[pack.pack_id]}",
                )
            )
            continue
        seen[pack.pack_id] = pack.shown
        packs.append(pack)
    if not pack_files and not problems:
        problems.append(Problem(", ".join(targets), None, "no pack.yaml found"))
    return Loaded(tuple(packs), tuple(problems))


def case_keys(packs: Sequence[Pack]) -> list[CaseKey]:
    return [(p.pack_id, c.path, g.id) for p in packs for c in p.contracts for g in c.golden_cases]


def _cases(
    packs: Sequence[Pack], env: Mapping[str, str], select: Select | None
) -> Iterator[CaseResult]:
    for pack in packs:
        for contract in pack.contracts:
            allowlisted = pack.allowlist.get(contract.path)
            for case in contract.golden_cases:
                if select is not None and not select((pack.pack_id, contract.path, case.id)):
                    continue
                ctx = CaseContext(pack.pack_id, pack.shown, contract, case, env, allowlisted)
                yield evaluate_case(ctx, load_case_input(pack, contract, case))


def run_packs(loaded: Loaded, env: Mapping[str, str], select: Select | None = None) -> RunResult:
    """Evaluate every selected case of the loaded packs."""
    started = time.perf_counter()
    # The contracts live for the whole run: freezing them keeps the collector from
    # re-scanning them on every generation-2 pass while fixtures come and go.
    gc.collect()
    gc.freeze()
    try:
        cases = tuple(_cases(loaded.packs, env, select))
    finally:
        gc.unfreeze()
    return RunResult(
        cases,
        loaded.problems,
        tuple(p.summary for p in loaded.packs),
        time.perf_counter() - started,
    )
