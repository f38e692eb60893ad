"""`replaygate merge`: combine the JSON results of shards into one result, reported like `run`."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from replaygate.errors import PackError
from replaygate.reporting import add_report_options, finish
from replaygate.result import CaseResult, PackSummary, RunResult

CaseKey = tuple[str, str, str]  # pack, contract, case id
Named = tuple[str, RunResult]  # a results file as shown, and its content


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("merge", help="combine the JSON results of shards into one report")
    parser.add_argument("results", nargs="+", metavar="RESULTS.json",
                        help="results files written by `run --json` (one per shard)")  # fmt: skip
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="repository root the results' file paths are relative to, for annotations "
        "when the checkout is a subfolder (default: the workspace)",
    )
    add_report_options(parser)


def main(args: argparse.Namespace) -> int:
    merged = merge_results([(path, read_results(path)) for path in args.results])
    return finish(merged, args)


def read_results(path: str) -> RunResult:
    """A results file, or a PackError naming it."""
    from replaygate.report.json import load_results

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise PackError(path, None, f"cannot read the results: {error.strerror}") from None
    except UnicodeDecodeError:
        raise PackError(path, None, "the results file is not UTF-8 text") from None
    return load_results(text, shown=path)


def merge_results(named: Sequence[Named]) -> RunResult:
    """One result holding every case once; overlapping shards must agree on each outcome."""
    _check_shards(named)
    return RunResult(
        cases=_cases(named),
        problems=tuple(dict.fromkeys(p for _, result in named for p in result.problems)),
        packs=_packs(named),
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
    cases = [case for _, case in seen.values()]
    return tuple(sorted(cases, key=lambda c: (c.pack_dir, c.pack, c.contract, c.line, c.case_id)))


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
    missing = sorted(set(range(1, count + 1)) - {shard["index"] for _, shard in sharded})
    if missing:
        raise PackError(sharded[0][0], None, f"shard {missing[0]}/{count} is not in the merge")


def _meta(named: Sequence[Named]) -> dict[str, Any]:
    providers = {result.meta["provider"] for _, result in named if "provider" in result.meta}
    return {"provider": providers.pop()} if len(providers) == 1 else {}
