"""Benchmark the reports of a run: JSON, JUnit (both families), terminal and markdown.

Usage: python bench/bench_reports.py [--cases N] [--failing PERCENT] [--repeat N]

Renders one synthetic RunResult shaped like the realistic corpus (contracts of ten cases,
two tool calls each; PERCENT of the cases fail with two failures each, and as many again
error, are skipped or are known failures) with every renderer, and times each in CPU
seconds (``time.process_time``: the machine may be shared), best of --repeat. The floor,
measured in the same run, is ``json.dumps`` of the cases' data made into plain dicts
beforehand: the C encoder alone, with no Python per case. Run it with another checkout's
``src`` on PYTHONPATH to compare two versions on the same machine.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from replaygate.core.model import CaseResult, Failure, PackSummary, RunResult, Status
from replaygate.report.json import json_chunks
from replaygate.report.junit import junit_chunks
from replaygate.report.junit_family import JunitFamily
from replaygate.report.markdown import render_markdown
from replaygate.report.text import render_text

CASES_PER_CONTRACT = 10
CONTRACTS_PER_PACK = 100


def failure(contract_file: str, index: int) -> Failure:
    return Failure(
        classification="schema_violation",
        message=f"'{index}' does not match '^fli_[0-9]+$'",
        locator="expected_tool_calls[1].argument_invariants[0]:regex",
        file=contract_file,
        line=17,
        path="$.id",
        operator="regex",
        expected="^fli_[0-9]+$",
        actual={"id": str(index), "fields": ["status", "eta"]},
    )


def status_of(index: int, failing: float) -> Status:
    """Every ``1 / failing``-th case fails; the ones just after it error or are skipped."""
    step = max(1, round(100 / failing)) if failing else 0
    place = index % step if step else -1
    return {0: Status.FAILED, 1: Status.ERROR, 2: Status.SKIPPED}.get(place, Status.PASSED)


def case(index: int, failing: float) -> CaseResult:
    contract = index // CASES_PER_CONTRACT
    pack = contract // CONTRACTS_PER_PACK
    contract_file = f"packs/p{pack:04d}/contracts/lookup_{contract}.yaml"
    status = status_of(index, failing)
    failed = status is Status.FAILED
    return CaseResult(
        pack=f"real-{pack:04d}",
        pack_dir=f"packs/p{pack:04d}",
        contract=f"contracts/lookup_{contract}.yaml",
        contract_file=contract_file,
        case_id=f"c{contract}_case{index % CASES_PER_CONTRACT}",
        expect_ok=True,
        expected_error=None,
        observed_ok=None if status in (Status.ERROR, Status.SKIPPED) else not failed,
        status=status,
        classification="schema_violation" if failed else None,
        fingerprint=f"{index:012x}" if failed else None,
        failures=(failure(contract_file, index), failure(contract_file, -index)) if failed else (),
        file=contract_file,
        line=30 + 3 * (index % CASES_PER_CONTRACT),
        reason={Status.ERROR: "fixture is not valid JSON", Status.SKIPPED: "live only"}.get(status),
        duration_s=0.0001 * (index % 37),
        known=failed and index % 40 == 0,
        order=index,
    )


def run_result(cases: int, failing: float) -> RunResult:
    packs = -(-cases // (CASES_PER_CONTRACT * CONTRACTS_PER_PACK))
    return RunResult(
        cases=tuple(case(index, failing) for index in range(cases)),
        packs=tuple(
            PackSummary(f"real-{p:04d}", f"pack {p}", f"packs/p{p:04d}", CONTRACTS_PER_PACK)
            for p in range(packs)
        ),
        duration_s=1.0,
    )


def best_of(repeat: int, render: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        render()
        best = min(best, time.process_time() - start)
    return best


def renderers(result: RunResult) -> dict[str, Callable[[], Any]]:
    return {
        "json": lambda: "".join(json_chunks(result)),
        "junit xunit2": lambda: "".join(junit_chunks(result)),
        "junit xunit1": lambda: "".join(junit_chunks(result, family=JunitFamily.XUNIT1)),
        "terminal": lambda: render_text(result),
        "markdown": lambda: render_markdown(result, files_note="the report files"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--failing", type=float, default=5.0, help="percent of failed cases")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    result = run_result(args.cases, args.failing)
    data = [asdict(case) for case in result.cases]
    floor = best_of(args.repeat, lambda: json.dumps(data))
    totals = result.totals
    print(
        f"{totals.total} cases: {totals.failed} failed ({totals.known} known), "
        f"{totals.errors} errors, {totals.skipped} skipped; CPU seconds, best of {args.repeat}"
    )
    print(f"  {'floor (json.dumps)':20} {floor:7.4f} s")
    for name, render in renderers(result).items():
        seconds = best_of(args.repeat, render)
        print(f"  {name:20} {seconds:7.4f} s  {seconds / floor:5.2f}x the floor")


if __name__ == "__main__":
    main()
