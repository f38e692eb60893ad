"""Time `replaygate run` against agentevals' trajectory match on the same realistic cases.

Usage: python bench/bench_agentevals.py [--cases 10000] [--repeat N] [--venv DIR] [--keep DIR]

agentevals is never a dependency of replaygate: it is installed with pip into a throwaway
virtual environment (in a temporary directory, or --venv DIR, kept and reused), and its side
runs there, in a subprocess. When it cannot be installed, this says so and exits 2.

Both sides read every fixture of the realistic corpus (corpus_realistic.py) from disk. We run
`replaygate run --json --junit` (schemas, arguments, invariants, classification); agentevals
gets, per case, the fixture's messages followed by the recorded assistant turn, and as its
reference the calls a correct answer makes (`create_trajectory_match_evaluator` in
`unordered` mode, as the contracts say `tool_order: any`, with exact arguments).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_run
import corpus_realistic

TARGET = 0.7  # our cold run under this fraction of agentevals' time
PIP_TIMEOUT = 600  # seconds to install agentevals and its dependencies

# Runs in agentevals' venv: argv is references.jsonl, the corpus root, the report to write.
# The clock starts before the import, as our run's does (bench_run's child imports in it).
CHILD = r"""
import json, resource, sys, time
start = time.perf_counter()
from agentevals.trajectory.match import create_trajectory_match_evaluator
imported = time.perf_counter()
evaluate = create_trajectory_match_evaluator(
    trajectory_match_mode="unordered", tool_args_match_mode="exact"
)
references, root, report = sys.argv[1:4]
agree = errors = 0
with open(references, encoding="utf-8") as lines:
    for line in lines:
        case = json.loads(line)
        with open(f"{root}/{case['fixture']}", encoding="utf-8") as file:
            fixture = json.load(file)
        response = fixture["response"]
        turn = {"role": "assistant", "content": response.get("content") or "",
                "tool_calls": response.get("tool_calls") or []}
        try:
            score = evaluate(outputs=[*fixture["request"]["messages"], turn],
                             reference_outputs=case["reference"])["score"]
        except Exception:  # malformed arguments: json.loads fails inside agentevals
            score, errors = False, errors + 1
        agree += score is case["passes"]
end = time.perf_counter()
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
json.dump({"seconds": end - start, "import_s": imported - start, "rss_mb": rss_mb,
           "agree": agree, "errors": errors}, open(report, "w"))
"""


def install(venv: Path) -> Path | None:
    """agentevals' interpreter in ``venv`` (created and installed when absent), or None."""
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if python.exists():
        return python
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        cmd = [str(python), "-m", "pip", "install", "--quiet", "agentevals"]
        subprocess.run(cmd, check=True, timeout=PIP_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as problem:
        print(f"agentevals could not be installed ({problem}): skipped", file=sys.stderr)
        return None
    return python


def write_references(root: Path, cases: int) -> Path:
    """One line per case: its fixture, the reference trajectory, whether it should pass."""
    path = root / "agentevals-references.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(corpus_realistic.contracts_for(cases)):
            for j, kind in corpus_realistic.cases_of(i):
                calls = corpus_realistic.expected_calls(i, j)
                turn = {"role": "assistant", "content": "", "tool_calls": calls}
                line = {
                    "fixture": corpus_realistic.fixture_path(i, j, kind),
                    "reference": [turn],
                    "passes": kind is None,
                }
                out.write(json.dumps(line) + "\n")
    return path


def agentevals_run(python: Path, references: Path, root: Path, repeat: int) -> dict[str, float]:
    """The best of ``repeat`` fresh runs of CHILD, without tracing to LangSmith."""
    environ = os.environ | {"LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false"}
    best: dict[str, float] | None = None
    for _ in range(repeat):
        report = root / "agentevals.measure.json"
        cmd = [str(python), "-c", CHILD, str(references), str(root), str(report)]
        subprocess.run(cmd, check=True, env=environ)
        figures = json.loads(report.read_text(encoding="utf-8"))
        best = figures if best is None or figures["seconds"] < best["seconds"] else best
    assert best is not None
    return best


def report(cases: int, ours: bench_run.Row, theirs: dict[str, float]) -> None:
    evaluate_s = theirs["seconds"] - theirs["import_s"]
    print(f"{cases} realistic cases; load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"floor (read and parse)         {ours.floor.seconds:7.2f}s")
    for name, m in (
        ("replaygate run (default jobs)", ours.run),
        ("replaygate run --jobs 1", ours.run_j1),
    ):
        ratio = m.seconds / theirs["seconds"]
        met = "met" if ratio < TARGET else "not met"
        print(
            f"{name:<30} {m.seconds:7.2f}s {m.rss_mb:5.0f} MB exit={m.exit}  "
            f"{ratio:.2f}x agentevals (target < {TARGET}: {met})"
        )
    print(
        f"agentevals trajectory match    {theirs['seconds']:7.2f}s {theirs['rss_mb']:5.0f} MB "
        f"(import {theirs['import_s']:.2f}s, evaluating {evaluate_s:.2f}s, "
        f"{evaluate_s / cases * 1e6:.0f} us/case); agrees with the declared outcome on "
        f"{theirs['agree']:.0f} of {cases} ({theirs['errors']:.0f} raised)"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="golden cases (default 10000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side; the best kept")
    parser.add_argument("--venv", type=Path, help="agentevals' virtual environment (kept)")
    parser.add_argument("--keep", type=Path, help="generate the corpus under this directory")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="replaygate-agentevals-"))
    try:
        python = install(args.venv or scratch / "venv")
        if python is None:
            return 2
        root = (args.keep or scratch) / f"realistic-n{args.cases}"
        ours = bench_run.bench_size(root.parent, args.cases, args.repeat, "realistic", False)
        references = write_references(root, args.cases)
        report(args.cases, ours, agentevals_run(python, references, root, args.repeat))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
