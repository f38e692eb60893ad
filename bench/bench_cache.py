"""Benchmark `replaygate run --cache`: a cold and a warm run against the parse-only floor.

Usage: python bench/bench_cache.py [--cases 10000] [--repeat 3] [--keep DIR]

On the realistic corpus (corpus_realistic.py), each figure in a fresh subprocess, best of
``--repeat``: the floor (bench_run.parse_floor: read and parse every file), a run without
the cache, a cold run (an empty cache: every case judged and stored) and a warm run (nothing
changed: every case reused). All four write the JSON and JUnit reports, as bench_run does.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("floor", "run", "cold", "warm")


def child(mode: str, root: Path) -> None:
    """One measurement in this (fresh) process: seconds and exit code, as JSON on stdout."""
    started = time.perf_counter()
    code = 0
    if mode == "floor":
        import bench_run

        bench_run.parse_floor(root)
    else:
        from replaygate import cli

        argv = ["run", "--root", str(root), "--json", str(root / "results.json")]
        argv += ["--junit", str(root / "junit.xml"), str(root / "packs")]
        code = cli.main(argv if mode == "run" else [*argv, "--cache", str(root.parent / "cache")])
    print(json.dumps({"seconds": time.perf_counter() - started, "exit": code}))


def measure(mode: str, root: Path) -> float:
    if mode == "cold":
        shutil.rmtree(root.parent / "cache", ignore_errors=True)
    command = [sys.executable, __file__, "--child", mode, str(root)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["exit"] != 0:
        raise SystemExit(f"{mode}: replaygate exited {figures['exit']}")
    return float(figures["seconds"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="generate under this directory (kept)")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0
    import corpus_realistic

    base = args.keep or Path(tempfile.mkdtemp(prefix="replaygate-bench-cache-"))
    root = base / f"realistic-n{args.cases}"
    try:
        corpus_realistic.generate(root, args.cases)
        best = dict.fromkeys(MODES, float("inf"))
        for _ in range(args.repeat):  # interleaved: the machine's load weighs on all alike
            for mode in MODES:
                best[mode] = min(best[mode], measure(mode, root))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    floor = best["floor"]
    print(f"{args.cases} cases, realistic corpus, best of {args.repeat}")
    for mode in MODES:
        print(f"{mode:>6} {best[mode]:6.2f}s  {best[mode] / floor:5.2f}x the floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
