"""Benchmark a cold `replaygate run --jobs 1` of the realistic corpus: CPU time, trees in turns.

Usage: python bench/bench_percase.py [--cases 10000] [--rounds 7] [--corpus DIR] --src OTHER_SRC ...

Each round runs `replaygate run PACKS --jobs 1` once per source tree (this checkout's `src`
first, then each ``--src``, e.g. `git archive PARENT src | tar -x -C DIR` gives DIR/src), each in
a fresh process of this interpreter with PYTHONPATH set to the tree, and takes the CPU time
(user + system) the run used: on a shared machine, far steadier than the wall clock, and the
turns spread a passing load over every tree alike. Byte code is cached for every tree, so a run
measures what a CI run of an installed package does. Prints the median and best of each tree
and its ratio to the first.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import corpus_realistic

HERE = Path(__file__).resolve().parent.parent / "src"


def cpu_of_run(src: Path, root: Path) -> float:
    """CPU seconds of one `run --jobs 1` of root/packs with the package from ``src``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(src)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, "-m", "replaygate.cli", "run", "--root", str(root), "--jobs", "1"]
    done = subprocess.run(
        [*command, str(root / "packs")], env=env, capture_output=True, text=True, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        why = (done.stdout + done.stderr).strip()[-2000:]
        sys.exit(f"bench_percase: the run with {src} exited {done.returncode}: {why}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(srcs: list[Path], root: Path, rounds: int) -> dict[Path, list[float]]:
    for src in srcs:  # byte code written before anything counts
        cpu_of_run(src, root)
    spent: dict[Path, list[float]] = {src: [] for src in srcs}
    for _ in range(rounds):
        for src in srcs:
            spent[src].append(cpu_of_run(src, root))
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--corpus", type=Path, help="a corpus bench_run.py --keep generated")
    parser.add_argument("--src", type=Path, action="append", default=[], metavar="SRC")
    args = parser.parse_args(argv)
    srcs = [HERE, *(src.resolve() for src in args.src)]
    with tempfile.TemporaryDirectory(prefix="replaygate-percase-") as folder:
        root = args.corpus.resolve() if args.corpus else Path(folder)
        if args.corpus is None:
            corpus_realistic.generate(root, args.cases)
        spent = measure(srcs, root, args.rounds)
    first = statistics.median(spent[HERE])
    print(f"run --jobs 1, CPU seconds (user + system), {args.rounds} rounds in turns")
    for src, figures in spent.items():
        median = statistics.median(figures)
        print(f"{src}: median {median:.3f}  best {min(figures):.3f}  ratio {median / first:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
