"""Contracts loaded by the forked workers against contracts loaded by the parent, same code.

Usage: python bench/bench_forked.py [--cases 10000] [--repeat 7] [--jobs 2] [--keep DIR]

Generates the realistic corpus (or reuses the one --keep names), then times the default-jobs
`replaygate run` in fresh subprocesses, the two modes alternating: "forked" (this code: the
workers load the contracts they judge) and "parent" (the same code with engine/forked.py's
threshold out of reach, so the parent loads every contract and the workers only judge, as
before). Prints, per mode, the wall time (best and median) and the CPU time of the run and
its workers (user + system, median), with the load average: wall time means little on a
busy machine, where only the CPU figures compare.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("parent", "forked")


def child(mode: str, root: Path, jobs: int) -> None:
    """One run in this fresh process; its figures as JSON on stdout."""
    from replaygate import cli
    from replaygate.engine import forked

    if mode == "parent":
        forked.MIN_CONTRACTS = sys.maxsize
    out = root / "out"
    out.mkdir(exist_ok=True)
    argv = ["run", "--jobs", str(jobs), "--root", str(root), "--json", str(out / "r.json")]
    start = time.perf_counter()
    code = cli.main([*argv, "--junit", str(out / "junit.xml"), str(root / "packs")])
    seconds = time.perf_counter() - start
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime
    print(json.dumps({"seconds": seconds, "cpu": cpu, "exit": code}))


def measure(mode: str, root: Path, jobs: int) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", mode, str(root), "--jobs", str(jobs)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    if figures["exit"] >= 2:
        raise SystemExit(f"bench: `replaygate run` ({mode}) exited {figures['exit']}")
    return figures


def corpus(cases: int, keep: str | None) -> Path:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_run import generate_corpus

    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="bench-forked-"))
    if not (root / "packs").is_dir():
        generate_corpus(root, cases, "realistic")
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", metavar="DIR", help="generate the corpus here, or reuse it")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]), args.jobs)
        return 0
    root = corpus(args.cases, args.keep)
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    loads = []
    for turn in range(args.repeat):
        for mode in MODES if turn % 2 == 0 else MODES[::-1]:
            loads.append(os.getloadavg()[0])
            runs[mode].append(measure(mode, root, args.jobs))
    print(f"{args.cases} realistic cases, --jobs {args.jobs}, {args.repeat} runs of each mode")
    print(f"{'mode':>8} {'best_s':>7} {'median_s':>9} {'cpu_s':>6}")
    for mode, figures in runs.items():
        wall = [f["seconds"] for f in figures]
        cpu = statistics.median(f["cpu"] for f in figures)
        print(f"{mode:>8} {min(wall):7.2f} {statistics.median(wall):9.2f} {cpu:6.2f}")
    print(f"load average while measuring: {min(loads):.2f} to {max(loads):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
