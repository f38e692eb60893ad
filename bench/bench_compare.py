"""Compare source trees on one generated corpus, timed from outside as a user sees a run.

Usage: python bench/bench_compare.py --src OLD/src --src NEW/src [--corpus realistic|large]
                                     [--cases 10000] [--rounds 5] [--keep DIR]

Every figure is the wall time of a fresh `python -m replaygate.cli run ...` process, timed by
this one, so the interpreter's start and the imports count; PYTHONPATH picks the tree (e.g.
`git archive COMMIT src | tar -x -C DIR` gives DIR/src), and its byte code is written by a
first run that does not count. The trees take turns (round 1: first to last, round 2: last
to first, ...), so a load that comes and goes on a shared machine hits them alike. Each
figure has its CPU time too (user + system, the forked children's included: it moves far
less with a shared machine's load than the wall time) and its peak RSS (the largest of the
run's processes):

- floor: a process that walks packs/, reads and parses every file (yaml.CSafeLoader,
  json.loads), interpreter start included; it does not depend on the tree.
- run: `run --json FILE packs` with the default jobs; j1: the same with `--jobs 1`.
- warm: the same with `--cache DIR`, over a cache one cold run of that tree filled (one
  folder per tree, outside the corpus).

Each run must exit 0 and, in the runs that fill the caches, report every case passed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter

import corpus_large
import corpus_realistic

CORPORA = {"realistic": corpus_realistic.generate, "large": corpus_large.generate}
MODES = {"run": [], "j1": ["--jobs", "1"], "warm": ["--cache", "{cache}"]}
FLOOR = """\
import json, os, sys, yaml
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8") as file:
            text = file.read()
        if name.endswith(".yaml"):
            yaml.load(text, Loader=yaml.CSafeLoader)
        else:
            json.loads(text)
"""

Sample = tuple[float, float, float]  # wall seconds, CPU seconds, peak MB


def timed(command: list[str], env: dict[str, str] | None = None) -> Sample:
    """Wall and CPU seconds (user + system, its children's too) and peak RSS (MB, the largest
    of its processes) of one run; it must pass."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a long error never blocks
        start = perf_counter()
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)
        wall = perf_counter() - start
        if code := os.waitstatus_to_exitcode(status):
            errors.seek(0)
            why = errors.read().decode(errors="replace")[-2000:]
            sys.exit(f"bench_compare: {' '.join(command)} exited {code}: {why}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


class Tree:
    """One source tree under test, with its own cache folder and report file."""

    def __init__(self, src: Path, base: Path, index: int) -> None:
        self.src, self.name = src, f"{index + 1}:{src.parent.name}"
        self.cache, self.report = base / f"cache-{index}", base / f"results-{index}.json"
        # byte code written and read, as in an installed package
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env = env | {"PYTHONPATH": str(src)}

    def run(self, root: Path, mode: str) -> Sample:
        options = [o.format(cache=self.cache) for o in MODES[mode]]
        command = [sys.executable, "-m", "replaygate.cli", "run", *options, "--root", str(root)]
        return timed([*command, "--json", str(self.report), str(root / "packs")], self.env)

    def fill_cache(self, root: Path, cases: int) -> None:
        """A cold run writes the byte code and fills a fresh cache; every case must pass."""
        shutil.rmtree(self.cache, ignore_errors=True)
        self.run(root, "warm")
        totals = json.loads(self.report.read_text(encoding="utf-8"))["totals"]
        if totals["passed"] != cases or totals["total"] != cases:
            sys.exit(f"bench_compare: {self.src} did not pass every case: {totals}")


def measure(trees: list[Tree], root: Path, rounds: int) -> dict[tuple[str, str], list[Sample]]:
    """Samples of each (tree, figure), the floor under the tree name ''."""
    floor = [sys.executable, "-c", FLOOR, str(root / "packs")]
    timed(floor)  # files in the page cache before anything counts
    samples: dict[tuple[str, str], list[Sample]] = {}
    for turn in range(rounds):
        samples.setdefault(("", "floor"), []).append(timed(floor))
        for mode in MODES:
            for tree in trees if turn % 2 == 0 else trees[::-1]:
                samples.setdefault((tree.name, mode), []).append(tree.run(root, mode))
    return samples


def table(trees: list[Tree], samples: dict[tuple[str, str], list[Sample]]) -> list[str]:
    """Median and best of each figure, tree beside tree, each median against the first's."""
    head = "".join(f" {t.name[:18]:>18} {'best':>6}" for t in trees)
    lines = [f"{'figure':<10}{head}" + "".join(f" {t.name[0] + '/1':>7}" for t in trees[1:])]
    floor = statistics.median(s[0] for s in samples[("", "floor")])
    for column, unit, digits in [(0, "s", 3), (1, "cpu", 3), (2, "MB", 1)]:
        for mode in MODES:
            values = [[s[column] for s in samples[(t.name, mode)]] for t in trees]
            medians = [statistics.median(v) for v in values]
            cells = "".join(
                f" {statistics.median(v):>18.{digits}f} {min(v):>6.{digits}f}" for v in values
            )
            cells += "".join(f" {m / medians[0]:>7.3f}" for m in medians[1:])
            lines.append(f"{mode}_{unit:<{9 - len(mode)}}{cells}")
    for mode in MODES:
        medians = [statistics.median(s[0] for s in samples[(t.name, mode)]) for t in trees]
        lines.append(
            f"{mode + '/floor':<10}" + "".join(f" {m / floor:>18.3f} {'':>6}" for m in medians)
        )
    floors = [s[0] for s in samples[("", "floor")]]
    floor_mb = max(s[2] for s in samples[("", "floor")])
    lines.append(
        f"floor_s: median {floor:.3f}, best {min(floors):.3f}, worst {max(floors):.3f} "
        f"(peak {floor_mb:.0f} MB)"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, action="append", required=True, metavar="SRC")
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="realistic")
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="generate under this directory (kept)")
    args = parser.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="replaygate-compare-"))
    load = os.getloadavg()
    try:
        root = base / "corpus"
        CORPORA[args.corpus](root, args.cases)
        trees = [Tree(src.resolve(), base, k) for k, src in enumerate(args.src)]
        for tree in trees:
            tree.fill_cache(root, args.cases)
        samples = measure(trees, root, args.rounds)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(
        f"{args.corpus} corpus, {args.cases} cases, {args.rounds} rounds in turns; load average "
        f"(1, 5, 15 min) {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the start, "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
        + " at the end"
    )
    for tree in trees:
        print(f"tree {tree.name}: {tree.src}")
    print("\n".join(table(trees, samples)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
