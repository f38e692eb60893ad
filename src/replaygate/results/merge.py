"""Shard results combined into one: every case once, and an incomplete set of shards refused."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from replaygate.core.errors import PackError, ReplayGateError
from replaygate.core.model import CaseResult, PackSummary, RunResult

CaseKey = tuple[str, str, str]  # pack, contract, case id
Named = tuple[str, RunResult]  # a results file as shown, and its content


def merge_results(named: Sequence[Named]) -> RunResult:
    """One result holding every case once; overlapping shards must agree on each outcome."""
    _check_shards(named)
    packs = _packs(named)
    return RunResult(
        cases=_in_run_order(_cases(named), packs),
        problems=tuple(dict.fromkeys(p for _, result in named for p in result.problems)),
        packs=packs,
        warnings=tuple(dict.fromkeys(w for _, result in named for w in result.warnings)),
        duration_s=sum(result.duration_s for _, result in named),
        meta=_meta(named),
    )


def _cases(named: Sequence[Named]) -> tuple[CaseResult, ...]:
    seen: dict[CaseKey, tuple[str, CaseResult]] = {}
    for shown, result in named:
        for case in result.cases:
            key = (case.pack, case.contract, case.case_id)
            if key not in seen:
                seen[key] = (shown, case)
            elif _outcome(seen[key][1]) != _outcome(case):
                other = seen[key][0]
                where = f"case {case.case_id!r} of {case.pack}/{case.contract}"
                raise PackError(shown, None, f"{where} is also in {other} with another outcome")
    return tuple(case for _, case in seen.values())


def _in_run_order(
    cases: tuple[CaseResult, ...], packs: tuple[PackSummary, ...]
) -> tuple[CaseResult, ...]:
    """The order of a plain run: packs as the results list them, then each case's ``order``."""
    position = {pack.pack_id: n for n, pack in enumerate(packs)}
    return tuple(sorted(cases, key=lambda c: (position.get(c.pack, len(position)), c.order)))


def _packs(named: Sequence[Named]) -> tuple[PackSummary, ...]:
    packs: dict[str, PackSummary] = {}
    for _, result in named:
        for pack in result.packs:
            packs.setdefault(pack.pack_id, pack)
    return tuple(packs.values())


def _outcome(case: CaseResult) -> CaseResult:
    """Everything that makes a case's outcome: all but its duration."""
    return dataclasses.replace(case, duration_s=0.0)


def _check_shards(named: Sequence[Named]) -> None:
    """Refuse an incomplete set of shards: a missing one would pass unseen."""
    shards = [(shown, result.meta.get("shard")) for shown, result in named]
    sharded = [(shown, shard) for shown, shard in shards if shard]
    if not sharded:
        return
    if len(sharded) < len(shards):
        shown = next(shown for shown, shard in shards if not shard)
        raise PackError(shown, None, "not a shard's results, while the other files are")
    count = sharded[0][1]["count"]
    for shown, shard in sharded:
        if shard["count"] != count:
            raise PackError(shown, None, f"a shard of {shard['count']}, the others of {count}")
    present: dict[int, str] = {}
    for shown, shard in sharded:
        index = shard["index"]
        if index in present:
            raise PackError(shown, None, f"shard {index}/{count} again, as in {present[index]}")
        present[index] = shown
    # the first index missing is at most one past the files given: no range of `count` is built
    missing = next((k for k in range(1, len(present) + 2) if k not in present), None)
    if missing is not None and missing <= count:
        given = ", ".join(f"{k}" for k in sorted(present))
        raise ReplayGateError(
            f"shard {missing}/{count} is not in the merge: no results file of it "
            f"(the files given hold shard{'s' if len(present) > 1 else ''} {given} of {count})"
        )


def _meta(named: Sequence[Named]) -> dict[str, Any]:
    providers = {result.meta["provider"] for _, result in named if "provider" in result.meta}
    return {"provider": providers.pop()} if len(providers) == 1 else {}
