"""Benchmark the strict JSON reader against `json.loads` on the JSON files under some folders.

Usage: python bench/bench_json.py DIR [DIR ...] [--files N] [--repeat N]

For every folder, the same files (the first N found, in sorted order) are decoded by
`json.loads` (the floor: no duplicate-key, NaN or depth check), by `strict_json` (Python's
decoder with the checks, the reader before msgspec) and by `parse_json` (msgspec when its
cheap checks allow, else `strict_json`). Best of --repeat; figures are per file and
relative to the floor measured in the same run. Generate the folders with
`bench_run.py --corpus realistic --keep DIR` and `bench_traces.py --keep DIR`.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replaygate.loading.json_reader import NEEDS_STRICT, fast_value, parse_json, strict_json


def best_of(repeat: int, decode: Callable[[str], Any], texts: list[str]) -> float:
    """The fastest of ``repeat`` passes over ``texts``, in microseconds a file."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            decode(text)
        best = min(best, time.perf_counter() - start)
    return best * 1e6 / len(texts)


def measure(folder: Path, files: int, repeat: int) -> str:
    paths = sorted(folder.rglob("*.json"))[:files]
    texts = [path.read_text(encoding="utf-8") for path in paths]
    fast = sum(fast_value(text) is not NEEDS_STRICT for text in texts)
    floor = best_of(repeat, json.loads, texts)
    strict = best_of(repeat, lambda text: strict_json(text, shown="f.json"), texts)
    reader = best_of(repeat, lambda text: parse_json(text, shown="f.json"), texts)
    megabytes = sum(len(text) for text in texts) / 1e6
    return (
        f"{folder}: {len(texts)} files, {megabytes:.1f} MB, {fast} decided by msgspec\n"
        f"  json.loads {floor:8.1f} us/file\n"
        f"  strict_json {strict:7.1f} us/file  {strict / floor:.2f}x the floor\n"
        f"  parse_json {reader:8.1f} us/file  {reader / floor:.2f}x the floor, "
        f"{strict / reader:.2f}x faster than strict_json"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for folder in args.folders:
        print(measure(folder, args.files, args.repeat))


if __name__ == "__main__":
    main()
