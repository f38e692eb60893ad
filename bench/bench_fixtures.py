"""Benchmark loading golden cases' fixtures: through the run's opened directories, against
the full path check of every fixture, measured in the same process.

Usage: python bench/bench_fixtures.py [--cases 10000] [--repeat 5] [--keep DIR]

On the realistic corpus (corpus_realistic.py): the packs are loaded once, then every case's
input is loaded (``load_case_input``: read, strict JSON, key checks, normalised) outside
``folders.reading()`` (each fixture resolved with ``resolve_inside`` and read by path, each
recording looked up with ``lexists``) and inside it (the golden directory opened once, the
fixture read through its descriptor, the recordings folder listed once), alternating, best
of ``--repeat``. Both load the same inputs; the script checks that they are equal.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import corpus_realistic

from replaygate.loading import fixtures, folders, json_reader
from replaygate.loading.pack import load_packs


def _timed(load: Callable[[], list[object]]) -> tuple[float, list[object]]:
    started = time.perf_counter()
    loaded = load()
    return time.perf_counter() - started, loaded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="generate under this directory (kept)")
    args = parser.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="replaygate-fixtures-"))
    try:
        root = base / f"realistic-n{args.cases}"
        if not (root / "packs").is_dir():
            corpus_realistic.generate(root, args.cases)
        loaded = load_packs(["packs"], cwd=root, root=root, now=datetime.now(UTC))
        items = [(p, c, g) for p in loaded.packs for c in p.contracts for g in c.golden_cases]
        # as in a run past its first MiB of JSON: msgspec decodes, both sides alike
        json_reader.parse_json("[" + " " * json_reader.STRICT_ONLY_CHARS + "]", shown="warm-up")
        gc.disable()  # a collection landing in one side's timing would decide the figure

        def load_all() -> list[object]:
            return [fixtures.load_case_input(p, c, g) for p, c, g in items]

        def opened() -> list[object]:
            with folders.reading():
                return load_all()

        path_s, descriptor_s = [], []
        for _ in range(args.repeat):
            seconds, by_path = _timed(load_all)
            path_s.append(seconds)
            seconds, by_descriptor = _timed(opened)
            descriptor_s.append(seconds)
            if by_path != by_descriptor:
                print("the two ways loaded different inputs", file=sys.stderr)
                return 1
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{len(items)} cases, best of {args.repeat}, alternating:")
    for name, seconds in (("full path check", min(path_s)), ("opened folders", min(descriptor_s))):
        print(f"  {name:16}  {seconds:.3f} s  {seconds * 1e6 / len(items):6.1f} us/case")
    print(f"  ratio             {min(descriptor_s) / min(path_s):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
