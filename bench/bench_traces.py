"""Benchmark `replaygate run` on a corpus of ai-tester traces against its parse-only floor.

Usage: python bench/bench_traces.py [--traces 10000] [--turns 20] [--repeat N] [--keep DIR]

`run` uses the default --jobs (one process per CPU from 2000 cases), `run1` --jobs 1.

Each measurement runs in a fresh subprocess (this script with --child), so peak RSS is that
of one run only; timings exclude interpreter start-up.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SCENARIO = """\
scenario: bench
description: A refactoring run of 20 turns
system_prompt: You refactor code in the sandbox.
max_turns: 30
token_budget: 1000000
assertions:
  - id: reads-first
    type: tool_called
    tool: Read
    call_index: 0
    args_match: {file_path: "^src/"}
  - id: read-edit-test
    type: tool_call_sequence
    weight: 2
    sequence:
      - {tool: Read, args_match: {file_path: "module_1"}}
      - {tool: Edit, args_match: {file_path: "module_1"}}
      - {tool: Bash, args_match: {command: "^pytest"}}
  - id: no-push
    type: no_tool_called
    tool: Bash
    args_match: {command: "git\\\\s+push"}
  - id: reports
    type: output_contains
    pattern: "(?i)tests pass"
  - id: efficient
    type: turn_count_at_most
    max: 25
  - id: stay-in-sandbox
    type: no_path_escape
"""


def call(turn: int) -> dict[str, Any]:
    kind = turn % 4
    if kind == 3:
        name, args = "Bash", {"command": "pytest -q tests/", "description": "run the tests"}
    elif kind == 2:
        name, args = "Edit", {"file_path": f"src/module_{turn // 4}.py", "old_string": "x = 1",
                              "new_string": "x = 2"}  # fmt: skip
    else:
        name, args = "Read", {"file_path": f"src/module_{turn // 4}.py"}
    return {"id": f"toolu_{turn}", "name": name, "input": args, "resultContent": "ok " * 40,
            "resultIsError": False, "answered": None}  # fmt: skip


def trace(n: int, turns: int) -> dict[str, Any]:
    usage = {"inputTokens": 900, "cacheCreationInputTokens": 0, "cacheReadInputTokens": 800,
             "outputTokens": 120}  # fmt: skip
    return {
        "schemaVersion": "1.1.0",
        "runId": f"bench__2026-11-26T00-00-{n:05d}Z__no-version__00000000",
        "skill": {"name": "inline:bench", "tokenBudget": None},
        "scenario": {"name": "bench", "path": "scenarios/bench.yaml", "argument": None,
                     "tokenBudget": None},
        "runner": {"model": "claude-sonnet-4-6", "permissionMode": "bypassPermissions",
                   "startedAt": "", "finishedAt": "", "durationMs": 1, "maxTurns": 30,
                   "maxTurnsUserSet": True, "turnsUsed": turns, "hitMaxTurns": False,
                   "sessionId": None, "sandboxPath": f"/tmp/ai-tester-bench-{n}"},
        "turns": [{"index": t, "role": "assistant", "textDeltas": [f"Step {t}."],
                   "toolCalls": [call(t)], "usage": usage} for t in range(turns)],
        "finalOutput": "Refactored 5 modules; all tests pass.",
        "toolCallSummary": {"total": turns, "byTool": {}, "unansweredQuestions": 0},
        "assertions": [{"id": "reads-first", "type": "tool_called", "pass": True, "weight": 1,
                        "detail": ""}],
        "scoring": {"allPassed": True, "overallPass": True, "weightedScore": 1},
        "cost": {"inputTokens": 900 * turns, "outputTokens": 120 * turns,
                 "cacheCreationTokens": 0, "cacheReadTokens": 800 * turns,
                 "usdEstimate": 0.1, "source": "sdk"},
        "errors": [],
    }  # fmt: skip


def generate(root: Path, traces: int, turns: int) -> None:
    (root / ".git").mkdir(parents=True)
    (root / "scenarios").mkdir()
    (root / "scenarios" / "bench.yaml").write_text(SCENARIO)
    for n in range(traces):
        folder = root / "runs" / f"{n // 1000:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"run-{n:05d}.json").write_text(json.dumps(trace(n, turns), indent=2) + "\n")


def parse_floor(root: Path) -> None:
    """Read and parse every file: the floor replaygate's run is compared with."""
    import yaml

    yaml.load((root / "scenarios" / "bench.yaml").read_text(), Loader=yaml.CSafeLoader)
    for directory, _, names in os.walk(root / "runs"):
        for name in names:
            json.loads((Path(directory) / name).read_text(encoding="utf-8"))


def replaygate_run(root: Path, *extra: str) -> int:
    from replaygate import cli

    out = root / "out"
    out.mkdir(exist_ok=True)
    argv = ["run", "--root", str(root), "--json", str(out / "results.json")]
    argv += ["--junit", str(out / "junit.xml"), str(root / "runs"), *extra]
    return cli.main(argv)


def child(mode: str, root: Path, report: Path) -> None:
    start = time.perf_counter()
    code = 0
    if mode.startswith("run"):
        code = replaygate_run(root, *(["--jobs", "1"] if mode == "run1" else []))
    if mode == "floor":
        parse_floor(root)
    seconds = time.perf_counter() - start
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report.write_text(json.dumps({"seconds": seconds, "rss_mb": rss_mb, "exit": code}))


def measure(mode: str, root: Path, repeat: int) -> dict[str, Any]:
    """Best time of `repeat` fresh subprocesses (and the peak RSS of that run)."""
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        report = root / f"{mode}.measure.json"
        cmd = [sys.executable, __file__, "--child", mode, str(root), str(report)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        found = json.loads(report.read_text())
        best = found if best is None or found["seconds"] < best["seconds"] else best
    assert best is not None
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--keep", metavar="DIR")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return 0
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rg-traces-"))
    try:
        root = base / f"t{args.traces}"
        generate(root, args.traces, args.turns)
        size = sum(f.stat().st_size for f in (root / "runs").rglob("*.json")) / 2**20
        floor = measure("floor", root, args.repeat)
        print(f"{args.traces} traces of {args.turns} turns, {size:.0f} MB of JSON; "
              f"floor {floor['seconds']:.2f}s {floor['rss_mb']:.0f} MB")  # fmt: skip
        for mode in ("run", "run1"):
            run = measure(mode, root, args.repeat)
            print(f"{mode:5} {run['seconds']:.2f}s {run['rss_mb']:.0f} MB (exit {run['exit']}); "
                  f"ratio {run['seconds'] / floor['seconds']:.2f}; "
                  f"{run['seconds'] / args.traces * 1e6:.0f} us/trace")  # fmt: skip
        totals = json.loads((root / "out" / "results.json").read_text())["totals"]
        print(f"totals {totals}")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
